"""report.html: one self-contained file (inline CSS, inline SVG charts, no external URLs)."""

from __future__ import annotations

import html
from pathlib import Path

from ssdlab import atomic
from ssdlab.model import Run
from ssdlab.report import export, sections


def render_html(run: Run, run_dir: Path) -> str:
    esc = html.escape
    rows = []
    for row in export.rows(run):
        rows.append("<tr>" + "".join(f"<td>{esc(str(row.get(c, '')))}</td>" for c in
                                     ("label", "status", "read_iops", "read_bw_MBps", "read_lat_mean_us",
                                      "write_iops", "write_bw_MBps", "write_lat_mean_us")) + "</tr>")
    extra = "".join(f"<h2>{esc(s.title)}</h2>{s.html}" for s in sections.sections_for(run, run_dir))
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>ssdlab {esc(run.suite)}</title></head><body>"
        f"<h1>ssdlab {esc(run.suite)} on {esc(str(run.target.get('name')))}</h1>"
        f"<table>{''.join(rows)}</table>{extra}</body></html>"
    )


def render_report(run: Run, run_dir: Path) -> Path:
    path = run_dir / "report.html"
    atomic.write_text(path, render_html(run, run_dir))
    return path
