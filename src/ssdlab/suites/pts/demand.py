"""PTS 2.0 demand-intensity tests: CBW (composite block-size workload; PTS-E 1.1's ECW with --ecw) and DIRTH
(demand intensity / response-time histogram). Both run the same procedure on their own stimulus:

1. purge;
2. preconditioning (PC) with the stimulus's writes at the top TC x QD: rounds of --di-pc-round-minutes until
   steady state (--di-pc ss), or one fixed stretch (--di-pc MINUTES);
3. measurement rounds until steady state: a pre-write at the top TC x QD, then the TC x QD sweep from the highest
   to the lowest load, one spec minute per point; tracking variable: IOPS at the top TC x QD;
4. MaxIOPS, MidIOPS and MinIOPS chosen from the window averages (select_points), and at each a pre-write
   followed by a long capture whose fio histogram bins give the response-time histogram and confidence levels.

Thread count is fio's numjobs and queue depth is iodepth per job (TOIO = TC x QD), never the other way round.
One spec minute lasts --runtime seconds (60 for a compliant run), so scaled runs shorten every stretch alike.
Point ids: <test>-0-purge, <test>-pc<NN>, <test>-r<NN>-pw, <test>-r<NN>-t<TC>q<QD>, <test>-h-<role>[-pw].
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ssdlab.analysis import steady
from ssdlab.analysis.steady import Determination
from ssdlab.errors import UsageError
from ssdlab.results.events import SteadyStateEvent, VerdictEvent
from ssdlab.results.model import FINISHED, PointResult, Run, TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.suites.base import Outlook, PointRuns, SuiteOption
from ssdlab.suites.pts.common import (
    KiB,
    PtsSettings,
    RunFollower,
    bs_label,
    det_record,
    invalid_note,
    metric_value,
    mix_label,
    parse_mix,
    purge_point,
    window_steady,
)
from ssdlab.suites.pts.family import PtsTest, register_suite, register_test
from ssdlab.units import format_duration

# --------------------------------------------------------------------------- stimuli

# the CBW / ECW block-size mix (percent of I/Os per size), R/W mix and access zones
CBW_BSSPLIT = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"
CBW_READ_PCT = 40
CBW_ZONES = "zoned:50/5:30/15:20/80"
CBW_BLOCKALIGN = 4 * KiB  # offsets on 4 KiB boundaries, as fio's JESD219 example (see docs/pts.md)
DIRTH_BS = 8 * KiB
DIRTH_READ_PCT = 65

SWEEPS: dict[str, tuple[tuple[int, ...], float]] = {  # name -> (TC and QD values, pre-write spec minutes)
    "7x7": ((32, 16, 8, 6, 4, 2, 1), 5.0),
    "6x6": ((32, 16, 8, 4, 2, 1), 10.0),
}
ROLES = ("max", "mid", "min")
ROLE_TITLES = {"max": "MaxIOPS", "mid": "MidIOPS", "min": "MinIOPS"}
CEILING_ON = ("write", "all", "none")


def demand_options() -> tuple[SuiteOption, ...]:
    """Options CBW and DIRTH share (one CLI option each; both tests read them)."""
    return (
        SuiteOption("di-sweep", "str", "7x7", "CBW/DIRTH thread x queue-depth sweep: 7x7 (TC and QD 32,16,8,6,4,2,1, "
                    "5-minute pre-write per round) or 6x6 (32,16,8,4,2,1, 10-minute pre-write)",
                    choices=tuple(SWEEPS)),
        SuiteOption("di-tc", "str", None, "CBW/DIRTH, for quick runs: comma list of thread counts (replaces the "
                    "sweep's; the run is scaled)"),
        SuiteOption("di-qd", "str", None, "CBW/DIRTH, for quick runs: comma list of queue depths per thread "
                    "(replaces the sweep's; the run is scaled)"),
        SuiteOption("di-prewrite-minutes", "float", None, "CBW/DIRTH: pre-write before each round, in spec minutes "
                    "(default: 5 with 7x7, 10 with 6x6)"),
        SuiteOption("di-pc", "str", "ss", "CBW/DIRTH preconditioning: 'ss' (rounds at the top TC x QD until steady "
                    "state) or a number of spec minutes with no steady-state check"),
        SuiteOption("di-pc-round-minutes", "float", 30.0, "CBW/DIRTH: spec minutes per preconditioning round with "
                    "--di-pc ss (30)"),
        SuiteOption("di-ceiling-ms", "float", 5.0, "CBW/DIRTH: MaxIOPS and MidIOPS come from points whose mean "
                    "response time is below this (ms, strict <; 5)"),
        SuiteOption("di-ceiling-on", "str", "write", "CBW/DIRTH: which mean response time the ceiling limits: "
                    "write (mean write latency), all (every I/O), none (no ceiling)", choices=CEILING_ON),
        SuiteOption("di-hist-prewrite-minutes", "float", 60.0, "CBW/DIRTH: writes before each histogram capture, "
                    "spec minutes (60)"),
        SuiteOption("di-hist-minutes", "float", 10.0, "CBW/DIRTH: length of each response-time histogram capture at "
                    "MaxIOPS, MidIOPS and MinIOPS, spec minutes (10)"),
    )


CBW_OPTIONS = (SuiteOption("ecw", "flag", False, "CBW: run and label it as PTS-E 1.1's ECW (enterprise composite "
                           "workload; same stimulus and procedure)"),)
DIRTH_OPTIONS = (
    SuiteOption("dirth-bs", "float", 8.0, "DIRTH: block size in KiB (8)"),
    SuiteOption("dirth-mix", "str", "65/35", "DIRTH: read/write mix (65/35)"),
)


@dataclass(frozen=True)
class DemandStimulus:
    """What one demand test issues: its measured mix and its preconditioning writes."""

    label: str  # e.g. "RND CBW mix 40/60" or "RND 8 KiB 65/35"
    bs: int
    read_pct: int
    bssplit: str | None = None
    distribution: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    def workload(self, s: PtsSettings, tc: int, qd: int, seconds: float, *, writes_only: bool = False,
                 interval_ms: int | None = None) -> Workload:
        """Thread count tc = fio numjobs, queue depth qd = fio iodepth per job; TOIO = tc x qd."""
        read = 0 if writes_only else self.read_pct
        rw = "randwrite" if read == 0 else ("randread" if read == 100 else "randrw")
        return Workload(rw=rw, bs=self.bs, iodepth=qd, numjobs=tc, rwmixread=read if rw == "randrw" else None,
                        runtime_s=seconds, size=s.active_range_bytes, bssplit=self.bssplit,
                        random_distribution=self.distribution, options={**s.pattern_options(), **dict(self.options)},
                        log_interval_ms=interval_ms)


def _int_list(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(p) for p in str(text).split(",") if p.strip())
    except ValueError:
        raise UsageError(f"--{what} {text!r}: give a comma list of whole numbers, e.g. 4,1") from None
    if not values or len(set(values)) != len(values) or min(values) < 1 or max(values) > 256:
        raise UsageError(f"--{what} {text!r}: give distinct values from 1 to 256")
    return tuple(sorted(values, reverse=True))


def _minutes(s: PtsSettings, key: str, default: float) -> float:
    v = float(s.option(key, default))
    if not v > 0 or not math.isfinite(v):
        raise UsageError(f"--{key.replace('_', '-')} {v:g}: give a positive number of minutes")
    return v


@dataclass(frozen=True)
class DemandSettings:
    """The demand tests' own options, parsed and checked."""

    sweep: str  # "7x7" | "6x6" | "custom"
    tcs: tuple[int, ...]  # highest first
    qds: tuple[int, ...]
    prewrite_min: float
    pc_mode: str  # "ss" | "fixed"
    pc_min: float  # per round (ss) or in total (fixed)
    ceiling_on: str
    ceiling_ms: float
    hist_prewrite_min: float
    hist_min: float

    @property
    def top(self) -> tuple[int, int]:
        """The highest load: PC, pre-writes and the tracking variable run here (T32Q32 in the spec)."""
        return self.tcs[0], self.qds[0]

    @property
    def bottom(self) -> tuple[int, int]:
        """The lowest load: MinIOPS (T1Q1 in the spec)."""
        return self.tcs[-1], self.qds[-1]

    def sweep_points(self) -> list[tuple[int, int]]:
        """(TC, QD) in run order: thread counts from high to low, and within each, queue depths from high to low."""
        return [(tc, qd) for tc in self.tcs for qd in self.qds]

    def scaled_reasons(self) -> list[str]:
        out = []
        if self.sweep == "custom":
            out.append("the TC x QD sweep was reduced (--di-tc / --di-qd)")
        if self.hist_min < 10:
            out.append(f"histogram captures last {self.hist_min:g} spec minutes instead of 10")
        if self.hist_prewrite_min < 60:
            out.append(f"histogram pre-writes last {self.hist_prewrite_min:g} spec minutes instead of 60")
        return out


