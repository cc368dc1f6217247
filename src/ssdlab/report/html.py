"""report.html: one self-contained file (inline CSS, inline SVG charts, no scripts, no external URLs).

`render_report(run, run_dir)` builds a view of the stored run (header facts, notices, results table, charts,
procedure steps, suite sections, fio commands) and renders it through the jinja2 templates in
report/templates/ with autoescaping, so every string from run data is escaped. Chart SVG and suite section
fragments are the only markup inserted as-is (both are produced by ssdlab code, not read from run data: the
sections are rendered from templates/sections/ by report.templating, escaped there).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ssdlab import metrics
from ssdlab.report import cdm, charts, readable, sections
from ssdlab.report import health as drive_health
from ssdlab.report.sections import Section
from ssdlab.report.templating import page_environment, trusted
from ssdlab.results import atomic
from ssdlab.results.counts import is_measured, point_counts
from ssdlab.results.model import DirectionStats, LatencyStats, PointResult, Run
from ssdlab.results.naming import run_title, target_name
from ssdlab.results.verdict import RunVerdict, run_verdicts
from ssdlab.run import hostload
from ssdlab.units import format_bs, format_bytes, format_duration

PERCENTILES: tuple[float, ...] = (50.0, 90.0, 99.0, 99.9, 99.99)
TABLE_PERCENTILES: tuple[float, ...] = (50.0, 99.0, 99.9, 99.99)
MAX_CHART_BARS = 64  # bars in one throughput/IOPS chart; more tests are charted in further charts
MAX_BAR_CHUNKS = 16  # pairs of throughput/IOPS charts before the rest is left to the table
LINES_PER_CHART = 8  # latency-percentile lines in one chart (beyond that, colours repeat and legends grow)
MAX_LATENCY_LINES = 48  # all latency-percentile charts together
CHART_WIDTH_IN = 5.8  # two charts side by side on a laptop screen render near 1:1
MAX_ARTEFACT_CHARS = 20_000  # per cmd.txt/job.fio/stderr.txt shown in the report
GROUP_ARTEFACTS_OVER = 40  # more points than this: commands are grouped per test group
RESULTS_OPEN_MAX = 60  # more measured points than this: the results table starts collapsed
READ_COLOR, WRITE_COLOR, TRIM_COLOR = "#0072B2", "#D55E00", "#009E73"
DIRECTION_COLORS = {"read": READ_COLOR, "write": WRITE_COLOR, "trim": TRIM_COLOR}
# the report modules of the suite families (and the I/O errors and stalls section of any suite); each registers
# its sections with report.sections when imported
SECTION_MODULES = ("ssdlab.report.pts", "ssdlab.report.pts_demand", "ssdlab.report.characterization",
                   "ssdlab.report.act", "ssdlab.report.integrity", "ssdlab.report.faults", "ssdlab.report.groups",
                   "ssdlab.report.replay")

SIM_NOTE = (
    "These results come from ssdlab's SSD model, not from a real drive. They show mechanisms (write "
    "amplification, garbage collection, caching, queueing) and the ratios between workloads; the absolute "
    "numbers are not a measurement of any device."
)
NULL_NOTE = (
    "fio's null engine completes every I/O without touching a device. These numbers are the ceiling of this "
    "host and fio (CPU, submission path), not storage performance: a device result on this host cannot exceed "
    "them."
)


# ---------------------------------------------------------------- view model

@dataclass(frozen=True)
class Notice:
    level: str  # "sim" | "error" | "warn" | "info"
    title: str
    text: str


@dataclass(frozen=True)
class DirRow:
    direction: str
    iops: str
    mbps: str
    mean: str
    pcts: tuple[str, ...]
    max: str
    link: str = ""  # "95 % of PCIe 4.0 x4" when the drive's link is known


@dataclass(frozen=True)
class PointView:
    id: str
    label: str
    phase: str
    status: str
    workload: str
    rows: tuple[DirRow, ...]
    cpu: str
    reason: str
    warnings: tuple[str, ...]
    attempt: int
    cpu_note: str = ""  # the submitting CPUs' busy share and the host-limit flag
    amount: str = ""
    started: str = ""
    duration: str = ""
    tags: str = ""
    result: str = ""


@dataclass(frozen=True)
class Artefacts:
    id: str
    label: str
    status: str
    files: tuple[tuple[str, str], ...]  # (file name, text)


@dataclass(frozen=True)
class ArtefactGroup:
    title: str  # "" when the points are not grouped (few points)
    items: tuple[Artefacts, ...]


@dataclass(frozen=True)
class Figure:
    title: str
    svg: Markup


@dataclass
class ReportView:
    title: str
    subtitle: str
    run: Run
    facts: list[tuple[str, list[tuple[str, str]]]]
    notices: list[Notice]
    events: list[tuple[str, str, str]]
    points: list[PointView]
    procedure: list[PointView]
    bar_figures: list[Figure]
    bar_note: str
    latency_figures: list[Figure]
    latency_note: str
    sections: list[Section]  # html marked trusted(), anchors unique
    artefacts: list[ArtefactGroup]
    verdict: RunVerdict
    toc: list[tuple[str, str]] = field(default_factory=list)
    cdm: Markup = field(default_factory=Markup)  # the CrystalDiskMark-style grid of a corner suite (report/cdm.py)
    percentile_names: tuple[str, ...] = tuple(f"p{p:g}" for p in TABLE_PERCENTILES)
    results_open_max: int = RESULTS_OPEN_MAX
    count: str = ""  # the results table's points as every page counts them (results/counts.py)


# ---------------------------------------------------------------- formatting

def fmt_time(iso: str) -> str:
    """'2026-11-21T23:43:52+00:00' -> '2026-11-21 23:43:52 UTC' (other offsets are kept)."""
    t = _parse_time(iso)
    if t is None:
        return iso
    offset = t.utcoffset()
    zone = "UTC" if offset is not None and offset.total_seconds() == 0 else t.strftime("%z") or "local"
    return t.strftime("%Y-%m-%d %H:%M:%S ") + zone


def _parse_time(iso: str) -> datetime | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso)
    except ValueError:
        return None


def seconds_between(a: str, b: str) -> float | None:
    """Seconds from one stored ISO time to another (None when either is missing, unreadable or only one has a zone)."""
    ta, tb = _parse_time(a), _parse_time(b)
    if ta is None or tb is None or (ta.tzinfo is None) != (tb.tzinfo is None):
        return None
    return (tb - ta).total_seconds()


def latency_percentiles(lat: LatencyStats, ps: Sequence[float]) -> dict[float, float | None]:
    """LatencyStats.percentiles (bins expanded once; values clamped to the observed min/max)."""
    return lat.percentiles(list(ps))


def describe_workload(point: PointResult) -> str:
    """'randread 4K QD32×1 1 s' style summary of a point's I/O."""
    w = point.point.workload
    bs = w.bssplit or format_bs(w.bs)
    parts = [w.rw, bs, f"QD{w.iodepth}×{w.numjobs}"]
    if w.rwmixread is not None and w.rw in ("rw", "readwrite", "randrw"):
        parts.append(f"{w.rwmixread}/{100 - w.rwmixread} R/W")
    if w.rate_iops:
        parts.append(f"rate {w.rate_iops:,} IOPS")
    if w.random_distribution:
        parts.append(w.random_distribution)
    return " ".join(parts)


