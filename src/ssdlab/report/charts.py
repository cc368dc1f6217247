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
from matplotlib.ticker import AutoLocator, FixedLocator, Formatter, LogLocator, MaxNLocator, NullFormatter, NullLocator
from matplotlib.transforms import ScaledTranslation

from ssdlab import formatting
from ssdlab.errors import UsageError
from ssdlab.results import atomic
from ssdlab.units import format_bs

matplotlib.rcParams.update({
    "svg.hashsalt": "ssdlab",  # stable element ids: identical data -> identical SVG
    "svg.fonttype": "none",  # text stays text: smaller files, selectable labels
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 96,
})

P = ParamSpec("P")

# Okabe and Ito's colour-blind-safe set (blue, vermillion, bluish green, orange, reddish purple, sky blue, black;
# its yellow is too pale on white), then three of Paul Tol's (wine, olive, grey) for charts of more series. Read is
# the first colour and write the second everywhere, the live page included (serve/static/live.js, COLORS).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000", "#882255", "#999933",
           "#777777")


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
    carries ssdlab's mark (results/outputs.py), so a later run may replace it. The file gets the mode the user's
    umask gives (0644 under 022), as a report does: the atomic write's temporary file is private (0600)."""
    from ssdlab.results import outputs

    if out.suffix.lower() == ".png":
        atomic.write_bytes(out, fig_to_png(fig, software=outputs.PNG_SOFTWARE))
    else:
        svg = fig_to_svg(fig)
        head = svg.index(">") + 1  # the mark goes inside the <svg> element: the file still starts with it
        atomic.write_text(out, svg[:head] + outputs.SVG_MARK + svg[head:] + "\n")
    atomic.make_shareable(out)


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
              ylabel: str = "", log: bool = False, annotate: bool = True) -> str:
    """Grouped vertical bars: one group per category, one bar per series (None -> no bar), from zero on a linear
    axis (a bar's length is its value); each bar's value is written on it, so a small one stays readable. `log`:
    a log axis, said in the axis label (only where a caller asks for it)."""
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
        linear_axis(ax, "y")
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
        linear_axis(ax, "y")
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
    linear_axis(ax, "x")
    for b, v in zip(bars, values, strict=False):
        ax.text(b.get_width(), b.get_y() + b.get_height() / 2, formatting.bar_label(v), va="center", fontsize=7,
                transform=_nudge(fig, ax, 2, 0))
    return fig_to_svg(fig)


