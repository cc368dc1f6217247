"""`ssdlab run quick` end to end against real fio: on a small file and on the null engine."""

from __future__ import annotations

import csv
import io
import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import CliResult, run_cli
from ssdlab.fio.parse import parse_measurement
from ssdlab.results.model import to_dict
from ssdlab.results.store import load_run

pytestmark = pytest.mark.integration

CSV_REQUIRED = ["point", "rw", "bs", "iodepth", "numjobs", "read_iops", "write_iops", "read_bw_MBps",
                "write_bw_MBps", "read_lat_mean_us", "read_p99_us", "read_p99_99_us", "write_lat_mean_us",
                "write_p99_us", "write_p99_99_us"]
QUICK_IDS = ["01-seq1m-q8t1-read", "02-seq1m-q1t1-read", "03-rnd4k-q32t1-read", "04-rnd4k-q1t1-read",
             "05-seq1m-q8t1-write", "06-seq1m-q1t1-write", "07-rnd4k-q32t1-write", "08-rnd4k-q1t1-write"]


@dataclass(frozen=True)
class QuickRun:
    """One finished `ssdlab run quick` and where it went."""

    result: CliResult
    out: Path
    target_path: Path | None


def _run_quick(out: Path, target: str) -> CliResult:
    return run_cli("run", "quick", "--target", target, "--runtime", "1", "--out", out)