def demand_settings(s: PtsSettings) -> DemandSettings:
    sweep = str(s.option("di_sweep", "7x7"))
    if sweep not in SWEEPS:
        raise UsageError(f"--di-sweep {sweep!r}: use {' or '.join(SWEEPS)}")
    values, prewrite = SWEEPS[sweep]
    tcs = qds = values
    tc_text, qd_text = s.option("di_tc"), s.option("di_qd")
    if tc_text is not None or qd_text is not None:
        tcs = _int_list(tc_text, "di-tc") if tc_text is not None else values
        qds = _int_list(qd_text, "di-qd") if qd_text is not None else values
        sweep = "custom"
    pw = s.option("di_prewrite_minutes")
    prewrite = prewrite if pw is None else _minutes(s, "di_prewrite_minutes", prewrite)
    pc_text = str(s.option("di_pc", "ss")).strip().lower()
    if pc_text == "ss":
        pc_mode, pc_min = "ss", _minutes(s, "di_pc_round_minutes", 30.0)
    else:
        try:
            pc_min = float(pc_text)
        except ValueError:
            raise UsageError(f"--di-pc {pc_text!r}: use 'ss' or a number of minutes (e.g. 10)") from None
        if not pc_min > 0 or not math.isfinite(pc_min):
            raise UsageError(f"--di-pc {pc_text!r}: the number of minutes must be positive")
        pc_mode = "fixed"
    ceiling_on = str(s.option("di_ceiling_on", "write"))
    if ceiling_on not in CEILING_ON:
        raise UsageError(f"--di-ceiling-on {ceiling_on!r}: use one of {', '.join(CEILING_ON)}")
    ceiling_ms = float(s.option("di_ceiling_ms", 5.0))
    if not ceiling_ms > 0:
        raise UsageError(f"--di-ceiling-ms {ceiling_ms:g}: give a positive number of milliseconds")
    return DemandSettings(sweep=sweep, tcs=tcs, qds=qds, prewrite_min=prewrite, pc_mode=pc_mode, pc_min=pc_min,
                          ceiling_on=ceiling_on, ceiling_ms=ceiling_ms,
                          hist_prewrite_min=_minutes(s, "di_hist_prewrite_minutes", 60.0),
                          hist_min=_minutes(s, "di_hist_minutes", 10.0))


