"""Chart helpers: bare inline SVG, no URLs besides namespaces, missing values never drawn as zero."""

from __future__ import annotations

import contextlib
import functools
import io
import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.backends import backend_svg

from ssdlab.report import charts, latency
from ssdlab.results import hist

_URL = re.compile(r"https?://[^\s\"'<>]+")


def urls_outside_xmlns(svg: str) -> list[str]:
    """URLs in an SVG that are not xmlns namespace declarations."""
    return _URL.findall(re.sub(r"""\sxmlns(?::\w+)?=["'][^"']*["']""", "", svg))


def test_every_helper_returns_bare_svg_without_metadata_urls() -> None:
    outputs = [
        charts.bar_chart(["a", "b"], {"read": [1.0, 2.0], "write": [3.0, None]}, title="t", ylabel="MB/s"),
        charts.hbar_chart(["x", "y"], [5.0, 7.0], title="h", xlabel="IOPS"),
        charts.line_chart([charts.Series("s", [1, 2, 3], [1.0, None, 3.0])], ref_lines=[charts.RefLine(2.0, "avg")],
                          logy=True, xticks=[1, 2, 3], xticklabels=["a", "b", "c"]),
        charts.bar3d_chart(["4K", "8K"], ["0/100", "100/0"], [[1.0, 2.0], [None, 4.0]], zlabel="IOPS"),
        charts.histogram_chart([1.0, 2.0, 2.5, 3.0], bins=3),
        charts.grouped_hbar_chart(["SEQ1M", "RND4K"], {"Read": [10.0, 2.0], "Write": [8.0, None]}),
        charts.percentile_chart([("p", {50.0: 10.0, 99.0: 40.0})]),
    ]
    for fragment in outputs:
        assert fragment.startswith("<svg")
        svg, _, legend = fragment.partition("</svg>")
        assert legend == "" or legend.startswith("<div class='chart-legend'>")  # a legend of several series
        assert "<metadata>" not in svg
        assert "<?xml" not in svg
        assert urls_outside_xmlns(fragment) == []


def test_grouped_hbar_marks_missing_values_instead_of_zero() -> None:
    svg = charts.grouped_hbar_chart(["SEQ1M Q8T1", "RND4K Q1T1"], {"Read": [3500.0, 60.0], "Write": [None, 150.0]},
                                    missing={"Write": ["skipped", None]})
    assert ">skipped<" in svg
    assert ">3500<" in svg  # measured values are annotated with their value
    assert "3.5k" in svg or "3500" in svg
    assert "SEQ1M Q8T1" in svg


def test_percentile_chart_uses_nines_ticks_and_drops_nonpositive_values() -> None:
    svg = charts.percentile_chart([("a", {50.0: 0.0, 99.0: 12.0, 99.99: 400.0}), ("b", {50.0: None, 99.0: 5.0})])
    for label in ("p99", "p99.99"):
        assert f">{label}<" in svg
    assert ">p50<" not in svg  # no line has a positive p50, so there is no p50 tick
    assert abs(charts.nines(99.0) - 2.0) < 1e-9
    assert abs(charts.nines(99.99) - 4.0) < 1e-9


def test_dollar_in_labels_is_shown_literally() -> None:
    assert charts.plain_label("$5 drive") == r"\$5 drive"
    svg = charts.grouped_hbar_chart(["cost $1 $2"], {"Read": [1.0]})
    assert "cost $1 $2" in svg


def test_same_data_gives_identical_svg() -> None:
    a = charts.grouped_hbar_chart(["x"], {"Read": [1.0], "Write": [2.0]}, title="t")
    b = charts.grouped_hbar_chart(["x"], {"Read": [1.0], "Write": [2.0]}, title="t")
    assert a == b


def _jobs() -> list[str]:
    return [
        charts.line_chart([charts.Series("a", [1, 2], [1.0, 2.0]), charts.Series("b", [1, 2], [2.0, 3.0])],
                          title="one"),
        charts.bar_chart(["x", "y"], {"r": [1.0, 2.0], "w": [2.0, 1.0]}, title="two"),
        charts.percentile_chart([("p", {50.0: 10.0, 99.0: 40.0})], title="three"),
    ]


