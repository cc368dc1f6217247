"""Runs written by every results schema version keep working: they load, report, export and compare; a run of
an unknown version fails with one line naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from ssdlab.errors import ExitCode
from ssdlab.results.model import SCHEMA_VERSION
from ssdlab.results.store import load_run
from ssdlab.results.verdict import run_verdicts
from stored_runs import RUNS_DIR, fixture_dirs

FIXTURES = fixture_dirs()


def test_there_are_fixtures_of_every_schema_version() -> None:
    versions = {int(p.parent.name.removeprefix("schema")) for p in FIXTURES}
    assert versions == set(range(1, SCHEMA_VERSION + 1)), f"add tests/data/runs/schema{SCHEMA_VERSION}/ runs"


@pytest.mark.parametrize("src", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_old_run_loads_reports_and_exports(src: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / src.name
    shutil.copytree(src, run_dir)
    run = load_run(run_dir)
    assert run.schema_version == int(src.parent.name.removeprefix("schema"))
    assert run.points
    assert any(p.measurement is not None for p in run.points)
    # the verdict recorded then is the verdict read now (PTS runs of schema 1 recorded only their steady state)
    steady = [e["steady"] for e in run.events if e.get("kind") == "pts-steady-state"]
    if steady:
        assert run_verdicts(run).kind == ("steady" if all(steady) else "not-steady")
    res = run_cli("report", run_dir)
    assert res.code == run_verdicts(run).exit_code, res.err
    assert run.run_id in (run_dir / "report.html").read_text(encoding="utf-8")
    res = run_cli("export", run_dir)
    assert res.code == 0, res.err
    assert len(res.out.splitlines()) == len(run.points) + 1
    res = run_cli("compare", run_dir, src, "--out", tmp_path / "cmp", "-q")
    assert res.code == 0, res.err


@pytest.mark.parametrize("args", [["report", "{run}"], ["export", "{run}"], ["compare", "{other}", "{run}"],
                                  ["tag", "{run}", "x=y"], ["plot", "{run}", "--x", "bs", "--y", "iops"]])
def test_unknown_schema_fails_with_one_line_naming_it(args: list[str], tmp_path: Path) -> None:
    run_dir = tmp_path / "future"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1, "points": []}),
                                      encoding="utf-8")
    other = RUNS_DIR / "schema1" / "series-sim"
    res = run_cli(*(a.format(run=run_dir, other=other) for a in args), traceback=False)
    assert res.code == ExitCode.STORED
    assert len(res.err.strip().splitlines()) == 1
    assert f"results schema {SCHEMA_VERSION + 1} is not supported" in res.err


def test_runs_of_every_schema_export_into_one_csv(tmp_path: Path) -> None:
    """export RUN RUN ...: one header, each run's rows with its run id (a schema-2 run's logged points too)."""
    runs = [RUNS_DIR / "schema1" / "series-sim", RUNS_DIR / "schema2" / "quick-file",
            RUNS_DIR / "schema2" / "series-sim-killed"]
    res = run_cli("export", *runs)
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    header = lines[0].split(",")
    assert header.count("run_id") == 1
    col = header.index("run_id")
    counts: dict[str, int] = {}
    for line in lines[1:]:
        run_id = line.split(",")[col]
        counts[run_id] = counts.get(run_id, 0) + 1
    assert counts == {load_run(r).run_id: len(load_run(r).points) for r in runs}
    assert counts[load_run(runs[2]).run_id] == 2  # the killed run's two points are in its log only
