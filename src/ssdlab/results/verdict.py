"""Verdicts: what a run, each test in it and each point concluded, and the one mapping to exit codes.

Every command that reports a result (`run`, `resume`, `report`, the console summary, the HTML report, and
JUnit export and `compare`) reads verdicts through `run_verdicts(run) -> RunVerdict`; nothing else decides
an exit code from results.

Kinds
  test   steady      SNIA steady state held (at round N)
         not-steady  the rounds ran out without steady state (SS NOT ACHIEVED)
         incomplete  the test could not be judged: a point was invalid, or the run stopped before it ended
         pass / fail a certification or a limit (ACT, stability CoV / p99 limits)
         complete    every point measured, and the test has no pass criterion (quick, sweeps, WSAT)
  point  invalid     a measured point that completed no I/O, or too few to carry what it reports
                     (`point_problem`); it is never `ok` and never counted for steady state. A stored point
                     recorded ok whose measurement is missing, or holds a number that is not finite and
                     non-negative (NaN, infinity, a negative count or time: `implausible`), is judged invalid
                     too: its test is incomplete (exit 1), with the reason

Exit codes (EXIT_CODES): steady, pass and complete are 0; not-steady, fail and incomplete are 1
(ExitCode.NEGATIVE). A run's code is the highest of its tests' codes; a run that did not finish
(interrupted, failed, still running) is incomplete. A run that went on past points fio failed on
(`--on-error continue`) makes their tests incomplete and exits 6 (ExitCode.FIO_FAILED) unless another test
is negative; so does a point on several devices or hosts that went on without one that failed.

How suites report a test's verdict: `conclude()` records one run event per test, built by `verdict_event()`:
    {"kind": "verdict", "test": "iops", "title": "IOPS", "verdict": "steady", "round": 6, "reason": "...",
     "passed": true, "text": "IOPS: steady at round 6 (...)"}
"passed" and "text" keep the earlier ACT shape {"kind": "verdict", "passed": bool, "text": str}, which is
read too (passed -> pass / fail, text -> reason; results/events.VerdictEvent). The last event per test counts.
PTS runs stored before verdict events existed recorded only their steady-state determinations
(events.SteadyStateEvent): a test without a verdict event is judged from its determination.

Valid points (docs/results.md): a measured, time-based point must complete at least
max(MIN_IOS, MIN_QUEUES x iodepth x numjobs) I/Os in its measured window, so that its p99 rests on at least
one I/O beyond it and its rate does not rest on the I/Os already in flight when the window opened; every
point that issues I/O must complete some. A point that falls short is run again with a longer runtime
(`extended_runtime`, up to MAX_EXTENSION x its planned runtime) and is stored as invalid if it still does.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ssdlab.errors import ExitCode
from ssdlab.results.counts import point_counts
from ssdlab.results.events import VERDICT_KINDS, SteadyStateEvent, StopEvent, VerdictEvent, VerdictKind
from ssdlab.results.model import Measurement, PointResult, Run, TestPoint

Kind = VerdictKind
KINDS = VERDICT_KINDS
EXIT_CODES: Mapping[str, int] = {
    "steady": int(ExitCode.OK), "pass": int(ExitCode.OK), "complete": int(ExitCode.OK),
    "not-steady": int(ExitCode.NEGATIVE), "fail": int(ExitCode.NEGATIVE), "incomplete": int(ExitCode.NEGATIVE),
}
# which kind names a run with tests of several kinds: the most severe one
_SEVERITY: Mapping[str, int] = {"complete": 0, "steady": 1, "pass": 2, "incomplete": 3, "not-steady": 4,
                                "fail": 5}
LABELS: Mapping[str, str] = {"steady": "steady", "not-steady": "not steady", "incomplete": "incomplete",
                             "pass": "pass", "fail": "fail", "complete": "complete"}

MIN_IOS = 100  # a valid point's p99 rests on at least one I/O beyond it (100 x (1 - 0.99) = 1)
MIN_QUEUES = 2  # ... and its window completed at least two full queues (iodepth x numjobs) of I/Os
MAX_EXTENSION = 16.0  # a short point runs again for at most this many times its planned runtime


# ------------------------------------------------------------------ points

def completed_ios(m: Measurement | None) -> int:
    """I/Os a measurement completed in its measured window (all directions)."""
    if m is None:
        return 0
    return sum(d.total_ios for d in m.directions.values())


def min_ios(point: TestPoint) -> int:
    """I/Os a point must complete to be valid: 1 for points that are not judged on a window (preconditioning,
    size-based or multi-stream points only need to move data), else max(MIN_IOS, MIN_QUEUES x outstanding)."""
    w = point.workload
    if point.phase != "measure" or w.runtime_s is None or point.streams:
        return 1
    return max(MIN_IOS, MIN_QUEUES * w.iodepth * w.numjobs)


def point_problem(point: TestPoint, m: Measurement | None) -> str:
    """Why a finished point's measurement is invalid ('' when it is valid). Purge steps are not I/O."""
    if point.phase == "purge":
        return ""
    n = completed_ios(m)
    if n == 0:
        return "it completed no I/O in its measured window"
    if point.tags.replay:  # a trace replay does what its trace holds; the replay's own verdict judges it
        return ""
    need = min_ios(point)
    if n < need:
        w = point.workload
        why = (f"two full queues of {w.iodepth * w.numjobs}" if need > MIN_IOS
               else f"{MIN_IOS}, so that its p99 rests on at least one I/O")
        return f"it completed {n:,} I/Os, fewer than the {need:,} a valid point needs ({why})"
    return ""


