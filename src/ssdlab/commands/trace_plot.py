"""`ssdlab trace info --plot FILE`: a trace's characterization drawn in one figure: arrivals per second by
direction, the size histogram, the inter-arrival distribution, the queue depth over time (from the trace's
response times), offsets over time, and the skew curve (share of I/Os against share of touched blocks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ssdlab.trace.characterize import Characterization, block_counts
from ssdlab.trace.model import OP_NAMES, Trace

SCATTER_MAX = 20_000  # offsets drawn (an even sample of longer traces)
COLORS = {"read": "#1f77b4", "write": "#d62728", "trim": "#2ca02c"}


def plot_trace(trace: Trace, char: Characterization, out: Path) -> None:
    from ssdlab.report.charts import new_figure, write_figure

    fig = new_figure((13.0, 8.0))
    axes = fig.subplots(2, 3)
    _rate(axes[0][0], trace)
    _sizes(axes[0][1], trace)
    _gaps(axes[0][2], trace)
    _depth(axes[1][0], trace)
    _offsets(axes[1][1], trace)
    _skew(axes[1][2], trace, char)
    from ssdlab.units import format_duration

    fig.suptitle(f"{Path(char.path).name} ({char.format}): {char.ios:,} I/Os over {format_duration(char.duration_s)}")
    fig.tight_layout()
    write_figure(fig, out)


def _rate(ax: Any, trace: Trace) -> None:
    sec = trace.time_ns // 1_000_000_000
    k = int(sec.max()) + 1 if len(trace) else 1
    for d, name in enumerate(OP_NAMES):
        sel = trace.op == d
        if bool(sel.any()):
            ax.plot(np.arange(k), np.bincount(sec[sel], minlength=k), label=name, color=COLORS[name], lw=1)
    ax.set_title("arrivals per second")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("I/Os")
    ax.legend(fontsize=8)


def _sizes(ax: Any, trace: Trace) -> None:
    exp = np.ceil(np.log2(np.maximum(trace.size, 1))).astype(np.int64)
    lo, hi = (int(exp.min()), int(exp.max())) if len(trace) else (9, 12)
    bottom = np.zeros(hi - lo + 1)
    for d, name in enumerate(OP_NAMES):
        sel = trace.op == d
        if bool(sel.any()):
            counts = np.bincount(exp[sel] - lo, minlength=hi - lo + 1)
            ax.bar(np.arange(lo, hi + 1), counts, bottom=bottom, label=name, color=COLORS[name])
            bottom += counts
    ticks = np.arange(lo, hi + 1)
    ax.set_xticks(ticks, [_bs(1 << int(t)) for t in ticks], rotation=45, fontsize=7)
    ax.set_title("I/O sizes (up to each power of two)")
    ax.set_ylabel("I/Os")


def _bs(n: int) -> str:
    from ssdlab.units import format_bs

    return format_bs(n)


def _gaps(ax: Any, trace: Trace) -> None:
    gaps = np.diff(trace.time_ns) / 1000.0
    gaps = gaps[gaps > 0]
    if gaps.size:
        g = np.sort(gaps)
        ax.plot(g, np.arange(1, g.size + 1) / g.size, color="#444444", lw=1)
        ax.set_xscale("log")
    ax.set_title("inter-arrival time (CDF, gaps above 0)")
    ax.set_xlabel("µs")


def _depth(ax: Any, trace: Trace) -> None:
    """Mean I/Os in flight per second (the response times of the I/Os arriving in it, over the second: Little's
    law; a response time that runs into the next second counts in its arrival's)."""
    ax.set_title("queue depth from response times (mean per second)")
    if trace.latency_ns is None or not bool(np.any(trace.latency_ns >= 0)):
        ax.text(0.5, 0.5, "no response times in this trace", ha="center", va="center", transform=ax.transAxes)
        return
    have = trace.latency_ns >= 0
    sec = trace.time_ns[have] // 1_000_000_000
    busy = np.bincount(sec, weights=trace.latency_ns[have].astype(np.float64)) / 1e9
    ax.plot(np.arange(busy.size), busy, lw=1, color="#444444")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("I/Os in flight")


def _offsets(ax: Any, trace: Trace) -> None:
    idx = np.linspace(0, max(len(trace) - 1, 0), min(len(trace), SCATTER_MAX)).astype(np.int64)
    for d, name in enumerate(OP_NAMES):
        sel = idx[trace.op[idx] == d]
        if sel.size:
            ax.scatter(trace.time_ns[sel] / 1e9, trace.offset[sel] / 2**30, s=1, color=COLORS[name], label=name)
    ax.set_title("offsets over time")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("GiB")


def _skew(ax: Any, trace: Trace, char: Characterization) -> None:
    counts = np.sort(block_counts(trace))[::-1]
    if counts.size:
        x = np.arange(1, counts.size + 1) / counts.size * 100
        y = np.cumsum(counts) / counts.sum() * 100
        ax.plot(x, y, color="#444444", lw=1)
        ax.plot([0, 100], [0, 100], color="#bbbbbb", lw=0.8, ls="--")
    ax.set_title(f"skew: hottest 1 % -> {char.skew['hot1'] * 100:.1f} %, 10 % -> {char.skew['hot10'] * 100:.1f} %")
    ax.set_xlabel("% of touched 4 KiB blocks (hottest first)")
    ax.set_ylabel("% of I/Os")
