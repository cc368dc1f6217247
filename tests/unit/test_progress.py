"""Progress output: plain lines off a terminal, throttled live lines, quiet mode."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from ssdlab.fio.status import StatusRates, documents
from ssdlab.results.live import LiveSample
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, PointResult, Run, TestPoint, Workload
from ssdlab.run import progress
from ssdlab.run.eta import Eta

FIXED = Eta(expected_s=75, worst_s=75, expected_points=8, worst_points=8, next_s=10)
ADAPTIVE = Eta(expected_s=40, worst_s=3170, expected_points=120, worst_points=3174, next_s=2)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _point() -> TestPoint:
    return TestPoint(id="01-x", label="RND4K Q1T1 Read", workload=Workload(rw="randread", bs=4096, runtime_s=5))


def test_make_progress_picks_by_terminal_and_quiet() -> None:
    assert isinstance(progress.make_progress(io.StringIO()), progress.PlainProgress)
    assert isinstance(progress.make_progress(_Tty()), progress.TermProgress)
    assert isinstance(progress.make_progress(_Tty(), quiet=True), progress.QuietProgress)


def test_plain_progress_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr("ssdlab.run.progress.time.monotonic", lambda: clock[0])
    out = io.StringIO()
    p = progress.PlainProgress(out, live_every_s=10)
    p.run_start("quick on null", FIXED)
    p.point_start(_point(), 1, FIXED)
    p.live(LiveSample(elapsed_s=1, read_iops=1234.0, read_mbps=5.0, mean_lat_us=80.0))  # too soon: silent
    clock[0] += 2.5
    p.live(LiveSample(elapsed_s=2.5, read_iops=2000.0, read_mbps=8.2, mean_lat_us=75.5))  # still too soon
    clock[0] += 8.5
    p.live(LiveSample(elapsed_s=4, read_iops=2000.0, read_mbps=8.2, mean_lat_us=75.5))
    clat = LatencyStats(kind="clat", n=1, min_ns=1, max_ns=1, mean_ns=42_000, stddev_ns=0, percentiles_ns={})
    d = DirectionStats(iops=2500.0, bw_bytes=10.24e6, io_bytes=1, total_ios=1, runtime_ms=1, clat=clat)
    m = Measurement(engine="fio", engine_version="3.33", directions={"read": d})
    p.point_end(PointResult(point=_point(), status="ok", started="", finished="", measurement=m,
                            warnings=("fio threads were 99% busy",)))
    lines = out.getvalue().splitlines()
    assert lines == [
        "quick on null: 8 points, estimated 1m15s",
        "[1/8] RND4K Q1T1 Read (ETA 1m15s)",
        # 80 % of the 5-s point done after 11 s of wall time: 2.75 s of it left, plus 65 s of later points
        "    RND4K Q1T1 Read:  80%  2,000 IOPS  8.2 MB/s  75.5 µs  ETA 1m08s",
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
    assert out.getvalue().splitlines() == ["    -> skipped: bs too small", "run interrupted: 0 measured points"]


def test_terminal_progress_runs_on_a_fake_terminal() -> None:
    out = _Tty()
    p = progress.make_progress(out)
    p.run_start("quick on null", ADAPTIVE)
    p.point_start(_point(), 1, ADAPTIVE)
    p.live(LiveSample(elapsed_s=1, read_iops=12345.0))
    p.point_end(PointResult(point=_point(), status="skipped", started="", finished="", reason="r"))
    p.note("a note")
    p.run_end(Run(schema_version=1, ssdlab_version="0", run_id="r", suite="quick", status="complete",
                  created="", options={}, target={}, host={}))
    text = out.getvalue()
    assert "quick on null" in text
    assert "a note" in text
    assert "12,345 IOPS" in text  # the live line
    assert "at most 3174 points" in text  # the worst case of an adaptive suite


def test_terminal_progress_draws_each_change_itself_without_a_refresh_thread() -> None:
    """Nothing on the display moves by itself: it is drawn when a point starts, a sample arrives or a point ends,
    not ten times a second by a thread (which cost more CPU than the run's own bookkeeping)."""
    import threading

    out = _Tty()
    before = {t.ident for t in threading.enumerate()}
    p = progress.make_progress(out)
    p.run_start("quick on null", FIXED)
    assert {t.ident for t in threading.enumerate()} == before  # no refresh thread
    p.point_start(_point(), 3, FIXED)
    assert "3/10" in out.getvalue()  # drawn at once, not at the next tick
    p.live(LiveSample(elapsed_s=1, read_iops=4321.0))
    assert "4,321 IOPS" in out.getvalue()
    drawn = len(out.getvalue())
    p.point_end(PointResult(point=_point(), status="skipped", started="", finished="", reason="r"))
    after = out.getvalue()[drawn:]
    assert "skipped: r" in after
    assert after.count("3/10") == 1  # the display redrawn once under the printed line, its bar advanced
    assert "\x1b[91m" + "━" * 12 + "\x1b[0m\x1b[90m" in after  # 3 of 10 done: 12 of the bar's 40 cells
    p.run_end(Run(schema_version=1, ssdlab_version="0", run_id="r", suite="quick", status="complete",
                  created="", options={}, target={}, host={}))


def test_terminal_display_is_redrawn_in_place_and_cut_to_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each redraw erases the lines it drew before (a wrapped line would not be erased: lines are cut to the
    terminal's width); printed lines stay above it; the cursor comes back at the end; NO_COLOR: plain text."""
    import re

    monkeypatch.setenv("NO_COLOR", "1")
    out = _Tty()  # no terminal size to read: 80 columns
    p = progress.make_progress(out)
    long = TestPoint(id="01-x", label="L" * 200 + " 漢字", workload=Workload(rw="randread", bs=4096, runtime_s=5))
    p.run_start("quick on null", FIXED)
    p.point_start(long, 1, FIXED)
    p.live(LiveSample(elapsed_s=1, read_iops=1.0, mean_lat_us=9.0 * 10**80))
    p.note("a note")
    p.run_end(Run(schema_version=1, ssdlab_version="0", run_id="r", suite="quick", status="complete",
                  created="", options={}, target={}, host={}))
    text = out.getvalue()
    assert "\x1b[9" not in text
    assert "\x1b[1m" not in text
    frames = text.split("\r")  # each redraw starts by erasing what is on the screen
    assert all(f.startswith("\x1b[2K") for f in frames[1:])
    assert len(frames) == 5  # drawn at the start, then redrawn at the point's start, its sample, the note, the end
    assert frames[3].startswith("\x1b[2K\x1b[1A\x1b[2Ka note\n")  # bar and live line erased, the note above
    for line in re.split(r"[\r\n]", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)):
        assert len(line) <= 79, line
    assert "L…" in text
    assert text.endswith("\n\x1b[?25h")
    p.run_end(Run(schema_version=1, ssdlab_version="0", run_id="r", suite="quick", status="complete",
                  created="", options={}, target={}, host={}))
    assert out.getvalue() == text  # once


def test_terminal_display_gives_the_cursor_back_at_exit_when_the_run_never_ended(
        monkeypatch: pytest.MonkeyPatch) -> None:
    hooks: list[Callable[[], None]] = []
    monkeypatch.setattr("ssdlab.run.progress.atexit.register", hooks.append)
    out = _Tty()
    p = progress.make_progress(out)
    p.run_start("quick on null", FIXED)
    assert "\x1b[?25l" in out.getvalue()  # hidden while the display is drawn
    for hook in hooks:  # the process exits: an error ended the run before run_end
        hook()
    assert out.getvalue().endswith("\n\x1b[?25h")


def test_adaptive_eta_shows_expected_and_worst_case(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    p = progress.PlainProgress(out)
    p.run_start("pts on sim:tlc-4k", ADAPTIVE)
    p.point_start(_point(), 12, ADAPTIVE)
    assert out.getvalue().splitlines() == [
        "pts on sim:tlc-4k: about 120 points, 40s expected; at most 3174 points (about 52m50s if all run)",
        "[12/~131] RND4K Q1T1 Read (ETA 40s expected, at most 3174 points)",
    ]


def test_live_line_of_a_size_based_phase_counts_bytes() -> None:
    wipc = TestPoint(id="w", label="WIPC", workload=Workload(rw="write", bs=131072, io_bytes=8 << 30))
    sample = LiveSample(elapsed_s=30, write_iops=8000.0, write_mbps=1048.6, mean_lat_us=3900.0,
                        bytes_done=2 << 30)
    assert progress.fraction_done(wipc, sample) == 0.25
    assert progress.live_text(sample, 0.25, 95) == " 25%  8,000 IOPS  1,048.6 MB/s  3,900.0 µs  ETA 1m35s"


def test_status_lines_of_a_real_fio_run_give_per_interval_rates(golden: Callable[[str], Path]) -> None:
    """fio 3.33 with --status-interval=1: two status documents and the final one (golden capture)."""
    lines = golden("file-randread-status.json").read_text(encoding="utf-8").splitlines(keepends=True)
    docs = [doc for _, doc in documents(lines)]
    assert len(docs) == 3  # fio's note line before the first document is skipped
    rates = StatusRates()
    samples = [rates.feed(d) for d in docs]
    assert all(s is not None for s in samples)
    first, second, last = samples  # type: ignore[misc]
    # first interval: 13415 reads in the job's first 892 ms (fio itself reports 15039.24 IOPS then)
    assert first.read_iops == pytest.approx(13415 / 0.892)
    assert first.read_iops == pytest.approx(docs[0]["jobs"][0]["read"]["iops"], rel=1e-6)
    assert first.read_mbps == pytest.approx(54923264 / 0.892 / 1e6)
    assert first.mean_lat_us == pytest.approx(66.227924, rel=1e-6)  # the interval's mean clat (µs)
    assert first.write_iops == 0
    # second interval: the counters' differences over 999 ms; the mean latency of those I/Os alone
    assert second.read_iops == pytest.approx((29273 - 13415) / 0.999)
    lat = (64330.1747 * 29273 - 66227.924189 * 13415) / (29273 - 13415) / 1000
    assert second.mean_lat_us == pytest.approx(lat, rel=1e-6)
    assert last.read_iops == pytest.approx((31013 - 29273) / 0.109)
    assert last.bytes_done == 127029248
    assert rates.feed(docs[-1]) is None  # the same document again adds no run time
