"""fio's latency histogram held sparse, in plain Python: what a run itself needs from fio's json+ bins (a point's
percentiles and stored bins, a live sample's interval percentiles), without numpy.

A run parses a handful of latency blocks per point, each with at most a few hundred non-empty buckets: a dict of
bucket index -> count does that in well under a millisecond, where loading numpy costs a command about 0.1 CPU-s
(benchmarks/peer_overhead.py). The bucket layout and fio's percentile rule are defined here once; results/hist.py
(dense numpy arrays, for reports, aggregates and long histogram logs) builds on them, and gives the same values.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from itertools import accumulate
from operator import lt

from ssdlab.results.bins import EMPTY, Bins

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
GROUP_NR = 29
PLAT_NR = GROUP_NR * PLAT_VAL  # 1856

Sparse = dict[int, int]  # bucket index -> count


def idx_to_value(idx: int) -> int:
    """Representative latency (ns) of bucket `idx`, as fio prints it in json+ `bins` keys."""
    if not 0 <= idx < PLAT_NR:
        raise ValueError(f"bucket index {idx} outside 0..{PLAT_NR - 1}")
    if idx < 2 * PLAT_VAL:
        return idx
    shift = idx // PLAT_VAL - 1
    k = idx % PLAT_VAL
    # midpoint of [2^(shift+6) + k*2^shift, +2^shift); shift >= 1 so the half-width is whole
    return (1 << (shift + PLAT_BITS)) + k * (1 << shift) + (1 << (shift - 1))


def value_to_idx(value_ns: int) -> int:
    """Bucket that fio files a latency sample of `value_ns` into (values past the top are clamped)."""
    v = max(0, int(value_ns))
    msb = v.bit_length() - 1 if v else 0
    if msb <= PLAT_BITS:
        return v
    shift = msb - PLAT_BITS
    return min((shift + 1) * PLAT_VAL + ((v >> shift) & (PLAT_VAL - 1)), PLAT_NR - 1)


VALUES: list[int] = [idx_to_value(i) for i in range(PLAT_NR)]  # every bucket's representative value
VALUE_TO_IDX: dict[int, int] = {v: i for i, v in enumerate(VALUES)}
_KEY_TO_IDX: dict[str, int] = {str(v): i for i, v in enumerate(VALUES)}  # fio's json+ keys as it prints them


def from_bins(bins: Mapping[str, int] | Mapping[int, int]) -> Sparse:
    """Counts by bucket from fio's json+ `bins` (keys: representative values in ns; any other value is filed as
    fio would file a sample of it)."""
    try:  # fio's own keys, each a bucket once (the keys of a JSON object are distinct)
        return {_KEY_TO_IDX[key]: int(count) for key, count in bins.items()}  # type: ignore[index]
    except (KeyError, TypeError):
        pass
    out: Sparse = {}
    for key, count in bins.items():
        value = int(key)
        idx = VALUE_TO_IDX.get(value)
        if idx is None:
            idx = value_to_idx(value)
        out[idx] = out.get(idx, 0) + int(count)
    return out


def add(a: Sparse, b: Sparse) -> Sparse:
    """The bucket counts of two histograms added (a new dict)."""
    out = dict(a)
    for idx, n in b.items():
        out[idx] = out.get(idx, 0) + n
    return out


def subtract(a: Sparse, b: Sparse) -> Sparse:
    """`a` less `b` bucket by bucket (cumulative counts now less before: one interval's)."""
    out = dict(a)
    for idx, n in b.items():
        out[idx] = out.get(idx, 0) - n
    return out


def to_bins(counts: Sparse) -> Bins:
    """The non-empty buckets in ascending order, as the model's compact Bins."""
    pairs = tuple((idx, counts[idx]) for idx in sorted(counts) if counts[idx] != 0)
    return Bins.of(pairs) if pairs else EMPTY


def thresholds(ps: Sequence[float], n: int) -> list[int]:
    """ceil(p/100 x n) for each p, exactly (p is a float or an int: its exact ratio): cumulative counts are whole
    numbers, so the first bucket with cum >= p/100 x n is the first with cum >= this."""
    out = []
    for p in ps:
        if not 0.0 <= p <= 100.0:
            raise ValueError(f"percentile {p} outside 0..100")
        if type(p) in (float, int):
            num, den = p.as_integer_ratio()
        else:  # a Fraction, Decimal, numpy number ...: its exact ratio
            from fractions import Fraction

            num, den = Fraction(p).as_integer_ratio()
        out.append(-((-num * n) // (100 * den)))
    return out


def percentiles(counts: Sparse, ps: Sequence[float], total: int | None = None) -> dict[float, int]:
    """fio's percentile rule (results/hist.percentiles, the same values): the representative value of the first
    bucket whose cumulative count reaches p/100 x total (default: the sum of the counts); the top bucket's when
    none does, bucket 0's for a threshold of 0."""
    n = sum(counts.values()) if total is None else int(total)
    if n <= 0:
        return {}
    index = sorted(counts)
    cum = list(accumulate(map(counts.__getitem__, index)))
    rising = min(counts.values(), default=0) >= 0  # else (a negative count) the first bucket that reaches it
    ps = tuple(ps)
    out: dict[float, int] = {}
    for p, t in zip(ps, thresholds(ps, n), strict=True):
        if t <= 0:
            out[p] = VALUES[0]
            continue
        k = bisect_left(cum, t) if rising else next((i for i, c in enumerate(cum) if c >= t), len(cum))
        out[p] = VALUES[index[k] if k < len(index) else PLAT_NR - 1]
    return out


def bins_percentiles(bins: Bins, ps: Sequence[float], total: int | None = None) -> dict[float, int]:
    """percentiles() of stored bins, read from the pairs themselves: the same values, since the cumulative count
    only rises at a stored bucket. Bins that are not ascending distinct buckets with counts >= 0 are added up by
    bucket first (an index given twice adds up; a negative one counts from the top, as a dense array's would)."""
    flat = bins.flat()
    idx, cnt = flat[0::2], flat[1::2]
    if idx and not (idx[0] >= 0 and idx[-1] < PLAT_NR and all(map(lt, idx, idx[1:])) and min(cnt) >= 0):
        counts: Sparse = {}
        for i, c in zip(idx, cnt, strict=True):
            if not -PLAT_NR <= i < PLAT_NR:
                raise IndexError(f"bucket index {i} outside 0..{PLAT_NR - 1}")
            counts[i % PLAT_NR] = counts.get(i % PLAT_NR, 0) + c
        return percentiles(counts, ps, total)
    n = sum(cnt) if total is None else int(total)
    if n <= 0:
        return {}
    ps = tuple(ps)
    limits = thresholds(ps, n)
    if not idx:
        return {p: VALUES[0 if t <= 0 else PLAT_NR - 1] for p, t in zip(ps, limits, strict=True)}
    cum = list(accumulate(cnt))
    out: dict[float, int] = {}
    for p, t in zip(ps, limits, strict=True):
        k = bisect_left(cum, t)
        out[p] = VALUES[0 if t <= 0 else (idx[k] if k < len(idx) else PLAT_NR - 1)]
    return out
