"""fio's per-interval logs (write_iops_log / write_bw_log / write_lat_log with log_avg_msec).

Rows are `time_ms, value, ddir, bs[, offset], prio` (3.33). Only the first three columns are used, so
extra columns from later fio versions do not matter. Several jobs write one file each (`.N.log`); their
values are summed (IOPS, bandwidth) or averaged (latency) per interval.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path

from ssdlab.results.model import Measurement, TestPoint

LOG_PREFIX = "series"
HIST_PREFIX = "hist"
_DIRS = {0: "read", 1: "write", 2: "trim"}


def log_options(interval_ms: int) -> dict[str, str | int]:
    return {"write_iops_log": LOG_PREFIX, "write_bw_log": LOG_PREFIX, "write_lat_log": LOG_PREFIX,
            "log_avg_msec": interval_ms}


def hist_options(interval_ms: int) -> dict[str, str | int]:
    return {"write_hist_log": HIST_PREFIX, "log_hist_msec": interval_ms}


def _read_rows(path: Path) -> list[tuple[int, float, int]]:
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 3:
            continue
        try:
            rows.append((int(parts[0]), float(parts[1]), int(parts[2])))
        except ValueError:
            continue
    return rows


def read_series(point_dir: Path, interval_ms: int, section: str = "") -> dict[str, list[float]]:
    """Per-interval series from the logs in point_dir: time_s, <dir>_iops, <dir>_bw_MBps, <dir>_lat_mean_us.

    All logs of the point are summed (a point on several devices logs per device section, as
    `series_<section>_iops.N.log`); `section` reads one device's logs only."""
    prefix = f"{LOG_PREFIX}_{section}_" if section else f"{LOG_PREFIX}*_"
    sums: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    lat_n: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    last_slots: list[int] = []  # last interval each job logged: fio's final interval is often partial
    for kind, files in (("iops", "iops"), ("bw", "bw"), ("lat", "lat")):
        for path in sorted(point_dir.glob(f"{prefix}{files}.*log*")):
            rows = _read_rows(path)
            if rows:
                last_slots.append(max(1, round(rows[-1][0] / interval_ms)))
            for t_ms, value, ddir in rows:
                d = _DIRS.get(ddir)
                if d is None:
                    continue
                slot = max(1, round(t_ms / interval_ms))
                key = {"iops": f"{d}_iops", "bw": f"{d}_bw_MBps", "lat": f"{d}_lat_mean_us"}[kind]
                if kind == "bw":
                    value = value * 1024 / 1e6  # KiB/s -> MB/s
                elif kind == "lat":
                    value = value / 1000.0  # ns -> µs
                    lat_n[key][slot] += 1
                sums[key][slot] += value
    if not sums:
        return {}
    # keep only intervals every job logged at the end: a tail logged by some jobs would look like a drop
    tail = min(last_slots) if last_slots else 0
    slots = sorted({s for series in sums.values() for s in series if s <= tail})
    out: dict[str, list[float]] = {"time_s": [s * interval_ms / 1000.0 for s in slots]}
    for key, series in sorted(sums.items()):
        if key.endswith("_lat_mean_us"):
            out[key] = [series.get(s, 0.0) / max(1, lat_n[key].get(s, 0)) for s in slots]
        else:
            out[key] = [series.get(s, 0.0) for s in slots]
    return out


def hist_log_files(point_dir: Path) -> list[str]:
    """Histogram logs in point_dir: a plain point's `hist_clat_hist.N.log` and each stream's
    `hist_<stream>-d<device>_clat_hist.N.log` (fio's client names logs shipped back from agents
    `<log>.<host address>`)."""
    return sorted(p.name for p in point_dir.glob(f"{HIST_PREFIX}*_clat_hist.*log*"))


def with_logs(m: Measurement, point: TestPoint, point_dir: Path) -> Measurement:
    """`m` with what fio logged during the point in `point_dir`: its interval series (log_interval_ms) and its
    histogram-log files (hist_log_ms of the workload or of a stream, with the workload's interval)."""
    w = point.workload
    extra = m.extra
    if w.hist_log_ms or any(s.hist_log_ms for s in point.streams):
        extra = extra.replace(hist_logs=hist_log_files(point_dir))
    if w.hist_log_ms:
        extra = extra.replace(hist_log_ms=w.hist_log_ms)
    series = read_series(point_dir, w.log_interval_ms) if w.log_interval_ms else m.series
    return dataclasses.replace(m, series=series, extra=extra)
