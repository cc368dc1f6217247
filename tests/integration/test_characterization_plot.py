"""`ssdlab plot` on a stored run: any metric against any swept parameter, SVG and PNG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small lat-curve run on the null engine."""
    out = tmp_path_factory.mktemp("plot") / "run"
    res = run_cli("run", "lat-curve", "--target", "null", "--runtime", "1", "--ramp", "0", "--out", str(out),
                  "--quiet", "--no-report", "--axis", "bs=4k,64k", "--axis", "rwmixread=70",
                  "--axis", "numjobs=1,2", "--axis", "iodepth=1,4")
    assert res.code == 0, res.err
    return out


def test_plot_svg_series(stored: Path) -> None:
    res = run_cli("plot", str(stored), "--x", "iodepth", "--y", "p99_us", "--series", "numjobs", "--where", "bs=4k")
    assert res.code == 0, res.err
    svg = Path(res.out.strip())
    assert svg == stored / "plot-p99_us-vs-iodepth.svg"
    text = svg.read_text()
    assert text.startswith("<svg")
    assert "numjobs=1" in text
    assert "numjobs=2" in text


def test_plot_png_metric_against_metric(stored: Path, tmp_path: Path) -> None:
    out = tmp_path / "lat.png"
    res = run_cli("plot", str(stored), "--x", "iops", "--y", "read_p99.9_us", "--series", "bs", "--where",
                  "numjobs=2", "--out", str(out))
    assert res.code == 0, res.err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_bs_axis(stored: Path, tmp_path: Path) -> None:
    res = run_cli("plot", str(stored), "--x", "bs", "--y", "bw_MBps", "--where", "numjobs=1,iodepth=4",
                  "--out", str(tmp_path / "bs.svg"))
    assert res.code == 0, res.err
    assert ">64K<" in (tmp_path / "bs.svg").read_text()


@pytest.mark.parametrize(("args", "msg"), [
    (["--x", "bs", "--y", "colour"], "is not a metric"),
    (["--x", "nothing", "--y", "iops"], "has a value for --x nothing"),
    (["--x", "bs", "--y", "iops", "--where", "numjobs=1,iodepth=1", "--out", "x.pdf"], "use a .svg or .png"),
    (["--x", "bs", "--y", "iops", "--where", "colour=red"], "no point of"),
    (["--x", "bs", "--y", "iops", "--where", "numjobs"], "use AXIS=VALUE"),
])
def test_plot_errors(stored: Path, args: list[str], msg: str) -> None:
    res = run_cli("plot", str(stored), *args, traceback=False)
    assert res.code == 2
    assert msg in res.err
    assert len(res.err_lines) == 1


def test_plot_needs_a_run(tmp_path: Path) -> None:
    res = run_cli("plot", str(tmp_path), "--x", "bs", "--y", "iops", traceback=False)
    assert res.code == 8
    assert "no run.json" in res.err


def test_plot_several_runs_one_series_each(stored: Path, tmp_path: Path) -> None:
    """Two runs (the same stored run twice, named apart): one line per run and --series value."""
    out = tmp_path / "two.svg"
    res = run_cli("plot", str(stored), str(stored / "run.json"), "--labels", "first,second", "--x", "iodepth",
                  "--y", "iops", "--series", "numjobs", "--where", "bs=64k", "--out", str(out))
    assert res.code == 0, res.err
    text = out.read_text()
    for name in ("first numjobs=1", "first numjobs=2", "second numjobs=1", "second numjobs=2"):
        assert name in text
    assert "first vs second" in text


def test_plot_where_filters_points(stored: Path) -> None:
    """--where keeps only matching points (the curve through QD 1 and 4 of one bs and thread count)."""
    from ssdlab.commands.plot import parse_where, plot_data
    from ssdlab.results.store import load_run

    run = load_run(stored)
    data = plot_data([(run, "r")], "iodepth", "iops", None, where=parse_where(["bs=4k,numjobs=2"]))
    assert list(data.lines) == ["iops"]
    assert [x for x, _ in data.lines["iops"]] == [1.0, 4.0]


