"""The characterization `ssdlab trace info` prints, on traces whose answers are known by construction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.trace.characterize import (
    characterize,
    footprint,
    hot_shares,
    implied_qd,
    interarrival,
    sequentiality,
)
from ssdlab.trace.formats import load
from ssdlab.trace.model import Trace

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"


def trace(offset: list[int], size: list[int], op: list[int] | None = None, time: list[int] | None = None,
          latency: list[int] | None = None, volume: list[int] | None = None) -> Trace:
    n = len(offset)
    return Trace(path="t", format="test", time_ns=np.asarray(time if time is not None else range(n), np.int64),
                 offset=np.asarray(offset, np.int64), size=np.asarray(size, np.int64),
                 op=np.asarray(op if op is not None else [0] * n, np.uint8),
                 latency_ns=None if latency is None else np.asarray(latency, np.int64),
                 volume=None if volume is None else np.asarray(volume, np.int32),
                 volumes=tuple(str(v) for v in sorted(set(volume or []))))


def test_footprint_is_the_union_of_the_ranges() -> None:
    t = trace([0, 4096, 2048, 100_000, 100_000], [8192, 4096, 1024, 10, 10])
    assert footprint(t) == 8192 + 10  # [0, 8192) covers the next two; the repeat counts once
    v = trace([0, 0], [4096, 4096], volume=[0, 1])
    assert footprint(v) == 8192  # two volumes: two address spaces


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(1, 40)), min_size=1, max_size=50))
def test_footprint_against_counting_bytes(ranges: list[tuple[int, int]]) -> None:
    t = trace([o for o, _ in ranges], [s for _, s in ranges])
    assert footprint(t) == len({b for o, s in ranges for b in range(o, o + s)})


def test_sequentiality() -> None:
    # a read stream 0,4k,8k interleaved with writes; the third write restarts the write stream
    t = trace(offset=[0, 10**6, 4096, 10**6 + 4096, 8192, 5 * 10**6],
              size=[4096] * 6, op=[0, 1, 0, 1, 0, 1])
    s = sequentiality(t)
    assert s["previous"] == 0.0  # no I/O starts where the one before it ended
    assert s["same_direction"] == pytest.approx(3 / 6)  # 4k, 10^6+4k, 8k follow their direction's last
    assert s["window"] == pytest.approx(3 / 6)


def test_hot_shares() -> None:
    # 100 blocks: block 0 has 901 I/Os, the other 99 one each
    counts = np.array([901] + [1] * 99, dtype=np.int64)
    h = hot_shares(counts)
    assert h["hot1"] == pytest.approx(901 / 1000)  # the hottest 1 % is one block
    assert h["hot10"] == pytest.approx(910 / 1000)


def test_interarrival() -> None:
    ia = interarrival(np.array([0, 1000, 1000, 4000], dtype=np.int64))  # gaps 1, 0, 3 µs
    assert ia["mean"] == pytest.approx(4 / 3)
    assert ia["max"] == pytest.approx(3.0)
    assert ia["zero_share"] == pytest.approx(1 / 3)


def test_implied_queue_depth_is_littles_law() -> None:
    # one I/O every 1 ms, each taking 3 ms: three in flight in the steady middle
    n = 1000
    t = trace([0] * n, [4096] * n, time=[i * 1_000_000 for i in range(n)], latency=[3_000_000] * n)
    qd = implied_qd(t)
    assert qd is not None
    assert qd["p50"] == 3.0
    assert qd["max"] == 3.0
    assert qd["mean"] == pytest.approx(3.0, rel=0.01)  # sum of response times over the span
    assert implied_qd(trace([0], [1])) is None


def test_characterize_a_golden_trace() -> None:
    c = characterize(load(DATA / "alibaba.csv"))
    assert c.ios == 6
    assert c.duration_s == pytest.approx(0.003)
    assert c.directions["read"].share_ios == pytest.approx(0.5)
    assert c.directions["read"].share_bytes == pytest.approx(24576 / 40960)
    assert dict(c.sizes) == {4096: 4, 8192: 1, 16384: 1}
    # volume 3: 4096 follows 0 (previous I/O of the volume); 8192 follows the write at 4096 (same direction)
    assert c.sequential["same_direction"] == pytest.approx(1 / 6)
    assert c.footprint_bytes == 16384 + 16384 + 4096  # volume 3: [0,16k); volume 12: 16k + 4k
    assert c.qd is None
    assert c.latency_us is None
    d = c.as_dict()
    assert d["volumes"] == [["3", 4], ["12", 2]]
