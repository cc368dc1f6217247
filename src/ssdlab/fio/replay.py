"""fio's iolog replay of a trace (`ssdlab run replay`): the job (one section per stream and device), the iolog
files it reads, and recording what a fitted suite generates (`trace fit --check`).

fio 3.33 facts this relies on (iolog.c): version 3 iolog timestamps are microseconds; `replay_redirect` sends
every I/O of the log to one file or device whatever the log names; a timed replay sleeps before each I/O but
reaps completions only when the queue is full, so at iodepth > 1 its completion latencies include the wait for
the next arrival (fixed in fio 3.36); and at the end of a replay at iodepth > 1 the I/Os still in flight are
counted in total_ios but neither in io_bytes nor in the latency histograms. A replay therefore runs `depth`
streams of queue depth 1 (I/O i of a device on stream i mod depth, each a job of its own), timed or as fast as
possible (replay_no_stall), whose counts and latencies are exact. A stream's first delay is counted from its
previous I/O, so every log starts with a file action at 1 µs and its I/O times are shifted by 1 µs (a log time
of 0 would reset fio's reference). fio 3.33 cannot replay trims from an iolog (fio 3.34 can): they are refused, or left
out with --no-trims.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ssdlab.errors import UnsafeTargetError
from ssdlab.fio.job import FioJob, FioSection, OptionValue, common_options, device_section_name
from ssdlab.fio.logs import HIST_PREFIX, LOG_PREFIX, hist_options, log_options
from ssdlab.results.model import Measurement, TestPoint

if TYPE_CHECKING:
    from ssdlab.trace.mapping import Placement, ReplaySpec
    from ssdlab.trace.model import Trace

LOG_FILE = "replay"  # the file name inside the iologs (replay_redirect names the real one)
ACTIONS = (b"read ", b"write", b"trim ")
ACTION_LEN = (4, 5, 4)


def alignment(target: Any) -> int:
    """What a replay's offsets and sizes must be multiples of on `target`: its logical block size when its I/O
    is direct (files, block devices: Target.aligned_io), else 1."""
    return int(target.logical_block_size()) if getattr(target, "aligned_io", False) else 1


def replay_spec(point: TestPoint) -> ReplaySpec | None:
    """The replay a point asks for (its tags' `replay`), None for any other point."""
    raw = point.tags.replay
    if not raw:
        return None
    from ssdlab.trace.mapping import ReplaySpec

    return ReplaySpec.from_tags(raw)


def iolog_name(device: int, stream: int, devices: int) -> str:
    return f"replay-s{stream}.iolog" if devices == 1 else f"replay-d{device}-s{stream}.iolog"


def placements(point: TestPoint, devices: Sequence[Mapping[str, OptionValue]],
               align: int = 1) -> tuple[Trace, ReplaySpec, list[Placement]]:
    """The trace of a replay point, placed on `devices` (each one's span is its fio `size`)."""
    from ssdlab.trace.mapping import load_trace, place

    spec = replay_spec(point)
    assert spec is not None
    trace = load_trace(spec)
    return trace, spec, place(trace, spec, spans(devices, point.workload.size, trace), align, "the target")


def spans(devices: Sequence[Mapping[str, OptionValue]], limit: int | None, trace: Trace) -> list[int]:
    """Each device's span: its fio `size`, within the point's active range (--footprint) when it has one; a
    device that states no size (the simulator's, rendered for the pre-flight check) takes the trace's extent."""
    out = []
    for d in devices:
        size = int(d.get("size") or 0) or int(limit or 0) or max(trace.max_end, 1)
        out.append(min(size, int(limit)) if limit else size)
    return out


def streams_of(spec: ReplaySpec, ios: int) -> int:
    """Sections a device replays on: `depth` streams of queue depth 1 (at most one per I/O)."""
    return max(1, min(int(spec.depth), ios))


def replay_job(point: TestPoint, devices: Sequence[Mapping[str, OptionValue]], iolog_dir: str = "",
               select: tuple[int, int] | None = None) -> FioJob:
    """The job of a replay point on `devices` (the fio options of every device of the target): per device, its
    streams (sections reading `replay[-dN]-sK.iolog`, from `iolog_dir` when given, else the point's directory,
    fio's working directory), each redirected to the device's file. Several devices: one reporting group per
    device (`sK-dN`). `select` (start, stop) keeps the sections of those devices only (one host's of a host
    group: the trace is placed over all of them)."""
    trace, spec, placed = placements(point, devices)
    multi = len(devices) > 1 or select is not None
    lo, hi = select or (0, len(devices))
    sections = []
    for n, (dev, share) in enumerate(zip(devices, placed, strict=True)):
        if not lo <= n < hi:
            continue
        for k in range(streams_of(spec, int(share.rows.shape[0]))):
            log = iolog_name(n, k, len(devices))
            opts = _stream_options(point, spec, dev, trace.writes, str(Path(iolog_dir) / log) if iolog_dir else log)
            if multi:
                opts = {"new_group": 1, **opts} if k == 0 else opts
                _device_logs(point, opts, device_section_name(point.id, n))
            sections.append(FioSection(f"s{k}-d{n}" if multi else f"replay-s{k}", opts))
    return FioJob(jobs=tuple(sections), global_options=common_options())


def _stream_options(point: TestPoint, spec: ReplaySpec, dev: Mapping[str, OptionValue], writes: bool,
                    iolog: str) -> dict[str, OptionValue]:
    """One stream's section: the device's options, queue depth 1, its iolog redirected to the device, the
    timing, and the point's logs."""
    w = point.workload
    opts: dict[str, OptionValue] = {**dev, "rw": "randrw" if writes else "randread", "bs": w.bs, "iodepth": 1,
                                    "read_iolog": iolog}
    if "filename" in dev:
        opts["replay_redirect"] = dev["filename"]
    if not spec.timed:
        opts["replay_no_stall"] = 1
    elif spec.speed != 1.0:
        opts["replay_time_scale"] = round(float(spec.speed or 1.0) * 100)
    if w.log_interval_ms:
        opts.update(log_options(w.log_interval_ms))
    if w.hist_log_ms:
        opts.update(hist_options(w.hist_log_ms))
    return opts


def _device_logs(point: TestPoint, opts: dict[str, OptionValue], group: str) -> None:
    """On several devices, a stream's logs carry its device's name (fio/logs.read_series reads them by it)."""
    if point.workload.log_interval_ms:
        for key in ("write_iops_log", "write_bw_log", "write_lat_log"):
            opts[key] = f"{LOG_PREFIX}_{group}"
    if point.workload.hist_log_ms:
        opts["write_hist_log"] = f"{HIST_PREFIX}_{group}"


def write_iologs(point: TestPoint, devices: Sequence[Mapping[str, OptionValue]], where: Path,
                 align: int = 1) -> dict[str, Any]:
    """Write the iologs replay_job names into `where`; returns what each device replays (I/Os and bytes per
    direction) for the point's record."""
    trace, spec, placed = placements(point, devices, align)
    where.mkdir(parents=True, exist_ok=True)
    expected: list[dict[str, Any]] = []
    for n, share in enumerate(placed):
        rows = share.rows
        k_max = streams_of(spec, int(rows.shape[0]))
        t_us = trace.time_ns[rows] // 1000 + 1
        for k in range(k_max):
            sel = slice(k, None, k_max)
            text = iolog_bytes(t_us[sel], trace.op[rows][sel], share.offset[sel], trace.size[rows][sel])
            (where / iolog_name(n, k, len(devices))).write_bytes(text)
        expected.append({name: list(v) for name, v in share.counts(trace).items()})
    return {"devices": expected, "streams": streams_of(spec, len(trace))}


def _decimal(values: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Right-aligned ASCII digits of non-negative integers (n x width) and each one's digit count."""
    top = int(values.max()) if values.size else 0
    width = max(1, len(str(top)))
    out = np.empty((values.shape[0], width), dtype=np.uint8)
    v = values.copy()
    for k in range(width - 1, -1, -1):
        out[:, k] = 48 + (v % 10)
        v //= 10
    digits = np.ones(values.shape[0], dtype=np.int64)
    p = 10
    for _ in range(width - 1):
        digits += values >= p
        p *= 10
    return out, digits


def iolog_bytes(t_us: npt.NDArray[np.int64], op: npt.NDArray[np.uint8], offset: npt.NDArray[np.int64],
                size: npt.NDArray[np.int64]) -> bytes:
    """A version 3 iolog of these I/Os (`TIME replay ACTION OFFSET LENGTH` per line, times in µs), built as one
    byte matrix (a Python string per line would cost more than the replay's setup should)."""
    n = int(t_us.shape[0])
    last = int(t_us[-1]) if n else 1
    head = f"fio version 3 iolog\n1 {LOG_FILE} add\n1 {LOG_FILE} open\n".encode()
    tail = f"{last} {LOG_FILE} close\n".encode()
    if n == 0:
        return head + tail
    t_m, t_d = _decimal(t_us)
    o_m, o_d = _decimal(offset)
    s_m, s_d = _decimal(size)
    name = np.frombuffer(f" {LOG_FILE} ".encode(), dtype=np.uint8)
    act = np.frombuffer(b"".join(ACTIONS), dtype=np.uint8).reshape(3, 5)[op]
    act_keep = np.arange(5)[None, :] < np.asarray(ACTION_LEN)[op][:, None]
    space = np.full((n, 1), 32, dtype=np.uint8)
    newline = np.full((n, 1), 10, dtype=np.uint8)
    matrix = np.concatenate([t_m, np.broadcast_to(name, (n, name.shape[0])), act, space, o_m, space, s_m,
                             newline], axis=1)
    keep = np.concatenate([
        np.arange(t_m.shape[1])[None, :] >= (t_m.shape[1] - t_d)[:, None],
        np.ones((n, name.shape[0]), dtype=bool), act_keep, np.ones((n, 1), dtype=bool),
        np.arange(o_m.shape[1])[None, :] >= (o_m.shape[1] - o_d)[:, None], np.ones((n, 1), dtype=bool),
        np.arange(s_m.shape[1])[None, :] >= (s_m.shape[1] - s_d)[:, None], np.ones((n, 1), dtype=bool)], axis=1)
    body: bytes = matrix[keep].tobytes()
    return head + body + tail


# ---------------------------------------------------------------- host groups

def prepare_hosts(point: TestPoint, pairs: Sequence[tuple[Any, Sequence[tuple[str, Mapping[str, OptionValue]]]]],
                  point_dir: Path, target: Any, *, gate: Any, binary: str, local_version: str) -> dict[str, Any]:
    """A replay on a host group: the iologs of every device written into the point's directory (the agents read
    them by absolute path there, so the results directory must be on a filesystem the agent hosts share), and
    the files of the agents laid out to their size first, as a plain job lays them out (an iolog replay skips
    fio's layout, and reads beyond a file's end come back short). `pairs`: each host's endpoint and its
    devices' (kind, fio options)."""
    from ssdlab.fio.client import run_clients

    every = [opts for _, devs in pairs for _, opts in devs]
    written = write_iologs(point, every, point_dir, alignment(target))
    layouts = []
    for endpoint, devs in pairs:
        files = [opts for kind, opts in devs if kind == "file"]
        if files:
            sections = tuple(FioSection(f"layout-{i}", {**opts, "rw": "read", "bs": 4096, "number_ios": 1,
                                                        "iodepth": 1})
                             for i, opts in enumerate(files))
            layouts.append((endpoint, FioJob(jobs=sections, global_options={"thread": 1})))
    if layouts:
        res = run_clients(layouts, point_dir / "layout", gate=gate, binary=binary, local_version=local_version)
        if not res.text:
            from ssdlab.errors import FioFailedError

            raise FioFailedError(f"laying out the agents' files for the replay failed (exit status {res.returncode})",
                                 cmd=list(res.argv), returncode=res.returncode, stderr=res.stderr)
    return written


# ---------------------------------------------------------------- recording a workload (trace fit --check)

class _RecordGate:
    """The gate of a recording job: fio's null engine only (no file, no device), its iolog a bare name in the
    job's own directory."""

    def check_job(self, job: FioJob, where: Path | None = None) -> None:
        for s in job.jobs:
            opts = {**job.global_options, **s.options}
            log = str(opts.get("write_iolog", ""))
            if opts.get("ioengine") != "null" or "filename" in opts or "/" in log or log.startswith("."):
                raise UnsafeTargetError(f"refusing to start fio: job [{s.name}] is not a null-engine recording")

    @contextlib.contextmanager
    def holding(self, job: FioJob, where: Path | None = None) -> Iterator[None]:
        """`check_job`; a null-engine recording opens no device, so nothing is held while fio runs."""
        self.check_job(job, where)
        yield


RECORD_LOG = "generated.iolog"


def record_workload(point: TestPoint, span: int, ios: int, where: Path) -> Path:
    """Run `point`'s workload on fio's null engine over a span of `span` bytes for `ios` I/Os, as fast as
    possible (no rate, no runtime), with fio writing every I/O to an iolog; returns the log's path. Nothing but
    files in `where` is written."""
    import dataclasses

    from ssdlab.fio.job import build_job
    from ssdlab.fio.runner import run_job

    w = dataclasses.replace(point.workload, runtime_s=None, ramp_s=0.0, rate_iops=None, log_interval_ms=None,
                            hist_log_ms=None,
                            options={k: v for k, v in point.workload.options.items()
                                     if not k.startswith("rate") and not k.startswith("thinktime")})
    job = build_job(dataclasses.replace(point, workload=w), {"ioengine": "null", "size": span})
    section = job.jobs[0]
    opts = {k: v for k, v in section.options.items() if k not in ("time_based", "runtime", "io_size")}
    # queue depth 1: the null engine answers "busy" at a deeper queue and fio logs a requeued I/O again (the
    # offsets fio draws do not depend on the depth)
    opts.update({"number_ios": ios, "write_iolog": RECORD_LOG, "io_size": span * 1024, "iodepth": 1})
    job = FioJob(jobs=(FioSection(section.name, opts),), global_options=job.global_options)
    (where / RECORD_LOG).unlink(missing_ok=True)  # fio appends to an existing log
    run_job(job, where, gate=_RecordGate(), status_interval=None)
    from ssdlab.results import atomic

    atomic.wait_flushed()  # run_job's files are flushed in the background: done before `where` may go away
    return where / RECORD_LOG


def with_replay(m: Measurement, point: TestPoint, written: Mapping[str, Any]) -> Measurement:
    """`m` with the replay's record (trace/mapping.replay_record: expected against replayed I/Os, offered and
    achieved rates, slowdown) and the offered rate per interval next to fio's achieved one."""
    import dataclasses

    from ssdlab.trace.mapping import load_trace, offered_per_interval, replay_record

    spec = replay_spec(point)
    assert spec is not None
    trace = load_trace(spec)
    replayed = {d: (s.total_ios, s.io_bytes) for d, s in m.directions.items()}
    runtime_ms = max((s.runtime_ms for s in m.directions.values()), default=0)
    rec = replay_record(spec, trace, list(written["devices"]), replayed, runtime_ms / 1000.0)
    rec["streams"] = written.get("streams")
    series = dict(m.series)
    interval = point.workload.log_interval_ms
    if interval and series.get("time_s"):
        offered = offered_per_interval(trace, 1 if spec.split else len(written["devices"]), spec.speed, interval)
        if offered:
            series["offered_iops"] = [offered[i] if i < len(offered) else 0.0 for i in range(len(series["time_s"]))]
    return dataclasses.replace(m, series=series, extra=m.extra.replace(replay=rec))
