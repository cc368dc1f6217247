"""The host-ceiling check of a multi-device run: can the hosts drive what the devices may deliver?

Before the first point of a run on several devices (one host or a host group), the plan's most demanding
measured shape (smallest block size, then most outstanding I/O) runs briefly with fio's null engine in place
of every device: same hosts, same sections per device, same CPUs (NUMA placement), no device. Its IOPS are the
ceiling of those hosts and fio for that shape. The result is stored as a point of phase 'ceiling' (its job
file, command and fio output kept like any other), and the report compares every measured point with it: a
point that reaches HOST_LIMITED_PCT of the ceiling was limited by the hosts, not by the devices.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ssdlab.errors import SsdlabError
from ssdlab.results import store
from ssdlab.results.model import PointResult, Run, TestPoint
from ssdlab.results.tags import PointTags
from ssdlab.safety import WriteGrant
from ssdlab.targets.base import Target
from ssdlab.units import format_bs

if TYPE_CHECKING:
    from ssdlab.run.progress import Progress
    from ssdlab.suites.base import PlanContext, Suite

POINT_ID = "host-ceiling"
PHASE = "ceiling"
MAX_SECONDS = 1.0
HOST_LIMITED_PCT = 80.0


def shape(points: list[TestPoint]) -> TestPoint | None:
    """The most IOPS-hungry measured point of a plan: smallest block size, then most outstanding I/O."""
    measured = [p for p in points if p.phase == "measure" and not p.streams and p.workload.runtime_s]
    if not measured:
        return None
    return min(measured, key=lambda p: (p.workload.bs, -p.workload.outstanding))


def ceiling_point(base: TestPoint) -> TestPoint:
    w = base.workload
    rw = "randread" if w.is_random else "read"
    workload = dataclasses.replace(
        w, rw=rw, rwmixread=None, runtime_s=min(MAX_SECONDS, w.runtime_s or MAX_SECONDS), ramp_s=0.0,
        io_bytes=None, rate_iops=None, options={}, log_interval_ms=None, hist_log_ms=None, offset=0)
    return TestPoint(id=POINT_ID, label=f"Host ceiling: null engine, {rw} {format_bs(w.bs)} QD{w.iodepth}×"
                                        f"{w.numjobs} per device", workload=workload, phase=PHASE,
                     tags=PointTags.of(shape_of=base.id))


def planned(run: Run, suite: Suite, ctx: PlanContext, target: Target) -> TestPoint | None:
    """The ceiling point a run on several devices runs before its first point (None: none, or done before)."""
    if target.ceiling_twin() is None or any(r.point.id == POINT_ID for r in run.points):
        return None
    from ssdlab.suites.base import apply_common

    base = shape([apply_common(ctx, p) for p in suite.plan(ctx)])
    return ceiling_point(base) if base is not None else None


def check(run_dir: Path, run: Run, point: TestPoint, target: Target, progress: Progress) -> tuple[Run, float]:
    """Run the ceiling point (ceiling.planned) once per run on a multi-device target (resume keeps the first
    one); returns the run and the check's wall-clock seconds."""
    twin = target.ceiling_twin()
    if twin is None:
        return run, 0.0
    started = store.now_iso()
    progress.note(f"{point.label}, {point.workload.runtime_s:g} s")
    t0 = time.monotonic()
    try:
        # the twin's jobs pass the write gate like any job: a grant that writes nothing, on the twin itself
        executor = twin.executor(WriteGrant(twin, writes=False))
        m = executor.run_point(point, twin, store.point_dir(run_dir, POINT_ID))
        m = dataclasses.replace(m, extra=m.extra.replace(wall_s=round(time.monotonic() - t0, 3)))
        result = PointResult(point=point, status="ok", started=started, finished=store.now_iso(), measurement=m)
    except SsdlabError as exc:  # the check informs; it never stops the run
        result = PointResult(point=point, status="skipped", started=started, finished=store.now_iso(),
                             reason=f"host ceiling not measured: {exc}")
    run = store.save_run(run_dir, run.with_point(result))
    progress.point_end(result)
    return run, time.monotonic() - t0


def ceiling_of(run: Run) -> PointResult | None:
    r = run.result(POINT_ID)
    return r if r is not None and r.status == "ok" and r.measurement is not None else None
