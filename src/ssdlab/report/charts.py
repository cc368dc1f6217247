"""Chart helpers shared by every report section: matplotlib figures rendered to inline SVG strings.

Every *_chart function returns an `<svg ...>` fragment (no XML prolog, no external references) ready to embed
in report.html. Figures are closed after rendering; output is deterministic for the same data. line_figure
returns the figure itself, for a caller that renders it as PNG (fig_to_png) or SVG (fig_to_svg).
"""

from __future__ import annotations

import functools
import io
import math
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

plt.rcParams.update({
    "svg.hashsalt": "ssdlab",  # stable element ids: identical data -> identical SVG
    "svg.fonttype": "none",  # text stays text: smaller files, selectable labels
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 96,
})

P = ParamSpec("P")

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
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    # the RDF metadata block only carries vocabulary URLs (dc/cc/rdf); drop it so the report names no URL
    # besides the xmlns namespace declarations
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S).strip()


def fig_to_png(fig: Any, dpi: int = 120) -> bytes:
    """Render and close a figure; return PNG bytes (for `ssdlab plot --out FILE.png`)."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", bbox_inches="tight", dpi=dpi)
    finally:
        plt.close(fig)
    return buf.getvalue()


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
        log_axis(ax, "y")
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _tick(v)))
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


def line_figure(series: Sequence[Series], *, title: str = "", xlabel: str = "", ylabel: str = "",
                logx: bool = False, logy: bool = False, ref_lines: Sequence[RefLine] = (),
                xticks: Sequence[float] | None = None, xticklabels: Sequence[str] | None = None,
                size: tuple[float, float] = (7.5, 3.6), vlines: Sequence[RefLine] = ()) -> Any:
    """Lines/scatter of several series with optional horizontal reference lines and vertical markers (`vlines`:
    RefLine with the x value in `y`, e.g. a workload transition); line_chart draws it as SVG."""
    fig, ax = _axes(title, size)
    for i, s in enumerate(series):
        pts = [(x, y) for x, y in zip(s.x, s.y, strict=False) if y is not None]
        color = s.color or PALETTE[i % len(PALETTE)]
        if not pts:  # keep the line in the legend, saying it has nothing to draw, rather than drop it silently
            ax.plot([], [], s.style, label=f"{s.name} (no valid value)", color=color)
            continue
        xs, ys = zip(*pts, strict=True)
        ax.plot(xs, ys, s.style, label=s.name, color=color, markersize=3, **dict(s.extra))
    for r in ref_lines:
        ax.axhline(r.y, linestyle=r.style, color=r.color, linewidth=1, label=r.label)
    for r in vlines:
        ax.axvline(r.y, linestyle=r.style, color=r.color, linewidth=1, label=r.label)
    if logx:
        log_axis(ax, "x")
    if logy:
        log_axis(ax, "y")
    else:  # 2.5M rather than 2.5 with a detached "1e6" offset label
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _tick(v)))
    if xticks is not None:
        ax.set_xticks(list(xticks))
        if xticklabels is not None:
            ax.set_xticklabels(list(xticklabels))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if len(series) + len(ref_lines) + len(vlines) > 1:
        ax.legend(fontsize=7, loc="best")
    return fig


def _as_svg(build: Callable[P, Any]) -> Callable[P, str]:
    """A figure builder turned into a chart helper that returns the figure as inline SVG."""

    @functools.wraps(build)
    def chart(*args: P.args, **kwargs: P.kwargs) -> str:
        return fig_to_svg(build(*args, **kwargs))

    return chart


line_chart = _as_svg(line_figure)


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
    """Bar annotation: the value itself below 10,000 (3500, 61.2), then 15k, 2.50M. Axis ticks use _tick."""
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.2f}M"
    if a >= 1e4:
        return f"{v / 1e3:.0f}k"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def plain_label(text: str) -> str:
    """Label text shown literally: a `$` from run data must not switch matplotlib into mathtext."""
    return text.replace("$", r"\$")


def grouped_hbar_chart(labels: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str = "",
                       xlabel: str = "", colors: Sequence[str] | None = None, width: float = 7.5,
                       missing: Mapping[str, Sequence[str | None]] | None = None) -> str:
    """Horizontal bars, one row per label and one bar per series inside it (CrystalDiskMark-like read/write).

    Rows run top to bottom in the given order. A row only makes room for the series it has, so a sweep of
    read-only and write-only rows stays compact. None draws no bar; `missing[series][row]` (e.g. "skipped")
    is written where that bar would be, so a value that was not measured is never shown as zero.
    """
    names = list(series)
    notes = {name: list((missing or {}).get(name, ())) for name in names}

    def note(name: str, j: int) -> str | None:
        return notes[name][j] if j < len(notes[name]) else None

    present = [[i for i, name in enumerate(names) if series[name][j] is not None or note(name, j)]
               for j in range(len(labels))]
    per_row = max((len(p) for p in present), default=1) or 1
    row_h = 0.22 * per_row + 0.18
    fig, ax = _axes("", (width, max(1.8, row_h * len(labels) + 1.1)))
    top = max((float(v) for vals in series.values() for v in vals if v is not None), default=0.0)
    palette = list(colors) if colors else list(PALETTE)
    bars: dict[int, tuple[list[float], list[float], list[float]]] = {}  # series -> ys, widths, heights
    for j, slots in enumerate(present):
        height = 0.8 / max(1, len(slots))
        for k, i in enumerate(slots):
            name = names[i]
            v = series[name][j]
            y = len(labels) - 1 - j + ((len(slots) - 1) / 2 - k) * height
            w = 0.0 if v is None else float(v)
            ys, ws, hs = bars.setdefault(i, ([], [], []))
            ys.append(y)
            ws.append(w)
            hs.append(height * 0.92)
            text = plain_label(str(note(name, j))) if v is None else _short(float(v))
            ax.annotate(text, (w, y), va="center", fontsize=7, xytext=(2, 0), textcoords="offset points",
                        color="#9b1c1c" if v is None else "black", fontstyle="italic" if v is None else "normal")
    for i, (ys, ws, hs) in bars.items():
        ax.barh(ys, ws, height=hs, color=palette[i % len(palette)])
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels([textwrap.fill(plain_label(t), 24) for t in reversed(labels)])
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.set_xlim(0, top * 1.14 if top > 0 else 1.0)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _tick(v)))
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(plain_label(title), loc="left")
    if len(names) > 1:  # legend above the plot, right of the left-aligned title: never over a bar
        handles = [Patch(color=palette[i % len(palette)], label=plain_label(name)) for i, name in enumerate(names)]
        ax.legend(handles=handles, fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=len(names),
                  frameon=False, borderaxespad=0.2)
    return fig_to_svg(fig)


def nines(p: float) -> float:
    """Position of percentile p on a 'nines' axis: p50 -> 0.3, p90 -> 1, p99 -> 2, p99.9 -> 3, p99.99 -> 4."""
    return -math.log10(1.0 - p / 100.0)


def percentile_chart(lines: Sequence[tuple[str, Mapping[float, float | None]]], *, title: str = "",
                     ylabel: str = "completion latency (µs)", size: tuple[float, float] = (5.8, 3.2)) -> str:
    """Latency against percentile on a nines axis (log latency scale), one line per (name, {p: value}).

    Non-positive or missing values are left out of their line (a log axis cannot show them).
    """
    fig, ax = _axes(title, size)
    ps_all: set[float] = set()
    for i, (name, values) in enumerate(lines):
        pts = sorted((p, float(v)) for p, v in values.items() if v is not None and v > 0 and p < 100)
        if not pts:
            continue
        ps_all.update(p for p, _ in pts)
        ax.plot([nines(p) for p, _ in pts], [v for _, v in pts], "-o", markersize=3, linewidth=1.3,
                color=PALETTE[i % len(PALETTE)], label=plain_label(name))
    ticks = sorted(ps_all)
    ax.set_xticks([nines(p) for p in ticks])
    ax.set_xticklabels([f"p{p:g}" for p in ticks])
    log_axis(ax, "y")
    ax.set_xlabel("percentile")
    ax.set_ylabel(ylabel)
    if ps_all:
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    return fig_to_svg(fig)


def log_axis(ax: Any, which: str = "y") -> None:
    """Log scale with plain-number tick labels (0.05, 1, 20, 1,000) instead of 10^n; call after plotting.

    Spans up to three decades get 1-2-5 steps, wider ones one label per decade.
    """
    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    lo, hi = ax.get_ylim() if which == "y" else ax.get_xlim()
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 1.0
    subs = (1.0, 2.0, 5.0) if decades <= 3 else (1.0,)  # keep labels apart
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=12))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: _plain(v)))
    axis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", axis=which, alpha=0.3)


def _plain(v: float) -> str:
    if v >= 1e5:
        return _tick(v)
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


def _tick(v: float) -> str:
    """Axis tick label: 0, 500, 2.5k, 10k, 2M."""
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"
