"""Report sections of the PTS demand-intensity tests, CBW (or ECW) and DIRTH, in the SNIA report's order:
set-up, preconditioning and its steady state, the between-round pre-writes, the steady state of the tracking
variable (IOPS at the top TC x QD), the sweep tables, the demand-variation (IOPS vs QD per TC), demand-intensity
(ART vs IOPS), IOPS vs TOIO and CPU plots, then MaxIOPS/MidIOPS/MinIOPS with their response-time histograms,
CDF/exceedance and confidence-level plots (report.latency). Everything is read from the stored run.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ssdlab.formatting import csv_value
from ssdlab.report import charts, latency
from ssdlab.report.pts import register_test_sections
from ssdlab.report.pts_page import Window, chart, header, num, setup_section, table, window
from ssdlab.report.sections import Chart, Section, Table
from ssdlab.report.templating import fragment
from ssdlab.results.model import PointResult, Run
from ssdlab.suites.pts import demand
from ssdlab.suites.pts.common import PtsSettings, metric_value
from ssdlab.suites.pts.demand import ROLE_TITLES, ROLES, DemandState, DemandTest, SweepValue


def _minutes(s: PtsSettings, minutes: float) -> str:
    secs = minutes * s.runtime_s
    if s.runtime_s == 60:
        return f"{minutes:g} min"
    return f"{minutes:g} spec minutes = {secs:g} s (scaled: one minute lasts {s.runtime_s:g} s)"


# --------------------------------------------------------------------------- set-up

def _setup(run: Run, s: PtsSettings, t: DemandTest, state: DemandState) -> Section:
    ds = state.settings
    st = t.stimulus(s)
    tc0, qd0 = ds.top
    title = t.display_title(s)
    if state.finished:
        verdict = (f"achieved at round {state.window_end} (window {state.window[0]}-{state.window[-1]})"
                   if state.steady else f"SS NOT ACHIEVED: {state.rounds_done} rounds; rounds "
                   f"{state.window[0]}-{state.window[-1]} are reported as the window")
    else:
        verdict = f"not determined: {state.note} ({state.rounds_done} complete rounds)"
    pc = (f"rounds of {_minutes(s, ds.pc_min)} of {st.label} writes (0/100) at T{tc0}Q{qd0} until steady state"
          if ds.pc_mode == "ss" else f"{_minutes(s, ds.pc_min)} of {st.label} writes (0/100) at T{tc0}Q{qd0}, "
          "no steady-state check")
    head = header(
        run, s, title, t.key, wipc=f"none; workload-dependent preconditioning instead: {pc}",
        window=f"{state.window[0]}-{state.window[-1]}" if state.window else "none yet (fewer than 5 rounds)",
        verdict=verdict, tq=f"sweep TC {', '.join(map(str, ds.tcs))} x QD {', '.join(map(str, ds.qds))} "
        f"(fio numjobs = TC, iodepth = QD per thread, TOIO = TC x QD); preconditioning and pre-writes at "
        f"T{tc0}Q{qd0}")
    rows: list[tuple[str, Any]] = [
        ("Stimulus", st.label),
        ("Block sizes", f"fio bssplit={st.bssplit} (percent of I/Os per size)" if st.bssplit else
         f"{st.bs / 1024:g} KiB"),
        ("Access", f"fio random_distribution={st.distribution}: 50 % of I/Os to the first 5 % of the active range, "
                   "30 % to the next 15 %, 20 % to the last 80 %" if st.distribution else "uniform random"),
        ("Offsets", "aligned to 4 KiB (fio blockalign=4k)" if dict(st.options).get("blockalign")
         else "aligned to the block size"),
        ("Round", f"{_minutes(s, ds.prewrite_min)} pre-write (0/100) at T{tc0}Q{qd0}, then "
                  f"{len(ds.sweep_points())} points of {_minutes(s, 1)} from the highest to the lowest load "
                  f"(sweep {ds.sweep})"),
        ("Tracking variable", f"IOPS (reads + writes) at T{tc0}Q{qd0}; window 5 rounds, at most {s.max_rounds}"),
        ("MaxIOPS / MidIOPS rule", demand.ceiling_text(ds) + "; MaxIOPS = the highest IOPS among them, MidIOPS "
         "= the one nearest (max + min) / 2; MinIOPS = " + f"T{ds.bottom[0]}Q{ds.bottom[1]}"),
        ("Histogram captures", f"{_minutes(s, ds.hist_prewrite_min)} of writes, then {_minutes(s, ds.hist_min)} "
                               "of the stimulus at each point; bins from fio's json+ histogram"),
    ]
    reasons = ds.scaled_reasons()
    if reasons:
        rows.append(("Test-specific scaling", "NOT compliant: " + "; ".join(reasons)))
    return setup_section(f"PTS {title}: set-up", head, f"pts-{t.key}-header", rows)


# --------------------------------------------------------------------------- preconditioning and steady state

def _series_iops(pr: PointResult | None) -> list[float]:
    m = pr.measurement if pr is not None else None
    if m is None:
        return []
    ios = [m.series.get(f"{d}_iops") for d in ("read", "write")]
    parts = [list(v) for v in ios if v]
    if not parts:
        return []
    n = min(len(p) for p in parts)
    return [sum(p[i] for p in parts) for i in range(n)]


@dataclass(frozen=True)
class StepsView:
    """What templates/sections/pts_demand_steps.html.j2 shows: the preconditioning, or the rounds' tracking."""

    charts: list[Chart]
    window: Window | None
    not_achieved: bool = False  # the window is the last five rounds, not a steady one
    no_window: bool = False  # rounds, but fewer than five
    empty: str = ""  # what to say when there is nothing at all