# ---------------------------------------------------------------- axes the user did not name, categories, overlays


@pytest.fixture(scope="module")
def sweep_qd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short sweep-qd run on the simulator: three mixes (rw) over threads x queue depth."""
    out = tmp_path_factory.mktemp("plot-sqd") / "run"
    res = run_cli("run", "sweep-qd", "--target", "sim", "--runtime", "0.1", "--out", str(out), "--quiet",
                  "--no-report", "--axis", "numjobs=1,2", "--axis", "iodepth=1,4,16")
    assert res.code == 0, res.err
    return out


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `quick` run on the simulator: every point is its own matrix (SEQ1M Q8T1, RND4K Q32T1 ...)."""
    out = tmp_path_factory.mktemp("plot-quick") / "run"
    res = run_cli("run", "quick", "--target", "sim", "--runtime", "0.1", "--out", str(out), "--quiet",
                  "--no-report")
    assert res.code == 0, res.err
    return out


def _lines(run: Path, x: str, y: str, series: str | None = None, where: str = "") -> Any:
    from ssdlab.commands.plot import parse_where, plot_data
    from ssdlab.results.store import load_run

    return plot_data([(load_run(run), "r")], x, y, series, where=parse_where([where] if where else []))


def test_readme_example_on_sweep_qd(sweep_qd: Path) -> None:
    """README's own example: the three mixes the user did not name split the lines, and a note says so."""
    res = run_cli("plot", str(sweep_qd), "--x", "iodepth", "--y", "iops", "--series", "numjobs", "--where", "bs=4k",
                  traceback=False)
    assert res.code == 0, res.err
    assert "note: the points also differ in rw: one line per value; rwmixread, matrix follow" in res.err
    text = (sweep_qd / "plot-iops-vs-iodepth.svg").read_text()
    for name in ("numjobs=1 rw=randread", "numjobs=2 rw=randwrite", "numjobs=2 rw=randrw"):
        assert name in text
    data = _lines(sweep_qd, "iodepth", "iops", "numjobs", "bs=4k")
    assert data.split == ["rw"]
    assert len(data.lines) == 6  # 2 thread counts x 3 mixes
    assert all([x for x, _ in pts] == [1.0, 4.0, 16.0] for pts in data.lines.values())


def test_unnamed_axes_split_each_line_to_one_workload(stored: Path) -> None:
    """What used to be refused (a line across block sizes and thread counts) is split by them instead."""
    data = _lines(stored, "iodepth", "iops")
    assert data.split == ["bs", "numjobs"]
    assert sorted(data.lines) == ["bs=4K numjobs=1", "bs=4K numjobs=2", "bs=64K numjobs=1", "bs=64K numjobs=2"]
    assert "one line per combination" in str(data.note())
    curve = _lines(stored, "iops", "p99_us", "bs")  # against a metric, the axis with most values traces the curve
    assert curve.traced == "iodepth"
    assert curve.split == ["numjobs"]
    assert len(curve.lines) == 4
    assert all(len(pts) == 2 for pts in curve.lines.values())


def test_quick_against_iodepth(quick_run: Path, tmp_path: Path) -> None:
    """Each quick point is its own matrix, yet RND4K Q1T1 and Q32T1 are one line: the matrix name splits only
    where two points would meet at one queue depth."""
    data = _lines(quick_run, "iodepth", "iops")
    assert data.split == ["rw"]
    assert data.lines.keys() == {"rw=read", "rw=write", "rw=randread", "rw=randwrite"}
    assert [x for x, _ in data.lines["rw=randread"]] == [1.0, 32.0]
    assert [x for x, _ in data.lines["rw=read"]] == [1.0, 8.0]
    assert {"matrix", "bs"} <= set(data.follow)
    res = run_cli("plot", str(quick_run), "--x", "iodepth", "--y", "iops", "--out", str(tmp_path / "q.svg"),
                  traceback=False)
    assert res.code == 0, res.err
    assert "rw=randwrite" in (tmp_path / "q.svg").read_text()


