"""Chart helpers shared by every report section: matplotlib figures rendered to inline SVG strings.

Every function returns an `<svg ...>` fragment (no XML prolog, no external references) ready to embed
in report.html. Figures are closed after rendering; output is deterministic for the same data.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

plt.rcParams.update({
    "svg.hashsalt": "ssdlab",  # stable element ids: identical data -> identical SVG
    "svg.fonttype": "none",  # text stays text: smaller files, selectable labels
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 96,
})

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


@dataclass(frozen=True)
class Series:
    """One line/scatter series."""

    name: str
    x: Sequence[float]
    y: Sequence[float | None]
    style: str = "-o"  # matplotlib format string: "-o" line+markers, "." scatter, "--" dashed
    color: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # passed to Axes.plot (e.g. linewidth)


@dataclass(frozen=True)
class RefLine:
    """A horizontal reference line (e.g. steady-state average, 110 %/90 % guides, a latency limit)."""

    y: float
    label: str
    style: str = "--"
    color: str = "#555555"


def fig_to_svg(fig: Any) -> str:
    """Render and close a figure; return the bare <svg> element."""
    buf = io.StringIO()
    try:
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    finally:
        plt.close(fig)
    text = buf.getvalue()
    start = text.find("<svg")
    text = text[start:] if start >= 0 else text
    return re.sub(r"<!--.*?-->", "", text, flags=re.S).strip()


def _axes(title: str, size: tuple[float, float] = (7.5, 3.6)) -> tuple[Any, Any]:
    fig, ax = plt.subplots(figsize=size)
    if title:
        ax.set_title(title)
    return fig, ax


def bar_chart(categories: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str = "",
              ylabel: str = "", log: bool = False, annotate: bool = True) -> str:
    """Grouped vertical bars: one group per category, one bar per series (None -> no bar)."""
    n = max(1, len(series))
    width = 0.8 / n
    fig, ax = _axes(title, (max(6.0, 0.9 * len(categories) * max(1, n) ** 0.5 + 2), 3.6))
    for i, (name, values) in enumerate(series.items()):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(categories))]
        ys = [0.0 if v is None else float(v) for v in values]
        bars = ax.bar(xs, ys, width=width * 0.95, label=name, color=PALETTE[i % len(PALETTE)])
        if annotate:
            for b, v in zip(bars, values, strict=False):
                if v is not None and v > 0:
                    ax.annotate(_short(v), (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                                va="bottom", fontsize=7, xytext=(0, 1), textcoords="offset points")
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels(categories, rotation=20 if len(categories) > 4 else 0, ha="right" if len(categories) > 4
                       else "center")
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    if len(series) > 1:
        ax.legend(fontsize=8)
    return fig_to_svg(fig)


def hbar_chart(labels: Sequence[str], values: Sequence[float], *, title: str = "", xlabel: str = "",
               color: str = PALETTE[0]) -> str:
    """Horizontal bars (CrystalDiskMark style: one row per test)."""
    fig, ax = _axes(title, (7.5, 0.45 * len(labels) + 1.2))
    ys = list(range(len(labels)))[::-1]
    bars = ax.barh(ys, values, color=color)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels)
    ax.set_xlabel(xlabel)
    for b, v in zip(bars, values, strict=False):
        ax.annotate(_short(v), (b.get_width(), b.get_y() + b.get_height() / 2), va="center", fontsize=7,
                    xytext=(2, 0), textcoords="offset points")
    return fig_to_svg(fig)


def line_chart(series: Sequence[Series], *, title: str = "", xlabel: str = "", ylabel: str = "",
               logx: bool = False, logy: bool = False, ref_lines: Sequence[RefLine] = (),
               xticks: Sequence[float] | None = None, xticklabels: Sequence[str] | None = None,
               size: tuple[float, float] = (7.5, 3.6)) -> str:
    """Lines/scatter of several series with optional horizontal reference lines."""
    fig, ax = _axes(title, size)
    for i, s in enumerate(series):
        pts = [(x, y) for x, y in zip(s.x, s.y, strict=False) if y is not None]
        if not pts:
            continue
        xs, ys = zip(*pts, strict=True)
        ax.plot(xs, ys, s.style, label=s.name, color=s.color or PALETTE[i % len(PALETTE)], markersize=3,
                **dict(s.extra))
    for r in ref_lines:
        ax.axhline(r.y, linestyle=r.style, color=r.color, linewidth=1, label=r.label)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if xticks is not None:
        ax.set_xticks(list(xticks))
        if xticklabels is not None:
            ax.set_xticklabels(list(xticklabels))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if len(series) + len(ref_lines) > 1:
        ax.legend(fontsize=7, loc="best")
    return fig_to_svg(fig)


def bar3d_chart(xlabels: Sequence[str], ylabels: Sequence[str], z: Sequence[Sequence[float | None]], *,
                title: str = "", xlabel: str = "", ylabel: str = "", zlabel: str = "") -> str:
    """3D bars: z[i][j] is the height at xlabels[i], ylabels[j] (e.g. block size x R/W mix -> IOPS)."""
    fig = plt.figure(figsize=(7.5, 5.0))
    ax = fig.add_subplot(projection="3d")
    if title:
        ax.set_title(title)
    for j in range(len(ylabels)):
        xs, ys, hs = [], [], []
        for i in range(len(xlabels)):
            v = z[i][j]
            if v is None:
                continue
            xs.append(i)
            ys.append(j)
            hs.append(float(v))
        if hs:
            ax.bar3d(xs, ys, [0.0] * len(hs), 0.6, 0.6, hs, color=PALETTE[j % len(PALETTE)], shade=True)
    ax.set_xticks([i + 0.3 for i in range(len(xlabels))])
    ax.set_xticklabels(list(xlabels), fontsize=7)
    ax.set_yticks([j + 0.3 for j in range(len(ylabels))])
    ax.set_yticklabels(list(ylabels), fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_zlabel(zlabel)
    return fig_to_svg(fig)


def histogram_chart(values: Sequence[float], *, bins: int = 40, title: str = "", xlabel: str = "",
                    ylabel: str = "count") -> str:
    """Distribution of values (e.g. per-second IOPS of a stability run)."""
    fig, ax = _axes(title)
    ax.hist(list(values), bins=bins, color=PALETTE[0])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return fig_to_svg(fig)


def _short(v: float) -> str:
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.2f}M"
    if a >= 1e4:
        return f"{v / 1e3:.0f}k"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"