def _pc(run: Run, s: PtsSettings, t: DemandTest, state: DemandState) -> StepsView:
    ds = state.settings
    res = run.finished_by_id()
    figs = []
    xs: list[float] = []
    ys: list[float | None] = []
    minute = 0.0
    for r in range(1, len(state.pc_values) + 1):
        for v in _series_iops(res.get(demand.pc_id(t, r))):
            minute += 1
            xs.append(minute)
            ys.append(v)
    if xs:
        figs.append(chart(charts.line_chart([charts.Series("IOPS per spec minute", xs, ys, "-")],
                                            title="Preconditioning: IOPS vs time", xlabel="spec minutes",
                                            ylabel="IOPS"), "Every minute of the preconditioning writes"))
    steady = None
    if ds.pc_mode == "ss" and state.pc_values:
        rounds = [float(r) for r in range(1, len(state.pc_values) + 1)]
        figs.append(chart(charts.line_chart([charts.Series("IOPS (round average)", rounds, state.pc_values)],
                                            title="Preconditioning: IOPS per round", xlabel="Round",
                                            ylabel="IOPS", xticks=rounds if len(rounds) <= 30 else None),
                          f"Average IOPS of each {ds.pc_min:g}-minute round"))
        d = state.pc_determination
        if d is not None:
            steady = window(f"Preconditioning steady state: {'steady' if d.steady else 'not steady'}", "PC IOPS", d,
                            "IOPS", "Measurement window of the preconditioning")
    return StepsView(figs, steady, empty="No preconditioning data yet.")


