"""Every characterization suite from the CLI on a small file target with 1-2 s points, and its report section.

Sweeps are thinned with --axis/--matrices/--curve (explicit options; the defaults are the full matrices).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import run_cli
from ssdlab.results.store import load_run
from ssdlab.units import format_bytes

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One 64 MiB file shared by the tests of this module (laid out by the first run)."""
    path = tmp_path_factory.mktemp("target") / "ssdlab-char.dat"
    return f"file:{path}?size=64MiB"


def _run(out: Path, suite: str, target: str, *extra: str, runtime: str = "1") -> Path:
    res = run_cli("run", suite, "--target", target, "--runtime", runtime, "--ramp", "0", "--out", str(out),
                  "--quiet", *extra)
    assert res.code == 0, res.err
    report = out / "report.html"
    assert report.is_file()
    return report


def _section(report: Path, title: str) -> str:
    text = report.read_text(encoding="utf-8")
    i = text.find(f"<h2>{title}")
    assert i >= 0, f"no section {title!r} in the report"
    j = text.find("<h2>", i + 4)
    return text[i:j if j > 0 else None]


def _charts(section: str) -> int:
    return section.count("<svg")


def test_sweep_bs(tmp_path: Path, target: str) -> None:
    report = _run(tmp_path / "r", "sweep-bs", target, "--axis", "bs=512,4k,1m", "--matrices", "seq-read,rnd-write")
    run = load_run(tmp_path / "r")
    assert [p.point.workload.bs for p in run.points] == [512, 4096, 1 << 20] * 2
    assert all(p.status == "ok" and p.measurement and p.measurement.total_iops > 0 for p in run.points)
    sec = _section(report, "Block-size sweep")
    assert _charts(sec) == 3  # MB/s, IOPS and latency vs block size
    assert "seq-read" in sec
    assert "rnd-write" in sec
    assert "<td>1M</td>" in sec


def test_sweep_qd(tmp_path: Path, target: str) -> None:
    report = _run(tmp_path / "r", "sweep-qd", target, "--axis", "numjobs=1,2", "--axis", "iodepth=1,4",
                  "--matrices", "rnd-mix70")
    run = load_run(tmp_path / "r")
    assert sorted(p.point.workload.outstanding for p in run.points) == [1, 2, 4, 8]
    sec = _section(report, "IOPS and latency vs outstanding I/O")
    assert _charts(sec) == 3
    assert "T1" in sec
    assert "T2" in sec


def test_stability(tmp_path: Path, target: str) -> None:
    report = _run(tmp_path / "r", "stability", target, "--axis", "numjobs=2", "--axis", "iodepth=4", runtime="3")
    run = load_run(tmp_path / "r")
    m = run.points[0].measurement
    assert m is not None
    assert len(m.series["time_s"]) >= 2
    assert m.extra["hist_logs"]
    sec = _section(report, "Stability")
    assert "CoV %" in sec
    assert "worst second p99" in sec
    cov = re.search(r"<td>(\d+)</td><td>[\d,]+</td><td>[\d,]+</td><td>([\d.]+)</td>", sec)
    assert cov is not None
    assert int(cov.group(1)) >= 2
    assert float(cov.group(2)) >= 0
    assert _charts(sec) == 3  # IOPS time series, IOPS histogram, per-second mean/p99 latency


def test_lat_curve_calls_out_the_p99_limit(tmp_path: Path, target: str) -> None:
    report = _run(tmp_path / "r", "lat-curve", target, "--axis", "bs=4k", "--axis", "rwmixread=100",
                  "--axis", "numjobs=1,2", "--axis", "iodepth=1,8", "--p99-limit", "1")
    sec = _section(report, "Latency vs IOPS")
    assert _charts(sec) == 4  # mean, p99, p99.9, p99.99
    assert "p99 crosses 1 µs at QD 1" in sec  # nothing completes in 1 µs on a file


def test_iorate_curve_reaches_its_targets(tmp_path: Path, target: str) -> None:
    report = _run(tmp_path / "r", "iorate-curve", target, "--matrices", "rnd-mix70", "--curve", "20,50",
                  "--axis", "numjobs=2", "--axis", "iodepth=4")
    run = load_run(tmp_path / "r")
    assert [p.point.tags["rate"] for p in run.points] == ["max", "20%", "50%"]
    for p in run.points[1:]:
        assert p.measurement is not None
        target_iops = p.point.tags["target_iops"]
        assert 0 < p.measurement.total_iops <= target_iops * 1.1  # the rate limit holds
        assert p.point.workload.options["rate_process"] == "poisson"
        assert "rate_iops=" in (tmp_path / "r" / "points" / p.point.id / "job.fio").read_text()
    sec = _section(report, "iorate curves")
    assert _charts(sec) == 1
    assert "uncapped" in sec
    assert "20%" in sec


