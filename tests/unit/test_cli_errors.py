"""The CLI error boundary: one clear line on stderr, a distinct documented exit code, no traceback."""

from __future__ import annotations

import json
import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

import ssdlab.errors
from conftest import CliRunner
from ssdlab.cli import build_parser
from ssdlab.errors import ExitCode
from ssdlab.results.model import SCHEMA_VERSION

EXIT_DOCS = {0: "ok", 1: "negative verdict", 2: "usage", 3: "target", 4: "refused", 5: "fio missing",
             6: "fio failed", 7: "results dir", 8: "stored results", 9: "resume on another device",
             130: "interrupted"}


def assert_one_line_error(cli: CliRunner, args: Sequence[str | Path], code: ExitCode, *fragments: str) -> str:
    """Run without --traceback; exactly one stderr line, the expected code, the expected words."""
    res = cli(*args, traceback=False)
    assert res.code == int(code), res.err
    assert len(res.err_lines) == 1, res.err
    line = res.err_lines[0]
    assert line.startswith("ssdlab: error: ")
    assert "Traceback" not in res.err
    for fragment in fragments:
        assert fragment in line
    return str(line)


def test_exit_codes_are_distinct_and_documented(cli: CliRunner) -> None:
    values = [int(c) for c in ExitCode]
    assert len(values) == len(set(values))
    assert set(values) == set(EXIT_DOCS)
    epilog = build_parser().epilog or ""
    for code, words in EXIT_DOCS.items():
        assert f"{code} {words}" in epilog
    for code in values:
        assert f"  {code} " in (ssdlab.errors.__doc__ or "")


@pytest.mark.parametrize(("target", "code", "fragment"), [
    ("file:/nonexistent-ssdlab-dir/x.dat", ExitCode.TARGET, "does not exist"),
    ("/dev/nonexistent-ssdlab", ExitCode.TARGET, "does not exist"),
    ("/dev/null", ExitCode.TARGET, "is not a block device"),
    ("bogus:thing", ExitCode.USAGE, "unknown target scheme 'bogus'"),
    ("", ExitCode.USAGE, "empty target"),
    ("null?size", ExitCode.USAGE, "bad target parameters"),
])
def test_bad_target(cli: CliRunner, target: str, code: ExitCode, fragment: str) -> None:
    assert_one_line_error(cli, ["plan", "quick", "--target", target], code, fragment)


def test_target_that_is_a_directory(cli: CliRunner, tmp_path: Path) -> None:
    assert_one_line_error(cli, ["plan", "quick", "--target", f"file:{tmp_path}"], ExitCode.TARGET,
                          "is a directory")


def test_file_path_fio_would_misread_is_refused(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert_one_line_error(cli, ["run", "quick", "--target", f"file:{tmp_path}/a;b.dat?size=8MiB", "--out", out],
                          ExitCode.TARGET, "fio cannot open a path containing ';'")
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["--target", "null", "--size", "12parsecs"],
    ["--target", "null", "--capacity=-4k"],
    ["--target", "null?size=12zz"],
    ["--target", "file:/tmp/ssdlab-never.dat?size=1.5"],
])
def test_bad_size_string(cli: CliRunner, args: list[str]) -> None:
    assert_one_line_error(cli, ["plan", "quick", *args], ExitCode.USAGE, "bad size")


def test_unknown_suite(cli: CliRunner) -> None:
    line = assert_one_line_error(cli, ["plan", "no-such-suite", "--target", "null"], ExitCode.USAGE,
                                 "unknown suite 'no-such-suite'", "ssdlab suites")
    assert "quick" in line


@pytest.mark.parametrize("args", [["run"], ["frobnicate"], ["plan"], ["run", "quick", "--bogus"]])
def test_bad_usage(cli: CliRunner, args: list[str]) -> None:
    assert_one_line_error(cli, args, ExitCode.USAGE, "--help")


def test_the_default_target_is_the_simulated_drive(cli: CliRunner) -> None:
    res = cli("plan", "quick")
    assert res.code == 0
    assert "target sim:p5430 (sim," in res.out  # the calibrated D5-P5430 (sim/presets.DEFAULT_PRESET)
    assert "will overwrite: nothing real" in res.out


def test_runtime_out_of_range(cli: CliRunner) -> None:
    assert_one_line_error(cli, ["plan", "quick", "--target", "null", "--runtime", "-1"], ExitCode.USAGE,
                          "--runtime")


