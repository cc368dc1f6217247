"""The fio executor: a TestPoint in, a Measurement out, through fio (typed job file -> subprocess -> json+).

The executor interface (targets/base.Executor) has two more implementations: the simulator's (sim/executor.py)
and the host group's (targets/hostgroup.py, one fio client driving many agents). Suites never run processes;
the orchestrator hands each point to the executor of its target.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ssdlab.errors import FioFailedError
from ssdlab.results import atomic
from ssdlab.results.live import LiveCallback, LiveSample, SampleCallback
from ssdlab.results.model import Measurement, TestPoint

if TYPE_CHECKING:
    from ssdlab.fio.job import FioJob, OptionValue
    from ssdlab.fio.runner import JobGate

__all__ = ["FioExecutor", "FioTarget", "LiveCallback", "LiveSample", "SampleCallback", "job_on", "point_job"]


class FioTarget(Protocol):
    """What fio needs of a target (every targets.base.Target has it): its fio options, its devices' and their
    names, and what it holds while a point's I/O runs."""

    def fio_options(self) -> dict[str, OptionValue]: ...

    def device_fio_options(self) -> list[dict[str, OptionValue]]: ...

    def device_names(self) -> list[tuple[str, str]]: ...

    def during_point(self, point: TestPoint) -> AbstractContextManager[None]: ...


def point_job(point: TestPoint, target: FioTarget) -> FioJob:
    """The fio job of one point on `target`. A target of several devices runs the point on all of them at once,
    one reporting group per device (per stream and device for ACT's streams); on one device, streams run as
    sections of their own and other points as one section. The write gate decides from exactly this job."""
    return job_on(point, target.fio_options(), target.device_fio_options())


def job_on(point: TestPoint, options: Mapping[str, OptionValue],
           devices: Sequence[Mapping[str, OptionValue]]) -> FioJob:
    """point_job with the target's fio options and its devices' (target.fio_options(), .device_fio_options())
    given: a caller that builds the jobs of a whole plan asks the target once."""
    from ssdlab.fio.job import build_device_job, build_job

    if point.tags.replay:  # a trace replay: fio's iolog replay, a section per stream and device (fio/replay.py)
        from ssdlab.fio.replay import replay_job

        return replay_job(point, list(devices) if len(devices) > 1 else [options])
    if len(devices) > 1:
        return build_device_job(point, devices)
    return build_job(point, options, devices if point.streams else None)


