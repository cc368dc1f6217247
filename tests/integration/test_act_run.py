"""A short real ACT run at 1x on a small file: prep, two slices, a verdict, the exit code, the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdlab.suites.act import S_LB_READS, S_LB_WRITES, S_READS

pytestmark = pytest.mark.integration


def test_act_1x_on_a_file_completes_with_a_verdict(cli, small_file_target, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    res = cli("run", "act", "--load", "1x", "--target", small_file_target.spec, "--duration", "4",
              "--slice", "2", "--out", str(out), "--quiet")
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "complete"
    verdict = [e for e in run["events"] if e.get("kind") == "verdict"]
    assert len(verdict) == 1
    assert res.code == (0 if verdict[0]["passed"] else 1), res.err
    ids = [p["point"]["id"] for p in run["points"]]
    assert ids[:2] == ["act-prep-zero", "act-prep-salt"]
    slices = [p for p in run["points"] if p["point"]["phase"] == "measure"]
    if "keep up" in verdict[0]["text"]:  # a busy host: ACT stops at the first lagging slice and fails
        assert not verdict[0]["passed"]
        assert res.code == 1
        assert len(slices) == 1
        return
    assert len(slices) == 2
    streams = slices[0]["measurement"]["extra"]["streams"]
    assert set(streams) == {f"{S_READS}-d0", f"{S_LB_READS}-d0", f"{S_LB_WRITES}-d0"}
    reads = streams[f"{S_READS}-d0"]["directions"]["read"]
    assert reads["total_ios"] >= 0.9 * 2000 * 2  # paced at 2000/s for 2 s
    assert reads["total_ios"] <= 1.1 * 2000 * 2
    writes = streams[f"{S_LB_WRITES}-d0"]["directions"]["write"]
    assert 30 <= writes["total_ios"] <= 60  # 23.53/s for 2 s
    logs = slices[0]["measurement"]["extra"]["hist_logs"]
    assert any(name.startswith(f"hist_{S_READS}-d0_clat_hist.") for name in logs)
    report = Path(res.out.strip().splitlines()[-1])
    text = report.read_text()
    assert "ACT certification" in text
    assert "&ge;64 ms %" in text