def test_fio_missing(cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    out = tmp_path / "out"
    assert_one_line_error(cli, ["run", "quick", "--target", "null", "--runtime", "1", "--out", out],
                          ExitCode.FIO_MISSING, "fio was not found", "apt-get install fio")
    assert not out.exists()


def fake_fio(directory: Path, stderr_line: str) -> None:
    """An `fio` that answers --version like 3.33 and fails every job with `stderr_line`."""
    directory.mkdir(exist_ok=True)
    script = directory / "fio"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo fio-3.33; exit 0; fi\n'
        f"echo '{stderr_line}' >&2\n"
        "exit 1\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_fio_error_shows_its_stderr_and_marks_the_run_failed(cli: CliRunner, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    fake_fio(tmp_path / "bin", "fio: engine libmadeup not loadable")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    out = tmp_path / "out"
    res = cli("run", "quick", "--target", "null", "--runtime", "1", "--out", out, "--no-report",
              traceback=False)
    assert res.code == ExitCode.FIO_FAILED
    assert "Traceback" not in res.err
    errors = [ln for ln in res.err_lines if ln.startswith("ssdlab: error:")]
    assert errors == ["ssdlab: error: fio failed: fio: engine libmadeup not loadable"]
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "failed"
    assert [p["status"] for p in run["points"]] == ["failed"]
    assert "libmadeup" in run["points"][0]["reason"]
    point_dir = out / "points" / run["points"][0]["point"]["id"]
    assert (point_dir / "job.fio").is_file()
    assert (point_dir / "cmd.txt").is_file()
    assert "libmadeup" in (point_dir / "stderr.txt").read_text(encoding="utf-8")


def test_results_directory_not_writable(cli: CliRunner, tmp_path: Path) -> None:
    assert_one_line_error(cli, ["run", "quick", "--target", "null", "--out", "/proc/ssdlab-test-out"],
                          ExitCode.RESULTS, "not writable", "--out")
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    assert_one_line_error(cli, ["run", "quick", "--target", "null", "--out", blocker / "sub"],
                          ExitCode.RESULTS, "not writable")


def test_results_directory_not_empty(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    assert_one_line_error(cli, ["run", "quick", "--target", "null", "--out", tmp_path], ExitCode.RESULTS,
                          "not empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


@pytest.mark.parametrize("command", ["report", "export", "resume"])
def test_stored_results_unreadable(cli: CliRunner, tmp_path: Path, command: str) -> None:
    assert_one_line_error(cli, [command, tmp_path], ExitCode.STORED, "no run.json")
    (tmp_path / "run.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION + 41}), encoding="utf-8")
    assert_one_line_error(cli, [command, tmp_path], ExitCode.STORED, f"schema {SCHEMA_VERSION + 41}")


def test_traceback_flag_shows_the_traceback(cli: CliRunner) -> None:
    res = cli("plan", "no-such-suite", "--target", "null", traceback=True)
    assert res.code == ExitCode.USAGE
    assert "Traceback" in res.err
    assert res.err_lines[-1].startswith("ssdlab: error: unknown suite")


def test_a_file_larger_than_the_free_space_is_refused_before_a_results_directory_exists(tmp_path: Path) -> None:
    from conftest import run_cli

    out = tmp_path / "r"
    res = run_cli("run", "quick", "--target", f"file:{tmp_path}/huge.dat?size=1000TiB", "--out", out, "--yes",
                  traceback=False)
    assert res.code == 3
    assert len(res.err_lines) == 1
    assert f"not enough space for {tmp_path}/huge.dat" in res.err
    assert not out.exists()
    assert not (tmp_path / "huge.dat").exists()
    res = run_cli("plan", "quick", "--target", f"file:{tmp_path}/huge.dat?size=1000TiB", traceback=False)
    assert res.code == 3


def test_a_tiny_existing_file_says_what_it_holds(tmp_path: Path) -> None:
    from conftest import run_cli

    small = tmp_path / "small.dat"
    small.write_bytes(b"x" * 14)
    res = run_cli("plan", "quick", "--target", f"file:{small}", traceback=False)
    assert res.code == 3
    assert f"{small} holds 14 B, too small for a target: use at least 1 MiB" in res.err