def _tracking(run: Run, s: PtsSettings, t: DemandTest, state: DemandState) -> StepsView:
    ds = state.settings
    res = run.finished_by_id()
    figs = []
    tc0 = ds.tcs[0]
    rounds = [float(r) for r in range(1, state.rounds_done + 1)]
    if rounds:
        lines = [charts.Series(f"T{tc0}Q{qd}", rounds,
                               [metric_value("iops", res.get(demand.round_id(t, r, tc0, qd)))
                                for r in range(1, state.rounds_done + 1)]) for qd in ds.qds]
        figs.append(chart(charts.line_chart(lines, title=f"TC {tc0}: IOPS per round, every QD", xlabel="Round",
                                            ylabel="IOPS", logy=True, xticks=rounds if len(rounds) <= 30 else None),
                          f"The tracking variable is IOPS at T{tc0}Q{ds.qds[0]}"))
    pw_x: list[float] = []
    pw_y: list[float | None] = []
    for r in range(1, state.rounds_done + 1):
        series = _series_iops(res.get(demand.prewrite_id(t, r)))
        for i, v in enumerate(series):
            pw_x.append(r + i / max(1, len(series)))
            pw_y.append(v)
    if pw_x:
        figs.append(chart(charts.line_chart([charts.Series("pre-write IOPS", pw_x, pw_y, ".")],
                                            title="Between-round pre-writes: IOPS per spec minute",
                                            xlabel="Round", ylabel="IOPS"),
                          f"The {ds.prewrite_min:g}-minute pre-write before each round"))
    d = state.determination
    steady = None if d is None else window(
        f"IOPS T{tc0}Q{ds.qds[0]}: {'steady' if d.steady else 'not steady'}", f"IOPS T{tc0}Q{ds.qds[0]}", d, "IOPS",
        "Data, average, 110%/90% of the average (plot guides only) and the least-squares fit")
    return StepsView(figs, steady, not_achieved=d is not None and state.finished and not state.steady,
                     no_window=d is None and bool(rounds), empty="No complete round yet.")


# --------------------------------------------------------------------------- sweep results

def _values(run: Run, t: DemandTest, state: DemandState) -> list[SweepValue]:
    rounds = state.window or list(range(1, state.rounds_done + 1))
    return demand.sweep_values(t, rounds, run, state.settings)


def _cpu(run: Run, t: DemandTest, state: DemandState) -> dict[tuple[int, int], float | None]:
    """Host CPU busy % per sweep point (fio usr+sys per job x jobs / CPUs), window average; None on the simulator."""
    res = run.finished_by_id()
    cpus = int(run.host.get("cpu_count") or 0)
    rounds = state.window or list(range(1, state.rounds_done + 1))
    out: dict[tuple[int, int], float | None] = {}
    for tc, qd in state.settings.sweep_points():
        vals: list[float] = []
        for r in rounds:
            pr = res.get(demand.round_id(t, r, tc, qd))
            m = pr.measurement if pr is not None else None
            if m is None or m.engine != "fio" or not cpus:
                vals = []
                break
            vals.append((m.usr_cpu + m.sys_cpu) * m.jobs / cpus)
        out[(tc, qd)] = sum(vals) / len(vals) if vals else None
    return out


@dataclass(frozen=True)
class SweepView:
    """What templates/sections/pts_demand_sweep.html.j2 shows."""

    window: bool  # False: the values average the rounds so far
    tables: list[Table]  # IOPS, ART and write ART by TC x QD
    charts: list[Chart]
    cpu: bool  # the CPU chart is among the charts (a device run; the simulator uses no host CPU)


def _sweep_tables(ds: demand.DemandSettings, by: dict[tuple[int, int], SweepValue]) -> list[Table]:
    head = ["TC \\ QD"] + [str(q) for q in ds.qds]
    out = []
    for label, unit, name in (("IOPS", "IOPS", "iops"), ("ART", "µs", "art_us"),
                              ("Mean write response time", "µs", "write_art_us")):
        rows = [[f"TC {tc}"] + [num(getattr(by[(tc, qd)], name)) for qd in ds.qds] for tc in ds.tcs]
        out.append(table(head, rows, f"{label}{'' if unit == label else f' ({unit})'} by thread count (rows) and "
                                     "queue depth per thread (columns), window averages"))
    return out


