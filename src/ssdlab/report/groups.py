"""Report sections of runs on several devices or hosts at once: the inventory, per-device and per-host
breakdowns of every test with their exact aggregate, charts, and the stragglers.

Everything is read from the stored run: each point's Measurement is the aggregate and Measurement.parts its
devices; a host's figures are the exact merge of its devices (aggregate.by_host: rates summed, latency bins
added), so the 'all devices' column equals the sum of the host columns and its percentiles come from the
combined bins.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab import formatting
from ssdlab.report import charts, sections
from ssdlab.report.sections import Chart, Section, Styled, Table
from ssdlab.results import aggregate
from ssdlab.results.model import LatencyStats, Measurement, PartResult, PointResult, Run
from ssdlab.run.ceiling import HOST_LIMITED_PCT, ceiling_of
from ssdlab.run.ceiling import POINT_ID as CEILING_ID
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
    v = run.options.straggler_margin_pct
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

@dataclass(frozen=True)
class InventoryView:
    """What templates/sections/groups_inventory.html.j2 shows."""

    hosts: Table | None  # the agent hosts of a host group
    devices: Table
    ceiling: CeilingView | None


@dataclass(frozen=True)
class CeilingView:
    """The null-engine ceiling point: why it has no result, or each scope's ceiling and best measured IOPS."""

    unavailable: str | None
    label: str = ""
    runtime: str = ""
    limited_pct: str = ""
    table: Table | None = None


@dataclass(frozen=True)
class Straggler:
    device: str
    iops: str
    test: str
    below_pct: str
    median: str


@dataclass(frozen=True)
class ResultsView:
    """What templates/sections/groups_results.html.j2 shows."""

    devices: int
    hosts: int
    margin: str
    tables: list[tuple[str, Table]]  # (metric title, a row per test and a column per device, host and all)
    charts: list[Chart] | None  # None: too many devices and hosts to chart
    stragglers: list[Straggler]
    more: int  # stragglers not listed


def build(run: Run, run_dir: Path) -> list[Section]:
    from ssdlab.report.templating import fragment

    found = tests(run)
    results = _results(run, found) if found else None
    return [Section("Hosts and devices", fragment("groups_inventory.html.j2", v=_inventory(run)),
                    anchor="hosts-devices"),
            Section("Per-device and per-host results", fragment("groups_results.html.j2", v=results),
                    anchor="per-device")]


def _devices_seen(run: Run) -> list[tuple[str, str]]:
    """(host, device) of every device with a part in any point, in first-seen order."""
    seen: dict[tuple[str, str], None] = {}
    for r in run.points:
        if r.measurement is not None:
            for p in r.measurement.parts:
                seen.setdefault((p.host, p.device), None)
    return list(seen)


def _hosts_table(run: Run) -> Table | None:
    hosts = run.target.get("hosts") or []
    if not hosts:
        return None
    rows = []
    for h in hosts:
        labels = ", ".join(f"{k}={v}" for k, v in (h.get("labels") or {}).items())
        rows.append((h.get("name", ""), f"{h.get('address', '')}:{h.get('port', '')}", h.get("agent_hostname", ""),
                     h.get("fio_version", ""), labels, len(h.get("targets") or []), h.get("dropped") or ""))
    return Table(("host", "agent address", "agent's hostname", "fio", "labels", "devices", "left the run"), rows,
                 "Agent hosts (from the inventory; each ran `ssdlab agent`)")


def _inventory(run: Run) -> InventoryView:
    devices = {(str(d.get("host", "")), str(d.get("name", ""))): d for d in run.target.get("devices") or []}
    dropped = _dropped(run)
    rows: list[tuple[Any, ...]] = []
    for host, dev in _devices_seen(run):
        d = devices.get((host, dev)) or devices.get(("", dev)) or {}
        ident = d.get("identity") or {}
        cap = d.get("capacity_bytes")
        rows.append((host_label(host), dev, d.get("kind", ""), format_bytes(float(cap)) if cap else "",
                     ident.get("model", ""), ident.get("serial", ""), d.get("placement", ""),
                     dropped.get(f"{host}:{dev}" if host else dev, "")))
    return InventoryView(_hosts_table(run), Table(("host", "device", "kind", "capacity tested", "model", "serial",
                                                   "NUMA placement", "left the run"), rows,
                                                  "Devices (each test ran on all of them at once)"), _ceiling(run))


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


