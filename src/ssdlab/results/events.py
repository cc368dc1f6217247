"""Run events: what happened to a run besides its points, in order (run.json "events"): preparation notes, drive
settings changed and restored, interruptions and resumes, and what each suite concluded (steady-state
determinations, WSAT/XSR/HIR summaries, the integrity manifest, one verdict per test). Each kind is a typed
record (results/record.py) chosen by its `kind` when a run is loaded (`event_from_dict`).

Verdict events of every stored shape read the same: today's {"kind": "verdict", "test", "title", "verdict",
"reason", "round", "passed", "text"} and the earlier one ACT and integrity still write, {"kind": "verdict",
"suite", "passed", "text"}, read as a pass or fail of the suite's one test with the text as its reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Self

from ssdlab.results.record import Key, Record

VerdictKind = Literal["steady", "not-steady", "incomplete", "pass", "fail", "complete"]
VERDICT_KINDS: tuple[VerdictKind, ...] = ("steady", "not-steady", "incomplete", "pass", "fail", "complete")
_NONE: Mapping[str, Any] = MappingProxyType({})


class RunEvent(Record):
    """One event: its kind, when it happened (absent in some suites' records) and a sentence."""

    __slots__ = ()
    KIND: ClassVar[str] = ""  # the kind a subclass records ('' for kinds with nothing beyond a text)
    kind = Key[str]("")
    time = Key[str]("")
    text = Key[str]("")

    @classmethod
    def of(cls, **values: Any) -> Self:
        if cls.KIND and values.get("kind") != cls.KIND:
            raise TypeError(f"{cls.__name__} records kind {cls.KIND!r}, not {values.get('kind')!r}")
        return super().of(**values)


class StopEvent(RunEvent):
    """The run stopped: kind 'interrupted' (Ctrl-C, SIGTERM) or 'failed'."""

    __slots__ = ()
    points_done = Key[int | None](None)


class ResumeEvent(RunEvent):
    """`ssdlab resume` continued the run."""

    __slots__ = ()
    KIND = "resume"
    previous_status = Key[str]("")
    points_done = Key[int | None](None)
    repeated = Key[Sequence[str]](())  # points that ran again (failed, or killed mid-run)
    resumed_at = Key[str]("")
    stopped_fio_pids = Key[Sequence[int]](())


class VerdictEvent(RunEvent):
    """One test's verdict, as a suite's conclude() records it (results/verdict.py reads it)."""

    __slots__ = ()
    KIND = "verdict"
    test = Key[str | None](None)
    title = Key[str | None](None)
    verdict = Key[str | None](None)  # one of VERDICT_KINDS
    reason = Key[str | None](None)
    round = Key[int | None](None)  # steady at round N
    passed = Key[bool](False)
    suite = Key[str | None](None)  # the earlier shape: the suite whose one test this is
    source = Key[str | None](None)  # who recorded it when not the run ('ssdlab verify')
    point = Key[str | None](None)  # the point it judges ('ssdlab verify')
    cov_pct = Key[float | None](None)  # stability: the coefficient of variation and p99 it judged
    p99_us = Key[float | None](None)
    consistency_read = Key[float | None](None)  # stability: 0.1st percentile of 1-s IOPS over the mean
    consistency_write = Key[float | None](None)
    highest_passing_load = Key[float | None](None)  # ACT: the highest load that passed, and each level
    levels = Key[Sequence[Mapping[str, Any]]](())
    checked_bytes = Key[int | None](None)  # integrity
    mismatches = Key[int | None](None)
    unreadable = Key[int | None](None)

    def test_name(self, suite: str) -> str:
        """The test judged: its test, else the suite it names, else the run's suite."""
        return str(self.test or self.suite or suite)

    def judged(self) -> VerdictKind:
        """The verdict: as recorded, or, in the earlier shape, pass or fail."""
        return next((k for k in VERDICT_KINDS if k == self.verdict), "pass" if self.passed else "fail")

    def reason_text(self) -> str:
        """Why: the reason, or, in the earlier shape, the text."""
        return str(self.text if self.reason is None else self.reason)

    def title_for(self, test: str) -> str:
        return str(self.title or ("ACT" if test == "act" else test))

    def round_number(self) -> int | None:
        return self.round if isinstance(self.round, int) else None


class SteadyStateEvent(RunEvent):
    """A PTS test's steady-state determination (runs of schema 1 recorded only this, no verdict event)."""

    __slots__ = ()
    KIND = "pts-steady-state"
    test = Key[str]("")
    steady = Key[bool](False)
    window = Key[Sequence[int]](())  # the rounds of the measurement window
    note = Key[str]("")
    determinations = Key[Mapping[str, Any]](_NONE)  # variable -> range, slope excursion, fit, steady
    devices = Key[Mapping[str, Any]](_NONE)  # several devices in lockstep: each device's determinations
    pc_steady = Key[bool | None](None)  # CBW/DIRTH: the preconditioning's own steady state
    pc_rounds = Key[int | None](None)
    selection = Key[Mapping[str, Any] | None](None)  # CBW/DIRTH: the points chosen for each role

    def steady_round(self) -> int | None:
        """The round steady state was reached at (the window's last), when it was."""
        window = self.window
        return int(window[-1]) if self.steady and window and isinstance(window[-1], int) else None


class WsatEvent(RunEvent):
    """How PTS WSAT ended."""

    __slots__ = ()
    KIND = "pts-wsat"
    samples = Key[int](0)
    written_bytes = Key[int](0)
    note = Key[str]("")


class XsrEvent(RunEvent):
    """PTS XSR's recoveries between its segments."""

    __slots__ = ()
    KIND = "pts-xsr"
    finished = Key[bool](False)
    samples = Key[Mapping[str, int]](_NONE)
    recovery = Key[Mapping[str, Any]](_NONE)
    c_vs_a = Key[float | None](None)


class HirEvent(RunEvent):
    """PTS HIR's preconditioning and its wait states."""

    __slots__ = ()
    KIND = "pts-hir"
    preconditioning = Key[str]("")
    pc_samples = Key[int](0)
    steady = Key[bool | None](None)
    steady_iops = Key[float | None](None)
    wait_states = Key[Mapping[str, Any]](_NONE)


class ManifestEvent(RunEvent):
    """What an integrity run wrote, for `ssdlab verify` to check again."""

    __slots__ = ()
    KIND = "integrity-manifest"
    manifest_version = Key[int | None](None)
    write_point = Key[str]("")
    written = Key[str]("")
    span_offset = Key[int](0)
    span_bytes = Key[int | None](None)
    block_size = Key[int | None](None)
    checksum = Key[str]("")
    seed = Key[int](0)
    data = Key[str]("")
    fio_version = Key[str]("")
    ioengine = Key[str]("")
    target = Key[Mapping[str, Any]](_NONE)

    def manifest(self) -> dict[str, Any]:
        """The manifest itself (the event without its time and kind)."""
        return {k: v for k, v in self.items() if k not in ("time", "kind")}


EVENT_TYPES: Mapping[str, type[RunEvent]] = {
    "interrupted": StopEvent, "failed": StopEvent, "resume": ResumeEvent, "verdict": VerdictEvent,
    "pts-steady-state": SteadyStateEvent, "pts-wsat": WsatEvent, "pts-xsr": XsrEvent, "pts-hir": HirEvent,
    "integrity-manifest": ManifestEvent,
}


EVENT_CLASSES = frozenset({RunEvent, *EVENT_TYPES.values()})


def event_from_dict(d: Mapping[str, Any]) -> RunEvent:
    """The typed event of a stored one (any kind; kinds without a type of their own are plain RunEvents)."""
    if type(d) in EVENT_CLASSES:
        return d  # type: ignore[return-value]  # (an exact type test: cheaper than isinstance on a Mapping)
    return EVENT_TYPES.get(str(d.get("kind", "")), RunEvent)(d)
