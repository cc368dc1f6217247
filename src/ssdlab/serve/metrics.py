"""/metrics: the runs in progress, in Prometheus' text exposition format (version 0.0.4).

A run has series only while an ssdlab process drives it: when it ends (or its process is gone) its series end
too, and Prometheus marks them stale; nothing keeps a finished run's last figures as a flat line.

- counters `ssdlab_io_total` and `ssdlab_bytes_total` per run, device ('all' for the whole run, each device's
  name on several devices) and direction: every stored point's I/Os and bytes (exact, from fio's output) plus
  the point in progress from its live samples (rate x interval), never going down (a point's exact count
  replaces its live estimate only where it is larger), so `rate()` gives IOPS and bytes per second;
- a histogram `ssdlab_latency_seconds` of the same series' completion latencies: every stored point's fio bins,
  its `le` bounds fio bucket edges (lab.LE_NS: each bucket an exact sum of fio's bins), so
  `histogram_quantile()` over `rate()` gives percentiles of any window;
- gauges of the run: its info, the phase and point in progress, the ETA, and the last live sample's figures
  while that sample is fresh (SAMPLE_FRESH_S); the drive temperature; PTS rounds and steady state, for PTS runs
  only.

docs/serve.md lists them with a scrape configuration and a Grafana dashboard.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from ssdlab.serve import lab
from ssdlab.serve.live import LiveRun

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SAMPLE_FRESH_S = 10.0  # the last sample's gauges are shown while it is at most this old (a point, not an idle gap)
_HELP = {
    "ssdlab_run_info": ("gauge", "1 while an ssdlab process drives the run; its suite, target and title as labels"),
    "ssdlab_run_phase": ("gauge", "1 for the phase of the point in progress (measure, precondition, purge ...)"),
    "ssdlab_point_index": ("gauge", "position of the point in progress (1 = the first)"),
    "ssdlab_eta_seconds": ("gauge", "expected seconds left in the run"),
    "ssdlab_sample_age_seconds": ("gauge", "seconds since the last live sample"),
    "ssdlab_io_total": ("counter", "I/Os completed (stored points exactly, the point in progress from its samples)"),
    "ssdlab_bytes_total": ("counter", "bytes transferred (stored points exactly, the point in progress from its "
                                      "samples)"),
    "ssdlab_latency_seconds": ("histogram", "completion latency of the stored points' I/Os (fio's histogram bins; "
                                            "each le is the last nanosecond of a fio bucket)"),
    "ssdlab_iops": ("gauge", "I/Os per second over the last live sample"),
    "ssdlab_bandwidth_bytes_per_second": ("gauge", "bytes per second over the last live sample"),
    "ssdlab_sample_latency_mean_seconds": ("gauge", "mean completion latency over the last live sample"),
    "ssdlab_sample_latency_seconds": ("gauge", "completion-latency percentile over the last live sample (fio's "
                                               "bins)"),
    "ssdlab_temperature_celsius": ("gauge", "drive temperature, last health sample"),
    "ssdlab_pts_round": ("gauge", "complete rounds of a PTS test"),
    "ssdlab_pts_steady": ("gauge", "1 when the PTS test reached steady state (per device on several devices)"),
}
_DIRS = {"r": "read", "w": "write"}
_PERCENTILES = ("99", "99.9", "99.99")  # (a "quantile" label belongs to summaries)
_LE = (*(repr(ns / 1e9) for ns in lab.LE_NS), "+Inf")

Sample = tuple[str, dict[str, Any], float]  # (sample name, labels, value)


def _label(value: Any) -> str:
    text = str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return f'"{text}"'


def _value(v: float, exact: bool) -> str:
    """A gauge to six significant digits; a counter's or histogram's value exactly (whole numbers as such)."""
    if not exact:
        return f"{v:.6g}"
    return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))


def _line(name: str, labels: dict[str, Any], value: float, exact: bool) -> str:
    inner = ",".join(f"{k}={_label(v)}" for k, v in labels.items())
    return f"{name}{{{inner}}} {_value(value, exact)}"


def alive(r: LiveRun) -> bool:
    """Whether an ssdlab process drives the run now (its series exist only then)."""
    return r.active and r.status == "running"


def _figures(run: dict[str, Any], device: str, fig: dict[str, Any]) -> Iterator[Sample]:
    for key, row in fig.items():
        if key not in _DIRS or not isinstance(row, list) or len(row) < 6:
            continue
        labels = {**run, "device": device, "direction": _DIRS[key]}
        if row[0] is not None:
            yield "ssdlab_iops", labels, float(row[0])
        if row[1] is not None:
            yield "ssdlab_bandwidth_bytes_per_second", labels, float(row[1]) * 1e6
        if row[2]:
            yield "ssdlab_sample_latency_mean_seconds", labels, float(row[2]) / 1e6
        for p, v in zip(_PERCENTILES, row[3:6], strict=True):
            if v is not None:
                yield "ssdlab_sample_latency_seconds", {**labels, "percentile": p}, float(v) / 1e6


def _series(r: LiveRun, now: float) -> Iterator[Sample]:
    st = r.stored
    run = {"run": r.id}
    yield "ssdlab_run_info", {**run, "suite": st.get("suite", ""), "target": st.get("target", ""),
                              "title": r.meta.get("title", "")}, 1.0
    if r.point is not None:
        yield "ssdlab_run_phase", {**run, "phase": r.point.get("phase") or "measure"}, 1.0
        yield "ssdlab_point_index", run, float(r.point.get("index") or 0)
    yield from _counters(r, run)
    yield from _sample_series(r, run, now)
    yield from _temperature_series(r, run)
    yield from _pts_series(st, run)


def _counters(r: LiveRun, run: dict[str, Any]) -> Iterator[Sample]:
    """I/O and byte counters and the latency histogram per device and direction."""
    live = r.in_progress()
    keys = sorted(set(r.totals.series) | set(live), key=lambda k: (k[0] != "all", k))
    for device, direction in keys:
        labels = {**run, "device": device, "direction": direction}
        t = r.totals.series.get((device, direction), lab.Tally())
        ios, io_bytes = live.get((device, direction), (0.0, 0.0))
        for name, value in (("ssdlab_io_total", t.ios + round(ios)),
                            ("ssdlab_bytes_total", t.io_bytes + round(io_bytes))):
            key = (name, device, direction)
            r.exported[key] = max(r.exported.get(key, 0.0), float(value))  # a counter never goes down
            yield name, labels, r.exported[key]
        if sum(t.buckets):
            total = 0
            for le, n in zip(_LE, t.buckets, strict=True):
                total += n
                yield "ssdlab_latency_seconds_bucket", {**labels, "le": le}, float(total)
            yield "ssdlab_latency_seconds_sum", labels, t.lat_sum_s
            yield "ssdlab_latency_seconds_count", labels, float(total)


def _sample_series(r: LiveRun, run: dict[str, Any], now: float) -> Iterator[Sample]:
    """The ETA and the last live sample: its age and, while it is fresh, the aggregate's and each device's
    figures."""
    if r.point is not None:
        left = (r.point.get("eta") or {}).get("expected_s")  # as the point started, or as its last sample said
        if r.samples and r.samples[-1].get("t", 0) >= r.point.get("t", 0) and "left_s" in r.samples[-1]:
            left = r.samples[-1]["left_s"]
        if left is not None:
            yield "ssdlab_eta_seconds", run, float(left)
    if not r.samples:
        return
    last = r.samples[-1]
    age = max(0.0, now - float(last.get("t") or now))
    yield "ssdlab_sample_age_seconds", run, age
    if age > SAMPLE_FRESH_S:
        return
    yield from _figures(run, "all", last.get("a") or {})
    devices = r.meta.get("devices") or []
    for i, fig in enumerate(last.get("d") or []):
        if fig is not None:
            yield from _figures(run, devices[i] if i < len(devices) else f"d{i}", fig)


def _temperature_series(r: LiveRun, run: dict[str, Any]) -> Iterator[Sample]:
    """Each device's latest temperature from the health samples."""
    latest: dict[str, float] = {}
    for h in r.health:
        if h.get("temperature_c") is not None:
            latest[str(h.get("device"))] = float(h["temperature_c"])
    for device, temp in latest.items():
        yield "ssdlab_temperature_celsius", {**run, "device": device}, temp


