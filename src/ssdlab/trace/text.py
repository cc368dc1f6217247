"""Vectorised reading of text traces: a whole file as one byte array, its lines, comma-separated fields or
whitespace-separated tokens as (start, end) index arrays, and numbers, decimals, choices and names parsed from
them column by column (one numpy pass per character position), so a million-line trace loads without a Python
object per line. A field that is not what its column holds is one UsageError naming the file, line and field."""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ssdlab.errors import UsageError

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.bool_]

MAX_DIGITS = 18  # every value of 18 digits fits in an int64
PAD = 64  # zero bytes after a file's data (Text.of)
LEAD = 16  # leading blanks looked through at once (Text.content_lines)
COMMA, SPACE, TAB, CR, LF, DOT, HASH = 44, 32, 9, 13, 10, 46, 35


def read_bytes(path: Path) -> bytes:
    """The file's bytes (gzip-compressed files, `.gz`, decompressed); an unreadable file is one line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read trace {path}: {exc.strerror or exc}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise UsageError(f"cannot read trace {path}: not a complete gzip file ({exc})") from None
    return raw


@dataclass(frozen=True, eq=False)
class Text:
    """A text file as bytes and lines: line i is data[start[i]:end[i]] (its line break and a '\\r' before it
    left out); line numbers in messages count from 1."""

    path: str
    data: U8
    start: I64
    end: I64
    newline: I64  # the position of each line's '\n' (the data always ends with one)

    @classmethod
    def of(cls, path: str, raw: bytes) -> Text:
        if not raw.endswith(b"\n"):
            raw += b"\n"
        # zero bytes after the end: column parsers read up to MAX_DIGITS past a field's start without a bounds
        # check (the last field of the file included)
        data = np.frombuffer(raw + bytes(PAD), dtype=np.uint8)
        newline = np.flatnonzero(data == LF)
        start = np.empty_like(newline)
        start[0] = 0
        start[1:] = newline[:-1] + 1
        end = newline.copy()
        has_cr = (end > start) & (data[np.maximum(end - 1, 0)] == CR)
        end -= has_cr
        return cls(path=path, data=data, start=start, end=end, newline=newline)

    def __len__(self) -> int:
        return int(self.start.shape[0])


    def content_lines(self, comment: bytes = b"#") -> I64:
        """Indices of the lines that hold something (not blank, not a comment): a line's first byte that is not
        a space or tab decides (looked for up to LEAD bytes in, vectorised; further in, line by line)."""
        d = self.data
        first = np.full(self.start.shape, -1, dtype=np.int64)  # the first other byte's position, -1: none yet
        pos = self.start.copy()
        for _ in range(LEAD):
            open_ = (first < 0) & (pos < self.end)
            if not bool(open_.any()):
                break
            c = d[pos]
            found = open_ & (c != SPACE) & (c != TAB)
            first = np.where(found, pos, first)
            pos = np.where(open_ & ~found, pos + 1, pos)
        deep = np.flatnonzero((first < 0) & (pos < self.end))
        for i in deep:  # lines indented by more than LEAD blanks: rare
            text = bytes(d[int(pos[i]):int(self.end[i])])
            stripped = len(text) - len(text.lstrip(b" \t"))
            if stripped < len(text):
                first[i] = int(pos[i]) + stripped
        keep = (first >= 0) & (d[np.maximum(first, 0)] != comment[0])
        return np.flatnonzero(keep)

    def line(self, i: int) -> str:
        return bytes(self.data[int(self.start[i]):int(self.end[i])]).decode("utf-8", errors="replace")

    def field_text(self, start: int, end: int, limit: int = 40) -> str:
        text = bytes(self.data[start:end]).decode("utf-8", errors="replace")
        return text if len(text) <= limit else text[:limit] + "..."

    def error(self, line: int, field: str, problem: str) -> UsageError:
        """The one-line message for a bad field on line index `line`."""
        return UsageError(f"{self.path}:{line + 1}: {field}: {problem}; fix or remove that line (or pick the "
                          "format with --format)")

    def check(self, bad: Mask, lines: I64, field: str, problem: str, start: I64, end: I64) -> None:
        """Raise the error of the first row `bad` marks (rows are `lines`' lines, fields start..end)."""
        if bool(bad.any()):
            r = int(np.argmax(bad))
            text = self.field_text(int(start[r]), int(end[r]))
            raise self.error(int(lines[r]), field, f"{problem} (found {text!r})")

    # ------------------------------------------------------------ fields

    def csv_fields(self, lines: I64, ncols: int, delimiter: int = COMMA) -> tuple[I64, I64]:
        """(start, end) of each of `ncols` delimited fields of each line in `lines`, spaces around a field left
        out; a line with another number of fields is one error."""
        marks = np.flatnonzero(self.data == delimiter)
        per = ncols - 1
        if per and marks.shape[0] == per * lines.shape[0]:  # the common case: every mark on a kept line
            pos = marks.reshape(-1, per)
            if bool(np.all(pos[:, 0] > self.start[lines])) and bool(np.all(pos[:, -1] < self.newline[lines])):
                starts = np.concatenate([self.start[lines][:, None], pos + 1], axis=1)
                ends = np.concatenate([pos, self.end[lines][:, None]], axis=1)
                return self._trim(starts, ends)
        line_of = np.searchsorted(self.newline, marks)
        count = np.bincount(line_of, minlength=len(self))
        first = np.cumsum(count) - count
        n = count[lines]
        wrong = n != ncols - 1
        if bool(wrong.any()):
            r = int(np.argmax(wrong))
            whole = self.field_text(int(self.start[lines[r]]), int(self.end[lines[r]]), 80)
            raise self.error(int(lines[r]), "line", f"expected {ncols} comma-separated fields, found "
                                                    f"{int(n[r]) + 1} ({whole!r})")
        pos = marks[first[lines][:, None] + np.arange(ncols - 1)] if ncols > 1 else np.empty((len(lines), 0), np.int64)
        starts = np.concatenate([self.start[lines][:, None], pos + 1], axis=1)
        ends = np.concatenate([pos, self.end[lines][:, None]], axis=1)
        return self._trim(starts, ends)

    def _trim(self, starts: I64, ends: I64) -> tuple[I64, I64]:
        """Fields with leading and trailing spaces left out (a few passes: fields rarely have any)."""
        starts, ends = np.asfortranarray(starts), np.asfortranarray(ends)  # a column's fields: contiguous
        for _ in range(8):
            lead = (starts < ends) & (self.data[starts] == SPACE)
            if not bool(lead.any()):
                break
            starts = starts + lead
        for _ in range(8):
            trail = (ends > starts) & (self.data[ends - 1] == SPACE)
            if not bool(trail.any()):
                break
            ends = ends - trail
        return starts, ends

    def tokens(self, lines: I64, k: int) -> tuple[I64, I64, I64]:
        """(start, end) of the first `k` whitespace-separated tokens (runs of bytes above the space) of each line
        in `lines`, and how many tokens each line has; a line with fewer than `k` has -1 for the missing ones.
        Lines are taken TOKEN_CHUNK at a time: a chunk's bytes and token edges stay in the CPU's caches (the
        whole file's edges at once run to hundreds of MB for a blkparse file)."""
        parts = [self._tokens(lines[i:i + TOKEN_CHUNK], k) for i in range(0, lines.shape[0], TOKEN_CHUNK)]
        if not parts:
            empty = np.zeros((0, k), dtype=np.int64)
            return empty, empty.copy(), np.zeros(0, dtype=np.int64)
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]))

    def _tokens(self, lines: I64, k: int) -> tuple[I64, I64, I64]:
        lo, hi = int(self.start[lines[0]]), int(self.newline[lines[-1]]) + 1  # the chunk ends with a line break
        tok = self.data[lo:hi] > SPACE  # a token is a run of bytes above the space (tabs, line breaks separate too)
        change = np.flatnonzero(tok[1:] != tok[:-1]) + 1  # token edges alternate: start, end, start, end ...
        if tok[0]:
            change = np.concatenate([np.zeros(1, dtype=change.dtype), change])
        change += lo
        tstart, tend = change[0::2], change[1::2]
        # tokens are in file order: a line's are those starting between its start and its line break
        first = np.searchsorted(tstart, self.start[lines])
        n = np.searchsorted(tstart, self.newline[lines]) - first
        idx = first[:, None] + np.arange(k)
        ok = np.arange(k) < n[:, None]
        if tstart.shape[0] == 0:
            return np.full(idx.shape, -1), np.full(idx.shape, -1), n
        safe = np.where(ok, idx, 0)
        return np.where(ok, tstart[safe], -1), np.where(ok, tend[safe], -1), n