class FioExecutor:
    """Runs points with the fio binary: typed job file -> subprocess -> json+ -> Measurement.

    `gate` (safety.WriteGrant) checks every job at the fio boundary before fio starts."""

    name = "fio"
    series = True  # a continuous stimulus is one fio run, cut into samples from its status stream

    def __init__(self, gate: JobGate, status_interval: float = 1.0) -> None:
        from ssdlab.fio.runner import fio_binary

        self.gate = gate
        self.binary = fio_binary()
        self.status_interval = status_interval
        self._version: str | None = None
        from ssdlab.fio.idle import IdleTimer

        self.idle = IdleTimer()  # host idle before points that ask for it (PTS HIR), measured at fio's clocks

    def version(self) -> str:
        if self._version is None:
            from ssdlab.fio.runner import fio_version

            self._version = fio_version(self.binary)
        return self._version

    def run_point(self, point: TestPoint, target: FioTarget, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        from ssdlab.fio.runner import run_job

        job = point_job(point, target)
        on_status = live_status(on_live)
        replay = _replay_logs(point, target, point_dir)  # a trace replay: the iologs its job reads

        self.idle.wait(point.idle_before_s)
        started = time.time()
        with target.during_point(point):
            try:
                text = run_job(job, point_dir, gate=self.gate, status_interval=self.status_interval,
                               on_status=on_status, binary=self.binary, readonly=point.tags.readonly)
            except FioFailedError as exc:
                raise _failed(exc, point_dir, target.device_names(), point) from None
        from ssdlab.fio.parse import io_window, last_document, measurement_from_document  # loaded as fio ran

        doc = last_document(text)  # parsed once, for the totals and for the per-stream results
        m = _with_failures(measurement_from_document(doc), point_dir, doc)
        idle = self.idle.observe(started, io_window(doc))
        if point.idle_before_s:  # as achieved (None: not measurable)
            m = dataclasses.replace(m, extra=m.extra.replace(idle_s=round(idle, 4) if idle is not None else None))
        errors = m.extra.io_errors
        if errors and not point.tags.errors_are_results:  # fio went on past them (--on-error continue)
            from ssdlab.fio.failures import error_message, io_error_from_dict

            listed = [io_error_from_dict(e) for e in errors.listed]
            raise FioFailedError(f"fio reported {error_message(listed, int(errors.count))}",
                                 partial=self._finish(m, point, point_dir, doc, job, target))
        m = self._finish(m, point, point_dir, doc, job, target)
        if replay is not None:
            from ssdlab.fio.replay import with_replay

            m = with_replay(m, point, replay)
        return m

    def _finish(self, m: Measurement, point: TestPoint, point_dir: Path, doc: dict[str, Any],
                job: FioJob, target: FioTarget) -> Measurement:
        """Series, histogram-log files, per-stream results (with each paced section's lag) and per-device
        results added to the measurement."""
        from ssdlab.fio.logs import with_logs
        from ssdlab.fio.parse import measurements_by_job
        from ssdlab.results.model import to_dict

        w = point.workload
        m = with_logs(m, point, point_dir)
        if point.streams:  # per-stream results (one reporting group per stream and device)
            from ssdlab.fio.pacing import section_pacing

            extra = m.extra.replace(streams={name: to_dict(sm) for name, sm in measurements_by_job(doc).items()})
            pacing = section_pacing(job, point_dir)  # how far each paced section fell behind its schedule
            if pacing:
                extra = extra.replace(pacing=pacing)
            m = dataclasses.replace(m, extra=extra)
        names = target.device_names()
        if len(names) > 1 and not point.streams:  # several devices at once: each device's own result
            from ssdlab.fio.parts import with_device_parts

            m = with_device_parts(m, doc, names, point_dir, point.id, w.log_interval_ms)
        return m


    def run_series(self, points: Sequence[TestPoint], target: FioTarget, point_dir: Path,
                   on_live: LiveCallback | None, on_sample: SampleCallback) -> None:
        """Run `points` (samples of one continuous stimulus: the same workload, no idle between them) as one fio
        run, handing each sample to on_sample as it ends (fio.series); stop fio early when on_sample says so."""
        from ssdlab.fio.parse import io_window, last_document
        from ssdlab.fio.runner import run_job
        from ssdlab.fio.series import STATUS_FILE, SampleCutter, status_period

        first = points[0]
        sample_s = float(first.workload.runtime_s or 0.0)
        workload = dataclasses.replace(first.workload, runtime_s=sample_s * len(points))
        job = point_job(dataclasses.replace(first, workload=workload), target)
        cutter = SampleCutter(sample_s, len(points))
        live = live_status(on_live)
        where: list[Path | None] = [point_dir]

        def deliver(m: Measurement, doc: dict[str, Any]) -> bool:
            """Store the sample's closing document, hand the sample over; True: the stimulus goes on."""
            here = where[0]
            assert here is not None
            if cutter.closed == 1:  # the first sample: the idle before the stimulus (documents carry fio's clock)
                idle = self.idle.observe(started, io_window(doc))
                if first.idle_before_s:
                    m = dataclasses.replace(m, extra=m.extra.replace(idle_s=idle))
            atomic.write_text(here / STATUS_FILE, json.dumps(doc, indent=1) + "\n")
            where[0] = on_sample(m)
            return where[0] is not None

        def on_status(doc: dict[str, Any]) -> bool:
            live(doc)
            if where[0] is None:  # stopped: what fio prints from here on belongs to no sample
                return False
            sample = cutter.feed(doc)
            return sample is not None and not deliver(sample, doc)

        self.idle.wait(first.idle_before_s)
        started = time.time()
        with target.during_point(first):
            try:
                text = run_job(job, point_dir, gate=self.gate, status_interval=status_period(sample_s),
                               on_status=on_status, binary=self.binary)
            except FioFailedError as exc:
                raise _failed(exc, point_dir) from None
        final = last_document(text)
        if where[0] is not None:  # fio ran to its end: its final document closes the last sample
            last = cutter.close(final)
            if last is not None:
                deliver(last, final)
        self.idle.observe(started, io_window(final))  # where the device's next idle starts


def _replay_logs(point: TestPoint, target: FioTarget, point_dir: Path) -> dict[str, Any] | None:
    """A replay point's iologs written into its directory (what each device replays), None for other points."""
    if not point.tags.replay:
        return None
    from ssdlab.fio.replay import alignment, write_iologs

    return write_iologs(point, target.device_fio_options(), point_dir, alignment(target))


def live_status(on_live: LiveCallback | None) -> Callable[[dict[str, Any]], None]:
    """A status-document callback that turns fio's cumulative counters into live rates for `on_live`."""
    from ssdlab.fio.status import StatusRates

    rates = StatusRates()

    def feed(doc: dict[str, Any]) -> None:
        sample = rates.feed(doc)
        if on_live is not None and sample is not None:
            on_live(sample)

    return feed


def _with_failures(m: Measurement, point_dir: Path, doc: dict[str, Any] | None) -> Measurement:
    """The measurement with the I/O errors and verification failures fio reported (Measurement.extra)."""
    from ssdlab.fio.failures import summarize
    from ssdlab.fio.ioerrors import EILSEQ, job_errors

    found = summarize(point_dir, doc)
    if not found:
        return m
    m = dataclasses.replace(m, extra=m.extra.replace(**found))
    if "verify" in found and doc is not None:  # a verify mismatch is the check's result, not a job error
        m = dataclasses.replace(m, errors=len(job_errors(doc, ignore=(EILSEQ,))))
    return m


def _failed(exc: FioFailedError, point_dir: Path, names: list[tuple[str, str]] | None = None,
            point: TestPoint | None = None) -> FioFailedError:
    """fio failed: keep what it finished (its last JSON document, each device's share on several devices) and
    say which I/O failed, when it did."""
    from ssdlab.fio.failures import error_message, io_errors
    from ssdlab.fio.parse import last_document, measurement_from_document

    doc: dict[str, Any] | None = None
    partial = None
    if exc.output:
        try:
            doc = last_document(exc.output)
            partial = _with_failures(measurement_from_document(doc), point_dir, doc)
            if names and len(names) > 1 and point is not None and not point.streams:
                from ssdlab.fio.parts import with_device_parts

                partial = with_device_parts(partial, doc, names, point_dir, point.id, None)
        except FioFailedError:
            doc = None
    errors = io_errors(point_dir, doc)
    message = f"fio failed: {error_message(errors)}" if errors else str(exc)
    return FioFailedError(message, cmd=exc.cmd, returncode=exc.returncode, stderr=exc.stderr, output=exc.output,
                          partial=partial)
