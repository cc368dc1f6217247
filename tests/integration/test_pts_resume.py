"""Resume after kill -9 (several times, at different points) and after Ctrl-C: no finished point is lost,
the killed point runs again and is recorded as repeated, and the run completes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import fio_pids
from ssdlab.errors import StoredResultsError
from ssdlab.results import store
from ssdlab.results.model import to_dict
from ssdlab.results.store import load_run
from ssdlab.results.verdict import run_verdicts

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "ssdlab.cli"]


def _points(run_dir: Path) -> list[dict[str, Any]]:
    """The stored points (run.json and the points log a running or killed run appends to)."""
    try:
        return list(to_dict(store.load_run(run_dir).points))
    except StoredResultsError:
        return []


def _start(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # its own process group: fio dies with it, as on power loss


def _stop_after(proc: subprocess.Popen[bytes], run_dir: Path, n_points: int, sig: int) -> int:
    """Wait until `n_points` are recorded, let the next point start, then signal the whole process group."""
    deadline = time.monotonic() + 120
    while len(_points(run_dir)) < n_points:
        assert proc.poll() is None, "the run ended before the planned interruption"
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.05)
    time.sleep(0.15)  # inside the next point (its fio job is running)
    os.killpg(proc.pid, sig)
    return proc.wait(timeout=60)


def _settle(run_dir: Path) -> list[int]:
    """fio processes of the killed run still alive after a grace period (fio's forked job processes can
    outlive a killed ssdlab and hang); `ssdlab resume` must stop them."""
    deadline = time.monotonic() + 3
    while fio_pids(run_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    return fio_pids(run_dir)


def _ok(points: list[dict[str, Any]]) -> dict[str, str]:
    return {p["point"]["id"]: p["started"] for p in points if p["status"] == "ok"}


def test_resume_after_kill9_and_ctrl_c(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    target = f"file:{tmp_path / 'dut.dat'}?size=32MiB"
    proc = _start(["run", "pts-tp", "--target", target, "--out", str(run_dir), "--runtime", "0.3",
                   "--max-rounds", "5", "--tq", "1x8", "-q", "--no-report"])
    kept: dict[str, str] = {}
    snapshots: list[dict[str, str]] = []  # finished points at each interruption
    orphans: list[int] = []  # fio processes that outlived a killed ssdlab
    plan = [(1, signal.SIGKILL), (7, signal.SIGKILL), (15, signal.SIGINT)]  # in WIPC/round 1, mid test 1, test 2
    for i, (n, sig) in enumerate(plan):
        rc = _stop_after(proc, run_dir, n, sig)
        assert rc == (-signal.SIGKILL if sig == signal.SIGKILL else 130), f"interruption {i}: exit {rc}"
        orphans.extend(_settle(run_dir))
        before = _ok(_points(run_dir))
        assert kept.items() <= before.items()  # nothing finished earlier was lost or re-run
        kept = before
        snapshots.append(before)
        status = store.load_run(run_dir).status
        assert status == ("running" if sig == signal.SIGKILL else "interrupted"), f"interruption {i}: {status}"
        if i < len(plan) - 1:
            proc = _start(["resume", str(run_dir), "-q", "--no-report"])
    final = subprocess.run([*CLI, "resume", str(run_dir), "-q"], capture_output=True, text=True, timeout=300,
                           check=False)
    # steady state on a real file depends on the host; the exit code is the stored run's verdict either way
    assert final.returncode in (0, 1), final.stderr
    assert final.returncode == run_verdicts(load_run(run_dir)).exit_code
    doc = json.loads((run_dir / "run.json").read_text())
    assert doc["status"] == "complete"
    done = _ok(doc["points"])
    assert kept.items() <= done.items()  # every point finished before an interruption kept its first run
    ids = [p["point"]["id"] for p in doc["points"]]
    assert len(ids) == len(set(ids)) == 2 * (2 + 5 * 2)
    resumes = [e for e in doc["events"] if e.get("kind") == "resume"]
    assert [e["previous_status"] for e in resumes] == ["running", "running", "interrupted"]
    assert any(e["repeated"] for e in resumes), "a point killed mid-run must be recorded as repeated"
    for event, snapshot in zip(resumes, snapshots, strict=True):
        for pid in event["repeated"]:
            assert pid not in snapshot  # it had not finished when the run was stopped ...
            assert pid in done  # ... and it ran again in full
            assert (run_dir / "points" / pid / "fio.json").is_file()
    assert any(e.get("kind") == "interrupted" for e in doc["events"])
    stopped = {pid for e in resumes for pid in e["stopped_fio_pids"]}
    assert set(orphans) <= stopped  # resume stopped every orphan of the killed runs ...
    assert not fio_pids(run_dir)  # ... and nothing of this run is left running
    html = (run_dir / "report.html").read_text()
    assert "PTS run record: interruptions and resumes" in html
    assert "killed or crashed" in html


def test_a_continuous_series_resumes_after_kill9_without_losing_a_sample(tmp_path: Path) -> None:
    """WSAT's samples are one fio run (fio/series.py): each is stored as it ends, kill -9 keeps them, and resume
    starts a new fio run at the first missing sample."""
    run_dir = tmp_path / "run"
    target = f"file:{tmp_path / 'dut.dat'}?size=32MiB"
    proc = _start(["run", "pts-wsat", "--target", target, "--out", str(run_dir), "--runtime", "0.5",
                   "--wsat-hours", str(12 / 60), "--wsat-fills", "1000", "--wsat-hist-minutes", "2", "--tq", "1x4",
                   "-q", "--no-report"])
    rc = _stop_after(proc, run_dir, 4, signal.SIGKILL)  # purge + 3 samples stored, the 4th in progress
    assert rc == -signal.SIGKILL
    orphans = _settle(run_dir)
    before = _ok(_points(run_dir))
    samples_before = sorted(k for k in before if k.startswith("wsat-s"))
    assert len(samples_before) >= 3
    assert (run_dir / "points" / "wsat-s0001" / "job.fio").is_file()  # one fio run so far ...
    assert not (run_dir / "points" / "wsat-s0002" / "job.fio").exists()  # ... its samples hold status.json
    assert (run_dir / "points" / "wsat-s0002" / "status.json").is_file()
    final = subprocess.run([*CLI, "resume", str(run_dir), "-q", "--no-report"], capture_output=True, text=True,
                           timeout=300, check=False)
    assert final.returncode == 0, final.stderr
    doc = json.loads((run_dir / "run.json").read_text())
    assert doc["status"] == "complete"
    done = _ok(doc["points"])
    assert before.items() <= done.items()  # no stored sample was lost or run again
    ids = [p["point"]["id"] for p in doc["points"]]
    # every sample once, in order, then the histogram capture
    assert ids == ["wsat-0-purge", *(f"wsat-s{n:04d}" for n in range(1, 13)), "wsat-hist"]
    resume = next(e for e in doc["events"] if e.get("kind") == "resume")
    first_new = f"wsat-s{len(samples_before) + 1:04d}"
    assert resume["resumed_at"] == first_new
    assert resume["repeated"] == [first_new]  # the sample in progress at the kill ran again
    assert (run_dir / "points" / first_new / "job.fio").is_file()  # the new fio run starts there
    assert set(orphans) <= set(resume["stopped_fio_pids"])
    assert not fio_pids(run_dir)
