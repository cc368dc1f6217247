"""Report sections of runs on several devices or hosts at once: the inventory, per-device and per-host
breakdowns of every test with their exact aggregate, charts, and the stragglers.

Everything is read from the stored run: each point's Measurement is the aggregate and Measurement.parts its
devices; a host's figures are the exact merge of its devices (aggregate.by_host: rates summed, latency bins
added), so the 'all devices' column equals the sum of the host columns and its percentiles come from the
combined bins.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ssdlab import formatting
from ssdlab.devices import aggregate
from ssdlab.devices.ceiling import HOST_LIMITED_PCT, ceiling_of
from ssdlab.devices.ceiling import POINT_ID as CEILING_ID
from ssdlab.report import charts, sections
from ssdlab.report.sections import Section, figure, table
from ssdlab.results.model import LatencyStats, Measurement, PartResult, PointResult, Run
from ssdlab.units import format_bytes

Metric = Callable[[Measurement], float | None]
MAX_CHART_TESTS = 16  # tests in one breakdown chart (all are in the tables)
MAX_CHART_SERIES = 8  # devices (or hosts) drawn as bars side by side


def _has_parts(run: Run) -> bool:
    return any(r.measurement is not None and r.measurement.parts for r in run.points)


def host_label(host: str) -> str:
    return host or "local"


def _p(lat: LatencyStats | None, p: float) -> float | None:
    if lat is None or lat.n <= 0:
        return None
    v = lat.percentile(p)
    return None if v is None else v / 1000.0


def _lat(m: Measurement) -> LatencyStats | None:
    """Completion latency over all directions of a measurement (bins added when there are several)."""
    stats = [d.clat or d.lat for d in m.directions.values()]
    return aggregate.merge_latency(stats)


def host_measurements(m: Measurement) -> dict[str, Measurement]:
    """Each host's exact merge of its measured devices in `m` (hosts with none measured are absent). Merging
    adds every device's bins: compute it once per point, not once per cell."""
    return {s.host: s.measurement for s in aggregate.by_host(m.parts) if s.measurement is not None}


_REPEAT_TAGS = frozenset({"round", "sample", "iteration", "loop", "pass", "attempt"})


def _test_key(r: PointResult) -> tuple[Any, ...]:
    """What makes two points repetitions of one test (PTS rounds, stability samples)."""
    w = r.point.workload
    tags = tuple(sorted((str(k), repr(v)) for k, v in r.point.tags.items() if k not in _REPEAT_TAGS))
    return (r.point.group, w.rw, w.bssplit or w.bs, w.iodepth, w.numjobs, w.rwmixread, w.rate_iops, tags)


def tests(run: Run) -> list[tuple[str, PointResult]]:
    """(label, last repetition) of each measured test whose points carry per-device results, in run order."""
    found: dict[tuple[Any, ...], PointResult] = {}
    for r in run.points:
        if r.point.phase == "measure" and r.status == "ok" and r.measurement is not None and r.measurement.parts:
            key = _test_key(r)
            found.pop(key, None)
            found[key] = r
    first: dict[tuple[Any, ...], int] = {}
    for i, r in enumerate(run.points):
        first.setdefault(_test_key(r), i)
    ordered = sorted(found.items(), key=lambda kv: first[kv[0]])
    return [(re.sub(r"\s+R\d+\b", "", r.point.label), r) for _, r in ordered]


def margin(run: Run) -> float:
    v = run.options.get("straggler_margin_pct")
    return float(v) if isinstance(v, (int, float)) and v > 0 else aggregate.DEFAULT_STRAGGLER_MARGIN_PCT


def stragglers(run: Run) -> list[tuple[str, aggregate.Straggler]]:
    """(test label, straggler) over every charted test, by IOPS (every device runs the same workload)."""
    out: list[tuple[str, aggregate.Straggler]] = []
    for label, r in tests(run):
        assert r.measurement is not None
        out.extend((label, s) for s in aggregate.stragglers(r.measurement.parts, margin(run)))
    return out