def describe_amount(point: PointResult) -> str:
    """How much the point runs for: its runtime, or the bytes per job for size-based steps."""
    w = point.point.workload
    bits = []
    if w.runtime_s is not None:
        bits.append(f"{w.runtime_s:g} s" + (f" (+{w.ramp_s:g} s ramp)" if w.ramp_s else ""))
    if w.io_bytes is not None:
        bits.append(f"{format_bytes(w.io_bytes)} per job")
    if w.size is not None:
        bits.append(f"range {format_bytes(w.size)}" + (f" at {format_bytes(w.offset)}" if w.offset else ""))
    return ", ".join(bits)


IOPS, MBPS, LATENCY = metrics.get("iops"), metrics.get("bw_MBps"), metrics.get("lat_mean_us")  # their table text


def _us(ns: float | None) -> str:
    return LATENCY.text(None if ns is None else ns / 1000.0)


def _dir_row(name: str, d: DirectionStats, link: Mapping[str, Any] | None = None) -> DirRow:
    lat = d.clat or d.lat
    pcts: tuple[str, ...] = ("",) * len(TABLE_PERCENTILES)
    mean = mx = ""
    if lat is not None and lat.n > 0:
        found = latency_percentiles(lat, TABLE_PERCENTILES)
        pcts = tuple(_us(found[p]) for p in TABLE_PERCENTILES)
        mean, mx = _us(lat.mean_ns), _us(lat.max_ns)
    return DirRow(direction=name, iops=IOPS.text(d.iops), mbps=MBPS.text(d.bw_mbps), mean=mean, pcts=pcts, max=mx,
                  link=drive_health.fraction_text(d.bw_bytes, link))


