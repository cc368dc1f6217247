"""A short real ACT run at 1x on a small file: prep, two slices, a verdict, the exit code, the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdlab.suites.act import S_LB_READS, S_LB_WRITES, S_SERVICE

pytestmark = pytest.mark.integration


def test_act_1x_on_a_file_completes_with_a_verdict(cli, small_file_target, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    res = cli("run", "act", "--load", "1x", "--target", small_file_target.spec, "--duration", "4",
              "--slice", "2", "--service-threads", "4", "--out", str(out), "--quiet")
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "complete"
    verdict = [e for e in run["events"] if e.get("kind") == "verdict"]
    assert len(verdict) == 1
    assert res.code == (0 if verdict[0]["passed"] else 1), res.err
    ids = [p["point"]["id"] for p in run["points"]]
    assert ids[:2] == ["act-prep-zero", "act-prep-salt"]
    slices = [p for p in run["points"] if p["point"]["phase"] == "measure"]
    assert len(slices) == 2
    streams = slices[0]["measurement"]["extra"]["streams"]
    assert set(streams) == {S_SERVICE, f"{S_LB_READS}-d0", f"{S_LB_WRITES}-d0"}
    reads = streams[S_SERVICE]["directions"]["read"]
    assert 0 < reads["total_ios"] <= 1.1 * 2000 * 2  # paced at 2000/s for 2 s (fewer on a slow host)
    writes = streams[f"{S_LB_WRITES}-d0"]["directions"]["write"]
    assert 0 < writes["total_ios"] <= 60  # 23.53/s for 2 s
    logs = slices[0]["measurement"]["extra"]["hist_logs"]
    assert sum(name.startswith(f"hist_{S_SERVICE}_clat_hist.") for name in logs) == 4  # one per service thread
    # the executor read every paced job's lag from its log (a job cannot lag more than the 2-s slice has run)
    pacing = slices[0]["measurement"]["extra"]["pacing"]
    assert pacing[S_SERVICE]["jobs"] == 4
    assert pacing[S_SERVICE]["ops_per_s_per_job"] == 500
    assert pacing[S_SERVICE]["logs"] == 4
    assert -1.0 < pacing[S_SERVICE]["max_lag_s"] < 3.0
    assert pacing[f"{S_LB_WRITES}-d0"]["ops_per_s_per_job"] == pytest.approx(1000 / 85 * 2, rel=1e-4)
    report = Path(res.out.strip().splitlines()[-1])
    text = report.read_text()
    assert "ACT certification" in text
    assert "&ge;64 ms %" in text
    assert "Worst lag behind ACT's schedule" in text
