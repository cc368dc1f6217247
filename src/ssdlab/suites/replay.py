"""`ssdlab run replay --trace FILE --target T`: replay a block trace on any target, one point.

Modes: the trace's own timing (default), time-scaled (`--speed 2x`) or as fast as possible (`--speed max`), with at
most `--depth` I/Os in flight. Offsets must fit the target's span unless `--map wrap|scale`; on several devices each
replays the whole trace, or `--split` stripes it across them. The plan reads the trace (trace/mapping.py keeps
it once per process) and records its content hash, its I/Os and bytes per direction with the point; the run's
verdict says whether every I/O was replayed. The point runs through fio's iolog replay (fio/replay.py) or the
simulator's native replay (sim/replay.py): this module only plans.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ssdlab.errors import UsageError
from ssdlab.results.model import Run, TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.suites.base import PlanContext, Suite, SuiteOption, register
from ssdlab.trace.model import duration_text
from ssdlab.units import format_bytes

if TYPE_CHECKING:
    from ssdlab.targets.base import Target
    from ssdlab.trace.mapping import ReplaySpec
    from ssdlab.trace.model import Trace

LOG_MS = 1000  # per-second IOPS, bandwidth, latency and histogram logs
TRIMS_ON_FIO = ("fio 3.33 cannot replay trims from an iolog (it drops them; fio 3.34 can): pass --no-trims to "
                "replay the reads and writes only, or replay on the simulator (sim:PRESET)")


def spec_of(ctx: PlanContext) -> ReplaySpec:
    """The replay the options ask for, with the trace's content hash (one line for a missing --trace)."""
    from ssdlab.trace.mapping import MAPS, ReplaySpec, file_hash, parse_speed

    o = ctx.options
    path = o.get("trace")
    if not path:
        raise UsageError("replay needs --trace FILE (a block trace: fio iolog, blkparse, blktrace, MSR, Alibaba or "
                         "Tencent CSV; see docs/replay.md)")
    depth = int(o.get("depth") or 16)
    if not 1 <= depth <= 1024:
        raise UsageError(f"--depth {depth}: use 1 to 1024")
    mode = str(o.get("map") or "refuse")
    if mode not in MAPS:
        raise UsageError(f"--map {mode}: use one of {', '.join(MAPS)}")
    stripe = int(o.get("stripe") or 1024 * 1024)
    if stripe < 4096 or stripe % 4096:
        raise UsageError(f"--stripe {stripe}: use a multiple of 4 KiB")
    fmt = o.get("format") or None
    return ReplaySpec(trace=str(Path(path).expanduser().resolve()), format=None if fmt == "auto" else fmt,
                      volume=o.get("volume") or None, event=str(o.get("event") or "Q"),
                      speed=parse_speed(o.get("speed")), depth=depth, map=mode, split=bool(o.get("split")),
                      stripe=stripe, sha256=file_hash(str(path)), no_trims=bool(o.get("no_trims")))


def trace_summary(trace: Trace, spec: ReplaySpec) -> dict[str, Any]:
    """What the point's tags record about the trace: its name, I/Os and bytes per direction, duration."""
    return {"name": Path(spec.trace).name, "format": trace.format, "ios": len(trace),
            "duration_s": trace.duration_ns / 1e9, "counts": {k: list(v) for k, v in trace.counts().items()},
            "notes": list(trace.notes)}


