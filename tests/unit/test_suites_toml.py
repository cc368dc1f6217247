"""TOML suites: matrix expansion, overrides, phases, adaptive curve points, user files and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.errors import UsageError
from ssdlab.results.model import Measurement, PointResult, Run, TestPoint
from ssdlab.suites import get_suite
from ssdlab.suites.base import PlanContext
from ssdlab.suites.characterization import builtin_suites
from ssdlab.suites.toml_suite import load_file, load_toml_text

DATA = Path(__file__).parent.parent / "data" / "suites"
CTX = PlanContext(capacity=1 << 30)
NAMES = {"sweep-bs", "sweep-qd", "stability", "lat-curve", "iorate-curve", "app-oracle", "app-sql", "app-vdi",
         "app-vsi", "iometer-fileserver", "iometer-webserver", "iometer-database", "iometer-workstation",
         "p5430-iorate"}


def _run(*results: PointResult) -> Run:
    run = Run(schema_version=1, ssdlab_version="t", run_id="r", suite="s", status="running", created="",
              options={}, target={}, host={})
    for r in results:
        run = run.with_point(r)
    return run


def _result(point: TestPoint, status: str = "ok", reason: str = "") -> PointResult:
    m = Measurement(engine="fio", engine_version="3.33", directions={}) if status == "ok" else None
    return PointResult(point=point, status=status, started="", finished="", measurement=m,  # type: ignore[arg-type]
                       reason=reason)


def test_every_builtin_suite_is_registered_and_plans() -> None:
    suites = {s.name: s for s in builtin_suites()}
    assert set(suites) == NAMES
    for name in NAMES:
        assert get_suite(name) is not None
        points = suites[name].plan(CTX)
        assert points
        assert len({p.id for p in points}) == len(points)
        assert all(p.tags["family"] == "characterization" for p in points)


def test_sweep_bs_covers_512_to_1m_in_four_matrices() -> None:
    points = get_suite("sweep-bs").plan(CTX)
    assert len(points) == 48
    assert [p.workload.bs for p in points[:12]] == [512 << i for i in range(12)]
    assert [p.tags["matrix"] for p in points[::12]] == ["seq-read", "rnd-read", "seq-write", "rnd-write"]


def test_axes_expand_in_file_order_first_outermost() -> None:
    points = get_suite("lat-curve").plan(CTX)
    assert len(points) == 2 * 3 * 3 * 8
    first = [(p.workload.bs, p.workload.rwmixread, p.workload.numjobs, p.workload.iodepth) for p in points[:9]]
    assert first[:8] == [(4096, 100, 1, q) for q in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert first[8] == (4096, 100, 2, 1)


def test_axis_override_thins_and_curve_option_replaces_percentages() -> None:
    ctx = PlanContext(capacity=1 << 30, options={"axis": ["numjobs=1,4", "iodepth=1..8"], "curve": "25,100"})
    points = get_suite("sweep-qd").plan(ctx)
    assert {(p.workload.numjobs, p.workload.iodepth) for p in points} == {(t, q) for t in (1, 4) for q in (1, 2, 4, 8)}
    curve = get_suite("iorate-curve").plan(ctx)
    assert [p.tags["rate"] for p in curve[:3]] == ["max", "25%", "100%"]


def test_axis_override_for_an_axis_no_matrix_has_is_refused() -> None:
    ctx = PlanContext(capacity=1 << 30, options={"axis": ["rwmixread=50"]})
    with pytest.raises(UsageError, match="no matrix of sweep-bs sweeps rwmixread"):
        get_suite("sweep-bs").plan(ctx)
    with pytest.raises(UsageError, match="NAME=V1,V2"):
        get_suite("sweep-bs").plan(PlanContext(capacity=1, options={"axis": ["bs"]}))


def test_matrices_option_selects() -> None:
    ctx = PlanContext(capacity=1 << 30, options={"matrices": "rnd-write"})
    assert {p.tags["matrix"] for p in get_suite("sweep-bs").plan(ctx)} == {"rnd-write"}


def test_curve_points_wait_for_their_max_and_take_its_rate() -> None:
    suite = get_suite("iorate-curve")
    ctx = PlanContext(capacity=1 << 30, options={"matrices": "rnd-read", "curve": "50"})
    plan = suite.plan(ctx)
    assert [p.id for p in suite.next_points(ctx, _run())] == [p.id for p in plan]
    assert "rate_iops" not in plan[1].workload.options  # unknown until the max has run
    done = _run(_result(plan[0]))
    nxt = suite.next_points(ctx, done)
    assert [p.id for p in nxt] == [plan[1].id]
    # a max run that measured nothing: vdbench assumes 10000 IOPS; 50 % -> 5000 over 8 jobs
    assert nxt[0].tags["target_iops"] == 5000
    assert nxt[0].workload.options["rate_iops"] == "625"
    assert "vdbench" in nxt[0].tags["rate_note"]


def test_curve_points_of_a_skipped_max_are_dropped_with_a_warning() -> None:
    suite = get_suite("app-vdi")
    plan = suite.plan(CTX)
    run = _run(_result(plan[0], "skipped", "block size too small"))
    assert suite.next_points(CTX, run) == []
    concluded = suite.conclude(CTX, run)
    assert len(concluded.warnings) == 6
    assert "uncapped max run was skipped (block size too small)" in concluded.warnings[0]


def test_phases_run_first_and_size_based_phases_cover_the_active_range() -> None:
    suite = load_file(DATA / "user-matrix.toml")
    assert suite.name == str((DATA / "user-matrix.toml").resolve())
    assert suite.title == "user-matrix"
    assert suite.writes
    points = suite.plan(PlanContext(capacity=256 << 20))
    assert points[0].phase == "precondition"
    assert points[0].workload.io_bytes == 256 << 20
    assert points[0].workload.log_interval_ms == 1000
    assert len(points) == 1 + 2 * 2 * 2
    assert get_suite(str(DATA / "user-matrix.toml")).title == "user-matrix"


def test_phase_time_option_shortens_time_based_phases() -> None:
    suite = get_suite("p5430-iorate")
    points = suite.plan(PlanContext(capacity=1 << 30))
    assert [p.workload.runtime_s for p in points[:2]] == [7200, 28800]
    short = suite.plan(PlanContext(capacity=1 << 30, options={"phase_time": 5.0}))
    assert [p.workload.runtime_s for p in short[:2]] == [5.0, 5.0]
    assert {o.name for o in suite.suite_options()} >= {"axis", "curve", "phase-time", "matrices"}


@pytest.mark.parametrize(("text", "message"), [
    ("name = 'x'\n", "at least one"),
    ("summary = 'no name'\n[[matrix]]\nrw='read'\nbs='4k'\n", "needs name"),
    ("name='x'\ncolour='red'\n[[matrix]]\nrw='read'\nbs='4k'\n", "unknown key"),
    ("name='x'\n[[matrix]]\nrw='read'\nbs='4k'\nrate=['50%']\n", "no \"max\""),
    ("name='x'\n[[matrix]]\nrw='sideways'\nbs='4k'\n", "unknown rw"),
    ("name='x'\n[[matrix]]\nrw='read'\nbs='4k'\nqd=4\n", "unknown key"),
    ("name='x'\n[[matrix]]\nrw='read'\nbs='4k'\nview='pie'\n", "unknown view"),
    ("name='x'\n[[matrix]]\nrw='read'\n", "needs bs"),
    ("name='x'\n[[phase]]\nrw='write'\nbs='1m'\n[[matrix]]\nrw='read'\nbs='4k'\n", "exactly one of"),
    ("name='x'\n[[matrix]]\nrw='read'\nbs='4k'\niodepth='8..1'\n", "bad range"),
    ("name = \n", "not valid TOML"),
])
def test_bad_suite_files_are_one_line_usage_errors(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load_toml_text(text, "my.toml")


def test_missing_suite_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        get_suite(str(tmp_path / "nope.toml"))
