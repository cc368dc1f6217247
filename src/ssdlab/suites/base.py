"""Suites are data-driven plans: `plan()` is pure (printable by `ssdlab plan`, with an ETA);
`next_points()` says what remains given the results stored so far, which makes resume trivial
and lets stateful procedures (steady-state rounds, find-max curves) unfold phase by phase.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ssdlab.results.model import Run, TestPoint

if TYPE_CHECKING:
    from ssdlab.targets.base import Target


PointRuns = tuple[tuple[TestPoint, int], ...]


@dataclass(frozen=True)
class Goal:
    """Points of one shape that run until they have moved `bytes` (WSAT: until 4x the capacity is written), at
    most `at_most` of them, when the run has not shown yet how much one point moves: the ETA's estimator, which
    knows the target, says how many to expect."""

    point: TestPoint
    bytes: float
    at_most: int


@dataclass(frozen=True)
class Outlook:
    """What a run still has to do, for ETAs: runs of (point, count), a point standing for `count` points of its
    shape, in the worst case and as expected from what the run has shown so far (None: the worst case is
    expected), plus, expected too, `goals` whose count the estimator works out. The first point of `worst` is
    the next one to run."""

    worst: PointRuns = ()
    expected: PointRuns | None = None
    goals: tuple[Goal, ...] = ()

    @property
    def next_point(self) -> TestPoint | None:
        return self.worst[0][0] if self.worst else None

    @staticmethod
    def of(points: list[TestPoint]) -> Outlook:
        """The outlook of a known list of remaining points."""
        return Outlook(worst=tuple((p, 1) for p in points))


@dataclass(frozen=True)
class TargetTraits:
    """What a plan may depend on about the kind of target it runs on (PlanContext.traits): suites plan from
    these, never from the kind's name."""

    device: bool = False  # a block device: data it holds was written before the run (quick prefills it)
    null_engine: bool = False  # fio's null engine: no storage at all
    simulated: bool = False  # the simulated SSD: one workload per point, no paced concurrent streams
    no_data: str = ""  # why reads do not return what was written ('' when they do)
    not_device: str = ""  # why results are not a device's (SNIA PTS's scaled-run reasons; '' for a device)


def traits_of(kind: str) -> TargetTraits:
    """The traits of a kind of target, by the kind a Target (and run.json's target) records."""
    found = _TRAITS.get(kind)
    return found if found is not None else TargetTraits(not_device=f"the target is a {kind} target, not a device")


_TRAITS = {
    "block": TargetTraits(device=True),
    "file": TargetTraits(not_device="the target is a file on a filesystem, not a device"),
    "null": TargetTraits(null_engine=True, no_data="fio's null engine stores no data",
                         not_device="the target is a null target, not a device"),
    "sim": TargetTraits(simulated=True, no_data="the simulated SSD models timing, not data",
                        not_device="the target is a sim target, not a device"),
}


@dataclass(frozen=True)
class PlanContext:
    """Everything a plan may depend on: target facts and the user's options. No I/O happens here."""

    capacity: int
    logical_block_size: int = 512
    target_kind: str = "file"
    runtime_s: float | None = None  # --runtime, the same option in every suite
    ramp_s: float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    footprint: int | None = None  # --footprint in bytes: I/O stays in the first N bytes (capacity is limited too)
    misalign: int = 0  # --misalign: bytes added to every I/O offset (unaligned 4K writes, S3500 review)
    devices: int = 1  # number of --target devices (multi-target suites split their load over them)
    target: Mapping[str, Any] = field(default_factory=dict)  # the target's info() record, for wall-clock ETAs

    @property
    def traits(self) -> TargetTraits:
        """What the plan may depend on about the target's kind."""
        return traits_of(self.target_kind)


class Suite(ABC):
    name: str = ""
    summary: str = ""
    writes: bool = False
    default_runtime_s: float = 5.0
    point_overhead_s: float = 0.5  # fio start-up, layout checks, parsing: used for the ETA
    multi_target: bool = False  # splits its load over several --target devices (ACT); other suites run it on each

    def suite_options(self) -> list[SuiteOption]:
        """Options this suite accepts beyond the common ones (see SuiteOption)."""
        return []

    def runtime(self, ctx: PlanContext) -> float:
        return ctx.runtime_s if ctx.runtime_s is not None else self.default_runtime_s

    @abstractmethod
    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        """Every point the suite may run (the worst case for adaptive suites), in order."""

    def next_points(self, ctx: PlanContext, run: Run) -> list[TestPoint]:
        """Points still to run, given what `run` holds. Static suites: the plan minus finished points."""
        done = run.done_ids()
        return [p for p in self.plan(ctx) if p.id not in done]

    def outlook(self, ctx: PlanContext, run: Run) -> Outlook:
        """What remains, for the run's ETA: next_points() as the worst and expected case. Adaptive suites
        override it with what they expect (and to avoid listing every worst-case point one by one)."""
        return Outlook.of(self.next_points(ctx, run))

    def validate(self, ctx: PlanContext, target: Target) -> None:
        """Refuse what this suite cannot do on `target` with these options (raise UsageError or TargetError,
        one line). Called by the pre-flight check (preflight.check_plan) before anything is created or
        written; the plan itself is validated there too. Default: nothing to add."""
        return None

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        """Add suite-level warnings and verdicts to a finished run: one verdict event per test, built with
        verdict.verdict_event (default: none; the run's verdict is then 'complete', or 'incomplete' when a
        point was invalid)."""
        return run

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        """Lines `ssdlab plan` prints under the table (e.g. worst case, scaled-run notice)."""
        return []

    def plan_extra(self, ctx: PlanContext) -> dict[str, Any]:
        """Extra top-level keys for `ssdlab plan --json` (e.g. ACT's derived rates); default none."""
        return {}


