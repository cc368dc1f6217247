"""The drive's side of a report: identity, health before/after with deltas, the bytes cross-check, temperature
over the run, the interface limit and each result's fraction of it, and the host-CPU flag.

Reads only the stored run (Run.health, written by targets/session.py, and the points' stored CPU numbers);
every piece that was not measured is one "not available: why" line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ssdlab import formatting
from ssdlab.report.sections import Chart, Section, Table
from ssdlab.results.model import Measurement, Run
from ssdlab.run import hostload
from ssdlab.targets import health, link
from ssdlab.units import format_bytes

SECTION_TITLE = "Drive health and interface"


def _devices(run: Run) -> list[Mapping[str, Any]]:
    return [e for e in run.health.get("devices", []) if isinstance(e, Mapping)]


def _unavailable(run: Run) -> str:
    """Why the run has no drive data at all ('' when it has some)."""
    if not run.health:
        return "this run was recorded before ssdlab took drive health snapshots"
    if not run.health.get("available"):
        return str(run.health.get("reason") or "no drive could be queried")
    return ""


def link_of(run: Run) -> Mapping[str, Any] | None:
    """The link results are a fraction of: the one device's, from its first snapshot (None for several or none,
    and for an emulated device, whose link limits nothing)."""
    devices = _devices(run)
    if len(devices) != 1:
        return None
    snaps = devices[0].get("snapshots") or []
    found = snaps[0].get("link") if snaps else None
    usable = isinstance(found, Mapping) and found.get("available") and not found.get("emulated")
    return found if usable else None


def fraction_text(bw_bytes: float, lnk: Mapping[str, Any] | None) -> str:
    return link.fraction_text(bw_bytes, lnk)


def _mbps(bytes_per_s: float) -> str:
    return f"{bytes_per_s / 1e6:,.0f} MB/s"


def link_text(lnk: Mapping[str, Any]) -> str:
    if not lnk.get("available"):
        return f"not available: {lnk.get('reason', 'unknown')}"
    text = str(lnk["label"])
    if lnk.get("max_label") and lnk.get("max_label") != lnk["label"]:
        text += f" (device maximum {lnk['max_label']})"
    if lnk.get("emulated"):
        return text + " as sysfs reports it; emulated: no link limits the transfers"
    return text + f"; usable ≈ {_mbps(float(lnk['usable_bytes_per_s']))} per direction"


def _state_text(snap: Mapping[str, Any], changes: Sequence[Mapping[str, Any]], setting: str) -> str:
    if setting == "write_cache":
        value = str(snap.get("write_cache", "unknown"))
    else:
        ps = snap.get("power_state")
        value = f"PS{ps}" if isinstance(ps, int) else str(snap.get("power_state_note", "not available"))
    for c in changes:
        if c.get("setting") == setting and snap.get("device") in (c.get("devices") or [c.get("device")]):
            req = c.get("requested")
            req_text = f"PS{req}" if setting == "power_state" else str(req)
            value += f"; set to {req_text} for the run, " + ("restored afterwards" if c.get("restored")
                                                             else "NOT restored (see warnings)")
    return value


def target_facts(run: Run) -> list[tuple[str, str]]:
    """Header facts of the Target card: interface, health at a glance, write cache, power state."""
    reason = _unavailable(run)
    if reason:
        return [("drive health", f"not available: {reason}")]
    devices = _devices(run)
    changes = [c for c in run.health.get("settings", []) if isinstance(c, Mapping)]
    return [fact for e in devices for fact in _device_facts(run, e, changes, several=len(devices) > 1)]


def _device_facts(run: Run, e: Mapping[str, Any], changes: Sequence[Mapping[str, Any]],
                  several: bool) -> list[tuple[str, str]]:
    before, after = health.first_last(e.get("snapshots") or [])
    snap = before or after
    if snap is None:
        return []
    prefix = f"{e.get('path')} " if several else ""
    out = [(f"{prefix}interface", link_text(snap.get("link") or {}))]
    if not snap.get("available"):
        return [*out, (f"{prefix}drive health", f"not available: {snap.get('reason', 'unknown')}")]
    ident = snap.get("identity") or {}
    known = (run.target.get("identity") or {}) if isinstance(run.target.get("identity"), Mapping) else {}
    if ident.get("model") and (several or not known.get("model")):
        out.append((f"{prefix}drive", ", ".join(f"{k} {ident[k]}" if k != "model" else str(ident[k])
                                                for k in ("model", "serial", "firmware") if ident.get(k))))
    out.append((f"{prefix}drive health", _glance(before, after)))
    out.append((f"{prefix}write cache", _state_text(snap, changes, "write_cache")))
    if snap.get("kind") == "nvme":
        out.append((f"{prefix}power state", _state_text(snap, changes, "power_state")))
    return out


def _temperature_text(hb: Mapping[str, Any], ha: Mapping[str, Any]) -> list[str]:
    if "temperature_c" not in hb and "temperature_c" not in ha:
        return []
    if hb and ha:
        return [f"{hb.get('temperature_c', '?')} → {ha.get('temperature_c', '?')} °C"]
    return [f"{(ha or hb).get('temperature_c')} °C"]


def _counters_text(h: Mapping[str, Any], hb: Mapping[str, Any], ha: Mapping[str, Any]) -> list[str]:
    """Critical warning, media errors (and how many this run added), wear, SMART's verdict."""
    bits = []
    warning = h.get("critical_warning")
    if isinstance(warning, int):
        bits.append(f"critical warning {warning:#x}" if warning else "no critical warning")
    if "media_errors" in h:
        added = (ha.get("media_errors", 0) - hb.get("media_errors", 0)) if hb and ha else 0
        bits.append(f"{h['media_errors']:,} media errors" + (f" (+{added} in this run)" if added else ""))
    if "percentage_used" in h:
        bits.append(f"{h['percentage_used']} % used")
    if "smart_passed" in h:
        bits.append("SMART passed" if h["smart_passed"] else "SMART FAILED")
    return bits


