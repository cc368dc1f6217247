"""PTS 2.0 HIR (host idle recovery): does host idle time let the drive's background garbage collection
recover write performance?

Procedure (the reference notes' HIR section; spec durations unverified, see docs/pts.md):
1. purge, no WIPC;
2. precondition with RND 4 KiB writes at T x Q to steady state: rounds of 30 one-minute samples, the
   tracking variable is the round's mean IOPS, the SNIA rule over 5 rounds (`--hir-precondition steady`),
   or a fixed 36 one-minute samples without a check (`fixed`, as DmNosachev's 2.0.2 scripts do);
3. for each wait state W in 5, 10, 15, 25, 50 s: 360 bursts of 5 s RND 4 KiB writes, each followed by W
   seconds of host idle; then a return to baseline: 360 x 5 s of continuous writes (1800 s).

Every duration scales with `--runtime / 60` (a scaled run), the counts with `--hir-bursts` and
`--hir-pc-samples`. Point ids: hir-0-purge, hir-p<NNNN> (preconditioning samples), hir-w<WW>-b<NNN>
(bursts of wait state WW s), hir-w<WW>-c<NNN> (the baseline after it).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from ssdlab.analysis import steady
from ssdlab.analysis.steady import Determination
from ssdlab.errors import UsageError
from ssdlab.results.events import HirEvent, VerdictEvent
from ssdlab.results.model import FINISHED, PointResult, Run, TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.suites.base import Outlook, PointRuns, SuiteOption
from ssdlab.suites.pts.common import (
    SPEC_RUNTIME_S,
    KiB,
    PtsSettings,
    RunFollower,
    metric_value,
    purge_point,
    window_steady,
)
from ssdlab.suites.pts.family import PtsTest, register_suite, register_test
from ssdlab.units import format_duration

TEST = "hir"
BS = 4 * KiB
BURST_S = 5.0  # spec: 5 s write bursts
SPEC_WAITS = (5.0, 10.0, 15.0, 25.0, 50.0)
SPEC_BURSTS = 360
PC_ROUND_SAMPLES = 30  # steady mode: one round = 30 one-minute samples (cloudharmony, ADATA)
PC_FIXED_SAMPLES = 36  # fixed mode: 36 one-minute samples, no check (DmNosachev 2.0.2)
MODES = ("steady", "fixed")


@dataclass(frozen=True)
class HirSettings:
    mode: str  # steady | fixed
    pc_samples: int  # per round (steady) or in all (fixed)
    waits: tuple[float, ...]  # wait states in spec seconds
    bursts: int  # bursts per wait state; the baseline after it has as many 5-s samples
    scale: float  # --runtime / 60: every duration is multiplied by it

    @property
    def burst_s(self) -> float:
        return BURST_S * self.scale

    def wait_s(self, wait: float) -> float:
        return wait * self.scale


def _waits(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(p) for p in str(text).split(",") if p.strip())
    except ValueError:
        raise UsageError(f"--hir-waits {text!r}: use a comma list of seconds, e.g. 5,10,15,25,50") from None
    if not values or any(not 0 < v <= 3600 for v in values) or len(set(values)) != len(values):
        raise UsageError(f"--hir-waits {text!r}: give distinct waits between 0 and 3600 s")
    return values


@functools.lru_cache(maxsize=64)
def hir_settings(s: PtsSettings) -> HirSettings:
    """HIR's own options, validated (UsageError, one line)."""
    mode = str(s.option("hir_precondition", "steady")).lower()
    if mode not in MODES:
        raise UsageError(f"--hir-precondition {mode!r}: use steady or fixed")
    default_pc = PC_ROUND_SAMPLES if mode == "steady" else PC_FIXED_SAMPLES
    pc = int(s.option("hir_pc_samples", default_pc))
    bursts = int(s.option("hir_bursts", SPEC_BURSTS))
    if not 1 <= pc <= 10000 or not 1 <= bursts <= 100000:
        raise UsageError("--hir-pc-samples and --hir-bursts must be at least 1")
    waits = _waits(s.option("hir_waits", "5,10,15,25,50"))
    return HirSettings(mode=mode, pc_samples=pc, waits=waits, bursts=bursts, scale=s.runtime_s / SPEC_RUNTIME_S)


