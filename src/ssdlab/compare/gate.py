"""Regression gates over a comparison: `--fail-on METRIC:THRESHOLD[:SCOPE]` (pytest-benchmark's compare-fail,
with significance).

  read_iops:-5%                 fail when read IOPS drop by 5 % or more against the baseline
  write_p99_99_us:+20%          fail when write p99.99 latency rises by 20 % or more
  iops:5%                       no sign: the regression direction of the metric (IOPS down, latency up)
  iops:-5%:pts-iops             only points of suite (or family) pts-iops
  lat_mean_us:+10%:iops/rnd4k-* only points whose key or label matches the glob

A change past its threshold fails the gate only when the comparison calls it significant; with `strict` it
fails whatever the significance (and a point missing from a run fails too). Everything past a threshold that
did not fail is still listed, with the reason it did not.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from ssdlab import formatting, metrics
from ssdlab.analysis.significance import Judgement
from ssdlab.compare.matching import Comparison, Row, metric_name
from ssdlab.errors import UsageError


@dataclass(frozen=True)
class Rule:
    metric: str
    threshold: float  # signed fraction: -0.05 fails at a drop of 5 % or more, +0.2 at a rise of 20 % or more
    scope: str | None
    text: str

    def matches(self, row: Row, suites: Sequence[str]) -> bool:
        if self.scope is None:
            return True
        names = [row.key, row.label, row.family, *suites]
        return any(fnmatch.fnmatchcase(n, self.scope) for n in names)

    def past(self, change: float) -> bool:
        return change <= self.threshold if self.threshold < 0 else change >= self.threshold


def parse_rule(text: str) -> Rule:
    """One --fail-on expression; a bad one raises UsageError naming what is wrong."""
    parts = text.split(":", 2)
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise UsageError(f"--fail-on {text!r}: use METRIC:THRESHOLD[:SCOPE], e.g. read_iops:-5% or "
                         "write_p99_99_us:+20%:pts-iops")
    try:
        metric = metric_name(parts[0])
    except KeyError:
        raise UsageError(f"--fail-on {text!r}: unknown metric {parts[0]!r}; use one of "
                         f"{', '.join(sorted(metrics.COMPARED))}") from None
    raw = parts[1].strip()
    if not raw.endswith("%"):
        raise UsageError(f"--fail-on {text!r}: give the threshold in percent, e.g. -5% or +20%")
    try:
        value = float(raw[:-1]) / 100.0
    except ValueError:
        raise UsageError(f"--fail-on {text!r}: {raw!r} is not a percentage") from None
    if value == 0 or value != value:
        raise UsageError(f"--fail-on {text!r}: the threshold must be a non-zero percentage")
    info = metrics.get(metric)
    worse = -1.0 if info.higher_is_better else 1.0
    if raw[0] not in "+-":
        value = worse * abs(value)
    elif value * worse < 0:
        direction = "drop" if info.higher_is_better else "rise"
        raise UsageError(f"--fail-on {text!r} would fail on an improvement: {info.label} regresses when it "
                         f"{direction}s; use {metric}:{'-' if info.higher_is_better else '+'}{abs(value):.0%}")
    scope = parts[2] if len(parts) == 3 and parts[2] else None
    return Rule(metric, value, scope, text)


@dataclass(frozen=True)
class Finding:
    """A rule applied to one point of one run (against the baseline)."""

    rule: Rule
    run: int  # index of the compared run (>= 1)
    run_label: str
    key: str
    label: str
    base: float | None
    value: float | None
    change: float | None  # value / base - 1; None when the point is missing from a run
    judgement: Judgement | None
    failed: bool

    def text(self, baseline: str) -> str:
        """One line: what was compared and why it failed (or did not)."""
        info = metrics.get(self.rule.metric)
        head = f"{self.run_label} {self.key} {self.rule.metric}"
        if self.change is None:
            return f"{head}: not measured in both runs (threshold {self.rule.threshold:+.0%})"
        why = ""
        if self.judgement is not None and not self.judgement.significant:
            why = f"; {self.judgement.verdict}: {self.judgement.reason}"
        elif self.judgement is not None:
            why = f"; significant: {self.judgement.reason}"
        return (f"{head} {self.change:+.1%} vs {baseline} ({formatting.brief(self.base)} -> "
                f"{formatting.brief(self.value)} {info.unit}; "
                f"threshold {self.rule.threshold:+.0%}){why}")


@dataclass(frozen=True)
class GateResult:
    rules: tuple[Rule, ...]
    strict: bool
    findings: tuple[Finding, ...]  # every rule x run x point past its threshold or not measured
    checked: int  # rule x run x point combinations with a value on both sides

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.failed]

    @property
    def held(self) -> list[Finding]:
        """Past a threshold (or unmeasured) but not failing: not significant, cannot judge, or not --strict."""
        return [f for f in self.findings if not f.failed]

    @property
    def passed(self) -> bool:
        return not self.failures


def evaluate(cmp: Comparison, rules: Sequence[Rule], *, strict: bool = False) -> GateResult:
    """Apply every rule to every compared run; a rule that reaches no point is a usage error (a gate that
    checks nothing must not pass silently)."""
    findings: list[Finding] = []
    checked = 0
    for rule in rules:
        reached = 0
        for i in range(1, len(cmp.runs)):
            suites = [cmp.runs[0].run.suite, cmp.runs[i].run.suite]
            for row in cmp.rows:
                if not rule.matches(row, suites):
                    continue
                cells = row.cells.get(rule.metric)
                base_pt, pt = row.points[0], row.points[i]
                if cells is None:
                    continue
                reached += 1
                base, cell = cells[0], cells[i]
                if base.value is None or cell.value is None or cell.ratio is None:
                    if base_pt is None and pt is None:
                        continue
                    findings.append(Finding(rule, i, cmp.runs[i].label, row.key, row.label,
                                            base.value.value if base.value else None,
                                            cell.value.value if cell.value else None, None, None, strict))
                    continue
                checked += 1
                change = cell.ratio - 1.0
                if not rule.past(change):
                    continue
                significant = cell.judgement is not None and cell.judgement.significant
                findings.append(Finding(rule, i, cmp.runs[i].label, row.key, row.label, base.value.value,
                                        cell.value.value, change, cell.judgement, strict or significant))
        if reached == 0:
            raise UsageError(f"--fail-on {rule.text!r} reaches no compared point with {rule.metric}"
                             + (f" in scope {rule.scope!r}" if rule.scope else "")
                             + ": check the metric and scope against the comparison CSV")
    return GateResult(tuple(rules), strict, tuple(findings), checked)
