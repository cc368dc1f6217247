"""SNIA PTS 2.0 XSR report pages: set-up, throughput/IOPS/response time against time over the three access
groups with the transitions marked, a detail plot of each transition, the per-segment table and the measured
recovery times (definition in ssdlab.suites.pts.xsr and docs/pts.md)."""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ssdlab.formatting import csv_value
from ssdlab.report import charts
from ssdlab.report.pts_page import chart, header, message, num, setup_section, table
from ssdlab.report.sections import Chart, Section, Table
from ssdlab.report.templating import fragment
from ssdlab.results.model import Run
from ssdlab.suites.pts import xsr as xsr_mod
from ssdlab.suites.pts.common import PtsSettings
from ssdlab.units import format_duration

COLORS = {"a": charts.PALETTE[0], "b": charts.PALETTE[1], "c": charts.PALETTE[2]}


def sections(run: Run, s: PtsSettings, state: xsr_mod.XsrState, files: dict[str, str]) -> list[Section]:
    x = xsr_mod.xsr_settings(s)
    rec = xsr_mod.recoveries(s, state)
    stimulus = "; ".join(f"{seg.label} x {x.count(seg)} samples ({format_duration(x.count(seg) * s.runtime_s)})"
                         for seg in xsr_mod.SEGMENTS)
    verdict = "no steady-state criterion (time series); " + ("finished" if state.finished else
                                                              f"not finished ({sum(map(len, state.samples.values()))} "
                                                              "samples so far)")
    out = [setup_section("PTS XSR: set-up", header(
        run, s, "Cross Stimulus Recovery (XSR), SEQ 1024 KiB / RND 8 KiB / SEQ 1024 KiB writes", xsr_mod.TEST,
        wipc="none: XSR starts fresh-out-of-box", pc2="none: access group A is the first stimulus",
        window="not applicable (XSR is a time series)", verdict=verdict,
        tq=f"T{x.threads}Q{x.qd} (TOIO {x.threads * x.qd})",
        extra=[("Test stimulus", stimulus),
               ("Recovery", f"settled level = mean of a segment's last {xsr_mod.RECOVERY_WINDOW} samples; recovered "
                            f"at the first sample within ±{xsr_mod.RECOVERY_BAND:.0%} of it from which on the "
                            f"{xsr_mod.RECOVERY_WINDOW}-sample moving average stays within that band")]),
        "pts-xsr-header")]
    if not any(state.samples.values()):
        out.append(message("PTS XSR: results", "No sample yet."))
        return out
    out.append(Section("PTS XSR: throughput, IOPS and response time vs time",
                       fragment("pts_charts.html.j2", charts=_time_charts(s, state, files)), anchor="pts-xsr-time"))
    out.append(Section("PTS XSR: transitions and recovery",
                       fragment("pts_xsr_recovery.html.j2", v=_recovery(s, state, rec)), anchor="pts-xsr-recovery"))
    return out


def _times(s: PtsSettings, state: xsr_mod.XsrState) -> dict[str, list[float]]:
    """Minutes of stimulus at the end of each sample, segments back to back."""
    out: dict[str, list[float]] = {}
    t = 0.0
    for seg in xsr_mod.SEGMENTS:
        xs = []
        for _ in state.samples.get(seg.key, []):
            t += s.runtime_s
            xs.append(t / 60.0)
        out[seg.key] = xs
    return out


def _transitions(s: PtsSettings, state: xsr_mod.XsrState) -> list[charts.RefLine]:
    times = _times(s, state)
    lines = []
    for prev, seg in zip(xsr_mod.SEGMENTS, xsr_mod.SEGMENTS[1:], strict=False):
        if times[seg.key] and times[prev.key]:
            lines.append(charts.RefLine(times[prev.key][-1], f"transition {prev.name}->{seg.name}", "--", "#555555"))
    return lines


def _series(s: PtsSettings, state: xsr_mod.XsrState, metric: str) -> list[charts.Series]:
    times = _times(s, state)
    return [charts.Series(seg.label, times[seg.key], xsr_mod.segment_values(state, seg, metric), "-",
                          color=COLORS[seg.key]) for seg in xsr_mod.SEGMENTS if times[seg.key]]


def _time_charts(s: PtsSettings, state: xsr_mod.XsrState, files: dict[str, str]) -> list[Chart]:
    marks = _transitions(s, state)
    xlabel = "Time (min of stimulus)" + ("" if s.runtime_s == 60 else f", scaled: each sample is {s.runtime_s:g} s")
    parts = []
    for metric, title, unit, logy in (("mbps", "throughput", "MB/s", None), ("iops", "IOPS", "IOPS", True),
                                      ("art", "average response time (ART)", "µs", True),
                                      ("mrt", "maximum response time (MRT)", "µs", True)):
        parts.append(chart(charts.line_chart(_series(s, state, metric), vlines=marks, logy=logy,
                                             title=f"XSR: {title} vs time, all access groups", xlabel=xlabel,
                                             ylabel=unit),
                           f"{title[0].upper()}{title[1:]} of every sample; dashed lines mark the transitions"))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["segment", "sample", "time_min", "mbps", "iops", "art_us", "mrt_us"])
    times = _times(s, state)
    for seg in xsr_mod.SEGMENTS:
        cols = [xsr_mod.segment_values(state, seg, m) for m in ("mbps", "iops", "art", "mrt")]
        for i, t in enumerate(times[seg.key]):
            writer.writerow([seg.name, i + 1, f"{t:.6g}", *(csv_value(c[i]) for c in cols)])
    files["xsr.csv"] = buf.getvalue()
    return parts