def test_a_report_batch_gives_every_chart_its_own_element_ids() -> None:
    """matplotlib numbers ids per figure (figure_1, patch_1, clip paths): several inline SVGs in one HTML
    document would share them; a batch prefixes each chart's ids and the references to them."""
    plain = _jobs()
    assert all('id="figure_1"' in c for c in plain)  # what the batch has to fix
    with charts.deferred() as batch:
        placeholders = _jobs()
    assert all(p.startswith("<!--ssdlab-chart:") for p in placeholders)
    page = batch.fill("<main>" + "".join(placeholders) + "</main>")
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)) > 3
    refs = re.findall(r'url\(#([^)]+)\)', page) + re.findall(r'href="#([^"]+)"', page)
    assert refs
    assert set(refs) <= set(ids)
    assert page.count("<svg") == 3
    # the same charts, drawn one by one, differ only in those prefixes
    assert re.sub(r"chart\d+-", "", page) == "<main>" + "".join(plain) + "</main>"


def test_worker_processes_draw_the_same_charts(monkeypatch: pytest.MonkeyPatch) -> None:
    with charts.deferred() as batch:
        _jobs()
    serial = batch.render()
    monkeypatch.setattr(charts, "CHARTS_PER_WORKER", 1)
    monkeypatch.setattr("os.sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    monkeypatch.setattr("os.getloadavg", lambda: (0.0, 0.0, 0.0))
    calls: list[int] = []
    real_pool = charts.ProcessPoolExecutor

    def pool(workers: int, **kwargs: object) -> object:
        calls.append(workers)
        return real_pool(workers, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(charts, "ProcessPoolExecutor", pool)
    assert batch.render() == serial
    assert calls == [3]  # three charts, three workers


def test_legends_are_html_with_escaped_labels() -> None:
    svg = charts.line_chart([charts.Series("<b>a</b>", [1, 2], [1.0, 2.0], "--"),
                             charts.Series("b & c", [1, 2], [2.0, 3.0])], ref_lines=[charts.RefLine(1.5, "avg")])
    legend = svg[svg.index("</svg>"):]
    assert "&lt;b&gt;a&lt;/b&gt;" in legend
    assert "<b>" not in legend
    assert "b &amp; c" in legend
    assert "avg" in legend
    assert "border-top-style:dashed" in legend  # the dashed series keeps its style in its swatch
    single = charts.line_chart([charts.Series("only", [1, 2], [1.0, 2.0])])
    assert single.endswith("</svg>")  # one series: no legend


def _varied() -> list[str]:
    """Charts that exercise what the drawing shortcuts touch: log axes with minor ticks, rotated and wrapped
    tick labels, value labels outside the axes, reference and vertical lines, a 3D axes, mathtext-free `$`."""
    wide = [10.0 ** (i / 2) for i in range(12)]  # five decades: minor ticks
    return [
        charts.line_chart([charts.Series("a", list(range(12)), wide), charts.Series("b", list(range(12)),
                                                                                    [v * 3 for v in wide], "--")],
                          logy=True, title="log", xlabel="x", ylabel="y", ref_lines=[charts.RefLine(50.0, "avg")],
                          vlines=[charts.RefLine(4.0, "switch")]),
        charts.line_chart([charts.Series("s", [0.5, 1.0, 2.0], [1e6, 2.5e6, 3e6])], logx=True,
                          xticks=[0.5, 1.0, 2.0], xticklabels=["0.5 KiB", "1 KiB", "2 KiB"]),
        charts.bar_chart([f"cat {i}" for i in range(6)], {"r": [float(i) for i in range(6)],
                                                          "w": [None, 2.0, 3.0, 4e4, 5e6, 6.0]}, ylabel="µs"),
        charts.grouped_hbar_chart(["a rather long test name that wraps over lines", "cost $1"],
                                  {"Read": [3500.0, None], "Write": [None, 150.0]},
                                  missing={"Read": [None, "skipped"]}, title="t", xlabel="MB/s"),
        charts.percentile_chart([("p", {50.0: 10.0, 99.0: 40.0, 99.99: 4000.0}), ("q", {50.0: 12.0})]),
        charts.bar3d_chart(["4K", "8K"], ["0/100", "100/0"], [[1.0, 2.0], [None, 4.0]], zlabel="IOPS"),
        charts.histogram_chart([1.0, 2.0, 2.5, 3.0], bins=3),
        charts.hbar_chart(["x", "y"], [5.0, 7e5]),
    ]


def test_drawing_shortcuts_give_matplotlibs_own_svg(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ticks laid out once per drawing and text extents measured once per process: the same bytes as
    matplotlib's own repeated layout and measurement."""
    fast = _varied()
    monkeypatch.setattr(charts, "_ticks_once", lambda fig: contextlib.nullcontext())
    monkeypatch.setattr(charts, "_SVGRenderer", backend_svg.RendererSVG)
    monkeypatch.setattr(charts, "copied_ticks", lambda ax: None)
    monkeypatch.setattr(charts, "_layouts_once", contextlib.nullcontext)
    assert _varied() == fast


_CHECKED = pytest.mark.skipif(not charts.SHORTCUTS, reason="matplotlib release not in charts.CHECKED_RELEASES: "
                              "run these tests with SHORTCUTS forced on, then add the release")


def test_the_shortcuts_are_on_only_for_checked_matplotlib_releases(monkeypatch: pytest.MonkeyPatch) -> None:
    for on in (True, False):
        monkeypatch.setattr(charts, "SHORTCUTS", on)
        ax = charts._axes("t")[1]
        assert ("get_major_ticks" in vars(ax.yaxis)) is on  # copied ticks, or matplotlib's own tick making
        with charts._layouts_once():
            assert (charts.Text._get_layout is charts._LAYOUT) is not on


@_CHECKED
def test_a_remembered_layout_is_used_only_for_the_same_text_font_and_alignment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same words in another size, rotation or alignment, one chart after the other, are laid out anew."""

    def variants() -> list[str]:
        out = []
        for kwargs in ({}, {"fontsize": 14}, {"rotation": 90}, {"ha": "left"}, {"va": "top"}, {"linespacing": 3}):
            fig, ax = charts._axes("same words")
            ax.text(0.5, 0.5, "same words\non two lines", **kwargs)
            ax.set_xlabel("same words", **kwargs)
            out.append(charts.fig_to_svg(fig))
        return out

    remembered = variants()
    assert len(set(remembered)) == len(remembered)
    monkeypatch.setattr(charts, "_layouts_once", contextlib.nullcontext)
    assert variants() == remembered


# where a copied tick's parts are and what its labels say: set by the axis before it draws or measures a tick
_PLACE = {"_x", "_y", "_xorig", "_yorig", "_xy", "_path", "_invalidx", "_invalidy", "_transformed_path",
          "_subslice", "_x_filled"}


def _differences(a: Any, b: Any, path: str, depth: int = 0) -> list[str]:
    """Where two objects' attributes differ (recursively; callbacks and identical objects skipped)."""
    if a is b:
        return []
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):  # (a tick's data: [0] or (0,))
        if len(a) != len(b):
            return [f"{path}: {a!r} != {b!r}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{path}[{i}]",
                                                                                            depth + 1)]
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return [] if np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True) else [f"{path}: {a!r} != {b!r}"]
    if type(a) is not type(b):
        return [f"{path}: {type(a).__name__} != {type(b).__name__}"]
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return []
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a.keys() ^ b.keys())}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{path}.{k}", depth + 1)]
    if hasattr(a, "__dict__") and depth < 4:
        out = []
        for k in sorted(set(vars(a)) | set(vars(b))):
            if k in ("_callbacks", "_parents", "stale_callback") or (depth == 1 and k in _PLACE):
                continue
            out += _differences(vars(a).get(k, "<missing>"), vars(b).get(k, "<missing>"), f"{path}.{k}", depth + 1)
        return out
    return [] if bool(np.all(a == b)) else [f"{path}: {a!r} != {b!r}"]


