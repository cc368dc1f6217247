"""Bad input never reaches exit 70 (issue 31): a run.json or tags.json that is not UTF-8, a --token-file that is a
device or not UTF-8, tags of raw bytes; stored measurements that no run measures (NaN, infinity, negative,
missing) make their point invalid and the test incomplete (exit 1), with the reason; raw bytes never reach
the terminal as they are. (Non-UTF-8 target paths and malformed NBD URIs: tests/unit/test_identity.py.)"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from conftest import CliRunner
from ssdlab.errors import ExitCode
from ssdlab.results.store import load_run
from ssdlab.results.verdict import run_verdicts
from ssdlab.termtext import printable
from stored_runs import SCHEMA1


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SCHEMA1 / "quick-file", tmp_path / "run"))


def one_line(res: Any, code: ExitCode, *fragments: str) -> str:
    assert res.code == code, res.err
    assert len(res.err_lines) == 1, res.err
    for fragment in fragments:
        assert fragment in res.err_lines[0], res.err_lines[0]
    return str(res.err_lines[0])


@pytest.mark.parametrize("command", ["report", "export", "resume"])
def test_a_run_json_that_is_not_utf8_is_exit_8(cli: CliRunner, run_dir: Path, command: str) -> None:
    path = run_dir / "run.json"
    path.write_bytes(path.read_bytes().replace(b'"suite": "quick"', b'"suite": "qu\xffck"', 1))
    one_line(cli(command, run_dir, traceback=False), ExitCode.STORED,
             f"cannot read {path}: it is not UTF-8 text (byte ", "restore it from a copy")


def test_a_tags_file_that_is_not_utf8_is_exit_8(cli: CliRunner, run_dir: Path) -> None:
    (run_dir / "tags.json").write_bytes(b'{"label": "\xff"}')
    one_line(cli("tag", run_dir, "a=b", traceback=False), ExitCode.STORED, "tags.json", "fix or delete it")


def test_tags_of_raw_bytes_are_refused_and_never_echoed(cli: CliRunner, run_dir: Path) -> None:
    raw = os.fsdecode(b"label=\x9b31mred\xff")  # as the command line hands it over (8-bit CSI among the bytes)
    res = cli("tag", run_dir, raw, traceback=False)
    line = one_line(res, ExitCode.USAGE, "tag label=\\x9b31mred\\xff is not valid UTF-8 text")
    assert "\x9b" not in line
    assert not any(0xD800 <= ord(c) < 0xE000 for c in res.err)
    assert not (run_dir / "tags.json").exists()


def test_stored_tags_of_raw_bytes_are_shown_escaped(cli: CliRunner, run_dir: Path) -> None:
    (run_dir / "tags.json").write_text('{"fw": "\\udc9b31m\\u009b2J"}', encoding="utf-8")  # surrogates and a C1 CSI
    res = cli("tag", run_dir, "a=b")
    assert res.code == 0, res.err
    assert res.out.strip() == "a=b fw=\\x9b31m\\x9b2J"
    assert printable("\udc9b") == "\\x9b"


def test_a_token_file_that_is_a_device_or_not_utf8_is_one_line(cli: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "token"
    bad.write_bytes(b"\xff" * 40)
    bad.chmod(0o600)
    one_line(cli("serve", "--results", tmp_path, "--token-file", bad, traceback=False), ExitCode.USAGE,
             f"--token-file {bad} holds no token (not UTF-8 text)")
    if os.geteuid() == 0:
        node = tmp_path / "tokdev"
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a device node (as /dev/null)
        one_line(cli("serve", "--results", tmp_path, "--token-file", node, traceback=False), ExitCode.USAGE,
                 f"--token-file {node} is not a regular file")
        assert stat.S_ISCHR(node.lstat().st_mode)


# --- stored measurements no run measures ---------------------------------------------------------------------

def _tamper(run_dir: Path, change: Any) -> None:
    path = run_dir / "run.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc["points"][2])
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")  # NaN and Infinity as Python's json writes them


def _set(key: str, value: Any) -> Any:
    def change(p: dict[str, Any]) -> None:
        d = p["measurement"]["directions"]["read"]
        if "." in key:
            lat, k = key.split(".")
            d[lat][k] = value
        else:
            d[key] = value
    return change


@pytest.mark.parametrize(("change", "why"), [
    (_set("iops", float("nan")), "read.iops = nan"),
    (_set("bw_bytes", float("inf")), "read.bw_bytes = inf"),
    (_set("total_ios", -5), "read.total_ios = -5"),
    (_set("clat.mean_ns", -1.0), "read.clat.mean_ns = -1.0"),
    (lambda p: p.update(measurement=None), "its stored measurement is missing"),
])
def test_implausible_stored_measurements_make_the_point_invalid(cli: CliRunner, run_dir: Path, change: Any,
                                                                why: str) -> None:
    assert run_verdicts(load_run(run_dir)).exit_code == 0
    _tamper(run_dir, change)
    verdict = run_verdicts(load_run(run_dir))
    assert verdict.exit_code == ExitCode.NEGATIVE
    assert verdict.kind == "incomplete"
    (point,) = verdict.invalid_points
    assert point.point.id == "03-rnd4k-q32t1-read"
    assert point.status == "invalid"
    assert why in point.reason
    assert why in verdict.tests[0].reason
    res = cli("report", run_dir)
    assert res.code == ExitCode.NEGATIVE, res.err


IMPLAUSIBLE = [
    (_set("iops", float("nan")), "read.iops = nan"),
    (_set("bw_bytes", float("inf")), "read.bw_bytes = inf"),
    (_set("total_ios", -5), "read.total_ios = -5"),
    (lambda p: p.update(measurement=None), "its stored measurement is missing"),
]


@pytest.mark.parametrize(("change", "why"), IMPLAUSIBLE)
def test_every_renderer_shows_an_implausible_point_invalid_with_the_reason(cli: CliRunner, run_dir: Path,
                                                                           change: Any, why: str) -> None:
    """The point stored ok is invalid with its reason wherever a point's status is shown: the HTML points table
    (badge and reason row) and verdict summary, the CSV and JSON exports, JUnit."""
    import csv
    import html
    import io

    _tamper(run_dir, change)
    junit = run_dir.parent / "junit.xml"
    assert cli("report", run_dir, "--junit", junit).code == ExitCode.NEGATIVE
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    body = page.split('<tbody class="point" id="pt-03-rnd4k-q32t1-read">', 1)[1].split("</tbody>", 1)[0]
    assert '<span class="badge st-invalid">invalid</span>' in body
    assert html.escape(why) in body  # its reason row (a point without a measurement: its reason cell)
    summary = page.split("Invalid points (never counted): ", 1)[1].split("</p>", 1)[0]
    assert "RND4K Q32T1 Read</a> (" in summary
    assert html.escape(why) in summary
    rows = {r["point"]: r for r in csv.DictReader(io.StringIO(cli("export", run_dir).out))}
    assert rows["03-rnd4k-q32t1-read"]["status"] == "invalid"
    assert why in rows["03-rnd4k-q32t1-read"]["reason"]
    assert {r["status"] for k, r in rows.items() if k != "03-rnd4k-q32t1-read"} == {"ok"}
    points = json.loads(cli("export", run_dir, "--format", "json").out)["points"]
    (point,) = [p for p in points if p["point"]["id"] == "03-rnd4k-q32t1-read"]
    assert point["status"] == "invalid"
    assert why in point["reason"]
    case = junit.read_text(encoding="utf-8").split('name="03-rnd4k-q32t1-read"', 1)[1].split("</testcase>", 1)[0]
    assert '<failure message="invalid: ' in case
    assert html.escape(why, quote=True) in case


def test_stored_text_of_raw_bytes_renders_escaped(cli: CliRunner, run_dir: Path) -> None:
    """A run.json whose text holds lone surrogates (JSON escapes of bytes that were not UTF-8) renders: the report
    page and the export show it escaped, never as a raw byte."""
    path = run_dir / "run.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["target"]["name"] = "dev\udc9b31m"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    res = cli("report", run_dir)
    assert res.code == 0, res.err
    assert "dev\\udc9b31m" in (run_dir / "report.html").read_text(encoding="utf-8")
    res = cli("export", run_dir)
    assert res.code == 0, res.err
    assert "dev\\udc9b31m" in res.out
    assert not any(0xD800 <= ord(c) < 0xE000 or 0x80 <= ord(c) < 0xA0 for c in res.out)