def cbw_stimulus(s: PtsSettings) -> DemandStimulus:
    return DemandStimulus(label=f"RND CBW block-size mix {mix_label(CBW_READ_PCT)}, zoned 50/5:30/15:20/80",
                          bs=4 * KiB, read_pct=CBW_READ_PCT, bssplit=CBW_BSSPLIT, distribution=CBW_ZONES,
                          options=(("blockalign", "4k"),))


def dirth_stimulus(s: PtsSettings) -> DemandStimulus:
    kib = float(s.option("dirth_bs", 8.0))
    bs = round(kib * KiB)
    if bs <= 0 or bs != kib * KiB or bs % 512:
        raise UsageError(f"--dirth-bs {kib:g}: give a block size in KiB that is a multiple of 0.5")
    mix = str(s.option("dirth_mix", "65/35"))
    try:
        read = parse_mix(mix)
    except ValueError:
        raise UsageError(f"--dirth-mix {mix!r}: use READ/WRITE percentages that add up to 100, e.g. 65/35") \
            from None
    return DemandStimulus(label=f"RND {bs_label(bs)} {mix_label(read)}", bs=bs, read_pct=read)


# --------------------------------------------------------------------------- the test

@dataclass(frozen=True)
class DemandTest:
    key: str  # point id prefix and --pts-tests name: cbw, dirth
    title: str
    stimulus: Callable[[PtsSettings], DemandStimulus]

    def display_title(self, s: PtsSettings) -> str:
        if self.key == "cbw" and bool(s.option("ecw", False)):
            return "ECW (PTS-E 1.1 enterprise composite workload)"
        return self.title


CBW = DemandTest("cbw", "CBW (composite block-size workload)", cbw_stimulus)
DIRTH = DemandTest("dirth", "DIRTH (demand intensity / response-time histogram)", dirth_stimulus)


def _seconds(s: PtsSettings, minutes: float) -> float:
    """Spec minutes as point seconds: one minute lasts --runtime seconds (60 unscaled)."""
    return minutes * s.runtime_s


def _interval_ms(s: PtsSettings) -> int:
    """Per-minute interval logs (one sample per spec minute) for the long stretches."""
    return max(1, round(s.runtime_s * 1000))


def pc_id(t: DemandTest, r: int) -> str:
    return f"{t.key}-pc{r:02d}"


def sweep_key(tc: int, qd: int) -> str:
    return f"t{tc:02d}q{qd:02d}"


def round_id(t: DemandTest, r: int, tc: int, qd: int) -> str:
    return f"{t.key}-r{r:02d}-{sweep_key(tc, qd)}"


def prewrite_id(t: DemandTest, r: int) -> str:
    return f"{t.key}-r{r:02d}-pw"


def hist_id(t: DemandTest, role: str, prewrite: bool = False) -> str:
    return f"{t.key}-h-{role}" + ("-pw" if prewrite else "")


def pc_point(t: DemandTest, s: PtsSettings, ds: DemandSettings, r: int) -> TestPoint:
    tc, qd = ds.top
    st = t.stimulus(s)
    what = f"round {r} ({ds.pc_min:g} min)" if ds.pc_mode == "ss" else f"{ds.pc_min:g} min, no SS check"
    return TestPoint(
        id=pc_id(t, r), label=f"{t.key.upper()} PC {what}: {st.label} writes T{tc}Q{qd}",
        workload=st.workload(s, tc, qd, _seconds(s, ds.pc_min), writes_only=True, interval_ms=_interval_ms(s)),
        phase="precondition", group=t.key,
        tags=PointTags.of(test=t.key, stage="pc", round=r, tc=tc, qd=qd, spec_minutes=ds.pc_min),
    )


def round_points(t: DemandTest, s: PtsSettings, ds: DemandSettings, r: int) -> list[TestPoint]:
    """Round r: the pre-write at the top load, then the sweep (one spec minute per point)."""
    return list(_round_points(t, s, ds, r))


@functools.lru_cache(maxsize=4096)
def _round_points(t: DemandTest, s: PtsSettings, ds: DemandSettings, r: int) -> tuple[TestPoint, ...]:
    """Built once per round (points are immutable): the run loop asks what remains after every point."""
    st = t.stimulus(s)
    tc0, qd0 = ds.top
    out = [TestPoint(
        id=prewrite_id(t, r), label=f"{t.key.upper()} R{r} pre-write {ds.prewrite_min:g} min T{tc0}Q{qd0}",
        workload=st.workload(s, tc0, qd0, _seconds(s, ds.prewrite_min), writes_only=True,
                             interval_ms=_interval_ms(s)),
        phase="precondition", group=t.key,
        tags=PointTags.of(test=t.key, stage="prewrite", round=r, tc=tc0, qd=qd0, spec_minutes=ds.prewrite_min))]
    for tc, qd in ds.sweep_points():
        out.append(TestPoint(
            id=round_id(t, r, tc, qd), label=f"{t.key.upper()} R{r} T{tc}Q{qd} {st.label}",
            workload=st.workload(s, tc, qd, s.runtime_s), phase="measure", group=t.key,
            tags=PointTags.of(test=t.key, stage="sweep", round=r, tc=tc, qd=qd, toio=tc * qd, read_pct=st.read_pct)))
    return tuple(out)