@_CHECKED
def test_copied_ticks_are_matplotlibs_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tick copied while drawing varied charts has, part by part and attribute by attribute (except where
    its parts are placed), what the tick matplotlib makes for the same axis has."""
    copy_tick = charts._tick_copy
    compared: list[str] = []
    differences: list[str] = []

    def checked(first: Any) -> Any:
        tick = copy_tick(first)
        axis = first.axes.xaxis if first.__name__ == "xtick" else first.axes.yaxis
        made = axis._get_tick(major=first._major)  # what matplotlib's get_major_ticks/get_minor_ticks do
        axis._copy_tick_props(first, made)
        compared.append(f"{first.__name__}:{'major' if first._major else 'minor'}")
        differences.extend(_differences(tick, made, first.__name__))
        return tick

    monkeypatch.setattr(charts, "_tick_copy", checked)
    _varied()
    fig = charts.line_figure([charts.Series("s", [0, 1], [0.0, 1.0])], legend=False)
    charts.fig_to_svg(fig)
    fig.axes[0].set_yticks([i / 20 for i in range(21)])  # copies of a first tick that has its label by now
    charts.fig_to_svg(fig)
    counts = np.zeros(hist.PLAT_NR, dtype=np.int64)
    for ns, n in {1_000: 500, 2_000: 300, 50_000: 90, 4_000_000: 1}.items():
        counts[hist.value_to_idx(ns)] += n
    latency.distribution_chart([latency.Distribution("d", counts)])
    assert {"xtick:major", "ytick:major", "ytick:minor"} <= set(compared)
    assert differences == []


@_CHECKED
def test_an_axis_builds_only_its_first_tick() -> None:
    fig, ax = charts._axes("t")  # (matplotlib builds each axis's first tick with the axes)
    built: list[Any] = []

    def build(make: Any, major: bool) -> Any:
        built.append(make(major))
        return built[-1]

    for axis in (ax.xaxis, ax.yaxis):
        axis._get_tick = functools.partial(build, axis._get_tick)
    ax.set_ylim(0, 1)
    ax.set_yticks([i / 10 for i in range(11)])
    ticks = ax.yaxis.get_major_ticks()
    assert len({id(t) for t in ticks}) == 11
    assert built == []  # the other ten are copies of the first
    assert all(t.gridline.get_clip_path() is ticks[0].gridline.get_clip_path() for t in ticks)
    assert charts.fig_to_svg(fig).count('id="ytick_') == 11


def test_remembered_text_extents_are_what_matplotlib_measures() -> None:
    _varied()
    assert charts._EXTENTS
    renderer: Any = backend_svg.RendererSVG  # (untyped in matplotlib)
    fresh = renderer(100, 100, io.StringIO())
    for (text, prop, ismath), extent in charts._EXTENTS.items():
        assert fresh.get_text_width_height_descent(text, prop, ismath) == extent


def test_a_figure_drawn_again_lays_out_its_ticks_again() -> None:
    """The per-drawing tick layout is forgotten afterwards: a changed axis draws its new ticks."""
    fig = charts.line_figure([charts.Series("s", [0, 1], [0.0, 1.0])], legend=False)
    ax = fig.axes[0]
    ax.set_xlim(0, 1)
    first = charts.fig_to_svg(fig)
    ax.set_xlim(0, 1000)
    second = charts.fig_to_svg(fig)
    assert ">1,000<" not in first
    assert ">1,000<" in second
    assert charts.fig_to_png(fig).startswith(b"\x89PNG")


def test_the_cycle_collector_pauses_only_while_a_chart_is_drawn() -> None:
    import gc

    seen: list[bool] = []

    @charts.chart
    def failing_test_chart() -> str:
        seen.append(gc.isenabled())
        raise ValueError("bad data")

    assert gc.isenabled()
    with pytest.raises(ValueError):
        failing_test_chart()
    assert seen == [False]
    assert gc.isenabled()
    charts.bar_chart(["a"], {"r": [1.0]})
    assert gc.isenabled()


def _log_labels(fragment: str, axis: str) -> list[str]:
    """The labelled ticks of the log axis `axis` ('log-y-0') of a chart's SVG."""
    from xml.etree import ElementTree

    svg = ElementTree.fromstring(fragment[:fragment.index("</svg>") + 6])  # noqa: S314 (a chart drawn here)
    ns = "{http://www.w3.org/2000/svg}"
    (group,) = [g for g in svg.iter(f"{ns}g") if g.get("id") == axis]
    return [t.text.strip() for tick in group if "tick_" in (tick.get("id") or "")
            for t in tick.iter(f"{ns}text") if t.text and t.text.strip()]


