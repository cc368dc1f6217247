"""`ssdlab compare` end to end on stored fixture runs: the report, the CSV, errors, and what the user sees."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from conftest import run_cli
from stored_runs import SCHEMA1, copy_run


def test_compare_pts_runs_writes_a_self_contained_report(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    res = run_cli("compare", SCHEMA1 / "pts-iops-op7", SCHEMA1 / "pts-iops-op28", "--labels", "op7,op28",
                  "--out", out)
    assert res.code == 0, res.err
    assert Path(res.out.strip()) == (out / "compare.html").resolve()
    assert "compared 2 runs against op7: 9 common point(s)" in res.err
    assert re.search(r"op28: iops ×\d\.\d{3}", res.err)
    page = (out / "compare.html").read_text(encoding="utf-8")
    assert "<script" not in page
    assert not re.findall(r"(?:href|src)=['\"]https?:", page)  # nothing loaded from elsewhere
    assert "ssdlab compare: op7 vs op28" in page
    # what differs between the runs is highlighted, not refused
    for fact in ("model", "over-provisioning", "device"):
        assert f"<tr class=\"differs\"><td>{fact} ≠</td>" in page
    assert "<tr><td>capacity</td>" in page  # the same capacity: not highlighted
    assert "Welch" in page
    assert "cannot judge" in page
    for title in ("IOPS vs block size, R/W 0/100", "Convergence: IOPS RND 4 KiB 0/100 per round",
                  "op28 ÷ op7: IOPS, by block size and R/W mix"):
        assert title in page
    rows = list(csv.DictReader(io.StringIO((out / "compare.csv").read_text(encoding="utf-8"))))
    key = [r for r in rows if r["key"] == "iops/rnd4k-0-100" and r["metric"] == "iops"]
    assert [r["run"] for r in key] == ["op7", "op28"]
    assert key[0]["ratio"] == ""
    assert float(key[1]["ratio"]) > 3
    assert key[1]["significance"] == "significant"
    assert key[1]["samples"] == "5"
    assert {r["significance"] for r in rows} <= {"", "significant", "not significant", "cannot judge"}


def test_compare_quick_with_pts_lists_every_point(tmp_path: Path) -> None:
    res = run_cli("compare", SCHEMA1 / "quick-file", SCHEMA1 / "pts-iops-op7", "--out", tmp_path / "c")
    assert res.code == 0, res.err
    assert "0 common point(s), 17 not in every run" in res.err
    page = (tmp_path / "c" / "compare.html").read_text(encoding="utf-8")
    assert "Points not in every run" in page
    assert "SEQ1M Q8T1 Read" in page
    assert "IOPS RND 4 KiB 0/100" in page
    assert "Different suites" in page


def test_default_labels_and_output_directory(tmp_path: Path, monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.chdir(work)  # compare used to write its folder here, into whatever directory it was run from
    a = copy_run("series-sim", tmp_path / "results" / "a", run_id="series-sim")
    b = copy_run("series-sim", tmp_path / "results" / "b", run_id="faster", scale=1.1)
    (b / "tags.json").write_text(json.dumps({"label": "fw-2"}), encoding="utf-8")
    res = run_cli("compare", a, b)
    assert res.code == 0, res.err
    out = tmp_path / "results" / "compare-series-sim-vs-fw-2"  # beside the baseline, with the runs
    assert (out / "compare.html").is_file()
    assert res.out.strip() == str((out / "compare.html").resolve())
    assert list(work.iterdir()) == []


def test_compare_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "new-schema"
    bad.mkdir()
    (bad / "run.json").write_text(json.dumps({"schema_version": 42}), encoding="utf-8")
    cases = [
        ([SCHEMA1 / "series-sim"], 2, "at least two runs"),
        ([SCHEMA1 / "series-sim", SCHEMA1 / "quick-file", "--labels", "a"], 2, "--labels gives 1 name(s) for 2"),
        ([SCHEMA1 / "series-sim", SCHEMA1 / "quick-file", "--fail-on", "speed:-5%"], 2, "unknown metric"),
        ([SCHEMA1 / "series-sim", bad], 8, "results schema 42 is not supported"),
        ([SCHEMA1 / "series-sim", tmp_path / "absent"], 2, "no such run directory"),
        ([SCHEMA1 / "series-sim", SCHEMA1 / "series-sim", "--min-effect", "150%"], 2, "between 0% and 100%"),
    ]
    for args, code, msg in cases:
        res = run_cli("compare", *args, "--out", tmp_path / "o", traceback=False)
        assert res.code == code, (args, res.err)
        assert msg in res.err, res.err
        assert len(res.err.strip().splitlines()) == 1, res.err
