"""Run directories: layout, point-by-point storage, loading for report/export/resume.

DIR/run.json                     the Run (schema_version'ed), written atomically at the start and end of a run
DIR/points.jsonl                 the points finished since run.json was written: one JSON record per line,
                                 appended and fsynced after every point, folded into run.json at the end
DIR/points/<point-id>/job.fio    the exact job file
DIR/points/<point-id>/cmd.txt    the exact fio command (re-runnable)
DIR/points/<point-id>/fio.json   fio's raw json+ output
DIR/report.html                  the rendered report (re-render any time with `ssdlab report DIR`)
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import json
import os
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ssdlab.errors import ResultsDirError, StoredResultsError
from ssdlab.results import atomic, shape
from ssdlab.results.model import SCHEMA_VERSION, PointResult, Run, point_result_from_dict, run_from_dict, to_dict

RUN_FILE = "run.json"
LOG_FILE = "points.jsonl"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def default_run_dir(suite: str, target_name: str, base: Path = Path("results")) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", target_name).strip("-")[-40:] or "target"
    suite_slug = re.sub(r"[^A-Za-z0-9]+", "-", suite).strip("-")[:40]
    return base / f"{stamp}-{suite_slug}-{slug}"


def create_run_dir(path: Path, force: bool = False) -> Path:
    """Create (or reuse when empty / forced) a results directory and prove it is writable, up front."""
    if path.exists() and not path.is_dir():
        raise ResultsDirError(f"{path} exists and is not a directory: choose another --out")
    if path.exists() and any(path.iterdir()) and not force:
        if (path / RUN_FILE).exists():
            raise ResultsDirError(f"{path} already holds a run: use `ssdlab resume {path}`, another --out, "
                                  "or --force to overwrite")
        raise ResultsDirError(f"{path} is not empty: choose another --out or pass --force")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".ssdlab-write-test"
        probe.write_text("ok", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        raise ResultsDirError(f"results directory {path} is not writable ({exc.strerror or exc}): "
                              "choose another --out") from exc
    return path


@contextlib.contextmanager
def locked(run_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on a run directory, so two ssdlab processes never drive the same run."""
    try:
        fh = (run_dir / ".lock").open("w", encoding="utf-8")
    except OSError as exc:
        raise ResultsDirError(f"cannot lock {run_dir} ({exc.strerror or exc}): check its permissions") from exc
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsDirError(f"another ssdlab process is running in {run_dir}: wait for it or stop it "
                                  "first") from None
        yield


def point_dir(run_dir: Path, point_id: str) -> Path:
    return run_dir / "points" / point_id


# json.dumps(obj, separators=(",", ":")), without the check for reference cycles (to_dict makes a tree)
_ONE_LINE = json.JSONEncoder(separators=(",", ":"), check_circular=False)


def _point_json(result: PointResult) -> str:
    """One point result as one line of JSON, computed once: results are immutable, and the same text is the
    point's record in the log and its line in run.json."""
    cached: str | None = result.__dict__.get("_json_text")
    if cached is None:
        cached = _ONE_LINE.encode(to_dict(result))
        object.__setattr__(result, "_json_text", cached)  # a memo, not state: to_dict ignores it
    return cached


def run_json(run: Run) -> str:
    """run.json text: the run's own fields (indented), then its points, one line each."""
    head = to_dict(dataclasses.replace(run, points=()))
    head["schema_version"] = SCHEMA_VERSION  # the layout this writer produces (a resumed old run is upgraded)
    head.pop("points")
    text = json.dumps(head, indent=1)
    points = "".join(("\n" if i == 0 else ",\n") + _point_json(p) for i, p in enumerate(run.points))
    return text[:-2] + ',\n "points": [' + points + "\n ]\n}\n"


def save_run(run_dir: Path, run: Run) -> None:
    """Write the whole run to run.json atomically (temp file, fsync, rename, fsync of the directory), then
    empty the points log: a crash at any moment leaves the previous complete run.json, whose log records
    (if any) load_run applies, skipping those run.json already holds."""
    atomic.write_text(run_dir / RUN_FILE, run_json(run))
    log = run_dir / LOG_FILE
    if log.exists():
        try:
            log.unlink()
            atomic.fsync_dir(run_dir)
        except OSError as exc:
            raise ResultsDirError(f"cannot remove {log}: {exc.strerror or exc}") from exc


