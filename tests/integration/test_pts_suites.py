"""Every PTS suite end to end on a small file with real fio, scaled (sub-second points, 5 rounds)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ssdlab.analysis import steady
from ssdlab.results.store import load_run
from ssdlab.results.verdict import run_verdicts
from ssdlab.suites.pts import common, family

pytestmark = pytest.mark.integration

CliRunner = Callable[..., Any]  # the `cli` fixture of tests/conftest.py
SCALED = ("--runtime", "0.3", "--max-rounds", "5", "--tq", "2x8", "-q")


def _run(cli: CliRunner, tmp_path: Path, suite: str, *extra: str, size: str = "32MiB", report: bool = False
         ) -> tuple[Any, Path]:
    out = tmp_path / "run"
    args = ["run", suite, "--target", f"file:{tmp_path / 'dut.dat'}?size={size}", "--out", str(out), *SCALED,
            *extra]
    if not report:
        args.append("--no-report")
    r = cli(*args)
    # steady state on a real file depends on the host, the exit code must not: it is the stored verdict's
    assert r.code in (0, 1), r.err
    assert r.code == run_verdicts(load_run(out)).exit_code
    return r, out


def _tracking_values(run_dir: Path, test: str, key: str, metric: str) -> list[float]:
    run = load_run(run_dir)
    rt = next(t for ft in family.tests_for(run) for t in ft.round_tests if t.name == test)
    vals = common.per_round(rt, run, key, metric, 99)
    return [v for v in vals if v is not None]


def test_pts_iops_scaled_run_and_report(cli: CliRunner, tmp_path: Path) -> None:
    r, out = _run(cli, tmp_path, "pts-iops", "--pts-block-sizes", "1024,64,4", "--pts-mixes",
                   "100/0,65/35,0/100", report=True)
    run = load_run(out)
    assert run.status == "complete"
    assert [p.point.phase for p in run.points[:2]] == ["purge", "precondition"]
    assert len(run.points) == 2 + 5 * 9  # steady or not, --max-rounds 5 ends the test at round 5
    ev = next(e for e in run.events if e.get("kind") == "pts-steady-state")
    assert ev["window"] == [1, 2, 3, 4, 5]
    # the recorded verdict is what ss-check says about the stored per-round values
    verdicts = []
    for name, key in (("IOPS RND 4 KiB 0/100", "rnd4k-0-100"), ("IOPS RND 64 KiB 65/35", "rnd64k-65-35"),
                      ("IOPS RND 1024 KiB 100/0", "rnd1m-100-0")):
        values = _tracking_values(out, "iops", key, "iops")
        assert len(values) == 5
        code = cli("ss-check", *[repr(v) for v in values]).code
        assert (code == 0) is ev["determinations"][name]["steady"] is steady.check_last(values).steady
        verdicts.append(code == 0)
    assert ev["steady"] is all(verdicts)
    assert (r.code == 0) is ev["steady"]  # SS NOT ACHIEVED exits 1
    assert any("NOT SNIA PTS compliant" in w for w in run.warnings)
    html = (out / "report.html").read_text()
    for title in ("PTS IOPS: set-up", "PTS IOPS: steady-state convergence", "PTS IOPS: steady-state measurement "
                  "window", "PTS IOPS: results", "Allowed maximum slope excursion", "110% x average"):
        assert title in html, title
    assert "purge punch" in html
    assert "write cache" in html.lower()
    assert (out / "pts" / "iops.csv").read_text().count("\n") == 10
    job = (out / "points" / "iops-r01-rnd4k-0-100" / "job.fio").read_text()
    assert re.search(r"^rw=randwrite$", job, re.M)
    assert re.search(r"^numjobs=2$", job, re.M)
    assert re.search(r"^iodepth=8$", job, re.M)
    assert re.search(r"^direct=1$", job, re.M)


def test_pts_tp_scaled(cli: CliRunner, tmp_path: Path) -> None:
    _r, out = _run(cli, tmp_path, "pts-tp", "--purge", "recreate")
    run = load_run(out)
    assert run.status == "complete"
    ids = [p.point.id for p in run.points]
    assert ids[:2] == ["tp128-0-purge", "tp128-0-wipc"]
    assert "tp1024-0-purge" in ids
    assert len(ids) == 2 * (2 + 5 * 2)
    assert run.result("tp1024-0-purge").reason.startswith("purge recreate:")  # type: ignore[union-attr]
    wipc = (out / "points" / "tp1024-0-wipc" / "job.fio").read_text()
    assert "bs=1048576" in wipc
    assert "io_size=67108864" in wipc
    assert "rw=write" in wipc
    read = (out / "points" / "tp128-r03-seq128k-100-0" / "job.fio").read_text()
    assert re.search(r"^rw=read$", read, re.M)
    assert re.search(r"^iodepth=16$", read, re.M)
    assert len(_tracking_values(out, "tp128", "seq128k-0-100", "mbps")) == 5


def test_pts_lat_scaled(cli: CliRunner, tmp_path: Path) -> None:
    _r, out = _run(cli, tmp_path, "pts-lat", "--spec", "C", "--lat-hist-minutes", "2")
    run = load_run(out)
    assert run.status == "complete"
    assert len(run.points) == 2 + 5 * 9 + 2  # purge, WIPC, 5 rounds, then the two histogram captures
    captures = run.points[-2:]
    assert [p.point.id for p in captures] == ["lat-h-rnd4k-0-100", "lat-h-rnd4k-100-0"]
    for p in captures:  # 2 spec minutes of 0.3 s, with the bins the histograms are drawn from
        assert p.point.workload.runtime_s == pytest.approx(0.6)
        assert p.measurement is not None
        assert all(d.clat is not None and d.clat.bins for d in p.measurement.directions.values())
    assert any("LAT histogram captures last 2 spec minutes instead of 20" in w for w in run.warnings)
    job = (out / "points" / "lat-r02-rnd512-65-35" / "job.fio").read_text()
    assert re.search(r"^iodepth=1$", job, re.M)
    assert re.search(r"^numjobs=1$", job, re.M)
    assert "rwmixread=65" in job
    assert "bs=512" in job
    assert "size=25165824" in job  # PTS-C: 75 % active range of 32 MiB
    pr = run.result("lat-r05-rnd4k-0-100")
    assert pr is not None
    art, mrt, nines = common.art_us(pr), common.mrt_us(pr), common.nines_us(pr)
    assert art is not None
    assert mrt is not None
    assert nines is not None
    assert 0 < art <= nines <= mrt * 1.05  # histogram buckets may round the top value up a little
    assert run.result("lat-0-purge").point.tags["write_cache"] == "enabled"  # type: ignore[union-attr]


def test_pts_wsat_scaled(cli: CliRunner, tmp_path: Path) -> None:
    _r, out = _run(cli, tmp_path, "pts-wsat", "--wsat-fills", "2", "--wsat-hist-minutes", "2", report=True)
    run = load_run(out)
    assert run.status == "complete"
    assert run.points[0].point.phase == "purge"
    # the samples, then the histogram capture: 2 spec minutes of 0.3 s, with fio's histogram bins
    capture = run.points[-1]
    assert capture.point.id == "wsat-hist"
    assert capture.point.workload.runtime_s == pytest.approx(0.6)
    assert capture.measurement is not None
    assert capture.measurement.get("write").clat.bins  # type: ignore[union-attr]
    assert any("WSAT histogram capture lasts 2 spec minutes instead of 20" in w for w in run.warnings)
    samples = [p for p in run.points[:-1] if p.point.phase == "measure"]
    written = sum(p.measurement.get("write").io_bytes for p in samples)  # type: ignore[union-attr]
    assert written >= 2 * 32 * 1024**2
    before_last = written - samples[-1].measurement.get("write").io_bytes  # type: ignore[union-attr]
    assert before_last < 2 * 32 * 1024**2  # stopped at the first sample that crossed 2 fills
    html = (out / "report.html").read_text()
    assert "IOPS vs total GB written" in html
    assert "IOPS vs time" in html
    assert "WSAT: ART, 5 nines and MRT vs TGBW" in html
    assert "WSAT: ART, 5 nines and MRT vs drive fills" in html
    assert "WSAT capture RND 4 KiB 0/100" in html  # the histogram, CDF and exceedance
    summary = json.loads((out / "pts" / "summary.json").read_text())["tests"]["wsat"]
    assert summary["finished"] is True
    assert summary["histogram_capture"]["n"] == sum(d.total_ios for d in capture.measurement.directions.values())
    assert summary["histogram_capture"]["levels_us"]


def test_unknown_purge_method_is_one_line(cli: CliRunner, tmp_path: Path) -> None:
    r = cli("run", "pts-lat", "--target", f"file:{tmp_path / 'dut.dat'}?size=16MiB", "--out",
            str(tmp_path / "run"), "--runtime", "0.3", "--purge", "nvme-format", "-q", "--no-report", traceback=False)
    assert r.code == 2
    assert r.err_lines[-1] == ("ssdlab: error: --purge nvme-format: not available for "
                               f"{(tmp_path / 'dut.dat').resolve()}; available: punch, recreate, rewrite")
