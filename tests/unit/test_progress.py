"""Progress output: plain lines off a terminal, throttled live lines, quiet mode."""

from __future__ import annotations

import io

import pytest

from ssdlab import progress
from ssdlab.executor import LiveSample
from ssdlab.model import DirectionStats, LatencyStats, Measurement, PointResult, Run, TestPoint, Workload


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _point() -> TestPoint:
    return TestPoint(id="01-x", label="RND4K Q1T1 Read", workload=Workload(rw="randread", bs=4096, runtime_s=5))


def test_make_progress_picks_by_terminal_and_quiet() -> None:
    assert isinstance(progress.make_progress(io.StringIO()), progress.PlainProgress)
    assert isinstance(progress.make_progress(_Tty()), progress.RichProgress)
    assert isinstance(progress.make_progress(_Tty(), quiet=True), progress.QuietProgress)


def test_plain_progress_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr("ssdlab.progress.time.monotonic", lambda: clock[0])
    out = io.StringIO()
    p = progress.PlainProgress(out, live_every_s=10)
    p.run_start("quick on null", 8, 75)
    p.point_start(_point(), 1, 8, 75)
    p.live(LiveSample(elapsed_s=1, read_iops=1234.0, read_mbps=5.0, mean_lat_us=80.0))  # too soon: silent
    clock[0] += 11
    p.live(LiveSample(elapsed_s=11, read_iops=2000.0, read_mbps=8.2, mean_lat_us=75.5))
    clat = LatencyStats(kind="clat", n=1, min_ns=1, max_ns=1, mean_ns=42_000, stddev_ns=0, percentiles_ns={})
    d = DirectionStats(iops=2500.0, bw_bytes=10.24e6, io_bytes=1, total_ios=1, runtime_ms=1, clat=clat)
    m = Measurement(engine="fio", engine_version="3.33", directions={"read": d})
    p.point_end(PointResult(point=_point(), status="ok", started="", finished="", measurement=m,
                            warnings=("fio threads were 99% busy",)))
    lines = out.getvalue().splitlines()
    assert lines == [
        "quick on null: 8 points, estimated 1m15s",
        "[1/8] RND4K Q1T1 Read (ETA 1m15s)",
        "    RND4K Q1T1 Read: 11s  2,000 IOPS  8.2 MB/s  75.5 µs",
        "    -> read 2,500 IOPS 10.2 MB/s, 42.0 µs",
        "    warning: fio threads were 99% busy",
    ]


def test_skipped_and_run_end_lines() -> None:
    out = io.StringIO()
    p = progress.PlainProgress(out)
    p.point_end(PointResult(point=_point(), status="skipped", started="", finished="", reason="bs too small"))
    run = Run(schema_version=1, ssdlab_version="0", run_id="r", suite="quick", status="interrupted", created="",
              options={}, target={}, host={})
    p.run_end(run)
    assert out.getvalue().splitlines() == ["    -> skipped: bs too small", "run interrupted: 0 points measured"]


def test_rich_progress_runs_on_a_fake_terminal() -> None:
    out = _Tty()
    p = progress.make_progress(out)
    p.run_start("quick on null", 1, 5)
    p.point_start(_point(), 1, 1, 5)
    p.live(LiveSample(elapsed_s=1, read_iops=10.0))
    p.point_end(PointResult(point=_point(), status="skipped", started="", finished="", reason="r"))
    p.note("a note")
    p.run_end(Run(schema_version=1, ssdlab_version="0", run_id="r", suite="quick", status="complete",
                  created="", options={}, target={}, host={}))
    text = out.getvalue()
    assert "quick on null" in text
    assert "a note" in text
