"""Stored runs for comparison, gate, catalog and JUnit tests: the committed fixture runs (tests/data/runs/) and
copies of them with every throughput value scaled by a known factor, so the expected ratio is exact. A run of
results schema 2 may keep points in its points log (points.jsonl) as well as in run.json: both are scaled."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

RUNS_DIR = Path(__file__).parent / "data" / "runs"
SCHEMA1 = RUNS_DIR / "schema1"
SCHEMA2 = RUNS_DIR / "schema2"
SCALED_SERIES = ("read_iops", "write_iops", "read_bw_MBps", "write_bw_MBps")


def fixture_dirs() -> list[Path]:
    """Every committed fixture run directory, of every schema version."""
    return sorted(p.parent for p in RUNS_DIR.glob("schema*/*/run.json"))


def copy_run(name: str, dst: Path, *, scale: float = 1.0, run_id: str | None = None,
             drop: Iterable[str] = (), source: Path = SCHEMA1) -> Path:
    """Copy fixture run `name` to dst; IOPS and bandwidth of every point (and their per-interval series) times
    `scale`; points whose id is in `drop` left out; a new run id (and creation time) so it is another run."""
    shutil.copytree(source / name, dst)
    path = dst / "run.json"
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    dropped = set(drop)
    doc["points"] = [_scaled(p, scale) for p in doc["points"] if p["point"]["id"] not in dropped]
    doc["run_id"] = run_id or f"{doc['run_id']}-x{scale:g}"
    path.write_text(json.dumps(doc), encoding="utf-8")
    log = dst / "points.jsonl"
    if log.exists():
        records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        log.write_text("".join(json.dumps(_scaled(r, scale)) + "\n" for r in records
                               if r["point"]["id"] not in dropped), encoding="utf-8")
    return dst


def _scaled(point: dict[str, Any], scale: float) -> dict[str, Any]:
    m = point.get("measurement")
    if not m:
        return point
    for d in m["directions"].values():
        d["iops"] *= scale
        d["bw_bytes"] *= scale
    for key in SCALED_SERIES:
        if key in m.get("series", {}):
            m["series"][key] = [v * scale for v in m["series"][key]]
    return point
