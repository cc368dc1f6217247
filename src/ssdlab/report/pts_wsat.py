"""PTS WSAT's report sections (suites/pts/wsat.py), as the spec's WSAT page: the header; IOPS against time, TGBW
(total GB written) and drive fills; ART, 5 nines and MRT against TGBW and drive fills; the summary; and the
response-time histogram capture after the samples (histogram, CDF, exceedance and confidence levels from its
fio histogram bins, drawn as LAT's captures are). pts/wsat.csv holds every sample; summary.json the run's
stop, its last samples' levels and the capture's confidence levels."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from ssdlab import metrics
from ssdlab.formatting import csv_value
from ssdlab.report import charts, latency, pts_lat
from ssdlab.report.pts_lat import Capture
from ssdlab.report.pts_page import chart, header, message, num, setup_section
from ssdlab.report.sections import Chart, Section
from ssdlab.report.templating import fragment
from ssdlab.results.model import Run
from ssdlab.suites.pts import wsat as wsat_mod
from ssdlab.suites.pts.common import PtsSettings, metric_value
from ssdlab.units import format_bytes, format_duration

RESPONSE = ("art", "nines", "mrt")  # the response times drawn against TGBW and fills
LAST = 5  # samples averaged for the summary's end values
NINES_IOS = 100_000  # below this many I/Os a sample's 99.999th percentile is its maximum or near it


@dataclass(frozen=True)
class Curves:
    """Every sample's x positions and values."""

    minutes: list[float]
    tgbw: list[float]  # GB (10^9 bytes) written after each sample
    fills: list[float]  # capacities written after each sample
    values: dict[str, list[float | None]]  # metric -> per sample (iops and RESPONSE)


def curves(s: PtsSettings, state: wsat_mod.WsatState) -> Curves:
    return Curves([(i + 1) * s.runtime_s / 60.0 for i in range(len(state.samples))],
                  [w / 1e9 for w in state.written], [w / s.capacity for w in state.written],
                  {m: [metric_value(m, p) for p in state.samples] for m in ("iops", *RESPONSE)})


