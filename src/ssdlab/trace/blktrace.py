"""blktrace's binary records (`struct blk_io_trace`, 48 bytes and an optional payload of pdu_len bytes) read
without a Python loop per record: runs of payload-free records are read as one strided array, and only records
with a payload cost a step. Queue (Q) or issue (D) events are the I/Os, completions (C) give response times."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ssdlab.errors import UsageError
from ssdlab.trace.block import block_trace
from ssdlab.trace.model import READ, TRIM, WRITE, Trace

MAGIC = 0x65617400  # BLK_IO_TRACE_MAGIC; the low byte is the format version
RECORD = 48
TA_QUEUE, TA_ISSUE, TA_COMPLETE = 1, 7, 8  # __BLK_TA_*
TC_READ, TC_WRITE, TC_NOTIFY, TC_DISCARD = 1 << 0, 1 << 1, 1 << 10, 1 << 13  # BLK_TC_* (above BLK_TC_SHIFT)
TC_SHIFT = 16


def record_dtype(order: str) -> np.dtype:
    return np.dtype([("magic", order + "u4"), ("sequence", order + "u4"), ("time", order + "u8"),
                     ("sector", order + "u8"), ("bytes", order + "u4"), ("action", order + "u4"),
                     ("pid", order + "u4"), ("device", order + "u4"), ("cpu", order + "u4"),
                     ("error", order + "u2"), ("pdu_len", order + "u2")])


def _order(raw: bytes) -> str | None:
    if len(raw) < RECORD:
        return None
    if int.from_bytes(raw[:4], "little") & 0xFFFFFF00 == MAGIC:
        return "<"
    if int.from_bytes(raw[:4], "big") & 0xFFFFFF00 == MAGIC:
        return ">"
    return None


def is_blktrace(raw: bytes) -> bool:
    return _order(raw) is not None


def records(path: str, raw: bytes) -> tuple[npt.NDArray[np.void], list[str]]:
    """Every record of one file, and notes (a file cut short in its last record is read up to it)."""
    order = _order(raw)
    if order is None:
        raise UsageError(f"{path}: not a blktrace file (no blk_io_trace magic at byte 0)")
    dt = record_dtype(order)
    runs: list[npt.NDArray[np.void]] = []
    notes: list[str] = []
    pos, n, block = 0, len(raw), 64
    while pos + RECORD <= n:
        k = min((n - pos) // RECORD, block)
        chunk = np.frombuffer(raw, dtype=dt, count=k, offset=pos)
        good = (chunk["magic"] & 0xFFFFFF00) == MAGIC
        if not good[0]:
            raise UsageError(f"{path}: byte {pos}: not a blktrace record (bad magic); the file is corrupt, or not "
                             "blktrace's (pass --format)")
        bad_at = int(np.argmin(good)) if not bool(good.all()) else k
        payload = np.flatnonzero(chunk["pdu_len"][:bad_at] != 0)
        if payload.size:
            j = int(payload[0])
            runs.append(chunk[: j + 1])
            pos += RECORD * (j + 1) + int(chunk["pdu_len"][j])
            block = 64
            continue
        if bad_at < k:
            raise UsageError(f"{path}: byte {pos + RECORD * bad_at}: not a blktrace record (bad magic); the file "
                             "is corrupt")
        runs.append(chunk)
        pos += RECORD * k
        block = min(block * 2, 1 << 20)
    if pos < n:
        notes.append(f"{path}: the last {n - pos} bytes are not a whole record (cut short): left out")
    if pos > n:
        notes.append(f"{path}: the last record's payload is cut short")
    return (np.concatenate(runs) if runs else np.zeros(0, dtype=dt)), notes


def _events(rec: npt.NDArray[np.void], act: int, empty: bool) -> dict[str, npt.NDArray[np.int64]]:
    """The `act` records (not notifies; of no bytes only when `empty`: flushes, left out later with a note)."""
    action = rec["action"].astype(np.int64)
    cat = action >> TC_SHIFT
    nbytes = rec["bytes"].astype(np.int64)
    sel = ((action & 0xFFFF) == act) & ((cat & TC_NOTIFY) == 0) & ((nbytes > 0) | empty)
    r = rec[sel]
    c = cat[sel]
    sectors = r["bytes"].astype(np.int64) // 512
    op = np.where(c & TC_DISCARD, TRIM, np.where(c & TC_WRITE, WRITE, READ))
    op = np.where(sectors > 0, op, -1)
    dev = r["device"].astype(np.int64)
    sector = r["sector"].astype(np.int64)
    return {"dev": dev, "time": r["time"].astype(np.int64), "sector": sector, "sectors": sectors,
            "op": op.astype(np.int64)}


def read_blktrace(path: str, raws: list[bytes], event: str = "Q") -> Trace:
    """A trace from blktrace's per-CPU files (or blkparse -d's merged one): `event` records (Q or D) are the
    I/Os, C records complete them; the device is MAJOR,MINOR."""
    parts = [records(path, raw) for raw in raws]
    rec = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=record_dtype("<"))
    io = _events(rec, TA_QUEUE if event == "Q" else TA_ISSUE, empty=True)
    comp = _events(rec, TA_COMPLETE, empty=False)
    trace = block_trace(path, "blktrace", event, io, comp if comp["time"].size else None)
    notes = tuple(n for p in parts for n in p[1])
    if notes:
        import dataclasses

        trace = dataclasses.replace(trace, notes=(*trace.notes, *notes))
    return trace
