"""Is the difference between two runs real? Welch's t-test with a minimum effect, on the samples runs store.

A run carries its own variation in one of three kinds of samples (ssdlab.compare.matching chooses them):
  per-interval  points logged with `log_interval_ms` (stability, user suites, long phases): one value per
                interval (IOPS, MB/s, mean latency), the final, partial interval left out;
  window rounds SNIA PTS round tests: the metric in each round of the steady-state measurement window
                (the five values whose average the PTS report tabulates);
  samples       WSAT: the last five 1-minute samples (the steady tail the PTS report averages).
Only these are used; a single value per point (a quick run, a percentile) has no variation to judge against,
and the verdict is then "cannot judge", never "significant".

Why Welch's t-test: it compares two means without assuming equal variances or equal sample counts (two
drives, or two firmwares, rarely spread alike), and it holds up for the few samples a PTS window has (5 vs 5).
Per-interval samples of one run are autocorrelated (a garbage-collection burst spans several intervals), so
the test is optimistic for them: a minimum effect (default 2 %) keeps tiny, statistically "significant"
drifts from being reported, as pyperf's compare_to does with its minimum speed. pyperf's own t-score fails on
unequal sample counts and then reports "significant"; here any case the test cannot handle says so.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["significant", "not significant", "cannot judge"]
ALPHA = 0.05  # two-sided
MIN_EFFECT = 0.02  # |mean_b / mean_a - 1| below this is never called significant
MIN_SAMPLES = 3  # per side: fewer leaves no usable variance estimate


@dataclass(frozen=True)
class Judgement:
    """The verdict on one difference, with what it rests on (shown in reports and JUnit messages)."""

    verdict: Verdict
    p_value: float | None
    reason: str  # one line, e.g. "Welch p=0.0031, 5 vs 5 window rounds"
    ratio_se: float | None = None  # standard error of mean_b / mean_a, propagated from both sides

    @property
    def significant(self) -> bool:
        return self.verdict == "significant"


def _finite(xs: Sequence[float]) -> list[float]:
    return [float(x) for x in xs if x is not None and math.isfinite(float(x))]


def ratio_se(base: Sequence[float], other: Sequence[float]) -> float | None:
    """Standard error of mean(other) / mean(base): relative standard errors added in quadrature (first-order
    propagation, as hyperfine reports relative speed with its uncertainty). None without two samples a side."""
    a, b = _finite(base), _finite(other)
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    if ma == 0 or mb == 0:
        return None
    rel_a = statistics.stdev(a) / math.sqrt(len(a)) / ma
    rel_b = statistics.stdev(b) / math.sqrt(len(b)) / mb
    return abs(mb / ma) * math.hypot(rel_a, rel_b)


def welch_t(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Welch's t statistic of mean(b) - mean(a) and its Welch-Satterthwaite degrees of freedom; needs >= 2
    samples a side and variance on at least one side."""
    na, nb = len(a), len(b)
    va, vb = statistics.variance(a) / na, statistics.variance(b) / nb
    t = (statistics.fmean(b) - statistics.fmean(a)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    return t, df


def welch_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of Welch's unequal-variance t-test: the t distribution's tail from scipy.special
    (scipy.stats.ttest_ind(equal_var=False) gives the same; the tests check it)."""
    from scipy.special import stdtr  # imported here: only comparisons need it (scipy.stats loads 5x slower)

    t, df = welch_t(a, b)
    return float(2.0 * stdtr(df, -abs(t)))


def judge(base: Sequence[float], other: Sequence[float], *, kind: str, alpha: float = ALPHA,
          min_effect: float = MIN_EFFECT) -> Judgement:
    """Is mean(other) different from mean(base)? `kind` names the samples for the reason text."""
    a, b = _finite(base), _finite(other)
    if len(a) < MIN_SAMPLES or len(b) < MIN_SAMPLES:
        what = f"{len(a)} vs {len(b)} {kind}" if kind else "a single value per run"
        return Judgement("cannot judge", None, f"no variation to judge against ({what}; need {MIN_SAMPLES} a side)")
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    if ma == 0:
        return Judgement("cannot judge", None, "baseline mean is zero: no ratio")
    se = ratio_se(a, b)
    effect = mb / ma - 1.0
    counts = f"{len(a)} vs {len(b)} {kind}"
    va, vb = statistics.variance(a), statistics.variance(b)
    if va == 0 and vb == 0:
        if ma == mb:
            return Judgement("not significant", 1.0, f"identical constant samples ({counts})", se)
        if abs(effect) < min_effect:
            return Judgement("not significant", 0.0, f"change {effect:+.1%} is below the minimum effect "
                                                     f"{min_effect:.0%} ({counts}, no variation)", se)
        return Judgement("significant", 0.0, f"no variation in either run's samples ({counts})", se)
    p = welch_p(a, b)
    if not math.isfinite(p):  # cannot happen with variance on one side; never turn a failure into a verdict
        return Judgement("cannot judge", None, f"the t-test gave no p-value ({counts})", se)
    text = f"Welch p={_p_text(p)}, {counts}"
    if p >= alpha:
        return Judgement("not significant", p, f"{text} (p >= {alpha:g})", se)
    if abs(effect) < min_effect:
        return Judgement("not significant", p, f"{text}; change {effect:+.1%} is below the minimum effect "
                                               f"{min_effect:.0%}", se)
    return Judgement("significant", p, text, se)


def _p_text(p: float) -> str:
    return f"{p:.2g}" if p >= 0.001 else "<0.001"


def geometric_mean(ratios: Sequence[float]) -> float | None:
    """Geometric mean of positive ratios (the summary of many per-point ratios); None when there are none."""
    xs = [r for r in ratios if r > 0 and math.isfinite(r)]
    if not xs:
        return None
    return math.exp(sum(math.log(r) for r in xs) / len(xs))
