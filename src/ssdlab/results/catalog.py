"""The results catalog: an SQLite index of the run directories under a results root (stdlib sqlite3).

The run directories stay the source of truth: the index (ROOT/.ssdlab-catalog.sqlite) is created on first
use, brought up to date on every use (new, changed, moved and deleted runs; a run is re-read only when its
run.json, its points log (points.jsonl, results schema 2) or tags.json changed), and `ssdlab runs --rebuild`
recreates it from scratch. A read-only results root gets an in-memory index instead.

Catalog ids are derived from the run itself (a hash of its run id, creation time and suite), so a run keeps
its id when the index is rebuilt or the directory is moved. `ssdlab tag` stores notes in DIR/tags.json, next
to (never inside) the immutable run.json, so a rebuild keeps them.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ssdlab.errors import ResultsDirError, StoredResultsError, UsageError
from ssdlab.results import atomic
from ssdlab.results.counts import point_counts
from ssdlab.results.model import Run
from ssdlab.results.naming import target_name
from ssdlab.results.store import LOG_FILE, RUN_FILE, load_run
from ssdlab.results.timing import CATALOG_FILE, run_timing

TAGS_FILE = "tags.json"
ROOT_ENV = "SSDLAB_RESULTS"
MAX_DEPTH = 4  # run directories up to ROOT/a/b/c/run.json
# the index's own layout (PRAGMA user_version); a different one is rebuilt (2: points = measured points, timing)
_FORMAT = 2
HISTORY_RUNS = 5  # the latest complete runs of a suite on a kind of target that teach a new run's ETA


def default_root() -> Path:
    """$SSDLAB_RESULTS, else ./results (where `ssdlab run` writes by default)."""
    return Path(os.environ.get(ROOT_ENV) or "results")


def catalog_id(run: Run) -> str:
    """A run's stable catalog id: 8 hex digits of a hash of its identity (not of its path)."""
    text = f"{run.run_id}\0{run.created}\0{run.suite}"
    return hashlib.sha256(text.encode()).hexdigest()[:8]


# ---------------------------------------------------------------- tags


def damaged(path: Path, exc: BaseException) -> StoredResultsError:
    """The one line for a catalog that is not what ssdlab writes (exit 8): it is only an index, so deleting it
    loses nothing."""
    return StoredResultsError(f"catalog {path} is damaged ({type(exc).__name__}: {exc}): delete it; it is rebuilt "
                              "from the run directories")


_C = TypeVar("_C", bound=Callable[..., Any])


def _guarded(method: _C) -> _C:
    """A catalog method whose database errors are one line: locked by another command, or a damaged catalog."""
    @functools.wraps(method)
    def call(self: Catalog, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise ResultsDirError(f"catalog {self.path} is in use by another ssdlab command (it is locked): "
                                      "wait for it to finish and try again") from exc
            raise damaged(self.path, exc) from exc
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, exc) from exc

    return call  # type: ignore[return-value]


def read_tags(run_dir: Path) -> dict[str, str]:
    """DIR/tags.json as {key: value} ({} when absent); a damaged file is reported, not ignored."""
    path = run_dir / TAGS_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        raise StoredResultsError(f"cannot read {path}: {exc}; fix or delete it") from exc
    if not isinstance(data, dict):
        raise StoredResultsError(f"{path} does not hold a JSON object of tags; fix or delete it")
    return {str(k): str(v) for k, v in data.items()}


def write_tags(run_dir: Path, tags: Mapping[str, str]) -> None:
    """Replace DIR/tags.json atomically (run.json is never touched)."""
    atomic.write_text(run_dir / TAGS_FILE, json.dumps(dict(sorted(tags.items())), indent=1) + "\n")


