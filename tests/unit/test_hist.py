"""fio's 1856-bucket latency histogram: index/value math, fio's percentile rule, merging."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ssdlab.results import hist

ALL = range(hist.PLAT_NR)
TOP = 1 << 34  # values at or above 2^34 ns (about 17.2 s) all land in the last bucket

samples_st = st.lists(st.integers(min_value=0, max_value=TOP + 10**9), min_size=1, max_size=300)
percent_st = st.floats(min_value=0.001, max_value=100.0, allow_nan=False)


def histogram(samples: list[int]) -> hist.Counts:
    """Counts the way fio files samples: one per bucket chosen by value_to_idx."""
    counts = np.zeros(hist.PLAT_NR, dtype=np.int64)
    for s in samples:
        counts[hist.value_to_idx(s)] += 1
    return counts


def fio_rule(counts: hist.Counts, p: float) -> int:
    """fio 3.33 calc_clat_percentiles, transcribed: first bucket with sum >= (long double)p / 100.0 * nr."""
    nr = int(counts.sum())
    need = np.longdouble(p) / np.longdouble(100.0) * np.longdouble(nr)
    running = 0
    for i in range(hist.PLAT_NR):
        running += int(counts[i])
        if np.longdouble(running) >= need:
            return hist.idx_to_value(i)
    raise AssertionError("percentile not reached")


def test_constants_match_fio() -> None:
    assert (hist.PLAT_BITS, hist.PLAT_VAL, hist.GROUP_NR, hist.PLAT_NR) == (6, 64, 29, 1856)


def test_index_value_round_trip_over_all_1856_buckets() -> None:
    for idx in ALL:
        value = hist.idx_to_value(idx)
        lower, upper = hist.idx_bounds(idx)
        assert lower <= value < upper, idx
        assert hist.value_to_idx(value) == idx, idx
        assert hist.value_to_idx(lower) == idx, idx
        assert hist.value_to_idx(upper - 1) == idx, idx


def test_buckets_tile_the_range_without_gaps() -> None:
    assert hist.idx_bounds(0) == (0, 1)
    for idx in range(1, hist.PLAT_NR):
        assert hist.idx_bounds(idx)[0] == hist.idx_bounds(idx - 1)[1]
    assert hist.idx_bounds(hist.PLAT_NR - 1)[1] == TOP


@pytest.mark.parametrize(("idx", "lower", "width"), [
    (0, 0, 1), (127, 127, 1), (128, 128, 2), (320, 1024, 16), (640, 32768, 512), (768, 131072, 2048),
    (960, 1 << 20, 1 << 14), (1152, 1 << 23, 1 << 17), (1600, 1 << 30, 1 << 24), (1792, 1 << 33, 1 << 27),
])
def test_bucket_table_from_fio_reference(idx: int, lower: int, width: int) -> None:
    assert hist.idx_bounds(idx) == (lower, lower + width)
    if width > 1:
        assert hist.idx_to_value(idx) == lower + width // 2


def test_first_128_values_map_one_to_one() -> None:
    assert [hist.idx_to_value(i) for i in range(128)] == list(range(128))
    assert [hist.value_to_idx(v) for v in range(128)] == list(range(128))


@pytest.mark.parametrize("value", [TOP, TOP + 1, 10**12, 2**62])
def test_values_past_the_top_are_clamped_into_the_last_bucket(value: int) -> None:
    assert hist.value_to_idx(value) == hist.PLAT_NR - 1


def test_negative_values_are_filed_as_zero() -> None:
    assert hist.value_to_idx(-5) == 0


@pytest.mark.parametrize("idx", [-1, hist.PLAT_NR, 10**6])
def test_index_out_of_range_is_rejected(idx: int) -> None:
    with pytest.raises(ValueError, match="outside"):
        hist.idx_to_value(idx)


def test_relative_error_of_the_representative_value_is_at_most_one_128th() -> None:
    worst = 0.0
    for idx in ALL:
        lower, upper = hist.idx_bounds(idx)
        value = hist.idx_to_value(idx)
        for sample in (lower, upper - 1):
            if sample:
                worst = max(worst, abs(value - sample) / sample)
    assert worst <= 1 / 128
    assert worst > 1 / 130  # the bound is tight, not loose


def test_bucket_values_view_is_read_only() -> None:
    values = hist.bucket_values()
    assert len(values) == hist.PLAT_NR
    assert int(values[200]) == hist.idx_to_value(200)
    with pytest.raises(ValueError, match="read-only"):
        values[0] = 1


def test_counts_from_bins_uses_representative_keys_and_files_others_like_samples() -> None:
    counts = hist.counts_from_bins({"10": 3, "2112": 5, "2113": 1})
    assert counts[10] == 3
    assert counts[hist.value_to_idx(2112)] == 6  # 2113 is not a representative value: filed like a sample
    assert int(counts.sum()) == 9


def test_sparse_round_trip() -> None:
    rng = np.random.default_rng(7)
    counts = np.zeros(hist.PLAT_NR, dtype=np.int64)
    counts[rng.choice(hist.PLAT_NR, 40, replace=False)] = rng.integers(1, 1000, 40)
    pairs = hist.sparse(counts)
    assert len(pairs) == 40
    assert np.array_equal(hist.counts_from_sparse(pairs), counts)


def test_percentiles_of_an_empty_histogram_are_empty() -> None:
    assert hist.percentiles(np.zeros(hist.PLAT_NR, dtype=np.int64), [50, 99]) == {}


@pytest.mark.parametrize("p", [-0.1, 100.01, 250])
def test_percentile_out_of_range_is_rejected(p: float) -> None:
    with pytest.raises(ValueError, match="outside"):
        hist.percentiles(histogram([1, 2, 3]), [p])


def test_percentile_rule_has_no_interpolation() -> None:
    # 100 samples: 50 at 10 ns, 50 at 1000 ns. fio's p50 is the 50th sample's bucket, never a midpoint.
    counts = histogram([10] * 50 + [1000] * 50)
    got = hist.percentiles(counts, [50, 50.0001, 100])
    assert got[50] == 10
    assert got[50.0001] == hist.idx_to_value(hist.value_to_idx(1000))
    assert got[100] == got[50.0001]


@settings(max_examples=150, deadline=None)
@given(a=samples_st, b=samples_st)
def test_merging_counts_equals_histogram_of_concatenated_samples(a: list[int], b: list[int]) -> None:
    assert np.array_equal(hist.merge(histogram(a), histogram(b)), histogram(a + b))


@settings(max_examples=150, deadline=None)
@given(samples=samples_st, ps=st.lists(percent_st, min_size=2, max_size=12))
def test_percentiles_are_monotone_in_p(samples: list[int], ps: list[float]) -> None:
    ps = sorted(ps)
    got = hist.percentiles(histogram(samples), ps)
    values = [got[p] for p in ps]
    assert values == sorted(values)


@settings(max_examples=100, deadline=None)
@given(parts=st.lists(samples_st, min_size=2, max_size=5), seed=st.integers(0, 2**32 - 1),
       ps=st.lists(percent_st, min_size=1, max_size=8))
def test_percentiles_do_not_depend_on_merge_order(parts: list[list[int]], seed: int, ps: list[float]) -> None:
    arrays = [histogram(p) for p in parts]
    shuffled = arrays[:]
    random.Random(seed).shuffle(shuffled)
    assert hist.percentiles(hist.merge(*arrays), ps) == hist.percentiles(hist.merge(*shuffled), ps)


@settings(max_examples=150, deadline=None)
@given(samples=samples_st, p=percent_st)
def test_percentile_is_the_bucket_of_the_ceil_rank_sample(samples: list[int], p: float) -> None:
    """fio's rule in sample terms: the bucket holding the ceil(p/100 * N)-th smallest sample."""
    rank = max(1, math.ceil(Fraction(p) * len(samples) / 100))
    ordered = sorted(samples)
    expected = hist.idx_to_value(hist.value_to_idx(ordered[rank - 1]))
    assert hist.percentiles(histogram(samples), [p])[p] == expected


