"""The stability suite's consistency figure: the 0.1st percentile of per-second IOPS over their mean, per direction
(Intel's promise for the DC S3500: >= 90 % for reads, >= 75 % for writes, 99.9 % of the time)."""

from __future__ import annotations

import pytest

from ssdlab.results.model import DirectionStats, Measurement, PointResult, TestPoint, Workload
from ssdlab.suites.stability import consistency, point_verdict


def _series(reads: list[float], writes: list[float]) -> dict[str, list[float]]:
    return {"time_s": [float(i + 1) for i in range(len(reads))], "read_iops": reads, "write_iops": writes}


def test_the_slowest_thousandth_over_the_mean_per_direction() -> None:
    reads = [1000.0] * 1999 + [800.0] + [1000.0]  # the last (partial) second is dropped
    writes = [300.0] * 2001
    got = consistency(_series(reads, writes))
    assert got["read"] == pytest.approx(1000.0 / (1000.0 - 0.1))  # 2000 s: the 2nd slowest is 1000
    assert got["write"] == pytest.approx(1.0)
    dips = [1000.0] * 990 + [500.0] * 10 + [1000.0]
    assert consistency(_series(dips, [0.0] * 1001))["read"] == pytest.approx(500.0 / 995.0)
    assert "write" not in consistency(_series(dips, [0.0] * 1001))  # no writes: no figure


def test_the_verdict_states_and_records_it() -> None:
    series = _series([1000.0] * 30 + [900.0] + [1000.0], [400.0] * 32)
    d = DirectionStats(iops=1000.0, bw_bytes=4096e3, io_bytes=1, total_ios=1, runtime_ms=1000)
    m = Measurement(engine="sim", engine_version="x", directions={"read": d}, jobs=1, runtime_ms=32000,
                    series=series)
    r = PointResult(point=TestPoint(id="s", label="stability", workload=Workload(rw="randrw", bs=4096)),
                    status="ok", started="", finished="", measurement=m)
    event = point_verdict(r, None, None)
    assert event["consistency_read"] == pytest.approx(900.0 / (30900.0 / 31))
    assert event["consistency_write"] == pytest.approx(1.0)
    # named as Intel names it (its DC S3500 promise), not a bare percentile ratio
    assert ("IOPS consistency (Intel's figure: the 0.1st percentile of 1-s IOPS / their mean): read 90.3%, "
            "write 100.0%") in event["reason"]
