"""Per-device results of a point that ran on several devices at once (one host or a host group).

The executors build one fio job section per device (fio/job.build_device_job); this module turns fio's
per-section results into Measurement.parts, one PartResult per device in the target's device order. The
point's own measurement stays the exact aggregate over all devices, as fio's parser computed it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ssdlab.results.model import Measurement, PartResult


def device_parts(doc: Mapping[str, Any], names: Sequence[tuple[str, str]], *, point_id: str = "",
                 point_dir: Path | None = None, log_interval_ms: int | None = None,
                 missing: Mapping[str, str] | None = None) -> tuple[PartResult, ...]:
    """One PartResult per (host, device) in `names`: its measurement from fio's document, or why it has none.

    `missing` maps a host to the reason its devices have no result (e.g. the agent disconnected); a device
    fio reported an error for is 'failed' and keeps what it measured."""
    from ssdlab.fio.job import device_section_name
    from ssdlab.fio.logs import read_series
    from ssdlab.fio.parse import results_by_device

    results = results_by_device(doc)
    lost = dict(missing or {})
    parts = []
    for i, (host, name) in enumerate(names):
        r = results.get(i)
        if r is None:
            why = lost.get(host) or "fio returned no result for this device"
            parts.append(PartResult(host=host, device=name, status="failed", reason=why))
            continue
        pm = r.measurement
        if log_interval_ms and point_dir is not None and point_id:
            series = read_series(point_dir, log_interval_ms, device_section_name(point_id, i))
            pm = dataclasses.replace(pm, series=series)
        if not pm.directions and not r.error:
            parts.append(PartResult(host=host, device=name, status="failed", measurement=pm,
                                    reason="no I/O completed on this device"))
            continue
        parts.append(PartResult(host=host, device=name, status="failed" if r.error else "ok", measurement=pm,
                                reason=r.error))
    return tuple(parts)


def with_device_parts(m: Measurement, doc: Mapping[str, Any], names: Sequence[tuple[str, str]], point_dir: Path,
                      point_id: str, log_interval_ms: int | None) -> Measurement:
    """`m` (the aggregate) with each device's own result attached."""
    parts = device_parts(doc, names, point_id=point_id, point_dir=point_dir, log_interval_ms=log_interval_ms)
    return dataclasses.replace(m, parts=parts)
