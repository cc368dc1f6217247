"""Validation helpers: the analytic WA formula and the purge-aware state reload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdlab.results import store
from ssdlab.results.model import SCHEMA_VERSION, PointResult, Run, TestPoint, Workload
from ssdlab.sim.target import STATE_FILE, STATE_META, SimTarget
from ssdlab.sim.validate import Line, check_determinism, check_idle_gc, check_little, desnoyers_wa, format_table
from ssdlab.targets.base import TargetOptions


@pytest.mark.parametrize(("op", "wa"), [(7, 7.82), (10, 5.68), (20, 3.19), (28, 2.48), (50, 1.72), (100, 1.26)])
def test_desnoyers_matches_reference_table(op: float, wa: float) -> None:
    assert desnoyers_wa(op) == pytest.approx(wa, abs=0.01)


def test_fast_checks_pass() -> None:
    lines: list[Line] = []
    check_little(lines)
    check_idle_gc(lines)
    check_determinism(lines)
    assert lines
    assert all(ln.ok for ln in lines)
    table = format_table(lines)
    rows = [t for t in table if t.startswith("  ok ")]
    assert len(rows) == len(lines)
    assert all(ln.name in row for ln, row in zip(lines, rows, strict=True))
    assert max(len(t) for t in table) <= 110


def test_a_failed_line_is_visible_and_a_long_note_goes_below_it() -> None:
    table = format_table([Line("x", 2.0, 1.0, "±5%", False, "a note " * 12)])
    assert table[2].startswith("  FAIL   x ")
    assert table[3] == "         (" + "a note " * 12 + ")"


def _run_with(points: list[tuple[str, str]]) -> Run:
    results = tuple(PointResult(point=TestPoint(id=pid, label=pid, workload=Workload(rw="randwrite", bs=4096),
                                                phase=phase), status="ok", started="", finished="")
                    for pid, phase in points)
    return Run(schema_version=SCHEMA_VERSION, ssdlab_version="t", run_id="r", suite="s", status="interrupted",
               created="", options={}, target={}, host={}, points=results)


def _saved_state(tmp_path: Path, after: str) -> SimTarget:
    t = SimTarget.from_spec("tlc-4k", {"capacity": "128MiB"}, TargetOptions())
    t.prepare(True)
    t.save_state(tmp_path, after)
    assert json.loads((tmp_path / STATE_META).read_text())["point"] == after
    assert (tmp_path / STATE_FILE).exists()
    return t


def test_reload_skipped_after_a_later_purge(tmp_path: Path) -> None:
    _saved_state(tmp_path, "02-pre")
    store.save_run(tmp_path, _run_with([("01-purge", "purge"), ("02-pre", "precondition"), ("03-purge", "purge")]))
    fresh = SimTarget.from_spec("tlc-4k", {"capacity": "128MiB"}, TargetOptions())
    fresh.prepare(True)
    note = fresh.begin_session(tmp_path)
    assert "fresh-out-of-box" in note
    assert fresh.device().counters()["mapped_slots"] == 0


def test_reload_when_no_purge_followed(tmp_path: Path) -> None:
    _saved_state(tmp_path, "02-pre")
    store.save_run(tmp_path, _run_with([("01-purge", "purge"), ("02-pre", "precondition")]))
    fresh = SimTarget.from_spec("tlc-4k", {"capacity": "128MiB"}, TargetOptions())
    assert "reloaded" in fresh.begin_session(tmp_path)
    assert fresh.device().counters()["mapped_slots"] == fresh.device().counters()["user_slots"]
