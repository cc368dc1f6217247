"""report.html of a real `ssdlab run quick --target null` run: facts, every point, charts, commands, offline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markupsafe import escape

from ssdlab import formatting
from ssdlab.report import html
from ssdlab.results.store import load_run

pytestmark = pytest.mark.integration

_XMLNS = re.compile(r"""\sxmlns(?::\w+)?=["'][^"']*["']""")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run the quick suite on fio's null engine once (1 s per point) through the installed command."""
    out = tmp_path_factory.mktemp("report") / "quick-null"
    exe = Path(sys.executable).parent / "ssdlab"
    proc = subprocess.run([str(exe), "run", "quick", "--target", "null", "--runtime", "1", "--out", str(out),
                           "--force"], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("report.html")
    return out


def test_report_of_a_real_run_has_every_part(quick_run: Path) -> None:
    doc = (quick_run / "report.html").read_text(encoding="utf-8")
    data = json.loads((quick_run / "run.json").read_text())
    host = data["host"]
    for fact in (host["hostname"], host["kernel"], host["os"], f"fio {host['engine_version']}",
                 "null (fio null engine)", "null target: host ceiling, no device"):
        assert str(escape(fact)) in doc, fact
    assert "<dt>runtime per point</dt><dd>1 s</dd>" in doc
    assert len(data["points"]) == 8
    for p in data["points"]:
        pid = p["point"]["id"]
        assert f'<tbody class="point" id="pt-{pid}">' in doc
        cmd = (quick_run / "points" / pid / "cmd.txt").read_text().rstrip("\n")
        job = (quick_run / "points" / pid / "job.fio").read_text().rstrip("\n")
        assert str(escape(cmd)) in doc
        assert str(escape(job)) in doc
    charts = doc[doc.index('<section id="charts">'):doc.index('<section id="latency">')]
    assert charts.count("<svg") == 2
    for group in ("SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"):
        assert group in charts
    latency = doc[doc.index('<section id="latency">'):doc.index('<section id="commands">')]
    assert latency.count("<svg") == 2  # read and write, four lines each


def test_table_values_match_the_stored_measurement(quick_run: Path) -> None:
    run = load_run(quick_run)
    doc = (quick_run / "report.html").read_text(encoding="utf-8")
    for r in run.points:
        assert r.measurement is not None
        block = re.search(rf'id="pt-{re.escape(r.point.id)}">(.*?)</tbody>', doc, re.S)
        assert block is not None
        cells = re.findall(r'<td class="num">([^<]*)</td>', block.group(1))
        (name, d), = r.measurement.directions.items()
        assert d.clat is not None
        assert cells[0] == formatting.grouped(d.iops)
        assert cells[1] == formatting.mbps(d.bw_mbps)
        assert cells[3:7] == [formatting.latency_ns(d.clat.percentile(p)) for p in html.TABLE_PERCENTILES]
        assert f'class="dir-{name}"' in block.group(1)


def test_report_opens_offline(quick_run: Path) -> None:
    doc = (quick_run / "report.html").read_text(encoding="utf-8")
    assert "<svg" in doc
    assert "http://www.w3.org/2000/svg" in doc  # namespace declarations are expected...
    rest = _XMLNS.sub("", doc)
    assert re.findall(r"(?:https?:)?//[\w.-]+\.\w+", rest) == []  # ...but no other URL at all
    assert not re.search(r"<script\b|<link\b|<img\b|<iframe\b|@import", rest, re.I)
    assert not re.search(r"""\s(?:src|href)\s*=\s*["'](?!#)""", rest, re.I)


def test_report_command_re_renders_the_same_file(quick_run: Path) -> None:
    before = (quick_run / "report.html").read_text(encoding="utf-8")
    exe = Path(sys.executable).parent / "ssdlab"
    proc = subprocess.run([str(exe), "report", str(quick_run)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert (quick_run / "report.html").read_text(encoding="utf-8") == before  # deterministic output


def test_report_of_a_sim_run_says_it_is_a_model(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "ssdlab"
    out = tmp_path / "sim"
    proc = subprocess.run([str(exe), "run", "quick", "--target", "sim:tlc-4k", "--runtime", "1", "--out", str(out),
                           "--force"], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = (out / "report.html").read_text(encoding="utf-8")
    assert '<div class="notice sim"><strong>Simulated target: not a real drive</strong>' in doc
    run = load_run(out)
    for r in run.points:
        cmd = (out / "points" / r.point.id / "cmd.txt").read_text().rstrip("\n")
        assert str(escape(cmd)) in doc  # whatever the simulator wrote as its command
    assert doc.count("<svg") == 4