@pytest.mark.parametrize(("lo", "hi"), [(72.0, 132.0), (102.0, 180.0), (0.9, 1.3), (60.0, 9000.0), (1.0, 1e6)])
def test_a_log_axis_always_has_two_labels_or_more(lo: float, hi: float) -> None:
    svg = charts.line_chart([charts.Series("a", [1, 2], [lo, hi]), charts.Series("b", [1, 2], [hi, lo])],
                            logy=True)
    labels = _log_labels(svg, "log-y-0")  # (named for a page test)
    assert len(labels) >= 2, labels


@pytest.mark.parametrize(("lo", "hi", "expected"), [
    (50.5, 171.0, [50.0, 100.0, 200.0]),  # the LAT confidence chart: 1-2-5 ticks bracket both lines
    (157.0, 171.0, [156.0, 160.0, 164.0, 168.0, 172.0]),  # too narrow for any decade step: even ticks
    (104_351.0, 111_398.0, [104e3, 106e3, 108e3, 110e3, 112e3]),  # (matplotlib's LogLocator left one: 100k)
    (9.0, 4e5, [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]),  # beyond three decades: one per decade
    (300.0, 2000.0, [200.0, 500.0, 1000.0, 2000.0]),
])
def test_log_ticks_bracket_the_data_with_one_between(lo: float, hi: float, expected: list[float]) -> None:
    ticks = charts.log_ticks(lo, hi)
    assert ticks == pytest.approx(expected)
    assert ticks[0] <= lo
    assert ticks[-1] >= hi
    assert any(lo < t < hi for t in ticks) or len(ticks) >= 3


