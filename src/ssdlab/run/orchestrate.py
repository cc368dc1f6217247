"""The run loop: ask the suite for the next point, hand it to the executor, store the result atomically.

Lifecycle: open results dir -> record target + host -> prepare target -> (next point -> execute -> append it
to the points log)* -> conclude -> complete (run.json written whole). Ctrl-C or an fio failure keeps every
finished point and marks the run interrupted/failed; `resume` reloads the run and continues from the first
unfinished point. With the run option `on_error: continue` (--on-error continue) a failed point is recorded
and the run goes on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from ssdlab import __version__
from ssdlab.analysis import anomalies
from ssdlab.errors import FioFailedError, RunInterrupted, SsdlabError
from ssdlab.fio import runner
from ssdlab.results import naming, store, verdict
from ssdlab.results.dropped import left_run_warning
from ssdlab.results.events import RunEvent, StopEvent
from ssdlab.results.extra import HostCpu
from ssdlab.results.model import SCHEMA_VERSION, Measurement, PointResult, Run, TestPoint
from ssdlab.results.request import RunRequest
from ssdlab.results.timing import CATALOG_FILE, SHARE_KEY
from ssdlab.run import ceiling, eta, hostload
from ssdlab.run.eta import Estimator
from ssdlab.run.liverecord import LiveRecorder
from ssdlab.run.progress import Progress
from ssdlab.safety import WriteGrant
from ssdlab.suites.base import Outlook, PlanContext, Suite, apply_common, traits_of
from ssdlab.system import host_info
from ssdlab.targets.base import Executor, Target
from ssdlab.targets.session import DeviceSession


def new_run(suite: Suite, target: Target, executor: Executor, options: RunRequest, run_dir: Path, *,
            info: Mapping[str, Any] | None = None) -> Run:
    """The run as it starts, saved. `info`: the target's record as the run's setup read it (PlanContext.target),
    so the target is not asked again (a file of someone else's is probed with blkid for a signature; a host
    group asks its agents)."""
    run = Run(
        schema_version=SCHEMA_VERSION, ssdlab_version=__version__, run_id=run_dir.name, suite=suite.name,
        status="running", created=store.now_iso(), options=options,
        target=with_fingerprint(dict(info) if info is not None else target.info(), target),
        host={**host_info(executor.name, executor.version()), SHARE_KEY: round(eta.cpu_share(), 3)},
    )
    store.save_run(run_dir, run)
    return run


def with_fingerprint(info: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """The run's record of its target with each local device's or file's fingerprint as it is now (what `resume`
    compares: Target.changed_since), merged by target string into the one recorded (devices left out keep
    theirs); no key when there is nothing local to recognise."""
    now = target.fingerprint()
    if not now:
        return dict(info)
    mine = {r["spec"] for r in now}
    kept = [r for r in info.get("fingerprint") or [] if isinstance(r, Mapping) and r.get("spec") not in mine]
    return {**info, "fingerprint": [*kept, *now]}


def skip_reason(point: TestPoint, target: Target) -> str:
    """A point the target cannot do is skipped with the reason, never reported as zero."""
    if not target.aligned_io:
        return ""
    lbs = target.logical_block_size()
    w = point.workload
    if w.bssplit is None and w.bs % lbs != 0:
        return f"block size {w.bs} B is not a multiple of the target's logical block size {lbs} B (direct I/O)"
    if w.bssplit:
        for size in _bssplit_sizes(w.bssplit):
            if size % lbs:
                return (f"block size {size} B in bssplit {w.bssplit} is not a multiple of the target's logical "
                        f"block size {lbs} B (direct I/O)")
    return ""


def _bssplit_sizes(bssplit: str) -> list[int]:
    """Block sizes named in a fio bssplit ('4k/50:64k/50' or '<reads>,<writes>')."""
    from ssdlab.units import parse_size

    sizes = []
    for part in bssplit.replace(",", ":").split(":"):
        size = part.split("/")[0].strip()
        if size:
            sizes.append(parse_size(size))
    return sizes


def measurement_warnings(m: Measurement) -> list[str]:
    """A point's own warnings (the host-CPU flag is not one: it is marked on the point, its advice said once per
    run, HostAdvice)."""
    out = []
    if m.errors:
        out.append(f"fio reported errors in {m.errors} job(s)")
    out.extend(anomalies.latency_warnings(m))
    out.extend(part_warnings(m))
    return out


def part_warnings(m: Measurement) -> list[str]:
    """A point on several devices where some had no result: the aggregate covers the others only."""
    failed = [p for p in m.parts if p.status != "ok"]
    if not failed:
        return []
    return [f"{len(failed)} of {len(m.parts)} devices have no result in this point; the aggregate covers the "
            f"other {len(m.parts) - len(failed)}: " + "; ".join(f"{p.key}: {p.reason}" for p in failed[:4])
            + (" …" if len(failed) > 4 else "")]


def on_error_policy(run: Run) -> str:
    """The run's --on-error policy: 'stop' (default) or 'continue'."""
    return run.options.error_policy


