"""What went wrong in one fio run, from its artefacts: I/O errors and verification failures, ready for the
result model (Measurement.extra). Everything is read from the point directory (stderr.txt, its arrival
times) and fio's JSON document; a point hit by a million failures keeps the first MAX_LISTED in run.json
and the full count (stderr.txt keeps them all).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ssdlab.fio import stderr
from ssdlab.fio.ioerrors import EILSEQ, IoError, error_total, job_errors, parse_io_errors
from ssdlab.fio.verify import VerifyFailure, parse_failures

MAX_LISTED = 1000


def _jobs(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(doc.get("jobs") or doc.get("client_stats") or [])


def _verify_type(doc: Mapping[str, Any], job: Mapping[str, Any]) -> str:
    opts = {**(doc.get("global options") or {}), **(job.get("job options") or {})}
    value = str(opts.get("verify", "") or "")
    return "" if value in ("", "0", "none") else value


def verifies(doc: Mapping[str, Any]) -> bool:
    """Whether any job of the run checked data against verify headers."""
    return any(_verify_type(doc, j) for j in _jobs(doc))


def checked_bytes(doc: Mapping[str, Any]) -> int:
    """Bytes read back and checked by jobs that verify (every read of such a job is checked)."""
    total = 0
    for j in _jobs(doc):
        if _verify_type(doc, j):
            read = j.get("read") or {}
            total += int(read.get("io_bytes", 0) or 0)
    return total


def io_errors(point_dir: Path, doc: Mapping[str, Any] | None) -> list[IoError]:
    """Every I/O error of the run: fio's printed ones, else the jobs' recorded error (no offset known)."""
    found = parse_io_errors(stderr.lines(point_dir))
    if not found and doc is not None:
        found = job_errors(doc, ignore=(EILSEQ,))
    return found


def summarize(point_dir: Path, doc: Mapping[str, Any] | None) -> dict[str, Any]:
    """Measurement.extra entries for the run in `point_dir`: 'io_errors' and, for verifying jobs, 'verify'."""
    out: dict[str, Any] = {}
    started, _ = stderr.read_times(point_dir)
    errors = io_errors(point_dir, doc)
    if errors:
        out["io_errors"] = {"count": len(errors),
                            "listed": [_timed(e.to_dict(), started) for e in errors[:MAX_LISTED]],
                            "fio_total_err": error_total(doc) if doc is not None else None}
    if doc is not None and verifies(doc):
        failures = parse_failures(stderr.lines(point_dir))
        checksum = next((_verify_type(doc, j) for j in _jobs(doc) if _verify_type(doc, j)), "")
        out["verify"] = {
            "checksum": checksum, "checked_bytes": checked_bytes(doc), "mismatches": len(failures),
            "header_mismatches": sum(1 for f in failures if f.kind == "header"),
            "listed": [_timed(f.to_dict(), started) for f in failures[:MAX_LISTED]],
        }
    return out


def _timed(record: dict[str, Any], started: str) -> dict[str, Any]:
    """The record with `time`: the wall-clock moment fio reported it (fio's start + its seconds)."""
    seconds = record.get("seconds")
    record["time"] = ""
    if started and seconds is not None:
        with contextlib.suppress(ValueError):
            record["time"] = (datetime.fromisoformat(started) + timedelta(seconds=float(seconds))).isoformat(
                timespec="milliseconds")
    return record


def failure_from_dict(d: Mapping[str, Any]) -> VerifyFailure:
    """A stored failure record (run.json) back as a VerifyFailure."""
    names = VerifyFailure.__dataclass_fields__
    return VerifyFailure(**{k: v for k, v in d.items() if k in names})


def io_error_from_dict(d: Mapping[str, Any]) -> IoError:
    names = IoError.__dataclass_fields__
    return IoError(**{k: v for k, v in d.items() if k in names})


def error_message(errors: list[IoError], total: int | None = None) -> str:
    """One line for a point that hit I/O errors: how many, at how many places, and the first."""
    n = total if total is not None else len(errors)
    places = len({(e.direction, e.offset) for e in errors})
    where = f" at {places} places" if places > 1 else ""
    return f"{n} I/O error{'s' if n != 1 else ''}{where}, the first: {errors[0].describe()}"