@given(st.floats(1e-6, 1e9), st.floats(1.0001, 1e6))
def test_log_ticks_always_bracket(lo: float, ratio: float) -> None:
    hi = lo * ratio
    ticks = charts.log_ticks(lo, hi)
    assert len(ticks) >= 3
    assert ticks[0] <= lo * (1 + 1e-9)
    assert ticks[-1] >= hi * (1 - 1e-9)
    assert ticks == sorted(ticks)


def test_the_lat_confidence_chart_labels_bracket_its_data() -> None:
    """The issue's chart: values at 50 and at 157-171 got the labels 50 and 100 only."""
    svg = charts.percentile_chart([("w", {99.9: 50.5, 99.99: 50.5, 99.999: 50.5}), ("r", {99.9: 157.0, 99.99: 171.0})])
    assert _log_labels(svg, "log-y-0") == ["50", "100", "200"]
    svg = charts.percentile_chart([("r", {99.9: 157.0, 99.99: 165.0, 99.999: 171.0})])
    labels = [float(t) for t in _log_labels(svg, "log-y-0")]
    assert labels[0] <= 157
    assert labels[-1] >= 171


@pytest.mark.parametrize(("values", "log", "expected"), [
    ([50_000, 100_000, 200_000], True, ["50k", "100k", "200k"]),  # never "50,000" beside "100k"
    ([500, 1_000, 5_000, 50_000], True, ["500", "1,000", "5,000", "50,000"]),
    ([1e-5, 1e-4, 1e-3, 1.0], True, ["10⁻⁵", "10⁻⁴", "10⁻³", "10⁰"]),  # never "1e-05" beside "0.001"
    ([0.0, 250_000, 500_000, 750_000, 1_000_000], False, ["0", "0.25M", "0.50M", "0.75M", "1.00M"]),
    ([0.0, 20_000, 40_000], False, ["0", "20k", "40k"]),
    ([0.0, 0.05, 0.10, 0.15], False, ["0", "0.05", "0.10", "0.15"]),
    ([0.0, 2_500.0, 5_000.0], False, ["0", "2,500", "5,000"]),
])
def test_one_tick_style_per_axis(values: list[float], log: bool, expected: list[str]) -> None:
    text = charts.tick_style(values, log=log)
    assert [text(v) for v in values] == expected


