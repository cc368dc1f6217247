"""PTS 2.0 WSAT (write saturation): purge, no preconditioning, continuous RND 4 KiB writes in 1-minute
samples from fresh-out-of-box until 4x the user capacity is written or 24 h have passed; then, as the 2.0-era
scripts run it, a response-time histogram capture: --wsat-hist-minutes (20) spec minutes more of the same
stimulus, its fio histogram bins giving the histogram, CDF and confidence levels (one spec minute lasts
--runtime seconds, as every WSAT sample, so a scaled run shortens the capture alike)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from ssdlab import metrics
from ssdlab.errors import UsageError
from ssdlab.results.events import WsatEvent
from ssdlab.results.model import PointResult, Run, TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.suites.base import Outlook, SuiteOption
from ssdlab.suites.pts.common import KiB, PtsSettings, purge_point
from ssdlab.suites.pts.family import PtsTest, register_suite, register_test
from ssdlab.units import format_bytes, format_duration

WSAT_BS = 4 * KiB
TEST = "wsat"
HIST_ID = f"{TEST}-hist"
HIST_SPEC_MINUTES = 20.0


def max_samples(s: PtsSettings) -> int:
    """The time cap in samples: one sample stands for one minute of the spec (scaled with --runtime)."""
    return max(1, math.ceil(s.wsat_hours * 60))


@functools.lru_cache(maxsize=8192)
def sample_point(s: PtsSettings, n: int) -> TestPoint:
    """Sample n (from 1): RND 4 KiB 100 % writes over the active range for one point time."""
    return TestPoint(
        id=f"{TEST}-s{n:04d}", label=f"WSAT sample {n}",
        workload=Workload(rw="randwrite", bs=WSAT_BS, iodepth=s.qd, numjobs=s.threads, runtime_s=s.runtime_s,
                          size=s.active_range_bytes, options=s.pattern_options()),
        phase="measure", group=TEST, tags=PointTags.of(test=TEST, sample=n), continuous=TEST,
    )


def hist_minutes(s: PtsSettings) -> float:
    """Spec minutes of the histogram capture after the samples (0: none)."""
    v = float(s.option("wsat_hist_minutes", HIST_SPEC_MINUTES))
    if not (v >= 0 and math.isfinite(v)):
        raise UsageError(f"--wsat-hist-minutes {v:g}: give a number of minutes (0: no histogram capture)")
    return v


@functools.lru_cache(maxsize=64)
def capture_point(s: PtsSettings) -> TestPoint | None:
    """The response-time histogram capture after the samples: RND 4 KiB writes at WSAT's T x Q for the capture's
    spec minutes, one interval log entry per spec minute (None with --wsat-hist-minutes 0)."""
    n = hist_minutes(s)
    if n <= 0:
        return None
    return TestPoint(
        id=HIST_ID, label=f"WSAT histogram capture RND 4 KiB 0/100 {s.tq} ({n:g} min)",
        workload=Workload(rw="randwrite", bs=WSAT_BS, iodepth=s.qd, numjobs=s.threads, runtime_s=n * s.runtime_s,
                          size=s.active_range_bytes, options=s.pattern_options(),
                          log_interval_ms=max(1, round(s.runtime_s * 1000))),
        phase="measure", group=TEST, tags=PointTags.of(test=TEST, stage="hist", spec_minutes=n))


def _capture(s: PtsSettings) -> list[TestPoint]:
    p = capture_point(s)
    return [p] if p is not None else []


@dataclass(frozen=True)
class WsatState:
    samples: list[PointResult]  # finished samples in order
    written: list[int]  # cumulative bytes written after each sample
    finished: bool
    note: str


def written_bytes(pr: PointResult) -> int:
    m = pr.measurement
    if m is None:
        return 0
    d = m.get("write")
    return d.io_bytes if d is not None else 0


def analyse(s: PtsSettings, run: Run) -> WsatState:
    """Finished samples, cumulative bytes written, and whether a stop rule has fired."""
    res = run.finished_by_id()
    samples: list[PointResult] = []
    written: list[int] = []
    total = 0
    goal = s.wsat_fills * s.capacity
    n = 1
    while f"{TEST}-s{n:04d}" in res:
        pr = res[f"{TEST}-s{n:04d}"]
        samples.append(pr)
        total += written_bytes(pr)
        written.append(total)
        if total >= goal:
            return WsatState(samples, written, True, f"stopped after {n} samples: {format_bytes(total)} written "
                                                      f"= {total / s.capacity:.2f}x the capacity")
        if n >= max_samples(s):
            return WsatState(samples, written, True, f"stopped at the time limit ({n} samples) with "
                                                      f"{total / s.capacity:.2f}x the capacity written")
        n += 1
    return WsatState(samples, written, False, "not finished")


def wsat_plan(s: PtsSettings) -> list[TestPoint]:
    """Purge, then every sample up to the time cap (the worst case), then the histogram capture."""
    return [purge_point(TEST, s), *(sample_point(s, n) for n in range(1, max_samples(s) + 1)), *_capture(s)]


def wsat_remaining(s: PtsSettings, run: Run) -> list[TestPoint]:
    """What WSAT still has to run, given the stored samples and the stop rules: the samples left, then the
    capture (none after an invalid sample: the test is incomplete there)."""
    if purge_point(TEST, s).id not in run.done_ids():
        return wsat_plan(s)
    state = analyse(s, run)
    if state.finished:
        if any(p.status == "invalid" for p in state.samples):
            return []
        return [p for p in _capture(s) if p.id not in run.done_ids()]
    return [sample_point(s, k) for k in range(len(state.samples) + 1, max_samples(s) + 1)] + _capture(s)


def wsat_outlook(s: PtsSettings, run: Run, steady_write_iops: float | None = None) -> Outlook:
    """What WSAT has left. Worst case: samples up to the time cap. Expected: samples until the write goal,
    at the bytes per sample the last sample wrote, or at `steady_write_iops` (RND 4 KiB writes at steady
    state, when an earlier test measured them) when that is lower: WSAT falls from FOB to that level."""
    capture = tuple((p, 1) for p in _capture(s))
    if purge_point(TEST, s).id not in run.done_ids():
        first, done_n, written = [(purge_point(TEST, s), 1)], 0, 0
    else:
        state = analyse(s, run)
        if state.finished:
            return Outlook.of(wsat_remaining(s, run))
        first, done_n = [], len(state.samples)
        written = state.written[-1] if state.written else 0
    left = max_samples(s) - done_n
    rates = [float(steady_write_iops) * s.runtime_s * WSAT_BS] if steady_write_iops else []
    if done_n:
        rates.append(float(written - (state.written[-2] if done_n > 1 else 0)))
    per_sample = min(rates) if rates else 0.0
    goal = s.wsat_fills * s.capacity - written
    want = min(left, max(1, math.ceil(goal / per_sample))) if per_sample > 0 else left

    def runs(n: int) -> tuple[tuple[TestPoint, int], ...]:
        out = [*first, (sample_point(s, done_n + 1), 1)]
        if n > 1:
            out.append((sample_point(s, done_n + 2), n - 1))
        return (*out, *capture)

    return Outlook(worst=runs(left), expected=runs(want))


def wsat_conclude(s: PtsSettings, run: Run) -> Run:
    """Record how WSAT ended (samples, bytes written, stop rule) and its verdict: WSAT has no pass criterion,
    so it is complete, or incomplete when a sample was invalid."""
    from ssdlab.results import verdict

    state = analyse(s, run)
    run = run.with_event(WsatEvent.of(
        kind="pts-wsat", samples=len(state.samples), written_bytes=state.written[-1] if state.written else 0,
        note=state.note,
    ))
    bad = [p for p in state.samples if p.status == "invalid"]
    hist = run.result(HIST_ID)
    if bad:
        event = verdict.verdict_event(TEST, "WSAT", "incomplete", f"{len(bad)} invalid sample(s), first "
                                      f"{bad[0].point.label}: {bad[0].reason.removeprefix('invalid: ')}")
    elif hist is not None and hist.status == "invalid":
        event = verdict.verdict_event(TEST, "WSAT", "incomplete", f"{state.note}; the histogram capture is "
                                      f"invalid: {hist.reason.removeprefix('invalid: ')}")
    else:
        event = verdict.verdict_event(TEST, "WSAT", "complete", state.note + _capture_text(s, hist))
    return run.with_event(event)


def _capture_text(s: PtsSettings, hist: PointResult | None) -> str:
    """'; histogram capture (20 spec minutes, 630,799 I/Os): 5 nines 5,200 µs' ('' without a measured one)."""
    m = hist.measurement if hist is not None and hist.status == "ok" else None
    nines = metrics.value("nines", hist) if m is not None else None
    if m is None or nines is None:
        return ""
    ios = sum(d.total_ios for d in m.directions.values())
    return (f"; histogram capture ({hist_minutes(s):g} spec minutes, {ios:,} I/Os): 5 nines "
            f"{nines:,.0f} µs")


def wsat_notes(s: PtsSettings) -> list[str]:
    """The plan lines describing WSAT's procedure and stop rules."""
    n = max_samples(s)
    notes = [f"WSAT: purge (write cache {s.write_cache}), no preconditioning, then up to {n} samples of "
             f"{s.runtime_s:g} s ({format_duration(n * s.runtime_s)}) of RND 4 KiB writes at {s.tq}, stopping "
             f"once {s.wsat_fills:g}x the capacity ({format_bytes(s.wsat_fills * s.capacity)}) is written"]
    minutes = hist_minutes(s)
    if minutes > 0:
        notes.append(f"WSAT histogram capture: then {minutes:g} spec minutes "
                     f"({format_duration(minutes * s.runtime_s)}) more of the same writes, for the response-time "
                     "histogram and confidence levels")
    return notes