@pytest.fixture(scope="module")
def null_run(tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    """quick on fio's null engine, 1 s per point."""
    out = tmp_path_factory.mktemp("null") / "results"
    return QuickRun(_run_quick(out, "null"), out, None)


@pytest.fixture(scope="module")
def file_run(tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    """quick on a 64 MiB file created by ssdlab, 1 s per point."""
    base = tmp_path_factory.mktemp("file")
    target = base / "target" / "quick.dat"
    target.parent.mkdir()
    out = base / "results"
    return QuickRun(_run_quick(out, f"file:{target}?size=64MiB"), out, target)


@pytest.fixture(params=["null", "file"])
def quick(request: pytest.FixtureRequest) -> QuickRun:
    """Each check runs on both runs."""
    value: QuickRun = request.getfixturevalue(f"{request.param}_run")
    return value


def test_run_succeeds_and_prints_the_report_path(quick: QuickRun) -> None:
    assert quick.result.code == 0, quick.result.err
    assert quick.result.out.strip().splitlines()[-1] == str(quick.out / "report.html")
    assert f"results: {quick.out}" in quick.result.err
    assert "run complete: 8 measured points" in quick.result.err


def test_run_json_holds_every_point(quick: QuickRun) -> None:
    run = load_run(quick.out)
    assert run.status == "complete"
    assert run.suite == "quick"
    assert [p.point.id for p in run.points] == QUICK_IDS
    assert all(p.status == "ok" for p in run.points)
    assert run.host["engine_version"] == "3.33"
    assert run.host["kernel"]
    assert run.host["cpu_count"] >= 1
    assert run.target["capacity_bytes"] == 64 * 1024**2 or quick.target_path is None
    for p in run.points:
        m = p.measurement
        assert m is not None
        direction = p.point.tags["direction"]
        assert list(m.directions) == [direction]
        d = m.directions[direction]
        assert d.iops > 0
        assert d.clat is not None
        assert d.clat.bins
        assert d.clat.percentiles_ns["99.99"] >= d.clat.percentiles_ns["50"] > 0 or quick.target_path is None
        assert m.engine_version == "fio-3.33"


def test_point_files_exist_and_match_run_json(quick: QuickRun) -> None:
    run = load_run(quick.out)
    for p in run.points:
        pdir = quick.out / "points" / p.point.id
        job = (pdir / "job.fio").read_text(encoding="utf-8")
        cmd = (pdir / "cmd.txt").read_text(encoding="utf-8")
        raw = (pdir / "fio.json").read_text(encoding="utf-8")
        assert f"[{p.point.id}]" in job
        assert str(pdir / "job.fio") in cmd
        assert "--output-format=json+" in cmd
        reparsed = parse_measurement(raw)
        assert p.measurement is not None
        assert to_dict(reparsed.directions) == to_dict(p.measurement.directions)
        if quick.target_path is not None:
            assert f"filename={quick.target_path}" in job.splitlines()
            assert "direct=1" in job.splitlines()
        else:
            assert "ioengine=null" in job.splitlines()


def test_file_target_is_laid_out_at_the_requested_size(file_run: QuickRun) -> None:
    assert file_run.target_path is not None
    assert file_run.target_path.stat().st_size == 64 * 1024**2
    # nothing but the named file was written next to it
    assert [p.name for p in file_run.target_path.parent.iterdir()] == ["quick.dat"]


def _csv(out: Path) -> list[dict[str, Any]]:
    res = run_cli("export", out, "--format", "csv")
    assert res.code == 0, res.err
    return list(csv.DictReader(io.StringIO(res.out)))


def test_export_csv(quick: QuickRun) -> None:
    res = run_cli("export", quick.out, "--format", "csv")
    header = res.out.splitlines()[0].split(",")
    for column in CSV_REQUIRED:
        assert column in header
    rows = _csv(quick.out)
    points_on_disk = sorted(p.name for p in (quick.out / "points").iterdir())
    assert [r["point"] for r in rows] == points_on_disk == QUICK_IDS
    for row in rows:
        direction = "read" if row["point"].endswith("read") else "write"
        other = "write" if direction == "read" else "read"
        assert float(row[f"{direction}_iops"]) > 0
        assert float(row[f"{direction}_bw_MBps"]) > 0
        assert float(row[f"{direction}_lat_mean_us"]) > 0
        assert float(row[f"{direction}_p99_99_us"]) >= float(row[f"{direction}_p99_us"]) > 0
        assert row[f"{other}_iops"] == ""
        assert row["bs"] == ("1048576" if "seq1m" in row["point"] else "4096")
        assert row["iodepth"] == {"q8t1": "8", "q1t1": "1", "q32t1": "32"}[row["point"].split("-")[2]]
        assert row["numjobs"] == "1"
        assert row["rw"] in ("read", "write", "randread", "randwrite")


def test_export_json_is_the_run(quick: QuickRun) -> None:
    res = run_cli("export", quick.out, "--format", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out) == json.loads((quick.out / "run.json").read_text(encoding="utf-8"))


def test_report_re_renders(quick: QuickRun) -> None:
    report = quick.out / "report.html"
    report.unlink()
    res = run_cli("report", quick.out)
    assert res.code == 0, res.err
    assert res.out.strip() == str(report)
    html = report.read_text(encoding="utf-8")
    assert "SEQ1M Q8T1 Read" in html


def test_cmd_txt_reruns_to_a_valid_result(quick: QuickRun) -> None:
    pdir = quick.out / "points" / "04-rnd4k-q1t1-read"
    argv = shlex.split((pdir / "cmd.txt").read_text(encoding="utf-8"))
    assert Path(argv[0]).name == "fio"
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=pdir, check=False)
    assert res.returncode == 0, res.stderr
    m = parse_measurement(res.stdout)
    assert list(m.directions) == ["read"]
    assert m.directions["read"].iops > 0
    assert m.directions["read"].clat is not None
    assert m.directions["read"].clat.bins


def test_plan_lists_the_same_points(quick: QuickRun) -> None:
    run = load_run(quick.out)
    targets = [arg for spec in run.options.target_specs for arg in ("--target", spec)]
    res = run_cli("plan", "quick", *targets, "--runtime", "1")
    assert res.code == 0, res.err
    for pid in QUICK_IDS:
        assert pid in res.out
    assert "8 points" in res.out
    assert "will overwrite:" in res.out


def test_live_samples_come_from_fios_status_stream(tmp_path: Path) -> None:
    """FioExecutor turns --status-interval documents into per-interval rates for the progress display."""
    from ssdlab.fio.executor import FioExecutor, LiveSample
    from ssdlab.results.model import TestPoint, Workload
    from ssdlab.run.target import parse_target
    from ssdlab.safety import WriteGrant

    samples: list[LiveSample] = []
    point = TestPoint(id="live", label="live", workload=Workload(rw="randread", bs=4096, runtime_s=3))
    target = parse_target("null")
    m = FioExecutor(WriteGrant(target, writes=False)).run_point(point, target, tmp_path / "live", samples.append)
    assert len(samples) >= 2
    assert [s.elapsed_s for s in samples] == sorted(s.elapsed_s for s in samples)
    assert all(s.write_iops == 0 for s in samples)  # a read-only point: no interval counts a write
    assert all(s.read_iops >= 0 for s in samples)  # (an interval of a stalled, loaded host may count none)
    assert sum(s.read_iops > 0 for s in samples) >= len(samples) // 2
    # MB/s from the bytes counter, IOPS from the I/O counter: 4 KiB per I/O. fio reads the two counters of a
    # status document at slightly different moments (on a loaded host, one interval may gain what the next
    # loses), so the check is over the whole run, where those skews cancel
    assert sum(s.read_mbps for s in samples) == pytest.approx(sum(s.read_iops for s in samples) * 4096 / 1e6,
                                                              rel=0.02)
    # interval rates are of the same order as the final average
    assert max(s.read_iops for s in samples) > 0.3 * m.directions["read"].iops


def test_quick_with_passes_measures_each_test_that_often_and_its_grid_says_how_it_reads_them(tmp_path: Path) -> None:
    out = tmp_path / "passes"
    res = run_cli("run", "quick", "--target", "null", "--runtime", "0.5", "--passes", "2", "--pass-stat", "mean",
                  "--out", str(out))
    assert res.code == 0, res.err
    run = load_run(out)
    ids = [r.point.id for r in run.points if r.status == "ok"]
    assert len(ids) == 16
    assert ids[:2] == ["01-seq1m-q8t1-read-p1", "01-seq1m-q8t1-read-p2"]  # a test's passes one after the other
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Read MB/s (mean of 2)" in report
    assert "SEQ1M Q8T1 Read (pass 2 of 2)" in report  # each pass a row of the results table