def _ceiling(run: Run) -> CeilingView | None:
    c = run.result(CEILING_ID)
    if c is None:
        return None
    if c.status != "ok" or c.measurement is None:
        return CeilingView(unavailable=c.reason or c.status)
    rows = []
    for host, cm, best, where in ceiling_use(run):
        pct = 100.0 * best / cm if cm > 0 else 0.0
        rows.append(("all hosts" if not host else f"host {host_label(host)}", f"{cm:,.0f}", f"{best:,.0f}", where,
                     f"{pct:.0f}%", "host-limited" if pct >= HOST_LIMITED_PCT else "devices-limited"))
    return CeilingView(None, c.point.label, f"{c.point.workload.runtime_s:g}", f"{HOST_LIMITED_PCT:g}",
                       Table(("scope", "ceiling IOPS", "best measured IOPS", "in test", "of the ceiling", "verdict"),
                             rows))


def _dropped(run: Run) -> dict[str, str]:
    """device key -> why it has no result in some point (first reason seen)."""
    out: dict[str, str] = {}
    for r in run.points:
        if r.measurement is not None:
            for p in r.measurement.parts:
                if p.status != "ok":
                    out.setdefault(p.key, p.reason or p.status)
    return out


Columns = tuple[list[tuple[str, str]], list[str], bool]  # (host, device) pairs, hosts, whether to name the hosts


def _columns(run: Run) -> Columns:
    devs = _devices_seen(run)
    hosts = list(dict.fromkeys(h for h, _ in devs))
    return devs, hosts, len(hosts) > 1 or any(h for h in hosts)


_METRICS: list[tuple[str, str, Metric]] = [
    ("IOPS", "IOPS (reads + writes)", aggregate.total_iops),
    ("MB/s", "Throughput, MB/s (decimal)", aggregate.total_mbps),
    ("p99 µs", "p99 completion latency, µs", lambda m: _p(_lat(m), 99.0)),
    ("p99.9 µs", "p99.9 completion latency, µs", lambda m: _p(_lat(m), 99.9)),
]


class _Shares:
    """Each test point's per-host merges, made when first needed (merging adds every device's bins)."""

    def __init__(self) -> None:
        self.by_point: dict[str, dict[str, Measurement]] = {}

    def __call__(self, r: PointResult) -> dict[str, Measurement]:
        if r.point.id not in self.by_point:
            assert r.measurement is not None
            self.by_point[r.point.id] = host_measurements(r.measurement)
        return self.by_point[r.point.id]


def device_labels(devs: Sequence[tuple[str, str]], show_hosts: bool) -> list[str]:
    """Short column and legend names of devices: each device's last path component (as many more as it takes to
    tell two devices apart), after its host when hosts are named ('node0:h0a.dat')."""
    def tail(device: str, depth: int) -> str:
        parts = [p for p in device.split("/") if p]
        return "/".join(parts[-depth:]) if parts else device

    def name(host: str, device: str, depth: int) -> str:
        return f"{host_label(host)}:{tail(device, depth)}" if show_hosts else tail(device, depth)

    out = []
    for h, d in devs:
        depth = 1
        while depth < d.count("/") and sum(name(h2, d2, depth) == name(h, d, depth) for h2, d2 in devs) > 1:
            depth += 1
        out.append(name(h, d, depth))
    return out


def _metric_table(cols: Columns, found: Sequence[tuple[str, PointResult]], short: str, fn: Metric,
                  shares: _Shares, strag: dict[tuple[str, str], aggregate.Straggler]) -> Table:
    """One metric: a row per test, a column per device (then per host, then all devices). Devices are named
    short, their full path in the tooltip; the table scrolls sideways with the test column in view."""
    devs, hosts, show_hosts = cols
    per_host = show_hosts and len(hosts) > 1
    header: list[Any] = ["test"]
    header += [Styled(label, "num", f"{host_label(h)}: {d}" if show_hosts else d)
               for label, (h, d) in zip(device_labels(devs, show_hosts), devs, strict=True)]
    header += [Styled(f"host {host_label(h)}", "num") for h in hosts] if per_host else []
    header.append(Styled("all devices", "num"))
    rows = []
    for label, r in found:
        m = r.measurement
        assert m is not None
        by_key = {(p.host, p.device): p for p in m.parts}
        cells: list[Any] = [Styled(label, "nowrap")]
        for h, d in devs:
            p = by_key.get((h, d))
            lag = strag.get((label, p.key)) if p is not None and short in ("IOPS", "MB/s") else None
            cells.append(Styled(_cell(p, fn, short, lag), "num"))
        if per_host:
            cells += [Styled(formatting.by_unit(fn(hm), short) if (hm := shares(r).get(h)) is not None else "—",
                             "num") for h in hosts]
        cells.append(Styled(formatting.by_unit(fn(m), short), "num"))
        rows.append(cells)
    return Table(header, rows, cls="data sticky1")


