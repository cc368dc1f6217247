"""Pre-flight validation: every option and the whole plan are checked before a results directory exists.

`ssdlab run` (and `plan`) call `check_plan` after parsing the target and the suite's options and before
asking for write consent or creating anything: a refused or invalid run leaves nothing behind. The plan is
the suite's worst case (every round, every level); each of its points is checked against the limits below
and rendered once through the fio job builder (and, on `sim:` targets, translated for the model), so an
error that would otherwise surface at point 900 is one line before point 1. Suites add their own refusals
through `Suite.validate(ctx, target)`.

The limits themselves are in suites/limits.py (suites check a matrix's size before expanding it).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ssdlab.errors import UsageError
from ssdlab.results.model import TestPoint
from ssdlab.run.eta import plan_eta
from ssdlab.safety import span_problems
from ssdlab.suites.limits import check_plan_size, check_workload

if TYPE_CHECKING:
    from ssdlab.suites.base import PlanContext, Suite
    from ssdlab.targets.base import Target

def check_plan(suite: Suite, ctx: PlanContext, target: Target) -> list[TestPoint]:
    """The suite's worst-case plan with --footprint/--misalign applied, every point validated and the fio job
    (fio/executor.point_job) of every distinct workload rendered once. Raises UsageError/TargetError (one line) on
    the first problem.

    A plain point's job and its simulated workload depend on its workload only (the point's id names the
    section), and adaptive suites repeat the same few workloads over many rounds (PTS on the simulator: 3,176 points,
    73 workloads), so each workload is rendered (and translated for the simulator) once."""
    from ssdlab.fio.executor import job_on
    from ssdlab.suites.base import apply_common

    suite.validate(ctx, target)
    points = suite.plan(ctx)
    check_plan_size(len(points), f"{suite.name} on this target")
    points = [apply_common(ctx, p) for p in points]
    options, devices = target.fio_options(), target.device_fio_options()  # asked once: a device's reads sysfs
    rendered: set[str] = set()
    reach = ctx.capacity + ctx.misalign  # offsets count from the device's start: --misalign shifted them
    for p in points:
        where = f"point {p.id}"
        for w in (p.workload, *p.streams):
            check_workload(w, where, reach if p.phase != "purge" else None)
        if p.phase == "purge":
            continue
        if not p.streams:  # (a point of streams also reads its tags: rendered every time)
            key = repr(p.workload)  # (a Workload holds a dict: not hashable itself)
            if key in rendered:
                continue
            rendered.add(key)
        job = job_on(p, options, devices)  # the job the executor and the write gate build (point_job)
        job.render()
        beyond = span_problems(job, devices)  # the write gate would refuse it at the fio boundary
        if beyond:
            raise UsageError(f"point {p.id}: {beyond[0]} of {target.name}; lower --footprint or --misalign")
        target.check_point(p)  # what the target's kind refuses beyond it (the simulator: its model's limits)
    eta = plan_eta(suite, ctx)
    if not (math.isfinite(eta.worst_s) and math.isfinite(eta.expected_s)):
        raise UsageError(f"{suite.name}: the plan's duration is not finite; check --runtime and the suite options")
    return points