TOKEN_CHUNK = 65536  # lines tokenised at once (Text.tokens)


# ---------------------------------------------------------------- column parsers


def _byte(data: U8, pos: I64) -> U8:
    """The bytes at `pos`, positions past the end reading the last (a zero byte of the padding: Text.of).
    Positions within PAD bytes of a field are read directly (data[pos]) where it counts."""
    out: U8 = data[np.minimum(pos, data.shape[0] - 1)]
    return out


def parse_uint(data: U8, start: I64, end: I64) -> tuple[I64, Mask]:
    """Unsigned decimal integers (up to 18 digits) and a mask of fields that are not one."""
    width = end - start
    bad = (width <= 0) | (width > MAX_DIGITS)
    value = np.zeros(start.shape, dtype=np.int64)
    wmax = int(min(int(width.max()), MAX_DIGITS)) if width.size else 0
    for k in range(wmax):
        active = k < width
        digit = data[start + k] - np.uint8(48)  # below '0' wraps round to above 9
        bad |= active & (digit > 9)
        value = np.where(active, value * 10 + digit, value)
    return value, bad


def parse_int(data: U8, start: I64, end: I64) -> tuple[I64, Mask]:
    """Decimal integers with an optional leading '-'."""
    neg = (end > start) & (_byte(data, start) == ord("-"))
    value, bad = parse_uint(data, start + neg, end)
    return np.where(neg, -value, value), bad


