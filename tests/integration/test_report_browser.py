"""Report and compare pages measured in a real browser at 1,280 px: Playwright drives Debian's chromium
(`executable_path`, as tests/integration/test_serve_browser.py does; Playwright's own browser download is never
used) over pages of fixture runs and short runs made here.

Measured on every page: no horizontal scroll of the page itself; every table either fits its box or scrolls
inside its .table-wrap with its first column sticky; every log axis (report/charts.py names them `log-x-N` /
`log-y-N` in the SVG) has at least two labelled ticks. The per-device table of a four-device run with long
paths fits without scrolling, its columns named short with the full path as tooltip; a PTS IOPS run charts
every one of its tests in its bar charts.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DATA = Path(__file__).parent.parent / "data" / "runs"
FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
WIDTH = 1280
TIMEOUT_MS = 60_000

MEASURE = """() => {
  const tables = [...document.querySelectorAll('table')].filter(t => t.offsetParent !== null).map(t => {
    const wrap = t.closest('.table-wrap');
    const box = wrap || t.parentElement;
    const first = t.querySelector('tr > :first-child');
    return {cls: t.className, width: t.getBoundingClientRect().width, box: box.clientWidth,
            scrolls: wrap !== null && wrap.scrollWidth > wrap.clientWidth,
            sticky: first !== null && getComputedStyle(first).position === 'sticky',
            head: [...t.querySelectorAll('tr:first-child > *')].map(c => [c.textContent.trim(), c.title || ''])};
  });
  const axes = [...document.querySelectorAll('svg g[id*="log-"]')].map(g => ({id: g.id,
    labels: [...g.querySelectorAll('g[id*="tick_"] text')].map(t => t.textContent.trim()).filter(x => x)}));
  const bars = [...document.querySelectorAll('#charts figure')].map(f => ({
    title: f.getAttribute('aria-label') || '',
    rows: [...f.querySelectorAll('g[id*="ytick_"]')]
      .map(g => [...g.querySelectorAll('text')].map(t => t.textContent.trim()).join(' ')).filter(x => x)}));
  return {page: document.documentElement.scrollWidth, tables, axes, bars};
}"""


def _ssdlab(*args: str) -> None:
    res = subprocess.run([sys.executable, "-m", "ssdlab", *args], capture_output=True, text=True, timeout=600,
                         check=False)
    assert res.returncode in (0, 1), res.stderr  # (1: a gate that fails is still a page)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> a page: a four-device quick run on files with long paths, a PTS IOPS run of 57 tests on the
    simulator, the schema-2 quick fixture, and a comparison of the two quick fixtures."""
    base = tmp_path_factory.mktemp("pages")
    files = base / "a-rather-long-directory-name" / "holding-the-test-files"
    files.mkdir(parents=True)
    targets = [a for i in range(4) for a in ("--target", f"file:{files / f'device{i}.dat'}?size=16MiB")]
    _ssdlab("run", "quick", "--runtime", "0.2", *targets, "--out", str(base / "devices"), "--yes", "-q")
    _ssdlab("run", "pts-iops", "--runtime", "0.1", "--target", "sim:tlc-4k?capacity=64MiB", "--max-rounds", "5",
            "--out", str(base / "pts-iops"), "--yes", "-q")
    for name, src in (("quick", "schema2/quick-file"), ("older", "schema1/quick-file")):
        shutil.copytree(DATA / src, base / name)
    _ssdlab("report", str(base / "quick"))
    _ssdlab("compare", str(base / "older"), str(base / "quick"), "--out", str(base / "cmp"), "--fail-on",
            "iops:-5%")
    return {"devices": base / "devices" / "report.html", "pts-iops": base / "pts-iops" / "report.html",
            "quick": base / "quick" / "report.html", "compare": base / "cmp" / "compare.html"}


@pytest.fixture(scope="module")
def measured(pages: dict[str, Path]) -> dict[str, dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    out = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            page.set_default_timeout(TIMEOUT_MS)
            page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
            for name, path in pages.items():
                page.goto(path.as_uri())
                out[name] = page.evaluate(MEASURE)
        finally:
            browser.close()
    assert errors == []
    return out


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("name", ["devices", "pts-iops", "quick", "compare"])
def test_tables_fit_or_scroll_with_their_first_column_in_view(measured: dict[str, dict[str, Any]],
                                                              name: str) -> None:
    m = measured[name]
    assert m["page"] <= WIDTH, f"{name}: the page scrolls sideways ({m['page']} px)"
    assert m["tables"]
    for t in m["tables"]:
        if t["width"] > t["box"] + 1:
            assert t["scrolls"], f"{name}: table {t['cls']!r} {t['width']:.0f} px in {t['box']} px, cut off"
            assert t["sticky"], f"{name}: table {t['cls']!r} scrolls without its first column in view"


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("name", ["devices", "pts-iops", "quick", "compare"])
def test_every_log_axis_has_two_labels_or_more(measured: dict[str, dict[str, Any]], name: str) -> None:
    axes = measured[name]["axes"]
    assert axes, f"{name}: no log axis found"
    few = [(a["id"], a["labels"]) for a in axes if len(a["labels"]) < 2]
    assert few == [], f"{name}: log axes with fewer than two labels"
    print(f"\n{name}: {len(axes)} log axes, labels per axis {min(len(a['labels']) for a in axes)} to "
          f"{max(len(a['labels']) for a in axes)}")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_per_device_table_fits_with_short_names(measured: dict[str, dict[str, Any]]) -> None:
    tables = [t for t in measured["devices"]["tables"] if "all devices" in [h for h, _ in t["head"]]]
    assert tables
    for t in tables:
        assert t["width"] <= t["box"] + 1, t
        assert not t["scrolls"]
        names = t["head"][1:5]
        assert [h for h, _ in names] == [f"device{i}.dat" for i in range(4)]
        assert all(tip.endswith(f"/holding-the-test-files/{h}") for h, tip in names), names  # the full path
    print(f"\nper-device tables: {max(t['width'] for t in tables):.0f} px in {tables[0]['box']} px")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_every_pts_test_is_in_the_bar_charts(measured: dict[str, dict[str, Any]], pages: dict[str, Path]) -> None:
    doc = pages["pts-iops"].read_text(encoding="utf-8")
    iops = [b for b in measured["pts-iops"]["bars"] if b["title"].startswith("IOPS")]
    assert len(iops) > 1  # more bars than one chart holds
    rows = [r for b in iops for r in b["rows"]]
    assert len(rows) == len(set(rows))  # no test twice
    total = int(iops[0]["title"].rsplit(" of ", 1)[1])
    assert len(rows) == total
    assert f"the {total} tests are charted in {len(iops)} pairs of charts" in doc
