"""Output paths the user names (--junit, compare --out, plot/latency --out) never replace a file ssdlab did not
write, unless --force; ssdlab's own earlier outputs are replaced."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import CliRunner
from ssdlab.results import outputs
from stored_runs import SCHEMA1

MINE = "a user's own notes\n"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SCHEMA1 / "quick-file", tmp_path / "run"))


def test_report_junit_refuses_a_foreign_file_and_replaces_with_force(cli: CliRunner, run_dir: Path,
                                                                      tmp_path: Path) -> None:
    target = tmp_path / "existing.txt"
    target.write_text(MINE)
    res = cli("report", run_dir, "--junit", target, traceback=False)
    assert res.code == 2
    assert res.err_lines == [f"ssdlab: error: --junit {target} exists and was not written by ssdlab: choose another "
                             "path, or pass --force to replace it"]
    assert target.read_text() == MINE
    assert not (run_dir / "report.html").exists()  # refused before anything was written
    assert cli("report", run_dir, "--junit", target, "--force").code in (0, 1)
    assert "<testsuites" in target.read_text()
    assert cli("report", run_dir, "--junit", target).code in (0, 1)  # ssdlab's own file: replaced without asking


def test_report_junit_xml_of_our_own_is_replaced(cli: CliRunner, run_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    assert cli("report", run_dir, "--junit", target).code in (0, 1)
    assert outputs.written_by_ssdlab(target)
    assert cli("report", run_dir, "--junit", target).code in (0, 1)
    target.write_text('<?xml version="1.0"?>\n<testsuites name="pytest"/>\n')
    assert cli("report", run_dir, "--junit", target, traceback=False).code == 2


def test_compare_out_refuses_foreign_files_in_the_way(cli: CliRunner, tmp_path: Path) -> None:
    runs = [SCHEMA1 / "pts-iops-op7", SCHEMA1 / "pts-iops-op28"]
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "compare.html").write_text("<html>mine</html>")
    res = cli("compare", *runs, "--out", out, "--quiet", traceback=False)
    assert res.code == 2
    assert "holds a compare.html that ssdlab did not write" in res.err
    assert (out / "compare.html").read_text() == "<html>mine</html>"
    (out / "compare.html").unlink()
    (out / "compare.csv").write_text("mine\n")
    (out / "notes.txt").write_text(MINE)
    res = cli("compare", *runs, "--out", out, "--quiet", traceback=False)
    assert res.code == 2
    assert "holds compare.csv, which ssdlab did not write" in res.err
    assert cli("compare", *runs, "--out", out, "--quiet", "--force").code == 0
    assert (out / "notes.txt").read_text() == MINE  # only its own files are written
    assert cli("compare", *runs, "--out", out, "--quiet").code == 0  # an earlier compare: replaced
    junit = tmp_path / "j.xml"
    junit.write_text(MINE)
    res = cli("compare", *runs, "--out", tmp_path / "new", "--junit", junit, "--quiet", traceback=False)
    assert res.code == 2
    assert not (tmp_path / "new").exists()  # refused before the directory was made


@pytest.mark.parametrize("name", ["chart.svg", "chart.png"])
def test_plot_out_refuses_a_foreign_chart_and_replaces_its_own(cli: CliRunner, run_dir: Path, tmp_path: Path,
                                                                name: str) -> None:
    out = tmp_path / name
    out.write_bytes(b"\x89PNG foreign" if name.endswith("png") else b"<svg>foreign</svg>")
    args = ["plot", run_dir, "--x", "iodepth", "--y", "iops", "--where", "rw=randread", "--series", "matrix",
            "--out", out]
    res = cli(*args, traceback=False)
    assert res.code == 2
    assert "exists and was not written by ssdlab" in res.err
    assert cli(*args, "--force").code == 0
    assert outputs.written_by_ssdlab(out)
    assert cli(*args).code == 0
