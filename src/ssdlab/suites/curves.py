"""Latency curves: vdbench-style iorate curves and latency-vs-IOPS sweeps.

iorate curve (vdbench `iorate=curve`): an uncapped run measures the maximum total IOPS X; every curve point
p then runs at T = X * p / 100, rounded UP to a multiple of 100 above 1000 IOPS, else of 10 (vdbench's
rule; X = 0 is taken as 10000, as vdbench does). fio applies rate_iops per job and per direction, so T is
split by the read share observed in the max run and divided over the jobs (rounded up), and
rate_process=poisson is set: fio's default linear rate process converts IOPS with the smallest block size
of a bssplit (fio < 3.42), which would run a mixed-size workload at a fraction of the asked rate.

lat-curve: the same workload over threads x queue depth; the report draws latency percentiles against IOPS,
one series per thread count, and calls out the first load point whose p99 crosses a user limit.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ssdlab.errors import UsageError
from ssdlab.results.model import PointResult, Run, TestPoint

DEFAULT_CURVE = (10, 50, 70, 80, 90, 100)
VDBENCH_ZERO_MAX = 10000  # vdbench assumes this rate when the max run measured nothing


def parse_curve(text: str | None) -> tuple[float, ...]:
    """'10,50,100' -> (10.0, 50.0, 100.0); None/empty -> the vdbench default curve."""
    if not text:
        return tuple(float(p) for p in DEFAULT_CURVE)
    out = []
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        try:
            value = float(part.rstrip("%"))
        except ValueError:
            raise UsageError(f"bad --curve value {part!r}: use percentages like 10,50,70,80,90,100") from None
        if not 0 < value <= 1000:
            raise UsageError(f"--curve point {part} is out of range: use a percentage above 0 (at most 1000)")
        out.append(value)
    if not out:
        raise UsageError("--curve is empty: give percentages like 10,50,70,80,90,100")
    return tuple(out)


def target_rate(max_iops: float, pct: float) -> int:
    """vdbench's curve target: X*p/100 rounded up to a multiple of 100 above 1000, else of 10."""
    x = max_iops if max_iops > 0 else VDBENCH_ZERO_MAX
    t = x * pct / 100.0
    step = 100 if t > 1000 else 10
    return max(step, math.ceil(t / step - 1e-9) * step)


def _ceil(value: float) -> int:
    """Round up, ignoring float noise (10000 * 0.3 / 4 is 750, not 751)."""
    return math.ceil(value - 1e-9)


def rate_options(total: int, read_fraction: float, numjobs: int, rw: str) -> tuple[dict[str, str], int, int]:
    """fio options capping the whole job group at `total` IOPS; returns (options, reads/s, writes/s) per job."""
    jobs = max(1, numjobs)
    mixed = rw in ("rw", "readwrite", "randrw")
    if mixed:
        reads = _ceil(total * read_fraction / jobs)
        writes = _ceil(total * (1 - read_fraction) / jobs)
        reads, writes = max(1, reads), max(1, writes)
        value = f"{reads},{writes}"
    else:
        per_job = _ceil(total / jobs)
        reads = per_job if rw in ("read", "randread") else 0
        writes = 0 if reads else per_job
        value = str(per_job)
    return {"rate_iops": value, "rate_process": "poisson"}, reads, writes


def observed_read_fraction(result: PointResult, rwmixread: int | None) -> float:
    """Read share of the max run (vdbench keeps the observed skew); falls back to rwmixread."""
    m = result.measurement
    if m is not None and m.total_iops > 0:
        read = m.get("read")
        return (read.iops if read else 0.0) / m.total_iops
    return (rwmixread if rwmixread is not None else 100) / 100.0


def resolve_rate_point(point: TestPoint, max_result: PointResult) -> TestPoint:
    """A curve point with its rate filled in from the stored max run (tags record how it was derived)."""
    pct = float(point.tags.rate_pct or 0.0)
    m = max_result.measurement
    measured = m.total_iops if m is not None else 0.0
    total = target_rate(measured, pct)
    w = point.workload
    fraction = observed_read_fraction(max_result, w.rwmixread)
    opts, reads, writes = rate_options(total, fraction, w.numjobs, w.rw)
    options = dict(w.options)
    options.update(opts)
    workload = dataclasses.replace(w, rate_iops=total, options=options)
    tags = point.tags.replace(max_iops=round(measured, 3), target_iops=total, rate_per_job_read=reads,
                              rate_per_job_write=writes, read_fraction=round(fraction, 4))
    if measured <= 0:
        tags = tags.replace(rate_note=f"max run measured 0 IOPS; vdbench's default {VDBENCH_ZERO_MAX} used")
    return dataclasses.replace(point, workload=workload, tags=tags)


def adaptive_next(plan: Sequence[TestPoint], run: Run) -> tuple[list[TestPoint], list[str]]:
    """Points still to run with curve rates resolved; plus notes for curve points that cannot run."""
    done = run.done_ids()
    results = {p.point.id: p for p in run.points}
    out: list[TestPoint] = []
    notes: list[str] = []
    for point in plan:
        if point.id in done:
            continue
        max_id = point.tags.max_point
        if max_id and point.tags.rate_pct is not None:
            base = results.get(str(max_id))
            if base is None or base.status == "failed":
                out.append(point)  # still pending: resolved once its max run is stored
                continue
            if base.status != "ok":
                notes.append(f"{point.label}: not run, its uncapped max run was {base.status}"
                             + (f" ({base.reason})" if base.reason else ""))
                continue
            out.append(resolve_rate_point(point, base))
            continue
        out.append(point)
    # a curve point must never run before its max: drop unresolved ones whose max is not pending
    pending = {q.id for q in out}
    ready = [p for p in out if not (p.tags.rate_pct is not None and p.tags.target_iops is None
                                    and str(p.tags.max_point) not in pending)]
    return ready, notes


def p99_crossing(points: Sequence[tuple[float, float, Mapping[str, Any]]], limit_us: float) -> int | None:
    """Index of the first (iops, p99_us, info) point, in load order, whose p99 exceeds `limit_us`."""
    for i, (_, p99, _) in enumerate(points):
        if p99 > limit_us:
            return i
    return None
