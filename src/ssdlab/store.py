"""Run directories: layout, atomic run.json writes after every point, loading for report/export/resume.

DIR/run.json                     the Run (schema_version'ed), rewritten atomically after each point
DIR/points/<point-id>/job.fio    the exact job file
DIR/points/<point-id>/cmd.txt    the exact fio command (re-runnable)
DIR/points/<point-id>/fio.json   fio's raw json+ output
DIR/report.html                  the rendered report (re-render any time with `ssdlab report DIR`)
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from ssdlab import atomic
from ssdlab.errors import ResultsDirError, StoredResultsError
from ssdlab.model import PointResult, Run, run_from_dict, to_dict

RUN_FILE = "run.json"


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


_POINTS_SLOT = "\u0000ssdlab-points\u0000"


def _point_json(result: PointResult) -> str:
    """JSON text of one point result, computed once: results are immutable, and a long run (a PTS run has
    ~1400 points with latency bins) would otherwise re-serialise every earlier point after each new one."""
    cached: str | None = result.__dict__.get("_json_text")
    if cached is None:
        cached = json.dumps(to_dict(result), indent=1)
        object.__setattr__(result, "_json_text", cached)  # a memo, not state: to_dict ignores it
    return cached


def run_json(run: Run) -> str:
    """run.json text: the run's own fields, then its points (each serialised once and reused)."""
    head = to_dict(dataclasses.replace(run, points=()))
    head["points"] = _POINTS_SLOT
    text = json.dumps(head, indent=1)
    points = "[" + ",\n".join(_point_json(p) for p in run.points) + "]"
    return text.replace(json.dumps(_POINTS_SLOT), points, 1) + "\n"


def save_run(run_dir: Path, run: Run) -> None:
    """Write run.json atomically (temp file + rename): a crash leaves the previous complete version."""
    atomic.write_text(run_dir / RUN_FILE, run_json(run))


def load_run(run_dir: Path) -> Run:
    path = run_dir / RUN_FILE if run_dir.is_dir() else run_dir
    if not path.exists():
        raise StoredResultsError(f"no {RUN_FILE} in {run_dir}: name a directory written by `ssdlab run`")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise StoredResultsError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise StoredResultsError(f"{path} does not hold a run object")
    return run_from_dict(data)
