"""Sweep axes: value lists, power-of-two ranges, `--axis` overrides and the cartesian product of a matrix.

An axis is a Workload field swept over a list (rw, bs, bssplit, iodepth, numjobs, rwmixread) or the rate axis
(`rate`: "max", "N%" of the max, or an absolute IOPS number). Values may be written as a list, a scalar,
or a power-of-two range string "1..128" (1, 2, 4, ..., 128); block sizes accept "512", "4k", "1m".
The matrix is expanded in the order the axes are written, the first axis outermost, except that the rate
axis is always innermost so a curve's uncapped max point runs before the points derived from it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ssdlab.errors import UsageError
from ssdlab.suites.limits import check_plan_size
from ssdlab.units import parse_size

AXES = ("rw", "bs", "bssplit", "iodepth", "numjobs", "rwmixread", "rate")
INT_AXES = ("iodepth", "numjobs", "rwmixread")
RW_VALUES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim",
             "trimwrite")


def pow2_range(lo: int, hi: int) -> list[int]:
    """[lo, 2lo, 4lo, ..., <= hi]."""
    if lo <= 0 or hi < lo:
        raise UsageError(f"bad range {lo}..{hi}: use positive numbers, low first (e.g. 1..128)")
    out = []
    v = lo
    while v <= hi:
        out.append(v)
        v *= 2
    return out


def _range_text(text: str, as_size: bool) -> list[int] | None:
    if ".." not in text:
        return None
    lo_text, _, hi_text = text.partition("..")
    conv = parse_size if as_size else _int
    return pow2_range(conv(lo_text.strip()), conv(hi_text.strip()))


def _int(text: str) -> int:
    try:
        return int(str(text).strip())
    except ValueError:
        raise UsageError(f"bad number {text!r}") from None


def axis_values(name: str, raw: Any) -> list[Any]:
    """Normalised values of axis `name` (ints for counts, bytes for bs, strings for rw/bssplit/rate)."""
    if name not in AXES:
        raise UsageError(f"unknown axis {name!r}: use {', '.join(AXES)}")
    items: list[Any] = list(raw) if isinstance(raw, (list, tuple)) else [raw]
    out: list[Any] = []
    for item in items:
        if isinstance(item, str) and name in ("bs", *INT_AXES):
            expanded = _range_text(item, as_size=name == "bs")
            if expanded is not None:
                out.extend(expanded)
                continue
        out.append(_one(name, item))
    if not out:
        raise UsageError(f"axis {name} has no values")
    return out


def _one(name: str, item: Any) -> Any:
    if name == "bs":
        return parse_size(str(item))
    if name in INT_AXES:
        value = _int(item)
        if name == "rwmixread" and not 0 <= value <= 100:
            raise UsageError(f"rwmixread {value} is outside 0..100")
        if name != "rwmixread" and value < 1:
            raise UsageError(f"{name} {value} must be at least 1")
        return value
    if name == "rw":
        text = str(item)
        if text not in RW_VALUES:
            raise UsageError(f"unknown rw {text!r}: use {', '.join(RW_VALUES)}")
        return text
    if name == "rate":
        return rate_value(item)
    return str(item)


def rate_value(item: Any) -> str | int:
    """'max', 'N%' (kept as text) or an absolute IOPS integer."""
    text = str(item).strip().lower()
    if text == "max":
        return "max"
    if text.endswith("%"):
        try:
            pct = float(text[:-1])
        except ValueError:
            raise UsageError(f"bad rate {item!r}: use max, a percentage of max (50%) or IOPS") from None
        if not 0 < pct <= 1000:
            raise UsageError(f"rate {item} is out of range")
        return f"{pct:g}%"
    value = _int(text)
    if value < 1:
        raise UsageError(f"rate {item} must be at least 1 IOPS")
    return value


def parse_axis_overrides(items: Sequence[str] | None) -> dict[str, list[Any]]:
    """`--axis NAME=V1,V2` (repeatable) -> {name: values}; values may use ranges ('iodepth=1..32')."""
    out: dict[str, list[Any]] = {}
    for item in items or ():
        name, sep, values = str(item).partition("=")
        name = name.strip()
        if not sep or not values.strip():
            raise UsageError(f"bad --axis {item!r}: use NAME=V1,V2 (e.g. --axis bs=4k,64k --axis iodepth=1..32)")
        out[name] = axis_values(name, [v for v in values.split(",") if v.strip()])
    return out


def expand(axes: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """Cartesian product in axis order (first outermost), the rate axis innermost."""
    names = [n for n in axes if n != "rate"] + (["rate"] if "rate" in axes else [])
    check_plan_size(math.prod(len(axes[n]) for n in names), "a matrix")  # refused before it is expanded
    combos = itertools.product(*(axes[n] for n in names))
    return [dict(zip(names, combo, strict=True)) for combo in combos]