def _results(run: Run, found: Sequence[tuple[str, PointResult]]) -> ResultsView:
    cols = _columns(run)
    devs, hosts, _ = cols
    found_s = stragglers(run)
    strag = {(label, s.part.key): s for label, s in found_s}
    shares = _Shares()
    tables = [(title, _metric_table(cols, found, short, fn, shares, strag)) for short, title, fn in _METRICS]
    listed = [Straggler(s.part.key, f"{s.value:,.0f}", label, f"{s.below_pct:.0f}", f"{s.median:,.0f}")
              for label, s in found_s[:40]]
    return ResultsView(devices=len(devs), hosts=len(hosts), margin=f"{margin(run):g}", tables=tables,
                       charts=_charts(found, devs, hosts, shares), stragglers=listed,
                       more=max(0, len(found_s) - 40))


def _cell(p: PartResult | None, fn: Metric, short: str, straggler: aggregate.Straggler | None) -> str:
    if p is None:
        return "—"
    if p.status != "ok" or p.measurement is None:
        return p.status
    text = formatting.by_unit(fn(p.measurement), short)
    if straggler is not None:
        text += f" ▼{straggler.below_pct:.0f}%"
    return text


def _bars(found: Sequence[tuple[str, PointResult]], key: Any, by_host: bool, fn: Metric,
          shares: Callable[[PointResult], dict[str, Measurement]]) -> tuple[list[float | None], list[str | None]]:
    """One device's (or host's) value in each test, or why it has none."""
    vals: list[float | None] = []
    notes: list[str | None] = []
    for _, r in found:
        assert r.measurement is not None
        if by_host:
            m = shares(r).get(key)
            vals.append(fn(m) if m is not None else None)
            notes.append(None if m is not None else "no result")
            continue
        p = next((x for x in r.measurement.parts if (x.host, x.device) == key), None)
        ok = p is not None and p.status == "ok" and p.measurement is not None
        vals.append(fn(p.measurement) if ok and p is not None and p.measurement is not None else None)
        notes.append(None if ok else (p.status if p is not None else "not run"))
    return vals, notes


def _charts(found: Sequence[tuple[str, PointResult]], devs: list[tuple[str, str]], hosts: list[str],
            shares: Callable[[PointResult], dict[str, Measurement]]) -> list[Chart] | None:
    """Per-device bars for each test (or per host when there are many devices), IOPS and MB/s; `shares` gives a
    test's per-host merges. None when even the hosts are too many to draw."""
    shown = list(found)[:MAX_CHART_TESTS]
    labels = [label for label, _ in shown]
    by_host = len(devs) > MAX_CHART_SERIES
    if by_host and len(hosts) > MAX_CHART_SERIES:
        return None
    keys: list[Any] = hosts if by_host else devs
    names = [f"host {host_label(key)}" for key in hosts] if by_host else device_labels(devs, any(h for h, _ in devs))
    out = []
    for title, unit, fn in (("IOPS per device", "IOPS", aggregate.total_iops),
                            ("Throughput per device", "MB/s (decimal)", aggregate.total_mbps)):
        bars = [_bars(shown, key, by_host, fn, shares) for key in keys]
        svg = charts.grouped_hbar_chart(labels, {n: b[0] for n, b in zip(names, bars, strict=True)}, xlabel=unit,
                                        width=5.8, missing={n: b[1] for n, b in zip(names, bars, strict=True)})
        out.append(Chart(svg, f"{title}" + (" (per host: too many devices to draw)" if by_host else "")
                         + ": each test's devices side by side"
                         + (f"; the first {len(shown)} of {len(found)} tests" if len(shown) < len(found) else "")))
    return out


sections.register(_has_parts, build)