def _intensity_chart(ds: demand.DemandSettings, by: dict[tuple[int, int], SweepValue],
                     sel: demand.Selection | None) -> Chart:
    """Demand intensity: ART against IOPS per thread count, the chosen points marked."""
    di: list[charts.Series] = []
    for tc in ds.tcs:
        pts = sorted((by[(tc, q)] for q in ds.qds), key=lambda v: v.qd)
        di.append(charts.Series(f"TC {tc}", [v.iops or 0.0 for v in pts], [v.art_us for v in pts]))
    chosen = sel.points if sel is not None else {}
    for role in ROLES if sel is not None else ():
        tq = chosen.get(role)
        v = by.get(tq) if tq is not None else None
        if v is not None and v.iops is not None:
            di.append(charts.Series(f"{ROLE_TITLES[role]} T{v.tc}Q{v.qd}", [v.iops], [v.art_us], "*",
                                    color="#000000", extra={"markersize": 9}))
    refs = [] if ds.ceiling_on == "none" else [charts.RefLine(ds.ceiling_ms * 1000.0, f"ceiling {ds.ceiling_ms:g} ms")]
    return chart(charts.line_chart(di, title="Demand intensity: ART vs IOPS, one line per thread count (QD rising "
                                   "along each)", xlabel="IOPS", ylabel="ART (µs)", logy=True, ref_lines=refs),
                 "Demand intensity: response time as the outstanding I/O rises; the ceiling applies to "
                 + demand.ceiling_text(ds))


def _sweep_charts(ds: demand.DemandSettings, vals: list[SweepValue], by: dict[tuple[int, int], SweepValue],
                  sel: demand.Selection | None, cpu: dict[tuple[int, int], float | None]) -> list[Chart]:
    qx = [float(q) for q in sorted(ds.qds)]
    dv = [charts.Series(f"TC {tc}", qx, [by[(tc, int(q))].iops for q in qx]) for tc in ds.tcs]
    out = [chart(charts.line_chart(dv, title="Demand variation: IOPS vs queue depth, one line per thread count",
                                   xlabel="queue depth per thread (QD)", ylabel="IOPS", log2x=True, xticks=qx),
                 "Demand variation: which TC/QD gives the most IOPS for this access pattern"),
           _intensity_chart(ds, by, sel)]
    toio = sorted(vals, key=lambda v: (v.toio, v.tc))
    per_tc = [charts.Series(f"TC {tc}", [float(v.toio) for v in toio if v.tc == tc],
                            [v.iops for v in toio if v.tc == tc], "o") for tc in ds.tcs]
    out.append(chart(charts.line_chart(per_tc, title="IOPS vs total outstanding I/O (TOIO = TC x QD)", xlabel="TOIO",
                                       ylabel="IOPS", log2x=True),
                     "Every point of the sweep by its total outstanding I/O"))
    if any(v is not None for v in cpu.values()):
        series = [charts.Series(f"TC {tc}", [float(tc * q) for q in sorted(ds.qds)],
                                [cpu[(tc, q)] for q in sorted(ds.qds)]) for tc in ds.tcs]
        out.append(chart(charts.line_chart(series, title="CPU utilisation vs TOIO", xlabel="TOIO",
                                           ylabel="host CPU busy (%)", log2x=True),
                         "fio's usr+sys CPU per thread x threads / host CPUs, window average"))
    return out


def _sweep_csv(t: DemandTest, state: DemandState, vals: list[SweepValue],
               cpu: dict[tuple[int, int], float | None]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["test", "tc", "qd", "toio", "iops", "art_us", "write_art_us", "cpu_pct", "window_rounds"])
    for v in vals:
        w.writerow([t.key, v.tc, v.qd, v.toio, csv_value(v.iops), csv_value(v.art_us), csv_value(v.write_art_us),
                    csv_value(cpu.get((v.tc, v.qd))), f"{state.window[0]}-{state.window[-1]}" if state.window else ""])
    return buf.getvalue()