def _point_warnings(r: PointResult) -> tuple[str, ...]:
    # the host-CPU flag is marked in the CPU cell and explained once, in the notices (runs stored before that
    # carry it as a warning paragraph per point)
    out = [w for w in r.warnings if not w.startswith("host CPU limit:")]
    m = r.measurement
    if m is not None and m.errors and not any("error" in w.lower() for w in (*out, r.reason)):
        out.append(f"fio reported {m.errors:,} I/O error(s) for this point")
    return tuple(out)


def point_view(r: PointResult, link: Mapping[str, Any] | None = None) -> PointView:
    """Table row data of one point (any phase, any status); `link` adds each direction's share of it."""
    m = r.measurement
    rows: tuple[DirRow, ...] = ()
    cpu = cpu_note = ""
    result = ""
    if m is not None:
        rows = tuple(_dir_row(name, d, link) for name, d in m.directions.items())
        cpu, cpu_note = drive_health.cpu_cell(m)
        result = ", ".join(f"{name} {MBPS.text(d.bw_mbps)} MB/s, {IOPS.text(d.iops)} IOPS"
                           for name, d in m.directions.items())
    reason = r.reason
    if r.status == "ok" and m is None and not reason:
        reason = "no measurement recorded for this step"
    elif r.status == "ok" and m is not None and not m.directions:
        reason = "fio reported no completed I/O"
    secs = seconds_between(r.started, r.finished)
    tags = "; ".join(f"{readable.humanize(k)} {readable.value_text(v, k)}" for k, v in r.point.tags.items()
                     if k not in ("direction", "access") and v not in (None, "", [], {}))
    return PointView(
        id=r.point.id, label=r.point.label, phase=r.point.phase, status=r.status, workload=describe_workload(r),
        rows=rows, cpu=cpu, cpu_note=cpu_note, reason=reason, warnings=_point_warnings(r), attempt=r.attempt,
        amount=describe_amount(r), started=fmt_time(r.started),
        duration=format_duration(secs) if secs is not None else "", tags=tags, result=result,
    )


# ---------------------------------------------------------------- header and notices


def is_sim(run: Run) -> bool:
    """Results produced by the SSD model rather than a device."""
    if str(run.target.get("kind", "")) == "sim" or str(run.host.get("engine", "")) == "sim":
        return True
    return any(r.measurement is not None and r.measurement.engine == "sim" for r in run.points)


def _duration(run: Run) -> str:
    end = run.finished
    if not end:
        ends = [r.finished for r in run.points if r.finished]
        end = max(ends) if ends else ""
    secs = seconds_between(run.created, end)
    if secs is None:
        return "unknown"
    text = format_duration(secs)
    return text if run.finished else f"{text} (until the last finished point)"


def _runtime_per_point(run: Run) -> str:
    """'0.5 s (--runtime); 10 s: 2 points timed by the suite (the spec's 20 min, scaled); 1 s: 1 point extended
    (too few I/Os in 0.5 s)': every measured run time, each one other than --runtime with why."""
    measured = [r.point for r in run.points if r.point.phase == "measure" and r.point.workload.runtime_s is not None]
    ramps = sorted({p.workload.ramp_s for p in measured if p.workload.ramp_s})
    opt = run.options.runtime_s
    if not measured:
        return f"{opt:g} s" if isinstance(opt, (int, float)) else "size-based"
    counts: dict[float, int] = {}
    why: dict[float, str] = {}
    for p in measured:
        v = float(p.workload.runtime_s or 0.0)
        counts[v] = counts.get(v, 0) + 1
        planned, spec_min = p.tags.get("planned_runtime_s"), p.tags.get("spec_minutes")
        if planned is not None:
            why.setdefault(v, f"extended (too few I/Os in {float(planned):g} s)")
        elif spec_min is not None and isinstance(opt, (int, float)):
            why.setdefault(v, f"timed by the suite (the spec's {float(spec_min):g} min, scaled)")
        else:
            why.setdefault(v, "timed by the suite")
    main = opt if isinstance(opt, (int, float)) and opt in counts else max(counts, key=lambda v: (counts[v], -v))
    parts = [f"{main:g} s" + (" (--runtime)" if main == opt and len(counts) > 1 else "")]
    for v in sorted(counts, key=lambda v: -counts[v]):
        if v != main:
            parts.append(f"{v:g} s: {counts[v]} point{'s' if counts[v] > 1 else ''} {why[v]}")
    text = "; ".join(parts)
    if ramps:
        text += " + ramp " + ", ".join(f"{v:g} s" for v in ramps)
    return text