def apply_error_policy(point: TestPoint, policy: str) -> TestPoint:
    """Under 'continue', fio goes on past device errors inside a point and prints each with its offset
    (options the point sets itself win); under 'stop', the first error ends the point and the run."""
    if policy != "continue":
        return point
    from ssdlab.fio.ioerrors import continue_options

    w = point.workload
    options = {**continue_options(), **w.options}
    streams = tuple(dataclasses.replace(s, options={**continue_options(), **s.options}) for s in point.streams)
    return dataclasses.replace(point, workload=dataclasses.replace(w, options=options), streams=streams)


def host_limit(point: TestPoint, m: Measurement, target_kind: str, ioengine: str = "") -> hostload.HostLimit:
    """Whether the CPUs submitting this point's I/O were saturated (fio's usr+sys per job, and the system-wide
    /proc/stat sample stored in extra.host_cpu); the simulator uses no host CPU per I/O."""
    if m.engine != "fio":
        return hostload.HostLimit(False)
    cpu = m.extra.host_cpu or HostCpu()
    w = point.workload
    return hostload.assess(
        m.usr_cpu + m.sys_cpu if m.directions else None, cpu.submitting_busy_pct, numjobs=w.numjobs,
        submitting_count=cpu.submitting_count, online_cpus=cpu.online_cpus, ioengine=ioengine,
        options=w.options, null_target=target_kind == "null")


class HostAdvice:
    """The host-CPU advice, said once per run: at the first point whose fio threads were saturated."""

    def __init__(self, note: Callable[[str], None]) -> None:
        self.note = note
        self.said = False

    def seen(self, result: PointResult) -> None:
        m = result.measurement
        if self.said or m is None or not hostload.saturated(m):
            return
        self.said = True
        self.note("host CPU limit: fio's submitting threads were saturated on this point (marked on each such "
                  "point; the report lists them): the result may be the host's limit, not the device's. To lift "
                  "it: " + "; ".join(hostload.stored_advice([m])))


def drive(run_dir: Path, run: Run, suite: Suite, ctx: PlanContext, target: Target, executor: Executor,
          progress: Progress, *, grant: WriteGrant) -> Run:
    """Run every remaining point of `suite`, storing each as it finishes; return the completed Run. `grant` (from
    safety.authorize) is required before the target's layout and every purge; fio jobs meet it in the executor.
    Every progress event is also recorded in DIR/live.jsonl (liverecord.py) for `ssdlab serve`."""
    recorder = LiveRecorder(run_dir, progress, devices=target.device_names(), engine=executor.name)
    try:
        return _drive(run_dir, run, suite, ctx, target, executor, recorder, grant=grant)
    finally:
        target.close()  # whatever happened: servers the target started (nbdkit) stop with the run
        recorder.close()