def _sweep(run: Run, s: PtsSettings, t: DemandTest, state: DemandState, files: dict[str, str]) -> SweepView:
    ds = state.settings
    vals = _values(run, t, state)
    by = {(v.tc, v.qd): v for v in vals}
    cpu = _cpu(run, t, state)
    files[f"{t.key}.csv"] = _sweep_csv(t, state, vals, cpu)
    return SweepView(bool(state.window), _sweep_tables(ds, by), _sweep_charts(ds, vals, by, state.selection, cpu),
                     any(v is not None for v in cpu.values()))


# --------------------------------------------------------------------------- MaxIOPS / MidIOPS / MinIOPS

@dataclass(frozen=True)
class Capture:
    """One point's response-time histogram capture (MaxIOPS, MidIOPS, MinIOPS or several of them)."""

    heading: str
    prewrite: Chart | None  # the writes before it
    problem: str | None  # why it has no histogram
    chart: Chart | None = None
    levels: Table | None = None


@dataclass(frozen=True)
class CapturesView:
    """What templates/sections/pts_demand_captures.html.j2 shows (None: the points are not chosen yet)."""

    rule: str
    kept: int
    points: int
    roles: Table
    alert: str
    captures: list[Capture]
    confidence: Chart | None
    compared: Chart | None
    note: str


def _roles_table(sel: demand.Selection, by: dict[tuple[int, int], SweepValue]) -> Table:
    rows = []
    for role in ROLES:
        tq = sel.points.get(role)
        if tq is None:
            rows.append([ROLE_TITLES[role], "-", "-", "-", "-", "-", "not defined"])
            continue
        v = by.get(tq)
        same = sel.capture_role(role)
        note = "" if same == role else f"same point as {ROLE_TITLES[same]}" if same else ""
        rows.append([ROLE_TITLES[role], f"T{tq[0]}Q{tq[1]}", str(tq[0] * tq[1]), num(v.iops if v else None),
                     num(v.art_us if v else None), num(v.write_art_us if v else None), note])
    return table(["Point", "TC/QD", "TOIO", "IOPS", "ART (µs)", "write ART (µs)", ""], rows,
                 "The three points of the response-time histograms")


def _capture(ds: demand.DemandSettings, pr: PointResult | None, pw: PointResult | None, names: str, tc: int,
             qd: int) -> tuple[Capture, latency.Distribution | None]:
    pw_series = _series_iops(pw)
    prewrite = None
    if pw_series:
        xs = [float(i + 1) for i in range(len(pw_series))]
        prewrite = chart(charts.line_chart([charts.Series("IOPS", xs, pw_series, "-")],
                                           title=f"{names} pre-writes: IOPS per spec minute", xlabel="spec minutes",
                                           ylabel="IOPS", size=(6.0, 2.6)),
                         f"{ds.hist_prewrite_min:g} minutes of writes before the capture")
    heading = f"{names}: T{tc}Q{qd}"
    if pr is None or pr.measurement is None:
        return Capture(heading, prewrite, "Capture not run yet."), None
    all_io = latency.point_distribution(pr, None, f"{names} all I/Os")
    if all_io is None:
        return Capture(heading, prewrite, "The capture has no histogram bins (fio ran without json+ or completed "
                                          "nothing)."), None
    per_dir = latency.direction_distributions(pr, names)
    drawn = chart(latency.distribution_chart([all_io, *per_dir] if len(per_dir) > 1 else [all_io],
                                             title=f"{names} T{tc}Q{qd}: response times"),
                  f"Response-time histogram, CDF and exceedance of the {ds.hist_min:g}-minute capture (fio "
                  "completion latency, from the histogram bins)")
    header_, lrows = latency.level_rows([all_io, *per_dir])
    return Capture(heading, prewrite, None, drawn,
                   table(header_, lrows, f"{names}: response time at each confidence level (µs)")), all_io