def implausible(m: Measurement) -> str:
    """Why a stored measurement cannot be what fio or the simulator measured ('' when it can): every rate, count,
    time and latency statistic of every direction, and the CPU shares, are finite and non-negative."""
    values: list[tuple[str, Any]] = [("usr_cpu", m.usr_cpu), ("sys_cpu", m.sys_cpu), ("runtime_ms", m.runtime_ms),
                                     ("errors", m.errors)]
    for name, d in m.directions.items():
        values += [(f"{name}.{k}", getattr(d, k)) for k in ("iops", "bw_bytes", "io_bytes", "total_ios",
                                                             "runtime_ms")]
        for lat in (d.clat, d.lat):
            if lat is not None:
                where = f"{name}.{lat.kind}"
                values += [(f"{where}.{k}", getattr(lat, k)) for k in ("n", "min_ns", "max_ns", "mean_ns",
                                                                       "stddev_ns")]
                values += [(f"{where}.p{k}", v) for k, v in lat.percentiles_ns.items()]
    for field, v in values:
        if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
            return (f"its stored measurement holds {field} = {v!r}, which no run measures (a finite, non-negative "
                    "number)")
    return ""


def stored_problem(r: PointResult) -> str:
    """Why a point stored as ok cannot be counted ('' when it can): its measurement is missing or implausible."""
    if r.status != "ok" or r.point.phase == "purge":
        return ""
    if r.measurement is None:
        return "its stored measurement is missing"
    return implausible(r.measurement)


def _judged_invalid(points: Sequence[PointResult]) -> tuple[PointResult, ...]:
    """The invalid points: those stored invalid, and those stored ok whose measurement is missing or implausible
    (returned as invalid, with the reason)."""
    out = []
    for r in points:
        why = stored_problem(r)
        if why:
            out.append(dataclasses.replace(r, status="invalid", reason=why))
        elif r.status == "invalid":
            out.append(r)
    return tuple(out)


def extended_runtime(point: TestPoint, m: Measurement | None, planned_s: float) -> float | None:
    """The runtime to run a short point again with, or None when it cannot be extended (size-based, or
    already at MAX_EXTENSION x its planned runtime). Aims at 1.5x the I/Os it needs, at least doubling."""
    now = point.workload.runtime_s
    if now is None or planned_s <= 0 or point.tags.replay:
        return None
    cap = planned_s * MAX_EXTENSION
    if now >= cap - 1e-9:
        return None
    n = completed_ios(m)
    factor = 2.0 if n == 0 else max(2.0, math.ceil(1.5 * min_ios(point) / n))
    return round(min(cap, now * factor), 3)


# ------------------------------------------------------------------ tests and runs