def _csv(c: Curves) -> str:
    """pts/wsat.csv: one row per sample (the response-time columns after the first six, which older reports
    wrote alone)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["sample", "time_min", "iops", "art_us", "tgbw_GB", "drive_fills", "nines_us", "mrt_us"])
    for i in range(len(c.minutes)):
        writer.writerow([i + 1, f"{c.minutes[i]:.4g}", csv_value(c.values["iops"][i]), csv_value(c.values["art"][i]),
                         f"{c.tgbw[i]:.6g}", f"{c.fills[i]:.6g}", csv_value(c.values["nines"][i]),
                         csv_value(c.values["mrt"][i])])
    return buf.getvalue()


def _response_chart(xs: list[float], c: Curves, against: str, xlabel: str, least_ios: int) -> Chart:
    series = [charts.Series(metrics.get(m).label, xs, c.values[m], style)  # (MRT dashed: 5 nines may lie under it)
              for m, style in zip(RESPONSE, ("-", "-", "--"), strict=True)]
    note = "" if least_ios >= NINES_IOS else (
        f"; the smallest sample holds {least_ios:,} I/Os, fewer than the {NINES_IOS:,} a 99.999th percentile needs "
        "to differ from the maximum")
    return chart(charts.line_chart(series, title=f"WSAT: ART, 5 nines and MRT vs {against}", xlabel=xlabel,
                                   ylabel="response time (µs)"),
                 f"Average (ART), 99.999th percentile (5 nines) and maximum (MRT) response time of every sample "
                 f"against {against}{note}")


def _charts(s: PtsSettings, c: Curves, least_ios: int) -> list[Chart]:
    scale = "" if s.runtime_s == 60 else f" (scaled: each sample is {s.runtime_s:g} s)"
    iops = c.values["iops"]
    return [
        chart(charts.line_chart([charts.Series("IOPS", c.minutes, iops, "-")], title="WSAT: IOPS vs time",
                                xlabel=f"Time (min of stimulus){scale}", ylabel="IOPS"),
              "IOPS of every sample, RND 4 KiB writes from fresh-out-of-box"),
        chart(charts.line_chart([charts.Series("IOPS", c.tgbw, iops, "-")],
                                title="WSAT: IOPS vs total GB written (TGBW)", xlabel="TGBW (GB, 10^9 bytes)",
                                ylabel="IOPS"),
              "IOPS against total GB written: the write cliff shows where the drive runs out of free blocks"),
        chart(charts.line_chart([charts.Series("IOPS", c.fills, iops, "-")], title="WSAT: IOPS vs drive fills",
                                xlabel="Drive fills (TGBW / capacity)", ylabel="IOPS"),
              "IOPS against normalised capacity written"),
        _response_chart(c.tgbw, c, "TGBW", "TGBW (GB, 10^9 bytes)", least_ios),
        _response_chart(c.fills, c, "drive fills", "Drive fills (TGBW / capacity)", least_ios),
    ]


def _last(values: list[float | None]) -> float | None:
    known = [v for v in values[-LAST:] if v is not None]
    return sum(known) / len(known) if known else None


def end_values(c: Curves) -> dict[str, float | None]:
    """IOPS and each response time averaged over the last samples (where WSAT ends up)."""
    return {m: _last(c.values[m]) for m in ("iops", *RESPONSE)}


def _summary_rows(run: Run, s: PtsSettings, state: wsat_mod.WsatState, c: Curves) -> list[tuple[str, Any]]:
    end = end_values(c)
    return [
        ("Samples", len(state.samples)),
        ("Total written", f"{format_bytes(state.written[-1])} = {state.written[-1] / 1e9:.3f} GB = "
                          f"{c.fills[-1]:.2f} drive fills"),
        ("Stimulus time", format_duration(len(state.samples) * s.runtime_s)),
        ("First sample IOPS (FOB)", num(c.values["iops"][0])),
        (f"Average of the last {LAST} samples", num(end["iops"]) if end["iops"] is not None else "n/a"),
        (f"Response times, last {LAST} samples", ", ".join(f"{metrics.get(m).label} {num(end[m], 'µs')}"
                                                           for m in RESPONSE)),
        ("Stop", state.note),
        ("Histogram capture", _capture_line(run, s)),
    ]


def _capture_line(run: Run, s: PtsSettings) -> str:
    p = wsat_mod.capture_point(s)
    pr = run.result(p.id) if p is not None else None
    if p is None:
        return "none (--wsat-hist-minutes 0)"
    if pr is None:
        return "not run (the run ended before it, or predates WSAT's capture)"
    dist = latency.point_distribution(pr, None, "capture") if pr.status == "ok" else None
    if dist is None:
        return f"{pr.status}: {pr.reason}" if pr.status != "ok" else "no histogram bins"
    levels = ", ".join(f"{k} % within {v:,.0f} µs" for k, v in latency.levels_us(dist).items()
                       if k in ("99.9", "99.99", "99.999"))
    return f"{dist.n:,} I/Os; {levels} (section 'PTS WSAT: response-time histogram')"


@dataclass(frozen=True)
class CaptureView:
    """What templates/sections/pts_wsat_capture.html.j2 shows."""

    length: str
    tq: str
    scaled: bool
    capture: Capture
    note: str


def _capture_section(run: Run, s: PtsSettings) -> tuple[Section | None, dict[str, Any] | None]:
    """The capture's section and its summary.json entry (None, None before it ran or with no capture)."""
    p = wsat_mod.capture_point(s)
    pr = run.result(p.id) if p is not None else None
    if pr is None:
        return None, None
    minutes = wsat_mod.hist_minutes(s)
    drawn, dist = pts_lat.capture(pr, "RND 4 KiB 0/100", f"WSAT capture RND 4 KiB 0/100 {s.tq}: response times")
    view = CaptureView(pts_lat.length_text(minutes, s), s.tq,
                       not (minutes >= wsat_mod.HIST_SPEC_MINUTES and s.runtime_s == 60), drawn, latency.LEVEL_NOTE)
    summary = {"id": pr.point.id, "status": pr.status, "spec_minutes": minutes,
               "n": dist.n if dist is not None else 0, "levels_us": latency.levels_us(dist) if dist else {}}
    return Section("PTS WSAT: response-time histogram", fragment("pts_wsat_capture.html.j2", v=view),
                   anchor="pts-wsat-histogram"), summary


def sections(run: Run, s: PtsSettings, state: wsat_mod.WsatState, files: dict[str, str]
             ) -> tuple[list[Section], dict[str, Any]]:
    """WSAT's sections from its analysed state, and its summary.json entry; writes pts/wsat.csv into `files`."""
    verdict = state.note if state.finished else f"not finished ({len(state.samples)} samples so far)"
    out = [setup_section("PTS WSAT: set-up", header(
        run, s, "Write Saturation (WSAT), RND 4 KiB 0/100", "wsat", wipc="none: WSAT starts fresh-out-of-box",
        window="not applicable (WSAT is a time series with no steady-state stop)",
        verdict=f"no steady-state criterion; {verdict}", tq=f"T{s.threads}Q{s.qd} (TOIO {s.toio})"),
        "pts-wsat-header")]
    summary: dict[str, Any] = {"samples": len(state.samples), "finished": state.finished, "note": state.note,
                               "written_bytes": state.written[-1] if state.written else 0}
    if not state.samples:
        out.append(message("PTS WSAT: results", "No sample yet."))
        return out, summary
    c = curves(s, state)
    files["wsat.csv"] = _csv(c)
    least = min((sum(d.total_ios for d in p.measurement.directions.values()) for p in state.samples
                 if p.measurement is not None), default=0)
    out.append(Section("PTS WSAT: results", fragment("pts_charts.html.j2", charts=_charts(s, c, least),
                                                    rows=_summary_rows(run, s, state, c)), anchor="pts-wsat-results"))
    summary["last_samples"] = {f"{m}{'' if m == 'iops' else '_us'}": v for m, v in end_values(c).items()}
    capture, summary["histogram_capture"] = _capture_section(run, s)
    if capture is not None:
        out.append(capture)
    return out, summary
