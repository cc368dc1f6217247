"""The result model: JSON round trip, schema_version checks, small derived properties."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ssdlab.errors import ExitCode, StoredResultsError
from ssdlab.fio.parse import parse_measurement
from ssdlab.results.model import (
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    PointResult,
    Run,
    TestPoint,
    Workload,
    percentile_key,
    run_from_dict,
    to_dict,
)


def make_run(golden: Callable[[str], Path]) -> Run:
    """A run with two real measurements (from golden fio output), a skipped point and some history."""
    m1 = parse_measurement(golden("null-randrw-2jobs.json").read_text(encoding="utf-8"))
    m1 = dataclasses.replace(m1, series={"time_s": [1.0, 2.0], "read_iops": [10.0, 12.5]},
                             extra={"wall_s": 1.234, "hist_logs": ["a.log"]})
    m2 = parse_measurement(golden("file-randrw-plain.json").read_text(encoding="utf-8"))
    w = Workload(rw="randrw", bs=4096, iodepth=4, numjobs=2, rwmixread=70, runtime_s=1.0, ramp_s=0.5,
                 options={"thinktime": "5"}, log_interval_ms=500)
    p1 = TestPoint(id="01-a", label="A", workload=w, group="g", tags={"direction": "mixed", "round": 3})
    p2 = TestPoint(id="02-b", label="B", workload=Workload(rw="read", bs=1 << 20, io_bytes=1 << 30),
                   phase="precondition")
    p3 = TestPoint(id="03-c", label="C", workload=Workload(rw="randread", bs=512))
    return Run(
        schema_version=SCHEMA_VERSION, ssdlab_version="0.1.0", run_id="r1", suite="quick", status="complete",
        created="2026-11-21T00:00:00+00:00", options={"runtime_s": 1.0, "target_specs": ["null"]},
        target={"kind": "null", "capacity_bytes": 1 << 30}, host={"kernel": "6.1", "cpu_count": 2},
        points=(
            PointResult(point=p1, status="ok", started="t0", finished="t1", measurement=m1,
                        warnings=("cpu bound",)),
            PointResult(point=p2, status="ok", started="t1", finished="t2", measurement=m2, attempt=2),
            PointResult(point=p3, status="skipped", started="t2", finished="t2", reason="bs too small"),
        ),
        finished="2026-11-21T00:01:00+00:00", warnings=("w",),
        events=({"kind": "resume", "points_done": 1},),
    )


def test_round_trip_through_json_is_lossless(golden: Callable[[str], Path]) -> None:
    run = make_run(golden)
    text = json.dumps(to_dict(run))
    back = run_from_dict(json.loads(text))
    assert back == run
    assert to_dict(back) == to_dict(run)


def test_bins_survive_the_round_trip_and_give_the_same_percentiles(golden: Callable[[str], Path]) -> None:
    run = make_run(golden)
    back = run_from_dict(json.loads(json.dumps(to_dict(run))))
    m_in, m_out = run.points[0].measurement, back.points[0].measurement
    assert m_in is not None
    assert m_out is not None
    clat_in, clat_out = m_in.directions["read"].clat, m_out.directions["read"].clat
    assert clat_in is not None
    assert clat_out is not None
    assert clat_out.bins == clat_in.bins
    assert len(clat_out.bins) > 10
    for p in (50, 99, 99.99):
        assert clat_out.percentile(p) == clat_in.percentile(p) == clat_in.percentiles_ns[percentile_key(p)]


@pytest.mark.parametrize("version", [None, 0, SCHEMA_VERSION + 1, "1", 99])
def test_unknown_schema_version_is_a_clear_stored_results_error(golden: Callable[[str], Path],
                                                               version: object) -> None:
    data = to_dict(make_run(golden))
    if version is None:
        del data["schema_version"]
    else:
        data["schema_version"] = version
    with pytest.raises(StoredResultsError) as info:
        run_from_dict(data)
    text = str(info.value)
    assert f"schema {version!r} is not supported" in text
    assert "reads schema " + ", ".join(map(str, READABLE_VERSIONS)) in text
    assert "\n" not in text
    assert info.value.exit_code == ExitCode.STORED


@pytest.mark.parametrize("drop", ["run_id", "suite", "status", "created", "ssdlab_version"])
def test_missing_required_field_is_a_stored_results_error(golden: Callable[[str], Path], drop: str) -> None:
    data = to_dict(make_run(golden))
    del data[drop]
    with pytest.raises(StoredResultsError, match="malformed"):
        run_from_dict(data)


def test_malformed_point_is_a_stored_results_error(golden: Callable[[str], Path]) -> None:
    data = to_dict(make_run(golden))
    del data["points"][0]["point"]["workload"]["rw"]
    with pytest.raises(StoredResultsError, match="malformed"):
        run_from_dict(data)


def test_with_point_replaces_an_unfinished_attempt_but_keeps_ok_points(golden: Callable[[str], Path]) -> None:
    run = make_run(golden)
    p3 = run.points[2].point
    failed = PointResult(point=p3, status="failed", started="a", finished="b", reason="fio failed")
    run = dataclasses.replace(run, points=run.points[:2]).with_point(failed)
    assert [p.status for p in run.points] == ["ok", "ok", "failed"]
    retried = PointResult(point=p3, status="ok", started="c", finished="d", attempt=2)
    run = run.with_point(retried)
    assert [p.status for p in run.points] == ["ok", "ok", "ok"]
    assert run.result("03-c") == retried
    assert run.done_ids() == {"01-a", "02-b", "03-c"}
    assert run.with_warning("x").with_warning("x").warnings == ("w", "x")


@pytest.mark.parametrize(("rw", "mix", "writes"), [
    ("read", None, False), ("randread", None, False), ("write", None, True), ("randwrite", None, True),
    ("trim", None, True), ("randrw", None, True), ("randrw", 100, False), ("rw", 70, True),
])
def test_workload_writes(rw: str, mix: int | None, writes: bool) -> None:
    assert Workload(rw=rw, bs=4096, rwmixread=mix).writes is writes


def test_derived_values() -> None:
    w = Workload(rw="randread", bs=4096, iodepth=8, numjobs=4, runtime_s=10, ramp_s=2)
    assert w.outstanding == 32
    assert w.is_random
    assert TestPoint(id="x", label="x", workload=w).est_seconds == 12
    assert TestPoint(id="y", label="y", workload=Workload(rw="read", bs=1 << 20, io_bytes=1)).est_seconds == 0


@pytest.mark.parametrize(("p", "key"), [(50, "50"), (99.99, "99.99"), (99.999, "99.999"), (99.5, "99.5"),
                                        (1.0, "1")])
def test_percentile_key(p: float, key: str) -> None:
    assert percentile_key(p) == key
