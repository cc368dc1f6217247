"""Significance of a difference between runs: known answers, and properties of Welch's test."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ssdlab.analysis import significance
from ssdlab.analysis.significance import judge

BASE = [100.0, 102.0, 98.0, 101.0, 99.0]


def test_no_difference_is_not_significant() -> None:
    j = judge(BASE, list(BASE), kind="window rounds")
    assert j.verdict == "not significant"
    assert j.p_value == pytest.approx(1.0)


def test_a_clear_difference_is_significant() -> None:
    j = judge(BASE, [x * 1.2 for x in BASE], kind="window rounds")
    assert j.verdict == "significant"
    assert j.p_value is not None
    assert j.p_value < 0.001
    assert "Welch" in j.reason
    assert "5 vs 5 window rounds" in j.reason


def test_a_noisy_difference_is_not_significant() -> None:
    """Means 100 vs 106 with a spread of +-25: the data cannot tell them apart."""
    a = [80.0, 120.0, 95.0, 130.0, 75.0]
    b = [90.0, 130.0, 85.0, 125.0, 100.0]
    j = judge(a, b, kind="window rounds")
    assert j.verdict == "not significant"
    assert j.p_value is not None
    assert j.p_value > 0.5


def test_a_tiny_but_certain_change_is_below_the_minimum_effect() -> None:
    a = [100.0 + 0.01 * i for i in range(10)]
    b = [x * 1.01 for x in a]  # 1 % higher, almost no spread: p is tiny
    j = judge(a, b, kind="per-interval samples")
    assert j.p_value is not None
    assert j.p_value < 1e-6
    assert j.verdict == "not significant"
    assert "minimum effect" in j.reason
    assert judge(a, b, kind="x", min_effect=0.005).verdict == "significant"


@pytest.mark.parametrize(("a", "b"), [([], []), ([100.0], [200.0]), ([100.0, 101.0], [200.0, 201.0]),
                                      (BASE, [1.0e9])])
def test_too_few_samples_cannot_be_judged_never_significant(a: list[float], b: list[float]) -> None:
    j = judge(a, b, kind="window rounds")
    assert j.verdict == "cannot judge"
    assert j.p_value is None
    assert not j.significant


def test_constant_samples() -> None:
    assert judge([5.0] * 4, [5.0] * 4, kind="s").verdict == "not significant"
    assert judge([5.0] * 4, [6.0] * 4, kind="s").verdict == "significant"
    assert judge([5.0] * 4, [5.05] * 4, kind="s").verdict == "not significant"  # 1 % < minimum effect


def test_zero_baseline_cannot_be_judged() -> None:
    assert judge([0.0, 0.0, 0.0], [1.0, 2.0, 3.0], kind="s").verdict == "cannot judge"


def test_ratio_standard_error_known_value() -> None:
    # means 10 and 20, each with stdev 1 over 4 samples: relative SEs 0.05 and 0.025
    a, b = [9.0, 11.0, 9.0, 11.0], [19.0, 21.0, 19.0, 21.0]
    sd = math.sqrt(4 / 3)
    expected = 2.0 * math.hypot(sd / 2 / 10, sd / 2 / 20)
    assert significance.ratio_se(a, b) == pytest.approx(expected)


def test_geometric_mean() -> None:
    assert significance.geometric_mean([2.0, 0.5]) == pytest.approx(1.0)
    assert significance.geometric_mean([4.0, 1.0]) == pytest.approx(2.0)
    assert significance.geometric_mean([]) is None


samples = st.lists(st.floats(min_value=1.0, max_value=1e6, allow_nan=False), min_size=2, max_size=30)


@settings(max_examples=200, deadline=None)
@given(samples, samples)
def test_welch_p_matches_scipy_stats(a: list[float], b: list[float]) -> None:
    if significance.statistics.variance(a) == 0 and significance.statistics.variance(b) == 0:
        return
    p = significance.welch_p(a, b)
    with warnings.catch_warnings():  # scipy warns when one side is (nearly) constant; its answer still counts
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = stats.ttest_ind(b, a, equal_var=False).pvalue
    assert 0.0 <= p <= 1.0
    assert p == pytest.approx(float(ref), rel=1e-6, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(samples, samples, st.floats(min_value=1e-3, max_value=1e3))
def test_verdict_does_not_depend_on_the_unit(a: list[float], b: list[float], k: float) -> None:
    """IOPS or kIOPS, µs or ms: scaling both runs' samples alike changes nothing."""
    j1 = judge(a, b, kind="s")
    j2 = judge([x * k for x in a], [x * k for x in b], kind="s")
    if j1.p_value is not None and j2.p_value is not None:
        assert j1.p_value == pytest.approx(j2.p_value, rel=1e-6, abs=1e-9)
        if min(abs(j1.p_value - 0.05), abs(j2.p_value - 0.05)) > 1e-6:
            assert j1.verdict == j2.verdict


@settings(max_examples=100, deadline=None)
@given(samples, samples)
def test_never_significant_without_enough_samples(a: list[float], b: list[float]) -> None:
    j = judge(a[:2], b, kind="s")
    assert j.verdict == "cannot judge"
