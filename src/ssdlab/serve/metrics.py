"""/metrics: the runs the server follows, in Prometheus' text exposition format (version 0.0.4).

One series per run and device ("all" for the whole run), from the last live sample: IOPS and bandwidth per
direction, mean and p99/p99.9/p99.99 completion latency (seconds, Prometheus' base unit), drive temperature,
the PTS round and steady-state flag per test, and the run's state. docs/serve.md lists them with a Grafana panel.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ssdlab.serve.live import LiveRun

STATES = ("running", "complete", "interrupted", "failed")
_HELP = {
    "ssdlab_run_info": ("gauge", "1 for every run the server follows; its suite, target and title as labels"),
    "ssdlab_run_state": ("gauge", "1 for the run's state (running, complete, interrupted, failed), else 0"),
    "ssdlab_run_active": ("gauge", "1 while an ssdlab process drives the run"),
    "ssdlab_point_index": ("gauge", "position of the point in progress (1 = the first)"),
    "ssdlab_eta_seconds": ("gauge", "expected seconds left in the run"),
    "ssdlab_sample_age_seconds": ("gauge", "seconds since the last live sample"),
    "ssdlab_iops": ("gauge", "I/Os per second over the last live sample"),
    "ssdlab_bandwidth_bytes_per_second": ("gauge", "bytes per second over the last live sample"),
    "ssdlab_latency_mean_seconds": ("gauge", "mean completion latency over the last live sample"),
    "ssdlab_latency_seconds": ("gauge", "completion-latency percentile over the last live sample (fio's bins)"),
    "ssdlab_temperature_celsius": ("gauge", "drive temperature, last health sample"),
    "ssdlab_pts_round": ("gauge", "complete rounds of a PTS test"),
    "ssdlab_pts_steady": ("gauge", "1 when the PTS test reached steady state (per device on several devices)"),
}
_DIRS = {"r": "read", "w": "write"}
_QUANTILES = ("0.99", "0.999", "0.9999")


def _label(value: Any) -> str:
    text = str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return f'"{text}"'


def _line(name: str, labels: dict[str, Any], value: float) -> str:
    inner = ",".join(f"{k}={_label(v)}" for k, v in labels.items())
    return f"{name}{{{inner}}} {value:.6g}"


def _figures(run: dict[str, Any], device: str, fig: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any], float]]:
    for key, row in fig.items():
        if key not in _DIRS or not isinstance(row, list) or len(row) < 6:
            continue
        labels = {**run, "device": device, "direction": _DIRS[key]}
        if row[0] is not None:
            yield "ssdlab_iops", labels, float(row[0])
        if row[1] is not None:
            yield "ssdlab_bandwidth_bytes_per_second", labels, float(row[1]) * 1e6
        if row[2]:
            yield "ssdlab_latency_mean_seconds", labels, float(row[2]) / 1e6
        for q, v in zip(_QUANTILES, row[3:6], strict=True):
            if v is not None:
                yield "ssdlab_latency_seconds", {**labels, "quantile": q}, float(v) / 1e6


def _series(r: LiveRun, now: float) -> Iterable[tuple[str, dict[str, Any], float]]:
    st = r.stored
    run = {"run": r.id}
    yield "ssdlab_run_info", {**run, "suite": st.get("suite", ""), "target": st.get("target", ""),
                              "title": r.meta.get("title", "")}, 1.0
    for state in STATES:
        yield "ssdlab_run_state", {**run, "state": state}, 1.0 if r.status == state else 0.0
    yield "ssdlab_run_active", run, 1.0 if r.active else 0.0
    if r.point is not None:
        yield "ssdlab_point_index", run, float(r.point.get("index") or 0)
    yield from _sample_series(r, run, now)
    yield from _temperature_series(r, run)
    yield from _pts_series(st, run)


def _sample_series(r: LiveRun, run: dict[str, Any], now: float) -> Iterable[tuple[str, dict[str, Any], float]]:
    """The last live sample: ETA, its age, the aggregate's and each device's figures."""
    if not r.samples:
        return
    last = r.samples[-1]
    if r.active and last.get("left_s") is not None:
        yield "ssdlab_eta_seconds", run, float(last["left_s"])
    yield "ssdlab_sample_age_seconds", run, max(0.0, now - float(last.get("t") or now))
    yield from _figures(run, "all", last.get("a") or {})
    devices = r.meta.get("devices") or []
    for i, fig in enumerate(last.get("d") or []):
        if fig is not None:
            yield from _figures(run, devices[i] if i < len(devices) else f"d{i}", fig)


def _temperature_series(r: LiveRun, run: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any], float]]:
    """Each device's latest temperature from the health samples."""
    latest: dict[str, float] = {}
    for h in r.health:
        if h.get("temperature_c") is not None:
            latest[str(h.get("device"))] = float(h["temperature_c"])
    for device, temp in latest.items():
        yield "ssdlab_temperature_celsius", {**run, "device": device}, temp


def _pts_series(st: Any, run: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any], float]]:
    """Each PTS test's round and steady-state flag, for the aggregate and each device."""
    for test in st.get("pts") or []:
        labels = {**run, "test": test["test"]}
        yield "ssdlab_pts_round", labels, float(test["rounds"])
        yield "ssdlab_pts_steady", {**labels, "device": "all"}, 1.0 if test["steady"] else 0.0
        for device, per in (test.get("devices") or {}).items():
            flags = [t.get("steady") for t in per.values()]
            yield "ssdlab_pts_steady", {**labels, "device": device}, 1.0 if flags and all(flags) else 0.0


def render(runs: Iterable[LiveRun], error: str = "") -> str:
    """The exposition text: HELP and TYPE once per metric, then its series."""
    now = time.time()
    by_name: dict[str, list[str]] = {name: [] for name in _HELP}
    for r in runs:
        for name, labels, value in _series(r, now):
            by_name[name].append(_line(name, labels, value))
    out = [f"# ssdlab serve: last error of the watcher: {error}"] if error else []
    for name, lines in by_name.items():
        if not lines:
            continue
        kind, text = _HELP[name]
        out += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *lines]
    return "\n".join(out) + "\n"
