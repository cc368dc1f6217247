"""SNIA PTS steady state: the worked examples of pts.md §4.4 as test vectors, boundaries, the band reading,
several tracking variables, and properties checked with hypothesis."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.analysis import steady
from ssdlab.errors import UsageError

ROUNDS = [6, 7, 8, 9, 10]

# case: (values, average, range, slope, intercept, fit excursion, spec verdict, band-reading verdict)
CASES = {
    "A stable": ([101_200, 99_800, 100_900, 98_700, 100_400], 100_200, 2_500, -270, 102_360, 1_080, True, True),
    "B steady trend": ([92_000, 96_000, 100_000, 104_000, 108_000], 100_000, 16_000, 4_000, 68_000, 16_000,
                       False, True),
    "C one spike": ([96_000, 97_000, 115_000, 96_000, 96_000], 100_000, 19_000, -100, 100_800, 400, True, False),
    "D (a) boundary": ([90_000, 110_000, 100_000, 100_000, 100_000], 100_000, 20_000, 1_000, 92_000, 4_000,
                       True, True),
    "E (b) boundary": ([95_000, 97_500, 100_000, 102_500, 105_000], 100_000, 10_000, 2_500, 80_000, 10_000,
                       True, True),
}


def band_reading(values: list[float], rounds: list[int]) -> bool:
    """The common mis-reading: every point and the fit line within 90-110 % of the average."""
    avg = sum(values) / len(values)
    m, b = np.polyfit(rounds, values, 1)
    fit_ends = [m * rounds[0] + b, m * rounds[-1] + b]
    return all(0.9 * avg <= v <= 1.1 * avg for v in [*values, *fit_ends])


@pytest.mark.parametrize("name", sorted(CASES))
def test_worked_examples(name: str) -> None:
    values, avg, rng, m, b, exc, spec, _band = CASES[name]
    d = steady.determine(values, ROUNDS)
    assert d.average == avg
    assert d.range == rng
    assert d.slope == m
    assert d.intercept == b
    assert d.fit_excursion == exc
    assert d.allowed_range == Fraction(avg, 5)
    assert d.allowed_excursion == Fraction(avg, 10)
    assert d.steady is spec


@pytest.mark.parametrize("name", sorted(CASES))
def test_band_reading_differs_from_spec_where_pts_md_says(name: str) -> None:
    values, *_rest, spec, band = CASES[name]
    assert band_reading([float(v) for v in values], ROUNDS) is band
    assert steady.determine(values, ROUNDS).steady is spec


def test_case_b_passes_the_band_but_fails_the_spec() -> None:
    d = steady.determine(CASES["B steady trend"][0], ROUNDS)
    assert d.range_ok
    assert not d.excursion_ok
    assert d.excursion_pct == pytest.approx(16.0)


def test_case_c_fails_the_band_but_passes_the_spec() -> None:
    d = steady.determine(CASES["C one spike"][0], ROUNDS)
    assert d.steady
    assert d.range_pct == pytest.approx(19.0)
    assert d.excursion_pct == pytest.approx(0.4)


def test_boundaries_use_less_or_equal_and_flip_just_beyond() -> None:
    d = steady.determine([90_000, 110_000, 100_000, 100_000, 100_000], ROUNDS)
    assert d.range == d.allowed_range
    assert d.range_ok
    # one unit more range (and the average moves by only 0.2): now beyond 20 %
    beyond = steady.determine([90_000, 110_001, 100_000, 100_000, 100_000], ROUNDS)
    assert not beyond.range_ok
    e = steady.determine([95_000, 97_500, 100_000, 102_500, 105_000], ROUNDS)
    assert e.fit_excursion == e.allowed_excursion
    assert e.excursion_ok
    e_beyond = steady.determine([94_999, 97_500, 100_000, 102_500, 105_001], ROUNDS)
    assert not e_beyond.excursion_ok


def test_boundaries_hold_for_decimal_inputs_that_floats_cannot_represent() -> None:
    """0.9/1.1 are not exact binary floats; the check must still see a range of exactly 20 %."""
    for values in ([0.9, 1.1, 1.0, 1.0, 1.0], ["0.9", "1.1", "1.0", "1.0", "1.0"]):
        d = steady.determine(values)
        assert d.range == Fraction(1, 5)
        assert d.range_ok
    e = steady.determine([0.95, 0.975, 1.0, 1.025, 1.05])
    assert e.fit_excursion == Fraction(1, 10)
    assert e.excursion_ok


def test_closed_form_slope_for_five_rounds() -> None:
    y = [3.0, 7.5, 2.25, 9.0, 4.0]
    d = steady.determine(y, ROUNDS)
    assert d.slope == steady.exact((-2 * y[0] - y[1] + y[3] + 2 * y[4]) / 10)


def test_formula_text() -> None:
    d = steady.determine(CASES["A stable"][0], ROUNDS)
    assert d.formula() == "-270·R + 102360"
    assert d.fit(8) == pytest.approx(100_200)


def test_window_at_and_check_last() -> None:
    series = [50.0, 60.0, *CASES["A stable"][0]]
    d = steady.window_at(series, 7)
    assert d.rounds == (3, 4, 5, 6, 7)
    assert steady.check_last(series).values == d.values
    with pytest.raises(UsageError):
        steady.window_at(series, 4)
    with pytest.raises(UsageError):
        steady.check_last([1, 2, 3])


def test_all_tracking_variables_must_pass_in_the_same_window() -> None:
    flat = [100.0] * 9
    late = [10.0, 40.0, 70.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]  # steady from window 4..8
    assert steady.first_steady_round({"flat": flat}) == 5
    assert steady.first_steady_round({"late": late}) == 8
    assert steady.first_steady_round({"flat": flat, "late": late}) == 8
    v = steady.verdict({"flat": flat, "late": late})
    assert v.steady
    assert v.round == 8
    assert set(v.determinations) == {"flat", "late"}


def test_not_reached_reports_the_last_window() -> None:
    trend = [float(100 + 20 * i) for i in range(8)]
    v = steady.verdict({"trend": trend})
    assert not v.steady
    assert v.round == 8
    assert v.determinations["trend"].rounds == (4, 5, 6, 7, 8)
    assert steady.verdict({"short": [1.0, 2.0]}).round is None


@pytest.mark.parametrize("bad", ["x", "nan", "inf", "", "1,5"])
def test_bad_numbers_are_usage_errors(bad: str) -> None:
    with pytest.raises(UsageError):
        steady.exact(bad)


def test_zero_average_is_never_steady() -> None:
    assert not steady.determine([0, 0, 0, 0, 0]).steady


# ------------------------------------------------------------------ properties

positive = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False)
windows = st.lists(positive, min_size=5, max_size=5)


@settings(max_examples=200, deadline=None)
@given(windows, st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(1000)))
def test_scale_invariance(values: list[float], k: Fraction) -> None:
    base = steady.determine(values)
    scaled = steady.determine([steady.exact(v) * k for v in values])
    assert scaled.steady is base.steady
    assert scaled.range / scaled.average == base.range / base.average
    assert scaled.fit_excursion / scaled.average == base.fit_excursion / base.average


@settings(max_examples=200, deadline=None)
@given(windows)
def test_reversal_symmetry(values: list[float]) -> None:
    fwd = steady.determine(values)
    rev = steady.determine(values[::-1])
    assert rev.slope == -fwd.slope
    assert rev.range == fwd.range
    assert rev.fit_excursion == fwd.fit_excursion
    assert rev.steady is fwd.steady


@settings(max_examples=200, deadline=None)
@given(windows, st.integers(min_value=0, max_value=10_000))
def test_round_numbering_does_not_change_the_verdict(values: list[float], start: int) -> None:
    a = steady.determine(values)
    b = steady.determine(values, list(range(start, start + 5)))
    assert a.slope == b.slope
    assert a.steady is b.steady
    assert b.fit(start + 2) == pytest.approx(float(b.average))  # the fit passes through the centroid


@settings(max_examples=200, deadline=None)
@given(windows)
def test_agrees_with_an_independent_least_squares_fit(values: list[float]) -> None:
    d = steady.determine(values)
    m, b = np.polyfit(np.arange(1, 6, dtype=float), np.array(values), 1)
    scale = max(values)
    assert float(d.slope) == pytest.approx(m, abs=1e-9 * scale)
    assert float(d.intercept) == pytest.approx(b, abs=1e-8 * scale)
    # values are read as their shortest decimal, so the range may differ from the binary difference in the
    # last digits of the inputs' magnitude
    assert float(d.range) == pytest.approx(max(values) - min(values), abs=1e-12 * scale + 1e-12)


@settings(max_examples=100, deadline=None)
@given(positive)
def test_a_constant_series_is_steady(v: float) -> None:
    d = steady.determine([v] * 5)
    assert d.steady
    assert d.range == 0
    assert d.slope == 0


@settings(max_examples=200, deadline=None)
@given(windows)
def test_band_reading_of_the_data_implies_criterion_a(values: list[float]) -> None:
    """'every point within 90-110 % of the average' is stricter than (a), never more lenient."""
    d = steady.determine(values)
    within = all(Fraction(9, 10) * d.average <= v <= Fraction(11, 10) * d.average for v in d.values)
    if within:
        assert d.range_ok
