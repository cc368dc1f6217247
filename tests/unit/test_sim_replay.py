"""The simulator's native trace replay (_core.replay via sim/replay.py): every I/O of the trace replayed once, in
virtual time no earlier than its arrival, as fio replays (streams of queue depth 1, timed or as fast as
possible), with the same Measurement every point has, write amplification and GC over
time, and a drive state that a resumed run rebuilds exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ssdlab.results import hist
from ssdlab.results.model import PointResult, TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.run.target import parse_target
from ssdlab.sim import core
from ssdlab.sim.replay import ReplayingExecutor
from ssdlab.sim.target import SimTarget
from ssdlab.trace.mapping import ReplaySpec

SPEC = "sim:tlc-4k?capacity=256MiB"


def target() -> SimTarget:
    t = parse_target(SPEC)
    assert isinstance(t, SimTarget)
    return t


def write_trace(path: Path, n: int, gap_us: int, seed: int = 1, reads: float = 0.6) -> Path:
    rng = np.random.default_rng(seed)
    lines = [f"1,{'R' if rng.random() < reads else 'W'},{int(rng.integers(0, (128 << 20) // 4096)) * 4096},"
             f"{int(rng.choice([4096, 8192, 65536]))},{1577836800000000 + i * gap_us}" for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def replay_point(trace: Path, **kw: object) -> TestPoint:
    s = ReplaySpec(trace=str(trace), **kw)  # type: ignore[arg-type]
    return TestPoint(id="replay", label="r", workload=Workload(rw="randrw", bs=4096, log_interval_ms=1000),
                     tags=PointTags.of(replay=s.to_tags()))


def run(t: SimTarget, p: TestPoint, run_dir: Path):  # type: ignore[no-untyped-def]
    return ReplayingExecutor().run_point(p, t, run_dir / "points" / p.id)


@pytest.mark.parametrize("kw", [{}, {"speed": 4.0}, {"speed": None, "depth": 1}, {"speed": None, "depth": 32}])
def test_every_io_once_per_direction(tmp_path: Path, kw: dict[str, object]) -> None:
    tr = write_trace(tmp_path / "t.csv", 3000, 200)
    from ssdlab.trace.formats import load

    want = load(tr).counts()
    m = run(target(), replay_point(tr, **kw), tmp_path / "run")
    got = {d: (s.total_ios, s.io_bytes) for d, s in m.directions.items()}
    assert got == {d: v for d, v in want.items() if v[0]}
    rec = m.extra.replay
    assert rec["missing"] == []
    assert rec["ios"] == 3000


def test_a_timed_replay_that_keeps_up_lasts_the_traces_duration(tmp_path: Path) -> None:
    """One I/O every 10 ms: the drive keeps up, every I/O is issued at its arrival, and the replay ends at the
    last arrival plus the last I/O's latency."""
    tr = write_trace(tmp_path / "t.csv", 500, 10_000)
    m = run(target(), replay_point(tr), tmp_path / "run")
    rec = m.extra.replay
    assert rec["lag_us"]["max"] == 0.0
    assert rec["trace_s"] == pytest.approx(4.99)
    assert 4.99 < rec["replay_s"] < 4.99 + 0.01  # plus one I/O's latency
    assert rec["slowdown"] == pytest.approx(1.0, abs=0.002)
    assert len(m.series["time_s"]) == 5
    assert m.series["offered_iops"] == [100.0] * 5
    two = run(target(), replay_point(tr, speed=2.0), tmp_path / "run2").extra.replay
    assert two["replay_s"] == pytest.approx(4.99 / 2, abs=0.01)


def test_as_fast_as_possible_is_faster_deeper(tmp_path: Path) -> None:
    tr = write_trace(tmp_path / "t.csv", 4000, 1000, reads=1.0)
    q1 = run(target(), replay_point(tr, speed=None, depth=1), tmp_path / "a").extra.replay
    q32 = run(target(), replay_point(tr, speed=None, depth=32), tmp_path / "b").extra.replay
    assert q32["achieved_iops"] > 2 * q1["achieved_iops"]  # the drive's dies read in parallel


def test_model_series_over_time(tmp_path: Path) -> None:
    tr = write_trace(tmp_path / "t.csv", 20_000, 100, reads=0.0)
    m = run(target(), replay_point(tr), tmp_path / "run")
    assert len(m.series["wa"]) == len(m.series["time_s"]) == len(m.series["gc_runs"])
    assert m.extra.sim["simulated_ios"] == 20_000
    assert (tmp_path / "run" / "points" / "replay" / "hist_clat_hist.1.log").is_file()
    assert m.extra.hist_log_ms == 1000


def test_core_semantics_directly() -> None:
    """Streams of depth 1: an I/O waits for its stream's previous one; one queue: at most `depth` in flight."""
    t = target()
    dev = t.device()
    n = 64
    arr = np.zeros(n, dtype=np.int64)
    off = (np.arange(n, dtype=np.int64) * 4096)
    ln = np.full(n, 4096, dtype=np.int64)
    op = np.zeros(n, dtype=np.uint8)
    for streams, depth in ((4, 1), (1, 4)):
        issue, done, bucket = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.uint16)
        slots, state, acc = np.zeros(8, np.int64), np.zeros(12, np.int64), np.zeros(6)
        assert core().replay(dev, arr, off, ln, op, issue, done, bucket, slots, state, acc, streams, depth, 2**62,
                             True)
        lat = done - issue
        assert bucket.tolist() == hist.values_to_idx(lat).tolist()  # fio's bucket of each latency
        assert (state[6], state[9]) == (lat.min(), lat.max())  # reads: direction 0
        assert acc[0] == pytest.approx(float(lat.sum()))
        assert acc[3] == pytest.approx(float((lat.astype(float) ** 2).sum()))
        assert np.all(done > issue)
        if streams > 1:
            assert np.all(issue[streams:] >= done[:-streams])  # stream i mod 4 waits for its previous I/O
        else:
            assert np.all(np.diff(issue) >= 0)  # one queue: in trace order
        inflight = [(issue <= x) & (done > x) for x in issue]
        assert max(int(f.sum()) for f in inflight) <= 4
    bad = off.copy()
    bad[3] = 1 << 40
    with pytest.raises(ValueError, match="outside the drive"):
        core().replay(dev, arr, bad, ln, op, np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.uint16),
                      np.zeros(8, np.int64), np.zeros(12, np.int64), np.zeros(6), 1, 4, 2**62, True)


def test_a_resumed_run_rebuilds_the_drive_state(tmp_path: Path) -> None:
    tr = write_trace(tmp_path / "t.csv", 5000, 100, reads=0.3)
    p = replay_point(tr)
    first = target()
    m = run(first, p, tmp_path / "run")
    again = target()
    ReplayingExecutor().replay(PointResult(point=p, status="ok", started="", finished="", measurement=m), again)
    assert first.device().save() == again.device().save()
