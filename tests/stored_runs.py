"""Stored runs for comparison, gate, catalog and JUnit tests: the committed fixture runs (tests/data/runs/) and
copies of them with every throughput value scaled by a known factor, so the expected ratio is exact."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

RUNS_DIR = Path(__file__).parent / "data" / "runs"
SCHEMA1 = RUNS_DIR / "schema1"
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
    doc["points"] = [p for p in doc["points"] if p["point"]["id"] not in dropped]
    for p in doc["points"]:
        m = p.get("measurement")
        if not m:
            continue
        for d in m["directions"].values():
            d["iops"] *= scale
            d["bw_bytes"] *= scale
        for key in SCALED_SERIES:
            if key in m.get("series", {}):
                m["series"][key] = [v * scale for v in m["series"][key]]
    doc["run_id"] = run_id or f"{doc['run_id']}-x{scale:g}"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return dst