@dataclass(frozen=True)
class TestVerdict:
    """The verdict on one test of a run (a PTS test, an ACT level, a stability run, a whole quick run)."""

    __test__ = False  # not a pytest test class

    test: str  # key: "iops", "act", or the suite name for single-test suites
    title: str
    kind: Kind
    reason: str
    round: int | None = None  # steady at round N
    failed: bool = False  # incomplete only because points failed (--on-error continue): see RunVerdict.exit_code

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.kind]

    @property
    def negative(self) -> bool:
        return self.exit_code != 0

    @property
    def label(self) -> str:
        """'steady at round 6', 'not steady', 'pass', ..."""
        if self.kind == "steady" and self.round is not None:
            return f"steady at round {self.round}"
        return LABELS[self.kind]

    @property
    def text(self) -> str:
        """One line: 'IOPS: steady at round 6 (rounds 2-6 ...)'."""
        return f"{self.title}: {self.label}" + (f" ({self.reason})" if self.reason else "")


@dataclass(frozen=True)
class RunVerdict:
    """The verdicts of a run: one per test, the invalid points, and the exit code they map to."""

    run_status: str
    tests: tuple[TestVerdict, ...]
    invalid_points: tuple[PointResult, ...] = ()
    failed_points: tuple[PointResult, ...] = ()  # points fio failed on in a run that went on (--on-error continue)

    @property
    def kind(self) -> Kind:
        """The most severe test kind (fail > not-steady > incomplete > pass > steady > complete)."""
        if not self.tests:
            return "incomplete"
        return max((t.kind for t in self.tests), key=lambda k: _SEVERITY[k])

    @property
    def exit_code(self) -> int:
        """0 when every test is steady, pass or complete; 1 (ExitCode.NEGATIVE) otherwise, except that a run
        whose only shortfall is points fio failed on (--on-error continue) exits 6 (ExitCode.FIO_FAILED)."""
        if not self.tests:
            return int(ExitCode.NEGATIVE)
        judged = max((t.exit_code for t in self.tests if not t.failed), default=0)
        if self.failed_points and judged == 0:
            return int(ExitCode.FIO_FAILED)
        return max(t.exit_code for t in self.tests)

    @property
    def negative(self) -> bool:
        return self.exit_code != 0

    @property
    def headline(self) -> str:
        """A short summary for a badge or a console line: 'steady at round 6' (one test), '1 not steady,
        3 steady, 1 complete' (several, most severe first)."""
        if len(self.tests) == 1:
            return self.tests[0].label
        if not self.tests:
            return LABELS["incomplete"]
        counts: dict[str, int] = {}
        for t in self.tests:
            counts[t.kind] = counts.get(t.kind, 0) + 1
        order = sorted(counts, key=lambda k: -_SEVERITY[k])
        return ", ".join(f"{counts[k]} {LABELS[k]}" for k in order)


def verdict_event(test: str, title: str, kind: Kind, reason: str, round: int | None = None,
                  **extra: Any) -> VerdictEvent:
    """The run event a suite's conclude() records for one test's verdict (see the module docstring)."""
    if kind not in KINDS:
        raise ValueError(f"unknown verdict kind {kind!r}")
    v = TestVerdict(test=test, title=title, kind=kind, reason=reason, round=round)
    rounds = {} if round is None else {"round": round}
    return VerdictEvent.of(kind="verdict", test=test, title=title, verdict=kind, reason=reason,
                           passed=not v.negative, text=v.text, **rounds, **extra)


def from_event(e: VerdictEvent, suite: str) -> TestVerdict:
    """The verdict a verdict event records (of either stored shape)."""
    test = e.test_name(suite)
    return TestVerdict(test=test, title=e.title_for(test), kind=e.judged(), reason=e.reason_text(),
                       round=e.round_number())


def from_steady_state(e: SteadyStateEvent) -> TestVerdict:
    """The verdict of a PTS test that recorded only its steady-state determination (schema 1)."""
    return TestVerdict(test=e.test, title=e.test.upper(), kind="steady" if e.steady else "not-steady",
                       reason=str(e.note), round=e.steady_round())


def point_test(r: PointResult, suite: str) -> str:
    """The test a point belongs to: its `test` tag (PTS), else the suite (one test per run)."""
    return r.point.tags.test_or(suite)


def _invalid_text(points: Sequence[PointResult]) -> str:
    first = points[0]
    more = f" and {len(points) - 1} more" if len(points) > 1 else ""
    return f"{len(points)} invalid point(s): {first.point.label}: {first.reason}{more}"


