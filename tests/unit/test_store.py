"""Results directories and atomic writes: refuse to clobber, fail early and clearly, never half-write."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ssdlab import atomic, store
from ssdlab.errors import ExitCode, ResultsDirError, StoredResultsError
from ssdlab.model import SCHEMA_VERSION, Run


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
