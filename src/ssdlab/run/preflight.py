"""Pre-flight validation: every option and the whole plan are checked before a results directory exists.

`ssdlab run` (and `plan`) call `check_plan` after parsing the target and the suite's options and before
asking for write consent or creating anything: a refused or invalid run leaves nothing behind. The plan is
the suite's worst case (every round, every level); each of its points is checked against the limits below
and rendered once through the fio job builder (and, on `sim:` targets, translated for the model), so an
error that would otherwise surface at point 900 is one line before point 1. Suites add their own refusals
through `Suite.validate(ctx, target)`.

The limits are sanity bounds, not fio's: a value beyond them is a typo or a unit mistake far more often than
an intent (fio itself stops at 4096 jobs and allocates iodepth buffers up front).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ssdlab.errors import UsageError
from ssdlab.results.model import TestPoint, Workload
from ssdlab.units import format_bytes

if TYPE_CHECKING:
    from ssdlab.suites.base import PlanContext, Suite
    from ssdlab.targets.base import Target

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


def check_plan(suite: Suite, ctx: PlanContext, target: Target) -> list[TestPoint]:
    """The suite's worst-case plan with --footprint/--misalign applied, every point validated and the fio job
    (executor.point_job) of every distinct workload rendered once. Raises UsageError/TargetError (one line) on
    the first problem.

    A plain point's job and its simulated workload depend on its workload only (the point's id names the
    section), and adaptive suites repeat the same few workloads over many rounds (PTS on the simulator: 3,176 points,
    73 workloads), so each workload is rendered (and translated for the simulator) once."""
    from ssdlab.run.executor import job_on
    from ssdlab.suites.base import apply_common

    suite.validate(ctx, target)
    points = suite.plan(ctx)
    check_plan_size(len(points), f"{suite.name} on this target")
    points = [apply_common(ctx, p) for p in points]
    sim = target.engine() == "sim"
    options, devices = target.fio_options(), target.device_fio_options()  # asked once: a device's reads sysfs
    rendered: set[str] = set()
    for p in points:
        where = f"point {p.id}"
        for w in (p.workload, *p.streams):
            check_workload(w, where, ctx.capacity if p.phase != "purge" else None)
        if p.phase == "purge":
            continue
        if not p.streams:  # (a point of streams also reads its tags: rendered every time)
            key = repr(p.workload)  # (a Workload holds a dict: not hashable itself)
            if key in rendered:
                continue
            rendered.add(key)
        job_on(p, options, devices).render()  # the job the executor and the write gate build (point_job)
        if sim and not p.streams:
            from ssdlab.sim.executor import translate

            translate(p, target.capacity(), 0)
    eta = suite.eta_seconds(ctx)
    if not math.isfinite(eta):
        raise UsageError(f"{suite.name}: the plan's duration is not finite; check --runtime and the suite options")
    return points