def _drive(run_dir: Path, run: Run, suite: Suite, ctx: PlanContext, target: Target, executor: Executor,
           progress: Progress, *, grant: WriteGrant) -> Run:
    loop = RunLoop(run_dir, run, suite, ctx, target, executor, progress, grant)
    loop.announce()
    ended = False  # the suite ran out of points: complete() follows
    try:
        loop.start()
        while (outlook := loop.outlook()) is not None:
            loop.step(outlook)
        ended = True
    except KeyboardInterrupt:
        loop.stop("interrupted", "interrupted by the user (Ctrl-C)")
        raise RunInterrupted(f"interrupted; finished points are kept: `ssdlab resume {run_dir}` continues") \
            from None
    except FioFailedError as exc:
        loop.stop("failed", str(exc))
        raise
    except Exception as exc:  # any other error (target, results dir, a bug): finished points stay, run failed
        with contextlib.suppress(Exception):  # saving may be what failed (disk full): keep the first error
            loop.stop("failed", str(exc) if isinstance(exc, SsdlabError) else f"{type(exc).__name__}: {exc}")
        raise
    finally:  # whatever ended the loop: settings restored, health after, saved (never raises)
        loop.finish_session(ended)
    return loop.complete()


class RunLoop:
    """The run loop's state: the run so far, the ETA model, the error policy and the points given up on.

    Each step runs the suite's next point, or the samples of a continuous stimulus as one engine run when the
    executor can (Executor.series), and records the result; a failed point (or sample) is recorded the same
    way either way, and either stops the run or, under --on-error continue, is given up on."""

    def __init__(self, run_dir: Path, run: Run, suite: Suite, ctx: PlanContext, target: Target,
                 executor: Executor, progress: Progress, grant: WriteGrant) -> None:
        self.run_dir, self.run, self.suite, self.ctx = run_dir, run, suite, ctx
        self.target, self.executor, self.progress, self.grant = target, executor, progress, grant
        self.estimator = Estimator(run.target, suite.point_overhead_s, share=eta.cpu_share(),
                                   history=_history(run_dir.parent, run))
        for earlier in run.points:  # a resumed run: what its points took (executor time + bookkeeping) is a first guess
            wall_s = earlier.measurement.extra.wall_s if earlier.measurement is not None else None
            if wall_s is not None:
                self.estimator.observe(earlier, float(wall_s) + eta.BOOKKEEPING_PRIOR_S, earlier=True)
        self.policy = on_error_policy(run)
        self.given_up: set[str] = set()  # points that failed under --on-error continue: not retried in this session
        self.session = DeviceSession(run_dir, target, note=progress.note,  # drive health, write cache, power state
                                     on_sample=progress.health if isinstance(progress, LiveRecorder) else None)
        self.t0 = time.monotonic()
        self.ceiling: TestPoint | None = None  # the host-ceiling check to run first (several devices)
        self.advice = HostAdvice(progress.note)
        self._saved: Run | None = None  # the run as save() last wrote it
        self._held = False  # the session's last save is held for complete() (finish_session)

    def finish_session(self, ended: bool) -> None:
        """The drive session's end (settings back, health after). A run that stopped is saved as it stands; one
        that ran to its end is written once, complete, by complete(): what the session would save just before
        is held for it (and written if the run cannot be completed)."""
        if not ended:
            self.run = self.session.finish(self.run, self.save)
            return
        held: list[Run] = []
        try:
            self.run = self.session.finish(self.run, held.append)
        except BaseException:  # a second Ctrl-C in the after-snapshot: what the session kept is saved
            if held:
                self.save(held[-1])
            raise
        self._held = bool(held)

    def save(self, run: Run) -> None:
        """run.json as `run` (the drive session's saves): not written again when it is the run just saved (the
        session saves after putting settings back and after the last health snapshot; a target without either
        leaves the run as it was)."""
        if run is self._saved:
            return
        store.save_run(self.run_dir, run)
        self._saved = run

    def announce(self) -> None:
        """The progress display's start, with the whole run's ETA (the host-ceiling check's included); no stop
        requested yet."""
        est = self.estimator.estimate(self.suite.outlook(self.ctx, self.run), len(self.run.points))
        self.ceiling = ceiling.planned(self.run, self.suite, self.ctx, self.target)
        if self.ceiling is not None:
            est = est.with_first(self.estimator.seconds(self.ceiling), self.estimator.error(False))
        layout = eta.layout_bytes(self.run.target, self.target.layout_writes(), resumed=bool(self.run.points))
        before = self.estimator.layout_s(layout) + self.estimator.replay_s(self._replayed())
        est = est.with_setup(before, self.estimator.error(False))
        self.progress.run_start(run_title(self.suite.name, self.target), est)
        runner.clear_stop_request()

    def _replayed(self) -> list[PointResult]:
        """A resumed simulated drive's work before its next point: the stored points after its last checkpoint,
        which it simulates again (sim/target.py)."""
        if not self.run.points or not traits_of(str(self.run.target.get("kind") or "")).simulated:
            return []
        from ssdlab.sim.target import STATE_META

        try:
            after = str(json.loads((self.run_dir / STATE_META).read_text(encoding="utf-8")).get("point") or "")
        except (OSError, ValueError, AttributeError):
            after = ""  # no checkpoint: the whole run is replayed
        ids = [r.point.id for r in self.run.points]
        start = ids.index(after) + 1 if after in ids else 0
        return list(self.run.points[start:])

    def start(self) -> None:
        """Health before and requested drive settings, the target's layout, the hosts' ceiling."""
        progress, target = self.progress, self.target
        run = self.session.start(self.run, self.save)  # requested settings applied, originals recorded first
        self.run = run
        if run.points:  # a resumed run: a target that saved its state restores it rather than preparing afresh
            target.resuming(self.run_dir)
        layout = target.layout_writes()
        if layout:
            self.grant.require(f"lay out the target ({layout})")
        for note in target.prepare(self.grant.writes):
            progress.note(note)
            run = run.with_event(RunEvent.of(time=store.now_iso(), kind="prepare", text=note))
        if run.status != "running":
            run = run.with_status("running")
        run = dataclasses.replace(run, target=with_fingerprint(run.target, target))  # a file it made, this boot's
        store.save_run(self.run_dir, run)
        self.run = run
        if self.ceiling is not None:  # several devices: the hosts' ceiling first; its time teaches the ETA
            self.run, wall_s = ceiling.check(self.run_dir, run, self.ceiling, target, progress)
            done = self.run.result(ceiling.POINT_ID)
            if done is not None:
                self.estimator.observe_first(done, wall_s)

    def outlook(self) -> Outlook | None:
        """What is left (its first point the next one), or None when the suite is done."""
        self.t0 = time.monotonic()  # the step's wall time, for the ETA, starts here
        if runner.stop_requested():  # a signal whose KeyboardInterrupt was swallowed somewhere
            raise KeyboardInterrupt
        outlook = self.suite.outlook(self.ctx, self.run)
        if outlook.next_point is not None and outlook.next_point.id in self.given_up:  # rare: list what is left
            outlook = Outlook.of(self._remaining())
        return outlook if outlook.next_point is not None else None

    def _remaining(self) -> list[TestPoint]:
        return [p for p in self.suite.next_points(self.ctx, self.run) if p.id not in self.given_up]

    def _ready(self, point: TestPoint) -> TestPoint:
        """A point as it runs: --footprint, --misalign, ... and the error policy's fio options."""
        return apply_error_policy(apply_common(self.ctx, point), self.policy)

    def step(self, outlook: Outlook) -> None:
        """Run the next point (or continuous stimulus) and record what came of it."""
        assert outlook.next_point is not None
        t0 = self.t0
        point = self._ready(outlook.next_point)
        self.progress.point_start(point, point_index(self.run), self.estimator.estimate(outlook, len(self.run.points)))
        chain = continuous_chain(self._remaining()) if outlook.next_point.continuous else [point]
        if len(chain) > 1 and self.executor.series and not skip_reason(point, self.target):
            self._run_series([self._ready(p) for p in chain], t0)
            return
        attempt = _attempt(self.run, point)
        try:
            result = _run_valid(self.run_dir, point, self.target, self.executor, self.progress, attempt=attempt,
                                grant=self.grant)
        except FioFailedError as exc:  # the failed point keeps what fio finished (exc.partial)
            partial = exc.partial if isinstance(exc.partial, Measurement) else None
            self._failed(point, exc, attempt, partial, t0)
            return
        self._record(result, t0)

    def _run_series(self, points: list[TestPoint], t0: float) -> None:
        """The samples of one continuous stimulus as one engine run; each sample is stored as it ends."""
        series = Series(self.run_dir, self.run, self.suite, self.ctx, points, self.progress, self.target,
                        self.estimator, self.advice)
        try:
            self.executor.run_series(series.points, self.target, store.point_dir(self.run_dir, points[0].id),
                                     self.progress.live, series.on_sample)
        except FioFailedError as exc:  # the sample that was running failed; the samples before it stay
            self.run = series.run  # exc.partial covers the whole series, not this sample: not kept
            self._failed(series.current, exc, _attempt(self.run, series.current), None, t0)
            return
        except BaseException:
            self.run = series.run  # every sample stored so far stays
            raise
        self.run = series.run

    def _failed(self, point: TestPoint, exc: FioFailedError, attempt: int, partial: Measurement | None,
                t0: float) -> None:
        """A point fio failed on: recorded; the run stops, or (--on-error continue) goes on without it."""
        failed = PointResult(point=point, status="failed", started=store.now_iso(), finished=store.now_iso(),
                             reason=str(exc), attempt=attempt, measurement=partial)
        if self.policy != "continue":
            self.run = self.run.with_point(failed)  # saved with the run as it stops
            raise exc
        self.given_up.add(point.id)
        if failed.measurement is not None:  # several devices: later points go on without the failed
            _drop_failed(self.target, failed.measurement)
        append(self, failed)
        self.estimator.observe(failed, time.monotonic() - t0)
        self.progress.point_end(failed)

    def _record(self, result: PointResult, t0: float) -> None:
        append(self, result)  # temperature samples join the run in session.finish
        if result.point.phase == "purge":  # a purge may make the file anew: resume must know the new one
            target = with_fingerprint(self.run.target, self.target)
            if target != self.run.target:
                self.run = dataclasses.replace(self.run, target=target)
                store.save_run(self.run_dir, self.run)
        self.estimator.observe(result, time.monotonic() - t0)
        self.progress.point_end(result)
        self.advice.seen(result)

    def stop(self, status: str, text: str) -> None:
        """The run stopped (interrupted, failed): recorded and saved."""
        self.run = _stop(self.run_dir, self.run, status, text)
        self.progress.run_end(self.run)

    def complete(self) -> Run:
        """The suite's conclusions, the run complete and saved, and indexed in its results root's catalog (what
        it took teaches the next run's ETA)."""
        run = self.run
        try:
            if self.given_up:
                run = run.with_warning(f"{len(self.given_up)} point(s) failed and the run went on (--on-error "
                                       "continue): their reasons are listed with them; `ssdlab resume` does not "
                                       "repeat them")
            run = left_run_warning(self.suite.conclude(self.ctx, run))  # hosts/devices a multi-device run went without
            run = run.with_status("complete", store.now_iso())
            store.save_run(self.run_dir, run)
        except BaseException:
            if self._held:  # the session's record (settings restored, health after) is not lost
                with contextlib.suppress(Exception):
                    self.save(self.run)
            raise
        self.progress.run_end(run)
        from ssdlab.results import catalog

        catalog.remember(self.run_dir.parent, run, self.run_dir)
        return run


