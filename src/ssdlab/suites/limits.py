"""The sanity limits of plans and workloads: finite numbers in bounds, plans of at most MAX_PLAN_POINTS points.

The limits are sanity bounds, not fio's: a value beyond them is a typo or a unit mistake far more often than
an intent (fio itself stops at 4096 jobs and allocates iodepth buffers up front). The pre-flight check
(run/preflight.py) applies them to every point of a plan; suites that expand matrices check their size first.
"""

from __future__ import annotations

import math

from ssdlab.errors import UsageError
from ssdlab.results.model import Workload
from ssdlab.units import format_bytes

MIN_RUNTIME_S = 0.1
MAX_RUNTIME_S = 7 * 24 * 3600.0  # one point: a week
MAX_RAMP_S = 24 * 3600.0
MAX_IODEPTH = 4096  # as --tq allows
MAX_NUMJOBS = 1024
MAX_OUTSTANDING = 65536  # iodepth x numjobs of one point (Linux's default aio-max-nr)
MAX_BS = 1024**3  # 1 GiB
MAX_RATE_IOPS = 100_000_000
MAX_PLAN_POINTS = 50_000  # the whole PTS family (--pts-tests all) plans ~11,400 points at its defaults, worst case


def check_number(name: str, value: float | None, lo: float, hi: float, hint: str = "") -> None:
    """One line for a value that is not a finite number in [lo, hi] (None passes: not given)."""
    if value is None:
        return
    if not math.isfinite(value):
        raise UsageError(f"{name} {value} is not a finite number{': ' + hint if hint else ''}")
    if not lo <= value <= hi:
        raise UsageError(f"{name} {value:g} is out of range: use {lo:g} to {hi:g}{' (' + hint + ')' if hint else ''}")


def check_times(runtime_s: float | None, ramp_s: float | None) -> None:
    """--runtime and --ramp: finite, at least 0.1 s of runtime, at most a week (a day of ramp)."""
    check_number("--runtime", runtime_s, MIN_RUNTIME_S, MAX_RUNTIME_S, "seconds per point")
    check_number("--ramp", ramp_s, 0.0, MAX_RAMP_S, "seconds")


def check_plan_size(n: int, what: str = "the plan") -> None:
    """Refuse a plan (or a matrix, before it is expanded) of more than MAX_PLAN_POINTS points."""
    if n > MAX_PLAN_POINTS:
        raise UsageError(f"{what} has {n:,} points, more than {MAX_PLAN_POINTS:,}: thin it (--axis, --matrices, "
                         "--max-rounds, --wsat-hours) or split it into several runs")


def check_workload(w: Workload, where: str, capacity: int | None = None) -> None:
    """Every number of one workload is finite and within the limits; the block size fits the target."""
    check_number(f"{where}: runtime", w.runtime_s, MIN_RUNTIME_S / 10, MAX_RUNTIME_S)
    check_number(f"{where}: ramp", w.ramp_s, 0.0, MAX_RAMP_S)
    check_number(f"{where}: iodepth", w.iodepth, 1, MAX_IODEPTH)
    check_number(f"{where}: numjobs", w.numjobs, 1, MAX_NUMJOBS)
    check_number(f"{where}: iodepth x numjobs", w.iodepth * w.numjobs, 1, MAX_OUTSTANDING)
    if not 1 <= w.bs <= MAX_BS:
        raise UsageError(f"{where}: block size {format_bytes(w.bs)} is out of range: use 1 B to "
                         f"{format_bytes(MAX_BS)}")
    if w.rwmixread is not None:
        check_number(f"{where}: rwmixread", w.rwmixread, 0, 100)
    if w.rate_iops is not None:
        check_number(f"{where}: rate", w.rate_iops, 1, MAX_RATE_IOPS, "IOPS")
    if w.io_bytes is not None and w.io_bytes <= 0:
        raise UsageError(f"{where}: io size {w.io_bytes} must be positive")
    if w.offset < 0 or (w.size is not None and w.size <= 0):
        raise UsageError(f"{where}: offset {w.offset} / size {w.size} must be positive")
    if capacity is not None and w.bssplit is None:
        span = min(capacity - w.offset, w.size) if w.size is not None else capacity - w.offset
        if w.bs > span:
            raise UsageError(f"{where}: block size {format_bytes(w.bs)} is larger than the span it runs on "
                             f"({format_bytes(max(0, span))})")