def line_figure(series: Sequence[Series], *, title: str = "", xlabel: str = "", ylabel: str = "",
                logx: bool = False, logy: bool | None = False, ref_lines: Sequence[RefLine] = (),
                xticks: Sequence[float] | None = None, xticklabels: Sequence[str] | None = None,
                size: tuple[float, float] = (7.5, 3.6), legend: bool = True, vlines: Sequence[RefLine] = (),
                log2x: bool = False, xfmt: Callable[[float], str] | None = None) -> Any:
    """Lines/scatter of several series with optional horizontal reference lines and vertical markers (`vlines`:
    RefLine with the x value in `y`, e.g. a workload transition); line_chart draws it as SVG, its legend as
    HTML. `logy` None: a log y axis when the series and reference lines span more than two decades (wide_span),
    said in the axis label. `log2x`: a base-2 x axis (queue depths, threads, block sizes: log2_axis) with ticks
    at `xticks` or the powers of two, labelled by `xfmt`."""
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
    if log2x:
        log2_axis(ax, "x", fmt=xfmt, ticks=xticks)
    elif logx:
        log_axis(ax, "x")
    elif xticks is None:
        linear_axis(ax, "x")
    if logy:
        log_axis(ax, "y")
    else:  # 2.5M rather than 2.5 with a detached "1e6" offset label
        linear_axis(ax, "y")
    if xticks is not None and not log2x:
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
                title: str = "", xlabel: str = "", ylabel: str = "", zlabel: str = "", log: bool = False) -> str:
    """3D bars: z[i][j] is the height at xlabels[i], ylabels[j] (e.g. block size x R/W mix -> IOPS), from zero
    on a linear z axis. `log` (only where a caller asks) draws heights spanning more than two decades on a log z
    axis (bars from the decade below the smallest value, labelled with the values at each decade): matplotlib's
    3D axes have no log scale of their own."""
    fig = new_figure((7.5, 5.0))
    ax = fig.add_subplot(projection="3d")
    if title:
        _title(ax, title)
    log = log and wide_span(v for row in z for v in row)
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
        values = [10.0 ** (base + k) for k in range(math.ceil(top) + 1)]
        ax.set_zticklabels([tick_style(values, log=True)(v) for v in values])
        zlabel += LOG_NOTE
    else:
        ax.zaxis.set_major_formatter(AxisTicks(log=False))
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
    linear_axis(ax, "x")
    linear_axis(ax, "y", integer=True)  # (a count)
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
    is written where that bar would be, so a value that was not measured is never shown as zero. Bars start at
    zero on a linear axis (a bar's length is its value) that ends at a tick past the longest bar and its value.
    """
    names = list(series)
    layout, per_row = _hbar_layout(labels, series, missing)
    row_h = 0.22 * per_row + 0.18
    fig, ax = _axes("", (width, max(1.8, row_h * len(labels) + 1.1)))
    values = [float(v) for vals in series.values() for v in vals if v is not None]
    top = max(values, default=0.0)
    palette = list(colors) if colors else list(PALETTE)
    bars: dict[int, list[_HBar]] = {}
    for b in layout:
        bars.setdefault(b.series, []).append(b)
        ax.text(b.width, b.y, b.text, va="center", fontsize=7, transform=_nudge(fig, ax, 2, 0),
                color="#9b1c1c" if b.missing else "black", fontstyle="italic" if b.missing else "normal")
    for i, bs in bars.items():
        ax.barh([b.y for b in bs], [max(0.0, b.width) for b in bs], height=[b.height for b in bs],
                color=palette[i % len(palette)])
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels([textwrap.fill(plain_label(t), 24) for t in reversed(labels)])
    ax.set_ylim(-0.6, len(labels) - 0.4)
    room = top * 1.14 if top > 0 else 1.0  # (room for the value beside the longest bar)
    ax.set_xlim(0, bracket(AutoLocator().tick_values(0, room), 0, room)[1])
    linear_axis(ax, "x", limits=False)
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
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _decimals(values: Sequence[float]) -> int:
    """The fewest decimals (up to 6) that write every value exactly (0.05, 0.10, 0.15 -> 2)."""
    for d in range(7):
        if all(abs(round(v, d) - v) <= 1e-9 * max(1.0, abs(v)) for v in values):
            return d
    return 6


def tick_style(values: Sequence[float], *, log: bool) -> Callable[[float], str]:
    """One label style for every tick of an axis, chosen from the ticks it shows.

    A linear axis gets one unit for all its ticks, by the largest: 0, 50k, 100k, 150k; 0, 0.5M, 1M, 1.5M; below
    10,000 plain numbers with the decimals the step needs (0.05, 0.10, 0.15). A log axis spans decades, so one unit
    cannot fit: plain numbers (0.5, 20, 1,000, 50,000) while every tick is below 100,000, else SI suffixes on
    every tick from 1,000 (500, 1k, 10k, 100k, 1M), never "50,000" beside "100k"; decades that reach below 0.001
    are written as powers of ten (10⁻⁵ ... 10⁰)."""
    shown = [float(v) for v in values if math.isfinite(v)]
    top = max((abs(v) for v in shown), default=0.0)
    if log:
        positive = [v for v in shown if v > 0]
        decades = bool(positive) and all(abs(math.log10(v) - round(math.log10(v))) < 1e-9 for v in positive)
        if decades and min(positive) < 1e-3:
            return lambda v: "10" + str(round(math.log10(v))).translate(_SUPERSCRIPT) if v > 0 else "0"
        if top >= 1e5:
            return lambda v: formatting.tick(v) if abs(v) >= 1000 else f"{v:g}"
        return lambda v: f"{v:,.0f}" if abs(v) >= 1000 else f"{v:g}"
    unit, suffix = (1e6, "M") if top >= 1e6 else (1e3, "k") if top >= 1e4 else (1.0, "")
    digits = _decimals([v / unit for v in shown])
    return lambda v: "0" if v == 0 else f"{v / unit:,.{digits}f}{suffix}"


class AxisTicks(Formatter):
    """matplotlib's formatter for tick_style: the style is chosen once per drawing from the ticks in view."""

    def __init__(self, *, log: bool) -> None:
        self.log = log
        self._text: Callable[[float], str] = formatting.tick

    def set_locs(self, locs: Sequence[float]) -> None:
        shown = list(locs)
        if self.axis is not None:
            lo, hi = sorted(self.axis.get_view_interval())
            shown = [v for v in locs if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)] or shown
        self._text = tick_style(shown, log=self.log)

    def __call__(self, x: float, pos: int | None = None) -> str:
        return self._text(x)


