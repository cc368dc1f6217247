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


# --- --force replaces only regular files, and says what it replaced (issue 31) -----------------------------

def _specials(tmp_path: Path) -> dict[str, Path]:
    """Paths in the way that are not regular files: a FIFO, a socket, a directory, a link; as root also a
    character and a block device node (made here, in tmp_path)."""
    import os
    import socket
    import stat

    found = {"a FIFO": tmp_path / "fifo", "a socket": tmp_path / "sock", "a directory": tmp_path / "dir",
             "a symbolic link": tmp_path / "link"}
    os.mkfifo(found["a FIFO"])
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(found["a socket"]))
    found["a directory"].mkdir()
    (tmp_path / "linked.xml").write_text(MINE)
    found["a symbolic link"].symlink_to(tmp_path / "linked.xml")
    if os.geteuid() == 0:
        found["a character device"] = tmp_path / "chr"
        os.mknod(found["a character device"], stat.S_IFCHR | 0o600, os.makedev(1, 3))  # as /dev/null
        found["a block device"] = tmp_path / "blk"
        os.mknod(found["a block device"], stat.S_IFBLK | 0o600, os.makedev(7, 0))  # as /dev/loop0
    return found


def test_force_never_replaces_a_device_socket_fifo_directory_or_link(cli: CliRunner, run_dir: Path,
                                                                      tmp_path: Path) -> None:
    import stat

    for what, path in _specials(tmp_path).items():
        mode = path.lstat().st_mode
        res = cli("report", run_dir, "--junit", path, "--force", traceback=False)
        assert res.code == 2, (what, res.err)
        if what == "a directory":
            assert res.err_lines == [f"ssdlab: error: --junit {path} is a directory: name a file"]
        else:
            assert res.err_lines == [f"ssdlab: error: --junit {path} is {what}: ssdlab replaces only regular files, "
                                     "also with --force; choose a file path"]
        assert path.lstat().st_mode == mode  # still what it was
        assert stat.S_IFMT(mode) != stat.S_IFREG
    assert (tmp_path / "linked.xml").read_text() == MINE
    out = tmp_path / "cmp"
    out.mkdir()
    import os

    os.mkfifo(out / "compare.csv")
    res = cli("compare", SCHEMA1 / "pts-iops-op7", SCHEMA1 / "pts-iops-op28", "--out", out, "--quiet", "--force",
              traceback=False)
    assert res.code == 2
    assert f"--out {out}: its {out / 'compare.csv'} is a FIFO: ssdlab replaces only regular files" in res.err
    assert stat.S_ISFIFO((out / "compare.csv").lstat().st_mode)


def test_force_says_what_it_replaced(cli: CliRunner, run_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "existing.txt"
    target.write_text(MINE)
    res = cli("report", run_dir, "--junit", target, "--force")
    assert res.code in (0, 1)
    assert f"--junit: replacing {target} (19 B, a file ssdlab did not write), as --force asks" in res.err_lines
    res = cli("report", run_dir, "--junit", target, "--force")  # ssdlab's own now: nothing to say
    assert "replacing" not in res.err
