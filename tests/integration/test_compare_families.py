"""compare.html for each family of points (PTS LAT, WSAT and DIRTH, QD sweeps, latency curves), on tiny simulator runs
compared with a copy whose throughput is 10 % lower: every family's table and overlay charts render, and the
known ratio shows."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from conftest import run_cli
from stored_runs import copy_run

pytestmark = pytest.mark.integration

TARGET = "sim:tlc-4k?capacity=64MiB"
CASES = {
    "pts-lat": (["--max-rounds", "5"], "SNIA PTS Latency", "mean latency vs block size"),
    "pts-wsat": (["--wsat-fills", "1.5"], "SNIA PTS WSAT", "WSAT: IOPS vs TGBW"),
    "sweep-qd": (["--axis", "iodepth=1,4", "--axis", "numjobs=1,2", "--matrices", "rnd-read"],
                 "IOPS and latency vs outstanding I/O", "rnd-read: IOPS vs outstanding I/O"),
    "lat-curve": (["--axis", "iodepth=1,4", "--axis", "numjobs=1", "--axis", "bs=4k", "--axis", "rwmixread=70"],
                  "Latency vs IOPS", "mean latency vs IOPS"),
    "pts-dirth": (["--max-rounds", "5", "--di-tc", "2,1", "--di-qd", "2,1", "--di-pc", "1", "--di-hist-minutes", "1",
                   "--di-hist-prewrite-minutes", "1"], "SNIA PTS response-time histogram captures",
                  "Demand intensity: mean response time vs IOPS"),
}


@pytest.mark.parametrize("suite", list(CASES))
def test_compare_family(suite: str, tmp_path: Path) -> None:
    args, section, chart = CASES[suite]
    base = tmp_path / "base"
    res = run_cli("run", suite, "--target", TARGET, "--runtime", "0.1", *args, "--out", base, "--quiet",
                  "--no-report")
    assert res.code in (0, 1), res.err  # 1: a tiny PTS run need not reach steady state
    results = tmp_path / "runs"
    results.mkdir()
    slower = copy_run("base", results / "slower", scale=0.9, source=tmp_path)
    res = run_cli("compare", base, slower, "--labels", "base,slower", "--out", tmp_path / "cmp")
    assert res.code == 0, res.err
    page = (tmp_path / "cmp" / "compare.html").read_text(encoding="utf-8")
    assert section in page
    assert chart in page
    assert "<svg" in page
    assert "class='chart-legend'" in page  # legends in HTML (charts.legend_html), not drawn into the SVG
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))  # every chart's SVG element ids are unique in the page
    rows = list(csv.DictReader(io.StringIO((tmp_path / "cmp" / "compare.csv").read_text(encoding="utf-8"))))
    ratios = [float(r["ratio"]) for r in rows if r["metric"] == "iops" and r["ratio"]]
    assert ratios
    assert all(r == pytest.approx(0.9) for r in ratios)