@settings(max_examples=200, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(0, hist.PLAT_NR - 1), st.integers(1, 10**7)), min_size=1,
                      max_size=60),
       ps=st.lists(st.sampled_from([1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 99.999]) | percent_st,
                   min_size=1, max_size=13))
def test_percentiles_equal_fio_long_double_rule(pairs: list[tuple[int, int]], ps: list[float]) -> None:
    counts = hist.counts_from_sparse(pairs)
    got = hist.percentiles(counts, ps)
    for p in ps:
        assert got[p] == fio_rule(counts, p), p


@pytest.mark.parametrize("p", [1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 99.999])
def test_percentile_matches_fio_where_the_threshold_is_a_whole_number(p: float) -> None:
    """Boundary cases, where rounding could flip the bucket: counts up to 20000 with p/100*N integral.

    fio's threshold is the long double p / 100.0 * N; a percentile lands in bucket 0 exactly when bucket 0
    holds at least that many samples. Check m = ceil(threshold) (bucket 0) and m - 1 (next bucket).
    """
    n = np.arange(1, 20_001, dtype=np.int64)
    exact = p / 100 * n
    for total in n[np.isclose(exact, np.round(exact), rtol=0, atol=1e-6)]:
        m = int(np.ceil(np.longdouble(p) / np.longdouble(100.0) * np.longdouble(int(total))))
        for first, expected_idx in ((m, 0), (m - 1, 500)):
            if first < 0 or first > total:
                continue
            counts = np.zeros(hist.PLAT_NR, dtype=np.int64)
            counts[0] = first
            counts[500] = int(total) - first
            assert hist.percentiles(counts, [p])[p] == hist.idx_to_value(expected_idx), (p, total, first)


@settings(max_examples=100, deadline=None)
@given(samples=st.lists(st.integers(min_value=0, max_value=TOP - 1), min_size=1, max_size=300))
@example(samples=[0, 0, 1 << 26])  # a bucket's lower edge: the error is exactly the bound (float rounding aside)
def test_mean_from_buckets_is_within_the_error_bound(samples: list[int]) -> None:
    true_mean = sum(samples) / len(samples)
    bound = true_mean / 128
    assert abs(hist.mean_ns(histogram(samples)) - true_mean) <= bound * (1 + 1e-12) + 1e-9


def test_exceedance_counts_samples_at_or_above_threshold() -> None:
    samples = [50] * 90 + [10_000] * 9 + [5_000_000]
    counts = histogram(samples)
    got = hist.exceedance(counts, [0, 51, 10_000, 1_000_000, 10**10])
    assert got[0] == pytest.approx(100.0)
    assert got[51] == pytest.approx(10.0)
    assert got[1_000_000] == pytest.approx(1.0)
    assert got[10**10] == pytest.approx(0.0)
    values = [got[t] for t in sorted(got)]
    assert values == sorted(values, reverse=True)