def parse_decimal_ns(data: U8, start: I64, end: I64, unit_ns: int = 1_000_000_000) -> tuple[I64, Mask]:
    """Non-negative decimals ('12.000345678') of a unit (seconds by default) as whole nanoseconds (digits beyond
    nanoseconds are cut), and a mask of fields that are not one."""
    width = end - start
    dot = end.copy()
    wmax = int(width.max()) if width.size else 0
    for k in range(min(wmax, 40)):
        here = (k < width) & (data[start + k] == DOT) & (dot == end)
        dot = np.where(here, start + k, dot)
    whole, bad = parse_uint(data, start, dot)
    has_frac = dot < end
    frac_end = np.minimum(end, dot + 10)
    frac, frac_bad = parse_uint(data, dot + 1, np.where(has_frac, frac_end, dot + 2))
    frac_bad &= has_frac & (frac_end > dot + 1)
    # nanoseconds of the unit: the fraction's digits scaled to 9 places, then to the unit
    places = np.where(has_frac, frac_end - dot - 1, 0)
    frac_ns = np.where(has_frac & (places > 0), frac * (10 ** (9 - np.clip(places, 0, 9))), 0)
    per_ns = unit_ns / 1_000_000_000
    value = whole * unit_ns + (frac_ns * per_ns).astype(np.int64)
    return value, bad | frac_bad | ((dot == start) & has_frac & (end == dot + 1))


def parse_choice(data: U8, start: I64, end: I64, choices: Mapping[bytes, int]) -> tuple[I64, Mask]:
    """Fields that must be one of `choices` (exact bytes) -> their values, and a mask of fields that are none."""
    value = np.full(start.shape, -1, dtype=np.int64)
    width = end - start
    for text, code in choices.items():
        same = width == len(text)
        for k, byte in enumerate(text[:PAD]):
            same &= data[start + k] == byte
        value = np.where(same & (value < 0), code, value)
    return value, value < 0


def factorize(data: U8, start: I64, end: I64, extra: I64 | None = None) -> tuple[npt.NDArray[np.int32], list[int]]:
    """Group fields by their text (and `extra`, a number that also tells groups apart): a code per field and,
    per code, the index of its first field. Texts are hashed column by column (64-bit FNV-1a) and every field is
    then compared with its group's first, so two texts that hash alike cannot share a code."""
    width = end - start
    h = np.full(start.shape, 0xCBF29CE484222325, dtype=np.uint64)
    prime = np.uint64(0x100000001B3)
    wmax = int(width.max()) if width.size else 0
    with np.errstate(over="ignore"):
        for k in range(wmax):
            active = k < width
            h = np.where(active, (h ^ _byte(data, start + k).astype(np.uint64)) * prime, h)
        h ^= width.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        if extra is not None:
            h ^= (extra.astype(np.uint64) + np.uint64(1)) * np.uint64(0xC2B2AE3D27D4EB4F)
    _, first, codes = np.unique(h, return_index=True, return_inverse=True)
    rep = first[codes]
    same = width == width[rep]
    for k in range(wmax):
        same &= (k >= width) | (_byte(data, start + k) == _byte(data, start[rep] + k))
    if extra is not None:
        same &= extra == extra[rep]
    if not bool(same.all()):  # two different texts with one 64-bit hash: not seen in practice
        raise UsageError("two different volume names hashed alike; please report this trace")
    return codes.astype(np.int32).reshape(start.shape), [int(i) for i in first]
