"""Small synthetic PTS runs for unit tests: a plan context over a 256 MiB file and a point result with a given
IOPS value (a write direction whose I/O count, bytes and mean latency follow from it)."""

from __future__ import annotations

from typing import Any

from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, PointResult, PointStatus, TestPoint
from ssdlab.suites.base import PlanContext
from ssdlab.suites.pts import common

MiB = 1024**2


def pts_context(**options: Any) -> PlanContext:
    """PTS's defaults with three block sizes and three mixes (a short plan), then `options` on top."""
    opts: dict[str, Any] = {o.key: o.default for o in common.pts_options()}
    opts.update({"pts_block_sizes": "1024,64,4", "pts_mixes": "100/0,65/35,0/100"} | options)
    return PlanContext(capacity=256 * MiB, logical_block_size=512, target_kind="file", runtime_s=1.0,
                       options=opts)


def pts_result(p: TestPoint, value: float, status: PointStatus = "ok") -> PointResult:
    """`p` finished at `value` IOPS (a purge point: finished, no measurement)."""
    if p.phase == "purge":
        return PointResult(point=p, status="ok", started="", finished="", reason="purge")
    w = p.workload
    lat = LatencyStats(kind="clat", n=int(value), min_ns=1.0, max_ns=4e9 / value, mean_ns=1e9 / value,
                       stddev_ns=1.0, percentiles_ns={})
    d = DirectionStats(iops=value, bw_bytes=value * w.bs, io_bytes=int(value * w.bs), total_ios=int(value),
                       runtime_ms=1000, clat=lat)
    return PointResult(point=p, status=status, started="", finished="",
                       measurement=Measurement(engine="test", engine_version="0", directions={"write": d}))