def straggler_notice(run: Run) -> str:
    """One paragraph for the report's notices ('' when no device lags)."""
    found = stragglers(run)
    if not found:
        return ""
    worst: dict[str, tuple[str, aggregate.Straggler]] = {}
    for label, s in found:
        key = s.part.key
        if key not in worst or s.below_pct > worst[key][1].below_pct:
            worst[key] = (label, s)
    text = "; ".join(f"{key} ({len([1 for _, x in found if x.part.key == key])} test(s), worst {s.below_pct:.0f}% "
                     f"below the median in {label})" for key, (label, s) in worst.items())
    return (f"{len(worst)} device(s) ran more than {margin(run):g}% below the median of their group: {text}. "
            "See 'Per-device and per-host results'.")


# ---------------------------------------------------------------- sections

def build(run: Run, run_dir: Path) -> list[Section]:
    return [Section("Hosts and devices", _inventory_html(run), anchor="hosts-devices"),
            Section("Per-device and per-host results", _results_html(run), anchor="per-device")]


def _devices_seen(run: Run) -> list[tuple[str, str]]:
    """(host, device) of every device with a part in any point, in first-seen order."""
    seen: dict[tuple[str, str], None] = {}
    for r in run.points:
        if r.measurement is not None:
            for p in r.measurement.parts:
                seen.setdefault((p.host, p.device), None)
    return list(seen)


def _inventory_html(run: Run) -> str:
    t = run.target
    out: list[str] = []
    hosts = t.get("hosts") or []
    devices = {(str(d.get("host", "")), str(d.get("name", ""))): d for d in t.get("devices") or []}
    rows: list[tuple[Any, ...]] = []
    if hosts:
        for h in hosts:
            labels = ", ".join(f"{k}={v}" for k, v in (h.get("labels") or {}).items())
            rows.append((h.get("name", ""), f"{h.get('address', '')}:{h.get('port', '')}", h.get("agent_hostname", ""),
                         h.get("fio_version", ""), labels, len(h.get("targets") or []),
                         h.get("dropped") or ""))
        out.append(table(("host", "agent address", "agent's hostname", "fio", "labels", "devices", "left the run"),
                         rows, "Agent hosts (from the inventory; each ran `ssdlab agent`)"))
    dropped = _dropped(run)
    rows = []
    for host, dev in _devices_seen(run):
        d = devices.get((host, dev)) or devices.get(("", dev)) or {}
        ident = d.get("identity") or {}
        cap = d.get("capacity_bytes")
        rows.append((host_label(host), dev, d.get("kind", ""), format_bytes(float(cap)) if cap else "",
                     ident.get("model", ""), ident.get("serial", ""), d.get("placement", ""),
                     dropped.get(f"{host}:{dev}" if host else dev, "")))
    out.append(table(("host", "device", "kind", "capacity tested", "model", "serial", "NUMA placement",
                      "left the run"), rows, "Devices (each test ran on all of them at once)"))
    out.append(_ceiling_html(run))
    return "\n".join(out)


def ceiling_use(run: Run) -> list[tuple[str, float, float, str]]:
    """(host, its null-engine ceiling IOPS, its best measured IOPS, test) per host ('' = all hosts together)."""
    c = ceiling_of(run)
    if c is None or c.measurement is None:
        return []
    found = tests(run)
    out = []
    shares = host_measurements(c.measurement)
    scopes = [("", c.measurement)] + (list(shares.items()) if len(shares) > 1 else [])
    per_test = [(label, r.measurement, host_measurements(r.measurement) if len(scopes) > 1 else {})
                for label, r in found if r.measurement is not None]
    for host, cm in scopes:
        best, where = 0.0, ""
        for label, m, by_host in per_test:
            if host:
                hm = by_host.get(host)
                v = hm.total_iops if hm is not None else 0.0
            else:
                v = m.total_iops
            if v > best:
                best, where = v, label
        out.append((host, cm.total_iops, best, where))
    return out


