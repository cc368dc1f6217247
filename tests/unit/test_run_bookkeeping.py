"""The run loop's per-point bookkeeping keeps what it works out (PTS analyses, ETA predictions, fio options,
expanded latency bins) only as long as it is what a fresh computation would give: these tests compare the
kept answers with fresh ones while the inputs change."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pts_points import pts_context, pts_result
from ssdlab.errors import UsageError
from ssdlab.fio.job import build_job, workload_options
from ssdlab.results import atomic, hist
from ssdlab.results.bins import Bins
from ssdlab.results.model import LatencyStats, PointResult, Run, TestPoint, Workload, to_dict
from ssdlab.run.eta import Estimator
from ssdlab.suites import get_suite
from ssdlab.suites.base import Outlook, PlanContext
from ssdlab.suites.pts import common
from ssdlab.suites.pts.tests import IOPS, LAT, TP128


def _ctx(**options: Any) -> PlanContext:
    """A short PTS plan: at most 8 rounds, WSAT of 3 minutes."""
    return pts_context(**({"max_rounds": 8, "wsat_hours": 0.05} | options))


def _empty_run(c: PlanContext) -> Run:
    return Run(schema_version=2, ssdlab_version="t", run_id="t", suite="pts", status="running", created="",
               options={}, target={"kind": "file", "capacity_bytes": c.capacity}, host={})


def _fresh(test: common.RoundTest, s: common.PtsSettings, run: Run) -> common.TestState:
    return common._analyse(test, s, run.finished_by_id())


@pytest.mark.parametrize("settles_at", [1, 4])
def test_kept_pts_analyses_equal_fresh_ones_at_every_step(settles_at: int) -> None:
    """A whole synthetic `pts` run: after every point, each round test's analysis (asked twice, as the run
    loop and the ETA do) equals one worked out afresh from the run."""
    suite, c = get_suite("pts"), _ctx()
    s = common.settings(c)
    run = _empty_run(c)
    steps = 0
    while True:
        for test in (IOPS, TP128, LAT):
            assert common.analyse(test, s, run) == _fresh(test, s, run)
            assert common.analyse(test, s, run) == _fresh(test, s, run)
        pending = suite.next_points(c, run)
        if not pending:
            break
        p = pending[0]
        r = int(p.tags.get("round", 0))
        run = run.with_point(pts_result(p, 10_000.0 if r >= settles_at else 1_000.0 * r + 1))
        steps += 1
    assert steps > 50
    assert common.analyse(IOPS, s, run).steady


def test_a_changed_result_of_a_complete_round_is_analysed_again() -> None:
    """A later result of a point (a run that went on from another run, a point run again) replaces the one
    the kept analysis read: the tracking values follow it."""
    c = _ctx()
    s = common.settings(c)
    run = _empty_run(c)
    for p in common.setup_points(IOPS, s) + common.round_points(IOPS, s, 1) + common.round_points(IOPS, s, 2):
        run = run.with_point(pts_result(p, 1000.0))
    before = common.analyse(IOPS, s, run)
    assert before.rounds_done == 2
    tracked = common.round_points(IOPS, s, 1)[-1]  # RND 4 KiB 0/100 is a tracking point
    assert tracked.tags["key"] == "rnd4k-0-100"
    changed = run.with_point(pts_result(tracked, 5000.0))
    after = common.analyse(IOPS, s, changed)
    assert after == _fresh(IOPS, s, changed)
    assert after.tracking != before.tracking
    invalid = changed.with_point(pts_result(common.round_points(IOPS, s, 2)[0], 1000.0, status="invalid"))
    state = common.analyse(IOPS, s, invalid)
    assert state == _fresh(IOPS, s, invalid)
    assert state.finished
    assert state.invalid


def test_the_kept_selection_follows_changed_options() -> None:
    """FamilySuite.selected answers again for the same context only while its options are unchanged."""
    suite, c = get_suite("pts"), _ctx()
    s, _tests = suite.selected(c)  # type: ignore[attr-defined]
    assert suite.selected(c)[0] is s  # type: ignore[attr-defined]
    c.options["spec"] = "C"
    assert suite.selected(c)[0].spec == "C"  # type: ignore[attr-defined]
    c.options["tq"] = "nonsense"
    with pytest.raises(UsageError):
        suite.selected(c)  # type: ignore[attr-defined]


def test_settings_hash_is_kept_but_not_pickled() -> None:
    import pickle

    s = common.settings(_ctx())
    fields = tuple(getattr(s, f.name) for f in dataclasses.fields(s))
    assert hash(s) == hash(fields)
    copy = pickle.loads(pickle.dumps(s))  # noqa: S301 (our own bytes)
    assert copy == s
    assert "_hash" not in copy.__dict__
    assert hash(copy) == hash(s)


# ---------------------------------------------------------------- ETA predictions


def _sim_target() -> dict[str, Any]:
    return {"kind": "sim", "capacity_bytes": 1 << 31,
            "sim": {"params": {"channels": 4, "dies": 4, "planes": 4, "page": 16384, "tr": 60.0, "tprog": 600.0,
                               "fw_us": 8.0, "host_mbps": 7000.0, "ch_mbps": 1200.0, "ctrl_kiops": 1500.0}}}


def _simpts_result(p: TestPoint, ios: int, rate: float) -> PointResult:
    r = pts_result(p, 1000.0)
    if r.measurement is None:  # a purge
        return r
    m = dataclasses.replace(r.measurement, extra={"sim": {"simulated_ios": ios, "simulated_ios_per_wall_s": rate}})
    return dataclasses.replace(r, measurement=m)


def test_sim_predictions_kept_between_points_equal_those_of_a_fresh_estimator() -> None:
    c = _ctx()
    s = common.settings(c)
    points = common.plan_round_test(IOPS, s)
    outlook = Outlook(tuple((p, 3) for p in points), tuple((p, 1) for p in points))
    kept = Estimator(_sim_target())
    seen: list[tuple[PointResult, float]] = []
    for i, p in enumerate(points[:12]):
        fresh = Estimator(_sim_target())
        for result, wall in seen:
            fresh.observe(result, wall)
        assert kept.estimate(outlook) == fresh.estimate(outlook)
        assert kept.estimate(outlook) == fresh.estimate(outlook)  # asked again: the same
        result = _simpts_result(p, 100_000 * (i + 1), 2e6 + 1e5 * i)
        kept.observe(result, 0.05 + 0.01 * i)
        seen.append((result, 0.05 + 0.01 * i))
    assert kept.estimate(outlook) != Estimator(_sim_target()).estimate(outlook)


# ---------------------------------------------------------------- fio options and jobs


def test_kept_fio_options_follow_a_changed_options_dict() -> None:
    w = Workload(rw="randwrite", bs=4096, runtime_s=1.0, options={"refill_buffers": "1"})
    first = workload_options(w)
    first["bs"] = 1  # the caller's copy
    assert workload_options(w)["bs"] == 4096
    w.options["zero_buffers"] = "1"  # type: ignore[index]
    assert workload_options(w)["zero_buffers"] == "1"


def test_rendered_values_keep_their_types_apart() -> None:
    """True renders as 1 and 1.5 as 1.5, however often the same key was rendered with other types."""
    def job(value: Any) -> str:
        p = TestPoint(id="x", label="x", workload=Workload(rw="read", bs=4096, options={"direct": value}))
        return build_job(p, {"filename": "/dev/null"}).render()

    assert "direct=1\n" in job(1)
    assert "direct=0\n" in job(False)
    assert "direct=1\n" in job(True)
    assert "direct=1.5\n" in job(1.5)
    assert "direct=yes\n" in job("yes")
    with pytest.raises(UsageError):
        job("a;b")
    with pytest.raises(UsageError):
        job("a;b")  # refused every time, not only the first


# ---------------------------------------------------------------- latency histograms


def _reference_percentiles(counts: hist.Counts, ps: list[float], total: int | None = None) -> dict[float, int]:
    """hist.percentiles as it was written first (Fraction arithmetic, one search per percentile)."""
    n = int(counts.sum()) if total is None else int(total)
    if n <= 0:
        return {}
    cum = np.cumsum(counts)
    out: dict[float, int] = {}
    for p in ps:
        need = Fraction(p) / 100 * n
        threshold = -((-need.numerator) // need.denominator)
        idx = int(np.searchsorted(cum, threshold, side="left"))
        out[p] = int(hist.bucket_values()[min(idx, hist.PLAT_NR - 1)])
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, hist.PLAT_NR - 1), st.integers(0, 10**9)), max_size=60),
       st.lists(st.one_of(st.floats(0.0, 100.0, allow_nan=False), st.integers(0, 100)), max_size=15),
       st.one_of(st.none(), st.integers(0, 10**11)))
def test_percentiles_equal_the_exact_rational_rule(pairs: list[tuple[int, int]], ps: list[float],
                                                   total: int | None) -> None:
    counts = hist.counts_from_sparse(pairs)
    got = hist.percentiles(counts, ps, total=total)
    assert got == _reference_percentiles(counts, ps, total)
    assert all(type(v) is int for v in got.values())


def test_sparse_pairs_add_up_whatever_their_form() -> None:
    expected = np.zeros(hist.PLAT_NR, dtype=np.int64)
    expected[3], expected[1855] = 7, 2
    assert (hist.counts_from_sparse([(3, 5), (1855, 2), (3, 2)]) == expected).all()  # an index twice adds up
    assert (hist.counts_from_sparse([[3, 7], [1855, 2]]) == expected).all()
    assert (hist.counts_from_sparse(p for p in ((3, 7), (1855, 2))) == expected).all()  # a generator
    assert not hist.counts_from_sparse([]).any()
    with pytest.raises(ValueError):
        hist.counts_from_sparse([(1, 2, 3)])
    with pytest.raises(IndexError):
        hist.counts_from_sparse([(hist.PLAT_NR, 1)])
    assert hist.sparse(expected) == [(3, 7), (1855, 2)]
    assert all(type(i) is int and type(n) is int for i, n in hist.sparse(expected))


def test_percentiles_read_from_stored_pairs_equal_the_dense_histograms() -> None:
    from ssdlab.sim.executor import _latency, core_bins

    counts = np.zeros(hist.PLAT_NR, dtype=np.int64)
    counts[[150, 200, 900]] = [10, 80, 1]
    # the core's dense histogram as the simulator hands it over (its buckets, filed by the core)
    stats = _latency("clat", 91, 91 * 5000.0, 91 * 5000.0**2 * 2, 100, 5_000_000, core_bins(counts.tobytes()))
    ps = [0, 1, 50, 99, 99.9, 100]
    dense = hist.percentiles(counts, ps, total=91)
    assert hist.bins_percentiles(stats.bins, ps, total=91) == dense
    assert hist.bins_percentiles(stats.bins, ps, total=92) == hist.percentiles(counts, ps, total=92)  # N = sum + 1
    assert stats.percentiles(ps) == {p: stats.clamp(float(v)) for p, v in dense.items()}
    plain = LatencyStats(**{f.name: getattr(stats, f.name) for f in dataclasses.fields(stats)})
    assert plain == stats
    assert to_dict(plain) == to_dict(stats)
    assert to_dict(stats)["bins"] == [[150, 10], [200, 80], [900, 1]]
    rng = np.random.default_rng(7)
    for _ in range(50):  # random sparse histograms, given in order or not, an index twice
        idx = rng.choice(hist.PLAT_NR, size=int(rng.integers(1, 40)), replace=False)
        cnt = rng.integers(0, 1000, size=idx.size)
        pairs = list(zip(idx.tolist(), cnt.tolist(), strict=True))
        if cnt.sum() == 0:
            continue
        for form in (sorted(pairs), pairs, pairs + pairs[:1]):
            want = hist.percentiles(hist.counts_from_sparse(form), ps)
            assert hist.bins_percentiles(Bins.of(form), ps) == want
    odd = dataclasses.replace(plain, bins=((1, 2), [3, 4], (5, 6)))  # a list among tuples: held alike
    assert to_dict(odd)["bins"] == [[1, 2], [3, 4], [5, 6]]
    assert odd.bins == ((1, 2), (3, 4), (5, 6))
    assert odd.bins == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(ValueError):
        Bins.of([(1, 2, 3)])


# ---------------------------------------------------------------- files


def test_atomic_write_makes_a_missing_directory_and_refuses_a_file_as_one(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "x.json"
    atomic.write_text(target, "one", durable=False)
    atomic.write_text(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]  # no temp file left
    (tmp_path / "file").write_text("")
    with pytest.raises(FileExistsError):  # as before: the directory cannot be made
        atomic.write_text(tmp_path / "file" / "x.json", "three")


def test_atomic_write_goes_on_when_its_temporary_name_is_taken(tmp_path: Path) -> None:
    """A leftover temporary file of this process's name (a crash of an earlier process with the same id) is
    neither used nor removed: the write takes another name."""
    import os

    target = tmp_path / "run.json"
    stale = tmp_path / f".run.json.{os.getpid()}.tmp"
    stale.write_text("stale")
    atomic.write_text(target, "fresh")
    assert target.read_text() == "fresh"
    assert stale.read_text() == "stale"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([stale.name, "run.json"])
    assert oct(target.stat().st_mode & 0o777) == oct(0o600)  # as tempfile.mkstemp makes them
