"""fio's version is asked once per binary and remembered across commands (runner.fio_version)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ssdlab.fio import runner


def counting_fio(path: Path, version: str) -> Path:
    """An `fio` that answers --version with `version` and appends a line to calls.txt each time it is asked."""
    path.parent.mkdir(parents=True, exist_ok=True)
    calls = path.parent / "calls.txt"
    path.write_text(f'#!/bin/sh\necho asked >> "{calls}"\necho fio-{version}\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return calls


def asked(calls: Path) -> int:
    return len(calls.read_text(encoding="utf-8").splitlines()) if calls.exists() else 0


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def test_the_version_is_asked_once_then_remembered(tmp_path: Path, cache_home: Path) -> None:
    fio = tmp_path / "bin" / "fio"
    calls = counting_fio(fio, "3.33")
    assert runner.fio_version(str(fio)) == "3.33"
    assert runner.fio_version(str(fio)) == "3.33"
    assert asked(calls) == 1
    stored = json.loads((cache_home / "ssdlab" / "fio-versions.json").read_text(encoding="utf-8"))
    assert stored[str(fio.resolve())]["version"] == "3.33"


def test_a_changed_binary_is_asked_again(tmp_path: Path, cache_home: Path) -> None:
    fio = tmp_path / "bin" / "fio"
    calls = counting_fio(fio, "3.33")
    assert runner.fio_version(str(fio)) == "3.33"
    counting_fio(fio, "3.41")  # an upgrade: another size (and modification time)
    st = fio.stat()
    os.utime(fio, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert runner.fio_version(str(fio)) == "3.41"
    assert asked(calls) == 2


def test_an_unusable_cache_only_costs_asking(tmp_path: Path, cache_home: Path) -> None:
    cache_home.mkdir()
    (cache_home / "ssdlab").write_text("not a directory", encoding="utf-8")
    fio = tmp_path / "bin" / "fio"
    calls = counting_fio(fio, "3.33")
    assert runner.fio_version(str(fio)) == "3.33"
    assert runner.fio_version(str(fio)) == "3.33"
    assert asked(calls) == 2


def test_a_corrupt_cache_is_ignored_and_replaced(tmp_path: Path, cache_home: Path) -> None:
    (cache_home / "ssdlab").mkdir(parents=True)
    (cache_home / "ssdlab" / "fio-versions.json").write_text("{torn", encoding="utf-8")
    fio = tmp_path / "bin" / "fio"
    calls = counting_fio(fio, "3.33")
    assert runner.fio_version(str(fio)) == "3.33"
    assert runner.fio_version(str(fio)) == "3.33"
    assert asked(calls) == 1


def test_a_failing_answer_is_not_remembered(tmp_path: Path, cache_home: Path) -> None:
    fio = tmp_path / "bin" / "fio"
    fio.parent.mkdir()
    fio.write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    fio.chmod(fio.stat().st_mode | stat.S_IXUSR)
    assert runner.fio_version(str(fio)) == "unknown"
    assert not (cache_home / "ssdlab" / "fio-versions.json").exists()


def test_only_the_newest_binaries_are_kept(tmp_path: Path, cache_home: Path) -> None:
    for k in range(runner.VERSION_CACHE_ENTRIES + 3):
        counting_fio(tmp_path / f"b{k}" / "fio", f"3.{k}")
        assert runner.fio_version(str(tmp_path / f"b{k}" / "fio")) == f"3.{k}"
    stored = json.loads((cache_home / "ssdlab" / "fio-versions.json").read_text(encoding="utf-8"))
    assert len(stored) == runner.VERSION_CACHE_ENTRIES
    assert str((tmp_path / f"b{runner.VERSION_CACHE_ENTRIES + 2}" / "fio").resolve()) in stored
    assert str((tmp_path / "b0" / "fio").resolve()) not in stored