Facts = list[tuple[str, str]]


def header_facts(run: Run) -> list[tuple[str, Facts]]:
    """Grouped (label, value) facts for the run header: the run, the host, the target, the options."""
    return [("Run", run_facts(run)), ("Host", host_facts(run.host) + drive_health.host_facts(run)),
            ("Target", target_facts(run.target) + drive_health.target_facts(run)), ("Options", option_facts(run))]


def run_facts(run: Run) -> Facts:
    """Suite, status, times, points, versions."""
    return [
        ("suite", run.suite),
        ("status", run.status),
        ("started", fmt_time(run.created)),
        ("finished", fmt_time(run.finished) if run.finished else "not finished"),
        ("duration", _duration(run)),
        ("points", _points_summary(run)),
        ("ssdlab", str(run.ssdlab_version)),
        ("engine", readable.engine_text(run)),
        ("run id", run.run_id),
    ]


def host_facts(h: Mapping[str, Any]) -> Facts:
    """The machine the run ran on (run.json `host`)."""
    cpu = str(h.get("cpu_model") or "unknown")
    if h.get("cpu_count"):
        cpu += f" ({h['cpu_count']} CPUs)"
    mem = h.get("memory_bytes")
    facts = [
        ("hostname", str(h.get("hostname") or "unknown")),
        ("OS", str(h.get("os") or "unknown")),
        ("kernel", " ".join(str(x) for x in (h.get("kernel"), h.get("arch")) if x) or "unknown"),
        ("CPU", cpu),
        ("memory", format_bytes(float(mem)) if isinstance(mem, (int, float)) else "unknown"),
    ]
    if h.get("cpu_governor"):
        facts.append(("CPU governor", str(h["cpu_governor"])))
    return facts


def target_facts(t: Mapping[str, Any]) -> Facts:
    """What was tested (run.json `target`): name, kind, sizes, then the device's identity."""
    facts = [("name", target_name(t)), ("kind", str(t.get("kind") or "unknown"))]
    if t.get("path") and t.get("path") != t.get("name"):
        facts.append(("path", str(t["path"])))
    cap = t.get("capacity_bytes")
    facts.append(("capacity tested", format_bytes(float(cap)) if isinstance(cap, (int, float)) else "unknown"))
    if isinstance(t.get("device_bytes"), (int, float)) and t.get("device_bytes") != cap:
        facts.append(("device size", format_bytes(float(t["device_bytes"]))))
    facts.append(("block size", f"{t.get('logical_block_size', '?')} B logical, "
                                f"{t.get('physical_block_size', '?')} B physical"))
    return facts + identity_facts(t.get("identity") or {})


def identity_facts(ident: Any) -> Facts:
    """Model, serial and firmware (always listed, 'not reported' when unknown), then any other identity."""
    if not isinstance(ident, Mapping):
        return []
    named = ("model", "serial", "firmware")
    facts = [(key, str(ident.get(key) or "not reported")) for key in named]
    return facts + [(readable.humanize(str(key)), readable.value_text(v, str(key))) for key, v in ident.items()
                    if key not in named and v not in (None, "", [], {})]


def option_facts(run: Run) -> Facts:
    """The run's options and its suite's options, as sentences a reader can follow (report.readable)."""
    return [("runtime per point", _runtime_per_point(run)), *readable.option_facts(run)]


def _points_summary(run: Run) -> str:
    """The run's points as every page counts them (results/counts.py)."""
    return point_counts(run).text() if run.points else "none recorded"