@pytest.mark.parametrize("suite", ["app-oracle", "app-sql", "app-vdi", "app-vsi"])
def test_app_models(tmp_path: Path, target: str, suite: str) -> None:
    report = _run(tmp_path / "r", suite, target, "--curve", "50")
    run = load_run(tmp_path / "r")
    assert len(run.points) == 2
    assert all(p.status == "ok" for p in run.points)
    job = (tmp_path / "r" / "points" / run.points[1].point.id / "job.fio").read_text()
    assert "bssplit=" in job
    assert "dedupe_percentage=" in job
    assert "percentage_random=80" in job
    sec = _section(report, "Application model")
    assert "published % of I/Os" in sec
    assert "fio bssplit %" in sec
    assert _charts(sec) == 1


@pytest.mark.parametrize("suite", ["iometer-fileserver", "iometer-webserver", "iometer-database",
                                   "iometer-workstation"])
def test_iometer_specs(tmp_path: Path, target: str, suite: str) -> None:
    report = _run(tmp_path / "r", suite, target, "--axis", "iodepth=1,8")
    run = load_run(tmp_path / "r")
    assert [p.point.workload.iodepth for p in run.points] == [1, 8]
    assert all(p.status == "ok" for p in run.points)
    sec = _section(report, "Application model: Iometer")
    assert _charts(sec) == 2
    assert "fio option" in sec


def test_p5430_phases_then_curve(tmp_path: Path, target: str) -> None:
    report = _run(tmp_path / "r", "p5430-iorate", target, "--phase-time", "2", "--matrices", "rnd-read",
                  "--curve", "50")
    run = load_run(tmp_path / "r")
    assert [p.point.phase for p in run.points] == ["precondition", "precondition", "measure", "measure"]
    phase = run.points[0].measurement
    assert phase is not None
    assert phase.series.get("write_iops")
    sec = _section(report, "Long phases")
    assert _charts(sec) == 4
    assert "data written" in sec
    for p in run.points[:2]:  # each phase's total, in whatever unit this host's speed made it (no throughput assumed)
        assert p.measurement is not None
        write = p.measurement.get("write")
        assert write is not None
        assert write.io_bytes > 0
        assert f"<td>{format_bytes(write.io_bytes)}</td>" in sec


def test_user_toml_suite_and_footprint_misalignment(tmp_path: Path, target: str) -> None:
    suite_file = Path(__file__).parent.parent / "data" / "suites" / "user-matrix.toml"
    report = _run(tmp_path / "r", str(suite_file), target, "--axis", "iodepth=1", "--axis", "bs=4k",
                  "--footprint", "50%", "--misalign", "512")
    run = load_run(tmp_path / "r")
    assert run.suite == str(suite_file.resolve())
    assert [p.point.phase for p in run.points] == ["precondition", "measure", "measure"]
    job = (tmp_path / "r" / "points" / run.points[1].point.id / "job.fio").read_text()
    assert "offset=512\n" in job
    assert f"size={32 << 20}\n" in job
    assert run.points[0].point.workload.io_bytes == 32 << 20
    sec = _section(report, "Test matrix")
    assert "first 32 MiB" in sec
    assert "shifted by 512 B" in sec
    assert _charts(sec) == 1
    res = run_cli("resume", str(tmp_path / "r"), "--quiet", "--no-report")
    assert res.code == 0
    assert "already complete" in res.err


def test_plan_and_bad_options_are_one_line_errors(target: str) -> None:
    res = run_cli("plan", "app-sql", "--target", target, traceback=False)
    assert res.code == 0
    assert "renormalised" in res.out
    assert "bssplit=8k/65:64k/35,4k/31:8k/39:64k/30" in res.out
    for args, msg in ((["--curve", "50", "--axis", "qd=1"], "unknown axis 'qd'"),
                      (["--p99-limit", "5"], "--p99-limit does not apply to suite app-sql"),
                      (["--footprint", "0%"], "out of range")):
        res = run_cli("plan", "app-sql", "--target", target, *args, traceback=False)
        assert res.code == 2, res.err
        assert len(res.err_lines) == 1
        assert msg in res.err
