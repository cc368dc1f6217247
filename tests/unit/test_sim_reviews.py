"""The calibrated presets against their reviews' published figures, and the shape checks of every preset.

Each preset's table and shape checks take a second or two of CPU (long QD1 points, the P5430's 30-s stability run):
they are measured once for the module, in two worker processes when the host has two CPUs (forked, as
report/charts.py does), and the tests read what they measured.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import pytest

from ssdlab.sim.lab import Drive, Lab, cov_pct, low_share
from ssdlab.sim.presets import PRESETS, REVIEWS, calibration
from ssdlab.sim.reviews import RATIO_HI, RATIO_LO, TABLES, Figure, judge, table, worst_ratio
from ssdlab.sim.shapes import OP_VARIANTS, Shape, check, op_shape, worst_gc_step_us


@dataclass(frozen=True)
class TableRow:
    """What a test reads of a table row (a Row holds its figure's measuring function, which does not pickle)."""

    name: str
    check: str
    ratio: float | None
    ok: bool
    why: str


@dataclass(frozen=True)
class Measured:
    tables: dict[str, tuple[list[TableRow], float | None]]
    shapes: dict[str, list[Shape]]


def _tables(presets: tuple[str, ...]) -> dict[str, tuple[list[TableRow], float | None]]:
    """The tables of presets of one drive family, on one Lab: the P5430's table measures the re-provisioned drive's
    writes first, in the order that drive's own table does, so the second table reuses them (as `ssdlab sim
    validate` would measure them, each on a Lab of its own)."""
    lab = Lab()
    out = {}
    for preset in presets:
        rows = table(preset, lab)
        out[preset] = ([TableRow(r.figure.name, r.figure.check, r.ratio, r.ok, r.why) for r in rows],
                       worst_ratio(rows))
    return out


@pytest.fixture(scope="module")
def measured() -> Measured:
    families: dict[str, list[str]] = {}
    for preset in sorted(TABLES):
        families.setdefault("p5430" if preset.startswith("p5430") else preset, []).append(preset)
    presets = sorted(PRESETS)
    workers = min(2, os.cpu_count() or 1)
    if workers < 2 or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        return Measured({k: v for f in families.values() for k, v in _tables(tuple(f)).items()},
                        {preset: check(preset) for preset in presets})
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        table_jobs = [pool.submit(_tables, tuple(f)) for f in sorted(families.values(), key=len, reverse=True)]
        shape_jobs = [pool.submit(check, preset) for preset in presets]
        tables = {k: v for job in table_jobs for k, v in job.result().items()}
        shapes = {preset: job.result() for preset, job in zip(presets, shape_jobs, strict=True)}
    return Measured(tables, shapes)


@pytest.mark.parametrize("preset", sorted(TABLES))
def test_every_published_figure_is_within_its_band(preset: str, measured: Measured) -> None:
    rows, worst = measured.tables[preset]
    assert rows, "a calibrated preset has figures"
    failed = [f"{r.name}: {r.why}" for r in rows if not r.ok]
    assert not failed
    for r in rows:
        if r.check == "ratio":
            assert r.ratio is not None
            assert RATIO_LO <= r.ratio <= RATIO_HI
    # what reports print as the preset's worst ratio is what the table measures now
    assert worst is not None
    assert round(worst, 2) == REVIEWS[preset][1]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_shape_checks_pass(preset: str, measured: Measured) -> None:
    shapes = measured.shapes[preset]
    assert len(shapes) == 7 + (preset in OP_VARIANTS)
    assert [s.name for s in shapes if not s.ok] == []


def test_op_check_fails_when_the_variant_reads_slower() -> None:
    # the variant with one read unit per die instead of four: its 16K-1M reads trail by far more than 5 %
    slow = op_shape("tlc-4k-28", Drive("tlc-4k-28", {"read_planes": "1"}), Drive("tlc-4k"))
    assert not slow.ok
    assert slow.rule == ">= 0.95"
    assert slow.measured.startswith("0.")


def test_a_figure_out_of_band_fails_and_says_why() -> None:
    lab = Lab()
    fast = judge(Figure("x", 100.0, "IOPS", "seed 0", lambda _: 140.0), lab)
    assert not fast.ok
    assert "higher" in fast.why
    assert "1.40x" in fast.why
    slow = judge(Figure("x", 100.0, "IOPS", "seed 0", lambda _: 70.0), lab)
    assert not slow.ok
    assert "lower" in slow.why
    assert judge(Figure("x", 100.0, "IOPS", "seed 0", lambda _: 130.0), lab).ok
    assert not judge(Figure("x", 1.0, "ms", "seed 0", lambda _: 1.2, check="below"), lab).ok
    assert judge(Figure("x", 1.0, "ms", "seed 0", lambda _: 1.2, check="above"), lab).ok
    shown = judge(Figure("x", 3.0, "%", "seed 0", lambda _: 9.0, check="info", note="why not"), lab)
    assert shown.ok
    assert shown.why == "why not"
    assert shown.measured == 9.0


def test_worst_ratio_is_the_one_farthest_from_one() -> None:
    lab = Lab()
    rows = [judge(Figure("a", 1.0, "x", "s", lambda _, v=v: v), lab) for v in (1.2, 0.8, 1.1)]
    assert worst_ratio(rows) == pytest.approx(0.8)


def test_calibration_names_the_review_and_the_worst_ratio() -> None:
    text = calibration("p5430")
    assert "seed 000" in text
    assert f"{REVIEWS['p5430'][1]:.2f}" in text
    assert "not calibrated" in calibration("tlc-4k")


def test_worst_gc_step_grows_with_the_slowest_program() -> None:
    v = dict(Drive("tlc-4k").values)
    base = worst_gc_step_us(v)
    v["tprog"] = (1200.0,)
    assert worst_gc_step_us(v) > base + 500


def test_consistency_figures() -> None:
    assert low_share([100.0] * 999 + [50.0]) == pytest.approx(50.0 / 99.95, rel=1e-3)
    assert cov_pct([1.0, 1.0, 1.0]) == 0.0