def _pts_series(st: Any, run: dict[str, Any]) -> Iterator[Sample]:
    """Each PTS test's round and steady-state flag, for the aggregate and each device (PTS runs only:
    lab.pts_tracking is empty for others)."""
    for test in st.get("pts") or []:
        labels = {**run, "test": test["test"]}
        yield "ssdlab_pts_round", labels, float(test["rounds"])
        yield "ssdlab_pts_steady", {**labels, "device": "all"}, 1.0 if test["steady"] else 0.0
        for device, per in (test.get("devices") or {}).items():
            flags = [t.get("steady") for t in per.values()]
            yield "ssdlab_pts_steady", {**labels, "device": device}, 1.0 if flags and all(flags) else 0.0


def _family(sample: str) -> str:
    for suffix in ("_bucket", "_sum", "_count"):
        if sample.endswith(suffix) and sample[: -len(suffix)] in _HELP:
            return sample[: -len(suffix)]
    return sample


def render(runs: Iterable[LiveRun], error: str = "") -> str:
    """The exposition text: HELP and TYPE once per metric family, then its samples (of the live runs only)."""
    now = time.time()
    by_name: dict[str, list[str]] = {name: [] for name in _HELP}
    for r in runs:
        if not alive(r):
            continue
        for name, labels, value in _series(r, now):
            family = _family(name)
            by_name[family].append(_line(name, labels, value, _HELP[family][0] != "gauge"))
    out = [f"# ssdlab serve: last error of the watcher: {error}"] if error else []
    for name, lines in by_name.items():
        if not lines:
            continue
        kind, text = _HELP[name]
        out += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *lines]
    return "\n".join(out) + "\n"
