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
from typing import IO, Any

from ssdlab.errors import ResultsDirError, StoredResultsError
from ssdlab.results import atomic, shape
from ssdlab.results.model import (
    PARTS_FILE,
    SCHEMA_VERSION,
    PointResult,
    Run,
    StoredParts,
    part_heads,
    parts_ref,
    point_result_from_dict,
    run_from_dict,
    stored_parts,
    to_dict,
)
from ssdlab.results.shape import malformed

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
POINTS_LINE = b' "points": [\n'  # run.json: the line after the run's own fields, before one line per point
_AT = "_stored_at"  # PointResult memo: (file, offset, length) of its record's text on disk (schema 3 form)


def stored_point(run_dir: Path, result: PointResult) -> PointResult:
    """`result` as schema 3 stores it: a point on several devices keeps their results in its directory
    (points/<id>/parts.json, written durably first: the record refers to it) and a reference in the record.
    The returned result reads them from there when asked (model.StoredParts), so a run's memory does not
    grow with its devices. Another record of the same point (a later attempt, a failed one run again on
    resume) has its own file, so storing one never changes what an earlier one refers to."""
    m = result.measurement
    if m is None or not m.parts or isinstance(m.parts, StoredParts):
        return result
    path = point_dir(run_dir, result.point.id) / parts_file(result)
    lines = ",\n".join(_ONE_LINE.encode(to_dict(p)) for p in m.parts)
    atomic.write_text(path, f"[\n{lines}\n]\n")
    parts = stored_parts(parts_ref(StoredParts(path, part_heads(m.parts))), path.parent)
    return dataclasses.replace(result, measurement=dataclasses.replace(m, parts=parts))


def parts_file(result: PointResult) -> str:
    """The name of a record's per-device results file in its point's directory: parts.json for the point's
    first attempt when it did not fail, else named after its attempt and status (parts-2-ok.json)."""
    if result.attempt == 1 and result.status != "failed":
        return PARTS_FILE
    return f"parts-{int(result.attempt)}-{result.status}.json"


def _point_json(result: PointResult) -> str:
    """One stored point result as one line of JSON: the same text is its record in the log and its line in
    run.json. Per-device results appear as their reference (stored_point)."""
    m = result.measurement
    if m is None or not isinstance(m.parts, StoredParts):
        return _ONE_LINE.encode(to_dict(result))
    doc = to_dict(dataclasses.replace(result, measurement=dataclasses.replace(m, parts=())))
    doc["measurement"]["parts"] = parts_ref(m.parts)  # in place of the empty list: the same key order
    return _ONE_LINE.encode(doc)


def _head_json(run: Run) -> bytes:
    """The run's own fields, indented, up to and including the line that opens its points."""
    head = to_dict(dataclasses.replace(run, points=()))
    head["schema_version"] = SCHEMA_VERSION  # the layout this writer produces (a resumed old run is upgraded)
    head.pop("points")
    text = json.dumps(head, indent=1)
    return (text[:-2] + ",\n").encode("utf-8") + POINTS_LINE


def run_json(run: Run) -> str:
    """run.json text: the run's own fields (indented), then its points, one line each."""
    return b"".join(_run_chunks(run, {})).decode("utf-8")


def _run_chunks(run: Run, files: dict[str, int], where: list[tuple[int, int]] | None = None) -> Iterator[bytes]:
    """run.json piece by piece: a point whose record is on disk in the stored form is copied from there
    (`files` keeps those files open), any other is serialised; `where` receives each point's (offset, length)."""
    head = _head_json(run)
    yield head
    offset = len(head)
    for i, p in enumerate(run.points):
        text = _stored_text(p, files) or _point_json(p).encode("utf-8")
        sep = b",\n" if i else b""
        if where is not None:
            where.append((offset + len(sep), len(text)))
        yield sep + text
        offset += len(sep) + len(text)
    yield b"\n ]\n}\n"


def _stored_text(result: PointResult, files: dict[str, int]) -> bytes | None:
    """The record of `result` as stored (when it was read or written in the stored form), read back, or None."""
    at: tuple[str, int, int] | None = result.__dict__.get(_AT)
    if at is None:
        return None
    name, offset, length = at
    try:
        fd = files.get(name)
        if fd is None:
            fd = files[name] = os.open(name, os.O_RDONLY | os.O_CLOEXEC)
        text = os.pread(fd, length, offset)
    except OSError:
        return None
    prefix = b'{"point":{"id":' + _ONE_LINE.encode(result.point.id).encode("utf-8") + b","
    return text if len(text) == length and text.startswith(prefix) and text.endswith(b"}") else None


