"""Trace formats -> one Trace (model.py): fio iologs (version 2 and 3), blkparse's default text output, blktrace
binary (blktrace.py), SNIA IOTTA's MSR-Cambridge CSV, and the Alibaba (2020) and Tencent CBS (2018) block-trace
CSVs, with the columns and units their publishers' readmes give (docs/replay.md lists them). `load` picks the
format from the file's content unless told, applies the volume filter, and turns a malformed line into one
UsageError naming the file, the line and the field (exit 2)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ssdlab.errors import UsageError
from ssdlab.trace.block import block_trace
from ssdlab.trace.model import READ, TRIM, WRITE, Trace, make_trace
from ssdlab.trace.text import (
    I64,
    Text,
    factorize,
    parse_choice,
    parse_decimal_ns,
    parse_uint,
    read_bytes,
)

FILETIME_UNIX_S = 11_644_473_600  # seconds from 1601-01-01 (Windows FILETIME's epoch) to 1970-01-01


@dataclass(frozen=True)
class Format:
    name: str
    summary: str
    read: Callable[[str, bytes, str], Trace]  # (path, bytes, blk event) -> Trace


def _numbers_of(text: Text, lines: I64, start: I64, end: I64, field: str) -> I64:
    value, bad = parse_uint(text.data, start, end)
    text.check(bad, lines, field, "not a whole number", start, end)
    return value


def _no_header(text: Text) -> I64:
    """Content lines, a first line without any digit (a header row) left out."""
    lines = text.content_lines()
    if lines.size and not re.search(rb"\d", bytes(text.data[text.start[lines[0]]:text.end[lines[0]]])):
        lines = lines[1:]
    return lines


def _empty(path: str, fmt: str) -> Trace:
    z = np.zeros(0, dtype=np.int64)
    return make_trace(path, fmt, z, z, z, np.zeros(0, dtype=np.uint8))


def _positive_sizes(text: Text, lines: I64, size: I64, start: I64, end: I64, field: str) -> None:
    text.check(size <= 0, lines, field, "an I/O of no bytes", start, end)


# ---------------------------------------------------------------- SNIA IOTTA MSR-Cambridge

def read_msr(path: str, raw: bytes, event: str = "") -> Trace:
    """Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime: times in Windows FILETIME ticks (100 ns),
    Type Read/Write, Offset and Size in bytes; a volume is Hostname_DiskNumber (as the set's file names)."""
    text = Text.of(path, raw)
    lines = _no_header(text)
    if not lines.size:
        return _empty(path, "msr")
    s, e = text.csv_fields(lines, 7)
    d = text.data
    ticks = _numbers_of(text, lines, s[:, 0], e[:, 0], "Timestamp")
    disk = _numbers_of(text, lines, s[:, 2], e[:, 2], "DiskNumber")
    op, bad = parse_choice(d, s[:, 3], e[:, 3], {b"Read": READ, b"Write": WRITE, b"read": READ, b"write": WRITE})
    text.check(bad, lines, "Type", "not Read or Write", s[:, 3], e[:, 3])
    offset = _numbers_of(text, lines, s[:, 4], e[:, 4], "Offset")
    size = _numbers_of(text, lines, s[:, 5], e[:, 5], "Size")
    _positive_sizes(text, lines, size, s[:, 5], e[:, 5], "Size")
    resp = _numbers_of(text, lines, s[:, 6], e[:, 6], "ResponseTime")
    text.check(e[:, 1] <= s[:, 1], lines, "Hostname", "empty", s[:, 1], e[:, 1])
    codes, first = factorize(d, s[:, 1], e[:, 1], extra=disk)
    names = tuple(f"{text.field_text(int(s[i, 1]), int(e[i, 1]), 200)}_{int(disk[i])}" for i in first)
    t0 = int(ticks.min())
    return make_trace(path, "msr", (ticks - t0) * 100, offset, size, op.astype(np.uint8), latency=resp * 100,
                      volume=codes, volumes=names, origin_value=round(t0 / 10_000_000 - FILETIME_UNIX_S),
                      origin_unit="unix s")


# ---------------------------------------------------------------- Alibaba block traces (2020)

def read_alibaba(path: str, raw: bytes, event: str = "") -> Trace:
    """device_id,opcode,offset,length,timestamp: opcode R/W, offset and length in bytes, timestamp in
    microseconds (Unix); many devices per file."""
    text = Text.of(path, raw)
    lines = _no_header(text)
    if not lines.size:
        return _empty(path, "alibaba")
    s, e = text.csv_fields(lines, 5)
    device = _numbers_of(text, lines, s[:, 0], e[:, 0], "device_id")
    op, bad = parse_choice(text.data, s[:, 1], e[:, 1], {b"R": READ, b"W": WRITE, b"r": READ, b"w": WRITE})
    text.check(bad, lines, "opcode", "not R or W", s[:, 1], e[:, 1])
    offset = _numbers_of(text, lines, s[:, 2], e[:, 2], "offset")
    size = _numbers_of(text, lines, s[:, 3], e[:, 3], "length")
    _positive_sizes(text, lines, size, s[:, 3], e[:, 3], "length")
    us = _numbers_of(text, lines, s[:, 4], e[:, 4], "timestamp")
    ids, codes = np.unique(device, return_inverse=True)
    t0 = int(us.min())
    return make_trace(path, "alibaba", (us - t0) * 1000, offset, size, op.astype(np.uint8),
                      volume=codes.astype(np.int32).reshape(-1), volumes=tuple(str(int(v)) for v in ids),
                      origin_value=t0 // 1_000_000, origin_unit="unix s")


# ---------------------------------------------------------------- Tencent CBS (2018)

def read_tencent(path: str, raw: bytes, event: str = "") -> Trace:
    """Timestamp,Offset,Size,IOType,VolumeID: Timestamp in seconds (Unix), Offset and Size in 512-byte sectors,
    IOType 0 read / 1 write; many volumes per file."""
    text = Text.of(path, raw)
    lines = _no_header(text)
    if not lines.size:
        return _empty(path, "tencent")
    s, e = text.csv_fields(lines, 5)
    t_ns, bad = parse_decimal_ns(text.data, s[:, 0], e[:, 0])
    text.check(bad, lines, "Timestamp", "not a number of seconds", s[:, 0], e[:, 0])
    offset = _numbers_of(text, lines, s[:, 1], e[:, 1], "Offset")
    size = _numbers_of(text, lines, s[:, 2], e[:, 2], "Size")
    _positive_sizes(text, lines, size, s[:, 2], e[:, 2], "Size")
    op, bad = parse_choice(text.data, s[:, 3], e[:, 3], {b"0": READ, b"1": WRITE})
    text.check(bad, lines, "IOType", "not 0 (read) or 1 (write)", s[:, 3], e[:, 3])
    vol = _numbers_of(text, lines, s[:, 4], e[:, 4], "VolumeID")
    ids, codes = np.unique(vol, return_inverse=True)
    t0 = int(t_ns.min())
    return make_trace(path, "tencent", t_ns - t0, offset * 512, size * 512, op.astype(np.uint8),
                      volume=codes.astype(np.int32).reshape(-1), volumes=tuple(str(int(v)) for v in ids),
                      origin_value=t0 // 1_000_000_000, origin_unit="unix s",
                      notes=("Tencent CBS timestamps are whole seconds: the I/Os of one second arrive together",))


# ---------------------------------------------------------------- fio iolog (versions 2 and 3)

_IOLOG_ACTIONS = {b"read": 0, b"write": 1, b"trim": 2, b"sync": 3, b"datasync": 4, b"wait": 5, b"add": 6,
                  b"open": 7, b"close": 8}


def read_iolog(path: str, raw: bytes, event: str = "") -> Trace:
    """fio's iolog: version 2 (`FILE ACTION [OFFSET LENGTH]`, no times: back to back, except a `wait`, which fio
    3.33 treats as the time in ms since the job started) and version 3 (`TIMESTAMP FILE ACTION [OFFSET LENGTH]`,
    timestamps in microseconds as fio writes them). The file an I/O names is its volume."""
    text = Text.of(path, raw)
    lines = text.content_lines()
    head = text.line(int(lines[0])).strip() if lines.size else ""
    version = {"fio version 2 iolog": 2, "fio version 3 iolog": 3}.get(head)
    if version is None:
        raise UsageError(f"{path}:1: not a fio iolog (the first line must be 'fio version 2 iolog' or "
                         "'fio version 3 iolog'; version 1 logs are not supported, as by fio)")
    lines = lines[1:]
    if not lines.size:
        return _empty(path, f"iolog{version}")
    k = 5 if version == 3 else 4
    s, e, n = text.tokens(lines, k)
    a = 2 if version == 3 else 1
    short = n < a + 1
    text.check(short | (n > k), lines, "line", f"expected {k - 2} or {k} fields", text.start[lines], text.end[lines])
    action, bad = parse_choice(text.data, s[:, a], e[:, a], _IOLOG_ACTIONS)
    text.check(bad, lines, "action", "not read, write, trim, sync, datasync, wait, add, open or close",
               s[:, a], e[:, a])
    if version == 3:
        stamp = _numbers_of(text, lines, s[:, 0], e[:, 0], "timestamp")
        time_ns = stamp * 1000
    else:
        time_ns = _iolog2_times(text, lines, s, e, n, action)
    io = action <= 2
    text.check(io & (n != k), lines, "line", "a read, write or trim needs an offset and a length",
               text.start[lines], text.end[lines])
    rows = np.flatnonzero(io)
    sub = lines[rows]
    offset = _numbers_of(text, sub, s[rows, a + 1], e[rows, a + 1], "offset")
    size = _numbers_of(text, sub, s[rows, a + 2], e[rows, a + 2], "length")
    _positive_sizes(text, sub, size, s[rows, a + 2], e[rows, a + 2], "length")
    f = a - 1
    codes, first = factorize(text.data, s[rows, f], e[rows, f])
    names = tuple(text.field_text(int(s[rows[i], f]), int(e[rows[i], f]), 400) for i in first)
    syncs = int(np.count_nonzero((action == 3) | (action == 4)))
    notes: tuple[str, ...] = (f"{syncs} sync/datasync actions are not I/O and are left out",) if syncs else ()
    if version == 2 and not bool(np.any(action == 5)):
        notes += ("a version 2 iolog has no times: its I/Os arrive back to back",)
    return make_trace(path, f"iolog{version}", time_ns[rows], offset, size, action[rows].astype(np.uint8),
                      volume=codes, volumes=names, notes=notes)


def _iolog2_times(text: Text, lines: I64, s: I64, e: I64, n: I64, action: I64) -> I64:
    """Times of a version 2 iolog: 0 until a `wait FILE OFFSET`, which fio 3.33 holds until OFFSET ms after the
    job started; every later I/O arrives then (or later, waits never go back)."""
    wait = action == 5
    t = np.zeros(lines.shape, dtype=np.int64)
    if bool(wait.any()):
        rows = np.flatnonzero(wait)
        text.check(n[rows] < 3, lines[rows], "line", "a wait needs a time", text.start[lines[rows]],
                   text.end[lines[rows]])
        ms = _numbers_of(text, lines[rows], s[rows, 2], e[rows, 2], "wait time")
        t[rows] = ms * 1_000_000
        t = np.maximum.accumulate(t)
    return t


# ---------------------------------------------------------------- blkparse text

def read_blkparse(path: str, raw: bytes, event: str = "Q") -> Trace:
    """blkparse's default output: `MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + SECTORS [PROCESS]`. The I/Os
    are the `event` lines (Q: queued, as fio replays blktraces; D: issued to the device) with a sector range;
    a C (completion) of the same sectors gives the response time. RWBS: D discard, W write, R read. The lines are
    read BLK_CHUNK at a time, so the columns' bytes stay in the CPU's caches while they are parsed."""
    text = Text.of(path, raw)
    lines = text.content_lines()
    io: list[dict[str, I64]] = []
    comp: list[dict[str, I64]] = []
    for i in range(0, lines.shape[0], BLK_CHUNK):
        chunk = lines[i:i + BLK_CHUNK]
        s, e, n = text.tokens(chunk, 10)
        d = text.data
        plus = (n >= 10) & (e[:, 8] - s[:, 8] == 1) & (d[np.maximum(s[:, 8], 0)] == ord("+"))
        act, _ = parse_choice(d, s[:, 5], e[:, 5], {event.encode(): 1, b"C": 2})
        io.append(_blk_columns(text, chunk, s, e, plus & (act == 1)))
        comp.append(_blk_columns(text, chunk, s, e, plus & (act == 2)))
    if not io or not sum(len(x["time"]) for x in io):
        return _empty(path, "blkparse")
    joined = {k: np.concatenate([x[k] for x in io]) for k in io[0]}
    done = {k: np.concatenate([x[k] for x in comp]) for k in comp[0]}
    return block_trace(path, "blkparse", event, joined, done if done["time"].shape[0] else None)


BLK_CHUNK = 65536  # blkparse lines parsed at once


_RWBS_BITS = np.zeros(256, dtype=np.uint8)  # blkparse's RWBS letters that decide the direction
_RWBS_BITS[[ord("R"), ord("W"), ord("D")]] = [1, 2, 4]


def _blk_columns(text: Text, lines: I64, s: I64, e: I64, rows_mask: np.ndarray) -> dict[str, I64]:
    """Device, time, direction, sector and length of the selected blkparse lines, each field checked."""
    rows = np.flatnonzero(rows_mask)
    sub = lines[rows]
    d = text.data
    col = {j: (np.ascontiguousarray(s[rows, j]), np.ascontiguousarray(e[rows, j])) for j in (0, 3, 6, 7, 9)}
    ds, de = col[0]
    comma = de.copy()
    for k in range(8):  # MAJOR,MINOR: the comma within the device's first 8 bytes
        here = (ds + k < de) & (d[ds + k] == ord(",")) & (comma == de)
        comma = np.where(here, ds + k, comma)
    text.check(comma == de, sub, "device", "not MAJOR,MINOR", ds, de)
    major = _numbers_of(text, sub, ds, comma, "device")
    minor = _numbers_of(text, sub, comma + 1, de, "device")
    t, bad = parse_decimal_ns(d, *col[3])
    text.check(bad, sub, "time", "not a number of seconds", *col[3])
    sector = _numbers_of(text, sub, *col[7], "sector")
    sectors = _numbers_of(text, sub, *col[9], "sectors")
    rs, re_ = col[6]
    bits = np.zeros(rows.shape, dtype=np.uint8)
    for k in range(8):  # RWBS: R read, W write, D discard (with flags such as S, A, F, M around them)
        bits |= np.where(rs + k < re_, _RWBS_BITS[d[rs + k]], 0).astype(np.uint8)
    op = np.where(bits & 4, TRIM, np.where(bits & 2, WRITE, np.where(bits & 1, READ, -1)))
    op = np.where(sectors > 0, op, -1)
    dev = (major << 20) | minor
    return {"dev": dev, "time": t, "sector": sector, "sectors": sectors, "op": op}


# ---------------------------------------------------------------- registry, detection, load

def _read_blktrace(path: str, raw: bytes, event: str = "Q") -> Trace:
    from ssdlab.trace.blktrace import read_blktrace

    return read_blktrace(path, [raw], event)


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("iolog", "fio iolog, version 2 or 3 (write_iolog=); v3 timestamps in microseconds", read_iolog),
    Format("blkparse", "blkparse's default text output (Q or D events; C gives response times)", read_blkparse),
    Format("blktrace", "blktrace binary (NAME.blktrace.N per CPU, or blkparse -d output)", _read_blktrace),
    Format("msr", "SNIA IOTTA MSR-Cambridge CSV (FILETIME ticks, bytes, response times)", read_msr),
    Format("alibaba", "Alibaba block traces CSV: device_id,opcode,offset,length,timestamp(us)", read_alibaba),
    Format("tencent", "Tencent CBS CSV: Timestamp(s),Offset,Size(sectors),IOType,VolumeID", read_tencent),
)}

