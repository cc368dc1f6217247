"""Atomic file writes: write a temp file in the same directory, fsync it, rename it over the destination,
then fsync the directory so the rename itself survives a power cut. `durable=False` skips the flushes, for
files that can be made again from what is stored durably (a simulated point's artefacts): still complete or
absent after a crash of ssdlab, though not necessarily after a power cut.

Flushes that nothing has to wait for (a point's fio artefacts, the points log after each record) go to one
background thread (`flush_later`), in order and a batch at a time, so the next point starts while the disk
catches up; `wait_flushed` blocks until everything handed over is on stable storage and raises the first error.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from ssdlab.errors import ResultsDirError


def write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """`text` as UTF-8; a lone surrogate (text that came from bytes that were not UTF-8, e.g. a hand-edited
    run.json's "\\udc9b") is written as its backslash escape, never as an error."""
    write_bytes(path, text.encode("utf-8", "backslashreplace"), durable=durable)


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
        _fsync(path)


def _fsync(path: Path) -> None:
    """fsync one file or directory by name (ResultsDirError when that fails)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _results_error(path, exc) from exc


def write_chunks(path: Path, chunks: Iterable[bytes]) -> None:
    """write_bytes of content given piece by piece (a run.json of many points is never one string in memory):
    temp file, fsync, rename, fsync of the directory."""
    fd, tmp = _temp_file(path)
    try:
        try:
            with os.fdopen(fd, "wb", buffering=1 << 20, closefd=True) as fh:
                for chunk in chunks:
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            tmp.replace(path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        fsync_dir(path.parent)
    except OSError as exc:
        raise _results_error(path, exc) from exc


class _Flusher:
    """One background thread that fsyncs files handed to it, in the order given (a path handed again moves to
    its latest place), a batch at a time: a points log fsynced once covers every record appended before."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: list[Path] = []
        self._queued = 0  # hand-overs so far
        self._done = 0  # hand-overs on stable storage
        self._error: ResultsDirError | None = None
        self._thread: threading.Thread | None = None
        self._ended: threading.Thread | None = None  # the last thread, joined by wait()

    def add(self, paths: Iterable[Path]) -> None:
        with self._cond:
            self._pending.extend(paths)
            self._queued += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="ssdlab-flush", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _loop(self) -> None:
        """Flush until nothing is pending, then end (a thread left running would keep, e.g., the report's chart
        workers from forking)."""
        while True:
            with self._cond:
                if not self._pending:
                    self._ended, self._thread = self._thread, None
                    self._cond.notify_all()
                    return
                batch, self._pending, upto = self._pending, [], self._queued
            order: list[Path] = []  # each path once, at its last place
            seen: set[Path] = set()
            for path in reversed(batch):
                if path not in seen:
                    seen.add(path)
                    order.append(path)
            order.reverse()
            error = None
            for path in order:
                try:
                    _fsync(path)
                except ResultsDirError as exc:
                    error = error or exc
            with self._cond:
                self._done = upto
                if error is not None and self._error is None:
                    self._error = error
                self._cond.notify_all()

    def wait(self) -> None:
        """Block until every hand-over is on stable storage and the thread has ended; raise the first error."""
        with self._cond:
            while self._done < self._queued or self._thread is not None:
                self._cond.wait()
            error, self._error = self._error, None
            ended, self._ended = self._ended, None
        if ended is not None and ended is not threading.current_thread():
            ended.join()
        if error is not None:
            raise error


_FLUSHER = _Flusher()


def flush_later(paths: Iterable[Path]) -> None:
    """Make files written with `durable=False` (and their directories' entries: name the directory after the
    file) durable in the background, in this order and after everything handed over before."""
    _FLUSHER.add(list(paths))


def wait_flushed() -> None:
    """Block until everything handed to flush_later is on stable storage; raise the first error among them."""
    _FLUSHER.wait()


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
