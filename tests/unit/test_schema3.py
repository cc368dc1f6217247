"""Results schema 3: a point's per-device results live in its directory, its record keeps the aggregate and a
reference; runs of schema 1 and 2 (per-device results inline) load, render and are upgraded without a change
in what they say."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from ssdlab.errors import ExitCode, StoredResultsError
from ssdlab.results import store
from ssdlab.results.bins import Bins
from ssdlab.results.model import SCHEMA_VERSION, PointResult, StoredParts, run_from_dict, to_dict
from stored_runs import RUNS_DIR

QUICK = RUNS_DIR / "schema3" / "quick-2file"
KILLED = RUNS_DIR / "schema3" / "sweep-2file-killed"


def as_schema2(src: Path, dst: Path) -> Path:
    """The run at `src` written as schema 2 wrote it: every device's result inline, no parts files."""
    run = store.load_run(src)
    doc = to_dict(run)
    doc["schema_version"] = 2
    dst.mkdir()
    (dst / store.RUN_FILE).write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return dst


def multi(run_points: tuple[PointResult, ...]) -> list[PointResult]:
    return [p for p in run_points if p.measurement is not None and p.measurement.parts]


def test_a_record_refers_to_its_devices_file_and_holds_their_names_only() -> None:
    run = store.load_run(QUICK)
    points = multi(run.points)
    assert len(points) == len(run.points) >= 8
    for p in points:
        assert p.measurement is not None
        parts = p.measurement.parts
        assert isinstance(parts, StoredParts)
        assert parts.path == QUICK / "points" / p.point.id / "parts.json"
        assert [h.device for h in parts.heads] == [part.device for part in parts]  # heads: names, no reads
        assert all(h.measurement is None for h in parts.heads)
        assert all(part.measurement is not None for part in parts)
    heads = {id(p.measurement.parts.heads) for p in points if isinstance(p.measurement.parts, StoredParts)}  # type: ignore[union-attr]
    assert len(heads) == 1  # one device list held for the whole run
    record = json.loads((QUICK / store.RUN_FILE).read_text(encoding="utf-8"))["points"][1]
    assert record["measurement"]["parts"]["file"] == "parts.json"
    assert [d["device"] for d in record["measurement"]["parts"]["devices"]] == ["/tmp/wt27/fx/a.dat",
                                                                               "/tmp/wt27/fx/b.dat"]


def test_the_aggregate_is_the_exact_sum_of_the_stored_devices() -> None:
    for p in multi(store.load_run(QUICK).points):
        m = p.measurement
        assert m is not None
        for name, d in m.directions.items():
            per = [part.measurement.directions[name] for part in m.parts if part.measurement is not None]
            assert d.total_ios == sum(x.total_ios for x in per)
            if d.clat is not None and d.clat.bins:
                summed: dict[int, int] = {}
                for x in per:
                    assert x.clat is not None
                    for i, c in x.clat.bins:
                        summed[i] = summed.get(i, 0) + c
                assert dict(d.clat.bins) == summed


@pytest.mark.parametrize("src", [QUICK, KILLED], ids=lambda p: p.name)
def test_a_schema_2_run_upgrades_to_3_and_says_the_same(src: Path, tmp_path: Path) -> None:
    old = as_schema2(src, tmp_path / "old")
    before = store.load_run(old)
    assert before.schema_version == 2
    assert all(type(p.measurement.parts) is tuple for p in multi(before.points))  # type: ignore[union-attr]
    res = run_cli("report", old)
    page_before = (old / "report.html").read_text(encoding="utf-8")
    csv_before = run_cli("export", old).out
    upgraded = store.upgrade(old)
    assert upgraded.schema_version == SCHEMA_VERSION
    doc = json.loads((old / store.RUN_FILE).read_text(encoding="utf-8"))
    assert doc["schema_version"] == SCHEMA_VERSION
    assert all(isinstance(p["measurement"]["parts"], dict) for p in doc["points"]
               if p.get("measurement") and p["measurement"].get("parts"))
    assert to_dict(dataclasses.replace(upgraded, schema_version=2)) == to_dict(before)  # the same results
    (old / "report.html").unlink()
    again = run_cli("report", old)
    assert again.code == res.code
    page = (old / "report.html").read_text(encoding="utf-8")
    assert page.count("(schema 3)") == page_before.count("(schema 2)") == 1  # the page names the schema read
    assert page == page_before.replace("(schema 2)", "(schema 3)")
    assert run_cli("export", old).out == csv_before


