"""Injected faults on real nbdkit servers through fio's nbd engine: I/O errors at chosen offsets (stop or
continue), stalls of a chosen length, slow I/O; NBD URIs to a server someone else runs; and the integrity
suite catching corruption planted between its write and its check.

Needs fio built with libnbd and nbdkit (apt-get install nbdkit); no root. Every nbdkit started here stops
with its run or in a fixture teardown, and listens only on a Unix socket under tmp_path or /tmp.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import flip_bytes, run_cli
from ssdlab.errors import ExitCode
from ssdlab.fio.runner import engine_available
from ssdlab.results.model import Measurement, TestPoint
from ssdlab.results.store import load_run
from ssdlab.run import target as executor_module
from ssdlab.targets.base import Target

pytestmark = [pytest.mark.integration]

MiB = 1024**2


@pytest.fixture(autouse=True)
def _needs_nbdkit() -> None:
    if not shutil.which("nbdkit"):
        pytest.skip("nbdkit is not installed (apt-get install nbdkit)")
    if shutil.which("fio") and not engine_available("nbd"):
        pytest.skip("this fio has no nbd engine (built without libnbd)")


def _no_stray_servers() -> None:
    """No nbdkit working directory outlives the process that made it (ssdlab-nbdkit-PID-TOKEN): another
    process's directory (a run beside this one on a shared machine) is its own, while it lives."""
    def alive(pid: int) -> bool:
        return pid != os.getpid() and Path(f"/proc/{pid}").exists()

    left = [d for d in Path("/tmp").glob("ssdlab-nbdkit-*") if not alive(int(d.name.split("-")[2]))]
    assert left == [], f"nbdkit working directories left behind: {left}"


# a sequential read of the first fifth of the disk (no bad sector there), then of all of it, then a random
# read: sizes are fixed, so which reads hit the bad sectors does not depend on the host's speed
READS = """
name = "fault-reads"
summary = "reads for the fault tests"
runtime_s = 0.3

[[phase]]
name = "head"
rw = "read"
bs = "4k"
iodepth = 1
numjobs = 1
io = 0.2

[[phase]]
name = "all"
rw = "read"
bs = "4k"
iodepth = 1
numjobs = 1
io = 1.0

[[matrix]]
name = "rnd"
rw = ["randread"]
bs = ["4k"]
iodepth = [1]
numjobs = [1]
"""
BAD = "read-error=1MiB,2MiB:8KiB"  # 4 KiB at 1 MiB, 8 KiB at 2 MiB + 4 KiB... as 4 KiB reads: three failures
BAD_OFFSETS = [1048576, 2097152, 2101248]


def _suite(tmp_path: Path, text: str = READS) -> Path:
    path = tmp_path / "faults.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_read_errors_stop_the_run_and_keep_what_finished(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = run_cli("run", _suite(tmp_path), "--target", f"nbdkit:memory?size=4MiB&{BAD}", "--out", out, "--quiet",
                traceback=False)
    assert r.code == ExitCode.FIO_FAILED, r.err
    assert "read at offset 1048576" in r.err
    run = load_run(out)
    assert run.status == "failed"
    assert [(p.point.id, p.status) for p in run.points] == [("001-phase-head", "ok"), ("002-phase-all", "failed")]
    failed = run.points[1]
    assert failed.measurement is not None  # what the failed point read before the error is kept
    assert failed.measurement.directions["read"].io_bytes >= MiB
    assert failed.measurement.extra["io_errors"]["listed"][0]["offset"] == 1048576
    assert (out / "points" / "002-phase-all" / "fio.json").exists()
    _no_stray_servers()