@pytest.mark.parametrize("axis", ["label", "rw", "matrix"])
def test_categorical_x_drawn_as_categories(quick_run: Path, tmp_path: Path, axis: str) -> None:
    """label, rw and matrix are categories on the x axis (bars), not refused as non-numeric."""
    data = _lines(quick_run, axis, "iops")
    assert data.categories is not None
    if axis == "label":
        assert data.categories[0] == "SEQ1M Q8T1 Read"
        assert len(data.categories) == 8
        assert data.split == []  # one point per label: nothing to split
    if axis == "rw":
        assert data.categories == ["read", "randread", "write", "randwrite"]
        assert data.split == ["iodepth"]  # two points per mix: split by the parameter that tells them apart
        assert len(data.lines) == 3
    out = tmp_path / f"{axis}.svg"
    res = run_cli("plot", str(quick_run), "--x", axis, "--y", "iops", "--out", str(out), traceback=False)
    assert res.code == 0, res.err
    text = out.read_text()
    assert text.startswith("<svg")
    assert "RND4K" in text if axis != "rw" else "randwrite" in text


def test_categorical_runs_overlay(quick_run: Path, stored: Path, tmp_path: Path) -> None:
    """Several runs on a category axis: one bar per run in each category; a run without the category has none."""
    from ssdlab.commands.plot import plot_data
    from ssdlab.results.store import load_run

    data = plot_data([(load_run(quick_run), "quick"), (load_run(stored), "curve")], "rw", "iops", None)
    assert data.categories is not None
    assert "randrw" in data.categories
    assert any(name.startswith("quick") for name in data.lines)
    assert any(name.startswith("curve") for name in data.lines)
    out = tmp_path / "both.png"
    res = run_cli("plot", str(quick_run), str(stored), "--labels", "quick,curve", "--x", "rw", "--y", "iops",
                  "--out", str(out), traceback=False)
    assert res.code == 0, res.err
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_sweep_runs_overlay(sweep_qd: Path, quick_run: Path, tmp_path: Path) -> None:
    """A sweep and a quick run on one numeric axis: each run's lines carry its name."""
    out = tmp_path / "overlay.svg"
    res = run_cli("plot", str(sweep_qd), str(quick_run), "--labels", "sweep,quick", "--x", "iodepth", "--y",
                  "iops", "--where", "rw=randread", "--out", str(out), traceback=False)
    assert res.code == 0, res.err
    text = out.read_text()
    assert "sweep numjobs=1" in text
    assert "quick" in text
    assert "sweep vs quick" in text


def test_plot_labels_its_axes_from_the_registry_and_puts_queue_depths_on_log2(stored: Path, tmp_path: Path) -> None:
    out = tmp_path / "qd.svg"
    res = run_cli("plot", str(stored), "--x", "iodepth", "--y", "p99_us", "--series", "numjobs", "--where", "bs=4k",
                  "--out", str(out))
    assert res.code == 0, res.err
    text = out.read_text()
    assert ">p99 latency (µs)<" in text  # the metric's label and unit, not its name p99_us
    assert ">queue depth (iodepth)<" in text
    assert ">p99_us<" not in text
    assert 'id="log-x-0"' in text  # queue depths 1 and 4 on a log axis (base 2: doubling steps evenly spaced)
    from ssdlab.commands.plot import LOG2, axis_title

    assert "iodepth" in LOG2
    assert axis_title("iops") == "IOPS"
    assert axis_title("read_bw_MBps") == "read MB/s"
    assert axis_title("usr_cpu") == "fio user CPU (%)"


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_plot_out_gets_the_mode_the_umask_gives(stored: Path, tmp_path: Path, mask: int, mode: int) -> None:
    """As a report does: the atomic write's private temporary file (0600) does not decide the file's mode."""
    import os

    old = os.umask(mask)
    try:
        for name in ("p.png", "p.svg"):
            res = run_cli("plot", str(stored), "--x", "bs", "--y", "iops", "--where", "numjobs=1,iodepth=4",
                          "--out", str(tmp_path / name))
            assert res.code == 0, res.err
            assert (tmp_path / name).stat().st_mode & 0o777 == mode, name
    finally:
        os.umask(old)