def _window_mean(values: Sequence[float | None]) -> float | None:
    tail = [v for v in values if v is not None][-xsr_mod.RECOVERY_WINDOW:]
    return sum(tail) / len(tail) if tail else None


@dataclass(frozen=True)
class RecoveryView:
    """What templates/sections/pts_xsr_recovery.html.j2 shows."""

    charts: list[Chart]  # each transition in detail
    settled: Table  # each access group's settled values
    recoveries: Table
    c_vs_a: str | None  # segment C's settled level against A's


def _transition_chart(s: PtsSettings, state: xsr_mod.XsrState, prev: xsr_mod.Segment, seg: xsr_mod.Segment,
                      r: xsr_mod.Recovery) -> Chart:
    times = _times(s, state)
    n_prev = max(2 * xsr_mod.RECOVERY_WINDOW, len(times[prev.key]) // 10)
    want = (r.recovered_at or 1) + 2 * xsr_mod.RECOVERY_WINDOW
    n_next = max(want, len(times[seg.key]) // 5)
    detail = [charts.Series(prev.label, times[prev.key][-n_prev:],
                            xsr_mod.segment_values(state, prev, "mbps")[-n_prev:], "-o", color=COLORS[prev.key]),
              charts.Series(seg.label, times[seg.key][:n_next],
                            xsr_mod.segment_values(state, seg, "mbps")[:n_next], "-o", color=COLORS[seg.key])]
    refs = []
    if r.settled is not None:
        refs = [charts.RefLine(r.settled, f"{seg.name} settled level", "-", "#009E73"),
                charts.RefLine(r.settled * (1 + xsr_mod.RECOVERY_BAND), f"±{xsr_mod.RECOVERY_BAND:.0%}", ":",
                               "#888888"),
                charts.RefLine(r.settled * (1 - xsr_mod.RECOVERY_BAND), f"_band {seg.name}", ":", "#888888")]
    marks = [charts.RefLine(times[prev.key][-1], f"transition {prev.name}->{seg.name}", "--", "#555555")]
    if r.recovery_s is not None:
        marks.append(charts.RefLine(times[prev.key][-1] + r.recovery_s / 60.0, "recovered", "-.", "#CC79A7"))
    return chart(charts.line_chart(detail, ref_lines=refs, vlines=marks,
                                   title=f"XSR: transition {prev.name} -> {seg.name} (throughput)",
                                   xlabel="Time (min of stimulus)", ylabel="MB/s"),
                 f"The end of {prev.name} and the start of {seg.name}; the band is ±{xsr_mod.RECOVERY_BAND:.0%} of "
                 f"{seg.name}'s settled level")


def _recovery_row(prev: xsr_mod.Segment, seg: xsr_mod.Segment, r: xsr_mod.Recovery) -> list[str]:
    return [f"{prev.name} -> {seg.name} ({prev.access} -> {seg.access} {seg.bs // 1024} KiB)",
            num(r.settled, "MB/s"), f"{r.first_ratio:.2f}" if r.first_ratio is not None else "n/a",
            f"{r.extreme_ratio:.2f}" if r.extreme_ratio is not None else "n/a",
            f"sample {r.recovered_at}" if r.recovered_at is not None else "n/a",
            xsr_mod.span(r.recovery_s) if r.recovery_s is not None else "n/a"]


def _recovery(s: PtsSettings, state: xsr_mod.XsrState, rec: dict[str, xsr_mod.Recovery]) -> RecoveryView:
    times = _times(s, state)
    segs = xsr_mod.SEGMENTS
    figs = [_transition_chart(s, state, prev, seg, rec[seg.key]) for prev, seg in itertools.pairwise(segs)
            if times[seg.key] and times[prev.key]]
    rows = []
    for seg in segs:
        vals = {m: _window_mean(xsr_mod.segment_values(state, seg, m)) for m in ("mbps", "iops", "art", "mrt")}
        n = len(state.samples.get(seg.key, []))
        rows.append([seg.label, n, format_duration(n * s.runtime_s), num(vals["mbps"]), num(vals["iops"]),
                     num(vals["art"]), num(vals["mrt"])])
    settled = table(["Access group", "Samples", "Stimulus", "MB/s", "IOPS", "ART (µs)", "MRT (µs)"], rows,
                    f"Settled values: the mean of each access group's last {xsr_mod.RECOVERY_WINDOW} samples")
    recoveries = table(["Transition", "Settled throughput", "First sample / settled", "Farthest before recovery / "
                        "settled", "Recovered at", "Recovery time"],
                       [_recovery_row(prev, seg, rec[seg.key]) for prev, seg in itertools.pairwise(segs)],
                       f"Recovered: at the first sample within ±{xsr_mod.RECOVERY_BAND:.0%} of the settled level from "
                       f"which on the {xsr_mod.RECOVERY_WINDOW}-sample moving average stays within that band; the "
                       "recovery time is the stimulus time from the transition to the start of that sample")
    a = rec_level(state, segs[0])
    c = rec["c"].settled
    c_vs_a = (f"after the random writes, sequential writes settle at {c / a:.2f}x the throughput they had before "
              "them (segment C's settled level / segment A's)") if a and c else None
    return RecoveryView(figs, settled, recoveries, c_vs_a)


def rec_level(state: xsr_mod.XsrState, seg: xsr_mod.Segment) -> float | None:
    return _window_mean(xsr_mod.segment_values(state, seg, "mbps"))