def _host_cpu_notice(run: Run) -> Notice | None:
    """The host-CPU flag's one paragraph: how many measured points fio's threads saturated, how to lift it."""
    measured = [r.measurement for r in run.points if r.measurement is not None and is_measured(r)]
    flagged = [m for m in measured if drive_health.host_limited(m)]
    if not flagged:
        return None
    advice = hostload.stored_advice(flagged)
    return Notice("warn", "Host CPU limit", hostload.advice_text(len(flagged), len(measured), advice)
                  + " (marked ⚠ host-limited in the CPU column).")


def notices(run: Run) -> list[Notice]:
    """What a reader must know before reading numbers: model results, null ceilings, stops, warnings."""
    out: list[Notice] = []
    sim = is_sim(run)
    if sim:
        sim_info = run.target.get("sim")  # the preset's source review and how close it is (sim/presets.py)
        calib = str(sim_info.get("calibration", "")) if isinstance(sim_info, dict) else ""
        out.append(Notice("sim", "Simulated target: not a real drive", f"{SIM_NOTE} {calib}".strip()))
    kind = str(run.target.get("kind", ""))
    if kind == "null":
        out.append(Notice("info", "null target: host ceiling, no device", NULL_NOTE))
    elif run.target.get("note") and not sim:  # the sim notice above already says it
        title = "host group" if run.target.get("hosts") else f"{kind or 'target'} target"
        out.append(Notice("info", title, str(run.target["note"])))
    if run.status == "interrupted":
        out.append(Notice("error", "Run interrupted",
                          "The run was stopped before its last point; the points below are the ones that "
                          "finished. `ssdlab resume DIR` continues it."))
    elif run.status == "failed":
        out.append(Notice("error", "Run failed", "A point failed and the run stopped; see events and the "
                          "failed point's reason below. Finished points are kept."))
    elif run.status == "running":
        out.append(Notice("warn", "Run still in progress (or killed)",
                          "run.json says the run is still running: this report shows the points saved so far."))
    for w in run.warnings:
        out.append(Notice("warn", "Warning", w))
    cpu = _host_cpu_notice(run)
    if cpu is not None:
        out.append(cpu)
    bad = [r for r in run.points if r.status != "ok"]
    if bad:
        out.append(Notice("warn", f"{len(bad)} point(s) not measured or invalid",
                          "; ".join(f"{r.point.label}: {r.status}" + (f" ({r.reason})" if r.reason else "")
                                    for r in bad[:10]) + (" …" if len(bad) > 10 else "")))
    warned = sum(1 for r in run.points if r.warnings)
    if warned:
        out.append(Notice("warn", f"{warned} point(s) carry warnings",
                          "Each is listed under its row in the results table."))
    return out


def event_rows(run: Run) -> list[tuple[str, str, str]]:
    """(time, event, description) of run events as sentences (report.readable); verdicts are in the panel."""
    return readable.event_rows(run.events, fmt_time)


# ---------------------------------------------------------------- charts

@dataclass
class _Charted:
    """One chart row: the latest stats of each direction of one test, or why a direction has none."""

    category: str
    last: PointResult
    stats: dict[str, DirectionStats] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # direction -> "skipped" / "failed" / ...


# tags that number repetitions of one workload (rounds, samples) or name its direction: not part of its identity
_REPEAT_TAGS = frozenset({"round", "sample", "iteration", "loop", "pass", "attempt", "direction", "access", "burst"})
_ACCESS = {"read": "seq", "write": "seq", "randread": "rand", "randwrite": "rand", "readwrite": "rw"}


def _signature(r: PointResult) -> tuple[Any, ...]:
    """What makes two points 'the same test' for charting: group and workload, ignoring direction/round."""
    w = r.point.workload
    tags = tuple(sorted((str(k), repr(v)) for k, v in r.point.tags.items() if k not in _REPEAT_TAGS))
    return (r.point.group, _ACCESS.get(w.rw, w.rw), w.bssplit or w.bs, w.iodepth, w.numjobs,
            w.rwmixread if w.rw in ("rw", "readwrite", "randrw") else None, w.rate_iops, w.random_distribution,
            w.size, tuple(sorted(w.options.items())), tags)


def workload_directions(rw: str, rwmixread: int | None) -> tuple[str, ...]:
    """Directions a workload issues (what a point that did not run would have measured)."""
    if rw in ("read", "randread"):
        return ("read",)
    if rw in ("write", "randwrite"):
        return ("write",)
    if rw in ("trim", "randtrim"):
        return ("trim",)
    if rw == "trimwrite":
        return ("trim", "write")
    if rwmixread == 100:
        return ("read",)
    if rwmixread == 0:
        return ("write",)
    return ("read", "write")


