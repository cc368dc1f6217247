"""atomic: deferred durability (make_durable) flushes every file and each directory once, and maps a full disk
to the results-directory error every other write gives."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ssdlab.errors import ResultsDirError
from ssdlab.results import atomic


def fsynced(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record the path behind every descriptor os.fsync is given."""
    seen: list[Path] = []
    real = os.fsync

    def spy(fd: int) -> None:
        seen.append(Path(f"/proc/self/fd/{fd}").readlink())
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return seen


def test_files_then_each_directory_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "p" / "job.fio", tmp_path / "p" / "cmd.txt"
    atomic.write_text(a, "[job]\n", durable=False)
    atomic.write_text(b, "fio job.fio\n", durable=False)
    seen = fsynced(monkeypatch)
    atomic.make_durable([a, b])
    assert seen == [a, b, tmp_path / "p"]
    assert a.read_text(encoding="utf-8") == "[job]\n"


def test_non_durable_writes_do_not_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = fsynced(monkeypatch)
    atomic.write_text(tmp_path / "x", "1", durable=False)
    assert seen == []
    atomic.write_text(tmp_path / "y", "2")  # the temp file before its rename, then the directory
    assert [p.name.startswith(".y.") for p in seen] == [True, False]
    assert seen[1] == tmp_path


def test_a_full_disk_is_a_results_dir_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "fio.json"
    atomic.write_text(path, "{}", durable=False)

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(ResultsDirError, match=r"no space left to write .*fio\.json: free space and run `ssdlab"):
        atomic.make_durable([path])


def test_a_vanished_file_is_a_results_dir_error(tmp_path: Path) -> None:
    with pytest.raises(ResultsDirError, match=r"cannot write .*gone"):
        atomic.make_durable([tmp_path / "gone"])


def test_background_flushes_keep_their_order_and_end_when_idle(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    files = [tmp_path / "p" / name for name in ("job.fio", "fio.json", "points.jsonl")]
    for f in files:
        atomic.write_text(f, f.name, durable=False)
    seen = fsynced(monkeypatch)
    before = threading.active_count()
    atomic.flush_later([files[0], files[1], tmp_path / "p"])  # a point's artefacts and their directory
    atomic.flush_later([files[2]])  # then its record
    atomic.flush_later([files[0]])  # a path handed again moves to its latest place
    atomic.wait_flushed()
    assert set(seen) == {*files, tmp_path / "p"}
    assert seen.index(files[1]) < seen.index(tmp_path / "p") < seen.index(files[2])
    assert seen.count(files[1]) == 1
    assert threading.active_count() == before  # no thread left behind (the report's chart workers fork)


def test_a_background_flush_error_is_raised_by_the_wait(tmp_path: Path) -> None:
    atomic.flush_later([tmp_path / "gone"])
    with pytest.raises(ResultsDirError, match=r"cannot write .*gone"):
        atomic.wait_flushed()
    atomic.wait_flushed()  # raised once