def parse_tag(text: str) -> tuple[str, str]:
    """`key=value` (a key is letters, digits, '_', '-', '.')."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key or not all(c.isalnum() or c in "_-." for c in key):
        raise UsageError(f"tag {text!r}: use KEY=VALUE, e.g. firmware_branch=2.1 or note='after fw update'")
    return key, value.strip()


def run_verdict(run: Run) -> str:
    """One word for listing and filtering: the run's verdict kind from verdict.py (steady, not-steady,
    incomplete, pass, fail, complete)."""
    from ssdlab.results.verdict import run_verdicts

    return run_verdicts(run).kind


# ---------------------------------------------------------------- entries


@dataclass(frozen=True)
class Entry:
    id: str
    path: Path
    run_id: str
    suite: str
    status: str
    verdict: str
    created: str
    target: str
    kind: str
    model: str
    serial: str
    firmware: str
    capacity: int
    points: int  # measured points, as every page counts them (results/counts.py)
    schema: int
    tags: Mapping[str, str] = field(default_factory=dict)
    timing: Mapping[str, Any] = field(default_factory=dict)  # what the run took (results/timing.py), for ETAs

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "path": str(self.path), "run_id": self.run_id, "suite": self.suite,
                "status": self.status, "verdict": self.verdict, "created": self.created, "target": self.target,
                "kind": self.kind, "model": self.model, "serial": self.serial, "firmware": self.firmware,
                "capacity_bytes": self.capacity, "points": self.points, "schema_version": self.schema,
                "tags": dict(self.tags)}


def entry_for(run: Run, run_dir: Path, tags: Mapping[str, str]) -> Entry:
    t = run.target
    ident = t.get("identity") or {}
    return Entry(
        id=catalog_id(run), path=run_dir, run_id=run.run_id, suite=run.suite, status=run.status,
        verdict=run_verdict(run), created=run.created, target=target_name(t),
        kind=str(t.get("kind") or ""), model=str(ident.get("model") or ""), serial=str(ident.get("serial") or ""),
        firmware=str(ident.get("firmware") or ""), capacity=int(t.get("capacity_bytes") or 0),
        points=point_counts(run).measured, schema=run.schema_version, tags=dict(tags), timing=run_timing(run))


_COLUMNS = ("id", "path", "run_id", "suite", "status", "verdict", "created", "target", "kind", "model", "serial",
            "firmware", "capacity", "points", "schema")
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS runs (
  path TEXT PRIMARY KEY, id TEXT NOT NULL, run_id TEXT, suite TEXT, status TEXT, verdict TEXT, created TEXT,
  target TEXT, kind TEXT, model TEXT, serial TEXT, firmware TEXT, capacity INTEGER, points INTEGER,
  schema INTEGER, stamp TEXT NOT NULL, timing TEXT);
CREATE INDEX IF NOT EXISTS runs_id ON runs(id);
CREATE TABLE IF NOT EXISTS tags (
  path TEXT NOT NULL REFERENCES runs(path) ON DELETE CASCADE, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (path, key));
PRAGMA user_version = {_FORMAT};
"""


@dataclass(frozen=True)
class Refresh:
    added: int
    updated: int
    removed: int
    unreadable: tuple[str, ...]  # "path: reason" of run directories that could not be read


@dataclass(frozen=True)
class Filters:
    device: str | None = None
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    suite: str | None = None
    verdict: str | None = None
    since: str | None = None
    until: str | None = None
    tags: tuple[tuple[str, str], ...] = ()


def _stamp(run_dir: Path) -> str | None:
    """What changes when a run or its tags change: mtime and size of run.json, of its points log (a run going
    on, or killed, has its latest points there) and of tags.json."""
    parts = []
    for name in (RUN_FILE, LOG_FILE, TAGS_FILE):
        try:
            st = (run_dir / name).stat()
        except OSError:
            if name == RUN_FILE:
                return None
            parts.append("-")
            continue
        parts.append(f"{st.st_mtime_ns}:{st.st_size}")
    return "|".join(parts)


def find_run_dirs(root: Path) -> Iterator[Path]:
    """Directories holding a run.json under root (not descending into a run directory)."""
    def walk(d: Path, depth: int) -> Iterator[Path]:
        if (d / RUN_FILE).is_file():
            yield d
            return
        if depth >= MAX_DEPTH:
            return
        try:
            children = sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError:
            return
        for c in children:
            yield from walk(c, depth + 1)

    if root.is_dir():
        yield from walk(root, 0)


def is_glob(text: str) -> bool:
    """Whether a filter's text is a glob (`*qlc*`, `pts-?`): matched whole, else as a substring."""
    return any(c in text for c in "*?[")


