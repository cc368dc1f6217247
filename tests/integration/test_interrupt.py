"""Ctrl-C and fio failures keep every finished point; `ssdlab resume` completes the run."""

from __future__ import annotations

import hashlib
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import fio_pids
from ssdlab.errors import ExitCode, StoredResultsError
from ssdlab.results import store
from ssdlab.results.model import to_dict

pytestmark = pytest.mark.integration


def ssdlab(*args: str | Path) -> list[str]:
    """argv that runs this checkout's ssdlab in a fresh interpreter."""
    return [sys.executable, "-m", "ssdlab.cli", *map(str, args)]


def load(out: Path) -> dict[str, Any]:
    """The stored run as plain data (run.json and, while the run goes on, its points log)."""
    data: dict[str, Any] = to_dict(store.load_run(out))
    return data


def ok_ids(run: dict[str, Any]) -> list[str]:
    """Ids of the points measured successfully, in order."""
    return [p["point"]["id"] for p in run["points"] if p["status"] == "ok"]


def wait_for_points(out: Path, proc: subprocess.Popen[str], count: int, timeout: float = 90.0) -> None:
    """Block until run.json lists `count` finished points (fail if the run ends or stalls first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"ssdlab ended early: {proc.communicate()}"
        try:
            if len(ok_ids(load(out))) >= count:
                return
        except StoredResultsError:
            pass
        time.sleep(0.1)
    pytest.fail(f"{count} points did not finish within {timeout} s")


def digest(path: Path) -> str:
    """sha256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def interrupt_run(out: Path, sig: int, after_points: int, *flags: str) -> tuple[int, str]:
    """Run the quick suite on null into `out`, send `sig` once `after_points` finished; (exit code, stderr)."""
    proc = subprocess.Popen(ssdlab("run", "quick", "--target", "null", "--runtime", "1", "--out", out,
                                   "--no-report", *flags),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_points(out, proc, after_points)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, stderr


def test_ctrl_c_keeps_finished_points_and_resume_completes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    returncode, stderr = interrupt_run(out, signal.SIGINT, 2)
    assert returncode == ExitCode.INTERRUPTED, stderr
    assert "Traceback" not in stderr, stderr
    assert f"ssdlab resume {out}" in stderr, stderr
    assert fio_pids(out) == []  # fio was stopped with ssdlab

    run = load(out)
    assert run["status"] == "interrupted"
    assert run["events"][-1]["kind"] == "interrupted"
    kept = ok_ids(run)
    assert len(kept) >= 2
    assert kept == ["01-seq1m-q8t1-read", "02-seq1m-q1t1-read", "03-rnd4k-q32t1-read"][:len(kept)]
    before = {pid: digest(out / "points" / pid / "fio.json") for pid in kept}
    kept_records = {p["point"]["id"]: p for p in run["points"] if p["status"] == "ok"}

    res = subprocess.run(ssdlab("resume", out, "--no-report", "--quiet"), capture_output=True, text=True,
                         timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    run = load(out)
    assert run["status"] == "complete"
    assert len(ok_ids(run)) == 8
    assert len({p["point"]["id"] for p in run["points"]}) == 8
    assert [e["kind"] for e in run["events"]].count("resume") == 1
    for pid in kept:  # finished points were neither re-run nor touched
        assert digest(out / "points" / pid / "fio.json") == before[pid]
        record = next(p for p in run["points"] if p["point"]["id"] == pid)
        assert record == kept_records[pid]
    for p in run["points"]:
        assert (out / "points" / p["point"]["id"] / "fio.json").is_file()


def test_fio_failure_marks_the_run_failed_and_keeps_finished_points(tmp_path: Path) -> None:
    target_dir = tmp_path / "vanishing"
    target_dir.mkdir()
    out = tmp_path / "run"
    spec = "file:vanishing/t.dat?size=16MiB"  # relative to the run's working directory
    proc = subprocess.Popen(ssdlab("run", "four-corners", "--target", spec, "--runtime", "1", "--out", out,
                                   "--no-report"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        wait_for_points(out, proc, 2)
        # the target disappears: its directory becomes a plain file, so fio can neither open nor recreate it
        shutil.rmtree(target_dir)
        target_dir.write_text("not a directory", encoding="utf-8")
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if proc.returncode == 0:
        pytest.fail("run finished before the target could be removed")
    # two outcomes, both right, and which one depends on when the directory goes: removed before the next
    # point's job is checked, the write gate finds the file is no longer the one the run was set up for and
    # refuses to start fio (exit 4, no point recorded for it); removed after the check, fio itself fails
    # (exit 6, the point recorded as failed with fio's stderr)
    assert proc.returncode in (ExitCode.FIO_FAILED, ExitCode.UNSAFE), stderr
    assert "Traceback" not in stderr, stderr
    error_lines = [ln for ln in stderr.splitlines() if ln.startswith("ssdlab: error:")]
    assert len(error_lines) == 1
    assert "Not a directory" in error_lines[0] or "t.dat" in error_lines[0], error_lines[0]

    run = load(out)
    assert run["status"] == "failed"
    assert run["events"][-1]["kind"] == "failed"
    statuses = [p["status"] for p in run["points"]]
    assert statuses[:2] == ["ok", "ok"]
    if proc.returncode == ExitCode.UNSAFE:
        assert error_lines[0].startswith("ssdlab: error: refusing to start fio: "), error_lines[0]
        assert "would not open what the run was set up for" in error_lines[0], error_lines[0]
        assert statuses == ["ok", "ok"]
    else:
        assert error_lines[0].startswith("ssdlab: error: fio failed: "), error_lines[0]
        assert statuses[-1] == "failed"
        failed = run["points"][-1]
        assert failed["reason"].startswith("fio failed")
        assert (out / "points" / failed["point"]["id"] / "stderr.txt").is_file()
    for pid in ok_ids(run):
        assert (out / "points" / pid / "fio.json").is_file()

    assert run["options"]["target_specs"] == [f"file:{target_dir / 't.dat'}?size=16MiB"]  # made absolute

    # put the directory back: resume (from another directory) re-runs the failed point and completes
    target_dir.unlink()
    target_dir.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    res = subprocess.run(ssdlab("resume", out, "--no-report", "--quiet"), capture_output=True, text=True,
                         timeout=120, check=False, cwd=elsewhere)
    assert res.returncode == 0, res.stderr
    run = load(out)
    assert run["status"] == "complete"
    assert len(ok_ids(run)) == 4
    retried = next(p for p in run["points"] if p["point"]["id"] == failed["point"]["id"])
    assert retried["status"] == "ok"
    assert retried["attempt"] == 2
    assert (target_dir / "t.dat").stat().st_size == 16 * 1024**2
    assert list(elsewhere.iterdir()) == []


def test_sigterm_stops_a_run_like_ctrl_c(tmp_path: Path) -> None:
    """Service managers and CI timeouts send SIGTERM: the run is saved as interrupted, fio is stopped."""
    out = tmp_path / "run"
    returncode, stderr = interrupt_run(out, signal.SIGTERM, 1, "--quiet")
    assert returncode == ExitCode.INTERRUPTED, stderr
    assert fio_pids(out) == []
    run = load(out)
    assert run["status"] == "interrupted"
    assert len(ok_ids(run)) >= 1


def test_a_stop_request_ends_a_long_fio_point_promptly(tmp_path: Path) -> None:
    """The runner forwards a stop request to fio and does not report the cut-short point as a result."""
    from ssdlab.fio import runner
    from ssdlab.fio.job import build_job
    from ssdlab.results.model import TestPoint, Workload
    from ssdlab.run.target import parse_target
    from ssdlab.safety import WriteGrant

    point = TestPoint(id="long", label="long", workload=Workload(rw="randread", bs=4096, runtime_s=60))
    target = parse_target("null")
    job = build_job(point, target.fio_options())
    start_time = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            runner.run_job(job, tmp_path / "long", gate=WriteGrant(target, writes=False),
                           on_status=lambda doc: runner.request_stop())
    finally:
        runner.clear_stop_request()
    assert time.monotonic() - start_time < 20
    assert not (tmp_path / "long" / "fio.json").exists()
    assert fio_pids(tmp_path) == []
