"""Results directories and atomic writes: refuse to clobber, fail early and clearly, never half-write."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
from pathlib import Path

import pytest

from ssdlab.errors import ExitCode, ResultsDirError, StoredResultsError
from ssdlab.results import atomic, store
from ssdlab.results.model import (
    SCHEMA_VERSION,
    DirectionStats,
    Measurement,
    PointResult,
    Run,
    TestPoint,
    Workload,
    to_dict,
)


def tiny_run(status: str = "running") -> Run:
    """A run without points, enough for save/load."""
    return Run(schema_version=SCHEMA_VERSION, ssdlab_version="0.1.0", run_id="r", suite="quick",
               status=status, created="2026-11-21T00:00:00+00:00", options={}, target={}, host={})  # type: ignore[arg-type]


def leftovers(directory: Path) -> list[str]:
    """Temporary files an atomic write may have left behind."""
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_atomic_write_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "run.json"
    atomic.write_text(target, "first")
    atomic.write_text(target, "second")
    assert target.read_text(encoding="utf-8") == "second"
    assert leftovers(target.parent) == []


def test_failed_write_keeps_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "run.json"
    atomic.write_text(target, "good")

    def broken_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(ResultsDirError, match="cannot write") as info:
        atomic.write_text(target, "partial")
    assert info.value.exit_code == ExitCode.RESULTS
    assert target.read_text(encoding="utf-8") == "good"
    assert leftovers(tmp_path) == []


def test_disk_full_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(ResultsDirError, match="no space left"):
        atomic.write_text(tmp_path / "run.json", "x")
    assert leftovers(tmp_path) == []


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    run = tiny_run()
    store.save_run(tmp_path, run)
    assert store.load_run(tmp_path) == run
    assert store.load_run(tmp_path / store.RUN_FILE) == run
    store.save_run(tmp_path, run.with_status("complete"))
    assert store.load_run(tmp_path).status == "complete"
    assert leftovers(tmp_path) == []


def test_run_dir_is_made_with_parents_and_an_empty_one_reused(tmp_path: Path) -> None:
    out = store.create_run_dir(tmp_path / "a" / "b")
    assert out.is_dir()
    assert list(out.iterdir()) == []  # the write probe is removed
    assert store.create_run_dir(out) == out


def test_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ResultsDirError, match="not empty: choose another --out or pass --force"):
        store.create_run_dir(tmp_path)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_refuses_a_directory_holding_a_run_and_points_to_resume(tmp_path: Path) -> None:
    store.save_run(tmp_path, tiny_run())
    with pytest.raises(ResultsDirError, match="already holds a run: use `ssdlab resume"):
        store.create_run_dir(tmp_path)


def test_force_reuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "old").write_text("x", encoding="utf-8")
    assert store.create_run_dir(tmp_path, force=True) == tmp_path


def test_refuses_a_file_as_results_directory(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x", encoding="utf-8")
    with pytest.raises(ResultsDirError, match="not a directory"):
        store.create_run_dir(f)


def test_unwritable_location_fails_up_front(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    for place in (blocker / "results", Path("/proc/ssdlab-test-results")):
        with pytest.raises(ResultsDirError, match="not writable") as info:
            store.create_run_dir(place)
        assert "\n" not in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_directory_fails_up_front(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(ResultsDirError, match="not writable"):
            store.create_run_dir(ro / "results")
    finally:
        ro.chmod(0o700)


def test_load_errors_are_stored_results_errors(tmp_path: Path) -> None:
    with pytest.raises(StoredResultsError, match=r"no run\.json"):
        store.load_run(tmp_path)
    (tmp_path / "run.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StoredResultsError, match="cannot read"):
        store.load_run(tmp_path)
    (tmp_path / "run.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(StoredResultsError, match="does not hold a run"):
        store.load_run(tmp_path)


def test_default_run_dir_is_timestamped_and_slugged() -> None:
    path = store.default_run_dir("four-corners", "/dev/disk/by-id/nvme-Samsung SSD 990")
    assert path.parent == Path("results")
    stamp, rest = path.name[:15], path.name[16:]
    assert stamp[8] == "-"
    assert stamp.replace("-", "").isdigit()
    assert rest.startswith("four-corners-")
    assert " " not in rest
    assert "/" not in rest


# ---------------------------------------------------------------- the points log and its folding into run.json

def point(i: int, status: str = "ok", attempt: int = 1) -> PointResult:
    """A small finished point result."""
    d = DirectionStats(iops=1000.0 + i, bw_bytes=4096e3, io_bytes=4096, total_ios=1, runtime_ms=1000)
    m = Measurement(engine="fake", engine_version="0", directions={"read": d}) if status == "ok" else None
    return PointResult(point=TestPoint(id=f"p{i}", label=f"P{i}", workload=Workload(rw="read", bs=4096)),
                       status=status, started=f"2026-11-21T00:00:0{i}+00:00", finished="", measurement=m,
                       reason="" if status == "ok" else "boom", attempt=attempt)  # type: ignore[arg-type]


def log_lines(run_dir: Path) -> list[str]:
    return (run_dir / store.LOG_FILE).read_text(encoding="utf-8").splitlines()


def test_points_are_appended_to_the_log_and_folded_into_run_json(tmp_path: Path) -> None:
    run = tiny_run()
    store.save_run(tmp_path, run)
    head = (tmp_path / store.RUN_FILE).read_bytes()
    for i in (1, 2, 3):
        run = run.with_point(point(i))
        store.append_point(tmp_path, point(i))
        assert (tmp_path / store.RUN_FILE).read_bytes() == head  # run.json is not rewritten per point
        assert len(log_lines(tmp_path)) == i  # one record per point
        assert store.load_run(tmp_path) == run
    store.save_run(tmp_path, run.with_status("complete"))
    assert not (tmp_path / store.LOG_FILE).exists()
    data = json.loads((tmp_path / store.RUN_FILE).read_text(encoding="utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION == 3
    assert [p["point"]["id"] for p in data["points"]] == ["p1", "p2", "p3"]
    assert store.load_run(tmp_path) == run.with_status("complete")
    assert leftovers(tmp_path) == []


def test_a_torn_last_record_is_ignored_and_cut_before_the_next_append(tmp_path: Path) -> None:
    run = tiny_run()
    store.save_run(tmp_path, run)
    for i in (1, 2):
        store.append_point(tmp_path, point(i))
        run = run.with_point(point(i))
    whole = json.dumps(to_dict(point(3)))
    for torn in (whole[:40], whole, "\0" * 30):  # cut mid-record, without its newline, zero-filled block
        with (tmp_path / store.LOG_FILE).open("a", encoding="utf-8") as fh:
            fh.write(torn)
        assert store.load_run(tmp_path) == run  # the two complete points, nothing of the torn third
        store.append_point(tmp_path, point(3))  # e.g. `ssdlab resume` runs the point again
        assert store.load_run(tmp_path) == run.with_point(point(3))
        assert [json.loads(x)["point"]["id"] for x in log_lines(tmp_path)] == ["p1", "p2", "p3"]
        store.save_run(tmp_path, run)  # back to two points for the next case
        for i in (1, 2):
            store.append_point(tmp_path, point(i))


def test_a_crash_while_folding_does_not_duplicate_points(tmp_path: Path) -> None:
    run = tiny_run()
    store.save_run(tmp_path, run)
    for i in (1, 2):
        store.append_point(tmp_path, point(i))
        run = run.with_point(point(i))
    log = (tmp_path / store.LOG_FILE).read_bytes()
    store.save_run(tmp_path, run)  # folds the log ...
    (tmp_path / store.LOG_FILE).write_bytes(log)  # ... but "crashed" before removing it
    assert store.load_run(tmp_path) == run


def test_a_failed_attempt_in_the_log_is_replaced_by_the_later_one(tmp_path: Path) -> None:
    store.save_run(tmp_path, tiny_run())
    store.append_point(tmp_path, point(1, "failed"))
    store.append_point(tmp_path, point(1, "ok", attempt=2))
    loaded = store.load_run(tmp_path)
    assert [(p.point.id, p.status, p.attempt) for p in loaded.points] == [("p1", "ok", 2)]


def test_damage_before_complete_records_is_an_error(tmp_path: Path) -> None:
    store.save_run(tmp_path, tiny_run())
    store.append_point(tmp_path, point(1))
    with (tmp_path / store.LOG_FILE).open("a", encoding="utf-8") as fh:
        fh.write("garbage\n")
    store.append_point(tmp_path, point(2))
    with pytest.raises(StoredResultsError, match="damaged at line 2") as info:
        store.load_run(tmp_path)
    assert info.value.exit_code == ExitCode.STORED


def test_a_schema_1_run_json_loads_and_is_rewritten_as_the_current_schema(tmp_path: Path) -> None:
    run = tiny_run().with_point(point(1))
    data = to_dict(dataclasses.replace(run, schema_version=1))
    (tmp_path / store.RUN_FILE).write_text(json.dumps(data, indent=1), encoding="utf-8")  # as ssdlab 0.1 wrote it
    loaded = store.load_run(tmp_path)
    assert loaded.schema_version == 1
    assert loaded.points == run.points
    store.save_run(tmp_path, loaded)
    assert json.loads((tmp_path / store.RUN_FILE).read_text(encoding="utf-8"))["schema_version"] == SCHEMA_VERSION
    assert store.load_run(tmp_path).points == run.points
