"""JUnit XML from comparisons (with the gate) and from single runs, validated against the Jenkins JUnit XSD."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import xmlschema

from conftest import run_cli
from stored_runs import SCHEMA1, copy_run

XSD = Path(__file__).parents[1] / "data" / "junit" / "junit-10.xsd"


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(XSD))


def _cases(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()  # noqa: S314 - our own output
    return {f"{tc.get('classname')}::{tc.get('name')}": tc for tc in root.iter("testcase")}


def test_compare_junit_is_valid_and_shows_each_point(tmp_path: Path, schema: xmlschema.XMLSchema) -> None:
    slower = copy_run("series-sim", tmp_path / "slow", scale=0.9, drop={"001-rand-randread-q1"})
    junit = tmp_path / "junit.xml"
    res = run_cli("compare", SCHEMA1 / "series-sim", slower, "--labels", "base,new", "--out", tmp_path / "cmp",
                  "--fail-on", "iops:-5%:*randwrite*", "--junit", junit)
    assert res.code == 1, res.err
    schema.validate(str(junit))
    root = ET.parse(junit).getroot()  # noqa: S314 - our own output
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "2", "0")
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("name") == "new vs base"
    assert suite.get("skipped") == "1"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["fail_on"] == "iops:-5%:*randwrite*"
    assert props["baseline"] == "base"
    cases = _cases(junit)
    failed = cases["ssdlab.compare.matrix::004-rand-randwrite-q8"].find("failure")
    assert failed is not None
    assert "iops -10.0% vs base" in (failed.get("message") or "")
    assert cases["ssdlab.compare.matrix::001-rand-randread-q1"].find("skipped") is not None
    passed = cases["ssdlab.compare.matrix::002-rand-randread-q8"]
    assert passed.find("failure") is None
    assert passed.find("skipped") is None
    assert "iops: -10.0%" in (passed.findtext("system-out") or "")


def test_report_junit_of_a_single_run(tmp_path: Path, schema: xmlschema.XMLSchema) -> None:
    """Each point a test case; a failed point an error; the PTS steady-state verdict a failure when not steady;
    an invalid point a failure."""
    run_dir = copy_run("pts-iops-op7", tmp_path / "run")
    doc = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    doc["points"][5]["status"] = "failed"
    doc["points"][5]["reason"] = "fio exited 1"
    doc["points"][6]["status"] = "invalid"
    doc["points"][6]["reason"] = "completed 3 I/Os"
    (run_dir / "run.json").write_text(json.dumps(doc), encoding="utf-8")
    junit = tmp_path / "run.xml"
    res = run_cli("report", run_dir, "--junit", junit)
    assert res.code == 1, res.err  # the run's verdict: not steady
    schema.validate(str(junit))
    cases = _cases(junit)
    measured = [c for c in cases.values() if c.get("classname") == "ssdlab.pts-iops.iops"]
    assert len(measured) == 45  # 9 stimuli x 5 rounds
    failed_id = doc["points"][5]["point"]["id"]
    err = cases[f"ssdlab.pts-iops.iops::{failed_id}"].find("error")
    assert err is not None
    assert err.get("message") == "failed: fio exited 1"
    bad = cases[f"ssdlab.pts-iops.iops::{doc['points'][6]['point']['id']}"].find("failure")
    assert bad is not None
    assert bad.get("message") == "invalid: completed 3 I/Os"
    # the verdicts (verdict.py) of this schema-1 run: IOPS not steady, and incomplete for the failed point
    verdict = cases["ssdlab.pts-iops.verdict::IOPS"].find("failure")
    assert verdict is not None
    assert "IOPS: not steady (SS NOT ACHIEVED" in (verdict.get("message") or "")


def test_junit_directory_must_exist(tmp_path: Path) -> None:
    res = run_cli("report", SCHEMA1 / "series-sim", "--junit", tmp_path / "no" / "x.xml", traceback=False)
    assert res.code == 2
    assert "does not exist" in res.err