def hist_points(t: DemandTest, s: PtsSettings, ds: DemandSettings, role: str, tc: int, qd: int,
                roles: Sequence[str] = ()) -> list[TestPoint]:
    """At one chosen point: the pre-write, then the capture whose bins give the response-time histogram."""
    st = t.stimulus(s)
    names = "/".join(ROLE_TITLES[r] for r in (roles or (role,)))
    tags = PointTags.of(test=t.key, role=role, roles=list(roles or (role,)), tc=tc, qd=qd, toio=tc * qd)
    return [
        TestPoint(id=hist_id(t, role, True), label=f"{t.key.upper()} {names} pre-write {ds.hist_prewrite_min:g} min "
                  f"T{tc}Q{qd}",
                  workload=st.workload(s, tc, qd, _seconds(s, ds.hist_prewrite_min), writes_only=True,
                                       interval_ms=_interval_ms(s)),
                  phase="precondition", group=t.key, tags=tags.replace(stage="hist-prewrite",
                                                                       spec_minutes=ds.hist_prewrite_min)),
        TestPoint(id=hist_id(t, role), label=f"{t.key.upper()} {names} histogram {ds.hist_min:g} min T{tc}Q{qd}",
                  workload=st.workload(s, tc, qd, _seconds(s, ds.hist_min), interval_ms=_interval_ms(s)),
                  phase="measure", group=t.key, tags=tags.replace(stage="hist", spec_minutes=ds.hist_min)),
    ]


