"""PTS 2.0 XSR (cross stimulus recovery, PTS-E): how a drive recovers when the workload switches between
large sequential and small random writes.

Procedure (the reference notes' XSR section; the spec's segment lengths are unverified, see docs/pts.md):
purge, no preconditioning, then three access groups run back to back at T1Q32 in one-minute samples:
A: SEQ 1024 KiB writes, B: RND 8 KiB writes, C: SEQ 1024 KiB writes. `--xsr-segments A,B,C` sets the
samples per group (default 480,360,480: 8 h, 6 h, 8 h, as ADATA's implementation; DmNosachev's 2.0.2
scripts run 360,380,360).

Recovery (computed from stored samples, pure functions below): a segment's settled level is the mean of its
last RECOVERY_WINDOW samples; it has recovered from the transition at the first sample that is within
±RECOVERY_BAND of the settled level and from which on the RECOVERY_WINDOW-sample moving average stays within
that band to the end of the segment; the recovery time is the stimulus time from the transition to the start
of that sample.

Point ids: xsr-0-purge, xsr-a<NNNN>, xsr-b<NNNN>, xsr-c<NNNN>.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ssdlab.errors import UsageError
from ssdlab.results.events import VerdictEvent, XsrEvent
from ssdlab.results.model import PointResult, Run, TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.suites.base import SuiteOption
from ssdlab.suites.pts.common import KiB, PtsSettings, _parse_tq, bs_label, metric_value, purge_point
from ssdlab.suites.pts.family import PtsTest, register_suite, register_test
from ssdlab.units import format_duration

TEST = "xsr"
RECOVERY_WINDOW = 5  # samples in the moving average and in the settled level
RECOVERY_BAND = 0.10  # ±10 % of the settled level
SPEC_SEGMENTS = (480, 360, 480)  # ADATA: 8 h SEQ, 6 h RND, 8 h SEQ (DmNosachev 2.0.2: 360, 380, 360)


@dataclass(frozen=True)
class Segment:
    key: str  # a, b, c
    name: str  # A, B, C
    access: str  # SEQ | RND
    bs: int

    @property
    def label(self) -> str:
        return f"{self.name}: {self.access} {bs_label(self.bs)} W"


SEGMENTS = (Segment("a", "A", "SEQ", 1024 * KiB), Segment("b", "B", "RND", 8 * KiB),
            Segment("c", "C", "SEQ", 1024 * KiB))


@dataclass(frozen=True)
class XsrSettings:
    samples: tuple[int, int, int]  # per segment A, B, C
    threads: int
    qd: int

    def count(self, seg: Segment) -> int:
        return self.samples[SEGMENTS.index(seg)]


@functools.lru_cache(maxsize=64)
def xsr_settings(s: PtsSettings) -> XsrSettings:
    """XSR's own options, validated (UsageError, one line)."""
    text = str(s.option("xsr_segments", ",".join(map(str, SPEC_SEGMENTS))))
    try:
        counts = tuple(int(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise UsageError(f"--xsr-segments {text!r}: use three sample counts A,B,C, e.g. 480,360,480") from None
    if len(counts) != 3 or any(not 1 <= c <= 100000 for c in counts):
        raise UsageError(f"--xsr-segments {text!r}: use three sample counts A,B,C of at least 1, e.g. 480,360,480")
    threads, qd = _parse_tq(str(s.option("xsr_tq", "1x32")))
    return XsrSettings(samples=(counts[0], counts[1], counts[2]), threads=threads, qd=qd)


def sample_point(s: PtsSettings, seg: Segment, n: int) -> TestPoint:
    """Sample n (from 1) of a segment: one point time of its writes over the active range."""
    x = xsr_settings(s)
    rw = "write" if seg.access == "SEQ" else "randwrite"
    return TestPoint(
        id=f"{TEST}-{seg.key}{n:04d}", label=f"XSR {seg.name} {seg.access} {bs_label(seg.bs)} W sample {n}",
        workload=Workload(rw=rw, bs=seg.bs, iodepth=x.qd, numjobs=x.threads, runtime_s=s.runtime_s,
                          size=s.active_range_bytes, options=s.pattern_options()),
        phase="measure", group=TEST, tags=PointTags.of(test=TEST, segment=seg.key, sample=n, access=seg.access,
                                                       bs=seg.bs), continuous=f"{TEST}-{seg.key}")


@functools.lru_cache(maxsize=64)
def _plan(s: PtsSettings) -> tuple[TestPoint, ...]:
    """Built once per settings (points are immutable): the run loop asks what remains after every sample."""
    x = xsr_settings(s)
    return (purge_point(TEST, s), *(sample_point(s, seg, n) for seg in SEGMENTS for n in range(1, x.count(seg) + 1)))


def xsr_plan(s: PtsSettings) -> list[TestPoint]:
    return list(_plan(s))


def xsr_remaining(s: PtsSettings, run: Run) -> list[TestPoint]:
    done = run.done_ids()
    return [p for p in xsr_plan(s) if p.id not in done]


@dataclass(frozen=True)
class XsrState:
    samples: dict[str, list[PointResult]]  # segment key -> finished samples in order
    finished: bool


def analyse(s: PtsSettings, run: Run) -> XsrState:
    x = xsr_settings(s)
    res = run.finished_by_id()
    samples: dict[str, list[PointResult]] = {}
    for seg in SEGMENTS:
        got = []
        for n in range(1, x.count(seg) + 1):
            pr = res.get(f"{TEST}-{seg.key}{n:04d}")
            if pr is None:
                break
            got.append(pr)
        samples[seg.key] = got
    finished = f"{TEST}-0-purge" in res and all(len(samples[seg.key]) == x.count(seg) for seg in SEGMENTS)
    return XsrState(samples, finished)


# ------------------------------------------------------------------ recovery (pure; the report and tests use it)

@dataclass(frozen=True)
class Recovery:
    """How one segment recovered from the transition into it (all ratios against its settled level)."""

    settled: float | None  # mean of the segment's last RECOVERY_WINDOW samples
    recovered_at: int | None  # 1-based sample from which the moving average stays within the band
    recovery_s: float | None  # stimulus time from the transition to the start of that sample
    first_ratio: float | None  # first sample / settled
    extreme_ratio: float | None  # the sample before recovery farthest from the settled level / settled


def recovery(values: Sequence[float | None], sample_s: float, window: int = RECOVERY_WINDOW,
             band: float = RECOVERY_BAND) -> Recovery:
    """Recovery of one segment's time series. A sample without a value (an invalid point) keeps its place in
    time: moving averages use the known values of their window, and a window with none is not recovered."""
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return Recovery(None, None, None, None, None)
    w = min(window, len(values))
    settled = sum(known[-min(w, len(known)):]) / min(w, len(known))
    if settled <= 0:
        return Recovery(None, None, None, None, None)

    def in_band(i: int) -> bool:
        got = [v for v in values[i:i + w] if v is not None]
        return bool(got) and abs(sum(got) / len(got) - settled) <= band * settled

    start = len(values) - w  # the last window holds the settled level's samples
    while start > 0 and in_band(start - 1):
        start -= 1
    if not in_band(start):  # its invalid samples leave the last window nothing to go on
        return Recovery(settled, None, None, known[0] / settled, None)
    # ... and the recovered sample is itself at the level (a window's mean can reach it a sample early)
    def at_level(v: float | None) -> bool:
        return v is not None and abs(v - settled) <= band * settled

    while start < len(values) - 1 and not at_level(values[start]):
        start += 1
    before = [v for v in values[:start] if v is not None]
    extreme = max(before, key=lambda v: abs(v - settled)) if before else known[0]
    return Recovery(settled=settled, recovered_at=start + 1, recovery_s=start * sample_s,
                    first_ratio=known[0] / settled, extreme_ratio=extreme / settled)


def segment_values(state: XsrState, seg: Segment, metric: str) -> list[float | None]:
    return [metric_value(metric, p) for p in state.samples.get(seg.key, [])]


def recoveries(s: PtsSettings, state: XsrState, metric: str = "mbps") -> dict[str, Recovery]:
    """Recovery of segments B and C (the transitions A->B and B->C), by segment key."""
    return {seg.key: recovery(segment_values(state, seg, metric), s.runtime_s) for seg in SEGMENTS[1:]}


def xsr_conclude(s: PtsSettings, run: Run) -> Run:
    state = analyse(s, run)
    rec = recoveries(s, state)
    a = recovery(segment_values(state, SEGMENTS[0], "mbps"), s.runtime_s).settled
    c = rec["c"].settled
    run = run.with_event(xsr_verdict(s, state, rec))
    return run.with_event(XsrEvent.of(
        kind="pts-xsr", finished=state.finished, samples={k: len(v) for k, v in state.samples.items()},
        recovery={f"{SEGMENTS[i].name}->{seg.name}": {
            "settled_mbps": r.settled, "recovered_at_sample": r.recovered_at, "recovery_s": r.recovery_s,
            "first_ratio": r.first_ratio, "extreme_ratio": r.extreme_ratio}
            for i, seg in enumerate(SEGMENTS[1:]) for r in (rec[seg.key],)},
        c_vs_a=c / a if a and c else None,
    ))


def span(seconds: float) -> str:
    """A recovery time: to the tenth of a second below a minute (scaled runs), else as format_duration."""
    return f"{seconds:.3g} s" if seconds < 60 else format_duration(seconds)


def xsr_verdict(s: PtsSettings, state: XsrState, rec: dict[str, Recovery]) -> VerdictEvent:
    """XSR's verdict (verdict.py): a time series with no pass criterion, complete once every segment ran."""
    from ssdlab.results import verdict

    if not state.finished:
        return verdict.verdict_event(TEST, "XSR", "incomplete", "not finished: "
                                     + ", ".join(f"{seg.name} {len(state.samples[seg.key])}" for seg in SEGMENTS)
                                     + " samples")
    parts = [f"{prev.name}->{seg.name} recovered in {span(r.recovery_s)}"
             for prev, seg in itertools.pairwise(SEGMENTS) for r in (rec[seg.key],)
             if r.recovery_s is not None]
    return verdict.verdict_event(TEST, "XSR", "complete", "; ".join(parts) or "no recovery measured")


def xsr_notes(s: PtsSettings) -> list[str]:
    x = xsr_settings(s)
    parts = [f"{seg.label} x {x.count(seg)} ({format_duration(x.count(seg) * s.runtime_s)})" for seg in SEGMENTS]
    return [f"XSR: purge (write cache {s.write_cache}), no preconditioning, then at T{x.threads}Q{x.qd} in samples of "
            f"{s.runtime_s:g} s: " + ", ".join(parts)
            + f"; {format_duration(sum(x.samples) * s.runtime_s)} in all"]


def validate(s: PtsSettings) -> None:
    xsr_settings(s)


XSR_OPTIONS = (
    SuiteOption("xsr-segments", "str", ",".join(map(str, SPEC_SEGMENTS)),
                "XSR: samples (one point time each) in segments A (SEQ 1024 KiB), B (RND 8 KiB), C (SEQ 1024 KiB); "
                "default 480,360,480 (ADATA), DmNosachev: 360,380,360"),
    SuiteOption("xsr-tq", "str", "1x32", "XSR: threads x queue depth (default 1x32, as both open tools)"),
)

register_test(PtsTest(key=TEST, title="XSR", plan=xsr_plan, remaining=xsr_remaining, conclude=xsr_conclude,
                      notes=xsr_notes, options=XSR_OPTIONS, validate=validate, in_default=False))
register_suite("pts-xsr", "SNIA PTS 2.0 XSR (PTS-E): SEQ 1024 KiB -> RND 8 KiB -> SEQ 1024 KiB writes at T1Q32, "
               "transitions marked and recovery times measured", (TEST,))