def host_limited_notice(run: Run) -> str:
    """One paragraph when a measured point came close to the hosts' own ceiling ('' otherwise)."""
    limited = [(h, c, b, t) for h, c, b, t in ceiling_use(run) if c > 0 and 100.0 * b / c >= HOST_LIMITED_PCT]
    if not limited:
        return ""
    text = "; ".join(f"{'host ' + host_label(h) if h else 'all hosts'}: {b:,.0f} IOPS in {t} = {100 * b / c:.0f}% "
                     f"of {c:,.0f}" for h, c, b, t in limited)
    return (f"A measured point reached {HOST_LIMITED_PCT:g}% or more of the null-engine ceiling of its hosts "
            f"({text}): those results show the hosts' limit (CPU, fio), not the devices'. Use more or faster "
            "hosts, or fewer devices per host.")


def _ceiling_html(run: Run) -> str:
    c = run.result(CEILING_ID)
    if c is None:
        return ""
    if c.status != "ok" or c.measurement is None:
        return f"<p class='small'>Host ceiling: {html.escape(c.reason or c.status)}</p>"
    rows = []
    for host, cm, best, where in ceiling_use(run):
        pct = 100.0 * best / cm if cm > 0 else 0.0
        rows.append(("all hosts" if not host else f"host {host_label(host)}", f"{cm:,.0f}", f"{best:,.0f}", where,
                     f"{pct:.0f}%", "host-limited" if pct >= HOST_LIMITED_PCT else "devices-limited"))
    return (f"<h3>Host ceiling</h3><p>{html.escape(c.point.label)}, {c.point.workload.runtime_s:g} s, before the "
            "first point: fio's null engine in place of every device, same sections and CPUs. A result near it "
            f"is limited by the hosts (from {HOST_LIMITED_PCT:g}%).</p>"
            + table(("scope", "ceiling IOPS", "best measured IOPS", "in test", "of the ceiling", "verdict"), rows))


def _dropped(run: Run) -> dict[str, str]:
    """device key -> why it has no result in some point (first reason seen)."""
    out: dict[str, str] = {}
    for r in run.points:
        if r.measurement is not None:
            for p in r.measurement.parts:
                if p.status != "ok":
                    out.setdefault(p.key, p.reason or p.status)
    return out


def _columns(run: Run) -> tuple[list[tuple[str, str]], list[str], bool]:
    devs = _devices_seen(run)
    hosts = list(dict.fromkeys(h for h, _ in devs))
    return devs, hosts, len(hosts) > 1 or any(h for h in hosts)


def _results_html(run: Run) -> str:
    found = tests(run)
    if not found:
        return "<p>No measured point carries per-device results.</p>"
    devs, hosts, show_hosts = _columns(run)
    found_s = stragglers(run)
    strag = {(label, s.part.key): s for label, s in found_s}
    by_host: dict[str, dict[str, Measurement]] = {}  # point id -> host -> its devices' merge, when needed

    def shares(r: PointResult) -> dict[str, Measurement]:
        if r.point.id not in by_host:
            assert r.measurement is not None
            by_host[r.point.id] = host_measurements(r.measurement)
        return by_host[r.point.id]

    intro = (f"<p>{len(devs)} device(s) on {len(hosts)} host(s) ran every test at the same time. "
             "Per host and 'all devices' columns are exact aggregates: IOPS and MB/s summed, latency percentiles "
             "from the added histogram bins (never averaged). "
             f"▼ marks a straggler: more than {margin(run):g}% below the median device of that test.</p>")
    parts_html = [intro]
    metrics: list[tuple[str, str, Metric]] = [
        ("IOPS", "IOPS (reads + writes)", aggregate.total_iops),
        ("MB/s", "Throughput, MB/s (decimal)", aggregate.total_mbps),
        ("p99 µs", "p99 completion latency, µs", lambda m: _p(_lat(m), 99.0)),
        ("p99.9 µs", "p99.9 completion latency, µs", lambda m: _p(_lat(m), 99.9)),
    ]
    header = ["test", *(f"{host_label(h)}: {d}" if show_hosts else d for h, d in devs)]
    if show_hosts and len(hosts) > 1:
        header += [f"host {host_label(h)}" for h in hosts]
    header.append("all devices")
    for short, title, fn in metrics:
        rows = []
        for label, r in found:
            m = r.measurement
            assert m is not None
            by_key = {(p.host, p.device): p for p in m.parts}
            cells: list[str] = [label]
            for h, d in devs:
                p = by_key.get((h, d))
                lag = strag.get((label, p.key)) if p is not None and short in ("IOPS", "MB/s") else None
                cells.append(_cell(p, fn, short, lag))
            if show_hosts and len(hosts) > 1:
                for h in hosts:
                    hm = shares(r).get(h)
                    cells.append(formatting.by_unit(fn(hm), short) if hm is not None else "—")
            cells.append(formatting.by_unit(fn(m), short))
            rows.append(cells)
        parts_html.append(f"<h3>{html.escape(title)}</h3><div class='table-wrap'>"
                          + table(header, rows) + "</div>")
    parts_html.extend(_charts(found, devs, hosts, shares))
    if found_s:
        items = "".join(f"<li>{html.escape(s.part.key)}: {s.value:,.0f} IOPS in {html.escape(label)}, "
                        f"{s.below_pct:.0f}% below the median {s.median:,.0f}</li>" for label, s in found_s[:40])
        more = f"<li>… {len(found_s) - 40} more</li>" if len(found_s) > 40 else ""
        parts_html.append(f"<h3>Stragglers</h3><ul>{items}{more}</ul>")
    else:
        parts_html.append(f"<p>No straggler: every device stayed within {margin(run):g}% of its group's median "
                          "in every test.</p>")
    return "\n".join(parts_html)


