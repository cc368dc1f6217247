"""Chart helpers shared by every report section: matplotlib figures rendered to inline SVG strings.

Every *_chart function returns an HTML fragment ready to embed in report.html: an `<svg ...>` element (no XML
prolog, no external references) and, for a chart of several series, its legend as HTML under it (a legend
drawn by matplotlib costs as much as the rest of the chart). Output is deterministic for the same data.
line_figure and category_figure return the figure itself (legend included), for a caller that renders it as PNG
(fig_to_png) or SVG (fig_to_svg), as `ssdlab plot` does.

Inside `with deferred() as batch:` the *_chart functions return a placeholder instead and `batch.fill(html)`
renders every chart of a report at once, in parallel worker processes where the host has cores to spare,
giving each chart's SVG element ids a prefix of their own (ids must be unique in one HTML document).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gc
import io
import math
import multiprocessing
import os
import re
import textwrap
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec

import matplotlib

matplotlib.use("Agg")  # (pyplot is not imported: every figure is made with its own canvas, see new_figure)
from matplotlib import cbook
from matplotlib.axis import XAxis, YAxis
from matplotlib.backends import backend_mixed, backend_svg
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter, NullLocator
from matplotlib.transforms import ScaledTranslation

from ssdlab import formatting
from ssdlab.errors import UsageError
from ssdlab.results import atomic

matplotlib.rcParams.update({
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
    """Render a figure; return the bare <svg> element, cropped to what it draws.

    One drawing, with one renderer: savefig's bbox_inches="tight" draws twice, measuring every text again with
    another renderer, for the same crop. Here the SVG is drawn at the figure's size, the tight box is measured
    with that renderer (its text extents already known), and the viewBox is cropped to it.
    """
    buf = io.StringIO()
    dpi = fig.dpi
    _mark_log_axes(fig)
    try:
        fig.dpi = 72  # SVG user units are points, as savefig draws them
        width, height = fig.get_size_inches()
        mixed: Any = backend_mixed.MixedModeRenderer  # (untyped in matplotlib)
        svg: Any = _SVGRenderer
        renderer = mixed(fig, width, height, dpi,
                         svg(width * 72, height * 72, buf, image_dpi=dpi, metadata={"Date": None, "Creator": None}))
        with _ticks_once(fig), _layouts_once():
            fig.draw(renderer)
            box = fig.get_tightbbox(renderer).padded(PAD_IN)  # inches, origin bottom left
        renderer.finalize()
    finally:
        fig.dpi = dpi
    text = buf.getvalue()
    start = text.find("<svg")
    text = text[start:] if start >= 0 else text
    text = _crop(text, box.x0 * 72, (height - box.y1) * 72, box.width * 72, box.height * 72)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    # the RDF metadata block only carries vocabulary URLs (dc/cc/rdf); drop it so the report names no URL
    # besides the xmlns namespace declarations
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S).strip()


def _mark_log_axes(fig: Any) -> None:
    """Name every log-scaled axis in the SVG (`<g id="log-y-0">`: y axis of the figure's first axes), so a page
    test can find them and count their labelled ticks."""
    for i, ax in enumerate(fig.axes):
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if axis.get_scale() == "log" and axis.get_gid() is None:
                axis.set_gid(f"log-{which}-{i}")


PAD_IN = 0.1  # margin around a chart's drawing, inches (savefig's default)
_EXTENTS: dict[tuple[str, Any, Any], Any] = {}  # (text, font properties, math mode) -> width, height, descent
MAX_EXTENTS = 20_000


class _SVGRenderer(backend_svg.RendererSVG):
    """matplotlib's SVG renderer, measuring each text in each font once per process, not once per chart.

    An SVG text's extent depends on the text, its font and math mode only (it is measured in points from the
    font outlines, not rasterised at a resolution), so it is the same in every chart; the axes' tick labels
    repeat from chart to chart.
    """

    def get_text_width_height_descent(self, s: str, prop: Any, ismath: Any) -> Any:
        measure: Any = super().get_text_width_height_descent  # (untyped in matplotlib)
        if ismath == "TeX":  # (not used here; it depends on the TeX installation)
            return measure(s, prop, ismath)
        key = (s, prop, ismath)
        extent = _EXTENTS.get(key)
        if extent is None:
            if len(_EXTENTS) >= MAX_EXTENTS:
                _EXTENTS.clear()
            extent = _EXTENTS[(s, prop.copy(), ismath)] = measure(s, prop, ismath)
        return extent


# copied_ticks and _layouts_once reach into matplotlib's private tick and text internals. The tests check them
# against matplotlib's own ticks and layouts (tests/unit/test_report_charts.py) on the releases listed here; on
# any other release the charts take matplotlib's own path until those tests have been run on it and it is added.
CHECKED_RELEASES = frozenset({(3, 11)})
SHORTCUTS = tuple(int(part) for part in re.findall(r"\d+", matplotlib.__version__)[:2]) in CHECKED_RELEASES

_LAYOUTS: dict[tuple[Any, ...], Any] = {}  # a text's layout inputs -> its layout (as Text._get_layout returns it)
_LAYOUT = Text._get_layout  # type: ignore[attr-defined]  # (matplotlib's own)


def _layout_once(text: Any, renderer: Any) -> Any:
    """Text._get_layout remembered per process for an SVG drawing (text extents as _SVGRenderer's).

    A text's layout (its box and line offsets around its anchor, not its position) depends only on the
    inputs in the key: each label is laid out once for the drawing and once for the tight box, and tick
    labels repeat from chart to chart. Texts that wrap (their lines depend on their position) or use TeX are
    laid out each time."""
    if text.get_wrap() or text.get_usetex() or not isinstance(getattr(renderer, "_renderer", renderer),
                                                                 _SVGRenderer):
        return _LAYOUT(text, renderer)
    key = (text.get_text(), text.get_fontproperties(), text._linespacing, text._get_multialignment(),
           text.get_rotation(), text.get_rotation_mode(), text._horizontalalignment, text._verticalalignment,
           text.get_parse_math(), text.figure.dpi)
    layout = _LAYOUTS.get(key)
    if layout is None:
        if len(_LAYOUTS) >= MAX_EXTENTS:
            _LAYOUTS.clear()
        layout = _LAYOUTS[(*key[:1], key[1].copy(), *key[2:])] = _LAYOUT(text, renderer)
    box, lines, corner = layout
    return box.frozen(), list(lines), corner  # (a Bbox is mutable: each caller gets its own)


@contextlib.contextmanager
def _layouts_once() -> Iterator[None]:
    if not SHORTCUTS:
        yield
        return
    Text._get_layout = _layout_once  # type: ignore[attr-defined]
    try:
        yield
    finally:
        Text._get_layout = _LAYOUT  # type: ignore[attr-defined]


@contextlib.contextmanager
def _ticks_once(fig: Any) -> Iterator[None]:
    """Each 2D axis works out its ticks and measures their labels once while the figure is drawn and its tight
    box measured, instead of four times (matplotlib repeats both for the axis label's position, the spines and
    the tight box). Nothing about the axes changes in between, so the answers are the same."""
    patched = []
    for ax in fig.axes:
        if ax.name != "rectilinear":
            continue
        for axis in (ax.xaxis, ax.yaxis):
            if not hasattr(axis, "_update_ticks") or not hasattr(axis, "_get_ticklabel_bboxes"):
                continue
            axis._update_ticks, axis._get_ticklabel_bboxes = _once(axis._update_ticks, axis._get_ticklabel_bboxes)
            patched.append(axis)
    try:
        yield
    finally:
        for axis in patched:  # back to the class's methods
            del axis._update_ticks, axis._get_ticklabel_bboxes


def _once(update: Callable[[], Any], boxes: Callable[[Any, Any], Any]) -> tuple[Callable[[], Any],
                                                                                Callable[[Any, Any], Any]]:
    measured: dict[tuple[int, ...], Any] = {}  # (the ticks drawn are a list: not a key for functools.cache)

    def boxes_once(drawn: Any, renderer: Any) -> Any:
        key = (id(renderer), *map(id, drawn))
        if key not in measured:
            measured[key] = boxes(drawn, renderer)
        return measured[key]

    return functools.cache(update), boxes_once


_TICK_PARTS = ("tick1line", "tick2line", "gridline", "label1", "label2")


def copied_ticks(ax: Any) -> None:
    """Give a 2D axes' x and y axis cheaper ticks: each tick after an axis's first is a copy of the first.

    matplotlib builds every further tick of an axis in full (two tick marks, a gridline and two labels, each
    with its properties looked up in rcParams and checked) and then copies the first tick's properties onto
    it: about 1.3 ms a tick, some 800 ticks a PTS report (a quarter of its charts' CPU). A copy of the first
    tick is the same tick for ~0.1 ms, except where its parts are (the first tick's place until the axis moves
    it, as it does every tick before drawing or measuring it). The tests compare every other attribute of such
    a copy with the tick matplotlib makes, and the SVG of charts drawn either way.

    With _layouts_once, the 39 charts of the README's PTS run (`ssdlab run pts --target sim:tlc-4k --runtime
    0.5`), drawn one after the other in one process, went from 2.6-3.1 to 1.8-2.2 CPU-s (medians of 3 rounds,
    alternating processes of both versions, load ~0.7-1 on 2 cores); the report's SVG is byte-identical.
    """
    if ax.name != "rectilinear" or not SHORTCUTS:
        return
    for axis in (ax.xaxis, ax.yaxis):
        if type(axis) in (XAxis, YAxis):  # (not a subclass with ticks of its own)
            axis.get_major_ticks = functools.partial(_copied_ticks, axis, True)
            axis.get_minor_ticks = functools.partial(_copied_ticks, axis, False)


def _copied_ticks(axis: Any, major: bool, numticks: int | None = None) -> list[Any]:
    """Axis.get_major_ticks / get_minor_ticks, making ticks by copying the axis's first tick."""
    if numticks is None:
        numticks = len(axis.get_majorticklocs() if major else axis.get_minorticklocs())
    ticks = axis.majorTicks if major else axis.minorTicks  # (the first tick is made by matplotlib)
    while len(ticks) < numticks:
        ticks.append(_tick_copy(ticks[0]))
    return list(ticks[:numticks])


def _tick_copy(first: Any) -> Any:
    tick = _artist_copy(first)
    for name in _TICK_PARTS:
        setattr(tick, name, _artist_copy(getattr(first, name)))
    tick.label1._text = tick.label2._text = ""  # (the first tick's label, until the axis sets this tick's)
    return tick


def _artist_copy(artist: Any) -> Any:
    """A copy of a tick or one of its parts: its own callbacks, sticky edges and (a label) font properties;
    what matplotlib's tick copy shares with the first tick (transforms, clip path, marker) is shared."""
    new = copy.copy(artist)
    new._callbacks = cbook.CallbackRegistry(signals=["pchanged"])
    if artist._sticky_edges is not None:  # (made on first use since matplotlib 3.10)
        new._sticky_edges = type(artist._sticky_edges)(list(artist._sticky_edges.x), list(artist._sticky_edges.y))
    if isinstance(artist, Text):
        new._fontproperties = artist.get_fontproperties().copy()
    new._stale = True
    return new


def _crop(svg: str, x: float, y: float, w: float, h: float) -> str:
    """The <svg> element showing only the region (x, y, w, h) of its drawing, in points from the top left."""
    head_end = svg.find(">")
    head = svg[:head_end]
    head = re.sub(r'\bwidth="[^"]*"', f'width="{w:.2f}pt"', head, count=1)
    head = re.sub(r'\bheight="[^"]*"', f'height="{h:.2f}pt"', head, count=1)
    head = re.sub(r'\bviewBox="[^"]*"', f'viewBox="{x:.2f} {y:.2f} {w:.2f} {h:.2f}"', head, count=1)
    return head + svg[head_end:]


def fig_to_png(fig: Any, dpi: int = 120, software: str | None = None) -> bytes:
    """Render a figure; return PNG bytes (for `ssdlab plot --out FILE.png`), naming `software` in its metadata."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=dpi,
                metadata={"Software": software} if software else None)
    return buf.getvalue()


def check_figure_path(out: Path, *, force: bool = False) -> str:
    """Refuse, with one line, a chart file (`--out`) that is not .svg or .png, whose directory does not exist, or
    that would replace a file ssdlab did not write (unless `force`); returns what --force replaces ('' when
    nothing: results/outputs.py)."""
    from ssdlab.results import outputs

    if out.suffix.lower() not in (".svg", ".png"):
        raise UsageError(f"--out {out}: use a .svg or .png file name")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: directory {out.parent} does not exist")
    return outputs.check_new_file(out, force=force, option="--out")


def write_figure(fig: Any, out: Path) -> None:
    """Render a figure into `out` atomically: PNG for a .png name, else SVG (check_figure_path first); either
    carries ssdlab's mark (results/outputs.py), so a later run may replace it."""
    from ssdlab.results import outputs

    if out.suffix.lower() == ".png":
        atomic.write_bytes(out, fig_to_png(fig, software=outputs.PNG_SOFTWARE))
    else:
        svg = fig_to_svg(fig)
        head = svg.index(">") + 1  # the mark goes inside the <svg> element: the file still starts with it
        atomic.write_text(out, svg[:head] + outputs.SVG_MARK + svg[head:] + "\n")


def new_figure(size: tuple[float, float]) -> Any:
    """A figure outside pyplot's bookkeeping, on the Agg canvas (text extents for the tight crop, PNG output)."""
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


def _axes(title: str, size: tuple[float, float] = (7.5, 3.6)) -> tuple[Any, Any]:
    fig = new_figure(size)
    ax = fig.add_subplot()
    copied_ticks(ax)
    if title:
        _title(ax, title)
    return fig, ax


@dataclass(frozen=True)
class Key:
    """One legend entry: its label and how its series is drawn."""

    label: str
    color: str
    kind: str = "line"  # "line" (with the matplotlib style in `style`) | "bar"
    style: str = "-"


_DASHES = {"--": "dashed", ":": "dotted"}  # matplotlib's dashes -> CSS border styles (dash-dot: class "dd")


@dataclass(frozen=True)
class _Swatch:
    """A legend entry as templates/sections/chart_legend.html.j2 draws it."""

    label: str
    color: str
    bar: bool
    cls: str = ""  # a line's CSS: "ln" (a line), "mk" (markers), both
    dash: str = "solid"


def _swatch(k: Key) -> _Swatch:
    label = k.label.replace("\\$", "$")  # plain_label's escape is for matplotlib text, not for HTML
    if k.kind == "bar":
        return _Swatch(label, k.color, True)
    if k.style == "-.":  # dash-dot, not a line with dot markers: no CSS border style draws it (style.css: i.dd)
        return _Swatch(label, k.color, False, "ln dd")
    line = k.style.rstrip("o.sx^v+*")
    dash = next((v for m, v in _DASHES.items() if line.startswith(m)), "solid")
    cls = ("ln " if line else "") + ("mk" if k.style[-1:] in "o." else "")
    return _Swatch(label, k.color, False, cls.strip(), dash)


def legend_html(keys: Sequence[Key]) -> str:
    """A chart's legend as HTML (escaped labels, a CSS swatch per entry); '' for fewer than two entries."""
    if len(keys) < 2:
        return ""
    from ssdlab.report.templating import fragment

    return str(fragment("chart_legend.html.j2", keys=[_swatch(k) for k in keys]))  # (str: appended to the SVG)


def _nudge(fig: Any, ax: Any, dx_pt: float, dy_pt: float) -> Any:
    """Data coordinates shifted by (dx, dy) points: a value label beside its bar (a plain text, which costs a
    fraction of an annotation)."""
    return ax.transData + ScaledTranslation(dx_pt / 72, dy_pt / 72, fig.dpi_scale_trans)


def _title(ax: Any, text: str, **kwargs: Any) -> None:
    """An axes title at a fixed height: matplotlib's automatic placement measures the axis decorations again
    on every draw, a large share of a chart's rendering time."""
    ax.set_title(text, y=1.0, pad=6, **kwargs)


# ------------------------------------------------------------------ rendering a report's charts together

_RENDERERS: dict[str, Callable[..., str]] = {}  # chart helper name -> the function that draws it
_PENDING: list[Batch] = []  # the open deferred() batch, if any
MAX_WORKERS = 4
CHARTS_PER_WORKER = 12  # a worker's start costs about as much as drawing a few charts


def _collected_once(draw: Callable[P, str]) -> Callable[P, str]:
    """`draw` with Python's cycle collector paused while it runs.

    A figure is tens of thousands of small objects in reference cycles. With the collector running, each
    collection of the young generations while the figure is drawn examines them again, and promotes them to
    the old generation, whose collections examine everything the process holds (the whole run): about a
    seventh of a report's time. Paused, the figure is dropped after the chart is drawn and its objects are
    examined once, by the next young collection after the collector resumes.
    """

    @functools.wraps(draw)
    def paused(*args: P.args, **kwargs: P.kwargs) -> str:
        if not gc.isenabled():  # paused by the caller (or a chart drawn inside another): leave it so
            return draw(*args, **kwargs)
        gc.disable()
        try:
            return draw(*args, **kwargs)
        finally:
            gc.enable()

    return paused


def chart(draw: Callable[P, str]) -> Callable[P, str]:
    """Decorator of a chart helper (here and in other report modules; names are unique): it draws its SVG now,
    or, inside deferred(), queues it and returns its placeholder."""
    drawn = _RENDERERS[draw.__name__] = _collected_once(draw)

    @functools.wraps(draw)
    def now_or_queued(*args: P.args, **kwargs: P.kwargs) -> str:
        if _PENDING:
            return _PENDING[-1].add(draw.__name__, args, kwargs)
        return drawn(*args, **kwargs)

    return now_or_queued


def _render(job: tuple[str, tuple[Any, ...], dict[str, Any]]) -> str:
    name, args, kwargs = job
    return _RENDERERS[name](*args, **kwargs)


class Batch:
    """The charts of one report, queued by the chart helpers and drawn together by fill()."""

    PLACEHOLDER = re.compile(r"<!--ssdlab-chart:(\d+)-->")

    def __init__(self) -> None:
        self.jobs: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def add(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        self.jobs.append((name, args, kwargs))
        return f"<!--ssdlab-chart:{len(self.jobs) - 1}-->"

    def render(self) -> list[str]:
        """Every queued chart's SVG, in order: in worker processes when cores are idle and there are enough
        charts to pay for the workers' start (each loads its fonts again), and the process can fork safely (no
        other threads); else here, one after the other."""
        idle = len(os.sched_getaffinity(0)) - os.getloadavg()[0]
        workers = min(MAX_WORKERS, int(idle), len(self.jobs) // CHARTS_PER_WORKER)
        if workers < 2 or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
            return [_render(job) for job in self.jobs]
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(_render, self.jobs))

    def fill(self, text: str) -> str:
        """`text` with every placeholder replaced by its chart, element ids made unique per chart."""
        svgs = self.render()
        return self.PLACEHOLDER.sub(lambda m: unique_ids(svgs[int(m[1])], f"chart{m[1]}-"), text)


@contextlib.contextmanager
def deferred() -> Iterator[Batch]:
    """Queue the charts drawn inside the block (see Batch)."""
    batch = Batch()
    _PENDING.append(batch)
    try:
        yield batch
    finally:
        _PENDING.remove(batch)


_ID = re.compile(r'(\bid="|url\(#|href="#)([^")]+)')


def unique_ids(svg: str, prefix: str) -> str:
    """The SVG with every element id, and every reference to one (url(#..), href="#.."), prefixed: matplotlib
    numbers ids per figure, so two charts in one page would otherwise share ids such as figure_1."""
    return _ID.sub(r"\g<1>" + prefix.replace("\\", "\\\\") + r"\g<2>", svg)  # (a template: no call per id)


LOG_SPAN = 100.0  # values spanning more than two decades are drawn on a log axis (unless told otherwise)
LOG_NOTE = " (log scale)"


def wide_span(values: Iterable[float | None]) -> bool:
    """Whether the values (None left out) are all positive and span more than two decades: on a linear axis the
    small ones would vanish next to the large (68 µs bars beside 93 ms)."""
    found = [float(v) for v in values if v is not None]
    return bool(found) and min(found) > 0 and max(found) > LOG_SPAN * min(found)


@chart
def bar_chart(categories: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str = "",
              ylabel: str = "", log: bool | None = None, annotate: bool = True) -> str:
    """Grouped vertical bars: one group per category, one bar per series (None -> no bar). `log` None: a log
    axis when the values span more than two decades (wide_span), said in the axis label."""
    if log is None:
        log = wide_span(v for values in series.values() for v in values)
        ylabel += LOG_NOTE if log else ""
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
                    ax.text(b.get_x() + b.get_width() / 2, b.get_height(), formatting.bar_label(v), ha="center",
                            va="bottom", fontsize=7, transform=_nudge(fig, ax, 0, 1))
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels(categories, rotation=20 if len(categories) > 4 else 0, ha="right" if len(categories) > 4
                       else "center")
    ax.set_ylabel(ylabel)
    if log:
        log_axis(ax, "y")
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: formatting.tick(v)))
    keys = [Key(name, PALETTE[i % len(PALETTE)], "bar") for i, name in enumerate(series)]
    return fig_to_svg(fig) + legend_html(keys)


def category_figure(categories: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str = "",
                    xlabel: str = "", ylabel: str = "", logy: bool = False) -> Any:
    """Grouped vertical bars as a figure with its legend inside (for a file, as `ssdlab plot` writes): one group
    per category (label, rw, matrix ...), one bar per series; None draws no bar."""
    n = max(1, len(series))
    width = 0.8 / n
    fig, ax = _axes(title, (max(7.5, 0.5 * len(categories) * n ** 0.5 + 2), 4.2))
    for i, (name, values) in enumerate(series.items()):
        pts = [(j + (i - (n - 1) / 2) * width, float(v)) for j, v in enumerate(values) if v is not None]
        ax.bar([p[0] for p in pts], [p[1] for p in pts], width=width * 0.95, label=name,
               color=PALETTE[i % len(PALETTE)])
    ax.set_xticks(range(len(categories)))
    wrapped = [textwrap.fill(plain_label(c), 18) for c in categories]
    ax.set_xticklabels(wrapped, rotation=30 if len(categories) > 4 else 0,
                       ha="right" if len(categories) > 4 else "center", fontsize=7 if len(categories) > 8 else 9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        log_axis(ax, "y")
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: formatting.tick(v)))
    ax.grid(axis="x", visible=False)
    side_legend(ax, len(series))
    return fig


def side_legend(ax: Any, count: int) -> None:
    """The legend of a figure written to a file (count: its series): inside the axes for a few, beside them in
    columns of at most 20 for many, so it never covers the data."""
    if count <= 1:
        return
    if count <= 8:
        ax.legend(fontsize=7, loc="best")
    else:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                  ncol=math.ceil(count / 20))


@chart
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
        ax.text(b.get_width(), b.get_y() + b.get_height() / 2, formatting.bar_label(v), va="center", fontsize=7,
                transform=_nudge(fig, ax, 2, 0))
    return fig_to_svg(fig)


def line_figure(series: Sequence[Series], *, title: str = "", xlabel: str = "", ylabel: str = "",
                logx: bool = False, logy: bool | None = False, ref_lines: Sequence[RefLine] = (),
                xticks: Sequence[float] | None = None, xticklabels: Sequence[str] | None = None,
                size: tuple[float, float] = (7.5, 3.6), legend: bool = True, vlines: Sequence[RefLine] = ()) -> Any:
    """Lines/scatter of several series with optional horizontal reference lines and vertical markers (`vlines`:
    RefLine with the x value in `y`, e.g. a workload transition); line_chart draws it as SVG, its legend as
    HTML. `logy` None: a log y axis when the series and reference lines span more than two decades (wide_span),
    said in the axis label."""
    if logy is None:
        logy = wide_span([*(y for s in series for y in s.y), *(r.y for r in ref_lines)])
        ylabel += LOG_NOTE if logy else ""
    fig, ax = _axes(title, size)
    for s, key in zip(series, line_keys(series), strict=True):  # the HTML legend's labels and colours
        pts = [(x, y) for x, y in zip(s.x, s.y, strict=False) if y is not None]
        if not pts:  # keep the line in the legend, saying it has nothing to draw, rather than drop it silently
            ax.plot([], [], s.style, label=key.label, color=key.color)
            continue
        xs, ys = zip(*pts, strict=True)
        ax.plot(xs, ys, s.style, label=key.label, color=key.color, **({"markersize": 3} | dict(s.extra)))
    for r in ref_lines:
        ax.axhline(r.y, linestyle=r.style, color=r.color, linewidth=1, label=r.label)
    for r in vlines:
        ax.axvline(r.y, linestyle=r.style, color=r.color, linewidth=1, label=r.label)
    if logx:
        log_axis(ax, "x")
    if logy:
        log_axis(ax, "y")
    else:  # 2.5M rather than 2.5 with a detached "1e6" offset label
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: formatting.tick(v)))
    if xticks is not None:
        ax.set_xticks(list(xticks))
        if xticklabels is not None:
            ax.set_xticklabels(list(xticklabels))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend and len(series) + len(ref_lines) + len(vlines) > 1:
        ax.legend(fontsize=7, loc="best")
    return fig


def line_keys(series: Sequence[Series], ref_lines: Sequence[RefLine] = ()) -> list[Key]:
    """The legend of line_figure's series and reference lines, in its colours and styles."""
    keys = [Key(s.name if any(y is not None for y in s.y) else f"{s.name} (no valid value)",
                s.color or PALETTE[i % len(PALETTE)], style=s.style) for i, s in enumerate(series)]
    return keys + [Key(r.label, r.color, style=r.style) for r in ref_lines]


@chart
def line_chart(series: Sequence[Series], *, ref_lines: Sequence[RefLine] = (), vlines: Sequence[RefLine] = (),
               logy: bool | None = None, **kwargs: Any) -> str:
    """line_figure as inline SVG with its legend in HTML (same keyword arguments; a report's chart takes a log
    y axis by itself where its values span more than two decades, unless `logy` says otherwise)."""
    fig = line_figure(series, ref_lines=ref_lines, vlines=vlines, legend=False, logy=logy, **kwargs)
    return fig_to_svg(fig) + legend_html(line_keys(series, [*ref_lines, *vlines]))


@chart
def bar3d_chart(xlabels: Sequence[str], ylabels: Sequence[str], z: Sequence[Sequence[float | None]], *,
                title: str = "", xlabel: str = "", ylabel: str = "", zlabel: str = "") -> str:
    """3D bars: z[i][j] is the height at xlabels[i], ylabels[j] (e.g. block size x R/W mix -> IOPS). Heights
    spanning more than two decades are drawn on a log z axis (bars from the decade below the smallest value,
    labelled with the values at each decade): matplotlib's 3D axes have no log scale of their own."""
    fig = new_figure((7.5, 5.0))
    ax = fig.add_subplot(projection="3d")
    if title:
        _title(ax, title)
    log = wide_span(v for row in z for v in row)
    base = math.floor(math.log10(min(float(v) for row in z for v in row if v is not None))) if log else 0

    def height(v: float) -> float:
        return math.log10(v) - base if log else v

    for j in range(len(ylabels)):
        xs, ys, hs = [], [], []
        for i in range(len(xlabels)):
            v = z[i][j]
            if v is None:
                continue
            xs.append(i)
            ys.append(j)
            hs.append(height(float(v)))
        if hs:
            ax.bar3d(xs, ys, [0.0] * len(hs), 0.6, 0.6, hs, color=PALETTE[j % len(PALETTE)], shade=True)
    if log:
        top = max(height(float(v)) for row in z for v in row if v is not None)
        ax.set_zticks(range(math.ceil(top) + 1))
        ax.set_zticklabels([formatting.log_tick(10.0 ** (base + k)) for k in range(math.ceil(top) + 1)])
        zlabel += LOG_NOTE
    ax.set_xticks([i + 0.3 for i in range(len(xlabels))])
    ax.set_xticklabels(list(xlabels), fontsize=7)
    ax.set_yticks([j + 0.3 for j in range(len(ylabels))])
    ax.set_yticklabels(list(ylabels), fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_zlabel(zlabel)
    return fig_to_svg(fig)


@chart
def histogram_chart(values: Sequence[float], *, bins: int = 40, title: str = "", xlabel: str = "",
                    ylabel: str = "count") -> str:
    """Distribution of values (e.g. per-second IOPS of a stability run)."""
    fig, ax = _axes(title)
    ax.hist(list(values), bins=bins, color=PALETTE[0])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return fig_to_svg(fig)


def plain_label(text: str) -> str:
    """Label text shown literally: a `$` from run data must not switch matplotlib into mathtext."""
    return text.replace("$", r"\$")


@dataclass(frozen=True)
class _HBar:
    series: int  # index of its series
    y: float
    width: float
    height: float
    text: str  # the value, or why there is none
    missing: bool


def _hbar_layout(labels: Sequence[str], series: Mapping[str, Sequence[float | None]],
                 missing: Mapping[str, Sequence[str | None]] | None) -> tuple[list[_HBar], int]:
    """Every bar (rows top to bottom, each row only as wide as the series it has) and the most bars in a row."""
    names = list(series)
    notes = {name: list((missing or {}).get(name, ())) for name in names}

    def note(name: str, j: int) -> str | None:
        return notes[name][j] if j < len(notes[name]) else None

    present = [[i for i, name in enumerate(names) if series[name][j] is not None or note(name, j)]
               for j in range(len(labels))]
    out = []
    for j, slots in enumerate(present):
        height = 0.8 / max(1, len(slots))
        for k, i in enumerate(slots):
            v = series[names[i]][j]
            y = len(labels) - 1 - j + ((len(slots) - 1) / 2 - k) * height
            text = plain_label(str(note(names[i], j))) if v is None else formatting.bar_label(float(v))
            out.append(_HBar(i, y, 0.0 if v is None else float(v), height * 0.92, text, v is None))
    return out, max((len(p) for p in present), default=1) or 1


@chart
def grouped_hbar_chart(labels: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str = "",
                       xlabel: str = "", colors: Sequence[str] | None = None, width: float = 7.5,
                       missing: Mapping[str, Sequence[str | None]] | None = None) -> str:
    """Horizontal bars, one row per label and one bar per series inside it (CrystalDiskMark-like read/write).

    Rows run top to bottom in the given order. A row only makes room for the series it has, so a sweep of
    read-only and write-only rows stays compact. None draws no bar; `missing[series][row]` (e.g. "skipped")
    is written where that bar would be, so a value that was not measured is never shown as zero. Values
    spanning more than two decades (wide_span) are drawn on a log axis, bars from the decade below the smallest.
    """
    names = list(series)
    layout, per_row = _hbar_layout(labels, series, missing)
    row_h = 0.22 * per_row + 0.18
    fig, ax = _axes("", (width, max(1.8, row_h * len(labels) + 1.1)))
    values = [float(v) for vals in series.values() for v in vals if v is not None]
    top = max(values, default=0.0)
    log = wide_span(values)
    floor = 10.0 ** math.floor(math.log10(min(values))) if log else 0.0  # where the bars start
    palette = list(colors) if colors else list(PALETTE)
    bars: dict[int, list[_HBar]] = {}
    for b in layout:
        bars.setdefault(b.series, []).append(b)
        ax.text(max(b.width, floor), b.y, b.text, va="center", fontsize=7, transform=_nudge(fig, ax, 2, 0),
                color="#9b1c1c" if b.missing else "black", fontstyle="italic" if b.missing else "normal")
    for i, bs in bars.items():
        ax.barh([b.y for b in bs], [max(0.0, b.width - floor) for b in bs], height=[b.height for b in bs],
                left=floor, color=palette[i % len(palette)])
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels([textwrap.fill(plain_label(t), 24) for t in reversed(labels)])
    ax.set_ylim(-0.6, len(labels) - 0.4)
    if log:
        ax.set_xlim(floor, top * 2.2)  # (room for the value beside the longest bar)
        log_axis(ax, "x")
        xlabel += LOG_NOTE
    else:
        ax.set_xlim(0, top * 1.14 if top > 0 else 1.0)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: formatting.tick(v)))
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    if title:
        _title(ax, plain_label(title), loc="left")
    return fig_to_svg(fig) + legend_html([Key(name, palette[i % len(palette)], "bar") for i, name in enumerate(names)])


def nines(p: float) -> float:
    """Position of percentile p on a 'nines' axis: p50 -> 0.3, p90 -> 1, p99 -> 2, p99.9 -> 3, p99.99 -> 4."""
    return -math.log10(1.0 - p / 100.0)


@chart
def percentile_chart(lines: Sequence[tuple[str, Mapping[float, float | None]]], *, title: str = "",
                     ylabel: str = "completion latency (µs)", size: tuple[float, float] = (5.8, 3.2)) -> str:
    """Latency against percentile on a nines axis (log latency scale), one line per (name, {p: value}).

    Non-positive or missing values are left out of their line (a log axis cannot show them).
    """
    fig, ax = _axes(title, size)
    ps_all: set[float] = set()
    keys = []
    for i, (name, values) in enumerate(lines):
        color = PALETTE[i % len(PALETTE)]
        pts = sorted((p, float(v)) for p, v in values.items() if v is not None and v > 0 and p < 100)
        keys.append(Key(name if pts else f"{name} (no value to draw)", color, style="-o"))
        if not pts:
            continue
        ps_all.update(p for p, _ in pts)
        ax.plot([nines(p) for p, _ in pts], [v for _, v in pts], "-o", markersize=3, linewidth=1.3, color=color)
    ticks = sorted(ps_all)
    ax.set_xticks([nines(p) for p in ticks])
    ax.set_xticklabels([f"p{p:g}" for p in ticks])
    log_axis(ax, "y")
    ax.set_xlabel("percentile")
    ax.set_ylabel(ylabel)
    return fig_to_svg(fig) + legend_html(keys)


LOG_STEPS = ((1.0,), (1.0, 2.0, 5.0), tuple(float(k) for k in range(1, 10)))  # ticks per decade, sparse to dense


def log_locator(lo: float, hi: float, subs: tuple[float, ...]) -> Any:
    """Major ticks of a log axis from lo to hi: at `subs` of each decade (one of LOG_STEPS), or at denser steps
    until at least two fall inside the range; a range too narrow for even 1..9 per decade (102 to 180) gets a
    few evenly spaced ticks (120, 140, 160), so a reader always has two labels to read a value against."""
    for steps in LOG_STEPS[LOG_STEPS.index(subs):]:
        locator = LogLocator(base=10, subs=steps, numticks=12)
        if sum(1 for t in locator.tick_values(lo, hi) if lo <= t <= hi) >= 2:
            return locator
    return MaxNLocator(nbins=4)


def log_axis(ax: Any, which: str = "y") -> None:
    """Log scale with plain-number tick labels (0.05, 1, 20, 1,000) instead of 10^n; call after plotting.

    Spans up to three decades get 1-2-5 steps, wider ones one label per decade; a narrow span gets denser
    steps (log_locator), at least two labels.
    """
    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    lo, hi = ax.get_ylim() if which == "y" else ax.get_xlim()
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 1.0
    axis.set_major_locator(log_locator(lo, hi, LOG_STEPS[1] if decades <= 3 else LOG_STEPS[0]))  # labels apart
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: formatting.log_tick(v)))
    # minor ticks only where the labels are a decade apart (each tick is an artist to lay out and draw)
    axis.set_minor_locator(NullLocator() if decades <= 3 else LogLocator(base=10, subs=(2.0, 5.0), numticks=12))
    axis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", axis=which, alpha=0.3)