def wait_key(wait: float) -> str:
    """'w05', 'w50', 'w2.5' (wait state in spec seconds, as the point ids spell it)."""
    return f"w{int(wait):02d}" if wait == int(wait) else f"w{wait:g}"


def _write(s: PtsSettings, runtime_s: float) -> Workload:
    return Workload(rw="randwrite", bs=BS, iodepth=s.qd, numjobs=s.threads, runtime_s=runtime_s,
                    size=s.active_range_bytes, options=s.pattern_options())


def pc_point(s: PtsSettings, n: int) -> TestPoint:
    """Preconditioning sample n (from 1), one point time of RND 4 KiB writes."""
    h = hir_settings(s)
    r = (n - 1) // h.pc_samples + 1 if h.mode == "steady" else 1
    return TestPoint(id=f"{TEST}-p{n:04d}", label=f"HIR preconditioning sample {n}", workload=_write(s, s.runtime_s),
                     phase="precondition", group=TEST, tags=PointTags.of(test=TEST, segment="pc", sample=n, round=r),
                     continuous=f"{TEST}-pc")


def burst_point(s: PtsSettings, wait: float, k: int) -> TestPoint:
    """Burst k (from 1) of wait state `wait`: idle for the wait state, then a 5-s burst (the first burst
    follows the previous segment without idle: every burst is followed by its wait)."""
    h = hir_settings(s)
    return TestPoint(id=f"{TEST}-{wait_key(wait)}-b{k:03d}", label=f"HIR wait {wait:g} s burst {k}",
                     workload=_write(s, h.burst_s), phase="measure", group=TEST,
                     tags=PointTags.of(test=TEST, segment="burst", wait_s=wait, burst=k),
                     idle_before_s=h.wait_s(wait) if k > 1 else 0.0)


def base_point(s: PtsSettings, wait: float, k: int) -> TestPoint:
    """Sample k (from 1) of the return to baseline after wait state `wait` (continuous writes; the first
    sample follows the last burst's wait)."""
    h = hir_settings(s)
    return TestPoint(id=f"{TEST}-{wait_key(wait)}-c{k:03d}", label=f"HIR return to baseline after {wait:g} s, {k}",
                     workload=_write(s, h.burst_s), phase="measure", group=TEST,
                     tags=PointTags.of(test=TEST, segment="baseline", wait_s=wait, sample=k),
                     idle_before_s=h.wait_s(wait) if k == 1 else 0.0, continuous=f"{TEST}-{wait_key(wait)}-c")


def max_pc_samples(s: PtsSettings) -> int:
    h = hir_settings(s)
    return h.pc_samples * s.max_rounds if h.mode == "steady" else h.pc_samples


# Point lists are built once per settings (points are immutable): the run loop asks what remains, and the
# analysis what ran, after every point, and HIR has thousands of them.

@functools.lru_cache(maxsize=64)
def _pc_points(s: PtsSettings) -> tuple[TestPoint, ...]:
    return tuple(pc_point(s, n) for n in range(1, max_pc_samples(s) + 1))


@functools.lru_cache(maxsize=256)
def _segment(s: PtsSettings, wait: float, kind: str) -> tuple[TestPoint, ...]:
    """The bursts ("b") or the return to baseline ("c") of one wait state."""
    h = hir_settings(s)
    make = burst_point if kind == "b" else base_point
    return tuple(make(s, wait, k) for k in range(1, h.bursts + 1))


def wait_state_points(s: PtsSettings, wait: float) -> list[TestPoint]:
    return [*_segment(s, wait, "b"), *_segment(s, wait, "c")]


@functools.lru_cache(maxsize=64)
def _plan(s: PtsSettings) -> tuple[TestPoint, ...]:
    h = hir_settings(s)
    return (purge_point(TEST, s), *_pc_points(s), *(p for w in h.waits for p in wait_state_points(s, w)))