def _short_name(host: str, device: str) -> str:
    """A chart legend name: the device's last path component, with its host."""
    base = Path(device).name or device
    return f"{host}:{base}" if host else base


def _cell(p: PartResult | None, fn: Metric, short: str, straggler: aggregate.Straggler | None) -> str:
    if p is None:
        return "—"
    if p.status != "ok" or p.measurement is None:
        return p.status
    text = formatting.by_unit(fn(p.measurement), short)
    if straggler is not None:
        text += f" ▼{straggler.below_pct:.0f}%"
    return text


def _charts(found: Sequence[tuple[str, PointResult]], devs: list[tuple[str, str]], hosts: list[str],
            shares: Callable[[PointResult], dict[str, Measurement]]) -> list[str]:
    """Per-device bars for each test (or per host when there are many devices), IOPS and MB/s; `shares` gives a
    test's per-host merges."""
    shown = list(found)[:MAX_CHART_TESTS]
    labels = [label for label, _ in shown]
    out = []
    by_host = len(devs) > MAX_CHART_SERIES
    if by_host and len(hosts) > MAX_CHART_SERIES:
        return ["<p class='small'>Too many devices and hosts to chart side by side; the tables list them all.</p>"]
    chart_metrics: list[tuple[str, str, Metric]] = [
        ("IOPS per device", "IOPS", aggregate.total_iops), ("Throughput per device", "MB/s (decimal)",
                                                            aggregate.total_mbps)]
    for title, unit, fn in chart_metrics:
        series: dict[str, list[float | None]] = {}
        missing: dict[str, list[str | None]] = {}
        keys: list[Any] = hosts if by_host else devs
        for key in keys:
            name = f"host {host_label(key)}" if by_host else _short_name(key[0], key[1])
            vals: list[float | None] = []
            notes: list[str | None] = []
            for _, r in shown:
                assert r.measurement is not None
                if by_host:
                    m = shares(r).get(key)
                    vals.append(fn(m) if m is not None else None)
                    notes.append(None if m is not None else "no result")
                else:
                    p = next((x for x in r.measurement.parts if (x.host, x.device) == key), None)
                    ok = p is not None and p.status == "ok" and p.measurement is not None
                    vals.append(fn(p.measurement) if ok and p is not None and p.measurement is not None else None)
                    notes.append(None if ok else (p.status if p is not None else "not run"))
            series[name] = vals
            missing[name] = notes
        svg = charts.grouped_hbar_chart(labels, series, xlabel=unit, width=5.8, missing=missing)
        out.append(figure(svg, f"{title}" + (" (per host: too many devices to draw)" if by_host else "")
                          + ": each test's devices side by side"
                          + (f"; the first {len(shown)} of {len(found)} tests" if len(shown) < len(found) else "")))
    return ["<div class='figs'>" + "".join(out) + "</div>"]


sections.register(_has_parts, build)