_BLKPARSE_RE = re.compile(rb"^\s*\d+,\d+\s+\d+\s+\d+\s+\d+\.\d+\s+\d+\s+\S+")


def detect(path: str, raw: bytes) -> str:
    """The format of a trace from its first bytes and line; one line when it is none of them."""
    from ssdlab.trace.blktrace import is_blktrace

    if is_blktrace(raw):
        return "blktrace"
    head = raw[:4096].split(b"\n", 1)[0].rstrip(b"\r")
    if head.startswith(b"fio version "):
        return "iolog"
    if _BLKPARSE_RE.match(head):
        return "blkparse"
    first = next((ln.rstrip(b"\r") for ln in raw[:65536].split(b"\n") if re.search(rb"\d", ln)), b"")
    fields = [f.strip() for f in first.split(b",")]
    if len(fields) == 7 and fields[3] in (b"Read", b"Write", b"read", b"write"):
        return "msr"
    if len(fields) == 5 and fields[1] in (b"R", b"W", b"r", b"w"):
        return "alibaba"
    if len(fields) == 5 and fields[3] in (b"0", b"1"):
        return "tencent"
    raise UsageError(f"{path}: cannot tell the trace's format from its first line ({head[:60]!r}); pass "
                     f"--format ({', '.join(FORMATS)})")


