"""What `resume` does before the run loop goes on: stop fio processes a killed ssdlab left running on the run's
points, and record where the run resumes (the points it repeats) as a run event."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from ssdlab.results import store
from ssdlab.results.events import ResumeEvent
from ssdlab.results.model import Run
from ssdlab.suites.base import PlanContext, Suite


def mark_resumed(run_dir: Path, run: Run, suite: Suite, ctx: PlanContext) -> Run:
    """The run with its resume event: the points that run again (failed ones, and a point killed mid-run,
    which was never recorded but left its directory) and the orphaned fio processes stopped."""
    unfinished = [p.point.id for p in run.points if p.status == "failed"]
    pending = suite.next_points(ctx, run)
    resumed_at = pending[0].id if pending else ""
    # a point killed mid-run (Ctrl-C, kill -9, power loss) was never recorded but left its directory: it runs again
    if resumed_at and resumed_at not in unfinished and store.point_dir(run_dir, resumed_at).exists():
        unfinished.append(resumed_at)
    orphans = stop_orphan_fio(run_dir)
    return run.with_event(ResumeEvent.of(
        time=store.now_iso(), kind="resume", previous_status=run.status, points_done=len(run.ok_points()),
        repeated=unfinished, resumed_at=resumed_at, stopped_fio_pids=orphans,
    ))


def stop_orphan_fio(run_dir: Path) -> list[int]:
    """Kill fio processes left running on this run's points by a killed ssdlab (fio's forked job processes
    survive it and can hang); only processes whose command line names a job file under run_dir/points/."""
    marker = str(run_dir.resolve() / "points").encode()
    stopped = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and Path(argv[0].decode(errors="replace")).name == "fio" and any(marker in a for a in argv[1:]):
            try:
                os.kill(int(proc.name), signal.SIGKILL)
                stopped.append(int(proc.name))
            except OSError:
                pass
    return stopped