def _history(root: Path, run: Run) -> eta.History:
    """What earlier complete runs of the run's suite on its kind of target took, from the catalog of its results
    root when there is one (results/catalog.history; not imported for a root without one)."""
    if not (root / CATALOG_FILE).is_file():
        return eta.History()
    from ssdlab.results import catalog

    return eta.History.of(catalog.history(root, run.suite, str(run.target.get("kind") or "")))


def point_index(run: Run) -> int:
    """The position of the run's next point (1 = its first), the host-ceiling check aside."""
    done = run.finished_by_id()
    return len(done) + 1 - (ceiling.POINT_ID in done)


def run_title(suite: str, target: Target) -> str:
    """'quick on sim:p5430', 'quick on hosts a, b': the run's title on the console and in its live record (the
    naming rule of results/naming.py)."""
    return naming.run_title(suite, target.name)


def continuous_chain(remaining: list[TestPoint]) -> list[TestPoint]:
    """The leading points of `remaining` that run as one continuous stimulus: the first point and those after
    it with the same `continuous` key and workload and no idle before them (TestPoint.continuous)."""
    first = remaining[0]
    if not first.continuous or first.streams:
        return [first]
    chain = [first]
    for p in remaining[1:]:
        if p.continuous != first.continuous or p.workload != first.workload or p.idle_before_s or p.streams:
            break
        chain.append(p)
    return chain


