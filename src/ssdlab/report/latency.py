"""The latency distribution of a point, from fio's histogram bins, as every report family shows it.

`point_distribution` adds the stored clat bins of a point's directions (never averaging percentiles);
`distribution_chart` draws, for one or several distributions, the response-time histogram, the CDF and the
exceedance (1 - CDF on a log scale, with the 3, 4 and 5 nines marked); `confidence_levels` and
`confidence_chart` give the response time at chosen confidence levels with fio's percentile rule and the number of
I/Os behind each. Used by the PTS sections (LAT captures, CBW/DIRTH MaxIOPS/MidIOPS/MinIOPS), the
characterization sections and `ssdlab plot --latency`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

from ssdlab import formatting
from ssdlab.report import charts
from ssdlab.report.sections import Chart, Table
from ssdlab.report.templating import fragment
from ssdlab.results import hist
from ssdlab.results.model import LatencyStats, PointResult

NINES = (99.9, 99.99, 99.999)  # the 3, 4 and 5 nines the PTS confidence-level plots mark
LEVELS = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999)
NINES_NAMES = {99.0: "2 nines", 99.9: "3 nines", 99.99: "4 nines", 99.999: "5 nines", 99.9999: "6 nines"}
BUCKETS_PER_BIN = 8  # histogram bars: 8 fio buckets each, 8 bars per doubling of the latency


@dataclass(frozen=True, eq=False)
class Distribution:
    """Latency counts in fio's 1856 buckets, with fio's exact mean and maximum when known (ns)."""

    label: str
    counts: hist.Counts
    mean_ns: float | None = None
    max_ns: float | None = None

    @property
    def n(self) -> int:
        return int(self.counts.sum())


def _stats(pr: PointResult, direction: str | None) -> list[LatencyStats]:
    m = pr.measurement
    if m is None:
        return []
    out = []
    for name, d in m.directions.items():
        if direction is not None and name != direction:
            continue
        if d.clat is not None and d.clat.n > 0 and d.clat.bins:
            out.append(d.clat)
    return out


def point_distribution(pr: PointResult, direction: str | None = None, label: str | None = None
                       ) -> Distribution | None:
    """The clat distribution of one direction, or of every I/O of the point (direction None: bins added).
    None when the point has no bins (fio ran without json+, or nothing completed)."""
    stats = _stats(pr, direction)
    if not stats:
        return None
    counts = hist.merge(*(hist.counts_from_sparse(s.bins) for s in stats))
    n = sum(s.n for s in stats)
    mean = sum(s.mean_ns * s.n for s in stats) / n if n else None
    return Distribution(label=label or (direction or "all I/Os"), counts=counts, mean_ns=mean,
                        max_ns=max(s.max_ns for s in stats))


def direction_distributions(pr: PointResult, label: str) -> list[Distribution]:
    """The read and the write distribution of a point, those it has bins for, labelled '<label> reads' and
    '<label> writes'."""
    return [d for d in (point_distribution(pr, x, f"{label} {x}s") for x in ("read", "write")) if d is not None]


def merged(label: str, parts: Sequence[Distribution]) -> Distribution:
    """Several distributions as one (bins added)."""
    n = sum(p.n for p in parts)
    means = [(p.mean_ns, p.n) for p in parts if p.mean_ns is not None]
    mean = sum(m * k for m, k in means) / n if n and len(means) == len(parts) else None
    maxes = [p.max_ns for p in parts if p.max_ns is not None]
    return Distribution(label=label, counts=hist.merge(*(p.counts for p in parts)), mean_ns=mean,
                        max_ns=max(maxes) if len(maxes) == len(parts) and maxes else None)


# --------------------------------------------------------------------------- numbers

@dataclass(frozen=True)
class Level:
    """The response time at one confidence level, and how many I/Os lie beyond it."""

    pct: float
    value_ns: int
    beyond: int  # I/Os in buckets above the one holding the level
    resolved: bool  # False when the sample is too small for the level: fewer than one I/O is expected beyond it

    @property
    def name(self) -> str:
        return NINES_NAMES.get(self.pct, f"p{self.pct:g}")


def confidence_levels(dist: Distribution, levels: Sequence[float] = LEVELS) -> list[Level]:
    """Response time at each level (fio's rule: the first bucket whose cumulative count reaches p % of N)."""
    n = dist.n
    if n <= 0:
        return []
    found = hist.percentiles(dist.counts, list(levels))
    cum = np.cumsum(dist.counts)
    out = []
    for p in levels:
        value = found[p]
        idx = hist.value_to_idx(value)
        if dist.max_ns is not None:  # a bucket's middle can lie above the largest sample in it
            value = min(value, int(dist.max_ns))
        out.append(Level(pct=p, value_ns=value, beyond=int(n - cum[idx]), resolved=n * (1 - p / 100) >= 1))
    return out


def levels_us(dist: Distribution) -> dict[str, float]:
    """The confidence levels as summary files store them: level in percent ('99.9') -> response time in µs."""
    return {f"{lv.pct:g}": lv.value_ns / 1000.0 for lv in confidence_levels(dist)}


def cdf(dist: Distribution) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(upper bucket bounds in ns, fraction of I/Os at or below each) over the non-empty span of buckets."""
    nz = np.flatnonzero(dist.counts)
    if not len(nz):
        return np.array([]), np.array([])
    lo, hi = int(nz[0]), int(nz[-1])
    uppers = np.array([hist.idx_bounds(i)[1] for i in range(lo, hi + 1)], dtype=np.float64)
    cum = np.cumsum(dist.counts)[lo:hi + 1] / float(dist.n)
    return uppers, cum


def binned(dist: Distribution, per_bin: int = BUCKETS_PER_BIN) -> tuple[npt.NDArray[np.float64],
                                                                        npt.NDArray[np.float64]]:
    """(bin edges in ns, percent of I/Os per bin): fio's buckets joined `per_bin` at a time, over the non-empty
    span. The exact low buckets (0-127 ns) are joined the same way."""
    nz = np.flatnonzero(dist.counts)
    if not len(nz):
        return np.array([]), np.array([])
    first = int(nz[0]) // per_bin * per_bin
    last = (int(nz[-1]) // per_bin + 1) * per_bin
    last = min(last, hist.PLAT_NR)
    edges = [float(hist.idx_bounds(i)[0]) for i in range(first, last, per_bin)]
    edges.append(float(hist.idx_bounds(last - 1)[1]))
    sums = dist.counts[first:last].reshape(-1, per_bin).sum(axis=1) if (last - first) % per_bin == 0 else \
        np.array([dist.counts[i:i + per_bin].sum() for i in range(first, last, per_bin)])
    return np.array(edges), 100.0 * sums.astype(np.float64) / float(dist.n)


# --------------------------------------------------------------------------- charts

def _us_axis(ax: Any, lo: float, hi: float) -> None:
    """Log x axis in µs over lo..hi, from the tick below to the tick above (charts.log_ticks), labelled in one
    style (charts.tick_style)."""
    ax.set_xscale("log")
    ticks = charts.log_ticks(lo, hi, decades=2.0, most=6)  # (a panel a third of the page wide)
    ax.set_xlim(ticks[0], ticks[-1])
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(charts.AxisTicks(log=True))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _plot(axes: Any, dists: Sequence[Distribution], nines: Sequence[float]) -> tuple[float, list[float]]:
    """Each distribution's histogram, CDF and exceedance (with its resolved nines marked); returns the lowest
    exceedance drawn and every histogram bar's height."""
    ax_h, ax_c, ax_e = axes
    lowest_tail = 1.0
    pct_range: list[float] = []
    for i, d in enumerate(dists):
        if d.n <= 0:
            continue
        color = charts.PALETTE[i % len(charts.PALETTE)]
        label = charts.plain_label(f"{d.label} (N={d.n:,})")
        edges, pct = binned(d)
        pct_range.extend(float(v) for v in pct if v > 0)
        ax_h.stairs(pct, edges / 1000.0, color=color, fill=len(dists) == 1, alpha=0.55 if len(dists) == 1 else 1.0,
                    label=label, baseline=None if len(dists) > 1 else 0)
        uppers, frac = cdf(d)
        xs = uppers / 1000.0
        ax_c.step(xs, 100.0 * frac, where="post", color=color, linewidth=1.3, label=label)
        tail = 1.0 - frac
        keep = tail > 0
        if keep.any():
            ax_e.step(xs[keep], tail[keep], where="post", color=color, linewidth=1.3, label=label)
            lowest_tail = min(lowest_tail, float(tail[keep].min()))
        for lv in confidence_levels(d, nines):
            if lv.resolved:
                ax_e.plot([lv.value_ns / 1000.0], [1 - lv.pct / 100.0], marker="o", color=color, markersize=4)
    return lowest_tail, pct_range


def _label_panels(axes: Any, nines: Sequence[float]) -> None:
    """The nines' guide lines on the exceedance panel, and every panel's titles."""
    ax_h, ax_c, ax_e = axes
    for p in nines:
        y = 1 - p / 100.0
        ax_e.axhline(y, linestyle=":", color="#777777", linewidth=0.9)
        ax_e.annotate(NINES_NAMES.get(p, f"p{p:g}"), (0.01, y), xycoords=("axes fraction", "data"), ha="left",
                      va="bottom", fontsize=7, color="#555555")
    ax_h.set_title("Response-time histogram", fontsize=9)
    ax_h.set_ylabel("% of I/Os per bin")
    ax_c.set_title("CDF", fontsize=9)
    ax_c.set_ylabel("% of I/Os at or below")
    ax_c.set_ylim(0, 100.5)
    ax_e.set_title("Exceedance (1 - CDF)", fontsize=9)
    ax_e.set_ylabel("fraction of I/Os above")
    for ax in axes:
        ax.set_xlabel("response time (µs)")


def _scale(axes: Any, dists: Sequence[Distribution], nines: Sequence[float], lowest_tail: float,
           pct_range: list[float]) -> None:
    """Log axes over the range every distribution covers."""
    spans = [binned(d)[0] for d in dists if d.n > 0]
    if not spans:
        return
    ax_h, _, ax_e = axes
    lo = min(float(e[0]) for e in spans) / 1000.0
    hi = max(float(e[-1]) for e in spans) / 1000.0
    lo, hi = max(lo, 1e-3) / 1.15, hi * 1.15
    for ax in axes:
        _us_axis(ax, lo, hi)
    # explicit limits: a filled histogram's zero baseline would stretch a log axis over hundreds of decades
    ax_h.set_ylim(min(pct_range) / 2, max(pct_range) * 1.6)
    charts.log_axis(ax_h, "y")
    ax_e.set_yscale("log")
    bottom = min(lowest_tail, min(1 - p / 100.0 for p in nines)) / 3
    ax_e.set_ylim(bottom, 1.5)
    ax_e.yaxis.set_major_formatter(charts.AxisTicks(log=True))  # 10⁻⁵ ... 10⁰, not 1e-05 beside 0.001


def distribution_figure(dists: Sequence[Distribution], *, title: str = "", nines: Sequence[float] = NINES,
                        width: float = 8.6) -> Any:
    """Histogram | CDF | exceedance of one or several distributions (x: response time in µs, log scale),
    `width` inches wide (the report's column), taller by one legend row per two or three distributions."""
    labels_len = max((len(d.label) for d in dists), default=0)
    ncol = 1 if labels_len > 60 else (2 if labels_len > 28 else 3)
    rows = -(-len(dists) // ncol)
    legend_h = 0.2 * rows + 0.25
    panel_h = 2.6
    fig = charts.new_figure((width, panel_h + 0.9 + legend_h))
    axes = fig.subplots(1, 3)
    for ax in axes:
        charts.copied_ticks(ax)
    lowest_tail, pct_range = _plot(axes, dists, nines)
    _label_panels(axes, nines)
    _scale(axes, dists, nines, lowest_tail, pct_range)
    handles, labels = axes[1].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=7.5, frameon=False,
                   bbox_to_anchor=(0.5, 0.0))
    if title:
        fig.suptitle(charts.plain_label(title), fontsize=10)
    for ax in axes:  # no minor ticks: they cost most of the drawing time and carry no label
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_minor_locator(NullLocator())
    height = panel_h + 0.9 + legend_h
    fig.subplots_adjust(left=0.08, right=0.99, wspace=0.42, bottom=(legend_h + 0.5) / height,
                        top=1 - (0.55 if title else 0.3) / height)
    return fig


@charts.chart
def distribution_chart(dists: Sequence[Distribution], *, title: str = "", nines: Sequence[float] = NINES) -> str:
    """distribution_figure as inline SVG (drawn with the report's other charts inside charts.deferred())."""
    return charts.fig_to_svg(distribution_figure(dists, title=title, nines=nines))


def confidence_chart(dists: Sequence[Distribution], *, title: str = "", nines: Sequence[float] = NINES) -> str:
    """Confidence-level plot: the response time at 3, 4 and 5 nines (nines axis, log time), one line per
    distribution. A level the sample cannot resolve (fewer than one I/O expected beyond it) is left out."""
    lines = []
    for d in dists:
        levels = confidence_levels(d, nines)
        lines.append((d.label, {lv.pct: lv.value_ns / 1000.0 if lv.resolved else None for lv in levels}))
    return charts.percentile_chart(lines, title=title, ylabel="response time (µs)")


def level_rows(dists: Sequence[Distribution], levels: Sequence[float] = LEVELS) -> tuple[list[str], list[list[str]]]:
    """Table header and rows: one row per distribution with N, mean, each level and the maximum (µs)."""
    header = ["I/Os (N)", "mean"] + [f"{NINES_NAMES.get(p, f'p{p:g}')} ({p:g} %)" if p >= 99 else f"p{p:g}"
                                     for p in levels] + ["max"]
    rows = []
    for d in dists:
        row = [d.label, f"{d.n:,}", formatting.latency_ns(d.mean_ns, "n/a")]
        for lv in confidence_levels(d, levels):
            row.append(formatting.latency_ns(lv.value_ns, "n/a") + ("" if lv.resolved else " *"))
        row.append(formatting.latency_ns(d.max_ns, "n/a"))
        rows.append(row)
    return ["", *header], rows


LEVEL_NOTE = ("Response times in µs from fio's histogram bins with fio's percentile rule (each value is the middle "
              "of its bucket, within 0.8 %). * marks a level the sample cannot resolve: fewer than one I/O is "
              "expected beyond it, so the value is in effect the maximum.")


# --------------------------------------------------------------------------- a section for any set of points

CHART_POINTS = 6  # distributions drawn in one chart; the table lists every point


def points_html(results: Sequence[PointResult], *, caption: str = "", limit: int = CHART_POINTS) -> str:
    """The latency distribution of several points: one chart overlaying every I/O of each point (the `limit`
    points with the longest 99.99th percentile when there are more) and a confidence-level table of all."""
    dists = []
    for r in results:
        if r.status != "ok":
            continue
        d = point_distribution(r, None, r.point.label)
        if d is not None and d.n > 0:
            dists.append(d)
    if not dists:
        return ""
    shown = dists
    note = ""
    if len(dists) > limit:
        def tail(d: Distribution) -> int:
            return confidence_levels(d, [99.99])[0].value_ns

        shown = sorted(dists, key=tail, reverse=True)[:limit]
        note = (f" The chart shows the {limit} of {len(dists)} points with the longest 99.99th percentile; "
                "`ssdlab latency RUN POINT` draws any point.")
    header, rows = level_rows(dists)
    chart = Chart(distribution_chart(shown, title=caption or "Latency distribution"),
                  "Response-time histogram, CDF and exceedance of every I/O of each point (fio completion latency, "
                  "from the histogram bins)." + note)
    levels = Table(header, rows, "Response time at each confidence level (µs)")
    return fragment("latency_points.html.j2", chart=chart, levels=levels, note=LEVEL_NOTE)
