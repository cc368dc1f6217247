"""Atomic file writes: write a temp file in the same directory, fsync it, rename it over the destination,
then fsync the directory so the rename itself survives a power cut. `durable=False` skips the flushes, for
files that can be made again from what is stored durably (a simulated point's artefacts): still complete or
absent after a crash of ssdlab, though not necessarily after a power cut."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from ssdlab.errors import ResultsDirError


def write_text(path: Path, text: str, *, durable: bool = True) -> None:
    write_bytes(path, text.encode("utf-8"), durable=durable)


def write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    made: tuple[int, Path] | None
    try:  # mostly the directory exists: no call to make it
        made = _temp_file(path)
    except OSError:
        path.parent.mkdir(parents=True, exist_ok=True)
        made = None
    try:
        fd, tmp = made or _temp_file(path)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            tmp.replace(path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        if durable:
            fsync_dir(path.parent)
    except OSError as exc:
        raise _results_error(path, exc) from exc


_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC  # as tempfile.mkstemp's


def _temp_file(path: Path) -> tuple[int, Path]:
    """A new temporary file (mode 0600) next to `path`, named after it and this process; when that name is
    taken (a leftover, another thread writing the same file), a random one (tempfile.mkstemp)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
    except FileExistsError:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        return fd, Path(name)


def _results_error(path: Path, exc: OSError) -> ResultsDirError:
    if exc.errno == errno.ENOSPC:
        return ResultsDirError(f"no space left to write {path}: free space and run `ssdlab resume`")
    return ResultsDirError(f"cannot write {path}: {exc.strerror or exc}")


def make_durable(paths: list[Path]) -> None:
    """Flush files written with `durable=False` (and their renames) to stable storage: each file, then each of
    their directories once. For artefacts written before a long step whose outcome decides whether they are
    kept (a point's job file, before fio runs), so the step does not wait for the disk."""
    for path in [*paths, *dict.fromkeys(p.parent for p in paths)]:
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise _results_error(path, exc) from exc


def fsync_dir(directory: Path) -> None:
    """Make the directory's entries (a rename, a new or removed file) durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_shareable(path: Path) -> None:
    """Give a written file the usual umask mode: temp files are created 0600, but a report is meant to be
    shared."""
    mask = os.umask(0)
    os.umask(mask)
    with contextlib.suppress(OSError):
        path.chmod(0o666 & ~mask)