def test_a_later_attempt_of_a_point_keeps_its_own_devices_file(tmp_path: Path) -> None:
    run = store.load_run(QUICK)
    first = multi(run.points)[1]
    inline = run_from_dict({**to_dict(dataclasses.replace(run, points=(first,))), "schema_version": 2}).points[0]
    again = dataclasses.replace(inline, attempt=2)
    a = store.append_point(tmp_path, dataclasses.replace(inline, status="invalid"))
    b = store.append_point(tmp_path, again)
    assert a.measurement is not None
    assert b.measurement is not None
    pa, pb = a.measurement.parts, b.measurement.parts
    assert isinstance(pa, StoredParts)
    assert isinstance(pb, StoredParts)
    assert pa.path is not None
    assert pb.path is not None
    assert pa.path.name == "parts.json"
    assert pb.path.name == "parts-2-ok.json"
    assert tuple(pa) == tuple(pb) == tuple(inline.measurement.parts)  # type: ignore[union-attr]


def test_a_missing_devices_file_is_a_stored_results_error(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(QUICK, run_dir)
    (run_dir / "points" / "02-seq1m-q1t1-read" / "parts.json").unlink()
    run = store.load_run(run_dir)  # loading reads no device file
    point = next(p for p in run.points if p.point.id == "02-seq1m-q1t1-read")
    assert point.measurement is not None
    with pytest.raises(StoredResultsError, match=r"parts\.json"):
        list(point.measurement.parts)


@pytest.mark.parametrize("name", ["../x.json", "", "a/b.json", ".."])
def test_a_devices_file_outside_the_point_directory_is_refused(name: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(QUICK, run_dir)
    path = run_dir / store.RUN_FILE
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["points"][1]["measurement"]["parts"]["file"] = name
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(StoredResultsError):
        store.load_run(run_dir)


def test_compact_bins_read_and_compare_as_the_pairs_they_hold() -> None:
    pairs = ((3, 7), (10, 1), (1855, 2))
    bins = Bins.of(pairs)
    assert bins == pairs
    assert bins == [list(p) for p in pairs]
    assert tuple(bins) == pairs
    assert len(bins) == 3
    assert bins[-1] == (1855, 2)
    assert bins[1:] == pairs[1:]
    assert hash(bins) == hash(pairs)
    assert bins.to_json() == [[3, 7], [10, 1], [1855, 2]]
    assert not Bins.of(())
    assert Bins.of([]) == ()
    with pytest.raises(IndexError):
        bins[3]


@pytest.mark.parametrize(("change", "field"), [
    (lambda ref: ref.update(devices="a.dat"), "points[1].measurement.parts"),
    (lambda ref: ref.update(devices=[{"host": ""}]), "points[1].measurement.parts.device"),
    (lambda ref: ref.pop("file"), "points[1].measurement.parts.file"),
])
def test_a_malformed_reference_is_one_line_naming_run_json_and_the_field(change: Any, field: str,
                                                                        tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(QUICK, run_dir)
    path = run_dir / store.RUN_FILE
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc["points"][1]["measurement"]["parts"])
    path.write_text(json.dumps(doc), encoding="utf-8")
    res = run_cli("report", run_dir, traceback=False)
    assert res.code == ExitCode.STORED, res.err
    assert len(res.err.strip().splitlines()) == 1
    assert f"{path}: {field}" in res.err


def test_a_malformed_devices_file_is_one_line_naming_it_and_the_field(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(QUICK, run_dir)
    parts = run_dir / "points" / "02-seq1m-q1t1-read" / "parts.json"
    data = json.loads(parts.read_text(encoding="utf-8"))
    data[1]["measurement"]["directions"]["read"]["iops"] = "fast"
    parts.write_text(json.dumps(data), encoding="utf-8")
    run = store.load_run(run_dir)  # run.json itself is sound
    point = next(p for p in run.points if p.point.id == "02-seq1m-q1t1-read")
    assert point.measurement is not None
    with pytest.raises(StoredResultsError, match=r"parts\.json: \[1\]\.measurement\.directions\.read\.iops: "):
        list(point.measurement.parts)
    res = run_cli("report", run_dir, traceback=False)  # the report reads every device
    assert res.code == ExitCode.STORED, res.err
    assert len(res.err.strip().splitlines()) == 1
    assert str(parts) in res.err


def test_a_point_id_that_is_not_a_plain_name_never_reaches_outside_the_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(QUICK, run_dir)
    path = run_dir / store.RUN_FILE
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["points"][1]["point"]["id"] = "../../elsewhere"
    path.write_text(json.dumps(doc), encoding="utf-8")
    point = store.load_run(run_dir).points[1]
    assert point.measurement is not None
    assert isinstance(point.measurement.parts, StoredParts)
    assert point.measurement.parts.path is None
    with pytest.raises(StoredResultsError, match="not available"):
        list(point.measurement.parts)