def apply_common(ctx: PlanContext, point: TestPoint) -> TestPoint:
    """The point with the common --footprint/--misalign applied (the orchestrator runs every point through it)."""
    if ctx.footprint is None and not ctx.misalign:
        return point
    import dataclasses

    w = point.workload
    size = ctx.capacity if w.size is None else min(w.size, ctx.capacity)
    workload = dataclasses.replace(w, size=size, offset=w.offset + ctx.misalign)
    tags = point.tags
    if ctx.footprint is not None:
        tags = tags.replace(footprint_bytes=ctx.footprint)
    if ctx.misalign:
        tags = tags.replace(misalign_bytes=ctx.misalign)
    return dataclasses.replace(point, workload=workload, tags=tags)


def common_limits(capacity: int, logical_block_size: int, footprint: str | None,
                  misalign: int | None) -> tuple[int, int | None, int]:
    """(active capacity, footprint bytes, misalign bytes) from --footprint N|N% and --misalign BYTES."""
    from ssdlab.errors import UsageError
    from ssdlab.units import parse_size

    shift = int(misalign or 0)
    if shift < 0 or shift % logical_block_size:
        raise UsageError(f"--misalign {shift} must be a multiple of the target's logical block size "
                         f"{logical_block_size} B (direct I/O cannot address smaller units)")
    limit: int | None = None
    if footprint:
        text = footprint.strip()
        if text.endswith("%"):
            try:
                pct = float(text[:-1])
            except ValueError:
                raise UsageError(f"bad --footprint {footprint!r}: use bytes (64GiB) or a percentage (5%)") from None
            if not 0 < pct <= 100:
                raise UsageError(f"--footprint {footprint} is out of range: use more than 0% and at most 100%")
            limit = int(capacity * pct / 100)
        else:
            limit = parse_size(text)
        limit -= limit % max(logical_block_size, 4096)
        if limit <= 0:
            raise UsageError(f"--footprint {footprint} leaves no room for I/O on this target")
        if limit > capacity:
            raise UsageError(f"--footprint {footprint} is larger than the target ({capacity} bytes)")
    active = min(limit or capacity, capacity - shift)
    if active <= 0:
        raise UsageError(f"--misalign {shift} leaves no room for I/O on this target")
    return active, limit, shift


REGISTRY: dict[str, Suite] = {}  # filled by register(); ssdlab.suites.all_suites() loads the built-ins first


def register(suite: Suite) -> Suite:
    REGISTRY[suite.name] = suite
    return suite


@dataclass(frozen=True)
class SuiteOption:
    """A suite-specific command-line option (e.g. PTS `--spec`). Declared by suites, added to run/plan.

    `name` is the long option without dashes ('spec', 'tq', 'until-steady'); the value lands in
    PlanContext.options[name with '-' replaced by '_'] (default when not given). `kind` is 'str',
    'int', 'float', 'flag', 'size', 'path' or 'toml' (a file read when the option is given: the value stored is
    {"file": absolute path, "table": its contents}, see load_toml_option, so a stored run keeps them).
    A 'path' value is stored absolute (the file a resumed run reads again).
    `choices` restricts str values. Several suites may declare the
    same name with the same kind; it is one CLI option.
    """

    name: str
    kind: str = "str"
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] = ()
    repeat: bool = False  # may be given several times (value is a list)

    @property
    def key(self) -> str:
        return self.name.replace("-", "_")


def load_toml_option(path: str) -> dict[str, Any]:
    """The value of a 'toml' suite option: {"file": absolute path, "table": the parsed file}. A file that is
    missing or not TOML is a UsageError (one line)."""
    import tomllib
    from pathlib import Path

    from ssdlab.errors import UsageError

    p = Path(path).expanduser()
    try:
        table = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not a TOML file: {exc}") from None
    return {"file": str(p.resolve()), "table": table}
