"""SNIA PTS 2.0 report sections (SNIA report format) for runs of the pts-* suites.

Per test: the header (device, platform, set-up, compliance), the steady-state convergence plots, the
measurement-window plot and determination table of every tracking variable, the tabular results (window
averages) and the 2D/3D plots; WSAT, HIR, XSR and the demand tests in their own modules (pts_wsat.py, ...).
The tables are also written next to report.html as pts/<test>.csv and pts/summary.json.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab import metrics
from ssdlab.errors import SsdlabError
from ssdlab.formatting import csv_value
from ssdlab.report import charts, pts_hir, pts_lat, pts_wsat, pts_xsr, sections
from ssdlab.report.pts_page import Window, chart, header, message, num, setup_section, table, window
from ssdlab.report.sections import Chart, Section, Table
from ssdlab.report.templating import fragment
from ssdlab.results import atomic
from ssdlab.results.model import Run
from ssdlab.suites.pts import hir as hir_mod
from ssdlab.suites.pts import wsat as wsat_mod
from ssdlab.suites.pts import xsr as xsr_mod
from ssdlab.suites.pts.common import (
    SPEC_VERSION,
    PtsSettings,
    RoundTest,
    Stimulus,
    TestState,
    analyse,
    bs_label,
    mix_label,
    per_round,
    settings_from_run,
    window_average,
)
from ssdlab.suites.pts.family import tests_for
from ssdlab.units import format_bytes


def applies(run: Run) -> bool:
    """PTS sections apply to every run of the PTS suites (pts, pts-iops, pts-tp, pts-lat, pts-wsat, ...)."""
    return run.suite == "pts" or run.suite.startswith("pts-")


def _convergence_chart(title: str, rounds: int, lines: Sequence[tuple[str, Sequence[float | None]]],
                       unit: str, logy: bool | None = None) -> str:
    xs = [float(r) for r in range(1, rounds + 1)]
    return charts.line_chart([charts.Series(n, xs, list(v)) for n, v in lines], title=title, xlabel="Round",
                             ylabel=unit, logy=logy, xticks=xs if rounds <= 30 else None)


def _verdict_text(state: TestState) -> str:
    if state.invalid:
        return f"INCOMPLETE, not determined: {state.note.removeprefix('incomplete: ')}"
    if state.steady:
        return f"achieved at round {state.window_end} (window rounds {state.window[0]}-{state.window[-1]})"
    if state.finished:
        return f"SS NOT ACHIEVED: {state.rounds_done} rounds run; rounds {state.window[0]}-{state.window[-1]} " \
               "are reported as the window"
    return f"not determined: {state.note} ({state.rounds_done} complete rounds)"


# ------------------------------------------------------------------ round tests

def _mixes(stimuli: Sequence[Stimulus]) -> list[int]:
    return sorted({st.read_pct for st in stimuli})  # 0/100 (all writes) first, as the SNIA tables do


def _sizes(stimuli: Sequence[Stimulus]) -> list[int]:
    return sorted({st.bs for st in stimuli})


def round_test_sections(run: Run, s: PtsSettings, test: RoundTest, state: TestState, files: dict[str, str]
                        ) -> list[Section]:
    """All report sections of one round test (IOPS, TP 128/1024, LAT), from its analysed state."""
    stimuli = test.stimuli(s)
    threads, qd = test.tq(s)
    wipc_pr = run.result(f"{test.name}-0-wipc")
    wipc = (f"SEQ {bs_label(test.wipc_bs)} writes, 2x active range = {format_bytes(2 * s.active_range_bytes)}, "
            f"one sequential stream at QD {s.toio} (TOIO of T{s.threads}Q{s.qd}); "
            + ("done" if wipc_pr is not None and wipc_pr.status == "ok" else "not done"))
    tq = f"T{threads}Q{qd} (TOIO {threads * qd})"
    if any(st.access == "SEQ" for st in stimuli):
        tq += f"; SEQ points run as one stream at QD {threads * qd}"
    window = f"{state.window[0]}-{state.window[-1]}" if state.window else "none yet (fewer than 5 rounds)"
    out = [setup_section(f"PTS {test.title}: set-up", header(
        run, s, test.title, test.name, wipc=wipc, window=window, verdict=_verdict_text(state), tq=tq),
        f"pts-{test.name}-header")]
    if state.rounds_done == 0:
        out.append(message(f"PTS {test.title}: results", "No complete round yet: nothing to report."))
        return out
    out.append(Section(f"PTS {test.title}: steady-state convergence",
                       fragment("pts_charts.html.j2", charts=_convergence(run, s, test, state)),
                       anchor=f"pts-{test.name}-convergence"))
    out.append(Section(f"PTS {test.title}: steady-state measurement window",
                       fragment("pts_window.html.j2", v=_window_view(test, s, state)),
                       anchor=f"pts-{test.name}-window"))
    view, csv_text = _results(run, s, test, state)
    files[f"{test.name}.csv"] = csv_text
    out.append(Section(f"PTS {test.title}: results (averages over the measurement window)",
                       fragment("pts_results.html.j2", v=view), anchor=f"pts-{test.name}-results"))
    return out


def _convergence(run: Run, s: PtsSettings, test: RoundTest, state: TestState) -> list[Chart]:
    stimuli = test.stimuli(s)
    n = state.rounds_done
    parts = []
    if test.name == "iops":
        for tr in test.trackers(s):
            mix = next(st.read_pct for st in stimuli if st.key == tr.key)
            lines = [(bs_label(st.bs), per_round(test, run, st.key, "iops", n))
                     for st in stimuli if st.read_pct == mix]
            parts.append(chart(_convergence_chart(f"SS convergence, RND {mix_label(mix)}: IOPS per round, all "
                                                  "block sizes", n, lines, "IOPS", logy=True),
                               f"IOPS per round, R/W mix {mix_label(mix)}; tracking variable: {tr.name}"))
    elif test.name == "lat":
        for metric in ("art", "mrt"):
            lines = [(bs_label(st.bs), per_round(test, run, st.key, metric, n))
                     for st in stimuli if st.read_pct == 0]
            label = metrics.get(metric).label
            parts.append(chart(_convergence_chart(f"SS convergence, RND 0/100: {label} per round", n, lines, "µs"),
                               f"{label} per round at 0/100, all block sizes (tracked: ART at 4 KiB)"))
    else:
        lines = [(tr.name, state.tracking[tr.name]) for tr in test.trackers(s)]
        parts.append(chart(_convergence_chart(f"SS convergence: {test.title} per round", n, lines, "MB/s"),
                           "Throughput per round; both directions are tracking variables"))
    return parts


@dataclass(frozen=True)
class DeviceSteadiness:
    steady: int
    devices: int
    table: Table


@dataclass(frozen=True)
class WindowView:
    """What templates/sections/pts_window.html.j2 shows."""

    exists: bool  # five complete rounds
    incomplete: str | None  # why the test stopped (no steady state is claimed)
    not_achieved: bool
    trackers: list[tuple[str, Window | None]]  # (tracking variable, its window: None without a value in every round)
    devices: DeviceSteadiness | None


def _window_view(test: RoundTest, s: PtsSettings, state: TestState) -> WindowView:
    trackers: list[tuple[str, Window | None]] = []
    for tr in test.trackers(s):
        d = state.determinations.get(tr.name)
        trackers.append((tr.name, None if d is None else window(
            f"{tr.name}: {'steady' if d.steady else 'not steady'}", tr.name, d, tr.unit,
            "Data, average, 110%/90% of the average (plot guides only), and the least-squares fit. Criterion: "
            "max-min <= 20% and fit excursion <= 10% of the average.")))
    return WindowView(exists=bool(state.window), incomplete=state.note if state.invalid else None,
                      not_achieved=state.finished and not state.steady, trackers=trackers,
                      devices=_device_steadiness(test, s, state) if state.device_determinations else None)


Matrix = dict[tuple[int, int], float | None]  # (block size, read %) -> value
RESULT_METRICS = {"iops": ("iops",), "lat": ("art", "nines", "mrt", "iops")}  # other tests: ("mbps",)


def _device_steadiness(test: RoundTest, s: PtsSettings, state: TestState) -> DeviceSteadiness:
    """Several devices in lockstep: each device's own determination, which the test's verdict rests on."""
    rows = []
    for dev, per in state.device_determinations.items():
        for tr in test.trackers(s):
            d = per.get(tr.name)
            if d is None:
                rows.append((dev, tr.name, "no value in every window round", "", "", ""))
                continue
            rows.append((dev, tr.name, "steady" if d.steady else "NOT steady", num(float(d.average), tr.unit),
                         f"{d.range_pct:.2f}%", f"{d.excursion_pct:.2f}%"))
    steady_n = sum(1 for per in state.device_determinations.values()
                   if per and all(d.steady for d in per.values()))
    return DeviceSteadiness(steady_n, len(state.device_determinations),
                            table(("device", "tracking variable", "verdict", "window average", "data excursion",
                                   "slope excursion"), rows))


@dataclass(frozen=True)
class ResultsView:
    """What templates/sections/pts_results.html.j2 shows."""

    window: bool  # False: the tables average the rounds so far
    tables: list[Table]
    charts: list[Chart]


def _results(run: Run, s: PtsSettings, test: RoundTest, state: TestState) -> tuple[ResultsView, str]:
    """A round test's results: the window average of each stimulus as tables and 2D/3D charts, and the same
    numbers as CSV. Before a window exists, the averages of the rounds run so far."""
    stimuli = test.stimuli(s)
    tables = {m: _averages(run, test, state, stimuli, m) for m in RESULT_METRICS.get(test.name, ("mbps",))}
    if test.name == "iops":
        view = ResultsView(bool(state.window), _matrix_tables(run, test, state, stimuli, tables),
                           _iops_charts(stimuli, tables["iops"]))
    elif test.name == "lat":
        view = ResultsView(bool(state.window), _matrix_tables(run, test, state, stimuli, tables),
                           _lat_charts(stimuli, tables))
    else:
        view = ResultsView(bool(state.window), *_tp_results(stimuli, tables["mbps"]))
    return view, _results_csv(test, state, stimuli, tables)


def _averages(run: Run, test: RoundTest, state: TestState, stimuli: Sequence[Stimulus], metric: str) -> Matrix:
    """Each stimulus's metric averaged over the measurement window (over the rounds so far without one)."""
    if state.window:
        return {(st.bs, st.read_pct): window_average(test, state, run, st.key, metric) for st in stimuli}
    return {(st.bs, st.read_pct): _mean(per_round(test, run, st.key, metric, state.rounds_done)) for st in stimuli}


