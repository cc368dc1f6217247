"""SNIA PTS 2.0 HIR report pages: set-up, the preconditioning plot with its steady-state window, IOPS against
time across every wait state, and IOPS against wait state (table and plot)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from ssdlab.formatting import csv_value
from ssdlab.report import charts
from ssdlab.report.pts_page import Window, chart, header, message, num, setup_section, table, window
from ssdlab.report.sections import Chart, Section, Table
from ssdlab.report.templating import fragment
from ssdlab.results.model import Run
from ssdlab.suites.pts import hir as hir_mod
from ssdlab.suites.pts.common import PtsSettings, metric_value


def sections(run: Run, s: PtsSettings, state: hir_mod.HirState, files: dict[str, str]) -> list[Section]:
    h = hir_mod.hir_settings(s)
    if h.mode == "steady":
        pc2 = (f"RND 4 KiB writes at {s.tq} in rounds of {h.pc_samples} samples of {s.runtime_s:g} s until the round "
               "mean IOPS is steady (SNIA rule over 5 rounds)")
        window = f"{state.pc_window[0]}-{state.pc_window[-1]}" if state.pc_window else "none yet"
    else:
        pc2 = f"RND 4 KiB writes at {s.tq}: {h.pc_samples} samples of {s.runtime_s:g} s, no steady-state check"
        window = "not applicable (fixed preconditioning)"
    waits = ", ".join(f"{w:g}" for w in h.waits)
    out = [setup_section("PTS HIR: set-up", header(
        run, s, "Host Idle Recovery (HIR), RND 4 KiB 0/100", hir_mod.TEST, wipc="none: HIR starts from FOB",
        pc2=pc2, window=window, verdict=state.pc_note, tq=f"T{s.threads}Q{s.qd} (TOIO {s.toio})",
        extra=[("Test stimulus", f"RND 4 KiB writes in {h.burst_s:.3g} s bursts, each followed by a host idle wait "
                                 f"state of {waits} s" + (f" (scaled x {h.scale:g})" if h.scale != 1 else "")
                                 + f"; {h.bursts} bursts per wait state, then {h.bursts} x {h.burst_s:.3g} s of "
                                   "continuous writes back to baseline")]),
        "pts-hir-header")]
    if not state.pc:
        out.append(message("PTS HIR: results", "No sample yet."))
        return out
    charts_, steady = _pc(s, state, h)
    out.append(Section("PTS HIR: preconditioning", fragment("pts_hir_pc.html.j2", charts=charts_, window=steady),
                       anchor="pts-hir-pc"))
    summaries = hir_mod.wait_state_summaries(state)
    out.append(Section("PTS HIR: IOPS vs time and vs wait state",
                       fragment("pts_hir_results.html.j2", v=_results(state, h, summaries, files)),
                       anchor="pts-hir-results"))
    return out


def _pc(s: PtsSettings, state: hir_mod.HirState, h: hir_mod.HirSettings) -> tuple[list[Chart], Window | None]:
    """The preconditioning's IOPS per sample (and per round), and its steady-state window."""
    minutes = [(i + 1) * s.runtime_s / 60.0 for i in range(len(state.pc))]
    iops = [metric_value("iops", p) for p in state.pc]
    figs = [chart(charts.line_chart([charts.Series("IOPS per sample", minutes, iops, "-")],
                                    title="HIR preconditioning: IOPS vs time", xlabel="Time (min of stimulus)",
                                    ylabel="IOPS"),
                  "RND 4 KiB writes from FOB, one point per sample")]
    if h.mode == "steady" and state.pc_rounds:
        xs = [float(r) for r in range(1, len(state.pc_rounds) + 1)]
        figs.append(chart(charts.line_chart([charts.Series("round mean IOPS", xs, state.pc_rounds, "-o")],
                                            title="HIR preconditioning: mean IOPS per round", xlabel="Round",
                                            ylabel="IOPS", xticks=xs if len(xs) <= 30 else None),
                          f"Tracking variable: the mean IOPS of each round of {h.pc_samples} samples"))
    d = state.pc_determination
    if d is None:
        return figs, None
    return figs, window(f"Steady-state measurement window: {'steady' if d.steady else 'not steady'}",
                        "round mean IOPS", d, "IOPS",
                        "Data, average, 110%/90% of the average (plot guides only) and the least-squares fit")


@dataclass(frozen=True)
class ResultsView:
    """What templates/sections/pts_hir_results.html.j2 shows."""

    time: Chart | None  # IOPS vs time over every wait state
    table: Table
    bars: Chart
    reading: str