def linear_axis(ax: Any, which: str = "y", *, limits: bool = True, integer: bool = False) -> None:
    """One tick style on a linear axis (tick_style); call after plotting. With `limits` the axis runs from the
    tick at or below its data to the tick at or above, so its labels bracket the data (matplotlib's margins
    would end it between ticks, or at -2 on a time axis that starts at 0). `integer`: ticks at whole numbers
    only (counts: no 0.25 of a second)."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    locator = MaxNLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10], integer=True) if integer else AutoLocator()
    axis.set_major_locator(locator)
    axis.set_major_formatter(AxisTicks(log=False))
    box = ax.dataLim
    lo, hi = (box.y0, box.y1) if which == "y" else (box.x0, box.x1)
    if not limits or not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
        return
    if hi == lo:
        lo, hi = (lo - 1, hi + 1) if lo == 0 else (lo - abs(lo) / 10, hi + abs(hi) / 10)
    ticks = [float(t) for t in locator.tick_values(lo, hi)]
    below, above = bracket(ticks, lo, hi)
    _set_limits(ax, which, below, above, lo, hi, log=False)


MAX_LOG_TICKS = 12
FILL = 0.4  # the least share of a narrow log axis (its log span) the data fill before denser ticks are tried


def _decade_ticks(lo: float, hi: float, steps: tuple[float, ...], most: int = MAX_LOG_TICKS) -> list[float]:
    """`steps` of every decade from the one below lo to the one above hi (every second, third ... decade when
    one label per decade would make more than `most`)."""
    k0, k1 = math.floor(math.log10(lo) + 1e-9), math.ceil(math.log10(hi) - 1e-9)
    stride = max(1, math.ceil((k1 - k0 + 1) / most)) if steps == LOG_STEPS[0] else 1
    return [m * 10.0 ** k for k in range(k0 - stride, k1 + 2 * stride, stride) for m in steps]


def log_ticks(lo: float, hi: float, *, decades: float = 3.0, most: int = MAX_LOG_TICKS) -> list[float]:
    """The labelled ticks of a log axis showing lo..hi: from the tick at or below lo to the one at or above hi,
    at least three of them, so the labels bracket the data and one lies between. One per decade beyond
    `decades` decades (every second ... decade beyond `most` labels; a narrow panel takes fewer of both), else
    1-2-5 steps, denser steps (1..9) when those leave no tick between or the data would fill less than FILL of
    the axis, and for a range too narrow even for that (157 to 171) a few evenly spaced ones (156, 160 ... 172)."""
    first = LOG_STEPS[0] if math.log10(hi / lo) > decades else LOG_STEPS[1]
    for steps in LOG_STEPS[LOG_STEPS.index(first):]:
        ticks = _decade_ticks(lo, hi, steps, most)
        below, above = bracket(ticks, lo, hi)
        kept = [t for t in ticks if below * (1 - 1e-9) <= t <= above * (1 + 1e-9)]
        if len(kept) >= 3 and math.log(hi / lo) >= FILL * math.log(above / below):
            return kept
    even = [float(t) for t in MaxNLocator(nbins=4).tick_values(lo, hi) if t > 0]
    below, above = bracket(even, lo, hi)
    return [t for t in even if below <= t <= above]


EDGE = 0.02  # share of an axis left beyond a bracketing tick the data reach (a marker on the tick stays whole)


def _set_limits(ax: Any, which: str, below: float, above: float, lo: float, hi: float, *, log: bool) -> None:
    """Axis limits a little beyond the ticks `below` and `above` that bracket the data lo..hi (a marker at or near
    a tick stays whole), but not below a zero where linear data start (bars stand on it)."""
    def pos(v: float) -> float:
        return math.log(v) if log else v

    a, b = pos(below), pos(above)
    span = (b - a) or 1.0
    if log or below != 0 or lo > 0:
        a -= EDGE * span
    b += EDGE * span
    (ax.set_ylim if which == "y" else ax.set_xlim)(*((math.exp(a), math.exp(b)) if log else (a, b)))


def _data_span(ax: Any, which: str) -> tuple[float, float] | None:
    """The smallest positive and the largest value the axes' artists put on one axis (None: nothing drawn)."""
    box = ax.dataLim
    lo = box.minposy if which == "y" else box.minposx
    hi = box.y1 if which == "y" else box.x1
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0 or hi < lo:
        return None
    return float(lo), float(hi)


