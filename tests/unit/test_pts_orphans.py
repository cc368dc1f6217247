"""`ssdlab resume` stops fio processes a killed run left behind, and only those."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from ssdlab.run.resume import stop_orphan_fio as _stop_orphan_fio


def _fake_fio(tmp_path: Path, job: Path) -> subprocess.Popen[bytes]:
    """A process whose argv[0] is '.../fio' and whose command line names `job` (python sleeping)."""
    fio = tmp_path / "bin" / "fio"
    fio.parent.mkdir(exist_ok=True)
    if not fio.exists():
        fio.symlink_to(sys.executable)
    return subprocess.Popen([str(fio), "-c", "import time; time.sleep(60)", str(job)])


def test_only_fio_working_on_this_run_is_stopped(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    mine = _fake_fio(tmp_path, run_dir / "points" / "iops-r01-rnd4k-0-100" / "job.fio")
    other = _fake_fio(tmp_path, tmp_path / "other-run" / "points" / "x" / "job.fio")
    try:
        time.sleep(0.2)
        stopped = _stop_orphan_fio(run_dir)
        assert stopped == [mine.pid]
        assert mine.wait(timeout=10) == -9
        assert other.poll() is None
    finally:
        for p in (mine, other):
            if p.poll() is None:
                p.kill()
                p.wait()