def trace_files(path: Path) -> list[Path]:
    """The files of one trace: the path itself, or blktrace's per-CPU files NAME.blktrace.N when the path is
    one of them or their NAME."""
    m = re.fullmatch(r"(.*)\.blktrace\.\d+", path.name)
    base = path.parent / m.group(1) if m else path
    siblings = sorted(base.parent.glob(base.name + ".blktrace.*"),
                      key=lambda p: int(p.name.rsplit(".", 1)[1]) if p.name.rsplit(".", 1)[1].isdigit() else -1)
    if (m or not path.exists()) and siblings:
        return siblings
    if not path.exists():
        raise UsageError(f"trace {path} does not exist")
    return [path]


def load(path: str | Path, fmt: str | None = None, *, volume: str | None = None, event: str = "Q") -> Trace:
    """Read a trace (`fmt` None or 'auto': detected), keeping one volume when asked."""
    p = Path(path).expanduser()
    files = trace_files(p)
    name = fmt if fmt and fmt != "auto" else None
    if name is not None and name not in FORMATS:
        raise UsageError(f"unknown trace format {fmt!r}: use one of auto, {', '.join(FORMATS)}")
    if event not in ("Q", "D"):
        raise UsageError(f"--event {event}: blktrace I/Os are Q (queued) or D (issued) events")
    raws = [read_bytes(f) for f in files]
    kind = name or detect(str(files[0]), raws[0])
    if kind == "blktrace":  # per-CPU files share one clock; a completion may be in another CPU's file
        from ssdlab.trace.blktrace import read_blktrace

        trace = read_blktrace(str(files[0]) if len(files) == 1 else str(p), raws, event)
    elif len(files) > 1:
        raise UsageError(f"{p}: per-CPU files are blktrace's; these are {kind} (pass one file)")
    else:
        trace = FORMATS[kind].read(str(files[0]), raws[0], event)
    if volume is not None:
        trace = trace.only_volume(volume)
    return trace