def hir_plan(s: PtsSettings) -> list[TestPoint]:
    """Worst case: purge, every preconditioning sample up to --max-rounds, every wait state."""
    return list(_plan(s))


# ------------------------------------------------------------------ analysis of stored points

@dataclass(frozen=True)
class HirState:
    pc: list[PointResult]  # finished preconditioning samples, in order
    pc_rounds: list[float | None]  # steady mode: mean IOPS of each complete round
    pc_done: bool
    pc_steady: bool
    pc_window: list[int]  # rounds of the measurement window (steady mode)
    pc_determination: Determination | None
    pc_note: str
    bursts: dict[float, list[PointResult]] = field(default_factory=dict)  # wait -> finished bursts
    baselines: dict[float, list[PointResult]] = field(default_factory=dict)
    finished: bool = False

    @property
    def steady_iops(self) -> float | None:
        """The preconditioning's steady-state level: the window's round average (steady mode), or the mean
        of its last 5 samples (fixed mode; of its second half when it has fewer than 10, so that a short
        scaled run does not average in the fresh-out-of-box samples)."""
        if self.pc_determination is not None:
            return float(self.pc_determination.average)
        n = max(1, min(steady.WINDOW, len(self.pc) // 2))
        tail = [v for v in (metric_value("iops", p) for p in self.pc[-n:]) if v is not None]
        return sum(tail) / len(tail) if tail else None


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known and len(known) == len(values) else None


@dataclass(frozen=True)
class _Preconditioning:
    """What the finished preconditioning samples say (HirState's first fields)."""

    pc: list[PointResult]
    rounds: list[float | None]
    done: bool
    steady: bool
    window: list[int]
    determination: Determination | None
    note: str


def _preconditioning(s: PtsSettings, pc: list[PointResult]) -> _Preconditioning:
    """The preconditioning's progress and steady state from its finished samples (in order, from the first)."""
    h = hir_settings(s)
    rounds: list[float | None] = []
    done, ok, window, det, note = False, False, [], None, "preconditioning not finished"
    if h.mode == "fixed":
        done = len(pc) >= h.pc_samples
        note = f"fixed preconditioning: {len(pc)} of {h.pc_samples} samples (no steady-state check)"
    else:
        for r in range(1, len(pc) // h.pc_samples + 1):
            chunk = pc[(r - 1) * h.pc_samples:r * h.pc_samples]
            rounds.append(_mean([metric_value("iops", p) for p in chunk]))
            if r < steady.WINDOW:
                continue
            d = window_steady(rounds, r)
            if d is None:
                continue
            det, window = d, list(d.rounds)
            if det.steady or (r >= s.max_rounds and not s.until_steady):
                done, ok = True, det.steady
                note = (f"steady state reached at round {r}" if ok else
                        f"SS NOT ACHIEVED within {r} rounds: rounds {r - 4}-{r} reported as the window")
                break
    return _Preconditioning(pc, rounds, done, ok, window, det, note)


# ------------------------------------------------------------------ a run's progress, followed as it grows
# (common.RunFollower: only the points appended since the last call are read)

@dataclass
class _Seq:
    """Which points of one of the plan's sequences are finished: every one of [0, hi) except `gaps`."""

    hi: int = 0
    gaps: set[int] = field(default_factory=set)

    def mark(self, i: int, finished: bool) -> None:
        """Point i's latest result is finished or not (as Run.finished_by_id keeps the latest)."""
        if finished:
            if i >= self.hi:
                self.gaps.update(range(self.hi, i))
                self.hi = i + 1
            else:
                self.gaps.discard(i)
        elif i < self.hi:
            self.gaps.add(i)

    def prefix(self) -> int:
        """How many points are finished one after the other from the first."""
        return min(self.gaps) if self.gaps else self.hi


@dataclass
class _Progress:
    points: tuple[PointResult, ...] = ()  # the run's points as last seen
    purged: bool = False
    pc: _Seq = field(default_factory=_Seq)
    waits: _Seq = field(default_factory=_Seq)  # the wait states' points, in plan order
    pc_changes: int = 0  # results of preconditioning samples seen: the memo below holds for one count
    pc_memo: tuple[int, _Preconditioning] | None = None


@functools.lru_cache(maxsize=64)
def _wait_points(s: PtsSettings) -> tuple[TestPoint, ...]:
    """Every wait state's points in plan order."""
    return tuple(p for w in hir_settings(s).waits for p in wait_state_points(s, w))


@functools.lru_cache(maxsize=64)
def _where(s: PtsSettings) -> dict[str, tuple[int, int]]:
    """Point id -> (0 purge, 1 preconditioning, 2 wait states; index in its sequence)."""
    out = {purge_point(TEST, s).id: (0, 0)}
    out.update((p.id, (1, i)) for i, p in enumerate(_pc_points(s)))
    out.update((p.id, (2, i)) for i, p in enumerate(_wait_points(s)))
    return out


def _take_in(s: PtsSettings, prog: _Progress, points: Sequence[PointResult]) -> None:
    """Points appended to the run: which of HIR's they finish (or not, as Run.finished_by_id keeps the latest)."""
    where = _where(s)
    for pr in points:
        at = where.get(pr.point.id)
        if at is None:
            continue
        kind, i = at
        finished = pr.status in FINISHED
        if kind == 0:
            prog.purged = finished
        elif kind == 1:
            prog.pc.mark(i, finished)
            prog.pc_changes += 1
        else:
            prog.waits.mark(i, finished)


_FOLLOWER = RunFollower(lambda s: _Progress(), _take_in)


def _progress(s: PtsSettings, run: Run) -> _Progress:
    """Which of HIR's points the run has finished (the memo of this settings' run, brought up to date)."""
    return _FOLLOWER.follow(s, run)


def _preconditioning_of(s: PtsSettings, run: Run, prog: _Progress) -> _Preconditioning:
    """The preconditioning of the run's finished samples (worked out again only when a sample's result came)."""
    if prog.pc_memo is None or prog.pc_memo[0] != prog.pc_changes:
        res = run.finished_by_id()
        pc = [res[p.id] for p in _pc_points(s)[:prog.pc.prefix()]]
        prog.pc_memo = (prog.pc_changes, _preconditioning(s, pc))
    return prog.pc_memo[1]


def analyse(s: PtsSettings, run: Run) -> HirState:
    """What the stored points say: preconditioning progress and its steady state, bursts and baselines."""
    h = hir_settings(s)
    res = run.finished_by_id()
    pre = _preconditioning_of(s, run, _progress(s, run))
    bursts = {w: [res[p.id] for p in _segment(s, w, "b") if p.id in res] for w in h.waits}
    bases = {w: [res[p.id] for p in _segment(s, w, "c") if p.id in res] for w in h.waits}
    finished = pre.done and all(len(bursts[w]) == h.bursts and len(bases[w]) == h.bursts for w in h.waits)
    return HirState(pre.pc, pre.rounds, pre.done, pre.steady, pre.window, pre.determination, pre.note, bursts,
                    bases, finished)


def hir_remaining(s: PtsSettings, run: Run) -> list[TestPoint]:
    prog = _progress(s, run)
    if not prog.purged:
        return hir_plan(s)
    pre = _preconditioning_of(s, run, prog)
    out = [] if pre.done else list(_pc_points(s)[len(pre.pc):])
    waits = _wait_points(s)
    out += [waits[i] for i in sorted(prog.waits.gaps)]
    out += waits[prog.waits.hi:]
    return out


def _shape_key(p: TestPoint) -> tuple[object, ...]:
    """What an ETA tells points apart by (run/eta.shape reads no more than this)."""
    return p.phase, p.workload, len(p.streams), p.idle_before_s


def _sequence(s: PtsSettings, which: str) -> tuple[TestPoint, ...]:
    return _pc_points(s) if which == "pc" else _wait_points(s)


@functools.lru_cache(maxsize=128)
def _groups(s: PtsSettings, which: str) -> tuple[int, ...]:
    """Where each run of points of one shape starts in the preconditioning ("pc") or the wait states ("waits"),
    and, last, the end."""
    points = _sequence(s, which)
    starts = [i for i, p in enumerate(points) if i == 0 or _shape_key(p) != _shape_key(points[i - 1])]
    return (*starts, len(points))


@functools.lru_cache(maxsize=4096)
def _runs_after(s: PtsSettings, which: str, group: int) -> PointRuns:
    """The runs of the groups from `group` on, each as its first point and its length."""
    points, g = _sequence(s, which), _groups(s, which)
    return tuple((points[a], b - a) for a, b in zip(g[group:-1], g[group + 1:], strict=True))


def _runs_from(s: PtsSettings, which: str, k: int) -> PointRuns:
    """The sequence from point k as runs of one shape: point k alone first (the next to run), then the rest of
    its group, then the groups after it."""
    points, g = _sequence(s, which), _groups(s, which)
    if k >= len(points):
        return ()
    j = bisect.bisect_right(g, k) - 1  # the group holding k
    head: PointRuns = ((points[k], 1),)
    if g[j + 1] - k > 1:
        head += ((points[k + 1], g[j + 1] - k - 1),)
    return head + _runs_after(s, which, j + 1)


def hir_outlook(s: PtsSettings, run: Run, finished: list[int]) -> Outlook:
    """What `hir_remaining` lists, as runs of points of one shape: its cost does not grow with the run."""
    prog = _progress(s, run)
    if not prog.purged:
        return Outlook(worst=((purge_point(TEST, s), 1), *_runs_from(s, "pc", 0), *_runs_from(s, "waits", 0)))
    pre = _preconditioning_of(s, run, prog)
    runs: list[tuple[TestPoint, int]] = [] if pre.done else list(_runs_from(s, "pc", len(pre.pc)))
    waits = _wait_points(s)
    runs += [(waits[i], 1) for i in sorted(prog.waits.gaps)]
    runs += _runs_from(s, "waits", prog.waits.hi)
    return Outlook(worst=tuple(runs))


# ------------------------------------------------------------------ metrics (the report and the tests use them)

@dataclass(frozen=True)
class WaitStateSummary:
    wait_s: float  # spec seconds
    bursts: int
    mean_iops: float | None  # mean IOPS of the bursts
    min_iops: float | None
    max_iops: float | None
    vs_steady: float | None  # mean burst IOPS / the preconditioning's steady-state IOPS
    idle_s: float | None  # mean host idle measured before the bursts (None: not recorded)
    baseline_iops: float | None  # mean IOPS of the return-to-baseline samples after it


def wait_state_summaries(state: HirState) -> list[WaitStateSummary]:
    """Per wait state: burst IOPS (mean, min, max), ratio to the steady-state level, idle, baseline."""
    ss = state.steady_iops
    out = []
    for w, prs in state.bursts.items():
        vals = [v for v in (metric_value("iops", p) for p in prs) if v is not None]
        idles = [float(i) for p in prs if p.measurement is not None and (i := p.measurement.extra.idle_s) is not None]
        base = [v for v in (metric_value("iops", p) for p in state.baselines.get(w, [])) if v is not None]
        mean = sum(vals) / len(vals) if vals else None
        out.append(WaitStateSummary(
            wait_s=w, bursts=len(prs), mean_iops=mean, min_iops=min(vals) if vals else None,
            max_iops=max(vals) if vals else None, vs_steady=mean / ss if mean is not None and ss else None,
            idle_s=sum(idles) / len(idles) if idles else None, baseline_iops=sum(base) / len(base) if base else None))
    return out


def hir_conclude(s: PtsSettings, run: Run) -> Run:
    state = analyse(s, run)
    event = HirEvent.of(
        kind="pts-hir", preconditioning=state.pc_note, pc_samples=len(state.pc), steady=state.pc_steady,
        steady_iops=state.steady_iops,
        wait_states={f"{w.wait_s:g}": {"bursts": w.bursts, "mean_iops": w.mean_iops, "vs_steady": w.vs_steady,
                                       "idle_s": w.idle_s} for w in wait_state_summaries(state)})
    run = run.with_event(event)
    if state.pc_done and not state.pc_steady and hir_settings(s).mode == "steady":
        run = run.with_warning(f"HIR: preconditioning did not reach steady state ({state.pc_note})")
    return run.with_event(hir_verdict(s, state))


def hir_verdict(s: PtsSettings, state: HirState) -> VerdictEvent:
    """HIR's verdict (verdict.py): it has no pass criterion, so it is complete when every wait state ran; not
    steady when its preconditioning ran out of rounds without steady state (the bursts then start from a
    drive that is still changing); incomplete when the run stopped before it ended."""
    from ssdlab.results import verdict

    summaries = wait_state_summaries(state)
    known = [w for w in summaries if w.vs_steady is not None]
    recovery = ", ".join(f"{w.wait_s:g} s: {w.vs_steady:.2f}x" for w in known if w.vs_steady is not None)
    if not state.finished:
        return verdict.verdict_event(TEST, "HIR", "incomplete", f"not finished: {state.pc_note}")
    if hir_settings(s).mode == "steady" and not state.pc_steady:
        return verdict.verdict_event(TEST, "HIR", "not-steady", f"preconditioning: {state.pc_note}; burst IOPS vs "
                                                                 f"that level: {recovery or 'n/a'}")
    return verdict.verdict_event(TEST, "HIR", "complete", f"{state.pc_note}; mean burst IOPS vs the steady-state "
                                                          f"level by wait state: {recovery or 'n/a'}")


def hir_notes(s: PtsSettings) -> list[str]:
    h = hir_settings(s)
    if h.mode == "steady":
        pc = (f"rounds of {h.pc_samples} samples of {s.runtime_s:g} s until the round mean IOPS is steady "
              f"(worst case {s.max_rounds} rounds = {format_duration(max_pc_samples(s) * s.runtime_s)} of I/O)")
    else:
        pc = f"{h.pc_samples} samples of {s.runtime_s:g} s, no steady-state check"
    per_wait = [h.bursts * (h.burst_s + h.wait_s(w)) + h.bursts * h.burst_s for w in h.waits]
    return [f"HIR: purge (write cache {s.write_cache}), no WIPC; preconditioning RND 4 KiB writes at {s.tq}: {pc}",
            f"  then wait states {', '.join(f'{w:g}' for w in h.waits)} s"
            + (f" (x {h.scale:g}: {', '.join(f'{h.wait_s(w):.3g}' for w in h.waits)} s)" if h.scale != 1 else "")
            + f": {h.bursts} bursts of {h.burst_s:.3g} s each followed by the wait, then {h.bursts} x "
              f"{h.burst_s:.3g} s of continuous writes back to baseline; {format_duration(sum(per_wait))} of I/O "
              "in all"]


def validate(s: PtsSettings) -> None:
    hir_settings(s)


HIR_OPTIONS = (
    SuiteOption("hir-precondition", "str", "steady", "HIR: steady (rounds of 30 one-minute samples until the "
                "round mean IOPS is steady, the spec reading) or fixed (36 samples, no check)", choices=MODES),
    SuiteOption("hir-pc-samples", "int", None, "HIR: preconditioning samples per round (steady, default 30) or in "
                "all (fixed, default 36)"),
    SuiteOption("hir-waits", "str", "5,10,15,25,50", "HIR: wait states in seconds (scaled by --runtime/60)"),
    SuiteOption("hir-bursts", "int", SPEC_BURSTS, "HIR: bursts per wait state, and 5-s samples in each return to "
                "baseline (spec: 360)"),
)

register_test(PtsTest(key=TEST, title="HIR", plan=hir_plan, remaining=hir_remaining, conclude=hir_conclude,
                      notes=hir_notes, options=HIR_OPTIONS, validate=validate, in_default=False, outlook=hir_outlook))
register_suite("pts-hir", "SNIA PTS 2.0 HIR: RND 4 KiB writes to steady state, then 5-s bursts with host idle "
               "waits of 5/10/15/25/50 s, each followed by a return to baseline", (TEST,))