def _worst_hist(t: DemandTest, s: PtsSettings, ds: DemandSettings) -> list[TestPoint]:
    """The capture stage before the points are known: planned at the top, a middle and the bottom load."""
    mid = ds.sweep_points()[len(ds.sweep_points()) // 2]
    guesses = {"max": ds.top, "mid": mid, "min": ds.bottom}
    return [p for role in ROLES for p in hist_points(t, s, ds, role, *guesses[role])]


def _pc_rounds(s: PtsSettings, ds: DemandSettings) -> int:
    return s.max_rounds if ds.pc_mode == "ss" else 1


def plan(t: DemandTest, s: PtsSettings) -> list[TestPoint]:
    """Worst case: purge, every PC round, max-rounds measurement rounds, three captures."""
    ds = demand_settings(s)
    t.stimulus(s)  # validates the stimulus options
    pts = [purge_point(t.key, s)]
    pts.extend(pc_point(t, s, ds, r) for r in range(1, _pc_rounds(s, ds) + 1))
    for r in range(1, s.max_rounds + 1):
        pts.extend(round_points(t, s, ds, r))
    return pts + _worst_hist(t, s, ds)


# --------------------------------------------------------------------------- selection of Max/Mid/Min

@dataclass(frozen=True)
class SweepValue:
    """Window averages of one sweep point."""

    tc: int
    qd: int
    iops: float | None
    art_us: float | None  # every I/O
    write_art_us: float | None  # writes only (None without writes)

    @property
    def toio(self) -> int:
        return self.tc * self.qd


@dataclass(frozen=True)
class Selection:
    """MaxIOPS, MidIOPS and MinIOPS (TC, QD), the points that passed the ceiling, and how they were chosen."""

    points: Mapping[str, tuple[int, int] | None]  # role -> (tc, qd)
    kept: tuple[tuple[int, int], ...]
    rule: str
    note: str = ""

    def distinct(self) -> list[tuple[str, tuple[int, int], tuple[str, ...]]]:
        """(first role, (tc, qd), every role at that point): one capture per distinct point."""
        out: list[tuple[str, tuple[int, int], tuple[str, ...]]] = []
        for role in ROLES:
            tq = self.points.get(role)
            if tq is None or any(tq == o[1] for o in out):
                continue
            out.append((role, tq, tuple(r for r in ROLES if self.points.get(r) == tq)))
        return out

    def capture_role(self, role: str) -> str | None:
        """The role whose capture stands for `role` (itself, or an earlier role at the same point)."""
        tq = self.points.get(role)
        return next((first for first, p, _ in self.distinct() if p == tq), None) if tq is not None else None


def select_points(values: Sequence[SweepValue], ceiling_on: str, ceiling_ms: float,
                  bottom: tuple[int, int]) -> Selection:
    """MaxIOPS: the highest IOPS among the points under the ceiling (mean response time strictly below
    ceiling_ms; 'write' limits the mean write latency, and a point without writes is judged on all I/Os).
    MidIOPS: the kept point whose IOPS is nearest (max + min) / 2 of the kept points (ties: the lower TOIO,
    then the fewer threads). MinIOPS: the lowest load of the sweep (T1Q1)."""
    limit_us = ceiling_ms * 1000.0
    kept: list[SweepValue] = []
    for v in values:
        if v.iops is None:
            continue
        if ceiling_on == "none":
            kept.append(v)
            continue
        lat = v.write_art_us if ceiling_on == "write" and v.write_art_us is not None else v.art_us
        if lat is not None and lat < limit_us:
            kept.append(v)
    what = {"write": "mean write response time", "all": "mean response time of all I/Os", "none": ""}[ceiling_on]
    rule = (f"points with {what} < {ceiling_ms:g} ms" if ceiling_on != "none" else "every point (no ceiling)")
    points: dict[str, tuple[int, int] | None] = {"max": None, "mid": None, "min": bottom}
    note = ""
    if kept:
        best = max(kept, key=lambda v: (v.iops or 0.0, -v.toio, -v.tc))
        lo = min(v.iops or 0.0 for v in kept)
        target = ((best.iops or 0.0) + lo) / 2
        mid = min(kept, key=lambda v: (abs((v.iops or 0.0) - target), v.toio, v.tc))
        points["max"] = (best.tc, best.qd)
        points["mid"] = (mid.tc, mid.qd)
    else:
        note = f"no point of the sweep meets the ceiling ({rule}): MaxIOPS and MidIOPS are not defined"
    return Selection(points=points, kept=tuple((v.tc, v.qd) for v in kept), rule=rule, note=note)


# --------------------------------------------------------------------------- analysis of a stored run

def write_art_us(pr: PointResult) -> float | None:
    """Mean completion latency of the point's writes, µs."""
    m = pr.measurement
    d = m.get("write") if m is not None else None
    if d is None or d.clat is None or d.clat.n <= 0:
        return None
    return d.clat.mean_ns / 1000.0


@dataclass(frozen=True)
class DemandState:
    """What the stored points say about one demand test."""

    test: DemandTest
    settings: DemandSettings
    purged: bool
    pc_values: list[float | None]  # IOPS per PC round
    pc_finished: bool
    pc_steady: bool | None  # None: fixed PC (no check)
    pc_determination: Determination | None
    rounds_done: int
    tracking: list[float | None]  # IOPS at the top load per complete round
    finished: bool
    steady: bool
    window_end: int | None
    determination: Determination | None
    note: str
    selection: Selection | None = None
    invalid: tuple[str, ...] = ()  # ids of invalid points: the test stopped there, incomplete (never steady)

    @property
    def window(self) -> list[int]:
        if self.window_end is None:
            return []
        return list(range(self.window_end - steady.WINDOW + 1, self.window_end + 1))

    @property
    def pc_window(self) -> list[int]:
        d = self.pc_determination
        return list(d.rounds) if d is not None else []


def _series_ss(values: list[float | None], s: PtsSettings) -> tuple[bool, bool, int | None, Determination | None]:
    """(finished, steady, window end, determination) of a round series under the 5-round rule."""
    last: Determination | None = None
    for x in range(steady.WINDOW, len(values) + 1):
        d = window_steady(values, x)
        last = d if d is not None else last
        if d is not None and d.steady:
            return True, True, x, d
        if x >= s.max_rounds and not s.until_steady:
            return True, False, x, d
    end = len(values) if len(values) >= steady.WINDOW else None
    return False, False, end, last if end is not None else None


def sweep_values(t: DemandTest, state_rounds: Sequence[int], run: Run, ds: DemandSettings) -> list[SweepValue]:
    """Window averages (over `state_rounds`) of IOPS, ART and write ART per sweep point."""
    res = run.finished_by_id()
    out = []
    for tc, qd in ds.sweep_points():
        prs = [res.get(round_id(t, r, tc, qd)) for r in state_rounds]
        ok = [p for p in prs if p is not None and p.status == "ok"]
        out.append(SweepValue(tc=tc, qd=qd, iops=_average(ok, len(prs), lambda p: metric_value("iops", p)),
                              art_us=_average(ok, len(prs), lambda p: metric_value("art", p)),
                              write_art_us=_average(ok, len(prs), write_art_us)))
    return out


def _average(points: list[PointResult], expected: int, f: Callable[[PointResult], float | None]) -> float | None:
    """Mean of f over the points; None unless every one of the `expected` rounds has a value."""
    known = [v for v in (f(p) for p in points) if v is not None and v > 0 and math.isfinite(v)]
    return sum(known) / len(known) if known and len(known) == expected else None


def analyse(t: DemandTest, s: PtsSettings, run: Run) -> DemandState:
    """Preconditioning, complete rounds, the steady-state decision and the chosen points, from the stored
    points. An invalid point (verdict.py: it measured too little) ends the test there, incomplete. Worked out
    again only when a result came that can change it (see _progress); otherwise the last answer stands."""
    prog = _progress(t, s, run)
    key = (prog.purged, prog.pc_changes, prog.round_changes)
    if prog.memo is None or prog.memo[0] != key:
        prog.memo = (key, _analyse(t, s, run))
    return prog.memo[1]


def _analyse(t: DemandTest, s: PtsSettings, run: Run) -> DemandState:
    """analyse() by a scan of the test's stored points."""
    ds = demand_settings(s)
    res = run.finished_by_id()
    purged = purge_point(t.key, s).id in res
    pc_values: list[float | None] = []
    r = 1
    while purged and pc_id(t, r) in res:
        pr = res[pc_id(t, r)]
        if pr.status == "invalid":
            return DemandState(t, ds, purged, pc_values, True, None, None, 0, [], True, False, None, None,
                               invalid_note(pr), invalid=(pr.point.id,))
        pc_values.append(metric_value("iops", pr))
        r += 1
    pc_finished, pc_steady, pc_det, pc_values = _preconditioned(pc_values, s, ds)
    tracking: list[float | None] = []
    rounds, bad = _rounds(t, s, ds, res, tracking) if pc_finished else (0, [])
    if bad:  # a round with a point that measured too little cannot be judged
        end = rounds if rounds >= steady.WINDOW else None
        return DemandState(t, ds, purged, pc_values, True, pc_steady, pc_det, rounds, tracking, True, False,
                           end, None, invalid_note(res[bad[0]]), invalid=tuple(bad))
    finished, ok, end, det = _series_ss(tracking, s) if pc_finished else (False, False, None, None)
    if finished:
        note = (f"steady state reached at round {end}" if ok else
                f"SS NOT ACHIEVED within {end} rounds: rounds {end - 4}-{end} reported as the window"
                if end is not None else "")
        window = list(range(end - steady.WINDOW + 1, end + 1)) if end is not None else []
        sel = select_points(sweep_values(t, window, run, ds), ds.ceiling_on, ds.ceiling_ms, ds.bottom)
        return DemandState(t, ds, purged, pc_values, pc_finished, pc_steady, pc_det, rounds, tracking, True, ok,
                           end, det, note, sel)
    note = ("not started" if not purged else "preconditioning" if not pc_finished
            else "not finished: the run stopped before the test did")
    return DemandState(t, ds, purged, pc_values, pc_finished, pc_steady, pc_det, rounds, tracking, False, False,
                       end, det, note)


def _preconditioned(pc_values: list[float | None], s: PtsSettings, ds: DemandSettings
                    ) -> tuple[bool, bool | None, Determination | None, list[float | None]]:
    """(finished, steady (None: fixed rounds or not finished), the deciding window, the rounds that count):
    fixed preconditioning ends after its rounds, steady-state preconditioning at the first window that decides."""
    if ds.pc_mode == "fixed":
        return bool(pc_values), None, None, pc_values
    pc_finished, ok, _, pc_det = _series_ss(pc_values, s)
    if pc_finished and pc_det is not None:  # stop reading PC rounds at the first window that decides
        pc_values = pc_values[:pc_det.rounds[-1]]
    return pc_finished, ok if pc_finished else None, pc_det, pc_values


def _rounds(t: DemandTest, s: PtsSettings, ds: DemandSettings, res: Mapping[str, PointResult],
            tracking: list[float | None]) -> tuple[int, list[str]]:
    """Complete sweep rounds (their tracked IOPS appended to `tracking`) up to the one that decides: steady, the
    last, or one with an invalid point (its ids returned)."""
    rounds = 0
    while True:
        ids = [p.id for p in round_points(t, s, ds, rounds + 1)]
        if not all(i in res for i in ids):
            return rounds, []
        rounds += 1
        tracking.append(metric_value("iops", res.get(round_id(t, rounds, *ds.top))))
        bad = [i for i in ids if res[i].status == "invalid"]
        if bad:
            return rounds, bad
        if rounds >= s.max_rounds and not s.until_steady:
            return rounds, []
        if rounds >= steady.WINDOW:
            d = window_steady(tracking, rounds)
            if d is not None and d.steady:
                return rounds, []


# --------------------------------------------------------------------------- a run's progress, followed as it grows
#
# Which of the test's points are finished is followed as the run grows (common.RunFollower). analyse() is worked
# out again only when a result came that can change it: the purge's, a preconditioning round's, or one that
# completes a sweep round or changes a complete one (the analysis reads no other round).

@dataclass
class _Progress:
    """Which of one demand test's points a run has finished, and the analysis they give."""

    purge_id: str
    points: tuple[PointResult, ...] = ()  # the run's points as last seen
    purged: bool = False
    pc_changes: int = 0  # results of preconditioning rounds seen
    rounds: dict[int, set[str]] = field(default_factory=dict)  # round -> ids of its finished points
    round_changes: int = 0  # results seen that complete a round or change a complete one
    memo: tuple[tuple[bool, int, int], DemandState] | None = None  # analyse() for (purged, the two counts)


@functools.lru_cache(maxsize=4096)
def _round_ids(t: DemandTest, s: PtsSettings, ds: DemandSettings, r: int) -> frozenset[str]:
    return frozenset(p.id for p in _round_points(t, s, ds, r))


def _round_of(t: DemandTest, s: PtsSettings, ds: DemandSettings, pid: str) -> tuple[int, int] | None:
    """(round, how many points it has) of a pre-write or sweep point's id; None for any other id."""
    digits, sep, _ = pid[len(t.key) + 2:].partition("-")
    if not sep or not digits.isdigit():
        return None
    ids = _round_ids(t, s, ds, int(digits))
    return (int(digits), len(ids)) if pid in ids else None


def _take_in(key: tuple[DemandTest, PtsSettings], prog: _Progress, points: Sequence[PointResult]) -> None:
    """Points appended to the run: which of the test's they finish (or not, as Run.finished_by_id keeps the
    latest result of an id), and whether they can change the analysis."""
    t, s = key
    ds = demand_settings(s)
    pc_prefix, round_prefix = f"{t.key}-pc", f"{t.key}-r"
    for pr in points:
        pid = pr.point.id
        finished = pr.status in FINISHED
        if pid == prog.purge_id:
            prog.purged = finished
        elif pid.startswith(pc_prefix):
            prog.pc_changes += 1
        elif pid.startswith(round_prefix) and (at := _round_of(t, s, ds, pid)) is not None:
            r, n = at
            done = prog.rounds.setdefault(r, set())
            was_complete = len(done) == n
            if finished:
                done.add(pid)
            else:
                done.discard(pid)
            if was_complete or len(done) == n:
                prog.round_changes += 1


_FOLLOWER = RunFollower(lambda key: _Progress(purge_id=purge_point(key[0].key, key[1]).id), _take_in)


def _progress(t: DemandTest, s: PtsSettings, run: Run) -> _Progress:
    """Which of the test's points the run has finished (the memo of this test's run, brought up to date)."""
    return _FOLLOWER.follow((t, s), run)


def capture_points(t: DemandTest, s: PtsSettings, state: DemandState) -> list[TestPoint]:
    """The captures the selection asks for: one pre-write + capture per distinct chosen point."""
    if state.selection is None:
        return []
    return [p for role, (tc, qd), roles in state.selection.distinct()
            for p in hist_points(t, s, state.settings, role, tc, qd, roles)]


def remaining(t: DemandTest, s: PtsSettings, run: Run) -> list[TestPoint]:
    """What the test still has to run: the unfinished stage first, then the worst case after it."""
    ds = demand_settings(s)
    done = run.done_ids()
    if purge_point(t.key, s).id not in done:
        return plan(t, s)
    state = analyse(t, s, run)
    if not state.pc_finished:
        out = [pc_point(t, s, ds, r) for r in range(len(state.pc_values) + 1, _pc_rounds(s, ds) + 1)]
        if not out:  # --until-steady past the maximum: one more round at a time
            out = [pc_point(t, s, ds, len(state.pc_values) + 1)]
        return out + [p for r in range(1, s.max_rounds + 1) for p in round_points(t, s, ds, r)] + \
            _worst_hist(t, s, ds)
    if state.invalid:
        return []
    if not state.finished:
        r = state.rounds_done + 1
        out = [p for p in round_points(t, s, ds, r) if p.id not in done]
        for later in range(r + 1, s.max_rounds + 1):
            out.extend(round_points(t, s, ds, later))
        return out + _worst_hist(t, s, ds)
    return [p for p in capture_points(t, s, state) if p.id not in done]


@functools.lru_cache(maxsize=1024)
def _pc_point(t: DemandTest, s: PtsSettings, ds: DemandSettings, r: int) -> TestPoint:
    return pc_point(t, s, ds, r)


def _rounds_runs(t: DemandTest, s: PtsSettings, ds: DemandSettings, r: int, count: int) -> PointRuns:
    """`count` rounds from round r as runs: each of round r's points standing for its shape in every round."""
    return tuple((p, count) for p in _round_points(t, s, ds, r)) if count > 0 else ()


@functools.lru_cache(maxsize=64)
def _worst_hist_runs(t: DemandTest, s: PtsSettings, ds: DemandSettings) -> PointRuns:
    return tuple((p, 1) for p in _worst_hist(t, s, ds))


def outlook(t: DemandTest, s: PtsSettings, run: Run, finished: list[int]) -> Outlook:
    """What `remaining` lists, as runs of points of one shape (its first point the next to run): its cost does
    not grow with the run."""
    ds = demand_settings(s)
    done = run.done_ids()
    hist = _worst_hist_runs(t, s, ds)
    if purge_point(t.key, s).id not in done:
        n = _pc_rounds(s, ds)
        pc = ((_pc_point(t, s, ds, 1), 1), *(((_pc_point(t, s, ds, 2), n - 1),) if n > 1 else ()))
        return Outlook(worst=((purge_point(t.key, s), 1), *pc, *_rounds_runs(t, s, ds, 1, s.max_rounds), *hist))
    state = analyse(t, s, run)
    if not state.pc_finished:
        first = len(state.pc_values) + 1
        left = max(1, _pc_rounds(s, ds) - len(state.pc_values))  # --until-steady past the maximum: one more
        pc = ((_pc_point(t, s, ds, first), 1), *(((_pc_point(t, s, ds, first + 1), left - 1),) if left > 1 else ()))
        return Outlook(worst=(*pc, *_rounds_runs(t, s, ds, 1, s.max_rounds), *hist))
    if state.invalid:
        return Outlook()
    if not state.finished:
        r = state.rounds_done + 1
        current = tuple((p, 1) for p in _round_points(t, s, ds, r) if p.id not in done)
        return Outlook(worst=(*current, *_rounds_runs(t, s, ds, r + 1, s.max_rounds - r), *hist))
    return Outlook.of([p for p in capture_points(t, s, state) if p.id not in done])


def conclude(t: DemandTest, s: PtsSettings, run: Run) -> Run:
    """Record the steady-state determinations and the chosen points; warn about what fell short."""
    state = analyse(t, s, run)
    sel = state.selection
    tc, qd = state.settings.top
    det = state.determination
    run = run.with_event(SteadyStateEvent.of(
        kind="pts-steady-state", test=t.key, steady=state.steady, window=state.window, note=state.note,
        pc_steady=state.pc_steady, pc_rounds=len(state.pc_values),
        determinations={} if det is None else {f"IOPS T{tc}Q{qd}": det_record(det)},
        selection=None if sel is None else {r: (list(v) if v else None) for r, v in sel.points.items()},
    ))
    title = t.display_title(s)
    if state.pc_steady is False:
        run = run.with_warning(f"{title}: preconditioning did not reach steady state in {len(state.pc_values)} "
                               "rounds (the measurement rounds ran anyway)")
    if state.finished and not state.steady and not state.invalid and state.window:
        run = run.with_warning(f"{title}: SS NOT ACHIEVED after {state.rounds_done} rounds; rounds "
                               f"{state.window[0]}-{state.window[-1]} are reported as the window")
    if sel is not None and sel.note:
        run = run.with_warning(f"{title}: {sel.note}")
    reasons = state.settings.scaled_reasons()
    if reasons:
        run = run.with_warning(f"{title} is scaled, NOT SNIA PTS compliant: " + "; ".join(reasons))
    return run.with_event(verdict_event(t, s, state, run))


def verdict_event(t: DemandTest, s: PtsSettings, state: DemandState, run: Run) -> VerdictEvent:
    """The test's verdict (verdict.py): steady at round N or not steady, from the measurement rounds; incomplete
    when a point was invalid, a capture is missing or invalid, or the run stopped first."""
    from ssdlab.results import verdict

    title = t.display_title(s)
    tc, qd = state.settings.top
    if state.invalid or not state.finished:
        return verdict.verdict_event(t.key, title, "incomplete", state.note.removeprefix("incomplete: "))
    res = run.finished_by_id()
    for p in capture_points(t, s, state):
        pr = res.get(p.id)
        if pr is None:
            return verdict.verdict_event(t.key, title, "incomplete", f"{p.label} did not run")
        if pr.status == "invalid":
            return verdict.verdict_event(t.key, title, "incomplete", invalid_note(pr).removeprefix("incomplete: "))
    extra = f"; {state.selection.note}" if state.selection is not None and state.selection.note else ""
    d = state.determination
    if state.steady and state.window:
        return verdict.verdict_event(t.key, title, "steady", f"rounds {state.window[0]}-{state.window[-1]} of IOPS "
                                     f"at T{tc}Q{qd} meet the range and slope criteria" + extra,
                                     round=state.window_end)
    why = f"; range {d.range_pct:.1f}% (max 20%), slope excursion {d.excursion_pct:.1f}% (max 10%)" if d else ""
    window = f"; window rounds {state.window[0]}-{state.window[-1]}" if state.window else ""
    return verdict.verdict_event(t.key, title, "not-steady", f"SS NOT ACHIEVED in {state.rounds_done} rounds"
                                 + window + why + extra)


def notes(t: DemandTest, s: PtsSettings) -> list[str]:
    """`ssdlab plan` lines: procedure, worst case and the choices in force."""
    ds = demand_settings(s)
    st = t.stimulus(s)
    n = len(ds.sweep_points())
    per_round = (ds.prewrite_min + n) * s.runtime_s
    tc, qd = ds.top
    pc = (f"preconditioning rounds of {ds.pc_min:g} min at T{tc}Q{qd} until steady state (at most "
          f"{s.max_rounds}: {format_duration(s.max_rounds * _seconds(s, ds.pc_min))})" if ds.pc_mode == "ss"
          else f"{ds.pc_min:g} min of preconditioning at T{tc}Q{qd} ({format_duration(_seconds(s, ds.pc_min))})")
    hist = 3 * (ds.hist_prewrite_min + ds.hist_min) * s.runtime_s
    return [
        f"{t.display_title(s)}: {st.label}; purge, {pc}",
        f"  then rounds of a {ds.prewrite_min:g}-min pre-write and {n} points (TC {','.join(map(str, ds.tcs))} x "
        f"QD {','.join(map(str, ds.qds))}, numjobs = TC, iodepth = QD; --tq does not apply) = "
        f"{format_duration(per_round)} per round, at most {s.max_rounds} "
        f"({format_duration(s.max_rounds * per_round)} of I/O), tracking IOPS at T{tc}Q{qd}",
        f"  then at MaxIOPS, MidIOPS and MinIOPS ({ceiling_text(ds)}): {ds.hist_prewrite_min:g} min of writes and "
        f"a {ds.hist_min:g}-min histogram capture (up to {format_duration(hist)})",
    ]


def ceiling_text(ds: DemandSettings) -> str:
    if ds.ceiling_on == "none":
        return "no response-time ceiling"
    what = "mean write response time" if ds.ceiling_on == "write" else "mean response time"
    return f"{what} < {ds.ceiling_ms:g} ms"


def validate(t: DemandTest, s: PtsSettings) -> None:
    demand_settings(s)
    t.stimulus(s)


# --------------------------------------------------------------------------- the family's CBW and DIRTH

def family_test(t: DemandTest, options: tuple[SuiteOption, ...]) -> PtsTest:
    """A demand test as a test of the PTS family (its own purge, preconditioning, rounds and captures)."""
    return PtsTest(key=t.key, title=t.title, plan=functools.partial(plan, t),
                   remaining=functools.partial(remaining, t), conclude=functools.partial(conclude, t),
                   notes=functools.partial(notes, t), options=(*demand_options(), *options),
                   validate=functools.partial(validate, t), in_default=False, outlook=functools.partial(outlook, t))


register_test(family_test(CBW, CBW_OPTIONS))
register_test(family_test(DIRTH, DIRTH_OPTIONS))
register_suite("pts-cbw", "SNIA PTS 2.0 CBW: composite block-size mix 40/60, zoned access, TC x QD sweep to "
               "steady state, histograms at MaxIOPS/MidIOPS/MinIOPS (--ecw: PTS-E 1.1 ECW)", (CBW.key,))
register_suite("pts-dirth", "SNIA PTS 2.0 DIRTH: RND 8 KiB 65/35 TC x QD sweep to steady state, demand intensity, "
               "histograms and 3/4/5-nines confidence levels at MaxIOPS/MidIOPS/MinIOPS", (DIRTH.key,))