class ReplaySuite(Suite):
    name = "replay"
    summary = "replay a block trace (--trace FILE) at its own timing, --speed 2x or --speed max (docs/replay.md)"
    writes = True  # when the trace writes (the write gate decides from the job, as for every suite)
    default_runtime_s = 0.0
    point_overhead_s = 1.0

    def suite_options(self) -> list[SuiteOption]:
        from ssdlab.trace.formats import FORMATS
        from ssdlab.trace.mapping import MAPS

        return [
            SuiteOption("trace", "path", None, "the trace to replay (fio iolog, blkparse text, blktrace binary, "
                                               "MSR, Alibaba or Tencent CSV; docs/replay.md)"),
            SuiteOption("format", "str", "auto", "the trace's format (default: from its content)",
                        choices=("auto", *FORMATS)),
            SuiteOption("volume", "str", None, "replay this volume/device of a multi-volume trace"),
            SuiteOption("event", "str", "Q", "blktrace/blkparse: replay queued (Q) or issued (D) I/Os",
                        choices=("Q", "D")),
            SuiteOption("speed", "str", "1", "1: the trace's timing; 2x, 0.5x: scaled; max: as fast as possible"),
            SuiteOption("depth", "int", 16, "at most this many I/Os in flight: streams of queue depth 1, I/O i "
                                            "on stream i mod N (default 16)"),
            SuiteOption("map", "str", "refuse", "offsets beyond the target's span: refuse (default), wrap, scale",
                        choices=MAPS),
            SuiteOption("split", "flag", False, "several --target devices: stripe the trace across them (default: "
                                                "each device replays all of it)"),
            SuiteOption("stripe", "size", 1024 * 1024, "--split's stripe size (default 1MiB)"),
            SuiteOption("no-trims", "flag", False, "leave the trace's trims out (fio 3.33 cannot replay them)"),
        ]

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        from ssdlab.trace.mapping import check_single_volume, load_trace

        spec = spec_of(ctx)
        trace = load_trace(spec)
        check_single_volume(trace)
        if not len(trace):
            raise UsageError(f"{spec.trace}: the trace holds no I/O to replay")
        values, counts = np.unique(trace.size, return_counts=True)
        bs = int(values[int(np.argmax(counts))])
        total = int(trace.size.sum())
        timed = spec.speed is not None
        runtime = max(0.01, trace.duration_ns / 1e9 / float(spec.speed)) if timed and spec.speed else None
        rw = "randrw" if trace.writes else "randread"
        workload = Workload(rw=rw, bs=bs, iodepth=1, numjobs=min(spec.depth, len(trace)),
                            runtime_s=runtime, io_bytes=None if timed else total,
                            log_interval_ms=LOG_MS, hist_log_ms=LOG_MS)
        label = f"replay {Path(spec.trace).name} ({spec.mode_text()})"
        return [TestPoint(id="replay", label=label, workload=workload, group="replay",
                          tags=PointTags.of(replay=spec.to_tags(), trace=trace_summary(trace, spec)))]

    def validate(self, ctx: PlanContext, target: Target) -> None:
        """The trace fits the target as asked (span, alignment, one volume; trims only on the simulator), in one
        line before anything exists."""
        from ssdlab.fio.replay import alignment
        from ssdlab.trace.mapping import load_trace, place

        spec = spec_of(ctx)
        trace = load_trace(spec)
        if trace.has_trims and not ctx.traits.simulated:
            raise UsageError(TRIMS_ON_FIO)
        devices = max(1, ctx.devices)
        place(trace, spec, [ctx.capacity] * devices, alignment(target), target.name)

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        from ssdlab.trace.mapping import load_trace

        spec = spec_of(ctx)
        trace = load_trace(spec)
        counts = trace.counts()
        text = ", ".join(f"{n} {d}s ({format_bytes(b)})" for d, (n, b) in counts.items() if n)
        notes = [f"trace: {spec.trace} ({trace.format}): {len(trace):,} I/Os over "
                 f"{duration_text(trace.duration_ns / 1e9)}: {text}",
                 f"replay: {spec.mode_text()}; offsets: {spec.map}"
                 + (f"; striped over {ctx.devices} devices by {format_bytes(spec.stripe)}"
                    if spec.split and ctx.devices > 1 else "")]
        notes += [f"note: {n}" for n in trace.notes]
        if ctx.runtime_s is not None:
            notes.append("note: --runtime does not apply: a replay lasts as long as its trace (--speed scales it)")
        return notes

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        """The verdict: complete when the replay did every I/O of the trace (per direction, count and bytes),
        incomplete otherwise (exit 1)."""
        from ssdlab.results.verdict import verdict_event

        for r in run.points:
            if r.point.id != "replay" or r.status != "ok" or r.measurement is None:
                continue
            rep = r.measurement.extra.replay or {}
            missing = rep.get("missing") or []
            if missing:
                return run.with_event(verdict_event("replay", "Trace replay", "incomplete",
                                                    "not every I/O of the trace was replayed: " + "; ".join(missing)))
            return run.with_event(verdict_event("replay", "Trace replay", "complete",
                                                f"every I/O of the trace replayed ({int(rep.get('ios', 0)):,} I/Os)"))
        return run


register(ReplaySuite())
