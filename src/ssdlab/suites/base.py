"""Suites are data-driven plans: `plan()` is pure (printable by `ssdlab plan`, with an ETA);
`next_points()` says what remains given the results stored so far, which makes resume trivial
and lets stateful procedures (steady-state rounds, find-max curves) unfold phase by phase.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from ssdlab.model import Run, TestPoint


@dataclass(frozen=True)
class PlanContext:
    """Everything a plan may depend on: target facts and the user's options. No I/O happens here."""

    capacity: int
    logical_block_size: int = 512
    target_kind: str = "file"
    runtime_s: float | None = None  # --runtime, the same option in every suite
    ramp_s: float | None = None
    options: dict[str, Any] = field(default_factory=dict)


class Suite(ABC):
    name: str = ""
    summary: str = ""
    writes: bool = False
    default_runtime_s: float = 5.0
    point_overhead_s: float = 0.5  # fio start-up, layout checks, parsing: used for the ETA
    multi_target: bool = False  # accepts several --target (e.g. ACT over several devices)

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

    def eta_seconds(self, ctx: PlanContext) -> float:
        return sum(p.est_seconds + self.point_overhead_s for p in self.plan(ctx))

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        """Add suite-level warnings/verdicts to a finished run (default: nothing)."""
        return run

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        """Lines `ssdlab plan` prints under the table (e.g. worst case, scaled-run notice)."""
        return []


_REGISTRY: dict[str, Suite] = {}


def register(suite: Suite) -> Suite:
    _REGISTRY[suite.name] = suite
    return suite


def all_suites() -> dict[str, Suite]:
    from ssdlab.suites import load_builtin

    load_builtin()
    return dict(_REGISTRY)


@dataclass(frozen=True)
class SuiteOption:
    """A suite-specific command-line option (e.g. PTS `--spec`). Declared by suites, added to run/plan.

    `name` is the long option without dashes ('spec', 'tq', 'until-steady'); the value lands in
    PlanContext.options[name with '-' replaced by '_'] (default when not given). `kind` is 'str',
    'int', 'float', 'flag' or 'size'. `choices` restricts str values. Several suites may declare the
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
