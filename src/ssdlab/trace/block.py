"""Block-layer events (blkparse text, blktrace binary) -> one Trace: the I/O events (queued or issued) with their
device, time, sector range and direction, and the completions paired with them for the response times."""

from __future__ import annotations

import numpy as np

from ssdlab.trace.model import Trace, make_trace
from ssdlab.trace.text import I64


def block_trace(path: str, fmt: str, event: str, io: dict[str, I64], comp: dict[str, I64] | None) -> Trace:
    """A Trace from block-layer events (blkparse text or blktrace binary): the I/O events' device, time, sector,
    sectors and direction, and completions paired with them for response times."""
    latency = None if comp is None else pair_completions(_key(io), io["time"], _key(comp), comp["time"])
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


def _key(ev: dict[str, I64]) -> I64:
    """An event's request as two numbers: (sector, device | length | direction), n x 2 (a device number is below
    2^32, a length below 2^24 sectors, a direction -1..2)."""
    packed = (ev["dev"] << 26) | ((ev["sectors"] & 0xFFFFFF) << 2) | (ev["op"] + 1)
    return np.stack([ev["sector"], packed], axis=1)


def pair_completions(key: I64, time: I64, c_key: I64, c_time: I64) -> I64:
    """Response times: the k-th I/O of a request (device, sector, length, direction: `key`, n x 2) is completed
    by that request's k-th completion; -1 where there is none (a bio merged into a larger request completes as part
    of it). One sort: by request, then I/Os before completions, then time; each group's I/Os meet its completions
    by rank."""
    n, m = key.shape[0], c_key.shape[0]
    if n == 0 or m == 0:
        return np.full(n, -1, dtype=np.int64)
    keys = np.concatenate([key, c_key])
    kind = np.concatenate([np.zeros(n, np.int8), np.ones(m, np.int8)])
    t = np.concatenate([time, c_time])
    order = np.lexsort((t, kind, keys[:, 1], keys[:, 0]))
    k = keys[order]
    new = np.ones(order.shape[0], dtype=bool)
    new[1:] = (k[1:, 0] != k[:-1, 0]) | (k[1:, 1] != k[:-1, 1])
    group = np.cumsum(new) - 1
    start = np.flatnonzero(new)
    io = kind[order] == 0
    ios_in = np.bincount(group, weights=io, minlength=start.shape[0]).astype(np.int64)
    size = np.diff(np.r_[start, order.shape[0]])
    rank = np.arange(order.shape[0]) - start[group]  # an I/O's rank among its group's I/Os (they come first)
    partner = start[group] + ios_in[group] + rank  # the completion of the same rank
    has = io & (rank < size[group] - ios_in[group])
    lat = np.full(n, -1, dtype=np.int64)
    rows = order[has]
    lat[rows] = t[order[partner[has]]] - time[rows]
    return np.where(lat >= 0, lat, -1)
