"""Fast per-interval latency analysis of fio histogram logs (`write_hist_log` -> `X_clat_hist.N.log`).

Each log row is `time_ms, ddir, bs, c0 .. c(n-1)`: the completion-latency histogram of the I/Os that
finished in the log interval ending at `time_ms` (fio subtracts the previous snapshot). At coarseness c
(`log_hist_coarseness`) a row holds 1856 / 2^c bins, each the sum of 2^c of fio's fine buckets.

Reading is vectorised and streamed: a file is read in blocks of whole lines, only the non-zero counts are
decoded (most of the 1856 columns are "0"), and output intervals are finalised and emitted as soon as no
later row of any file can still touch them, so memory stays bounded on 24-hour logs. Several files (jobs,
hosts) are merged by adding their bins, never by averaging percentiles.

Two semantics, chosen with `mode`:

* ``"fio"`` (the default): a row belongs to the output interval holding the middle of its log interval;
  the interval's histogram is the sum of its rows, and percentiles follow fio's own rule (the value of the
  first bucket whose cumulative count reaches p/100 x N, no interpolation; ssdlab.results.hist). Bucket values
  are fio's bucket midpoints (at coarseness c: the midpoint of the coarse bin's natural bounds). For one
  interval spanning a whole run this reproduces fio's reported percentiles.
* ``"weighted"``: the default semantics of fio's tools/hist/fiologparser_hist.py, reimplemented for
  like-for-like comparison: each bin's count is spread over the span (row time - interval/2 - latency,
  row time) and weighted by its overlap with each output interval; percentiles are linearly interpolated on
  the weighted CDF (midpoint rule); bin values carry that script's offset (the midpoint between a bin's
  lower edge and the next bin's upper edge); min/max are the neighbouring bin edges. The script's 20-second
  read-ahead limit is not reproduced (it changes nothing for output intervals under 5.6 s).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from ssdlab.errors import UsageError
from ssdlab.results import hist

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

HEADER_COLS = 3
Mode = Literal["fio", "weighted"]
DIR_NAMES = {0: "read", 1: "write", 2: "trim"}
DIR_CODES = {name: code for code, name in DIR_NAMES.items()}
ALL = "all"
DEFAULT_CHUNK_BYTES = 1 << 20  # blocks whose temporaries stay in the CPU caches: ~30 % less CPU than 4 MiB

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

_ALLOWED = np.zeros(256, dtype=bool)
for _c in b"0123456789, \r\n\t":
    _ALLOWED[_c] = True


class HistLogError(UsageError):
    """A histogram log that cannot be read (wrong column count, stray characters, out-of-order rows)."""


# ------------------------------------------------------------------ bin geometry


def coarseness_for(nbins: int) -> int:
    """Coarseness c such that nbins == 1856 / 2^c (fio's log_hist_coarseness 0..6)."""
    for c in range(7):
        if hist.PLAT_NR >> c == nbins and (hist.PLAT_NR % (1 << c)) == 0:
            return c
    raise HistLogError(f"{nbins} histogram columns is not 1856/2^c for c in 0..6: not an fio 3.x clat_hist log")


def _fine_lower(idx: I64) -> I64:
    """Lower bound (ns) of fine buckets `idx` (vectorised; idx may be 1856, one past the end)."""
    idx = np.asarray(idx, dtype=np.int64)
    shift = np.maximum(idx // hist.PLAT_VAL - 1, 0)
    grouped = (np.int64(1) << (shift + hist.PLAT_BITS)) + (idx % hist.PLAT_VAL) * (np.int64(1) << shift)
    return np.where(idx < 2 * hist.PLAT_VAL, idx, grouped).astype(np.int64)


def _fine_upper(idx: I64) -> I64:
    """Upper bound (ns, exclusive) of fine buckets `idx`."""
    idx = np.asarray(idx, dtype=np.int64)
    shift = np.maximum(idx // hist.PLAT_VAL - 1, 0)
    width = np.where(idx < 2 * hist.PLAT_VAL, 1, np.int64(1) << shift)
    return (_fine_lower(idx) + width).astype(np.int64)


def bin_bounds(coarseness: int) -> tuple[I64, I64]:
    """[lower, upper) bounds in ns of each bin at `coarseness` (fine bucket j*2^c .. (j+1)*2^c - 1)."""
    stride = 1 << coarseness
    first = np.arange(0, hist.PLAT_NR, stride, dtype=np.int64)
    return _fine_lower(first), _fine_upper(first + stride - 1)


@functools.lru_cache(maxsize=8)
def bin_values(coarseness: int) -> F64:
    """Representative value (ns) per bin: fio's bucket midpoint at c=0, the bounds' midpoint when coarse."""
    if coarseness == 0:
        out = hist.bucket_values().astype(np.float64)
    else:
        lo, hi = bin_bounds(coarseness)
        out = ((lo + hi) / 2.0).astype(np.float64)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=8)
def baseline_bin_values(coarseness: int) -> tuple[F64, F64, F64]:
    """(value, lower edge, upper edge) per bin as fiologparser_hist.py computes them (see module doc)."""
    stride = 1 << coarseness
    first = np.arange(0, hist.PLAT_NR, stride, dtype=np.int64)

    def edge(idx: I64, frac: float) -> F64:
        shift = np.maximum(idx // hist.PLAT_VAL - 1, 0)
        base = (np.int64(1) << (shift + hist.PLAT_BITS)).astype(np.float64)
        val = base + ((idx % hist.PLAT_VAL) + frac) * (np.int64(1) << shift).astype(np.float64)
        return np.where(idx < 2 * hist.PLAT_VAL, idx.astype(np.float64), val)

    lower = edge(first, 0.0)
    upper = edge(first + stride, 1.0)
    out = ((lower + upper) / 2.0, lower, upper)
    for arr in out:
        arr.flags.writeable = False
    return out


# ------------------------------------------------------------------ parsing


@dataclass(frozen=True)
class Chunk:
    """Rows of one log block: per-row time and direction, and the non-zero bins as (row, bin, count)."""

    times: I64
    ddirs: I64
    row: I64
    col: I64
    count: I64

    @property
    def nrows(self) -> int:
        """Number of log rows in the chunk."""
        return int(self.times.size)

    def dense(self, nbins: int) -> I64:
        """The rows as a dense (nrows, nbins) count matrix (for small inputs and tests)."""
        out = np.zeros((self.nrows, nbins), dtype=np.int64)
        np.add.at(out, (self.row, self.col), self.count)
        return out


def _decode(a: npt.NDArray[np.uint8], starts: I64) -> tuple[I64, I64]:
    """(values, extra digits) of the decimal tokens at `starts` (each begins with 1-9 and is followed by a
    non-digit inside `a`); loops once per digit position, over the tokens that still have digits."""
    values = a[starts].astype(np.int64) - 48
    extra = np.zeros(starts.size, dtype=np.int64)
    tok = np.arange(starts.size)
    pos = starts + 1
    while tok.size:
        d = a[pos] - np.uint8(48)
        more = d < 10
        tok, pos, d = tok[more], pos[more] + 1, d[more]
        values[tok] = values[tok] * 10 + d
        extra[tok] += 1
    return values, extra


def _chunk_from_tokens(nrows: int, row: I64, col: I64, values: I64) -> Chunk:
    times = np.zeros(nrows, dtype=np.int64)
    ddirs = np.zeros(nrows, dtype=np.int64)
    head = np.flatnonzero(col < HEADER_COLS)  # a few per row: the masks below stay small
    head_row, head_col, head_val = row[head], col[head], values[head]
    for c, target in ((0, times), (1, ddirs)):
        m = head_col == c
        target[head_row[m]] = head_val[m]
    body = col >= HEADER_COLS
    return Chunk(times, ddirs, row[body], col[body] - HEADER_COLS, values[body])


def _parse_canonical(a: npt.NDArray[np.uint8], ncols: int) -> Chunk | None:
    """Fast path for fio's own formatting ('%llu, ' between values, '\\n' line ends, no blank lines).

    Every zero is the 3 bytes "0, ", so once the extra digits of the non-zero tokens before it are taken
    out, a token lies at (row x (3 ncols - 1) + 3 x column) and each row's newline at the end of its
    3 ncols - 1 bytes: rows and columns follow from the byte offsets of the non-zero tokens alone.
    Returns None when the block is not in that form (the general path then parses it or explains why not).
    """
    if a[-1] != 10 or a.max() > 57:
        return None
    nlines = int(np.count_nonzero(a == 10))
    if np.count_nonzero(a < 48) != nlines + np.count_nonzero(a == 32) + np.count_nonzero(a == 44):
        return None  # some byte other than digits, ',', ' ' and newline
    cand = np.flatnonzero(a > 48)  # digits 1-9 (nothing above '9' is left)
    starts = cand[a[cand - 1] < 48]  # after a separator (before the first byte: a[-1], a newline)
    values, extra = _decode(a, starts)
    width = 3 * ncols - 1
    cum = np.cumsum(extra)
    row, offset = np.divmod(starts - (cum - extra), width)
    col, misplaced = np.divmod(offset, 3)
    if misplaced.any():
        return None
    # each row's newline where its width and its tokens' extra digits put it, and no newline elsewhere
    # (a line with another column count, or a blank line: the general path reports it)
    tokens_upto = np.searchsorted(row, np.arange(nlines), side="right")
    ends = np.arange(width - 1, width * nlines, width) + np.concatenate(([0], cum))[tokens_upto]
    if ends[-1] != a.size - 1 or not (a[ends] == 10).all():
        return None
    return _chunk_from_tokens(nlines, row, col, values)


def parse_block(data: bytes, ncols: int, *, where: str = "", first_line: int = 1) -> Chunk:
    """Decode whole lines of a histogram log into a sparse Chunk (only non-zero tokens are decoded)."""
    a = np.frombuffer(data, dtype=np.uint8)
    if a.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Chunk(empty, empty, empty, empty, empty)
    fast = _parse_canonical(a, ncols)
    if fast is not None:
        return fast
    if not _ALLOWED[a].all():
        bad = np.flatnonzero(~_ALLOWED[a])
        line = first_line + int(np.count_nonzero(a[: bad[0]] == 10))
        raise HistLogError(f"{where}:{line}: unexpected character {chr(a[bad[0]])!r} in a histogram log row")
    newlines = np.flatnonzero(a == 10)
    if newlines.size == 0 or newlines[-1] != a.size - 1:
        newlines = np.append(newlines, a.size)
    digit = (a - np.uint8(48)) < 10
    line_start = np.concatenate(([0], newlines[:-1] + 1))
    commas = np.flatnonzero(a == 44)
    per_line = np.searchsorted(commas, newlines) - np.searchsorted(commas, line_start)
    # blank lines (no comma and no digit) are skipped; a comma-less line with digits is a wrong row
    blank = per_line == 0
    for li in np.flatnonzero(blank):
        if digit[line_start[li]:newlines[li]].any():
            blank[li] = False
    wrong = np.flatnonzero(~blank & (per_line != ncols - 1))
    if wrong.size:
        i = int(wrong[0])
        raise HistLogError(f"{where}:{first_line + i}: {per_line[i] + 1} columns where the log's first row has "
                           f"{ncols} (a truncated or mixed log?)")
    kept = np.flatnonzero(~blank)
    prev_digit = np.concatenate(([False], digit[:-1]))
    starts = np.flatnonzero(digit & ~prev_digit & (a != 48))
    values = _decode(a if not digit[-1] else np.append(a, np.uint8(10)), starts)[0]
    line_of = np.searchsorted(newlines, starts)  # line index of each token
    col = np.searchsorted(commas, starts) - np.searchsorted(commas, line_start[line_of])
    # renumber lines to rows (blank lines removed)
    row_of_line = np.full(newlines.size, -1, dtype=np.int64)
    row_of_line[kept] = np.arange(kept.size)
    row = row_of_line[line_of]
    return _chunk_from_tokens(int(kept.size), row, col, values)


class LogReader:
    """Streams one histogram log in blocks of whole lines; `nbins`/`coarseness` come from its first row."""

    def __init__(self, path: Path | str, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> None:
        self.path = Path(path)
        self.chunk_bytes = max(4096, chunk_bytes)
        try:
            with self.path.open("rb") as fh:
                first = fh.readline()
        except OSError as exc:
            raise HistLogError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        self.ncols = first.count(b",") + 1 if first.strip() else 0
        head = first.split(b",", 1)[0].strip()
        self.first_time: int | None = int(head) if head.isdigit() else None
        self.nbins = max(0, self.ncols - HEADER_COLS)
        self.coarseness = coarseness_for(self.nbins) if self.ncols else 0

    def chunks(self) -> Iterator[Chunk]:
        """Successive Chunks of the file (empty file: none)."""
        if not self.ncols:
            return
        line_no = 1
        tail = b""
        with self.path.open("rb") as fh:
            while True:
                block = fh.read(self.chunk_bytes)
                if not block:
                    break
                data = tail + block
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    tail = data
                    continue
                tail = data[cut:]
                chunk = parse_block(data[:cut], self.ncols, where=str(self.path), first_line=line_no)
                line_no += chunk.nrows  # error messages count rows (blank lines are not rows)
                yield chunk
        if tail.strip():
            yield parse_block(tail, self.ncols, where=str(self.path), first_line=line_no)


def read_log(path: Path | str) -> tuple[I64, I64, I64]:
    """Whole file as (times, ddirs, dense counts); convenient for small logs and tests."""
    reader = LogReader(path)
    times, ddirs, mats = [], [], []
    for ch in reader.chunks():
        times.append(ch.times)
        ddirs.append(ch.ddirs)
        mats.append(ch.dense(reader.nbins))
    if not times:
        return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                np.zeros((0, reader.nbins), dtype=np.int64))
    return np.concatenate(times), np.concatenate(ddirs), np.concatenate(mats)


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class Interval:
    """One output interval of one direction: its end time and merged histogram (fio mode: exact counts)."""

    end_ms: int
    direction: str
    counts: npt.NDArray[np.float64] | I64
    samples: int
    coarseness: int = 0
    min_ns: float | None = None  # weighted mode: the baseline's neighbouring-edge min/max
    max_ns: float | None = None

    def percentiles(self, ps: Sequence[float]) -> dict[float, float]:
        """fio's rule on integer counts; the baseline's interpolation on weighted counts."""
        if np.issubdtype(np.asarray(self.counts).dtype, np.integer):
            return fio_percentiles(np.asarray(self.counts, dtype=np.int64), ps, self.coarseness)
        return weighted_percentiles(np.asarray(self.counts, dtype=np.float64), ps, self.coarseness)

    def mean_ns(self) -> float:
        """Mean from bin values (fio midpoints, or the baseline's values in weighted mode)."""
        c = np.asarray(self.counts, dtype=np.float64)
        total = float(c.sum())
        if total <= 0:
            return 0.0
        weighted = np.issubdtype(np.asarray(self.counts).dtype, np.floating)
        values = baseline_bin_values(self.coarseness)[0] if weighted else bin_values(self.coarseness)
        return float((c * values).sum() / total)

    def exceedance(self, thresholds_ns: Sequence[float]) -> dict[float, float]:
        """Percent of I/Os at or above each threshold (integer counts)."""
        return exceedance_pct(np.asarray(self.counts, dtype=np.int64), thresholds_ns, self.coarseness)


def fio_percentiles(counts: I64, ps: Sequence[float], coarseness: int = 0) -> dict[float, float]:
    """fio's percentile rule on (possibly coarse) bins: value of the first bin with cum >= p/100 x N."""
    if coarseness == 0 and counts.size == hist.PLAT_NR:
        return {p: float(v) for p, v in hist.percentiles(counts, ps).items()}
    n = int(counts.sum())
    if n <= 0:
        return {}
    from fractions import Fraction  # (on use: the weighted mode never needs it, and each start pays for it)

    cum = np.cumsum(counts)
    values = bin_values(coarseness)
    out: dict[float, float] = {}
    for p in ps:
        need = Fraction(p) / 100 * n
        threshold = -((-need.numerator) // need.denominator)
        idx = int(np.searchsorted(cum, threshold, side="left"))
        out[p] = float(values[min(idx, values.size - 1)])
    return out


def fio_percentiles_matrix(counts: I64, ps: Sequence[float], coarseness: int = 0) -> F64:
    """fio's rule for many histograms at once: (rows, len(ps)) values; NaN where a row is empty."""
    values = bin_values(coarseness)
    n = counts.sum(axis=1)
    cum = np.cumsum(counts, axis=1)
    out = np.full((counts.shape[0], len(ps)), np.nan)
    for k, p in enumerate(ps):
        exact = n * p / 100.0
        need = np.ceil(exact).astype(np.int64)
        # float rounding could flip an exact integer boundary: recompute those rows exactly
        close = np.flatnonzero(np.abs(exact - np.round(exact)) < 1e-6)
        for i in close:
            from fractions import Fraction

            q = Fraction(p) / 100 * int(n[i])
            need[i] = -((-q.numerator) // q.denominator)
        idx = (cum < need[:, None]).sum(axis=1)
        got = values[np.minimum(idx, values.size - 1)]
        out[:, k] = np.where(n > 0, got, np.nan)
    return out


def weighted_percentiles(weights: F64, ps: Sequence[float], coarseness: int = 0) -> dict[float, float]:
    """The baseline's rule: linear interpolation on the midpoint-rule weighted CDF of its bin values."""
    total = float(weights.sum())
    if total <= 0:
        return {}
    values = baseline_bin_values(coarseness)[0]
    cdf = 100.0 * (weights.cumsum() - weights / 2.0) / total
    got = np.interp(np.asarray(ps, dtype=np.float64), cdf, values)
    return {p: float(v) for p, v in zip(ps, got, strict=True)}


def exceedance_pct(counts: I64, thresholds_ns: Sequence[float], coarseness: int = 0) -> dict[float, float]:
    """Percent of samples in bins lying entirely at or above each threshold (bin lower bound >= t).

    A bin straddling t counts as below, as ssdlab.results.hist.exceedance does (at c=0 a bucket is at most
    1/64 of its value wide, so the threshold is effectively moved up by less than that).
    """
    n = float(counts.sum())
    lower, _ = bin_bounds(coarseness)
    out: dict[float, float] = {}
    for t in thresholds_ns:
        first = int(np.searchsorted(lower, t, side="left"))
        out[t] = 100.0 * float(counts[first:].sum()) / n if n else 0.0
    return out


# ------------------------------------------------------------------ streaming aggregation


@dataclass
class _Source:
    reader: LogReader
    it: Iterator[Chunk]
    watermark: float = -math.inf
    done: bool = False
    chunks_read: int = 0
    ahead: Future[Chunk | None] | None = None  # the next chunk, parsed in a worker thread

    def next_chunk(self, pool: ThreadPoolExecutor | None) -> Chunk | None:
        """The next chunk; with a pool, the one after it starts parsing at once (numpy releases the GIL)."""
        if pool is None:
            return next(self.it, None)
        if self.ahead is None:
            self.ahead = pool.submit(next, self.it, None)
        ch = self.ahead.result()
        self.ahead = pool.submit(next, self.it, None) if ch is not None else None
        return ch

    def feed(self, agg: _Aggregator, pool: ThreadPoolExecutor | None) -> None:
        """Hand the next chunk to `agg` (its rows, its earliest time), or note that the file has ended."""
        ch = self.next_chunk(pool)
        if ch is None:
            self.done = True
            return
        if ch.nrows:
            agg.note_first(int(ch.times.min()))
            agg.add(ch, where=str(self.reader.path))
            self.watermark = float(ch.times.max())
        self.chunks_read += 1


@dataclass
class _Pending:
    counts: dict[str, npt.NDArray[np.float64] | I64] = field(default_factory=dict)
    samples: dict[str, int] = field(default_factory=dict)
    lo: dict[str, int] = field(default_factory=dict)  # weighted: min candidate bin
    hi: dict[str, int] = field(default_factory=dict)


def detect_log_ms(paths: Sequence[Path | str]) -> int:
    """fio's log_hist_msec guessed from the first rows of the first file (median gap between timestamps)."""
    for path in paths:
        reader = LogReader(path, chunk_bytes=1 << 20)
        for ch in reader.chunks():
            ts = np.sort(ch.times)  # not np.unique: it loads numpy.ma, a tenth of this command's start-up
            gaps = np.diff(ts)
            gaps = gaps[gaps > 0]
            if gaps.size:
                return max(1, int(np.median(gaps)))
            if ts.size:
                return max(1, int(ts[0]))
            break
    return 1000


def _dirs_for(ddirs: I64, directions: Sequence[str]) -> list[tuple[str, npt.NDArray[np.bool_] | None]]:
    out: list[tuple[str, npt.NDArray[np.bool_] | None]] = []
    for name in directions:
        if name == ALL:
            out.append((name, None))
        else:
            out.append((name, ddirs == DIR_CODES[name]))
    return out


def iter_intervals(paths: Sequence[Path | str], interval_ms: float, *, mode: Mode = "fio",
                   directions: Sequence[str] = (ALL,), log_ms: float | None = None,
                   chunk_bytes: int = DEFAULT_CHUNK_BYTES, threads: int = 1) -> Iterator[Interval]:
    """Merged per-interval histograms of all `paths`, in time order, with bounded memory.

    `directions` lists "all" (every row) and/or "read"/"write"/"trim". In fio mode a row counts in the
    interval holding the middle of its log interval (`log_ms`, detected when not given); only intervals
    with samples are yielded. With `threads` > 0, each file's next block is decoded by a worker thread
    while the main thread aggregates (one block ahead per file, so memory stays bounded).
    """
    _check_request(paths, interval_ms, directions)
    sources = [_Source(r, r.chunks()) for r in (LogReader(p, chunk_bytes) for p in paths)]
    agg = _aggregator(sources, paths, interval_ms, mode, directions, log_ms)
    pool = _decoder_pool(paths, threads, chunk_bytes)
    try:
        while True:
            active = [s for s in sources if not s.done]
            if not active:
                break
            src = min(active, key=lambda s: s.watermark)
            src.feed(agg, pool)
            rest = [s.watermark for s in sources if not s.done]
            yield from agg.flush(min(rest) if rest else math.inf)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _check_request(paths: Sequence[Path | str], interval_ms: float, directions: Sequence[str]) -> None:
    if interval_ms <= 0:
        raise HistLogError(f"interval {interval_ms} ms must be positive")
    if not paths:
        raise HistLogError("no histogram log files given")
    for d in directions:
        if d != ALL and d not in DIR_NAMES.values():
            raise HistLogError(f"unknown direction {d!r}: use all, read, write or trim")


def _aggregator(sources: Sequence[_Source], paths: Sequence[Path | str], interval_ms: float, mode: Mode,
                directions: Sequence[str], log_ms: float | None) -> _Aggregator:
    """The aggregator of `mode` for logs of one bin count, knowing the earliest row of all files."""
    nbins = {s.reader.nbins for s in sources if s.reader.ncols}
    if len(nbins) > 1:
        raise HistLogError("the logs have different bin counts (log_hist_coarseness differs): merge like with like")
    nb = nbins.pop() if nbins else hist.PLAT_NR
    coarse = coarseness_for(nb)
    if mode == "fio":
        agg: _Aggregator = _FioAggregator(interval_ms, log_ms or detect_log_ms(paths), nb, coarse, directions)
    elif mode == "weighted":
        agg = _WeightedAggregator(interval_ms, nb, coarse, directions)
    else:
        raise HistLogError(f"unknown mode {mode!r}: use fio or weighted")
    firsts = [s.reader.first_time for s in sources if s.reader.first_time is not None]
    if firsts:  # the weighted mode's start depends on the earliest row of all files
        agg.note_first(min(firsts))
    return agg


def _decoder_pool(paths: Sequence[Path | str], threads: int, chunk_bytes: int) -> ThreadPoolExecutor | None:
    """Worker threads that decode each file's next block, only worth it for big logs."""
    if threads > 0 and any(Path(p).stat().st_size > chunk_bytes for p in paths):
        from concurrent.futures import ThreadPoolExecutor

        return ThreadPoolExecutor(max_workers=threads)
    return None


class _Aggregator:
    def __init__(self, interval_ms: float, nbins: int, coarseness: int, directions: Sequence[str]) -> None:
        self.interval = float(interval_ms)
        self.nbins = nbins
        self.coarseness = coarseness
        self.directions = tuple(directions)
        self.pending: dict[int, _Pending] = {}
        self.first_time: int | None = None
        self.finalised_upto = -(1 << 62)  # intervals below this index were emitted

    def note_first(self, t: int) -> None:
        self.first_time = t if self.first_time is None else min(self.first_time, t)

    def add(self, ch: Chunk, where: str) -> None:
        raise NotImplementedError

    def final_before(self, watermark: float) -> int:
        raise NotImplementedError

    def end_of(self, j: int) -> int:
        raise NotImplementedError

    def flush(self, watermark: float) -> Iterator[Interval]:
        if watermark == -math.inf:  # a file has not been read yet: nothing is final
            return
        limit = self.final_before(watermark) if math.isfinite(watermark) else (1 << 62)
        for j in sorted(k for k in self.pending if k < limit):
            p = self.pending.pop(j)
            for d in self.directions:
                if p.samples.get(d, 0) > 0:
                    yield self.make(j, d, p)
        self.finalised_upto = max(self.finalised_upto, limit)

    def make(self, j: int, d: str, p: _Pending) -> Interval:
        return Interval(self.end_of(j), d, p.counts[d], p.samples[d], self.coarseness)

    def _late(self, jmin: int, where: str) -> None:
        if jmin < self.finalised_upto:
            raise HistLogError(f"{where}: rows go back in time by more than two log intervals (not one fio "
                               "histogram log per job?)")


class _FioAggregator(_Aggregator):
    def __init__(self, interval_ms: float, log_ms: float, nbins: int, coarseness: int,
                 directions: Sequence[str]) -> None:
        super().__init__(interval_ms, nbins, coarseness, directions)
        self.log_ms = float(log_ms)

    def index(self, times: I64) -> I64:
        mid = times.astype(np.float64) - self.log_ms / 2.0
        return np.maximum(np.floor(mid / self.interval), 0).astype(np.int64)

    def end_of(self, j: int) -> int:
        return round((j + 1) * self.interval)

    def final_before(self, watermark: float) -> int:
        return int(self.index(np.array([int(watermark - 2 * self.log_ms)]))[0])

    def add(self, ch: Chunk, where: str) -> None:
        jrow = self.index(ch.times)
        j0, j1 = int(jrow.min()), int(jrow.max())
        self._late(j0, where)
        span = j1 - j0 + 1
        jcell = jrow[ch.row] - j0
        for d, mask in _dirs_for(ch.ddirs, self.directions):
            sel_rows = np.ones(ch.nrows, dtype=bool) if mask is None else mask
            if mask is None:
                key, cnt = jcell * self.nbins + ch.col, ch.count
            else:
                cells = mask[ch.row]
                key, cnt = jcell[cells] * self.nbins + ch.col[cells], ch.count[cells]
            dense = np.bincount(key, weights=cnt.astype(np.float64),
                                minlength=span * self.nbins).reshape(span, self.nbins)
            dense_i = np.rint(dense).astype(np.int64)
            totals = dense_i.sum(axis=1)
            has_rows = np.bincount(jrow[sel_rows] - j0, minlength=span) > 0
            for k in np.flatnonzero(has_rows | (totals > 0)):
                p = self.pending.setdefault(j0 + int(k), _Pending())
                if d in p.counts:
                    p.counts[d] = p.counts[d] + dense_i[k]
                else:
                    p.counts[d] = dense_i[k].copy()
                p.samples[d] = p.samples.get(d, 0) + int(totals[k])


class _WeightedAggregator(_Aggregator):
    MAX_LOOKAHEAD_MS = 20  # the baseline compares first-row time minus this (ms) to choose its start

    def __init__(self, interval_ms: float, nbins: int, coarseness: int, directions: Sequence[str]) -> None:
        super().__init__(interval_ms, nbins, coarseness, directions)
        self.values, self.lower, self.upper = baseline_bin_values(coarseness)
        self.span_ms = self.interval / 2.0 + self.values / 1e6  # L_b: how far back bin b's I/Os started
        self.start: float | None = None

    def note_first(self, t: int) -> None:
        super().note_first(t)
        if self.start is None:
            # the baseline starts at 0, or jumps to the first row when it lies beyond the first interval
            assert self.first_time is not None
            s = 0.0
            first = self.first_time
            if first - self.MAX_LOOKAHEAD_MS > self.interval:
                s = float(first - self.MAX_LOOKAHEAD_MS)
                s -= s % self.interval
            self.start = s

    def end_of(self, j: int) -> int:
        assert self.start is not None
        return int(self.start + (j + 1) * self.interval)

    def final_before(self, watermark: float) -> int:
        if self.start is None:
            return -(1 << 62)
        reach = watermark - float(self.span_ms[-1]) - self.interval
        return math.floor((reach - self.start) / self.interval)

    def make(self, j: int, d: str, p: _Pending) -> Interval:
        return Interval(self.end_of(j), d, p.counts[d], p.samples[d], self.coarseness,
                        min_ns=float(self.lower[p.lo[d]]), max_ns=float(self.upper[p.hi[d]]))

    def add(self, ch: Chunk, where: str) -> None:
        """Spread every non-zero bin over the output intervals its I/Os overlap (closed form per bin).

        Each bin's span (row time - interval/2 - latency, row time] makes one entry per interval it touches:
        its first interval, its last (when it spans two or more) and the full ones between. The arithmetic of
        every weight is the closed form of the baseline; the work is arranged so that each figure is computed
        once, over the entries that need it (the row's last interval per row, ahead-ness only where it can
        hold, a direction per entry only when directions are split)."""
        assert self.start is not None
        interval, a0, nb = self.interval, self.start, self.nbins
        t_row = ch.times.astype(np.float64)
        jhi_row = (np.ceil((t_row - a0) / interval) - 1).astype(np.int64)  # every bin of a row ends there
        row, col, cnt = ch.row, ch.col, ch.count
        t = t_row[row]
        span_b = self.span_ms[col]
        s = t - span_b
        jlo = np.floor((s - a0) / interval)
        np.maximum(jlo, 0, out=jlo)
        jlo = jlo.astype(np.int64)
        jhi = jhi_row[row]
        n = jhi - jlo + 1
        if not (n > 0).all():  # rows at or before the start touch no interval
            ok = n > 0
            t, span_b, s, jlo, jhi, n = t[ok], span_b[ok], s[ok], jlo[ok], jhi[ok], n[ok]
            row, col, cnt = row[ok], col[ok], cnt[ok]
        if n.size == 0:
            return
        self._late(int(jlo.min()), where)
        h = cnt.astype(np.float64)
        a_lo = a0 + jlo * interval
        w_first = h * (np.minimum(t, a_lo + interval) - np.maximum(s, a_lo)) / span_b
        two = np.flatnonzero(n >= 2)
        jhi_two = jhi[two]
        back_last = t[two] - (a0 + jhi_two * interval)  # how far the row's time lies past its last interval
        w_last = h[two] * back_last / span_b[two]
        many = np.flatnonzero(n >= 3)
        if many.size:
            reps = n[many] - 2
            mid = np.repeat(many, reps)
            offs = np.arange(mid.size) - np.repeat(np.cumsum(reps) - reps, reps) + 1
            j_mid = jlo[mid] + offs
            w_mid = h[mid] * interval / span_b[mid]
        else:
            mid = j_mid = np.zeros(0, dtype=np.int64)
            w_mid = np.zeros(0)
        # entries: every bin's first interval, then the last of those spanning two or more, then the full ones
        j = np.concatenate((jlo, jhi_two, j_mid))
        w = np.concatenate((w_first, w_last, w_mid))
        cj = np.concatenate((col, col_two := col[two], col_mid := col[mid]))
        # the baseline's min: the bin below the first non-zero bin of each row, but not below the first
        # bin that still starts before the interval ends (only rows well ahead of the interval have one)
        limit = 1.5 * interval
        ahead_parts = [np.flatnonzero(t - a_lo > limit), np.flatnonzero(back_last > limit) + n.size]
        if mid.size:
            ahead_parts.append(np.flatnonzero(t[mid] - (a0 + j_mid * interval) > limit) + n.size + two.size)
        ahead = np.concatenate(ahead_parts)
        split = any(d != ALL for d in self.directions)
        # the bin behind each entry, when needed
        bin_of = np.concatenate((np.arange(n.size), two, mid)) if split or ahead.size else None
        j0 = int(jlo.min())  # the first interval is some bin's first, the last some row's last
        span = int(jhi.max()) - j0 + 1
        jj = j - j0
        if not split:  # one direction: the keys and the samples per interval straight from the parts
            keys = (np.concatenate(((jlo - j0) * nb + col, (jhi_two - j0) * nb + col_two,
                                    (j_mid - j0) * nb + col_mid)),)
            # whole counts in float64: exact in any order
            sample_sums = (np.bincount(jlo - j0, weights=h, minlength=span)
                           + np.bincount(jhi_two - j0, weights=h[two], minlength=span)
                           + np.bincount(j_mid - j0, weights=h[mid], minlength=span),)
        ddir_e = ch.ddirs[row[bin_of]] if split and bin_of is not None else None
        if ahead.size:
            is_ahead_all = np.zeros(w.size, dtype=bool)
            is_ahead_all[ahead] = True
        positive = bool(w.min() > 0)  # (always, in practice: every entry's span overlaps its interval)
        for d in self.directions:
            sel = None if d == ALL or ddir_e is None else ddir_e == DIR_CODES[d]
            if split:
                hn = np.concatenate((h, h[two], h[mid]))
                sj, sc, sw, sn = (jj, cj, w, hn) if sel is None else (jj[sel], cj[sel], w[sel], hn[sel])
                key = sj * nb + sc
                samples = np.bincount(sj, weights=sn, minlength=span)
            else:
                key, samples, sw = keys[0], sample_sums[0], w
            dense = np.bincount(key, weights=sw, minlength=span * nb).reshape(span, nb)
            # max: bin above the last non-zero bin; min from the non-ahead entries, then the ahead ones
            occupied = dense > 0
            hi = np.minimum(nb - 1 - np.argmax(occupied[:, ::-1], axis=1) + 1, nb - 1)
            if not ahead.size:
                ahead_idx = ahead
                if positive:  # every entry is near and has weight: the near bins are the occupied ones
                    near2 = occupied
                else:
                    near = np.zeros(span * nb, dtype=bool)
                    near[key] = True
                    near2 = near.reshape(span, nb)
            else:
                is_ahead = is_ahead_all if sel is None else is_ahead_all & sel
                ahead_idx = ahead if sel is None else np.flatnonzero(is_ahead)  # entry indices (all entries)
                near = np.zeros(span * nb, dtype=bool)
                near[key[~(is_ahead if sel is None else is_ahead[sel])]] = True
                near2 = near.reshape(span, nb)
            has_near = near2.any(axis=1)
            lo = np.where(has_near, np.maximum(np.argmax(near2, axis=1) - 1, 0), nb)
            if ahead_idx.size and bin_of is not None:
                b = bin_of[ahead_idx]
                te, a_e = t[b], a0 + j[ahead_idx] * interval
                k = np.searchsorted(self.values, (te - limit - a_e) * 1e6, side="right")
                np.minimum.at(lo, jj[ahead_idx], np.maximum(k, cj[ahead_idx] - 1))
            lo_k, hi_k, samples_k = lo.tolist(), hi.tolist(), samples.tolist()  # Python numbers per interval
            for kk in np.flatnonzero(samples > 0).tolist():
                p = self.pending.get(j0 + kk)
                if p is None:
                    p = self.pending[j0 + kk] = _Pending()
                counts = p.counts.get(d)
                if counts is not None:
                    np.add(counts, dense[kk], out=counts)  # the interval's own copy, made below
                    p.lo[d] = min(p.lo[d], lo_k[kk])
                    p.hi[d] = max(p.hi[d], hi_k[kk])
                else:
                    p.counts[d] = dense[kk].copy()
                    p.lo[d] = lo_k[kk]
                    p.hi[d] = hi_k[kk]
                p.samples[d] = p.samples.get(d, 0) + round(samples_k[kk])


def total_histogram(paths: Iterable[Path | str], direction: str = ALL) -> tuple[I64, int]:
    """All rows of `paths` (one direction or all) summed into one histogram; returns (counts, coarseness)."""
    total: I64 | None = None
    coarse = 0
    for path in paths:
        reader = LogReader(path)
        coarse = reader.coarseness
        for ch in reader.chunks():
            if direction == ALL:
                cols, cnts = ch.col, ch.count
            else:
                sel = ch.ddirs[ch.row] == DIR_CODES[direction]
                cols, cnts = ch.col[sel], ch.count[sel]
            part = np.bincount(cols, weights=cnts.astype(np.float64), minlength=reader.nbins)
            part_i = np.rint(part).astype(np.int64)
            if total is None:
                total = part_i
            elif total.size != part_i.size:
                raise HistLogError("the logs have different bin counts (log_hist_coarseness differs)")
            else:
                total = total + part_i
    if total is None:
        total = np.zeros(hist.PLAT_NR, dtype=np.int64)
    return total, coarse


# ------------------------------------------------------------------ CSV output


def parse_percentiles(text: str) -> list[float]:
    """'50,90,99.9' (or colon-separated) -> [50.0, 90.0, 99.9]; each within 0..100."""
    out: list[float] = []
    for part in text.replace(":", ",").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            p = float(part)
        except ValueError:
            raise HistLogError(f"bad percentile {part!r}: use numbers like 50,90,99.9") from None
        if not 0.0 < p <= 100.0:
            raise HistLogError(f"percentile {part} is outside (0, 100]")
        out.append(p)
    if not out:
        raise HistLogError("no percentiles given: use e.g. --percentiles 50,90,99,99.9")
    return out


def csv_rows(intervals: Iterable[Interval], ps: Sequence[float], mode: Mode) -> Iterator[str]:
    """CSV lines: header, then one row per interval and direction.

    fio mode: end_ms,direction,samples,min_ns,mean_ns,p<..>...,max_ns with fio bucket values (ns).
    weighted mode: the baseline's columns (end-time, samples, min, avg, median, <p>%, ..., max) plus dir.
    """
    labels = [f"p{p:g}" for p in ps]
    if mode == "fio":
        yield ",".join(["end_ms", "direction", "samples", "min_ns", "mean_ns", *labels, "max_ns"])
    else:
        yield ", ".join(["end-time", "dir", "samples", "min", "avg", "median", *[f"{p:g}%" for p in ps], "max"])
    for iv in intervals:
        if mode == "fio":
            c = np.asarray(iv.counts, dtype=np.int64)
            nz = np.flatnonzero(c)
            values = bin_values(iv.coarseness)
            pv = iv.percentiles(ps)
            cells = [str(iv.end_ms), iv.direction, str(iv.samples), f"{values[nz[0]]:.0f}",
                     f"{iv.mean_ns():.1f}", *[f"{pv[p]:.0f}" for p in ps], f"{values[nz[-1]]:.0f}"]
            yield ",".join(cells)
        else:
            pv = iv.percentiles([50.0, *ps])
            vals = [pv[50.0], *[pv[p] for p in ps]]
            yield ", ".join([str(iv.end_ms), iv.direction, str(iv.samples), f"{int(iv.min_ns or 0)}",
                             f"{iv.mean_ns():.3f}", *[f"{v:.3f}" for v in vals], f"{int(iv.max_ns or 0)}"])


def summarize(paths: Sequence[Path | str], interval_ms: float, ps: Sequence[float], *, mode: Mode = "fio",
              directions: Sequence[str] = (ALL,), log_ms: float | None = None, threads: int = 0) -> Iterator[str]:
    """Per-interval percentile CSV lines for the given logs (the `ssdlab hist-log` output)."""
    return csv_rows(iter_intervals(paths, interval_ms, mode=mode, directions=directions, log_ms=log_ms,
                                   threads=threads), ps, mode)


def interval_exceedance(paths: Sequence[Path | str], interval_ms: float, thresholds_ns: Sequence[float], *,
                        direction: str = ALL, log_ms: float | None = None) -> list[tuple[int, int, dict[float, float]]]:
    """(end_ms, samples, {threshold: % at or above}) per interval, fio mode (exact bin counts)."""
    out = []
    for iv in iter_intervals(paths, interval_ms, mode="fio", directions=(direction,), log_ms=log_ms):
        out.append((iv.end_ms, iv.samples, iv.exceedance(thresholds_ns)))
    return out