class Series:
    """Stores the samples of a continuous stimulus as they end (each one point, saved at once) and tells the
    executor whether the stimulus goes on: only while the suite's next point is the chain's next sample
    (a stop rule, e.g. WSAT's capacity written, ends it early)."""

    def __init__(self, run_dir: Path, run: Run, suite: Suite, ctx: PlanContext, points: list[TestPoint],
                 progress: Progress, target: Target, estimator: Estimator, advice: HostAdvice | None = None) -> None:
        self.run_dir, self.run, self.suite, self.ctx = run_dir, run, suite, ctx
        self.points, self.progress, self.target, self.estimator = points, progress, target, estimator
        self.advice = advice or HostAdvice(progress.note)
        self.index = 0
        self.started = store.now_iso()
        self.t0 = time.monotonic()

    @property
    def current(self) -> TestPoint:
        return self.points[min(self.index, len(self.points) - 1)]

    def on_sample(self, m: Measurement) -> Path | None:
        point = self.current
        finished = store.now_iso()
        result = PointResult(point=point, status="ok", started=self.started, finished=finished, measurement=m,
                             warnings=tuple(measurement_warnings(m)),
                             attempt=_attempt(self.run, point))
        problem = verdict.point_problem(point, m)
        if problem:  # a sample of a running stimulus cannot be run again for longer: it is invalid
            result = dataclasses.replace(result, status="invalid", reason=f"invalid: {problem} (a sample of a "
                                                                          "continuous stimulus is not extended)")
        append(self, result)
        now = time.monotonic()
        self.estimator.observe(result, now - self.t0)
        self.t0 = now
        self.progress.point_end(result)
        self.advice.seen(result)
        self.index += 1
        if self.index >= len(self.points) or runner.stop_requested():
            return None
        outlook = self.suite.outlook(self.ctx, self.run)  # its first point is the suite's next one
        nxt = self.points[self.index]
        if outlook.next_point is None or outlook.next_point.id != nxt.id:
            return None  # the suite stopped the stimulus here
        self.started = finished
        self.progress.point_start(nxt, point_index(self.run), self.estimator.estimate(outlook, len(self.run.points)))
        here = store.point_dir(self.run_dir, nxt.id)
        here.mkdir(parents=True, exist_ok=True)  # a sample in progress has its directory, as a point has
        return here


