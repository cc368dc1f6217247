"""`ssdlab plot` on a stored run: any metric against any swept parameter, SVG and PNG."""

from __future__ import annotations

from pathlib import Path

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
    (["--x", "rw", "--y", "iops"], "use it as --series"),
    (["--x", "nothing", "--y", "iops"], "has a value for --x nothing"),
    (["--x", "bs", "--y", "iops", "--where", "numjobs=1,iodepth=1", "--out", "x.pdf"], "use a .svg or .png"),
    # a line through points that differ in an axis that is not plotted is refused, naming the axis
    (["--x", "bs", "--y", "iops", "--series", "numjobs"], "differ in iodepth (1, 4)"),
    (["--x", "iodepth", "--y", "iops"], "differ in bs (4K, 64K); numjobs (1, 2)"),
    (["--x", "iops", "--y", "p99_us", "--series", "bs"], "differ in iodepth (1, 4); numjobs (1, 2)"),
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
    assert list(data) == ["iops"]
    assert [x for x, _ in data["iops"]] == [1.0, 4.0]