def _captures(run: Run, s: PtsSettings, t: DemandTest, state: DemandState
              ) -> tuple[CapturesView | None, dict[str, Any]]:
    sel = state.selection
    summary: dict[str, Any] = {}
    if sel is None:
        return None, summary
    ds = state.settings
    by = {(v.tc, v.qd): v for v in _values(run, t, state)}
    res = run.finished_by_id()
    found = []
    dists: list[latency.Distribution] = []
    for role, (tc, qd), roles in sel.distinct():
        names = "/".join(ROLE_TITLES[r] for r in roles)
        pr = res.get(demand.hist_id(t, role))
        capture, all_io = _capture(ds, pr, res.get(demand.hist_id(t, role, True)), names, tc, qd)
        found.append(capture)
        if all_io is None or pr is None:
            continue
        dists.append(latency.Distribution(names, all_io.counts, all_io.mean_ns, all_io.max_ns))
        summary[role] = {"tc": tc, "qd": qd, "roles": list(roles), "iops": metric_value("iops", pr),
                         "n": all_io.n, "levels_us": latency.levels_us(all_io)}
    confidence = compared = None
    if dists:
        confidence = chart(latency.confidence_chart(dists, title="Confidence levels: response time at 3, 4 and 5 "
                                                    "nines"),
                           "Response time within which 99.9 %, 99.99 % and 99.999 % of the I/Os completed, at each "
                           "point (no marker: too few I/Os to resolve the level)")
        compared = chart(latency.distribution_chart(dists, title="MaxIOPS, MidIOPS and MinIOPS compared"),
                         "All three captures on one scale")
    return CapturesView(sel.rule, len(sel.kept), len(ds.sweep_points()), _roles_table(sel, by), sel.note, found,
                        confidence, compared, latency.LEVEL_NOTE), summary


# --------------------------------------------------------------------------- entry

def test_sections(run: Run, s: PtsSettings, t: DemandTest, files: dict[str, str]
                  ) -> tuple[list[Section], dict[str, Any]]:
    """Every section of one demand test and its summary.json entry."""
    state = demand.analyse(t, s, run)
    title = t.display_title(s)
    out = [_setup(run, s, t, state)]
    out.append(Section(f"PTS {title}: preconditioning", fragment("pts_demand_steps.html.j2", v=_pc(run, s, t, state)),
                       anchor=f"pts-{t.key}-pc"))
    if state.rounds_done:
        out.append(Section(f"PTS {title}: steady state",
                           fragment("pts_demand_steps.html.j2", v=_tracking(run, s, t, state)),
                           anchor=f"pts-{t.key}-window"))
        out.append(Section(f"PTS {title}: demand variation and demand intensity",
                           fragment("pts_demand_sweep.html.j2", v=_sweep(run, s, t, state, files)),
                           anchor=f"pts-{t.key}-results"))
    captures, cap_summary = _captures(run, s, t, state)
    if state.finished:
        out.append(Section(f"PTS {title}: response-time histograms at MaxIOPS, MidIOPS and MinIOPS",
                           fragment("pts_demand_captures.html.j2", v=captures), anchor=f"pts-{t.key}-histograms"))
    sel = state.selection
    summary = {"title": title, "pc_rounds": len(state.pc_values), "pc_steady": state.pc_steady,
               "rounds": state.rounds_done, "finished": state.finished, "steady": state.steady,
               "window": state.window, "note": state.note,
               "determination": state.determination.as_dict() if state.determination is not None else None,
               "selection": None if sel is None else {r: (list(v) if v else None) for r, v in sel.points.items()},
               "captures": cap_summary, "scaled": state.settings.scaled_reasons()}
    return out, summary


def _builder(t: DemandTest) -> Callable[[Run, PtsSettings, dict[str, str]], tuple[list[Section], dict[str, Any]]]:
    def build(run: Run, s: PtsSettings, files: dict[str, str]) -> tuple[list[Section], dict[str, Any]]:
        return test_sections(run, s, t, files)

    return build


for _test in (demand.CBW, demand.DIRTH):
    register_test_sections(_test.key, _builder(_test))