def validate(s: PtsSettings) -> None:
    """Refuse a capture length that is not a number of minutes."""
    hist_minutes(s)


WSAT_OPTIONS = (
    SuiteOption("wsat-fills", "float", 4.0, "WSAT: stop after writing this many times the capacity (4)"),
    SuiteOption("wsat-hours", "float", 24.0, "WSAT: stop after this many hours of 1-minute samples (24)"),
    SuiteOption("wsat-hist-minutes", "float", HIST_SPEC_MINUTES, "WSAT: length of the response-time histogram "
                "capture after the samples, spec minutes (20; 0: none)"),
)



def _outlook(s: PtsSettings, run: Run, finished: list[int]) -> Outlook:
    """WSAT's outlook; RND 4 KiB writes at T x Q as the IOPS test of the same run measured them (the window
    average once it is done, else its latest round) say where WSAT ends up after its write cliff."""
    from ssdlab.suites.pts.common import analyse as analyse_rounds
    from ssdlab.suites.pts.common import per_round, stimulus, window_average
    from ssdlab.suites.pts.tests import IOPS

    writes = None
    key = stimulus("RND", WSAT_BS, 0).key
    if f"{IOPS.name}-0-purge" in run.done_ids():  # (before it, the IOPS test has no round to go on)
        iops = analyse_rounds(IOPS, s, run)
        writes = window_average(IOPS, iops, run, key, "iops") if iops.finished else \
            next((v for v in reversed(per_round(IOPS, run, key, "iops", iops.rounds_done)) if v is not None), None)
    return wsat_outlook(s, run, writes)


register_test(PtsTest(key=TEST, title="WSAT", plan=wsat_plan, remaining=wsat_remaining, conclude=wsat_conclude,
                      notes=wsat_notes, options=WSAT_OPTIONS, validate=validate, outlook=_outlook))
register_suite("pts-wsat", "SNIA PTS 2.0 WSAT: from FOB, RND 4 KiB writes in 1-minute samples to 4x capacity or 24 h",
               (TEST,))
