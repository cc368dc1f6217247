"""fio's log-linear latency histogram (stat.h: 6 bits per group, 29 groups, 1856 buckets, values in ns).

Indices 0..127 hold exact values. Above, each power-of-two range is split into 64 equal buckets, so the
representative value (the bucket midpoint) is within 1/128 (0.78 %) of any sample in it. fio's percentile
rule is reproduced exactly: the p-th percentile is the representative value of the first bucket whose
cumulative count reaches p/100 x N, with no interpolation. Aggregates add bucket counts; percentiles of an
aggregate are computed from the summed counts, never by averaging per-job percentiles.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ssdlab.results.bins import Bins
from ssdlab.results.sparsehist import GROUP_NR as GROUP_NR
from ssdlab.results.sparsehist import PLAT_BITS as PLAT_BITS
from ssdlab.results.sparsehist import PLAT_NR as PLAT_NR
from ssdlab.results.sparsehist import PLAT_VAL as PLAT_VAL
from ssdlab.results.sparsehist import VALUE_TO_IDX, VALUES
from ssdlab.results.sparsehist import bins_percentiles as bins_percentiles
from ssdlab.results.sparsehist import idx_to_value as idx_to_value
from ssdlab.results.sparsehist import thresholds as _thresholds
from ssdlab.results.sparsehist import value_to_idx as value_to_idx

Counts = npt.NDArray[np.int64]


def idx_bounds(idx: int) -> tuple[int, int]:
    """[lower, upper) latency bounds (ns) of bucket `idx`."""
    if idx < 2 * PLAT_VAL:
        return idx, idx + 1
    shift = idx // PLAT_VAL - 1
    lower = (1 << (shift + PLAT_BITS)) + (idx % PLAT_VAL) * (1 << shift)
    return lower, lower + (1 << shift)


def values_to_idx(values_ns: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """value_to_idx of every element (latencies below 2^53 ns, as every real one is)."""
    v = np.maximum(np.asarray(values_ns, dtype=np.int64), 0)
    _, exp = np.frexp(v.astype(np.float64))  # v = m * 2^exp with m in [0.5, 1): msb = exp - 1
    msb = np.where(v > 0, exp.astype(np.int64) - 1, 0)
    shift = np.maximum(msb - PLAT_BITS, 0)
    idx = (shift + 1) * PLAT_VAL + ((v >> shift) & (PLAT_VAL - 1))
    return np.where(msb <= PLAT_BITS, v, np.minimum(idx, PLAT_NR - 1))


_VALUES = np.array(VALUES, dtype=np.int64)
_VALUE_TO_IDX = VALUE_TO_IDX
_VALUE_LIST: list[int] = VALUES  # the same values as Python ints


def bucket_values() -> npt.NDArray[np.int64]:
    """Representative value of every bucket (a read-only view)."""
    view = _VALUES.view()
    view.flags.writeable = False
    return view


def counts_from_bins(bins: Mapping[str, int] | Mapping[int, int]) -> Counts:
    """Dense 1856-count array from fio's json+ `bins` (keys are representative values in ns)."""
    out = np.zeros(PLAT_NR, dtype=np.int64)
    for key, count in bins.items():
        value = int(key)
        idx = _VALUE_TO_IDX.get(value)
        if idx is None:  # not a representative value: file it the way fio would file a sample
            idx = value_to_idx(value)
        out[idx] += int(count)
    return out


def counts_from_sparse(pairs: Iterable[Sequence[int]] | Bins) -> Counts:
    """Dense array from stored (index, count) pairs (an index given twice adds up)."""
    out = np.zeros(PLAT_NR, dtype=np.int64)
    if type(pairs) is Bins:  # the model's compact form: its buffer as it is
        flat = _flat(pairs)
        np.add.at(out, flat[:, 0], flat[:, 1])
        return out
    items = pairs if isinstance(pairs, (tuple, list)) else tuple(pairs)
    if not items:
        return out
    try:  # all pairs at once (a point stores hundreds)
        index, count = zip(*items, strict=True)
        np.add.at(out, np.array(index, dtype=np.int64), np.array(count, dtype=np.int64))
        return out
    except (ValueError, TypeError, OverflowError, IndexError):  # not plain pairs: one by one, as the error says
        out[:] = 0
    for idx, n in items:
        out[int(idx)] += int(n)
    return out


def _flat(bins: Bins) -> npt.NDArray[np.int64]:
    """The (n, 2) index/count view of compact bins (no copy)."""
    return np.frombuffer(bins.flat(), dtype=np.int64).reshape(-1, 2)


def sparse(counts: Counts) -> list[tuple[int, int]]:
    """(index, count) pairs of the non-empty buckets, for compact storage."""
    nz = np.flatnonzero(counts)
    return list(zip(nz.tolist(), counts[nz].tolist(), strict=True))


def sparse_bins(counts: Counts) -> Bins:
    """The non-empty buckets of a dense histogram as the model's compact Bins."""
    nz = np.flatnonzero(counts)
    return Bins.from_bytes(np.column_stack((nz, counts[nz])).astype(np.int64).tobytes())


def merge(*arrays: Counts) -> Counts:
    """Aggregate histograms by adding counts (the only correct way to combine latency distributions)."""
    out = np.zeros(PLAT_NR, dtype=np.int64)
    for a in arrays:
        out += a
    return out


def percentiles(counts: Counts, ps: Sequence[float], total: int | None = None) -> dict[float, int]:
    """fio's percentile rule: value of the first bucket whose cumulative count >= p/100 * total.

    `total` defaults to the sum of counts (fio uses the sample count N, which equals it).
    Comparison is done in exact rational arithmetic on the given float p, so boundaries do not flip.
    """
    n = int(counts.sum()) if total is None else int(total)
    if n <= 0:
        return {}
    cum = np.cumsum(counts)
    ps = tuple(ps)
    found = np.searchsorted(cum, _thresholds(ps, n), side="left").tolist() if ps else []
    return {p: _VALUE_LIST[min(idx, PLAT_NR - 1)] for p, idx in zip(ps, found, strict=True)}


def mean_ns(counts: Counts) -> float:
    """Approximate mean from bucket midpoints (within 0.78 %); prefer fio's exact mean when available."""
    n = int(counts.sum())
    return float((counts * _VALUES).sum() / n) if n else 0.0


def exceedance(counts: Counts, thresholds_ns: Sequence[int]) -> dict[int, float]:
    """Percent of samples whose bucket lies at or above each threshold (bucket lower bound >= t)."""
    n = int(counts.sum())
    out: dict[int, float] = {}
    for t in thresholds_ns:
        first = value_to_idx(t)
        lower, _ = idx_bounds(first)
        if lower < t:  # the bucket straddles t: count it as above only from the next bucket
            first += 1
        out[t] = 100.0 * float(counts[first:].sum()) / n if n else 0.0
    return out