def save_run(run_dir: Path, run: Run) -> Run:
    """Write the whole run to run.json atomically (temp file, fsync, rename, fsync of the directory), then
    empty the points log: a crash at any moment leaves the previous complete run.json, whose log records
    (if any) load_run applies, skipping those run.json already holds. Everything handed to the background
    flusher (the log, the points' artefacts) is on disk first. Records already on disk are copied, not
    serialised again. Returns the run as stored (stored_point)."""
    atomic.wait_flushed()
    points = tuple(stored_point(run_dir, p) for p in run.points)
    if any(a is not b for a, b in zip(points, run.points, strict=True)):
        run = dataclasses.replace(run, points=points)
    path = run_dir / RUN_FILE
    files: dict[str, int] = {}
    where: list[tuple[int, int]] = []
    try:
        atomic.write_chunks(path, _run_chunks(run, files, where))
    finally:
        for fd in files.values():
            os.close(fd)
    for p, (offset, length) in zip(run.points, where, strict=True):
        object.__setattr__(p, _AT, (str(path), offset, length))  # a memo of where its text is, not state
    log = run_dir / LOG_FILE
    if log.exists():
        try:
            log.unlink()
            atomic.fsync_dir(run_dir)
        except OSError as exc:
            raise ResultsDirError(f"cannot remove {log}: {exc.strerror or exc}") from exc
    return run


def append_point(run_dir: Path, result: PointResult) -> PointResult:
    """Add one finished point to the run's log: one line, written before this returns (readers see it, and it
    survives the end of this process) and flushed to disk in the background (atomic.flush_later: save_run and
    the run's end wait for it). The cost does not depend on how many points came before; save_run folds the
    log into run.json. Returns the result as stored (stored_point: its per-device results read from disk)."""
    result = stored_point(run_dir, result)
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
            offset = 0 if created else _cut_torn_tail(fd)
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        if created:
            atomic.fsync_dir(run_dir)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise ResultsDirError(f"no space left to write {log}: free space and run `ssdlab resume`") from exc
        raise ResultsDirError(f"cannot write {log}: {exc.strerror or exc}") from exc
    atomic.flush_later([log])
    object.__setattr__(result, _AT, (str(log), offset, len(line) - 1))  # a memo, not state
    return result


def wait_stored() -> None:
    """Block until every record appended so far (and every artefact handed to the flusher) is on disk."""
    atomic.wait_flushed()


def _cut_torn_tail(fd: int) -> int:
    """Truncate a log (open for appending) whose last record was torn (a crash mid-write) back to its last
    complete line, so the next record starts on a line of its own; return the log's length. A log ssdlab itself
    appended to always ends with a newline."""
    size = os.lseek(fd, 0, os.SEEK_END)
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    data = os.pread(fd, size, 0)  # rare: only after a torn write
    size = data.rfind(b"\n") + 1
    os.ftruncate(fd, size)
    return size


