"""SNIA PTS 2.0 XSR report pages: set-up, throughput/IOPS/response time against time over the three access
groups with the transitions marked, a detail plot of each transition, the per-segment table and the measured
recovery times (definition in ssdlab.suites.pts.xsr and docs/pts.md)."""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Sequence

from ssdlab.formatting import csv_value
from ssdlab.report import charts
from ssdlab.report.pts_page import figure, header_html, kv, num, table
from ssdlab.report.sections import Section
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
    out = [Section("PTS XSR: set-up", header_html(
        run, s, "Cross Stimulus Recovery (XSR), SEQ 1024 KiB / RND 8 KiB / SEQ 1024 KiB writes", xsr_mod.TEST,
        wipc="none: XSR starts fresh-out-of-box", pc2="none: access group A is the first stimulus",
        window="not applicable (XSR is a time series)", verdict=verdict,
        tq=f"T{x.threads}Q{x.qd} (TOIO {x.threads * x.qd})",
        extra=[("Test stimulus", stimulus),
               ("Recovery", f"settled level = mean of a segment's last {xsr_mod.RECOVERY_WINDOW} samples; recovered "
                            f"at the first sample within ±{xsr_mod.RECOVERY_BAND:.0%} of it from which on the "
                            f"{xsr_mod.RECOVERY_WINDOW}-sample moving average stays within that band")]),
        anchor="pts-xsr-header")]
    if not any(state.samples.values()):
        out.append(Section("PTS XSR: results", "<p>No sample yet.</p>"))
        return out
    out.append(Section("PTS XSR: throughput, IOPS and response time vs time", _time_html(s, state, files),
                       anchor="pts-xsr-time"))
    out.append(Section("PTS XSR: transitions and recovery", _recovery_html(s, state, rec), anchor="pts-xsr-recovery"))
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


def _time_html(s: PtsSettings, state: xsr_mod.XsrState, files: dict[str, str]) -> str:
    marks = _transitions(s, state)
    xlabel = "Time (min of stimulus)" + ("" if s.runtime_s == 60 else f", scaled: each sample is {s.runtime_s:g} s")
    parts = []
    for metric, title, unit, logy in (("mbps", "throughput", "MB/s", False), ("iops", "IOPS", "IOPS", True),
                                      ("art", "average response time (ART)", "µs", True),
                                      ("mrt", "maximum response time (MRT)", "µs", True)):
        parts.append(figure(charts.line_chart(_series(s, state, metric), vlines=marks, logy=logy,
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
    return "".join(parts)


def _window_mean(values: Sequence[float | None]) -> float | None:
    tail = [v for v in values if v is not None][-xsr_mod.RECOVERY_WINDOW:]
    return sum(tail) / len(tail) if tail else None


def _recovery_html(s: PtsSettings, state: xsr_mod.XsrState, rec: dict[str, xsr_mod.Recovery]) -> str:
    times = _times(s, state)
    parts = []
    segs = xsr_mod.SEGMENTS
    for prev, seg in itertools.pairwise(segs):
        r = rec[seg.key]
        if not times[seg.key] or not times[prev.key]:
            continue
        n_prev = max(2 * xsr_mod.RECOVERY_WINDOW, len(times[prev.key]) // 10)
        want = (r.recovered_at or 1) + 2 * xsr_mod.RECOVERY_WINDOW
        n_next = max(want, len(times[seg.key]) // 5)
        detail = [charts.Series(prev.label, times[prev.key][-n_prev:],
                                xsr_mod.segment_values(state, prev, "mbps")[-n_prev:], "-o", color=COLORS[prev.key]),
                  charts.Series(seg.label, times[seg.key][:n_next],
                                xsr_mod.segment_values(state, seg, "mbps")[:n_next], "-o", color=COLORS[seg.key])]
        refs = []
        if r.settled is not None:
            refs = [charts.RefLine(r.settled, f"{seg.name} settled level", "-", "#2ca02c"),
                    charts.RefLine(r.settled * (1 + xsr_mod.RECOVERY_BAND), f"±{xsr_mod.RECOVERY_BAND:.0%}", ":",
                                   "#888888"),
                    charts.RefLine(r.settled * (1 - xsr_mod.RECOVERY_BAND), f"_band {seg.name}", ":", "#888888")]
        marks = [charts.RefLine(times[prev.key][-1], f"transition {prev.name}->{seg.name}", "--", "#555555")]
        if r.recovery_s is not None:
            marks.append(charts.RefLine(times[prev.key][-1] + r.recovery_s / 60.0, "recovered", "-.", "#9467bd"))
        parts.append(figure(charts.line_chart(detail, ref_lines=refs, vlines=marks,
                                              title=f"XSR: transition {prev.name} -> {seg.name} (throughput)",
                                              xlabel="Time (min of stimulus)", ylabel="MB/s"),
                            f"The end of {prev.name} and the start of {seg.name}; the band is ±"
                            f"{xsr_mod.RECOVERY_BAND:.0%} of {seg.name}'s settled level"))
    rows = []
    for seg in segs:
        vals = {m: _window_mean(xsr_mod.segment_values(state, seg, m)) for m in ("mbps", "iops", "art", "mrt")}
        n = len(state.samples.get(seg.key, []))
        rows.append([seg.label, n, format_duration(n * s.runtime_s), num(vals["mbps"]), num(vals["iops"]),
                     num(vals["art"]), num(vals["mrt"])])
    parts.append(table(["Access group", "Samples", "Stimulus", "MB/s", "IOPS", "ART (µs)", "MRT (µs)"], rows,
                       f"Settled values: the mean of each access group's last {xsr_mod.RECOVERY_WINDOW} samples"))
    rrows = []
    for prev, seg in itertools.pairwise(segs):
        r = rec[seg.key]
        rrows.append([f"{prev.name} -> {seg.name} ({prev.access} -> {seg.access} {seg.bs // 1024} KiB)",
                      num(r.settled, "MB/s"), f"{r.first_ratio:.2f}" if r.first_ratio is not None else "n/a",
                      f"{r.extreme_ratio:.2f}" if r.extreme_ratio is not None else "n/a",
                      f"sample {r.recovered_at}" if r.recovered_at is not None else "n/a",
                      xsr_mod.span(r.recovery_s) if r.recovery_s is not None else "n/a"])
    parts.append(table(["Transition", "Settled throughput", "First sample / settled", "Farthest before recovery / "
                        "settled", "Recovered at", "Recovery time"], rrows,
                       f"Recovered: at the first sample within ±{xsr_mod.RECOVERY_BAND:.0%} of the settled level from "
                       f"which on the {xsr_mod.RECOVERY_WINDOW}-sample moving average stays within that band; the "
                       "recovery time is the stimulus time from the transition to the start of that sample"))
    a = rec_level(state, segs[0])
    c = rec["c"].settled
    if a and c:
        parts.append(kv([("C vs A", f"after the random writes, sequential writes settle at {c / a:.2f}x the "
                                    "throughput they had before them (segment C's settled level / segment A's)")]))
    return "".join(parts)


def rec_level(state: xsr_mod.XsrState, seg: xsr_mod.Segment) -> float | None:
    return _window_mean(xsr_mod.segment_values(state, seg, "mbps"))
