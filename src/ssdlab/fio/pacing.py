"""How far rate-limited fio jobs fell behind their schedule, read from their histogram logs.

fio paces a job with `rate`/`rate_iops` on a fixed schedule that starts at the job's own start: with the
default linear rate process, I/O number n (from 0) is due n / rate seconds after the start, and a job that
fell behind issues back to back until it has caught up (fio 3.33 backend.c usec_for_io, io_u.c rate_ddir).
A job's lag after a completion is therefore `t - completions / rate`: the time the schedule has run
minus the time the completed I/Os were due for, the same quantity Aerospike ACT checks against
max-lag-sec after every I/O.

The histogram log (write_hist_log) gives the completions: every row is written at a completion and holds
the completions since the previous row of that direction, stamped with the time since the job's start
(stat.c add_clat_sample). Lag is known at every row, so a stall longer than the log interval is always
seen when it ends; fio 3.33 never writes the last, partial interval, whose completions only the json
totals hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.fio.histlog import LogReader
from ssdlab.fio.job import FioJob, OptionValue
from ssdlab.fio.logs import HIST_PREFIX
from ssdlab.units import parse_size


def _numbers(value: OptionValue | None) -> list[float] | None:
    """'200' or '1000,500' (fio's per-direction form) -> [200.0] / [1000.0, 500.0]; None when not plain."""
    if value is None or isinstance(value, bool):
        return None
    parts = [p.strip() for p in str(value).split(",")]
    try:
        return [float(p) if p else 0.0 for p in parts]
    except ValueError:
        return None


def mean_block_size(options: Mapping[str, OptionValue]) -> float | None:
    """Mean I/O size of a section: `bs`, or the weighted mean of the first direction of a `bssplit`."""
    try:
        split = options.get("bssplit")
        if not split:
            return float(parse_size(str(options.get("bs", "4k"))))
        total = weight = 0.0
        for entry in str(split).split(",")[0].split(":"):
            size, _, pct = entry.partition("/")
            share = float(pct) if pct else 0.0
            total += parse_size(size.strip()) * share
            weight += share
        return total / weight if weight > 0 else None
    except (SsdlabError, ValueError):
        return None


def ops_per_s(options: Mapping[str, OptionValue]) -> float | None:
    """I/Os per second one job of a section is paced at (all directions), or None when it is unpaced."""
    iops = _numbers(options.get("rate_iops"))
    if iops:
        return sum(iops) or None
    rate = _numbers(options.get("rate"))
    if not rate or not sum(rate):
        return None
    mean = mean_block_size(options)
    return sum(rate) / mean if mean else None


def schedule_lag(path: Path | str, rate: float) -> tuple[float, float, int]:
    """(largest lag in s, time of it in s, completions logged) of one job's histogram log at `rate` I/O/s.

    Rows of every direction count together (a mixed read/write job has one schedule per direction in
    fio, but one service-thread schedule in ACT: the lag is taken against the job's total rate).
    """
    reader = LogReader(path)
    times: list[np.ndarray[Any, np.dtype[np.int64]]] = []
    counts: list[np.ndarray[Any, np.dtype[np.int64]]] = []
    for ch in reader.chunks():
        per_row = np.bincount(ch.row, weights=ch.count, minlength=ch.nrows).astype(np.int64)
        times.append(ch.times)
        counts.append(per_row)
    if not times:
        return 0.0, 0.0, 0
    t = np.concatenate(times)
    c = np.concatenate(counts)
    order = np.argsort(t, kind="stable")
    t, c = t[order], c[order]
    done = np.cumsum(c)
    # in whole microseconds, as ACT's service thread counts its sleep (a float difference of two nearly equal
    # seconds would put a lag of exactly its limit on either side of it)
    lag = np.rint(t * 1000.0 - done * (1e6 / rate)) / 1e6
    i = int(np.argmax(lag))
    return float(lag[i]), float(t[i]) / 1000.0, int(done[-1])


def section_pacing(job: FioJob, point_dir: Path) -> dict[str, dict[str, float]]:
    """For every paced section of `job` that wrote histogram logs in `point_dir`: its per-job rate, job
    count and the worst lag of any of its jobs (`max_lag_s`, `at_s`), with the completions the logs hold."""
    out: dict[str, dict[str, float]] = {}
    for section in job.jobs:
        opts = section.options
        prefix = opts.get("write_hist_log")
        rate = ops_per_s(opts)
        if not prefix or not rate or not str(prefix).startswith(HIST_PREFIX):
            continue
        files = sorted(point_dir.glob(f"{prefix}_clat_hist.*log"))
        worst, at, logged = 0.0, 0.0, 0
        for i, path in enumerate(files):
            lag, when, n = schedule_lag(path, rate)
            logged += n
            if i == 0 or lag > worst:
                worst, at = lag, when
        out[section.name] = {"ops_per_s_per_job": rate, "jobs": float(int(str(opts.get("numjobs", 1)))),
                             "max_lag_s": worst, "at_s": at, "logged_ios": float(logged),
                             "logs": float(len(files))}
    return out
