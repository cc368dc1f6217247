"""The PTS report sections contain every element the SNIA report format asks for (synthetic runs)."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.unit.test_pts_rounds import ctx, flat, rising, simulate, suite

from ssdlab.report import pts as report_pts
from ssdlab.report.html import render_html
from ssdlab.results.model import Run
from ssdlab.suites.base import PlanContext


def _stored(run: Run, c: PlanContext) -> Run:
    """What cmd_run stores: options with the suite options, a target and host record."""
    return dataclasses.replace(
        run, options={"runtime_s": c.runtime_s, "suite_options": dict(c.options), "capacity": None},
        target={"name": "/tmp/x.dat", "kind": "file", "capacity_bytes": c.capacity, "logical_block_size": 512,
                "identity": {"model": "TestModel"}},
        host={"cpu_model": "CPU", "cpu_count": 2, "memory_bytes": 2**30, "os": "Linux", "kernel": "6",
              "engine": "fio", "engine_version": "fio-3.33"})


def _html(run: Run, tmp_path: Path) -> dict[str, str]:
    return {s.title: s.html for s in report_pts.build(run, tmp_path)}


def test_iops_report_has_every_snia_element(tmp_path: Path) -> None:
    c = ctx()
    run = _stored(simulate(suite("pts-iops"), c, flat), c)
    secs = _html(run, tmp_path)
    header = secs["PTS IOPS: set-up"]
    for field in ("Device under test", "TestModel", "Test platform", "Purge", "purge punch", "Write cache",
                  "WCD requested", "Active range", "100%", "PC1: WIPC", "2x active range", "PC2: WDPC",
                  "Threads x queue depth", "T4Q32", "Rounds in the window", "1-5", "Steady state",
                  "achieved at round 5", "Compliance", "SCALED, NOT spec-compliant", "1 s instead of 60 s",
                  "Data pattern"):
        assert field in header, field
    conv = secs["PTS IOPS: steady-state convergence"]
    assert conv.count("<svg") == 3  # one per tracking mix, every block size as a line
    window = secs["PTS IOPS: steady-state measurement window"]
    assert window.count("<svg") == 3
    for field in ("110% x average", "90% x average", "best fit", "average", "Allowed maximum data excursion",
                  "Measured maximum data excursion", "Allowed maximum slope excursion",
                  "Measured maximum slope excursion", "Least-squares linear fit", "·R + 10000"):
        assert field in window, field
    results = secs["PTS IOPS: results (averages over the measurement window)"]
    assert "0.5 KiB" in results
    assert "1024 KiB" in results
    assert "95/5 R/W" in results
    assert results.count("<svg") == 2  # the 2D plot and the 3D bar chart
    assert "10,000" in results
    rows = list(csv.DictReader((tmp_path / "pts" / "iops.csv").read_text().splitlines()))
    assert len(rows) == 56
    assert {float(r["window_average"]) for r in rows} == {10_000.0}
    summary = json.loads((tmp_path / "pts" / "summary.json").read_text())
    assert summary["tests"]["iops"]["steady"] is True
    assert len(summary["tests"]["iops"]["determinations"]) == 3


def test_ss_not_achieved_is_stated(tmp_path: Path) -> None:
    c = ctx(max_rounds=6, pts_block_sizes="1024,64,4", pts_mixes="100/0,65/35,0/100")
    run = _stored(simulate(suite("pts-iops"), c, rising), c)
    secs = _html(run, tmp_path)
    assert "SS NOT ACHIEVED" in secs["PTS IOPS: set-up"]
    assert "SS NOT ACHIEVED" in secs["PTS IOPS: steady-state measurement window"]
    assert "rounds 2-6" in secs["PTS IOPS: steady-state measurement window"]
    assert "matrix was reduced" in secs["PTS IOPS: set-up"]


def test_lat_tp_and_wsat_sections(tmp_path: Path) -> None:
    c = ctx()
    lat = _html(_stored(simulate(suite("pts-lat"), c, flat), c), tmp_path / "lat")
    res = lat["PTS Latency: results (averages over the measurement window)"]
    for field in ("ART (µs)", "5 nines (99.999 %) (µs)", "MRT (µs)", "I/Os per point behind the 5-nines"):
        assert field in res, field
    assert res.count("<svg") == 5  # 2D ART/MRT/5-nines and 3D ART/MRT
    assert "T1Q1" in lat["PTS Latency: set-up"]
    tp = _html(_stored(simulate(suite("pts-tp"), c, flat), c), tmp_path / "tp")
    assert "PTS Throughput 128 KiB: set-up" in tp
    assert "PTS Throughput 1024 KiB: set-up" in tp
    assert "SEQ 0/100 write MB/s" in tp["PTS Throughput 1024 KiB: results (averages over the measurement window)"]
    w = _html(_stored(simulate(suite("pts-wsat"), c, lambda p: 16_384.0), c), tmp_path / "wsat")
    body = w["PTS WSAT: results"]
    assert "IOPS vs time" in body
    assert "IOPS vs total GB written (TGBW)" in body
    assert "4.00 drive fills" in body
    assert "fresh-out-of-box" in w["PTS WSAT: set-up"]
    # ART, 5 nines and MRT against TGBW and against fills, as the spec's WSAT page
    assert "WSAT: ART, 5 nines and MRT vs TGBW" in body
    assert "WSAT: ART, 5 nines and MRT vs drive fills" in body
    assert body.count("<svg") == 5
    assert "fewer than the 100,000 a 99.999th percentile needs" in body  # 16,384 I/Os a sample
    assert "ART 61.0 µs, 5 nines (99.999 %) 183.1 µs, MRT 244.1 µs" in body
    rows = list(csv.DictReader((tmp_path / "wsat" / "pts" / "wsat.csv").read_text().splitlines()))
    assert len(rows) == 16
    assert all(float(r["art_us"]) <= float(r["nines_us"]) <= float(r["mrt_us"]) for r in rows)
    # then the histogram capture: 20 spec minutes of 1 s here, said to be scaled
    capture = w["PTS WSAT: response-time histogram"]
    assert "20 spec minutes = 20 s (scaled: one minute lasts 1 s)" in capture
    assert "scaled, not compliant" in capture
    summary = json.loads((tmp_path / "wsat" / "pts" / "summary.json").read_text())["tests"]["wsat"]
    assert summary["histogram_capture"]["id"] == "wsat-hist"
    assert summary["last_samples"]["nines_us"] == pytest.approx(float(rows[-1]["nines_us"]), rel=1e-4)


def test_interruptions_and_repeated_points_are_reported(tmp_path: Path) -> None:
    c = ctx(pts_block_sizes="1024,64,4", pts_mixes="100/0,65/35,0/100")
    run = _stored(simulate(suite("pts-iops"), c, flat), c)
    events: list[dict[str, Any]] = [
        {"time": "t1", "kind": "interrupted", "text": "interrupted by the user (Ctrl-C)", "points_done": 5},
        {"time": "t2", "kind": "resume", "previous_status": "interrupted", "points_done": 5,
         "repeated": ["iops-r01-rnd4k-100-0"], "resumed_at": "iops-r01-rnd4k-100-0"},
        {"time": "t3", "kind": "resume", "previous_status": "running", "points_done": 20, "repeated": [],
         "resumed_at": "iops-r02-rnd1m-0-100"},
    ]
    for e in events:
        run = run.with_event(e)
    secs = _html(run, tmp_path)
    rec = secs["PTS run record: interruptions and resumes"]
    assert "repeated: iops-r01-rnd4k-100-0" in rec
    assert "killed or crashed" in rec
    assert "nothing (no point was in progress)" in rec


def test_a_full_report_has_unique_element_ids(tmp_path: Path) -> None:
    """The whole report.html of a PTS run (dozens of inline SVG charts): no element id twice, every reference
    to one resolves."""
    c = ctx()
    run = _stored(simulate(suite("pts-iops"), c, flat), c)
    doc = render_html(run, tmp_path)
    assert doc.count("<svg") >= 8
    ids = re.findall(r'\bid="([^"]+)"', doc)
    assert len(ids) == len(set(ids))
    refs = set(re.findall(r"url\(#([^)]+)\)", doc)) | set(re.findall(r'href="#([^"]+)"', doc))
    assert refs
    assert refs <= set(ids)
