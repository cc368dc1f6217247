"""What `ssdlab run` asks of the host once per run, not once per step: the target's record (a file of someone
else's is probed with blkid for a signature) is read by the run's setup and stored as it was read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from ssdlab.fio.executor import FioExecutor
from ssdlab.results.model import DirectionStats, Measurement, TestPoint
from ssdlab.targets import sysfs

SUITE = """name = "probes"
summary = "two random-read points"
runtime_s = 1

[[matrix]]
name = "rr"
rw = "randread"
bs = "4k"
numjobs = [1]
iodepth = [1, 2]
"""


def test_a_file_of_someone_elses_is_probed_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"\1" * (2 << 20))  # an existing file ssdlab did not create
    suite = tmp_path / "probes.toml"
    suite.write_text(SUITE, encoding="utf-8")
    probed: list[str] = []

    def signature(path: str) -> str:
        probed.append(path)
        return ""

    def measured(self: FioExecutor, point: TestPoint, target: object, point_dir: Path,
                 on_live: object = None) -> Measurement:
        d = DirectionStats(iops=1000.0, bw_bytes=4096e3, io_bytes=4096 * 1000, total_ios=1000, runtime_ms=1000)
        return Measurement(engine="fio", engine_version="3.33", directions={"read": d})

    monkeypatch.setattr(sysfs, "signature", signature)
    monkeypatch.setattr(FioExecutor, "run_point", measured)
    monkeypatch.setattr(FioExecutor, "version", lambda self: "3.33")
    out = tmp_path / "run"
    res = run_cli("run", suite, "--target", f"file:{data}", "--out", out, "--no-report", "-q")
    assert res.code == 0, res.err
    assert probed == [str(data)]
    stored = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert stored["target"]["path"] == str(data)
    assert stored["target"]["write_safe"] is True
    assert len(stored["points"]) == 2