def test_a_chart_log_axis_never_mixes_label_styles() -> None:
    svg = charts.line_chart([charts.Series("a", [1, 2, 3], [40_000.0, 90_000.0, 210_000.0])], logy=True)
    labels = _log_labels(svg, "log-y-0")
    assert labels
    assert all(t.endswith("k") for t in labels), labels


def test_queue_depths_and_block_sizes_get_log2_axes() -> None:
    fig = charts.line_figure([charts.Series("a", [1, 2, 4, 8, 16, 32, 64], [1.0] * 7)], log2x=True)
    ax = fig.axes[0]
    assert ax.xaxis.get_scale() == "log"
    assert ax.xaxis.get_transform().base == 2
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4", "8", "16", "32", "64"]
    fig = charts.line_figure([charts.Series("a", [512, 4096, 131072, 1 << 20], [1.0] * 4)], log2x=True,
                             xticks=[512, 4096, 131072, 1 << 20], xfmt=charts.bs_tick)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["512", "4K", "128K", "1M"]
    assert charts.log2_ticks(1, 1024) == [2.0 ** k for k in range(11)]
    many = charts.log2_ticks(1, 2 ** 30)  # every third power: still from 1 to at least 2^30
    assert len(many) <= charts.MAX_LOG2_TICKS
    assert many[0] == 1
    assert many[-1] >= 2 ** 30


def test_linear_axes_end_at_ticks() -> None:
    fig = charts.line_figure([charts.Series("a", [0, 11], [3.0, 171.0])])
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()  # from the data's first tick (no "-2" on a time axis from 0) to just past 12
    assert lo == 0.0
    assert hi == pytest.approx(12.0 * (1 + charts.EDGE))
    ylo, yhi = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if ylo <= t <= yhi]
    assert ticks[0] <= 3.0
    assert ticks[-1] >= 171.0


def test_bars_stand_on_a_linear_axis_unless_asked() -> None:
    """73 bars on a log axis from 1 were unreadable: a bar's length is its value."""
    svg = charts.grouped_hbar_chart([f"p{i}" for i in range(73)], {"Read": [1.5 + i * 100 for i in range(73)]})
    assert "log-x-0" not in svg
    assert "log-y-0" not in charts.bar_chart(["a", "b"], {"MRT": [68.0, 93_000.0]}, ylabel="µs")
    asked = charts.bar_chart(["a", "b"], {"MRT": [68.0, 93_000.0]}, ylabel="µs", log=True)
    assert 'id="log-y-0"' in asked
    assert "µs (log scale)" in asked


def test_the_palette_is_distinct() -> None:
    assert len(set(charts.PALETTE)) == len(charts.PALETTE)
    assert charts.PALETTE[:2] == ("#0072B2", "#D55E00")  # read, write: Okabe-Ito blue and vermillion


def test_values_spanning_more_than_two_decades_get_a_log_axis() -> None:
    assert charts.wide_span([68.0, 93_000.0])
    assert not charts.wide_span([68.0, 6_800.0])  # two decades exactly: linear
    assert not charts.wide_span([0.0, 93_000.0])  # a zero cannot be drawn on a log axis
    assert not charts.wide_span([None, 5.0])
    line = charts.line_chart([charts.Series("a", [1, 2, 3], [50.0, 900.0, 70_000.0])], ylabel="µs")
    assert 'id="log-y-0"' in line
    assert 'id="log-y-0"' not in charts.line_chart([charts.Series("a", [1, 2], [50.0, 70_000.0])], logy=False)