def _stopped_text(run: Run) -> str:
    last = next((e for e in reversed(run.events) if isinstance(e, StopEvent)), None)
    done = point_counts(run).measured_text()  # the count every page shows (results/counts.py)
    if run.status == "interrupted":
        return f"the run was interrupted after {done}; `ssdlab resume DIR` continues it"
    if run.status == "failed":
        why = str(last.text) if last else ""
        return f"the run failed after {done}" + (f": {why}" if why else "")
    return f"the run has not finished ({done} so far; still running, or killed)"


def _went_on_without_some(r: PointResult) -> bool:
    """A finished point on several devices that some host or device failed in (--on-error continue): its
    measurement covers the others only, which counts like a point fio failed on."""
    m = r.measurement
    return r.status == "ok" and m is not None and any(p.status != "ok" for p in m.parts)


def run_verdicts(run: Run) -> RunVerdict:
    """Every test's verdict from the stored run: the suites' verdict events, invalid points, the run status."""
    tests = recorded_verdicts(run)
    invalid = _judged_invalid(run.points)
    failed = tuple(r for r in run.points if r.status == "failed" or _went_on_without_some(r)) \
        if run.status == "complete" else ()
    _mark_incomplete(tests, run.suite, invalid, failed=False)
    _mark_incomplete(tests, run.suite, failed, failed=True)
    if run.status != "complete":
        stopped = TestVerdict(test="run", title="run", kind="incomplete", reason=_stopped_text(run))
        return RunVerdict(run.status, (*tests.values(), stopped), invalid)
    if not tests:
        tests[run.suite] = _complete(run)
    return RunVerdict(run.status, tuple(tests.values()), invalid, failed)


def recorded_verdicts(run: Run) -> dict[str, TestVerdict]:
    """Test -> verdict, as the suites recorded them (the last event per test counts; a PTS test of schema 1
    that recorded only its steady-state determination is judged from it)."""
    tests = {v.test: v for v in (from_event(e, run.suite) for e in run.events if isinstance(e, VerdictEvent))}
    for e in run.events:
        if isinstance(e, SteadyStateEvent) and e.test and e.test not in tests:
            tests[e.test] = from_steady_state(e)
    return tests


def _mark_incomplete(tests: dict[str, TestVerdict], suite: str, bad: Sequence[PointResult], *,
                     failed: bool) -> None:
    """Tests with invalid points (or points fio failed on) are incomplete, unless already negative."""
    by_test: dict[str, list[PointResult]] = {}
    for r in bad:
        by_test.setdefault(point_test(r, suite), []).append(r)
    for key, pts in by_test.items():
        known = tests.get(key)
        if known is None and key != suite and suite in tests:
            key = suite
            known = tests[key]
        if known is not None and known.negative:  # already not steady / fail / incomplete: keep its reason
            continue
        why = _failed_text(pts) if failed else _invalid_text(pts)
        tests[key] = TestVerdict(test=key, title=known.title if known else key, kind="incomplete", reason=why,
                                 failed=failed)


def _failed_text(points: Sequence[PointResult]) -> str:
    first = points[0]
    return f"{len(points)} point(s) failed: {first.point.label}: {first.reason or '; '.join(first.warnings)}"


def _complete(run: Run) -> TestVerdict:
    """The one verdict of a finished run whose suite recorded none: complete, with what it measured."""
    counts = point_counts(run)
    reason = counts.measured_text() + (f", {counts.skipped} skipped (see their reasons)" if counts.skipped else "")
    return TestVerdict(test=run.suite, title=run.suite, kind="complete", reason=reason)


def exit_code(run: Run) -> int:
    """The exit code of a stored run's verdicts (what `run`, `resume` and `report` return)."""
    return run_verdicts(run).exit_code


def summary_lines(verdict: RunVerdict) -> list[str]:
    """The verdict panel as plain lines (console end summary; also used by tests)."""
    lines = [f"verdict: {verdict.headline} (exit code {verdict.exit_code})"]
    lines.extend(f"  {t.title}: {t.label}" + (f" - {t.reason}" if t.reason else "") for t in verdict.tests)
    return lines
