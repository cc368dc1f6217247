"""Numbers as people read them: every style ssdlab prints a measured number in, in one place.

A style is one function from a number (or None: nothing measured) to text. Each page keeps the style its
readers know, so the styles differ on purpose; they are named here so that the same style is the same code:

  grouped      1,234,568 / 1,234.5          thousands separated, fixed decimals (tables, the terminal summary)
  mbps         1,234.5 / 123,457            MB/s: one decimal below 100,000
  latency_us   0.03 / 12.4 / 1,234          µs with the precision its size deserves (latency_ns: from ns)
  sig3         1,234 / 12.3 / 1.23          three significant digits below 10 (comparisons, SNIA PTS tables)
  fixed        1,234 / 12.3                 whole from 1,000, else fixed decimals (characterization tables)
  brief        1,234 / 12.3 / 0.123         whole from 100, else three significant digits (gate messages)
  by_unit      per table column unit        latency ladder for µs, one decimal for MB/s below 100, else whole
  counter      1,234 / 1,234.5              a drive counter as reported: ints grouped, floats one decimal
  change       +12 / -3                     a counter's change with its sign
  csv_value    1234.57                      six significant digits for CSV files ('' for none)
  tick         500 / 2.5k / 10M             chart axis labels (log_tick: 5,000 below 100k on log axes)
  bar_label    3500 / 61.2 / 15k / 2.50M     a value written beside its bar

metrics.py binds each metric to its usual style. Pure, no imports beyond the standard library.
"""

from __future__ import annotations

import math
from typing import Any

DASH = "–"  # an en dash: the cell of a value that was not measured


def grouped(v: float | None, digits: int = 0, none: str = "") -> str:
    """Thousands-separated with `digits` decimals."""
    return none if v is None else f"{v:,.{digits}f}"


def mbps(v: float) -> str:
    """Decimal MB/s: one decimal below 100,000, whole above."""
    return f"{v:,.1f}" if v < 100_000 else f"{v:,.0f}"


def latency_us(us: float | None, none: str = "") -> str:
    """A latency in µs with the precision that fits its size: 0.03, 12.4, 1,234."""
    if us is None:
        return none
    if us < 10:
        return f"{us:.2f}"
    if us < 1000:
        return f"{us:.1f}"
    return f"{us:,.0f}"


def latency_ns(ns: float | None, none: str = "") -> str:
    """latency_us of a latency given in ns (as the result model stores them)."""
    return latency_us(None if ns is None else ns / 1000.0, none)


def sig3(v: float | None, unit: str = "", none: str = DASH) -> str:
    """Whole and thousands-separated from 1,000, one decimal from 10, three significant digits below; the unit
    (if any) after a space."""
    if v is None:
        return none
    a = abs(v)
    text = f"{v:,.0f}" if a >= 1000 else (f"{v:.1f}" if a >= 10 else f"{v:.3g}")
    return f"{text} {unit}" if unit else text


def fixed(v: float | None, digits: int = 1, none: str = DASH) -> str:
    """Whole and thousands-separated from 1,000, else `digits` decimals; none (or NaN) is `none`."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return none
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def brief(v: float | None, none: str = "-") -> str:
    """Whole and thousands-separated from 100, else three significant digits."""
    if v is None:
        return none
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def by_unit(v: float | None, unit: str) -> str:
    """A table number by its column's unit: latencies (µs) as latency_us, MB/s with one decimal below 100,
    anything else whole; '' for none."""
    if v is None:
        return ""
    if "µs" in unit:
        return latency_us(v)
    if unit == "MB/s" and v < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def counter(v: Any) -> str:
    """A counter as a tool reported it: ints grouped, floats with one decimal, anything else as text."""
    if v is None:
        return "not reported"
    if isinstance(v, float):
        return f"{v:,.1f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def change(v: Any) -> str:
    """A counter's change, grouped, with its sign ('' for none)."""
    if v is None:
        return ""
    return f"+{v:,}" if v > 0 else f"{v:,}"


def csv_value(v: float | None) -> str:
    """Six significant digits, as the CSV files write a measured value ('' for none)."""
    return "" if v is None else f"{v:.6g}"


def tick(v: float) -> str:
    """An axis tick label: 0, 500, 2.5k, 10k, 2M."""
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def log_tick(v: float) -> str:
    """A log axis's decade label: 500, 5,000, 50k, 5M."""
    if v >= 1e5:
        return tick(v)
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


def bar_label(v: float) -> str:
    """A value written beside its bar: itself below 10,000 (3500, 61.2), then 15k, 2.50M."""
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.2f}M"
    if a >= 1e4:
        return f"{v / 1e3:.0f}k"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"
