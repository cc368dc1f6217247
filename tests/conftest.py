"""Shared test fixtures and markers for the ssdlab test suite.

Markers (registered in pyproject.toml or here):
  integration    runs real fio; skipped with a clear reason when fio is not on PATH.
  fio_available  the same skip for any test that needs the fio binary (use when a test is not "integration").
  root           needs root (loop devices, mounts); skipped otherwise.

Fixtures:
  cli                in-process CLI runner: cli("run", "quick", ...) -> CliResult(code, out, err).
  small_file_target  a target spec for a small (64 MiB) file under tmp_path.
  golden             path of a golden fio output under tests/data/fio/3.33/.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ssdlab.cli import Env, main

DATA_DIR = Path(__file__).parent / "data"
GOLDEN_DIR = DATA_DIR / "fio" / "3.33"
FIO_MISSING_REASON = "fio is not installed (sudo apt-get install fio)"


def fio_path() -> str | None:
    """Path of the fio binary, or None when it is not installed."""
    return shutil.which("fio")


def pytest_configure(config: pytest.Config) -> None:
    """Register the fio_available marker (integration and root live in pyproject.toml)."""
    config.addinivalue_line("markers", "fio_available: needs the fio binary on PATH (skipped otherwise)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip fio tests without fio and root tests without root, each with a clear reason."""
    if (item.get_closest_marker("integration") or item.get_closest_marker("fio_available")) and not fio_path():
        pytest.skip(FIO_MISSING_REASON)
    if item.get_closest_marker("root") and os.geteuid() != 0:
        pytest.skip("needs root (loop devices and mounts)")


fio_available = pytest.mark.fio_available


@dataclass(frozen=True)
class CliResult:
    """What one in-process `ssdlab` invocation produced."""

    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        """Non-empty stderr lines."""
        return [ln for ln in self.err.splitlines() if ln.strip()]


CliRunner = Callable[..., CliResult]


def run_cli(*args: str | os.PathLike[str], traceback: bool = True, stdin: str = "") -> CliResult:
    """Call ssdlab.cli.main in-process with StringIO streams (stdin is never a TTY).

    `traceback=True` prepends `--traceback` so unexpected errors show where they came from; pass
    False to see exactly what a user sees.
    """
    argv = [str(a) for a in args]
    if traceback:
        argv = ["--traceback", *argv]
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, env=Env(stdout=out, stderr=err, stdin=io.StringIO(stdin)))
    return CliResult(code=code, out=out.getvalue(), err=err.getvalue())


@pytest.fixture
def cli() -> CliRunner:
    """The in-process CLI runner: `cli("plan", "quick", "--target", "null")` -> CliResult."""
    return run_cli


@dataclass(frozen=True)
class SmallFile:
    """A file target under tmp_path: `spec` is what --target takes; the file is created by the run."""

    path: Path
    size: int
    spec: str


@pytest.fixture
def small_file_target(tmp_path: Path) -> SmallFile:
    """A 64 MiB file target spec under tmp_path (not created yet: ssdlab lays it out)."""
    path = tmp_path / "target" / "ssdlab-test.dat"
    path.parent.mkdir()
    size = 64 * 1024**2
    return SmallFile(path=path, size=size, spec=f"file:{path}?size=64MiB")


@pytest.fixture
def golden() -> Callable[[str], Path]:
    """golden("null-randrw-2jobs.json") -> path of a real fio output captured with fio 3.33."""

    def _path(name: str) -> Path:
        path = GOLDEN_DIR / name
        assert path.is_file(), f"missing golden file {path}"
        return path

    return _path