def bracket(ticks: Iterable[float], lo: float, hi: float) -> tuple[float, float]:
    """The last tick at or below lo and the first at or above hi (lo and hi themselves when no tick is)."""
    found = sorted(float(t) for t in ticks)
    below = max((t for t in found if t <= lo * (1 + 1e-9)), default=lo)
    above = min((t for t in found if t >= hi * (1 - 1e-9)), default=hi)
    return below, above


def log_axis(ax: Any, which: str = "y") -> None:
    """Log scale with plain-number tick labels (0.05, 1, 20, 1,000) in one style per axis (tick_style); call after
    plotting. The axis runs from the tick at or below its smallest value to the tick at or above its largest, so
    the labels bracket the data (never 50 and 100 alone beside values at 157-171).

    Spans up to three decades get 1-2-5 steps, wider ones one label per decade; a narrow span gets denser
    steps (log_ticks), at least three labels.
    """
    axis = ax.yaxis if which == "y" else ax.xaxis
    span = _data_span(ax, which)
    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    lo, hi = span if span is not None else (ax.get_ylim() if which == "y" else ax.get_xlim())
    if not 0 < lo <= hi:
        lo, hi = 1.0, 10.0
    if hi == lo:
        lo, hi = lo / 1.5, hi * 1.5
    decades = math.log10(hi / lo)
    ticks = log_ticks(lo, hi)
    _set_limits(ax, which, ticks[0], ticks[-1], lo, hi, log=True)
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(AxisTicks(log=True))
    # minor ticks only where the labels are a decade apart (each tick is an artist to lay out and draw)
    axis.set_minor_locator(NullLocator() if decades <= 3 else LogLocator(base=10, subs=(2.0, 5.0), numticks=12))
    axis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", axis=which, alpha=0.3)


MAX_LOG2_TICKS = 12


def log2_ticks(lo: float, hi: float) -> list[float]:
    """Powers of two from the one at or below lo to the one at or above hi, every second (fourth ...) one when
    there would be more than MAX_LOG2_TICKS, still bracketing lo..hi."""
    k0, k1 = math.floor(math.log2(lo) + 1e-9), math.ceil(math.log2(hi) - 1e-9)
    stride = max(1, math.ceil((k1 - k0 + 1) / MAX_LOG2_TICKS))
    ks = list(range(k0, k1 + stride, stride))
    return [2.0 ** k for k in ks]


def bs_tick(v: float) -> str:
    """A block size on an axis: 512, 4K, 128K, 1M."""
    return format_bs(int(v))


def whole(v: float) -> str:
    """A queue depth, thread count or I/O count on an axis: 1, 32, 1,024 (0.5 below one)."""
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


def log2_axis(ax: Any, which: str = "x", *, fmt: Callable[[float], str] | None = None,
              ticks: Sequence[float] | None = None) -> None:
    """A base-2 log axis for queue depths, thread counts, outstanding I/Os and block sizes: ticks at the powers of
    two the data span (or at `ticks`, e.g. the queue depths swept: 1, 2, 4, 6, 8, 16, 32), labelled by `fmt`
    (format_bs for block sizes) or as whole numbers; call after plotting."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    span = _data_span(ax, which)
    (ax.set_yscale if which == "y" else ax.set_xscale)("log", base=2)
    given = sorted(float(t) for t in ticks or () if t > 0)
    if given:
        lo, hi = given[0], given[-1]
        if span is not None:
            lo, hi = min(lo, span[0]), max(hi, span[1])
        found = given
    else:
        lo, hi = span if span is not None else (1.0, 2.0)
        found = log2_ticks(lo, hi)
    below, above = bracket(found, lo, hi)
    (ax.set_ylim if which == "y" else ax.set_xlim)(below / 2 ** 0.2, above * 2 ** 0.2)
    axis.set_major_locator(FixedLocator(found))
    axis.set_major_formatter(_Labels(fmt or whole))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


class _Labels(Formatter):
    def __init__(self, fmt: Callable[[float], str]) -> None:
        self.fmt = fmt

    def __call__(self, x: float, pos: int | None = None) -> str:
        return self.fmt(x)
