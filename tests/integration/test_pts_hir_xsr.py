"""PTS HIR (and XSR) end to end, scaled: on the simulator, where the mechanism must show, and on a small
file with real fio, where the jobs must pass the write gate and the host idle must be measured."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ssdlab.results.store import load_run

pytestmark = pytest.mark.integration

CliRunner = Callable[..., Any]  # the `cli` fixture of tests/conftest.py


def test_hir_on_the_simulator_recovers_more_after_longer_waits(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "hir"
    # 2-s points scale every duration by 1/30: bursts of 1/6 s, waits of 1/6 ... 5/3 s
    r = cli("run", "pts-hir", "--target", "sim:tlc-4k?capacity=256MiB", "--runtime", "2", "--hir-bursts", "3",
            "--hir-precondition", "fixed", "--hir-pc-samples", "6", "--out", str(out), "-q")
    assert r.code == 0, r.err
    run = load_run(out)
    ev = next(e for e in run.events if e.get("kind") == "pts-hir")
    ratios = [ev["wait_states"][w]["vs_steady"] for w in ("5", "10", "15", "25", "50")]
    # background GC in the idle time: bursts run above the steady-state level, more so after longer waits
    assert ratios[0] > 1.02
    assert all(b >= 0.99 * a for a, b in itertools.pairwise(ratios)), ratios  # a superblock's grain
    assert ratios[-1] > ratios[0] + 0.03, ratios
    burst = run.result("hir-w50-b002")
    assert burst is not None
    assert burst.measurement is not None
    idle = burst.measurement.extra["sim"]["idle"]
    assert idle["victims"] > 0
    assert idle["free_after"] > idle["free_before"]
    html = (out / "report.html").read_text()
    for title in ("PTS HIR: set-up", "PTS HIR: preconditioning", "HIR: IOPS vs time, all wait states",
                  "HIR: IOPS vs wait state", "Mean burst IOPS"):
        assert title in html, title
    assert "SCALED, NOT spec-compliant" in html
    summary = json.loads((out / "pts" / "summary.json").read_text())["tests"]["hir"]
    assert [w["wait_s"] for w in summary["wait_states"]] == [5, 10, 15, 25, 50]
    assert (out / "pts" / "hir.csv").read_text().count("\n") == 1 + 5 * (3 + 3)


def test_hir_on_a_file_measures_the_idle(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "hir"
    r = cli("run", "pts-hir", "--target", f"file:{tmp_path / 'dut.dat'}?size=16MiB", "--runtime", "1.2",
            "--tq", "2x4", "--hir-bursts", "2", "--hir-waits", "5,25", "--hir-precondition", "fixed",
            "--hir-pc-samples", "2", "--out", str(out), "-q", "--no-report")
    assert r.code in (0, 1), r.err  # 1: a loaded host may leave a 0.1-s burst short of a valid point's I/Os
    run = load_run(out)
    assert run.status == "complete"
    assert [p.point.id for p in run.points] == [
        "hir-0-purge", "hir-p0001", "hir-p0002", "hir-w05-b001", "hir-w05-b002", "hir-w05-c001", "hir-w05-c002",
        "hir-w25-b001", "hir-w25-b002", "hir-w25-c001", "hir-w25-c002"]
    waited = [p for p in run.points if p.point.idle_before_s > 0]
    assert [p.point.id for p in waited] == ["hir-w05-b002", "hir-w05-c001", "hir-w25-b002", "hir-w25-c001"]
    for p in waited:  # measured between the two fio runs' I/O (fio's own clocks), not assumed
        assert p.measurement is not None
        assert p.measurement.extra["idle_s"] is not None
        assert p.measurement.extra["idle_s"] > 0
    job = (out / "points" / "hir-w25-b002" / "job.fio").read_text()
    assert re.search(r"^rw=randwrite$", job, re.M)
    assert re.search(r"^numjobs=2$", job, re.M)
    assert re.search(r"^iodepth=4$", job, re.M)
    burst = run.result("hir-w25-b002")
    assert burst is not None
    planned = burst.point.tags.planned_runtime_s or burst.point.workload.runtime_s
    assert planned == pytest.approx(0.1)  # 5 s x 1.2/60
    ran = burst.point.workload.runtime_s  # longer only when a loaded host left the burst short (a warning says so)
    assert ran is not None
    line = re.search(r"^runtime=(\d+)(ms)?$", job, re.M)
    assert line is not None
    assert int(line[1]) / (1000 if line[2] else 1) == pytest.approx(ran)  # the job file says what ran
    assert ran == pytest.approx(0.1) or any("runtime extended" in w for w in burst.warnings)


def test_xsr_on_the_simulator_shows_the_transition_penalty(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "xsr"
    r = cli("run", "pts-xsr", "--target", "sim:tlc-4k?capacity=256MiB", "--runtime", "0.5", "--xsr-segments",
            "4,12,16", "--out", str(out), "-q")
    assert r.code == 0, r.err
    run = load_run(out)
    ev = next(e for e in run.events if e.get("kind") == "pts-xsr")
    ab, bc = ev["recovery"]["A->B"], ev["recovery"]["B->C"]
    # RND writes start fast on the free space SEQ writes left, then fall to their steady state
    assert ab["first_ratio"] > 1.1
    # SEQ writes after RND pay for the garbage collection of the random data: a penalty that takes time to clear
    assert bc["first_ratio"] < 0.5
    assert bc["recovered_at_sample"] >= 2
    assert bc["recovery_s"] > 0
    assert 0.9 < ev["c_vs_a"] < 1.1  # ... and then sequential writes are as fast as before the random ones
    html = (out / "report.html").read_text()
    for title in ("PTS XSR: set-up", "XSR: throughput vs time, all access groups", "XSR: transition B -&gt; C",
                  "Recovered at", "transition A-&gt;B"):
        assert title in html, title
    assert (out / "pts" / "xsr.csv").read_text().count("\n") == 1 + 4 + 12 + 16


def test_xsr_on_a_file_runs_each_access_group_as_one_fio_run(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "xsr"
    r = cli("run", "pts-xsr", "--target", f"file:{tmp_path / 'dut.dat'}?size=16MiB", "--runtime", "0.5",
            "--xsr-segments", "2,3,2", "--out", str(out), "-q", "--no-report")
    assert r.code in (0, 1), r.err  # 1: a loaded host may leave a 1 MiB sample short of a valid point's I/Os
    run = load_run(out)
    assert run.status == "complete"
    samples = [p for p in run.points if p.point.phase == "measure"]
    assert [p.point.id for p in samples] == ["xsr-a0001", "xsr-a0002", "xsr-b0001", "xsr-b0002", "xsr-b0003",
                                             "xsr-c0001", "xsr-c0002"]
    runs = sorted(p.name for p in (out / "points").iterdir() if (p / "job.fio").is_file())
    assert runs == ["xsr-a0001", "xsr-b0001", "xsr-c0001"]  # one fio run per access group
    for p in samples:
        assert (out / "points" / p.point.id / "status.json").is_file()  # fio's document that closed the sample
        assert p.measurement is not None
        assert p.measurement.get("write") is not None
    job = (out / "points" / "xsr-b0001" / "job.fio").read_text()
    assert re.search(r"^rw=randwrite$", job, re.M)
    assert re.search(r"^bs=8192$", job, re.M)
    assert re.search(r"^numjobs=1$", job, re.M)
    assert re.search(r"^iodepth=32$", job, re.M)
    assert re.search(r"^runtime=1500ms$", job, re.M)  # three samples of 0.5 s in one run
    cmd = (out / "points" / "xsr-b0001" / "cmd.txt").read_text()
    assert "--status-interval=500ms" in cmd


def test_the_snia_header_block_is_on_every_pts_page_and_stays_with_the_run(cli: CliRunner, tmp_path: Path) -> None:
    head = tmp_path / "header.toml"
    head.write_text('[report]\nsponsor = "Example Labs"\nauditor = "A. Auditor"\nrevision = "1.2"\n'
                    '[device]\nmanufacturer = "ExampleCorp"\nnand_type = "176L TLC"\n'
                    '[platform]\nmotherboard = "Board X"\n')
    out = tmp_path / "run"
    r = cli("run", "pts", "--pts-tests", "wsat,xsr", "--target", "sim:tlc-4k?capacity=256MiB", "--runtime", "0.5",
            "--wsat-fills", "1", "--xsr-segments", "2,2,2", "--pts-header", str(head), "--out", str(out), "-q")
    assert r.code == 0, r.err
    head.unlink()  # the run keeps what the file said: reports and resumes never read it again
    assert cli("report", str(out)).code == 0
    html = (out / "report.html").read_text()
    for page in ("PTS WSAT: set-up", "PTS XSR: set-up"):
        assert page in html
    for fact in ("Test sponsor: Example Labs", "Auditor: A. Auditor", "Revision: 1.2", "ExampleCorp", "176L TLC",
                 "Board X", "Device under test", "Set-up parameters", "Test parameters"):
        assert html.count(fact) >= 2, fact  # on the WSAT page and on the XSR page
    missing = cli("plan", "pts-xsr", "--target", "sim:tlc-4k", "--pts-header", str(head), traceback=False)
    assert missing.code == 2
    assert missing.err_lines[-1].startswith(f"ssdlab: error: cannot read {head}")