class _Holder(Protocol):
    run_dir: Path
    run: Run


def append(holder: _Holder, result: PointResult) -> None:
    """Record `result` in the holder's run: appended to the points log and held as stored (a point on several
    devices keeps their results in its directory, not in memory). When storing fails the result is held as it
    is, so that the run's stop can still save it whole."""
    try:
        stored = store.append_point(holder.run_dir, result)
    except BaseException:
        holder.run = holder.run.with_point(result)
        raise
    holder.run = holder.run.with_point(stored)


def _stop(run_dir: Path, run: Run, status: str, text: str) -> Run:
    run = run.with_event(StopEvent.of(time=store.now_iso(), kind=status, text=text, points_done=len(run.ok_points())))
    run = run.with_status(status, store.now_iso())  # type: ignore[arg-type]
    store.save_run(run_dir, run)
    return run


def _drop_failed(target: Target, m: Measurement) -> None:
    """--on-error continue: leave the devices that failed in `m` out of every later point."""
    for p in m.parts:
        if p.status != "ok":
            target.drop(p.key, p.reason or "failed")


def _attempt(run: Run, point: TestPoint) -> int:
    return 1 + run.attempts(point.id)


def _run_valid(run_dir: Path, point: TestPoint, target: Target, executor: Executor, progress: Progress, *,
               attempt: int, grant: WriteGrant) -> PointResult:
    """Run a point; one that completed too few I/Os (verdict.point_problem) runs again with a longer runtime
    (verdict.extended_runtime) and is stored as invalid if it still falls short. Invalid points are never
    `ok`: suites and reports never count them."""
    planned = point.workload.runtime_s
    tried: list[str] = []  # "0.5 s: 114 I/Os" per attempt that fell short
    first_problem = ""
    while True:
        result = _run_one(run_dir, point, target, executor, progress, attempt=attempt, grant=grant)
        problem = verdict.point_problem(point, result.measurement) if result.status == "ok" else ""
        runtime = point.workload.runtime_s
        if not problem:
            if tried:
                result = dataclasses.replace(result, warnings=(
                    *result.warnings, f"runtime extended from {planned:g} s to {runtime:g} s: {first_problem} "
                                      f"(runs: {', '.join(tried)})"))
            return result
        first_problem = first_problem or problem
        tried.append(f"{runtime:g} s: {verdict.completed_ios(result.measurement):,} I/Os" if runtime is not None
                     else f"{verdict.completed_ios(result.measurement):,} I/Os")
        longer = verdict.extended_runtime(point, result.measurement, planned or 0.0)
        if longer is None:
            bound = (f"; ran {len(tried)} time(s) ({', '.join(tried)}), up to {verdict.MAX_EXTENSION:g}x its "
                     f"planned {planned:g} s" if planned else "; a size-based point cannot be extended")
            return dataclasses.replace(result, status="invalid", reason=f"invalid: {problem}{bound}")
        progress.note(f"    {point.label}: {problem}; running it again for {longer:g} s")
        point = dataclasses.replace(point, workload=dataclasses.replace(point.workload, runtime_s=longer),
                                    tags=point.tags.replace(planned_runtime_s=planned))