def _results_csv(test: RoundTest, state: TestState, stimuli: Sequence[Stimulus], tables: Mapping[str, Matrix]) -> str:
    """pts/<test>.csv: one row per metric and stimulus."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["test", "stimulus", "access", "bs_bytes", "read_pct", "metric", "unit", "window_average",
                     "window_rounds"])
    window = f"{state.window[0]}-{state.window[-1]}" if state.window else ""
    for metric, t in tables.items():
        for st in stimuli:
            writer.writerow([test.name, st.key, st.access, st.bs, st.read_pct, metric, metrics.get(metric).unit,
                             csv_value(t[(st.bs, st.read_pct)]), window])
    return buf.getvalue()


def _matrix_tables(run: Run, test: RoundTest, state: TestState, stimuli: Sequence[Stimulus],
                   tables: Mapping[str, Matrix]) -> list[Table]:
    """One block size x R/W mix table per metric (the SNIA tabular format); after the 5-nines table, how many
    I/Os stand behind its values."""
    sizes, mixes = _sizes(stimuli), _mixes(stimuli)
    parts = []
    for metric, t in tables.items():
        label, unit = metrics.get(metric).label, metrics.get(metric).unit
        rows = [[bs_label(bs)] + [num(t.get((bs, m)), "") if (bs, m) in t else "-" for m in mixes] for bs in sizes]
        parts.append(table(["Block size"] + [f"{mix_label(m)} R/W" for m in mixes], rows,
                           f"{label} ({unit}), RND, by block size and R/W mix (read/write %)"))
        if metric == "nines":
            parts.append(_nines_counts(run, test, state, stimuli, sizes, mixes))
    return parts


def _grid(t: Matrix, sizes: Sequence[int], mixes: Sequence[int]) -> list[list[float | None]]:
    """t as rows of block sizes, columns of mixes (the 3D charts' z)."""
    return [[t.get((bs, m)) for m in mixes] for bs in sizes]


def _bs_tick(v: float) -> str:
    """A block size on a log2 axis as the spec writes it (a module function: charts are drawn in workers)."""
    return bs_label(int(v))


def _iops_charts(stimuli: Sequence[Stimulus], t: Matrix) -> list[Chart]:
    """IOPS against block size, one line per mix (log scale), and the 3D bars of the whole matrix."""
    sizes, mixes = _sizes(stimuli), _mixes(stimuli)
    xs = [float(bs) for bs in sizes]
    series = [charts.Series(f"{mix_label(m)}", xs, [t.get((bs, m)) for bs in sizes]) for m in mixes]
    return [
        chart(charts.line_chart(series, title="IOPS vs block size, one line per R/W mix", xlabel="Block size",
                                ylabel="IOPS", logy=True, log2x=True, xticks=xs, xfmt=_bs_tick),
              "2D plot: IOPS by block size for every R/W mix (log scale)"),
        chart(charts.bar3d_chart([bs_label(b) for b in sizes], [mix_label(m) for m in mixes],
                                 _grid(t, sizes, mixes), title="IOPS by block size and R/W mix",
                                 xlabel="Block size", ylabel="R/W mix", zlabel="IOPS"),
              "3D bar plot of the IOPS matrix"),
    ]


def _lat_charts(stimuli: Sequence[Stimulus], tables: Mapping[str, Matrix]) -> list[Chart]:
    """ART, MRT and 5 nines by block size (bars per mix), then ART and MRT as 3D bars."""
    sizes, mixes = _sizes(stimuli), _mixes(stimuli)
    parts = []
    for metric in ("art", "mrt", "nines"):
        label, unit = metrics.get(metric).label, metrics.get(metric).unit
        t = tables[metric]
        parts.append(chart(charts.bar_chart([bs_label(b) for b in sizes],
                                            {f"{mix_label(m)}": [t.get((bs, m)) for bs in sizes] for m in mixes},
                                            title=f"{label} by block size, one bar per R/W mix", ylabel=unit,
                                            annotate=True),
                           f"2D plot: {label} at T1Q1"))
    for metric in ("art", "mrt"):
        label, unit = metrics.get(metric).label, metrics.get(metric).unit
        parts.append(chart(charts.bar3d_chart([bs_label(b) for b in sizes], [mix_label(m) for m in mixes],
                                              _grid(tables[metric], sizes, mixes),
                                              title=f"{label} by block size and R/W mix", xlabel="Block size",
                                              ylabel="R/W mix", zlabel=unit),
                           f"3D bar plot of {label}"))
    return parts


def _tp_results(stimuli: Sequence[Stimulus], t: Matrix) -> tuple[list[Table], list[Chart]]:
    """A throughput test's one block size: read and write MB/s as a table and bars."""
    bs = stimuli[0].bs
    read, write = t.get((bs, 100)), t.get((bs, 0))
    return ([table(["Block size", "SEQ 100/0 read MB/s", "SEQ 0/100 write MB/s"],
                   [[bs_label(bs), num(read), num(write)]],
                   "Throughput in decimal MB/s (10^6 bytes/s), window averages")],
            [chart(charts.bar_chart([f"SEQ {bs_label(bs)}"], {"read 100/0": [read], "write 0/100": [write]},
                                    title=f"Throughput, SEQ {bs_label(bs)}", ylabel="MB/s"),
                   "2D plot: sequential read and write throughput")])


def _nines_counts(run: Run, test: RoundTest, state: TestState, stimuli: Sequence[Stimulus], sizes: list[int],
                  mixes: list[int]) -> Table:
    """How many I/Os stand behind each 5-nines value (the smallest per-round count in the window)."""
    rounds = state.window or list(range(1, state.rounds_done + 1))
    by_id = {p.point.id: p for p in reversed(run.points)}  # run.result (first match) without a scan per lookup
    counts: dict[tuple[int, int], int | None] = {}
    for st in stimuli:
        ns = []
        for r in rounds:
            pr = by_id.get(f"{test.name}-r{r:02d}-{st.key}")
            m = pr.measurement if pr is not None else None
            ns.append(sum(d.total_ios for d in m.directions.values()) if m is not None else 0)
        counts[(st.bs, st.read_pct)] = min(ns) if ns else None
    rows = [[bs_label(bs)] + [f"{counts.get((bs, m)) or 0:,}" for m in mixes] for bs in sizes]
    return table(["Block size"] + [f"{mix_label(m)} R/W" for m in mixes], rows,
                 "I/Os per point behind the 5-nines values (smallest count in the window): with fewer than "
                 "100,000 I/Os the 99.999th percentile is the maximum or near it")


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


# ------------------------------------------------------------------ run record

def run_record_section(run: Run) -> Section | None:
    """Interruptions, resumes and the points that were repeated."""
    evs = [e for e in run.events if e.kind in ("interrupted", "failed", "resume")]
    if not evs:
        return None
    rows = []
    for e in evs:
        if e.get("kind") == "resume":
            prev = e.get("previous_status", "")
            how = ("killed or crashed (no clean stop was recorded)" if prev == "running"
                   else f"stopped ({prev})")
            rep = e.get("repeated") or []
            at = f"; continued at {e['resumed_at']}" if e.get("resumed_at") else ""
            if e.get("stopped_fio_pids"):
                at += f"; stopped {len(e['stopped_fio_pids'])} fio process(es) left over from the killed run"
            rows.append([e.get("time", ""), "resumed", f"run had been {how}; {e.get('points_done', '?')} finished "
                         f"points kept{at}; repeated: "
                         f"{', '.join(rep) if rep else 'nothing (no point was in progress)'}"])
        else:
            rows.append([e.get("time", ""), str(e.get("kind")), f"{e.get('text', '')} "
                         f"({e.get('points_done', '?')} points finished)"])
    return Section("PTS run record: interruptions and resumes",
                   fragment("pts_run_record.html.j2", events=table(["Time", "Event", "Detail"], rows)),
                   anchor="pts-run-record")


# ------------------------------------------------------------------ tests reported by other modules

TestSections = Callable[[Run, PtsSettings, dict[str, str]], tuple[list[Section], dict[str, Any]]]
# test key -> (sections, summary.json entry) of a test that is not made of round tests (WSAT, HIR, XSR below;
# pts_demand registers CBW and DIRTH); build() calls it when the run selected that test
_TEST_SECTIONS: dict[str, TestSections] = {}


def register_test_sections(key: str, builder: TestSections) -> None:
    _TEST_SECTIONS[key] = builder


def _wsat(run: Run, s: PtsSettings, files: dict[str, str]) -> tuple[list[Section], dict[str, Any]]:
    return pts_wsat.sections(run, s, wsat_mod.analyse(s, run), files)


def _hir(run: Run, s: PtsSettings, files: dict[str, str]) -> tuple[list[Section], dict[str, Any]]:
    hs = hir_mod.analyse(s, run)
    return pts_hir.sections(run, s, hs, files), {
        "preconditioning": hs.pc_note, "pc_samples": len(hs.pc), "steady": hs.pc_steady,
        "steady_iops": hs.steady_iops, "finished": hs.finished,
        "wait_states": [dataclasses.asdict(w) for w in hir_mod.wait_state_summaries(hs)]}


def _xsr(run: Run, s: PtsSettings, files: dict[str, str]) -> tuple[list[Section], dict[str, Any]]:
    xs = xsr_mod.analyse(s, run)
    return pts_xsr.sections(run, s, xs, files), {
        "finished": xs.finished, "samples": {k: len(v) for k, v in xs.samples.items()},
        "recovery": {k: dataclasses.asdict(r) for k, r in xsr_mod.recoveries(s, xs).items()}}


register_test_sections(wsat_mod.TEST, _wsat)
register_test_sections(hir_mod.TEST, _hir)
register_test_sections(xsr_mod.TEST, _xsr)


# ------------------------------------------------------------------ entry

def build(run: Run, run_dir: Path) -> list[Section]:
    """Every PTS section of a run; also writes pts/*.csv and pts/summary.json next to report.html."""
    try:
        s = settings_from_run(run)
    except SsdlabError as exc:
        return [message("SNIA PTS", f"Cannot read the PTS settings of this run: {exc}")]
    files: dict[str, str] = {}
    out: list[Section] = []
    summary: dict[str, Any] = {"suite": run.suite, "spec": SPEC_VERSION, "variant": f"PTS-{s.spec}",
                               "scaled": s.scaled_reasons(run.options, dict(run.target)), "tests": {}}
    for family_test in tests_for(run):
        for test in family_test.round_tests:
            state = analyse(test, s, run)
            out.extend(round_test_sections(run, s, test, state, files))
            summary["tests"][test.name] = {
                "rounds": state.rounds_done, "finished": state.finished, "steady": state.steady,
                "window": state.window, "note": state.note, "invalid_points": list(state.invalid),
                "determinations": {k: d.as_dict() for k, d in state.determinations.items()},
            }
            if test.captures is not None:  # LAT's response-time histogram captures after the rounds
                section, summary["tests"][test.name]["histogram_captures"] = pts_lat.capture_section(run, s)
                if section is not None:
                    out.append(section)
        builder = _TEST_SECTIONS.get(family_test.key)
        if builder is not None:  # a test that is not made of round tests (WSAT, HIR, XSR, CBW, DIRTH)
            secs, summary["tests"][family_test.key] = builder(run, s, files)
            out.extend(secs)
    rec = run_record_section(run)
    if rec is not None:
        out.append(rec)
    files["summary.json"] = json.dumps(summary, indent=1) + "\n"
    try:
        for name, text in files.items():
            atomic.write_text(run_dir / "pts" / name, text)
        links = ", ".join(f"pts/{n}" for n in sorted(files))
        out.append(message("PTS tables (CSV/JSON)", f"Window averages and steady-state determinations are also in "
                                                    f"{links} next to this report."))
    except SsdlabError:
        pass  # a read-only results directory still gets the HTML sections
    return out


sections.register(applies, build)
