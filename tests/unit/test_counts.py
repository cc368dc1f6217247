"""Issue 34 item 2: a run's points, as the console, the report's header and table, the verdict and the catalog
count them, are one number (results/counts.py); steps and the host-ceiling check are listed apart."""

from __future__ import annotations

import io
import re
from pathlib import Path

from ssdlab.report import html, terminal
from ssdlab.results import catalog, store
from ssdlab.results.counts import point_counts
from ssdlab.results.model import (
    SCHEMA_VERSION,
    DirectionStats,
    Measurement,
    PointResult,
    Run,
    TestPoint,
    Workload,
)
from ssdlab.results.verdict import run_verdicts
from ssdlab.run import progress


def _result(pid: str, phase: str = "measure", status: str = "ok") -> PointResult:
    d = DirectionStats(iops=1000.0, bw_bytes=4.096e6, io_bytes=4_096_000, total_ios=1000, runtime_ms=1000)
    m = Measurement(engine="fio", engine_version="fio-3.33", directions={"read": d}, usr_cpu=5.0, sys_cpu=3.0)
    p = TestPoint(id=pid, label=pid, workload=Workload(rw="randread", bs=4096, runtime_s=1.0), phase=phase)
    return PointResult(point=p, status=status, started="2026-01-01T00:00:00+00:00",
                       finished="2026-01-01T00:00:01+00:00", measurement=m if status == "ok" else None,
                       reason="" if status == "ok" else f"{status}: because")


def _run(*results: PointResult) -> Run:
    run = Run(schema_version=SCHEMA_VERSION, ssdlab_version="t", run_id="r1", suite="four-corners",
              status="complete", created="2026-01-01T00:00:00+00:00", options={"suite": "four-corners"},
              target={"kind": "file", "name": "file:/tmp/x", "spec": "file:/tmp/x"}, host={})
    for r in results:
        run = run.with_point(r)
    return run


def _four_corners() -> Run:
    """As four-corners on two devices: the host-ceiling check, four measured points (one of them invalid)
    and a purge."""
    return _run(_result("host-ceiling", phase="ceiling"), _result("00-purge", phase="purge"),
                _result("01-a"), _result("02-b"), _result("03-c"), _result("04-d", status="invalid"))


def test_counts_keep_checks_and_steps_apart() -> None:
    c = point_counts(_four_corners())
    assert (c.measured, c.invalid, c.steps, c.checks) == (3, 1, 1, ("host-ceiling check",))
    assert c.text() == "3 measured points, 1 invalid; 1 step (purge); host-ceiling check"


def test_a_failed_attempt_then_its_rerun_counts_once() -> None:
    run = _run(_result("01-a", status="failed"), _result("01-a"))
    assert point_counts(run).measured == 1
    assert point_counts(run).failed == 0


def test_every_surface_shows_the_same_count(tmp_path: Path) -> None:
    run = _four_corners()
    run_dir = tmp_path / "r1"
    run_dir.mkdir()
    store.save_run(run_dir, run)
    want = "3 measured points"
    assert progress.run_end_text(run).startswith(f"run complete: {want}")
    console = io.StringIO()
    terminal.print_results(run, console)
    counts_said = set(re.findall(r"(\d+) measured points?", console.getvalue()))
    assert counts_said == {"3"}
    page = html.render_report(run, run_dir)
    text = page.read_text(encoding="utf-8")
    assert set(re.findall(r"(\d+) measured points?", text)) == {"3"}
    assert " ok" not in html._points_summary(run)  # no status tally that counts the check and the purge
    complete = _run(_result("host-ceiling", phase="ceiling"), _result("01-a"), _result("02-b"), _result("03-c"))
    assert run_verdicts(complete).tests[0].reason == want
    with catalog.Catalog(tmp_path) as cat:
        cat.refresh()
        (entry,) = cat.entries()
    assert entry.points == 3