def _glance(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str:
    hb = (before or {}).get("health") or {}
    ha = (after or {}).get("health") or {}
    bits = _temperature_text(hb, ha) + _counters_text(ha or hb, hb, ha)
    if not after:
        bits.append("no after-run snapshot")
    return ", ".join(bits) or "counters unreadable"


def host_facts(run: Run) -> list[tuple[str, str]]:
    """The Host card's CPU-limit line."""
    measured = [r for r in run.points if r.status == "ok" and r.measurement is not None and r.point.phase == "measure"]
    if not measured:
        return []
    if all(r.measurement is not None and r.measurement.engine == "sim" for r in measured):
        return [("CPU limit", "not available: the simulator uses no host CPU per I/O")]
    flagged = [r for r in measured if r.measurement is not None and host_limited(r.measurement)]
    sampled = [r for r in measured if r.measurement is not None and (r.measurement.extra.get("host_cpu") or {})
               .get("available")]
    if flagged:
        return [("CPU limit", f"{len(flagged)} of {len(measured)} measured points ran with fio's submitting "
                              "threads saturated: they may show the host's limit, not the drive's (see the notice)")]
    text = (f"no point saturated fio's submitting threads ({len(sampled)} of {len(measured)} also sampled "
            "system-wide)")
    return [("CPU limit", text)]


def host_limited(m: Measurement) -> bool:
    """fio's submitting threads were saturated on this point (hostload.saturated): it may show the host's limit."""
    return hostload.saturated(m)


def cpu_cell(m: Measurement) -> tuple[str, str]:
    """The results table's CPU cell: fio's usr+sys, then a note with the submitting CPUs' busy share and the
    host-limit flag."""
    if m.engine == "sim":
        return "n/a", ""  # the model uses no host CPU per I/O: nothing was measured, and a 0 would read as one
    text = f"{m.usr_cpu + m.sys_cpu:.0f} ({m.usr_cpu:.0f}+{m.sys_cpu:.0f})"
    cpu = m.extra.get("host_cpu") or {}
    notes = []
    if cpu.get("available") and cpu.get("submitting_busy_pct") is not None:
        notes.append(f"CPUs {cpu['submitting_busy_pct']:.0f} % busy")
    if host_limited(m):
        notes.append("⚠ host-limited")
    return text, ", ".join(notes)


# ------------------------------------------------------------------ the section

@dataclass(frozen=True)
class DeviceView:
    """One device's part of the section: interface, identity, counters, cross-checks, temperature."""

    path: str | None  # a heading when the run had several devices
    interface: str
    link: Table | None
    unavailable: str | None  # why its health could not be read (then nothing below is shown)
    identity: Table | None = None
    counters: Table | None = None
    after_missing: bool = False
    checks: list[tuple[str, str]] = field(default_factory=list)  # (bytes written | read, the cross-check)
    no_byte_counter: bool = False
    temperature: str = ""  # its charts (_temperature_chart)
    raw: list[str] = field(default_factory=list)  # raw tool outputs in the run directory
    errors: str = ""  # queries that failed


@dataclass(frozen=True)
class CpuView:
    flagged: int
    measured: int
    saturated_pct: str
    table: Table


@dataclass(frozen=True)
class HealthView:
    """What templates/sections/health.html.j2 shows."""

    unavailable: str  # why the run has no drive data at all ('' when it has some)
    devices: list[DeviceView]
    cpu: CpuView | None


def sections(run: Run, run_dir: Path) -> list[Section]:
    from ssdlab.report.templating import fragment  # (here: the terminal summary reads this module too)

    reason = _unavailable(run)
    devices: list[DeviceView] = []
    if not reason:
        changes = [c for c in run.health.get("settings", []) if isinstance(c, Mapping)]
        several = len(_devices(run)) > 1
        devices = [_device(run, e, changes, several) for e in _devices(run)]
    view = HealthView(unavailable=reason, devices=devices, cpu=_cpu(run))
    return [Section(title=SECTION_TITLE, html=fragment("health.html.j2", v=view), anchor="drive-health")]


def _device(run: Run, entry: Mapping[str, Any], changes: Sequence[Mapping[str, Any]], several: bool) -> DeviceView:
    snaps = entry.get("snapshots") or []
    before, after = health.first_last(snaps)
    snap = before or after or (snaps[0] if snaps else {})
    lnk = snap.get("link") or {}
    path = str(entry.get("path")) if several else None
    link_table = _link_table(lnk) if lnk.get("available") else None
    if not snap.get("available"):
        return DeviceView(path, link_text(lnk), link_table, unavailable=str(snap.get("reason")))
    checks = health.device_cross_check(run.points, entry, _devices(run))
    return DeviceView(
        path, link_text(lnk), link_table, unavailable=None, identity=_identity_table(snap, changes),
        counters=_counter_table(snap, before, after), after_missing=after is None,
        checks=[(str(c["direction"]), _check_text(c)) for c in checks],
        no_byte_counter=not checks and after is not None, temperature=_temperature_chart(entry, before, after),
        raw=sorted({p for s in snaps for p in (s.get("raw") or {}).values()}),
        errors="; ".join(sorted({e for s in snaps for e in s.get("errors", [])})))


def _counter_table(snap: Mapping[str, Any], before: Mapping[str, Any] | None,
                   after: Mapping[str, Any] | None) -> Table | None:
    rows = health.delta(before, after)
    if not rows:
        return None
    return Table(("counter", "before the run", "after the run", "change"),
                 [(f"{r['label']}" + (f" ({r['unit']})" if r["unit"] else ""), formatting.counter(r["before"]),
                   formatting.counter(r["after"]), formatting.change(r["change"])) for r in rows],
                 f"Health counters ({snap.get('tool', 'tool unknown')}); before {_time(before)}, after {_time(after)}")


def _link_table(lnk: Mapping[str, Any]) -> Table:
    rows = [("trained at", lnk.get("label", "")), ("device maximum", lnk.get("max_label", "not reported"))]
    if lnk.get("port_max_label"):
        rows.append(("port above it, maximum", lnk["port_max_label"]))
    rows += [("line encoding", lnk.get("encoding", "")),
             ("after encoding", _mbps(float(lnk.get("line_rate_bytes_per_s", 0)))),
             ("usable for data (model)", _mbps(float(lnk.get("usable_bytes_per_s", 0)))),
             ("overhead model", lnk.get("model", ""))]
    if lnk.get("below_max"):
        rows.append(("warning", lnk["below_max"]))
    if lnk.get("emulated"):
        rows.append(("emulated", lnk["emulated"]))
    return Table(("link", ""), rows, "Interface limit (docs/health.md states the model and its sources)")


def _lba_format_text(fmt: Mapping[str, Any]) -> str:
    text = f"{fmt['data_bytes']} B data"
    if fmt.get("metadata_bytes") is not None:
        text += f" + {fmt['metadata_bytes']} B metadata"
    if fmt.get("index") is not None:
        text += f" (LBA format {fmt['index']}"
        text += f", {fmt['relative_performance']} performance)" if fmt.get("relative_performance") else ")"
    return text


def _format_rows(ident: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The drive's LBA format, its other formats and its power states."""
    rows = []
    fmt = ident.get("lba_format")
    if isinstance(fmt, Mapping) and fmt.get("data_bytes"):
        rows.append(("LBA format", _lba_format_text(fmt)))
    others = [f for f in ident.get("lba_formats") or [] if f is not fmt and f != fmt]
    if others:
        rows.append(("other LBA formats", ", ".join(f"{f.get('data_bytes')}+{f.get('metadata_bytes')} B"
                                                   for f in others)))
    states = ident.get("power_states") or []
    if states:
        rows.append(("power states", "; ".join(
            f"PS{s['ps']} {s.get('max_power_w', '?')} W" + ("" if s.get("operational", True) else " (idle)")
            for s in states)))
    return rows


def _identity_table(snap: Mapping[str, Any], changes: Sequence[Mapping[str, Any]]) -> Table:
    ident = snap.get("identity") or {}
    rows = [(label, str(ident[key])) for key, label in (("model", "model"), ("serial", "serial"),
                                                        ("firmware", "firmware"), ("vendor", "vendor"))
            if ident.get(key)]
    cap = ident.get("capacity_bytes") or ident.get("total_capacity_bytes")
    if cap:
        rows.append(("capacity", f"{format_bytes(float(cap))} ({int(cap):,} bytes)"))
    rows += _format_rows(ident)
    rows += [(label, f"{ident[key]} °C") for key, label in (("warning_temp_c", "warning temperature"),
                                                            ("critical_temp_c", "critical temperature"))
             if key in ident]
    rows += [(label, str(ident[key])) for key, label in (("sata_version", "SATA version"), ("transport", "transport"),
                                                         ("rotation", "rotation"), ("form_factor", "form factor"))
             if ident.get(key)]
    rows.append(("write cache", _state_text(snap, changes, "write_cache")))
    if snap.get("kind") == "nvme":
        rows.append(("power state", _state_text(snap, changes, "power_state")))
    rows.append(("read with", str(snap.get("tool", "unknown"))))
    return Table(("identity", ""), rows, "Drive identity (before the run)")


def _time(snap: Mapping[str, Any] | None) -> str:
    return str(snap.get("time", "?")) if snap else "not taken"


def _check_text(c: Mapping[str, Any]) -> str:
    test, drive, res = int(c["test_bytes"]), int(c["drive_bytes"]), int(c["resolution_bytes"])
    verb = "wrote" if c["direction"] == "written" else "read"
    covers = c.get("covers")
    whom = f" on {' and '.join(covers)}, whose controller keeps one counter for them all," if covers else ""
    text = (f"the test {verb} {test:,} bytes ({format_bytes(test)}){whom}; the drive's counter moved by "
            f"{drive:,} bytes ({format_bytes(drive)}), counted in steps of {res:,} bytes")
    if c.get("ratio") is not None:
        text += f"; drive/test = {c['ratio']:.3g}"
        if abs(drive - test) <= res:
            text += " (equal within the counter's resolution)"
        elif drive > test:
            text += " (the drive saw more: other writers to the device, or metadata/purge traffic)"
        else:
            text += " (the drive saw less: the counter lags, or the I/O went elsewhere)"
    return text


def _seconds(start: str, t: str) -> float | None:
    try:
        return (datetime.fromisoformat(t) - datetime.fromisoformat(start)).total_seconds()
    except (TypeError, ValueError):
        return None


def _time_axis(seconds: Sequence[float]) -> tuple[float, str]:
    """Divisor and label that keep the x axis readable: minutes, hours or days since the start."""
    span = max(seconds) if seconds else 0.0
    if span > 3 * 86400:
        return 86400.0, "days since the start"
    if span > 3 * 3600:
        return 3600.0, "hours since the start"
    return 60.0, "minutes since the start"


def _readings(entry: Mapping[str, Any], before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
              ) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(seconds since the first snapshot, °C) and (seconds, TMT1+TMT2 transitions) of every snapshot and sample."""
    start = str((before or {}).get("time", ""))
    temps: list[tuple[float, float]] = []
    throttle: list[tuple[float, float]] = []
    for s in [before, *(entry.get("samples") or []), after]:
        if not s:
            continue
        t = _seconds(start, str(s.get("time", ""))) if start else None
        if t is None:
            continue
        h = s.get("health") if isinstance(s.get("health"), Mapping) else s
        temp = h.get("temperature_c")
        if temp is not None:
            temps.append((t, float(temp)))
        thermal = h.get("thermal_management", h) if isinstance(h, Mapping) else {}
        if thermal.get("tmt1_transitions") is not None:
            throttle.append((t, float(thermal["tmt1_transitions"]) + float(thermal.get("tmt2_transitions") or 0)))
    return temps, throttle


def _temperature_charts(entry: Mapping[str, Any], before: Mapping[str, Any] | None,
                        after: Mapping[str, Any] | None) -> tuple[list[Chart], bool]:
    """Temperature over the run (the before/after snapshots and every sample in between) and, where the drive
    counts them, its thermal-management (throttling) transitions; and whether those counters stood still."""
    temps, throttle = _readings(entry, before, after)
    if len(temps) < 3:
        return [], False
    from ssdlab.report import charts  # (here: the terminal summary reads this module without drawing a chart)

    scale, xlabel = _time_axis([t for t, _ in temps])
    out = [Chart(charts.line_chart([charts.Series("temperature (°C)", [t / scale for t, _ in temps],
                                                  [v for _, v in temps], style="-o")],
                                   title="Drive temperature during the run", xlabel=xlabel, ylabel="°C"),
                 f"{len(temps)} readings: before the run, {len(temps) - 2} during it, after it")]
    if len(throttle) >= 2 and throttle[-1][1] > throttle[0][1]:
        first = throttle[0][1]
        out.append(Chart(charts.line_chart(
            [charts.Series("TMT1+TMT2 transitions", [t / scale for t, _ in throttle], [v - first for _, v in throttle],
                           style="-o", color="#D55E00")],
            title="Thermal throttling transitions since the start", xlabel=xlabel, ylabel="transitions"),
            "the drive's thermal management counters (NVMe SMART log): each step is a throttling event"))
        return out, False
    return out, bool(throttle)


def _temperature_chart(entry: Mapping[str, Any], before: Mapping[str, Any] | None,
                       after: Mapping[str, Any] | None) -> str:
    """The temperature and throttling charts ('' with fewer than three readings)."""
    found, still = _temperature_charts(entry, before, after)
    if not found:
        return ""
    from ssdlab.report.templating import fragment

    return fragment("health_temperature.html.j2", charts=found, throttle_still=still)


def _cpu(run: Run) -> CpuView | None:
    rows = []
    for r in run.points:
        m = r.measurement
        if r.status != "ok" or m is None or m.engine == "sim" or r.point.phase != "measure":
            continue
        cpu = m.extra.get("host_cpu") or {}
        rows.append((r.point.label, f"{m.usr_cpu + m.sys_cpu:.0f}",
                     f"{cpu['submitting_busy_pct']:.0f}" if cpu.get("submitting_busy_pct") is not None else
                     ("not sampled" if not cpu else f"not available: {cpu.get('reason', '')}"),
                     str(cpu.get("submitting_cpus", "")), "yes" if hostload.saturated(m) else "no"))
    if not rows:
        return None
    return CpuView(flagged=sum(1 for r in rows if r[-1] == "yes"), measured=len(rows),
                   saturated_pct=f"{hostload.SATURATED_PCT:g}",
                   table=Table(("point", "fio usr+sys % per job", "submitting CPUs busy % (median)", "CPUs",
                                "host-limited"), rows))