def append_point(run_dir: Path, result: PointResult) -> None:
    """Add one finished point to the run's log: one line, flushed and fsynced before this returns. The cost
    does not depend on how many points came before; save_run folds the log into run.json."""
    log = run_dir / LOG_FILE
    line = (_point_json(result) + "\n").encode("utf-8")
    try:
        created = False
        try:
            fd = os.open(log, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = os.open(log, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_CREAT, 0o666)
            created = True
        try:
            if not created:
                _cut_torn_tail(fd)
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            atomic.fsync_dir(run_dir)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise ResultsDirError(f"no space left to write {log}: free space and run `ssdlab resume`") from exc
        raise ResultsDirError(f"cannot write {log}: {exc.strerror or exc}") from exc


def _cut_torn_tail(fd: int) -> None:
    """Truncate a log (open for appending) whose last record was torn (a crash mid-write) back to its last
    complete line, so the next record starts on a line of its own. A log ssdlab itself appended to always
    ends with a newline."""
    size = os.lseek(fd, 0, os.SEEK_END)
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    data = os.pread(fd, size, 0)  # rare: only after a torn write
    os.ftruncate(fd, data.rfind(b"\n") + 1)


def _log_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The complete records of a points log. A record counts once its line, newline included, is written;
    a torn end (the process or the machine died while writing it) is ignored, damage before a complete record
    is an error."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoredResultsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    records: list[tuple[int, dict[str, Any]]] = []
    bad: int | None = None  # line number of the first line that is not a record
    for number, line in enumerate(data.split(b"\n")[:-1], 1):  # the text after the last newline is torn
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            bad = number if bad is None else bad
            continue
        if bad is not None:
            raise StoredResultsError(f"{path} is damaged at line {bad} (not a point record, yet complete records "
                                     "follow it)")
        records.append((number, record))
    return records


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise StoredResultsError(f"cannot read {path}: {exc}") from exc


def load_run(run_dir: Path) -> Run:
    """The stored run: run.json plus the records of its points log (a run that is going on, or was killed,
    has its latest points there). The one way every command and renderer reads a run."""
    path = run_dir / RUN_FILE if run_dir.is_dir() else run_dir
    if not path.exists():
        raise StoredResultsError(f"no {RUN_FILE} in {run_dir}: name a directory written by `ssdlab run`")
    for _ in range(5):  # a writer may fold the log into run.json meanwhile: then read both again
        before = _identity(path)
        data = _read_json(path)
        if not isinstance(data, dict):
            raise StoredResultsError(f"{path} does not hold a run object")
        log = path.parent / LOG_FILE
        records = _log_records(log) if data.get("schema_version") != 1 else []  # schema 1 had no log
        if _identity(path) == before:
            break
    try:
        run = run_from_dict(data)
        shape.check(run)
    except shape.ShapeError as exc:
        raise malformed(path, exc.field, exc.problem) from exc
    if not records:
        return run
    have = {(p.point.id, p.attempt, p.status, p.started) for p in run.points}
    for number, record in records:
        try:
            if _record_key(record) not in have:  # run.json may already hold it (a crash while folding)
                point = point_result_from_dict(record)
                shape.check(point)
                run = run.with_point(point)
        except (shape.ShapeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            field, problem = shape.describe(exc)
            raise malformed(log, f"line {number}" + (f": {field}" if field else ""), problem) from exc
    return run


def malformed(path: Path, field: str, problem: str) -> StoredResultsError:
    """The one line for a stored file that does not have the model's shape (exit 8)."""
    return StoredResultsError(f"{path}: {field or 'the document'}: {problem}: the file was changed or damaged after "
                              "ssdlab wrote it; restore it from a copy, or run the test again")


def _identity(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (0, 0)
    return (st.st_ino, st.st_mtime_ns)


def _record_key(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """What identifies one stored point result: its id, attempt, status and start time (the same fields of a
    loaded PointResult, in this order, as load_run compares them)."""
    point = record.get("point") or {}
    return (point.get("id"), record.get("attempt", 1), record.get("status"), record.get("started"))