def _run_one(run_dir: Path, point: TestPoint, target: Target, executor: Executor, progress: Progress, *,
             attempt: int, grant: WriteGrant) -> PointResult:
    started = store.now_iso()
    reason = skip_reason(point, target)
    if reason:
        return PointResult(point=point, status="skipped", started=started, finished=started, reason=reason,
                           attempt=attempt)
    if point.phase == "purge":  # not I/O: the target itself does it (nvme format, blkdiscard, recreate, ...)
        grant.require(f"purge {target.name}")
        done = target.purge(str(point.tags.method or ""))
        if point.tags.write_cache in ("enabled", "disabled"):  # PTS WCE/WCD: set on the device, read back
            done += "; " + target.set_write_cache(point.tags.write_cache == "enabled")
        return PointResult(point=point, status="ok", started=started, finished=store.now_iso(), reason=done,
                           attempt=attempt)
    pdir = store.point_dir(run_dir, point.id)
    t0 = time.monotonic()
    sampler = _cpu_sampler(point, target)
    with sampler or contextlib.nullcontext():
        m = executor.run_point(point, target, pdir, progress.live)
    extra = m.extra.replace(wall_s=round(time.monotonic() - t0, 3))
    if sampler is not None:
        extra = extra.replace(host_cpu=sampler.result())
    m = dataclasses.replace(m, extra=extra)
    limit = host_limit(point, m, target.kind, target.options.ioengine)
    if limit.saturated:
        m = dataclasses.replace(m, extra=extra.replace(host_limit=limit.as_dict()))
    return PointResult(point=point, status="ok", started=started, finished=store.now_iso(), measurement=m,
                       warnings=tuple(measurement_warnings(m)),
                       attempt=attempt)


def _cpu_sampler(point: TestPoint, target: Target) -> hostload.CpuSampler | None:
    """System-wide CPU sampling over a point whose I/O this host's CPUs submit (Target.fio_here), on the CPUs
    its jobs may use (cpus_allowed)."""
    if not target.fio_here:
        return None
    cpus = None
    allowed = point.workload.options.get("cpus_allowed")
    if allowed is not None:
        with contextlib.suppress(ValueError):
            cpus = hostload.parse_cpu_list(str(allowed)) or None
    return hostload.CpuSampler(cpus, interval_s=hostload.sample_interval(point.workload.runtime_s))