class Catalog:
    """The index of one results root. Use as a context manager (closes the connection)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / CATALOG_FILE
        self.conn = self._connect()

    def _connect(self) -> sqlite3.Connection:
        if not self.root.is_dir():
            raise UsageError(f"results root {self.root} does not exist: pass --results DIR (or set {ROOT_ENV})")
        if not os.access(self.root, os.W_OK):  # a read-only results root: an index in memory, for this command
            conn = sqlite3.connect(":memory:")
            conn.executescript(_SCHEMA)
            return conn
        try:
            conn = sqlite3.connect(self.path)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, _FORMAT):
                conn.executescript("DROP TABLE IF EXISTS tags; DROP TABLE IF EXISTS runs;")
            if version != _FORMAT:  # the schema script writes (and syncs) even when it changes nothing: only once
                conn.executescript(_SCHEMA)
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise ResultsDirError(f"catalog {self.path} is in use by another ssdlab command (it is locked): "
                                      "wait for it to finish and try again") from exc
            raise ResultsDirError(f"catalog {self.path} cannot be opened ({exc}): check the results root's "
                                  "permissions and free space") from exc
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, exc) from exc
        return conn

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def _rel(self, run_dir: Path) -> str:
        try:
            return str(run_dir.relative_to(self.root))
        except ValueError:
            return str(run_dir)

    @_guarded
    def refresh(self) -> Refresh:
        """Bring the index up to date with the run directories (re-reading only what changed)."""
        known = dict(self.conn.execute("SELECT path, stamp FROM runs").fetchall())
        seen: set[str] = set()
        added = updated = 0
        bad: list[str] = []
        with self.conn:
            for d in find_run_dirs(self.root):
                rel = self._rel(d)
                stamp = _stamp(d)
                if stamp is None:
                    continue
                seen.add(rel)
                if known.get(rel) == stamp:
                    continue
                try:
                    run = load_run(d)
                    tags = read_tags(d)
                    entry = entry_for(run, d, tags)
                except StoredResultsError as exc:
                    bad.append(str(exc))
                    if rel in known:
                        self.conn.execute("DELETE FROM runs WHERE path = ?", (rel,))
                    continue
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    bad.append(f"{d / 'run.json'}: its target or host record is not what ssdlab writes "
                               f"({type(exc).__name__}: {exc})")
                    continue
                self._put(rel, entry, stamp)
                if rel in known:
                    updated += 1
                else:
                    added += 1
            gone = [p for p in known if p not in seen]
            for p in gone:
                self.conn.execute("DELETE FROM runs WHERE path = ?", (p,))
        return Refresh(added, updated, len(gone), tuple(bad))

    @_guarded
    def record(self, run: Run, run_dir: Path) -> None:
        """Index one run as it is now (a run that just ended: the next run's ETA learns from it at once, without
        walking the root)."""
        stamp = _stamp(run_dir)
        if stamp is not None:
            with self.conn:
                self._put(self._rel(run_dir), entry_for(run, run_dir, read_tags(run_dir)), stamp)

    @_guarded
    def timings(self, suite: str, kind: str, limit: int = HISTORY_RUNS) -> list[dict[str, Any]]:
        """What the latest complete runs of `suite` on a `kind` target took (results/timing.py), newest first."""
        rows = self.conn.execute("SELECT timing FROM runs WHERE suite = ? AND kind = ? AND status = 'complete' "
                                 "AND timing IS NOT NULL ORDER BY created DESC LIMIT ?", (suite, kind, limit))
        out = []
        for (text,) in rows.fetchall():
            try:
                value = json.loads(text)
            except (TypeError, ValueError):
                continue
            if isinstance(value, dict) and value:
                out.append(value)
        return out

    @_guarded
    def rebuild(self) -> Refresh:
        """Forget everything and index the run directories again."""
        with self.conn:
            self.conn.execute("DELETE FROM tags")
            self.conn.execute("DELETE FROM runs")
        return self.refresh()

    def _put(self, rel: str, e: Entry, stamp: str) -> None:
        self.conn.execute("DELETE FROM runs WHERE path = ?", (rel,))
        values = [getattr(e, c) for c in _COLUMNS]
        values[1] = rel
        self.conn.execute(f"INSERT INTO runs ({', '.join(_COLUMNS)}, stamp, timing) VALUES "  # noqa: S608 - fixed names
                          f"({', '.join('?' * (len(_COLUMNS) + 2))})", (*values, stamp, json.dumps(dict(e.timing))))
        self.conn.executemany("INSERT INTO tags (path, key, value) VALUES (?, ?, ?)",
                              [(rel, k, v) for k, v in e.tags.items()])

    @_guarded
    def entries(self, filters: Filters | None = None) -> list[Entry]:
        """Indexed runs matching the filters, oldest first."""
        f = filters or Filters()
        where: list[str] = []
        args: list[Any] = []
        globs: list[tuple[str, str]] = []  # (column, pattern): matched below, case-insensitively
        for col, value in (("target", f.device), ("model", f.model), ("serial", f.serial),
                           ("firmware", f.firmware)):
            if value and is_glob(value):
                globs.append((col, value.lower()))
            elif value:
                where.append(f"instr(lower({col}), lower(?)) > 0")
                args.append(value)
        if f.verdict:
            where.append("verdict = ?")
            args.append(f.verdict)
        if f.since:
            where.append("created >= ?")
            args.append(f.since)
        if f.until:
            where.append("substr(created, 1, ?) <= ?")
            args.extend([len(f.until), f.until])
        for k, v in f.tags:
            where.append("EXISTS (SELECT 1 FROM tags t WHERE t.path = runs.path AND t.key = ? AND t.value = ?)")
            args.extend([k, v])
        sql = f"SELECT {', '.join(_COLUMNS)} FROM runs"  # noqa: S608 - fixed column names, values bound
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created, path"
        out = []
        for row in self.conn.execute(sql, args).fetchall():
            e = self._entry(row)
            if f.suite and not fnmatch.fnmatchcase(e.suite, f.suite) and Path(e.suite).stem != f.suite:
                continue
            if any(not fnmatch.fnmatchcase(str(getattr(e, col)).lower(), pattern) for col, pattern in globs):
                continue
            out.append(e)
        return out

    def _entry(self, row: Sequence[Any]) -> Entry:
        try:
            return self._read_entry(row)
        except (KeyError, TypeError, ValueError) as exc:  # a row ssdlab did not write
            raise damaged(self.path, exc) from exc

    def _read_entry(self, row: Sequence[Any]) -> Entry:
        d = dict(zip(_COLUMNS, row, strict=True))
        rel = str(d["path"])
        tags = dict(self.conn.execute("SELECT key, value FROM tags WHERE path = ? ORDER BY key", (rel,)).fetchall())
        path = Path(rel) if Path(rel).is_absolute() else self.root / rel
        return Entry(id=d["id"], path=path, run_id=d["run_id"], suite=d["suite"], status=d["status"],
                     verdict=d["verdict"], created=d["created"], target=d["target"], kind=d["kind"],
                     model=d["model"], serial=d["serial"], firmware=d["firmware"], capacity=int(d["capacity"]),
                     points=int(d["points"]), schema=int(d["schema"]), tags=tags)

    @_guarded
    def find(self, ref: str) -> list[Entry]:
        """Runs a reference names: a catalog id (or a prefix of at least 4 of its digits), a run id, or a
        `label` tag."""
        ref = ref.strip()
        matches = [e for e in self.entries() if (len(ref) >= 4 and e.id.startswith(ref.lower()))
                   or e.run_id == ref or e.tags.get("label") == ref]
        exact = [e for e in matches if e.id == ref.lower()]
        return exact or matches


def resolve(ref: str | Path, root: Path | None = None) -> Path:
    """The run directory a command-line RUN names: an existing path (a directory or its run.json), else a
    catalog id, run id or label looked up in the catalog of `root` (default: $SSDLAB_RESULTS or ./results)."""
    p = Path(ref)
    if p.exists():
        return p.parent if p.is_file() and p.name == RUN_FILE else p
    base = root or default_root()
    if not base.is_dir():
        raise UsageError(f"{ref}: no such run directory (and no results root {base} to look it up as a catalog "
                         f"id; pass --results DIR or set {ROOT_ENV})")
    with Catalog(base) as cat:
        cat.refresh()
        found = cat.find(str(ref))
    if not found:
        raise UsageError(f"{ref}: no such run directory, and no run in the catalog of {base} has that id, run id "
                         "or label (see `ssdlab runs`)")
    if len(found) > 1:
        listed = "; ".join(f"{e.id} {e.path}" for e in found[:5])
        raise UsageError(f"{ref} is ambiguous in the catalog of {base}: {listed}; use a longer id or the path")
    return found[0].path


def history(root: Path, suite: str, kind: str) -> list[dict[str, Any]]:
    """What earlier complete runs of `suite` on a `kind` target took, from ROOT's catalog as it stands (not
    brought up to date: a run records itself as it ends, `remember`); [] when there is none or it cannot be
    read (an ETA never stops a run)."""
    if not (root / CATALOG_FILE).is_file():
        return []
    try:
        with Catalog(root) as cat:
            return cat.timings(suite, kind)
    except Exception:  # an index that cannot be read teaches nothing; the run goes on
        return []


def remember(root: Path, run: Run, run_dir: Path) -> None:
    """Index a run that just ended in ROOT's catalog (created if absent, when ROOT is writable), so the next run
    of its suite starts its ETA from what this one took; any failure is ignored (the catalog is an index)."""
    if not os.access(root, os.W_OK):
        return
    try:
        with Catalog(root) as cat:
            cat.record(run, run_dir)
    except Exception:  # a finished run never fails on its index (`ssdlab runs` re-reads it)
        return
