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
    res = run_cli("plot", str(stored), "--x", "iodepth", "--y", "p99_us", "--series", "numjobs")
    assert res.code == 0, res.err
    svg = Path(res.out.strip())
    assert svg == stored / "plot-p99_us-vs-iodepth.svg"
    text = svg.read_text()
    assert text.startswith("<svg")
    assert "numjobs=1" in text
    assert "numjobs=2" in text


def test_plot_png_metric_against_metric(stored: Path, tmp_path: Path) -> None:
    out = tmp_path / "lat.png"
    res = run_cli("plot", str(stored), "--x", "iops", "--y", "read_p99.9_us", "--series", "bs", "--out", str(out))
    assert res.code == 0, res.err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_bs_axis(stored: Path, tmp_path: Path) -> None:
    res = run_cli("plot", str(stored), "--x", "bs", "--y", "bw_MBps", "--out", str(tmp_path / "bs.svg"))
    assert res.code == 0, res.err
    assert ">64K<" in (tmp_path / "bs.svg").read_text()


@pytest.mark.parametrize(("args", "msg"), [
    (["--x", "bs", "--y", "colour"], "is not a metric"),
    (["--x", "rw", "--y", "iops"], "use it as --series"),
    (["--x", "nothing", "--y", "iops"], "has a value for --x nothing"),
    (["--x", "bs", "--y", "iops", "--out", "x.pdf"], "use a .svg or .png"),
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
