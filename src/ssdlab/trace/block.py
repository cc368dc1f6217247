"""Block-layer events (blkparse text, blktrace binary) -> one Trace: the I/O events (queued or issued) with their
device, time, sector range and direction, and the completions paired with them for the response times."""

from __future__ import annotations

import numpy as np

from ssdlab.trace.model import Trace, make_trace
from ssdlab.trace.text import I64


def block_trace(path: str, fmt: str, event: str, io: dict[str, I64], comp: dict[str, I64] | None) -> Trace:
    """A Trace from block-layer events (blkparse text or blktrace binary): the I/O events' device, time, sector,
    sectors and direction, and completions paired with them for response times."""
    latency = None if comp is None else pair_completions(io["key"], io["time"], comp["key"], comp["time"])
    keep = io["op"] >= 0
    devs, codes = np.unique(io["dev"][keep], return_inverse=True)
    names = tuple(_dev_name(int(v)) for v in devs)
    notes = () if bool(keep.all()) else (f"{int(np.count_nonzero(~keep))} {event} events without R, W or D "
                                         "(flushes) are left out",)
    return make_trace(path, fmt, io["time"][keep], io["sector"][keep] * 512, io["sectors"][keep] * 512,
                      io["op"][keep].astype(np.uint8),
                      latency=None if latency is None else latency[keep],
                      volume=codes.astype(np.int32).reshape(-1), volumes=names,
                      notes=(f"I/Os are the trace's {event} events", *notes))


def _dev_name(key: int) -> str:
    return f"{key >> 20},{key & 0xFFFFF}"


def pair_completions(key: I64, time: I64, c_key: I64, c_time: I64) -> I64:
    """Response times: the k-th I/O of a (device, sector, length, direction) key is completed by that key's k-th
    completion; -1 where there is none (a bio merged into a larger request completes as part of it)."""
    both = np.concatenate([key, c_key])
    _, ids = np.unique(both, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    a, b = ids[: key.shape[0]], ids[key.shape[0]:]
    ra = _rank_within(a, time)
    rb = _rank_within(b, c_time)
    # (key id, rank) -> completion time, looked up by sorting the completions on the pair
    width = int(max(ra.max(initial=0), rb.max(initial=0))) + 1
    ca = a.astype(np.int64) * width + ra
    cb = b.astype(np.int64) * width + rb
    order = np.argsort(cb, kind="stable")
    pos = np.searchsorted(cb[order], ca)
    found = pos < cb.shape[0]
    pos = np.minimum(pos, max(cb.shape[0] - 1, 0))
    found &= cb[order][pos] == ca if cb.shape[0] else np.zeros(ca.shape, dtype=bool)
    lat = np.where(found, c_time[order][pos] - time if cb.shape[0] else -1, -1)
    return np.where(lat >= 0, lat, -1).astype(np.int64)


def _rank_within(group: I64, time: I64) -> I64:
    """The rank of each row within its group, by time (ties in file order)."""
    order = np.lexsort((time, group))
    g = group[order]
    start = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    counts = np.diff(np.r_[start, g.shape[0]])
    rank_sorted = np.arange(g.shape[0]) - np.repeat(start, counts)
    rank = np.empty_like(rank_sorted)
    rank[order] = rank_sorted
    return rank