def _results(state: hir_mod.HirState, h: hir_mod.HirSettings, summaries: list[hir_mod.WaitStateSummary],
             files: dict[str, str]) -> ResultsView:
    """IOPS vs time over every wait state (bursts and the returns to baseline), the per-wait-state table
    and IOPS vs wait state."""
    series: list[charts.Series] = []
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["segment", "wait_s", "index", "time_min", "iops", "idle_s"])
    t = 0.0  # seconds from the end of the preconditioning, nominal durations
    for w in h.waits:
        xs, ys = [], []
        for k, p in enumerate(state.bursts.get(w, []), start=1):
            if k > 1:
                t += h.wait_s(w)
            v = metric_value("iops", p)
            xs.append(t / 60.0)
            ys.append(v)
            idle = p.measurement.extra.idle_s if p.measurement is not None else None
            writer.writerow(["burst", f"{w:g}", k, f"{t / 60.0:.6g}", csv_value(v), csv_value(idle)])
            t += h.burst_s
        if xs:
            series.append(charts.Series(f"wait {w:g} s ({h.burst_s:.3g}/{h.wait_s(w):.3g})", xs, ys, "o"))
        bx, by = [], []
        for k, p in enumerate(state.baselines.get(w, []), start=1):
            if k == 1:
                t += h.wait_s(w)
            v = metric_value("iops", p)
            bx.append(t / 60.0)
            by.append(v)
            writer.writerow(["baseline", f"{w:g}", k, f"{t / 60.0:.6g}", csv_value(v), ""])
            t += h.burst_s
        if bx:  # one legend entry for every return to baseline (matplotlib hides labels starting with _)
            label = "return to baseline" if not any(x.name == "return to baseline" for x in series) else "_baseline"
            series.append(charts.Series(label, bx, by, "-", color="#888888"))
    files["hir.csv"] = buf.getvalue()
    ss = state.steady_iops
    refs = [charts.RefLine(ss, "steady state (preconditioning)", "--", "#000000")] if ss else []
    time = chart(charts.line_chart(series, ref_lines=refs, title="HIR: IOPS vs time, all wait states",
                                   xlabel="Time after preconditioning (min, bursts + waits)", ylabel="IOPS"),
                 "Each point is one burst (or one sample of the return to baseline), at its start time") \
        if series else None
    rows: list[list[object]] = [["0 (steady state, 5/0)", "-", num(ss), "1.00", "-", "-", "-", "-"]]
    for ws in summaries:
        rows.append([f"{ws.wait_s:g}" + (f" (scaled {h.wait_s(ws.wait_s):.3g})" if h.scale != 1 else ""), ws.bursts,
                     num(ws.mean_iops), f"{ws.vs_steady:.2f}" if ws.vs_steady is not None else "n/a",
                     num(ws.min_iops), num(ws.max_iops), f"{ws.idle_s:.3f}" if ws.idle_s is not None else "n/a",
                     num(ws.baseline_iops)])
    waits = table(["Wait state (s)", "Bursts", "Mean burst IOPS", "x steady state", "Min", "Max",
                   "Measured idle (s)", "Baseline IOPS after"], rows,
                  "Mean IOPS of the bursts per wait state; the measured idle is the host idle before each burst as "
                  "timed at the device (fio's job clocks) or by the model")
    labels = ["0"] + [f"{ws.wait_s:g}" for ws in summaries]
    values = [ss] + [ws.mean_iops for ws in summaries]
    bars = chart(charts.bar_chart(labels, {"mean burst IOPS": values}, title="HIR: IOPS vs wait state",
                                  ylabel="IOPS", annotate=True),
                 "Mean burst IOPS for each wait state (0: the steady-state level with no wait)")
    return ResultsView(time, waits, bars, _reading(summaries))


def _reading(summaries: list[hir_mod.WaitStateSummary]) -> str:
    """One sentence on what the table shows: burst IOPS against the steady-state level, shortest to longest
    wait (bursts above it mean the drive used the host idle time to collect garbage)."""
    known = [w for w in summaries if w.vs_steady is not None]
    if not known:
        return "no complete wait state yet"
    first, last = known[0], known[-1]
    text = (f"mean burst IOPS are {first.vs_steady:.2f}x the steady-state level after {first.wait_s:g} s waits"
            + (f" and {last.vs_steady:.2f}x after {last.wait_s:g} s" if last is not first else ""))
    if last is not first and last.vs_steady is not None and first.vs_steady is not None:
        if last.vs_steady > first.vs_steady * 1.02:
            text += ": longer host idle lets the drive recover more (background garbage collection)"
        elif max(w.vs_steady or 0 for w in known) < 1.02:
            text += ": no recovery from host idle time"
        else:
            text += ": the recovery does not grow with the wait"
    return text
