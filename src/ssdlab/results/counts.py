"""The one count of a run's points: what the console, the report's header and tables, the verdict, the catalog
and `serve` say a run measured.

A measured point is a point of the suite's measurement phase whose result is ok. Everything else is listed
apart and never added to it: steps that prepare the drive (purge, preconditioning, prefill), checks that are
not the suite's (the host-ceiling check of a multi-device run), and points that did not measure (invalid,
failed, skipped). A point run again (a failed attempt, then the rerun) counts once, as its last result.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssdlab.results.model import PointResult, Run

MEASURE = "measure"
CHECK_PHASES = {"ceiling": "host-ceiling check"}  # points outside the suite's plan, by phase: what to call them
STEP_NAMES = {"purge": "purge", "precondition": "preconditioning"}


@dataclass(frozen=True)
class PointCounts:
    """A run's points by what they are (see the module docstring)."""

    measured: int = 0  # ok points of the measurement phase: THE count
    invalid: int = 0  # measurement points that measured too little (verdict.point_problem)
    failed: int = 0  # measurement points fio failed on (their last attempt)
    skipped: int = 0  # measurement points the target cannot run (reason stored)
    steps: int = 0  # purge, preconditioning, prefill: finished steps that are not measurements
    step_kinds: tuple[str, ...] = ()  # their names, in run order ("purge", "preconditioning")
    checks: tuple[str, ...] = ()  # checks outside the suite's plan, by name ("host-ceiling check")

    @property
    def not_measured(self) -> int:
        """Measurement points without a result to count."""
        return self.invalid + self.failed + self.skipped

    def measured_text(self) -> str:
        """'425 measured points' ('1 measured point')."""
        return f"{self.measured} measured point{'' if self.measured == 1 else 's'}"

    def table_text(self) -> str:
        """'425 measured points, 2 invalid': the count and the measurement points without a result (the rows of
        a results table)."""
        others = [f"{n} {name}" for n, name in ((self.invalid, "invalid"), (self.failed, "failed"),
                                                (self.skipped, "skipped")) if n]
        return ", ".join([self.measured_text(), *others])

    def text(self) -> str:
        """'425 measured points, 2 invalid; 9 steps (purge, preconditioning); host-ceiling check': the count and,
        apart, what else the run holds."""
        out = self.table_text()
        if self.steps:
            out += f"; {self.steps} step{'' if self.steps == 1 else 's'} ({', '.join(self.step_kinds)})"
        if self.checks:
            out += "; " + ", ".join(self.checks)
        return out


def last_results(run: Run) -> list[PointResult]:
    """Each point's last result, in run order of their first result (a rerun replaces its failed attempt)."""
    last: dict[str, PointResult] = {}
    for r in run.points:
        last[r.point.id] = r
    return list(last.values())


def is_measured(result: PointResult) -> bool:
    """Whether a result is one of the counted measured points."""
    return result.status == "ok" and result.point.phase == MEASURE


def point_counts(run: Run) -> PointCounts:
    """The run's points counted once, as every page shows them."""
    measured = invalid = failed = skipped = steps = 0
    step_kinds: list[str] = []
    checks: list[str] = []
    for r in last_results(run):
        phase = r.point.phase
        if phase in CHECK_PHASES:
            checks.append(CHECK_PHASES[phase] + ("" if r.status == "ok" else f" ({r.status})"))
        elif phase != MEASURE:
            if r.status == "ok":
                steps += 1
                name = STEP_NAMES.get(phase, phase)
                if name not in step_kinds:
                    step_kinds.append(name)
        elif r.status == "ok":
            measured += 1
        elif r.status == "invalid":
            invalid += 1
        elif r.status == "failed":
            failed += 1
        elif r.status == "skipped":
            skipped += 1
    return PointCounts(measured, invalid, failed, skipped, steps, tuple(step_kinds), tuple(checks))
