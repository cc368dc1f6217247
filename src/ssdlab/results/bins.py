"""Latency histogram bins held compactly: fio's sparse (bucket index, count) pairs in one flat int64 array.

A point keeps a few hundred pairs per latency distribution. As a tuple of 2-tuples of Python ints each pair
costs about 110 bytes; here it costs 16 (one `array('q')` of index, count, index, count, ...), so a run of
thousands of points holds its histograms in a few megabytes. `Bins` reads like the tuple it replaces (a sequence
of (index, count) tuples: len, iteration, indexing, truth, equality with tuples and lists of pairs), and numpy
reads its buffer without a copy (`flat()`; results/hist.py). No numpy here: the model loads without it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, overload

_CODE = "q"  # signed 64-bit, what numpy reads as int64


class Bins(Sequence[tuple[int, int]]):
    """Immutable sparse histogram: (bucket index, count) pairs in the order given."""

    __slots__ = ("_flat",)

    def __init__(self, flat: array[int] | None = None) -> None:
        """`flat`: index, count, index, count, ... (taken as it is: do not change it afterwards)."""
        self._flat: array[int] = flat if flat is not None else array(_CODE)
        if len(self._flat) % 2:
            raise ValueError("bins need an even number of values (index, count pairs)")

    @classmethod
    def of(cls, pairs: Iterable[Sequence[int]] | Bins) -> Bins:
        """Bins from (index, count) pairs: a tuple or list of pairs (or of two-element lists, as JSON has them),
        or Bins (returned as they are). Values are whole numbers; a pair of another length is an error."""
        if type(pairs) is Bins:
            return pairs
        items = pairs if isinstance(pairs, (tuple, list)) else tuple(pairs)
        if not items:
            return EMPTY
        try:
            flat = array(_CODE, chain.from_iterable(items))
        except TypeError:  # not plain ints (floats, numpy scalars, numeric strings): one by one, as int() reads them
            flat = array(_CODE, chain.from_iterable((int(i), int(c)) for i, c in items))
        if len(flat) != 2 * len(items):
            raise ValueError("bins must be (index, count) pairs")
        return cls(flat)

    @classmethod
    def from_bytes(cls, data: bytes) -> Bins:
        """Bins from the raw int64 buffer of (index, count) pairs (numpy's `tobytes()` of an (n, 2) int64 array)."""
        if not data:
            return EMPTY
        flat = array(_CODE)
        flat.frombytes(data)
        return cls(flat)

    def flat(self) -> array[int]:
        """The underlying buffer (index, count, ...): read it, never change it (numpy: np.frombuffer)."""
        return self._flat

    def to_json(self) -> list[list[int]]:
        """The stored form: a list of [index, count] lists."""
        it = iter(self._flat.tolist())
        return [[i, c] for i, c in zip(it, it, strict=True)]

    def __len__(self) -> int:
        return len(self._flat) >> 1

    def __bool__(self) -> bool:
        return len(self._flat) > 0

    @overload
    def __getitem__(self, i: int) -> tuple[int, int]: ...

    @overload
    def __getitem__(self, i: slice) -> Bins: ...

    def __getitem__(self, i: int | slice) -> tuple[int, int] | Bins:
        if isinstance(i, slice):
            return Bins.of(tuple(self)[i])
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("bins index out of range")
        return self._flat[2 * i], self._flat[2 * i + 1]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        it = iter(self._flat)
        return zip(it, it, strict=True)

    def __eq__(self, other: object) -> bool:
        if type(other) is Bins:
            return self._flat == other._flat
        if isinstance(other, (tuple, list)):
            return len(other) == len(self) and all(
                isinstance(o, (tuple, list)) and tuple(o) == p for o, p in zip(other, self, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))  # as the tuple of pairs it equals

    def __repr__(self) -> str:
        return f"Bins({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Bins, (self._flat,))


EMPTY = Bins()