def charted_points(points: Sequence[PointResult]) -> tuple[list[_Charted], int]:
    """One chart row per distinct test; a read and a write point of one test share the row (CrystalDiskMark).

    A test repeated over rounds or samples is charted with its last point; a point that did not measure
    (skipped, failed) marks its directions with its status instead of a value. Returns the rows and the
    number of earlier repetitions left out.
    """
    rows: dict[tuple[Any, ...], _Charted] = {}
    replaced = 0
    for r in points:
        row = rows.setdefault(_signature(r), _Charted(category="", last=r))
        m = r.measurement
        measured = r.status == "ok" and m is not None and bool(m.directions)
        dirs = tuple(m.directions) if measured and m is not None else \
            workload_directions(r.point.workload.rw, r.point.workload.rwmixread)
        if any(d in row.stats or d in row.notes for d in dirs):
            replaced += 1
        for d in dirs:
            if measured and m is not None:
                row.stats[d] = m.directions[d]
                row.notes.pop(d, None)
            else:
                row.stats.pop(d, None)
                row.notes[d] = r.status if r.status != "ok" else "no data"
        row.last = r
    per_group: dict[str, int] = {}
    for sig in rows:
        per_group[sig[0]] = per_group.get(sig[0], 0) + 1
    for sig, row in rows.items():
        group = sig[0]
        row.category = group if group and per_group[group] == 1 else _strip_direction(row.last)
    return list(rows.values()), replaced


def _strip_direction(r: PointResult) -> str:
    label = r.point.label
    d = str(r.point.tags.direction or "")
    if d and label.lower().endswith(" " + d.lower()):
        label = label[: -len(d) - 1]
    return label


def _bars(c: _Charted) -> int:
    return max(1, len(c.stats) + len(c.notes))


def bar_chunks(rows: Sequence[_Charted]) -> list[list[_Charted]]:
    """The rows in charts of at most MAX_CHART_BARS bars, in order; a test group starts a chart of its own when it
    would fit in one but not in what is left of the current chart (a PTS IOPS matrix is not split across two
    charts when it fits in one)."""
    group_bars: dict[str, int] = {}
    for c in rows:
        group_bars[c.last.point.group] = group_bars.get(c.last.point.group, 0) + _bars(c)
    out: list[list[_Charted]] = [[]]
    used = 0
    for c in rows:
        group = c.last.point.group
        starts = bool(out[-1]) and out[-1][-1].last.point.group != group
        whole = group_bars[group]
        if out[-1] and (used + _bars(c) > MAX_CHART_BARS or (starts and used + whole > MAX_CHART_BARS >= whole)):
            out.append([])
            used = 0
        out[-1].append(c)
        used += _bars(c)
    return [chunk for chunk in out if chunk]


def bar_figures(rows: Sequence[_Charted], replaced: int) -> tuple[list[Figure], str]:
    """Throughput and IOPS charts of charted_points' rows, read vs write per test (unmeasured directions are
    labelled, not zero): one pair of charts per bar_chunks chunk, so every test is charted."""
    notes = []
    if replaced:
        notes.append(f"{replaced} earlier repetition(s) of a test (rounds, samples) are not charted: each "
                     "test shows its last point")
    if not any(c.stats for c in rows):
        return [], "; ".join(notes)
    chunks = bar_chunks(rows)
    if len(chunks) > MAX_BAR_CHUNKS:
        shown = sum(len(chunk) for chunk in chunks[:MAX_BAR_CHUNKS])
        notes.append(f"the charts show the first {shown} of {len(rows)} tests ({MAX_BAR_CHUNKS} pairs of charts); "
                     "every point is in the results table")
        chunks = chunks[:MAX_BAR_CHUNKS]
    elif len(chunks) > 1:
        notes.append(f"the {len(rows)} tests are charted in {len(chunks)} pairs of charts, at most "
                     f"{MAX_CHART_BARS} bars each")
    figs: list[Figure] = []
    first = 1
    for chunk in chunks:
        part = f", tests {first}-{first + len(chunk) - 1} of {len(rows)}" if len(chunks) > 1 else ""
        figs += _bar_pair(chunk, part)
        first += len(chunk)
    return figs, "; ".join(notes)


