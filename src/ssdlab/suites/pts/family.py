"""The SNIA PTS 2.0 family as one ordered list of tests, and the suites built from it.

Each test (IOPS, TP, LAT, WSAT, HIR, XSR, ...) registers a `PtsTest`: its plan, what it still has to run
given a stored run, its conclusion, its plan notes and the options only it uses. A suite is a selection of
tests run one after the other in the family's order: `pts-hir` runs HIR alone, `pts` runs the tests named by
`--pts-tests` (default: the four of the README's main job). Every test still purges on its own.

The report (ssdlab.report.pts) asks `tests_for(run)` which tests a stored run selected, in the same order.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ssdlab.errors import UsageError
from ssdlab.results.model import Run, TestPoint
from ssdlab.suites.base import Goal, Outlook, PlanContext, Suite, SuiteOption, register
from ssdlab.suites.pts.common import (
    SPEC_RUNTIME_S,
    PtsSettings,
    RoundTest,
    common_notes,
    expected_rounds,
    plan_round_test,
    pts_options,
    remaining_round_test,
    round_conclude,
    round_notes,
    round_test_outlook,
    scaled_warning,
    settings,
)


def _nothing(s: PtsSettings) -> None:
    return None


# what a test has left as an ETA outlook (suites.base.Outlook: worst and expected runs of points), given the rounds the
# run's finished round tests needed so far (it appends those it finishes: later tests expect as many)
OutlookFn = Callable[[PtsSettings, Run, list[int]], Outlook]


@dataclass(frozen=True)
class PtsTest:
    """One test of the PTS family, as a suite runs it (pure functions of the settings and the stored run)."""

    key: str  # its name in --pts-tests: iops, tp, lat, wsat, hir, xsr, ...
    title: str
    plan: Callable[[PtsSettings], list[TestPoint]]  # every point it may run (the worst case)
    remaining: Callable[[PtsSettings, Run], list[TestPoint]]  # what it still has to run ([] when done)
    conclude: Callable[[PtsSettings, Run], Run]  # events/warnings once the run is over
    notes: Callable[[PtsSettings], list[str]]  # `ssdlab plan` lines about its procedure
    options: tuple[SuiteOption, ...] = ()  # options only this test uses
    validate: Callable[[PtsSettings], None] = _nothing  # raise UsageError for settings it cannot run
    round_tests: tuple[RoundTest, ...] = ()  # the round tests it consists of (IOPS, TP 128/1024, LAT)
    in_default: bool = True  # part of `pts` when --pts-tests is not given
    outlook: OutlookFn | None = None  # None: what `remaining` lists, each point once (worst = expected)
    # what the outlook of a test that has not started reads from the rest of the run besides the finished tests'
    # rounds (a cheap key: its outlook is kept while the key holds); None: nothing
    outlook_depends: Callable[[PtsSettings, Run], Hashable] | None = None

    def outlook_of(self, s: PtsSettings, run: Run, finished: list[int]) -> Outlook:
        if self.outlook is not None:
            return self.outlook(s, run, finished)
        return Outlook.of(self.remaining(s, run))


# the order tests run in and reports show them: the spec's (tests not listed here come after, as registered)
FAMILY_ORDER = ("iops", "tp", "lat", "wsat", "hir", "xsr", "cbw", "dirth")

_TESTS: dict[str, PtsTest] = {}


def register_test(test: PtsTest) -> PtsTest:
    """Add a test to the family (kept in FAMILY_ORDER, whatever the import order)."""
    _TESTS[test.key] = test
    rank = {k: i for i, k in enumerate(FAMILY_ORDER)}
    ordered = sorted(_TESTS.values(), key=lambda t: rank.get(t.key, len(rank)))
    _TESTS.clear()
    _TESTS.update((t.key, t) for t in ordered)
    return test


def family() -> dict[str, PtsTest]:
    """Every registered test, in run order."""
    return dict(_TESTS)


def round_family_test(key: str, title: str, tests: Sequence[RoundTest], options: Sequence[SuiteOption] = (),
                      validate: Callable[[PtsSettings], None] = _nothing) -> PtsTest:
    """A family test made of round tests (purge, WIPC, rounds until steady state), run one after the other."""
    tests = tuple(tests)

    def plan(s: PtsSettings) -> list[TestPoint]:
        for t in tests:
            t.trackers(s)  # validates that a reduced matrix keeps every tracking point
        return [p for t in tests for p in plan_round_test(t, s)]

    def remaining(s: PtsSettings, run: Run) -> list[TestPoint]:
        for i, t in enumerate(tests):
            rest = remaining_round_test(t, s, run)
            if rest:
                return rest + [p for later in tests[i + 1:] for p in plan_round_test(later, s)]
        return []

    def conclude(s: PtsSettings, run: Run) -> Run:
        for t in tests:
            run = round_conclude(t, s, run)
        return run

    def notes(s: PtsSettings) -> list[str]:
        return [line for t in tests for line in round_notes(t, s)]

    def outlook(s: PtsSettings, run: Run, finished: list[int]) -> Outlook:
        """Worst case: every round test runs max-rounds rounds. Expected: as many rounds as the finished tests
        needed (5 before any finished), one more at a time while a test runs on without steady state."""
        worst: list[tuple[TestPoint, int]] = []
        expected: list[tuple[TestPoint, int]] = []
        for t in tests:
            w, e, state = round_test_outlook(t, s, run, expected_rounds(finished))
            if state is not None and state.finished:
                finished.append(state.rounds_done)
            worst += w
            expected += e
        return Outlook(tuple(worst), tuple(expected))

    return PtsTest(key=key, title=title, plan=plan, remaining=remaining, conclude=conclude, notes=notes,
                   options=tuple(options), validate=validate, round_tests=tests, outlook=outlook)


# ------------------------------------------------------------------ selection

TESTS_OPTION = SuiteOption(
    "pts-tests", "str", None, "pts only: comma list of the PTS tests to run, in the spec's order whatever the "
    "order given, or 'all' (default: iops,tp,lat,wsat; the family: iops,tp,lat,wsat,hir,xsr,...)")


def default_keys() -> tuple[str, ...]:
    return tuple(k for k, t in _TESTS.items() if t.in_default)


def parse_selection(text: str | None) -> tuple[str, ...]:
    """--pts-tests: keys in family order; None or empty: the default selection; 'all': every test."""
    if text is None or not str(text).strip():
        return default_keys()
    words = [w.strip().lower() for w in str(text).split(",") if w.strip()]
    if words == ["all"]:
        return tuple(_TESTS)
    unknown = [w for w in words if w not in _TESTS]
    if unknown or not words:
        raise UsageError(f"--pts-tests {text!r}: unknown test {', '.join(unknown) or '(none)'}; "
                         f"use a comma list of {', '.join(_TESTS)}, or all")
    return tuple(k for k in _TESTS if k in words)


def selection(suite_name: str, options: Mapping[str, Any]) -> list[PtsTest]:
    """The tests a PTS suite runs with these options (a single-test suite: its own test)."""
    from ssdlab.suites.base import REGISTRY

    suite = REGISTRY.get(suite_name)  # every PTS suite is registered once this package is imported
    if isinstance(suite, FamilySuite) and suite.fixed is not None:
        return [_TESTS[k] for k in suite.fixed if k in _TESTS]
    return [_TESTS[k] for k in parse_selection(options.get("pts_tests"))]


def tests_for(run: Run) -> list[PtsTest]:
    """The tests a stored run selected, in run order (runs of older versions: the suite's default)."""
    return selection(run.suite, dict(run.options.suite_options))


# ------------------------------------------------------------------ the suites

class FamilySuite(Suite):
    """A PTS suite: the selected tests of the family, run one after the other."""

    writes = True
    default_runtime_s = SPEC_RUNTIME_S

    def __init__(self, name: str, summary: str, fixed: tuple[str, ...] | None = None) -> None:
        self.name = name
        self.summary = summary
        self.fixed = fixed  # None: selected by --pts-tests
        # selected()'s last answer: (context, its options as they were, the family, settings, tests)
        self._selected_memo: tuple[PlanContext, dict[str, Any], tuple[PtsTest, ...], PtsSettings,
                                   tuple[PtsTest, ...]] | None = None
        # the outlooks of tests that have not started (they depend on the settings and the rounds earlier tests
        # needed only): (settings, test, those rounds) -> outlook
        self._later: dict[tuple[PtsSettings, str, tuple[int, ...], Hashable], Outlook] = {}

    def _candidates(self) -> list[PtsTest]:
        keys = self.fixed if self.fixed is not None else tuple(_TESTS)
        return [_TESTS[k] for k in keys if k in _TESTS]

    def suite_options(self) -> list[SuiteOption]:
        out = pts_options()
        seen = {o.name for o in out}
        for t in self._candidates():
            for o in t.options:
                if o.name not in seen:
                    seen.add(o.name)
                    out.append(o)
        if self.fixed is None:
            out.append(TESTS_OPTION)
        return out

    def selected(self, ctx: PlanContext) -> tuple[PtsSettings, list[PtsTest]]:
        """Validated settings and the selected tests; options of tests not selected are a usage error.
        A pure function of the context: the run loop asks after every point, so the last answer is kept
        for as long as it is asked about the same context with the same options."""
        memo = self._selected_memo
        if memo is not None and memo[0] is ctx and memo[1] == ctx.options \
                and memo[2] == tuple(_TESTS.values()):
            return memo[3], list(memo[4])
        s, tests = self._selected(ctx)
        self._selected_memo = (ctx, copy.deepcopy(ctx.options), tuple(_TESTS.values()), s, tuple(tests))
        return s, tests

    def _selected(self, ctx: PlanContext) -> tuple[PtsSettings, list[PtsTest]]:
        s = settings(ctx)
        tests = selection(self.name, ctx.options)
        chosen = {t.key for t in tests}
        allowed = {o.name for t in tests for o in t.options}  # an option several tests share (CBW and DIRTH)
        for t in self._candidates():
            if t.key in chosen:
                continue
            for o in t.options:
                if o.name in allowed:
                    continue
                value = ctx.options.get(o.key)
                if value is not None and value != o.default:
                    raise UsageError(f"--{o.name} applies to the {t.title} test, which this run does not include"
                                     + (" (add it to --pts-tests)" if self.fixed is None else ""))
        for t in tests:
            t.validate(s)
        return s, tests

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        s, tests = self.selected(ctx)
        return [p for t in tests for p in t.plan(s)]

    def next_points(self, ctx: PlanContext, run: Run) -> list[TestPoint]:
        s, tests = self.selected(ctx)
        for i, t in enumerate(tests):
            rest = t.remaining(s, run)
            if rest:
                return rest + [p for later in tests[i + 1:] for p in later.plan(s)]
        return []

    def outlook(self, ctx: PlanContext, run: Run) -> Outlook:
        """The selected tests' outlooks one after the other (a finished test adds nothing)."""
        s, tests = self.selected(ctx)
        finished: list[int] = []
        worst: list[tuple[TestPoint, int]] = []
        expected: list[tuple[TestPoint, int]] = []
        goals: list[Goal] = []
        started = False  # tests run in order: after the first with something left, none has started
        for t in tests:
            if started:
                key = (s, t.key, tuple(finished), t.outlook_depends(s, run) if t.outlook_depends else None)
                if key not in self._later:
                    self._later[key] = t.outlook_of(s, run, finished)
                o = self._later[key]
            else:
                o = t.outlook_of(s, run, finished)
                started = bool(o.worst)
            worst += o.worst
            expected += o.expected if o.expected is not None else o.worst
            goals += o.goals
        return Outlook(tuple(worst), tuple(expected), tuple(goals))

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        s, tests = self.selected(ctx)
        for t in tests:
            run = t.conclude(s, run)
        return scaled_warning(run, s)

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        s, tests = self.selected(ctx)
        notes = [line for t in tests for line in t.notes(s)]
        if self.fixed is None:
            notes.insert(0, "PTS tests in this run: " + ", ".join(t.key for t in tests)
                         + " (--pts-tests; the family: " + ",".join(_TESTS) + ")")
        return notes + common_notes(s)


def register_suite(name: str, summary: str, fixed: tuple[str, ...] | None = None) -> FamilySuite:
    suite = FamilySuite(name, summary, fixed)
    register(suite)
    return suite