def _log_records(path: Path, run_dir: Path, have: set[tuple[Any, ...]]) -> list[PointResult]:
    """The complete records of a points log, read line by line, but those whose key is in `have` (run.json holds
    them already: a crash while folding). A record counts once its line, newline included, is written; a torn
    end (the process or the machine died while writing it) is ignored, damage before a complete record is an
    error, and so is a record without the model's shape (naming its line and field)."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoredResultsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    records: list[PointResult] = []
    bad: int | None = None  # line number of the first line that is not a record
    offset = 0
    with fh:
        try:
            for number, line in enumerate(fh, 1):
                start, offset = offset, offset + len(line)
                if not line.endswith(b"\n"):  # the text after the last newline is torn
                    break
                try:
                    record = json.loads(line)
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    bad = number if bad is None else bad
                    continue
                if bad is not None:
                    raise StoredResultsError(f"{path} is damaged at line {bad} (not a point record, yet complete "
                                             "records follow it)")
                result = _log_record(path, number, record, run_dir, have)
                if result is not None:
                    if _stored_form(record):
                        object.__setattr__(result, _AT, (str(path), start, len(line) - 1))
                    records.append(result)
        except OSError as exc:
            raise StoredResultsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return records


def _stored_form(record: Mapping[str, Any]) -> bool:
    """Whether a record read from disk is in the form this writer stores (its text can be copied as it is):
    per-device results, if any, by reference."""
    parts = (record.get("measurement") or {}).get("parts")
    return not parts or isinstance(parts, Mapping)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise StoredResultsError(f"cannot read {path}: it is not UTF-8 text (byte {exc.start}): the file was changed "
                                 "or damaged after ssdlab wrote it; restore it from a copy, or run the test "
                                 "again") from exc
    except (OSError, ValueError) as exc:  # ValueError: not JSON (json.JSONDecodeError), or NaN where not allowed
        raise StoredResultsError(f"cannot read {path}: {exc}") from exc


class _NotStreamable(Exception):
    """run.json is not in the layout run_json writes (a file written by hand, or damaged): read it whole."""


def _read_run(path: Path) -> Run:
    """run.json as a Run, read a point at a time when it has the layout run_json writes (the run's fields,
    then one point per line), so that reading never holds the whole document; any other valid JSON is read
    whole."""
    run_dir = path.parent
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise StoredResultsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with fh:
        try:
            first = fh.readline()
            head = [first]
            if first == b"{\n":
                for line in fh:
                    if line == POINTS_LINE:
                        break
                    head.append(line)
                else:
                    head = []
            else:
                head = []
            if head:
                try:
                    data = json.loads(b"".join(head).rstrip()[:-1] + b"\n}")
                    if isinstance(data, dict) and "points" not in data:
                        return _streamed(data, fh, path, len(b"".join(head)) + len(POINTS_LINE), run_dir)
                except (ValueError, _NotStreamable):
                    pass
        except OSError as exc:
            raise StoredResultsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    data = _read_json(path)
    if not isinstance(data, dict):
        raise StoredResultsError(f"{path} does not hold a run object")
    return run_from_dict(data, run_dir)


def _streamed(head: dict[str, Any], fh: IO[bytes], path: Path, offset: int, run_dir: Path) -> Run:
    """The run whose own fields are `head`, its points read from `fh` (positioned after the points line)."""
    stored = head.get("schema_version") == SCHEMA_VERSION
    located: list[tuple[int, int]] = []

    def points() -> Iterator[dict[str, Any]]:
        pos = offset
        ended = False
        for line in fh:
            start, pos = pos, pos + len(line)
            if ended:
                if line.strip():
                    raise _NotStreamable
                continue
            if line == b" ]\n" or line == b"\n":  # the end of the points (or the empty line of none)
                continue
            if line in (b"}\n", b"}"):
                ended = True
                continue
            text = line.rstrip(b"\n")
            if text.endswith(b","):
                text = text[:-1]
            try:
                record = json.loads(text)
            except ValueError:
                raise _NotStreamable from None
            if not isinstance(record, dict):
                raise _NotStreamable
            located.append((start, len(text)) if stored and _stored_form(record) else (-1, 0))
            yield record
        if not ended:
            raise _NotStreamable

    run = run_from_dict({**head, "points": points()}, run_dir)
    name = str(path)
    for p, (start, length) in zip(run.points, located, strict=True):
        if start >= 0:
            object.__setattr__(p, _AT, (name, start, length))  # a memo of where its text is, not state
    return run


def load_run(run_dir: Path) -> Run:
    """The stored run: run.json plus the records of its points log (a run that is going on, or was killed,
    has its latest points there). The one way every command and renderer reads a run. Points are read one at
    a time; per-device results (schema 3) stay in the points' directories until asked for."""
    path = run_dir / RUN_FILE if run_dir.is_dir() else run_dir
    if not path.exists():
        raise StoredResultsError(f"no {RUN_FILE} in {run_dir}: name a directory written by `ssdlab run`")
    for _ in range(5):  # a writer may fold the log into run.json meanwhile: then read both again
        before = _identity(path)
        try:
            run = _read_run(path)
            shape.check(run)
        except shape.ShapeError as exc:
            raise malformed(path, exc.field, exc.problem) from exc
        have = {(p.point.id, p.attempt, p.status, p.started) for p in run.points}
        log = path.parent / LOG_FILE
        records = _log_records(log, path.parent, have) if run.schema_version != 1 else []  # schema 1: no log
        if _identity(path) == before:
            break
    for record in records:
        run = run.with_point(record)
    return _plausible(run)


def _plausible(run: Run) -> Run:
    """The run with every point stored ok whose measurement is missing or holds a value no run measures (NaN,
    infinity, negative: verdict.stored_problem) loaded as invalid, with the reason: renderers and verdicts never
    count it, and its test is incomplete."""
    from ssdlab.results.verdict import stored_problem

    changed = False
    points = []
    for p in run.points:
        why = stored_problem(p)
        if why:
            p = dataclasses.replace(p, status="invalid", reason=why)
            changed = True
        points.append(p)
    return dataclasses.replace(run, points=tuple(points)) if changed else run


def _log_record(path: Path, number: int, record: dict[str, Any], run_dir: Path,
                have: set[tuple[Any, ...]]) -> PointResult | None:
    """Line `number` of a points log as a point result, or None when run.json already holds it."""
    try:
        if _record_key(record) in have:
            return None
        point = point_result_from_dict(record, run_dir)
        shape.check(point)
        return point
    except (shape.ShapeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        field, problem = shape.describe(exc)
        raise malformed(path, f"line {number}" + (f": {field}" if field else ""), problem) from exc


def upgrade(run_dir: Path) -> Run:
    """Store an older run in this version's schema: its per-device results moved into the points' directories,
    its points log folded in; the results themselves unchanged (`ssdlab report` of it renders the same page)."""
    run = load_run(run_dir)
    with locked(run_dir):
        save_run(run_dir, run)
    return load_run(run_dir)


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