def _bar_pair(rows: Sequence[_Charted], part: str) -> list[Figure]:
    """The throughput and the IOPS chart of some rows (`part` says which, when there are several pairs)."""
    directions = [d for d in ("read", "write", "trim") if any(d in c.stats or d in c.notes for c in rows)]
    labels = [c.category for c in rows]

    def values(d: str, metric: str) -> list[float | None]:
        out: list[float | None] = []
        for c in rows:
            st = c.stats.get(d)
            out.append(None if st is None else (st.bw_mbps if metric == "bw" else st.iops))
        return out

    missing = {d.capitalize(): [c.notes.get(d) for c in rows] for d in directions}
    colors = [DIRECTION_COLORS[d] for d in directions]
    figs = []
    for metric, name, unit in (("bw", "Throughput", "MB/s (decimal, 10⁶ bytes/s)"), ("iops", "IOPS", "IOPS")):
        title = name + part
        svg = charts.grouped_hbar_chart(labels, {d.capitalize(): values(d, metric) for d in directions},
                                        title=title, xlabel=unit, colors=colors, width=CHART_WIDTH_IN,
                                        missing=missing)
        figs.append(Figure(title=title, svg=trusted(svg)))
    return figs


def latency_figures(rows: Sequence[_Charted]) -> tuple[list[Figure], str]:
    """Completion-latency percentile charts of charted_points' rows: one per direction, one line per test (split
    when crowded)."""
    by_dir: dict[str, list[tuple[str, dict[float, float | None]]]] = {}
    for c in rows:
        for d, st in c.stats.items():
            lat = st.clat or st.lat
            if lat is None or lat.n <= 0:
                continue
            found = latency_percentiles(lat, PERCENTILES)
            by_dir.setdefault(d, []).append(
                (c.category, {p: (None if v is None else v / 1000.0) for p, v in found.items()}))
    total = sum(len(v) for v in by_dir.values())
    figs: list[Figure] = []
    drawn = 0
    budget = MAX_LATENCY_LINES // max(1, len(by_dir))  # every direction gets its share of the charts
    for d in ("read", "write", "trim"):
        lines = by_dir.get(d, [])[:budget]
        drawn += len(lines)
        n_charts = -(-len(lines) // LINES_PER_CHART)
        for start in range(0, len(lines), LINES_PER_CHART):
            part = f" ({start // LINES_PER_CHART + 1} of {n_charts})" if n_charts > 1 else ""
            title = f"{d.capitalize()} completion latency percentiles{part}"
            chunk = lines[start:start + LINES_PER_CHART]
            figs.append(Figure(title=title, svg=trusted(charts.percentile_chart(chunk, title=title))))
    note = ""
    if drawn < total:
        note = (f"{total - drawn} of {total} point/direction lines are not drawn (chart limit "
                f"{MAX_LATENCY_LINES}); their percentiles are in the results table and the CSV export")
    return figs, note


# ---------------------------------------------------------------- artefacts and sections

def _read_artefact(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    text = data[: MAX_ARTEFACT_CHARS * 4].decode("utf-8", errors="replace")
    if len(text) > MAX_ARTEFACT_CHARS:
        text = text[:MAX_ARTEFACT_CHARS] + f"\n… ({len(data):,} bytes in total; see {path.name} in the run directory)"
    return text


def point_artefacts(run: Run, run_dir: Path) -> list[Artefacts]:
    """cmd.txt, job.fio (and a non-empty stderr.txt) of every point that has them."""
    out = []
    for r in run.points:
        pdir = run_dir / "points" / r.point.id
        files = []
        for name in ("cmd.txt", "job.fio", "stderr.txt"):
            text = _read_artefact(pdir / name)
            if text is None or (name == "stderr.txt" and not text.strip()):
                continue
            files.append((name, text.rstrip("\n")))
        if not files:
            what = "purge step run by ssdlab itself" if r.point.phase == "purge" else "no artefacts stored"
            files.append(("", what))
        out.append(Artefacts(id=r.point.id, label=r.point.label, status=r.status, files=tuple(files)))
    return out


def group_artefacts(run: Run, items: Sequence[Artefacts]) -> list[ArtefactGroup]:
    """Few points: one flat list. Many points: one collapsible block per test group (or phase)."""
    if len(items) <= GROUP_ARTEFACTS_OVER:
        return [ArtefactGroup("", tuple(items))]
    by_key: dict[str, list[Artefacts]] = {}
    for r, a in zip(run.points, items, strict=True):
        by_key.setdefault(r.point.group or r.point.phase, []).append(a)
    return [ArtefactGroup(f"{key} ({len(v)} points)", tuple(v)) for key, v in by_key.items()]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def suite_sections(run: Run, run_dir: Path) -> tuple[list[Section], list[Notice]]:
    """Suite-specific sections registered with report.sections (a failing builder becomes a notice)."""
    try:
        for name in SECTION_MODULES:
            importlib.import_module(name)
        found = sections.sections_for(run, run_dir)
    except Exception as exc:  # a broken section must not cost the whole report
        return [], [Notice("error", "Suite section failed",
                           f"the {run.suite} report section could not be built ({type(exc).__name__}: {exc}); "
                           "the generic report below is complete")]
    used: set[str] = set()
    views = []
    for s in found:
        anchor = base = "sec-" + _slug(s.anchor or s.title)
        n = 2
        while anchor in used:
            anchor, n = f"{base}-{n}", n + 1
        used.add(anchor)
        views.append(dataclasses.replace(s, anchor=anchor, html=trusted(s.html)))
    return views, []


def _group_notices(run: Run) -> list[Notice]:
    """Devices of a multi-device run that lagged their group (report/groups.py)."""
    from ssdlab.report.groups import host_limited_notice, straggler_notice

    out = []
    for title, text in (("Host-limited", host_limited_notice(run)), ("Stragglers", straggler_notice(run))):
        if text:
            out.append(Notice("warn", title, text))
    return out


# ---------------------------------------------------------------- rendering

def build_view(run: Run, run_dir: Path) -> ReportView:
    """Everything the template shows, computed from the stored run and its directory."""
    measure = [r for r in run.points if r.point.phase == "measure"]
    steps = [r for r in run.points if r.point.phase != "measure"]
    charted, replaced = charted_points(measure)
    bars, bar_note = bar_figures(charted, replaced)
    lats, lat_note = latency_figures(charted)
    secs, sec_notices = suite_sections(run, run_dir)
    secs = [dataclasses.replace(s, anchor="sec-" + s.anchor, html=trusted(s.html))
            for s in drive_health.sections(run, run_dir)] + secs
    link = drive_health.link_of(run)
    view = ReportView(
        title=f"ssdlab {run_title(run.suite, run.target)}",
        subtitle=(f"{fmt_time(run.created)} · {_points_summary(run)} · {readable.engine_text(run)} · "
                  f"ssdlab {run.ssdlab_version}"),
        run=run, facts=header_facts(run), notices=notices(run) + _group_notices(run) + sec_notices,
        events=event_rows(run),
        points=[point_view(r, link) for r in measure], procedure=[point_view(r) for r in steps],
        bar_figures=bars, bar_note=bar_note, latency_figures=lats, latency_note=lat_note, sections=secs,
        artefacts=group_artefacts(run, point_artefacts(run, run_dir)), verdict=run_verdicts(run), cdm=cdm.grid(run),
        count=point_counts(run).table_text(),
    )
    toc = [("summary", "Run")]
    if view.notices or view.events:
        toc.append(("notices", "Notices and events"))
    toc.append(("results", "Results"))
    if view.bar_figures:
        toc.append(("charts", "Throughput and IOPS"))
    if view.latency_figures:
        toc.append(("latency", "Latency percentiles"))
    if view.procedure:
        toc.append(("procedure", "Procedure"))
    toc.extend((s.anchor, s.title) for s in view.sections)
    toc.append(("commands", "fio commands and job files"))
    view.toc = toc
    return view


def render_html(run: Run, run_dir: Path) -> str:
    """The report as one HTML string (its charts are drawn together, in parallel where cores are free)."""
    env = page_environment()
    with charts.deferred() as batch:
        text = env.get_template("report.html.j2").render(v=build_view(run, run_dir))
    return batch.fill(text)


def render_report(run: Run, run_dir: Path) -> Path:
    """Write DIR/report.html atomically and return its path."""
    path = run_dir / "report.html"
    atomic.write_text(path, render_html(run, run_dir))
    atomic.make_shareable(path)
    return path

