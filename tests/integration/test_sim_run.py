"""Suites on the simulated SSD through the CLI: quick run, report, resume with the saved drive state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ssdlab.errors import ExitCode
from ssdlab.results.model import TestPoint
from ssdlab.sim.executor import SimExecutor

pytestmark = pytest.mark.integration

SPEC = "sim:tlc-4k?capacity=256MiB"


def load(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return data


def iops_by_point(run: dict[str, Any]) -> dict[str, dict[str, float]]:
    return {p["point"]["id"]: {d: v["iops"] for d, v in p["measurement"]["directions"].items()}
            for p in run["points"] if p["status"] == "ok" and p.get("measurement")}


def test_quick_on_sim_writes_report(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "q"
    res = cli("run", "quick", "--target", SPEC, "--runtime", "0.2", "--out", out, "-q")
    assert res.code == 0, res.err
    run = load(out)
    assert run["status"] == "complete"
    assert run["target"]["kind"] == "sim"
    assert run["host"]["engine"] == "sim"
    assert len(iops_by_point(run)) == 8
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "model" in html
    assert (out / "points" / "07-rnd4k-q32t1-write" / "sim.json").exists()
    assert (out / "sim-state.bin").exists()


def test_resume_continues_with_the_saved_drive_state(cli: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    full = tmp_path / "full"
    assert cli("run", "quick", "--target", SPEC, "--runtime", "0.2", "--out", full, "-q").code == 0
    part = tmp_path / "part"
    original = SimExecutor.run_point

    def interrupt_at_06(self: SimExecutor, point: TestPoint, *args: Any, **kw: Any) -> Any:
        if point.id.startswith("06"):
            raise KeyboardInterrupt
        return original(self, point, *args, **kw)

    monkeypatch.setattr(SimExecutor, "run_point", interrupt_at_06)
    res = cli("run", "quick", "--target", SPEC, "--runtime", "0.2", "--out", part, "-q")
    assert res.code == ExitCode.INTERRUPTED
    assert len(iops_by_point(load(part))) == 5
    monkeypatch.setattr(SimExecutor, "run_point", original)
    res = cli("resume", part, "-q")
    assert res.code == 0, res.err
    resumed = load(part)
    assert resumed["status"] == "complete"
    # the resumed points ran on the drive state saved after point 05: same results as the uninterrupted run
    assert iops_by_point(resumed) == iops_by_point(load(full))
    sim = json.loads((part / "points" / "06-seq1m-q1t1-write" / "sim.json").read_text(encoding="utf-8"))
    assert any("reloaded" in n for n in sim["notes"])
    # the drive was laid out once, by the first run; the resume reloads its saved state and says so
    prepared = [str(e.get("text", "")) for e in resumed["events"] if e.get("kind") == "prepare"]
    assert sum("simulated drive laid out" in t for t in prepared) == 1, prepared
    assert any("not laid out again" in t and "sim-state.bin" in t for t in prepared), prepared


def test_sim_presets_and_bad_target(cli: Any) -> None:
    res = cli("sim", "presets")
    assert res.code == 0
    assert "qlc-64k" in res.out
    res = cli("info", "sim:qlc-64k?bogus=1", traceback=False)
    assert res.code == ExitCode.USAGE
    assert len(res.err_lines) == 1
    assert "valid keys" in res.err


def test_sim_validate_analytic_lines_pass(cli: Any) -> None:
    res = cli("sim", "validate", "--lines-only", "-q")
    assert res.code == 0, res.out
    assert "FAIL" not in res.out
    assert "Little's law" in res.out
    assert "analytic lines:" in res.out
    assert "evidence rows" not in res.out
    assert max(len(line) for line in res.out.splitlines()) <= 110


def test_sim_validate_exits_with_its_verdict_and_shows_progress(cli: Any) -> None:
    # one cheap preset's figures: whatever the model's state, the exit code is the evidence's verdict
    res = cli("sim", "validate", "--preset", "p5316", "--no-shapes", "--json")
    (preset,) = json.loads(res.out)["presets"]
    failed = [f["name"] for f in preset["figures"] if f["role"] == "evidence" and not f["ok"]]
    assert preset["evidence_failed"] == len(failed)
    assert res.code == (1 if failed else 0)
    assert all(f["ok"] and f["params"] for f in preset["figures"] if f["role"] == "input")
    assert all(f["procedure"]["duration"] for f in preset["figures"] if f["role"] == "evidence")
    assert "p5316: 64K random write" in res.err  # progress on stderr, before the results
    text = cli("sim", "validate", "--preset", "p5316", "--no-shapes", "-q")
    assert text.code == res.code
    assert max(len(line) for line in text.out.splitlines()) <= 110
    assert f"evidence rows: {preset['evidence_rows'] - len(failed)}/{preset['evidence_rows']} pass" in text.out


def test_sim_validate_in_worker_processes_measures_the_same(cli: Any) -> None:
    import subprocess
    import sys

    argv = ["sim", "validate", "--preset", "p5316", "--preset", "tlc-4k", "--no-shapes", "--json"]
    one = cli(*argv)
    two = subprocess.run([sys.executable, "-m", "ssdlab", *argv, "--jobs", "2"], capture_output=True, text=True,
                         timeout=600, check=False)
    assert two.returncode == one.code
    a, b = json.loads(one.out)["presets"], json.loads(two.stdout)["presets"]
    assert [p["preset"] for p in b] == ["p5316", "tlc-4k"]  # the order asked, whichever worker finished first
    assert a == b
    assert "p5316: 64K random write" in two.stderr  # the workers' progress
