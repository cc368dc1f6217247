"""`ssdlab serve` in a real browser: Playwright drives Debian's chromium (`executable_path`; Playwright's own
browser download is never used) through the catalog (filter, a report, a comparison) and a paced run watched
live until its charts hold 5 s of data and the page shows its verdict, with no console error on any page.
A page with 24 live devices has its frame times measured and printed (not asserted: the machine is shared).

SSDLAB_UPDATE_SCREENSHOTS=1 writes the screenshots docs/serve.md shows (docs/img/serve-*.png).
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ssdlab.results.catalog import catalog_id
from ssdlab.results.store import load_run
from ssdlab.run.liverecord import LIVE_FILE

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DATA = Path(__file__).parent.parent / "data" / "runs"
DOCS_IMG = Path(__file__).parent.parent.parent / "docs" / "img"
FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
PACED = """\
name = "paced"
summary = "two rate-limited points on a file, for watching a run live"
runtime_s = 4

[[matrix]]
name = "paced"
rw = ["randread", "randrw"]
bs = "4k"
iodepth = 4
numjobs = 1
options = { rate_iops = "2000" }
"""
TIMEOUT_MS = 60_000


@pytest.fixture
def root(tmp_path: Path) -> Path:
    out = tmp_path / "results"
    out.mkdir()
    for name, src in (("quick-file", "schema2/quick-file"), ("quick-older", "schema1/quick-file"),
                      ("pts-iops", "schema1/pts-iops-op28")):
        shutil.copytree(DATA / src, out / name)
    res = subprocess.run([sys.executable, "-m", "ssdlab", "report", str(out / "quick-file")], capture_output=True,
                         text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture
def server(root: Path) -> Iterator[str]:
    """`ssdlab serve` on a free loopback port; yields the login URL it printed."""
    proc = subprocess.Popen([sys.executable, "-m", "ssdlab", "serve", "--results", str(root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def _shot(page: Any, name: str) -> None:
    if os.environ.get("SSDLAB_UPDATE_SCREENSHOTS") == "1":
        DOCS_IMG.mkdir(exist_ok=True)
        page.screenshot(path=str(DOCS_IMG / name), full_page=True)


def _fleet(root: Path, devices: int = 24, history: int = 300) -> tuple[Path, str]:
    """A run of `devices` devices made to look as if it were going on, with `history` samples so far."""
    run_dir = root / "fleet"
    shutil.copytree(DATA / "schema2" / "quick-file", run_dir)
    doc = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    doc["status"], doc["run_id"] = "running", "fleet-24"
    (run_dir / "run.json").write_text(json.dumps(doc), encoding="utf-8")
    names = [f"node-{i // 12}:/dev/nvme{i % 12}n1" for i in range(devices)]
    start = time.time() - history
    head = [{"k": "run", "t": start, "v": 1, "title": f"pts-iops on {devices} drives", "devices": names,
             "engine": "fio", "host_group": False},
            {"k": "point", "t": start, "id": "iops-r03-rnd4k-0-100", "label": "IOPS R3 RND 4K W", "index": 17,
             "test": "iops", "round": 3, "eta": {"expected_s": 5400, "worst_s": 21000, "expected_points": 400,
                                                 "worst_points": 1500}}]
    lines = [json.dumps(x) for x in head] + [_sample(start + i, i, devices) for i in range(history)]
    (run_dir / LIVE_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run_dir, catalog_id(load_run(run_dir))


def _sample(t: float, i: int, devices: int) -> str:
    def fig(k: int) -> dict[str, list[float]]:
        w = 80000.0 + 3000.0 * ((i * 7 + k * 13) % 11)
        return {"w": [w, w * 4096 / 1e6, 790.0 + k, 2100.0 + 10 * (i % 9), 3900.0, 8100.0 + k * 40]}
    total = sum(fig(k)["w"][0] for k in range(devices))
    agg = {"w": [total, total * 4096 / 1e6, 800.0, 2300.0, 4000.0, 9000.0]}
    return json.dumps({"k": "s", "t": t, "e": float(i), "a": agg, "left_s": 5400 - i,
                       "d": [fig(k) for k in range(devices)]})


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_catalog_reports_comparison_and_a_run_watched_live(root: Path, server: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    base = server.split("/login")[0]
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(TIMEOUT_MS)
            page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))

            # the catalog: logged in by the printed URL, every run listed, filtered, a report, a comparison
            page.goto(server)
            page.wait_for_selector("#runs tbody tr")
            assert page.locator("#runs tbody tr").count() == 3
            page.fill("#q", "pts")
            assert page.locator("#runs tbody tr").count() == 1
            page.fill("#q", "")
            quick = catalog_id(load_run(root / "quick-file"))
            older = catalog_id(load_run(root / "quick-older"))
            _shot(page, "serve-catalog.png")
            page.click(f"tr[data-id='{quick}'] a:text('report')")
            page.wait_for_url(f"**/runs/{quick}/files/report.html")
            assert "quick" in page.content()
            page.goto(base + "/")
            page.check(f"tr[data-id='{quick}'] input[type=checkbox]")
            page.check(f"tr[data-id='{older}'] input[type=checkbox]")
            page.click("#compare")
            page.wait_for_url("**/compare?run=*")
            assert "baseline" in page.content().lower()

            # a paced run on a file, watched live from its first point to its verdict
            suite = tmp_path / "paced.toml"
            suite.write_text(PACED, encoding="utf-8")
            run_dir = root / "paced"
            run = subprocess.Popen([sys.executable, "-m", "ssdlab", "run", str(suite), "--target",
                                    f"file:{tmp_path / 'target.dat'}?size=64MiB", "--out", str(run_dir), "--yes",
                                    "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                deadline = time.monotonic() + 60
                while not (run_dir / "run.json").is_file() and time.monotonic() < deadline:
                    time.sleep(0.1)
                page.goto(f"{base}/live/{catalog_id(load_run(run_dir))}")
                page.wait_for_function("() => { const d = document.getElementById('c-iops').data;"
                                       " if (!d || !d.length || !d[0].x.length) return false;"
                                       " const x = d[0].x; return x[x.length - 1] - x[0] >= 5000; }")
                _shot(page, "serve-live.png")  # the run going on, with 5 s of charts
                page.wait_for_selector("#verdict:not(.hidden) .badge.v-complete")
            finally:
                _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
            live = page.evaluate("() => ({samples: window.ssdlabLive.samples.length,"
                                 " points: document.querySelectorAll('#points tbody tr').length,"
                                 " axes: ['c-iops', 'c-bw', 'c-lat'].map(id => {"
                                 "   const l = document.getElementById(id).layout;"
                                 "   return [l.xaxis.title.text, l.yaxis.title.text]; })})")
            assert live["samples"] >= 5
            assert live["points"] == 2
            assert all(x and y for x, y in live["axes"]), live["axes"]  # units on every axis
            assert "IOPS" in live["axes"][0][1]
            assert "MB/s" in live["axes"][1][1]
            assert "µs" in live["axes"][2][1]

            # 24 live devices: frame times while a sample arrives every second (printed, not asserted)
            fleet_dir, fleet = _fleet(root)
            lock = (fleet_dir / ".lock").open("w", encoding="utf-8")  # held as `ssdlab run` holds it
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            page.goto(f"{base}/live/{fleet}")
            page.wait_for_function("() => window.ssdlabLive.samples.length >= 300")
            stop = threading.Event()

            def feed() -> None:
                i = 300
                while not stop.wait(1.0):
                    with (fleet_dir / LIVE_FILE).open("a", encoding="utf-8") as fh:
                        fh.write(_sample(time.time(), i, 24) + "\n")
                    i += 1

            feeder = threading.Thread(target=feed, daemon=True)
            feeder.start()
            try:
                frames = page.evaluate("""() => new Promise(done => {
                    const times = []; const end = performance.now() + 6000;
                    function tick(t) { times.push(t); if (t < end) requestAnimationFrame(tick); else done(times); }
                    requestAnimationFrame(tick); })""")
            finally:
                stop.set()
                feeder.join(5)
                lock.close()
            gaps = sorted(b - a for a, b in itertools.pairwise(frames))
            print(f"\n24 live devices: {len(gaps)} frames in 6 s, frame time median {gaps[len(gaps) // 2]:.1f} ms, "
                  f"p95 {gaps[int(len(gaps) * 0.95)]:.1f} ms, max {gaps[-1]:.1f} ms; "
                  f"samples shown {page.evaluate('() => window.ssdlabLive.samples.length')}")
            assert page.evaluate("() => document.getElementById('c-dev-iops').data.length") == 24
            _shot(page, "serve-live-24-devices.png")
        finally:
            browser.close()
    assert errors == []


def _sweep_live(root: Path) -> tuple[Path, str]:
    """A stored QD sweep on two files (schema 3), made to look as if it were going on: a live record with
    read-only samples so far."""
    run_dir = root / "sweep"
    shutil.copytree(DATA / "schema3" / "sweep-2file-killed", run_dir)
    names = ["/tmp/a.dat", "/tmp/b.dat"]
    start = time.time() - 12
    head = [{"k": "run", "t": start, "v": 1, "title": "sweep-qd on two files", "devices": names, "engine": "fio",
             "host_group": False},
            {"k": "point", "t": start, "id": "p7", "label": "randread QD64", "index": 7, "phase": "measure",
             "eta": {"expected_s": 60, "worst_s": 60, "expected_points": 3, "worst_points": 3}}]
    lines = [json.dumps(x) for x in head]
    for i in range(10):
        fig = {"r": [9000.0 + 800 * (i % 3), 36.9, 0.0 if i == 4 else 157.0 + i, 171.0 + i, 240.0, 410.0]}
        lines.append(json.dumps({"k": "s", "t": start + 1 + i, "e": i + 1.0, "dt": 1.0, "a": fig, "d": [fig, fig]}))
    (run_dir / LIVE_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run_dir, catalog_id(load_run(run_dir))


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_live_charts_show_the_directions_present_ticks_that_bracket_and_points_against_the_swept_axis(
        root: Path, server: str) -> None:
    from playwright.sync_api import sync_playwright

    base = server.split("/login")[0]
    run_dir, run = _sweep_live(root)
    lock = (run_dir / ".lock").open("w", encoding="utf-8")  # held as `ssdlab run` holds it
    fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
    errors: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(TIMEOUT_MS)
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server)
            page.goto(f"{base}/live/{run}")
            for chart in ("c-iops", "c-points"):
                page.wait_for_function(f"() => {{ const d = document.getElementById('{chart}').data;"
                                       " return d && d.length; }")
            got = page.evaluate("""() => {
                const chart = (id) => { const d = document.getElementById(id);
                  return { names: d.data.map(t => t.name), colors: d.data.map(t => t.line && t.line.color),
                           y: d.data.map(t => t.y), axis: d.layout.yaxis, xaxis: d.layout.xaxis }; };
                return { iops: chart('c-iops'), lat: chart('c-lat'), points: chart('c-points') }; }""")
            # a read-only phase draws no write series
            assert got["iops"]["names"] == ["read"]
            assert all(n.startswith("read ") for n in got["lat"]["names"])
            # the latency axis: its labelled ticks bracket the data (157-181 µs here), one label per tick, no
            # stray "2"/"5" between decades, and a missing mean is a gap, not a drop to zero
            lat = got["lat"]["axis"]
            values = [v for ys in got["lat"]["y"] for v in ys if v is not None]
            assert 0 not in values
            assert len(lat["ticktext"]) == len(lat["tickvals"]) >= 3
            assert lat["tickvals"][0] <= min(values)
            assert lat["tickvals"][-1] >= max(values)
            # finished points against the swept axis: queue depth on a log2 axis, not the point's number
            xaxis = got["points"]["xaxis"]
            assert xaxis["title"]["text"] == "queue depth (QD)"
            assert xaxis["type"] == "log"
            assert xaxis["tickvals"] == [1, 2, 4, 8, 16, 32]
            # writes begin: their series appear, in their own colour
            with (run_dir / LIVE_FILE).open("a", encoding="utf-8") as fh:
                fig = {"w": [7000.0, 28.7, 300.0, 900.0, 1500.0, 2500.0]}
                for i in range(3):
                    fh.write(json.dumps({"k": "s", "t": time.time() + i * 0.01, "e": 20.0 + i, "a": fig,
                                         "d": [fig, fig]}) + "\n")
            page.wait_for_function("() => document.getElementById('c-iops').data.length === 2")
            iops = page.evaluate("() => document.getElementById('c-iops').data.map(t => [t.name, t.line.color])")
            assert iops == [["read", "#0072B2"], ["write", "#D55E00"]]
            browser.close()
    finally:
        lock.close()
    assert errors == []