def test_read_errors_continue_record_every_offset(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = run_cli("run", _suite(tmp_path), "--target", f"nbdkit:memory?size=4MiB&{BAD}", "--out", out,
                "--on-error", "continue", "--quiet", traceback=False)
    assert r.code == ExitCode.FIO_FAILED, r.err
    run = load_run(out)
    assert run.status == "complete"
    assert [(p.point.id, p.status) for p in run.points[:2]] == [("001-phase-head", "ok"), ("002-phase-all", "failed")]
    assert run.points[2].point.id == "003-rnd"  # the run went on after the failed point
    whole = run.points[1]
    assert whole.measurement is not None
    errors = whole.measurement.extra["io_errors"]
    assert [(e["direction"], e["offset"], e["length"]) for e in errors["listed"]] == [
        ("read", off, 4096) for off in BAD_OFFSETS]
    assert errors["fio_total_err"] == 3
    read = whole.measurement.directions["read"]
    assert read.total_ios == 1024  # fio went on to the end of the disk ...
    assert read.io_bytes == 4 * MiB - 3 * 4096  # ... and the three failed reads brought no data
    assert "3 I/O errors" in whole.reason
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "I/O errors and stalls" in report
    assert "read errors (EIO) at 1048576" in report  # what was planted, beside what was found
    _no_stray_servers()


def test_write_errors_at_an_offset(tmp_path: Path) -> None:
    writes = READS.replace('rw = "read"', 'rw = "write"')
    out = tmp_path / "run"
    r = run_cli("run", _suite(tmp_path, writes), "--target", "nbdkit:memory?size=4MiB&write-error=3MiB",
                "--out", out, "--quiet", "--no-report", traceback=False)
    assert r.code == ExitCode.FIO_FAILED
    failed = load_run(out).points[-1]
    assert failed.status == "failed"
    assert "write at offset 3145728" in failed.reason
    assert "Operation not permitted" in failed.reason


def test_a_stall_is_a_latency_outlier(tmp_path: Path) -> None:
    stall = READS.split("[[phase]]")[0] + READS[READS.index("[[matrix]]"):]
    out = tmp_path / "run"
    r = run_cli("run", _suite(tmp_path, stall), "--target", "nbdkit:memory?size=4MiB&stall=500ms@200ms",
                "--runtime", "1.2", "--out", out, "--quiet")
    assert r.code == 0, r.err
    (point,) = load_run(out).points
    assert point.measurement is not None
    clat = point.measurement.directions["read"].clat
    assert clat is not None
    assert clat.max_ns >= 250e6  # at least half the stall, whatever the host's speed
    assert any(w.startswith("latency outlier: the slowest read took") for w in point.warnings)
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Latency outliers (stalls)" in report


def test_every_read_delayed(tmp_path: Path) -> None:
    rnd = READS.split("[[phase]]")[0] + READS[READS.index("[[matrix]]"):]
    out = tmp_path / "run"
    r = run_cli("run", _suite(tmp_path, rnd), "--target", "nbdkit:memory?size=4MiB&delay-read=20ms",
                "--out", out, "--quiet", "--no-report")
    assert r.code == 0, r.err
    (point,) = load_run(out).points
    assert point.measurement is not None
    # fio's total latency (lat) starts before the request is sent; its completion latency starts at fio's
    # commit, which on a loaded host can come after the nbd engine has already sent the request (clat was seen
    # 4 ms under the delay), so the delay is a lower bound of lat only
    lat = point.measurement.directions["read"].lat
    assert lat is not None
    assert lat.min_ns >= 19e6  # every read waited the delay
    assert not any("outlier" in w for w in point.warnings)  # slow, but evenly: no stall


@pytest.fixture
def nbd_server(tmp_path: Path) -> Iterator[Path]:
    """An nbdkit memory disk someone else runs, on a Unix socket; stopped afterwards."""
    sock = tmp_path / "nbd.sock"
    proc = subprocess.Popen(["nbdkit", "--foreground", "--exit-with-parent", "--unix", str(sock), "memory",
                             "size=8M"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if sock.exists():
                break
            time.sleep(0.01)
        yield sock
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_an_nbd_uri_names_a_server_someone_else_runs(nbd_server: Path, tmp_path: Path) -> None:
    uri = f"nbd+unix:///?socket={nbd_server}"
    r = run_cli("info", uri)
    assert r.code == 0, r.err
    assert "8 MiB" in r.out
    assert "confirmation" in r.out  # its data is someone's: writing asks first
    r = run_cli("run", "integrity", "--target", uri, "--out", tmp_path / "refused", traceback=False)
    assert r.code == ExitCode.UNSAFE
    assert not (tmp_path / "refused").exists()
    out = tmp_path / "run"
    r = run_cli("run", "integrity", "--target", uri, "--yes", "--out", out, "--quiet", "--no-report")
    assert r.code == 0, r.err
    assert load_run(out).events[-1]["passed"] is True
    assert run_cli("verify", out, "--no-report").code == 0  # the server still holds the data


@pytest.mark.parametrize("mixed", [False, True])
def test_integrity_catches_corruption_planted_between_write_and_check(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      mixed: bool) -> None:
    img = tmp_path / "disk.img"
    planted = [5 * 4096 + 123, 9 * 4096 + 17, 600 * 4096 + 0]  # data, header offset field, magic

    real = executor_module.executor_for

    class Corrupting:
        """The real executor; after the write point, flips one byte at each planted offset of the file."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.name = inner.name

        def version(self) -> str:
            return str(self.inner.version())

        def run_point(self, point: TestPoint, target: Target, point_dir: Path, on_live: Any = None) -> Measurement:
            m: Measurement = self.inner.run_point(point, target, point_dir, on_live)
            if point.id == "01-write":
                flip_bytes(img, planted)
            return m

    monkeypatch.setattr(executor_module, "executor_for", lambda target, gate: Corrupting(real(target, gate)))
    out = tmp_path / "run"
    extra = ["--mixed", "--runtime", "0.3"] if mixed else []
    r = run_cli("run", "integrity", "--target", f"nbdkit:file:{img}?size=4MiB", "--out", out, "--quiet", *extra)
    run = load_run(out)
    # mixed mode: the random writes may rewrite every planted block before any read sees it (then the run passes)
    assert r.code == (0 if run.events[-1]["passed"] else ExitCode.NEGATIVE), r.err
    check = run.points[-1]
    assert check.point.id == ("03-check" if mixed else "02-check")
    assert check.measurement is not None
    found = check.measurement.extra["verify"]["listed"]
    if mixed:  # the random writes may have rewritten a corrupted block: nothing else may be reported
        assert {f["offset"] for f in found} <= {off - off % 4096 for off in planted}
        assert run.events[-1]["passed"] is (not found and not run.points[1].measurement.extra["verify"]["mismatches"])
        assert r.code == (0 if run.events[-1]["passed"] else ExitCode.NEGATIVE)
    else:
        assert sorted(f["offset"] for f in found) == [off - off % 4096 for off in planted]
        assert run.events[-1]["passed"] is False
    _no_stray_servers()
    monkeypatch.setattr(executor_module, "executor_for", real)
    r = run_cli("verify", out, "--no-report")  # the file is still there: the same mismatches, read-only
    assert r.code == (ExitCode.NEGATIVE if found else 0)


def test_verify_of_a_memory_disk_says_the_data_is_gone(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli("run", "integrity", "--target", "nbdkit:memory?size=2MiB", "--out", out, "--quiet",
                   "--no-report").code == 0
    r = run_cli("verify", out, traceback=False)
    assert r.code == ExitCode.TARGET
    assert "ended with its run" in r.err
