"""Parse fio's json / json+ output into the result model. Pure functions: text in, model out.

Defensive by design: text may precede the JSON (warnings, banners), keys differ between fio eras
(`lat` in µs before 3.x, `lat_ns` after), client mode uses `client_stats`, `bins` exist only with json+.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ssdlab.errors import FioFailedError
from ssdlab.results import sparsehist
from ssdlab.results.bins import EMPTY
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, percentile_key

_DECODER = json.JSONDecoder()


def iter_documents(text: str) -> Iterator[dict[str, Any]]:
    """Every top-level JSON object in `text`, skipping any non-JSON text around them."""
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            return
        try:
            obj, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        if isinstance(obj, dict):
            yield obj
        pos = end


def last_document(text: str) -> dict[str, Any]:
    """The final fio JSON document in `text` (status-interval output holds several)."""
    last: dict[str, Any] | None = None
    for doc in iter_documents(text):
        if "jobs" in doc or "client_stats" in doc:
            last = doc
    if last is None:
        raise FioFailedError("fio produced no JSON result (see stderr.txt in the point directory)")
    return last


def _jobs(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    jobs = doc.get("jobs")
    if jobs is None:  # client/server: drop the "All clients" summary, it mixes groups
        jobs = [j for j in doc.get("client_stats", []) if j.get("jobname") != "All clients"]
    return list(jobs)


def _latency_block(direction: Mapping[str, Any], kind: str) -> tuple[Mapping[str, Any] | None, float]:
    """Return (latency object, multiplier to ns) for `clat`/`lat`/`slat` across fio eras."""
    block = direction.get(f"{kind}_ns")
    if isinstance(block, Mapping):
        return block, 1.0
    block = direction.get(kind)  # fio 2.x: microseconds
    if isinstance(block, Mapping):
        return block, 1000.0
    return None, 1.0


def _merge_latency(blocks: list[tuple[Mapping[str, Any], float]], kind: str) -> LatencyStats | None:
    """Combine one latency type over jobs: counts and means weighted by N, bins added."""
    blocks = [(b, s) for b, s in blocks if int(b.get("N", 0) or 0) > 0]
    if not blocks:
        return None
    n = sum(int(b["N"]) for b, _ in blocks)
    mean = sum(float(b.get("mean", 0.0)) * s * int(b["N"]) for b, s in blocks) / n
    # pooled variance from per-job mean/stddev
    var = sum(int(b["N"]) * ((float(b.get("stddev", 0.0)) * s) ** 2 + (float(b.get("mean", 0.0)) * s - mean) ** 2)
              for b, s in blocks) / n
    lo = min(float(b.get("min", 0)) * s for b, s in blocks)
    hi = max(float(b.get("max", 0)) * s for b, s in blocks)
    counts, binned = _added_bins(blocks)
    pcts = _merged_percentiles(blocks, counts, n, binned)
    return LatencyStats(
        kind=kind, n=n, min_ns=lo, max_ns=hi, mean_ns=mean, stddev_ns=math.sqrt(var),
        percentiles_ns=pcts, bins=sparsehist.to_bins(counts) if counts is not None else EMPTY,
    )


def _added_bins(blocks: list[tuple[Mapping[str, Any], float]]) -> tuple[sparsehist.Sparse | None, int]:
    """The jobs' latency bins added (json+ in ns only), and how many jobs had bins."""
    counts = None
    binned = 0
    for b, s in blocks:
        raw = b.get("bins")
        if isinstance(raw, Mapping) and raw and s == 1.0:
            c = sparsehist.from_bins(raw)
            counts = c if counts is None else sparsehist.add(counts, c)
            binned += 1
    return counts, binned


def _merged_percentiles(blocks: list[tuple[Mapping[str, Any], float]], counts: sparsehist.Sparse | None, n: int,
                        binned: int) -> dict[str, float]:
    """Percentiles by fio's rule from the added bins, else fio's own (only valid for a single job/group)."""
    pcts: dict[str, float] = {}
    if counts is not None:
        # fio's rule uses the sample count N; in status documents the bins may hold one sample more than N
        total = min(n, sum(counts.values())) if binned == len(blocks) else None
        for p, v in sparsehist.percentiles(counts, _requested(blocks[0][0]), total=total).items():
            pcts[percentile_key(p)] = float(v)
    elif len(blocks) == 1:
        b, s = blocks[0]
        for key, value in (b.get("percentile") or {}).items():
            pcts[percentile_key(float(key))] = float(value) * s
    return pcts


def _requested(block: Mapping[str, Any]) -> list[float]:
    keys = block.get("percentile") or {}
    ps = sorted(float(k) for k in keys) if keys else []
    return ps or [1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99]


def parse_measurement(text: str) -> Measurement:
    """Measurement from fio's --output-format=json(+) output (possibly with leading text)."""
    doc = last_document(text)
    return measurement_from_document(doc)


def measurement_from_document(doc: Mapping[str, Any]) -> Measurement:
    jobs = _jobs(doc)
    if not jobs:
        raise FioFailedError("fio JSON result has no jobs")
    version = str(doc.get("fio version", "unknown"))
    directions: dict[str, DirectionStats] = {}
    for ddir in ("read", "write", "trim"):
        stats = _direction([j[ddir] for j in jobs if isinstance(j.get(ddir), Mapping)])
        if stats is not None:
            directions[ddir] = stats
    usr = [float(j.get("usr_cpu", 0.0)) for j in jobs]
    sys_ = [float(j.get("sys_cpu", 0.0)) for j in jobs]
    numjobs = _numjobs(jobs, doc.get("global options") or {})
    return Measurement(
        engine="fio", engine_version=version, directions=directions,
        usr_cpu=sum(usr) / len(usr), sys_cpu=sum(sys_) / len(sys_), jobs=numjobs,
        runtime_ms=max(int(j.get("job_runtime", 0) or 0) for j in jobs),
        errors=sum(1 for j in jobs if int(j.get("error", 0) or 0) != 0),
    )


def _direction(parts: list[Mapping[str, Any]]) -> DirectionStats | None:
    """One direction over the jobs that report it (None when no I/O completed in it)."""
    total_ios = sum(int(p.get("total_ios", 0) or 0) for p in parts)
    if total_ios <= 0:
        return None
    clats = [blk for blk in (_latency_block(p, "clat") for p in parts) if blk[0] is not None]
    lats = [blk for blk in (_latency_block(p, "lat") for p in parts) if blk[0] is not None]
    return DirectionStats(
        iops=sum(float(p.get("iops", 0.0)) for p in parts),
        bw_bytes=sum(_bw_bytes(p) for p in parts),
        io_bytes=sum(int(p.get("io_bytes", 0) or int(p.get("io_kbytes", 0)) * 1024) for p in parts),
        total_ios=total_ios,
        runtime_ms=max(int(p.get("runtime", 0) or 0) for p in parts),
        clat=_merge_latency(clats, "clat"),  # type: ignore[arg-type]
        lat=_merge_latency(lats, "lat"),  # type: ignore[arg-type]
    )


def _bw_bytes(p: Mapping[str, Any]) -> float:
    if "bw_bytes" in p:
        return float(p["bw_bytes"])
    return float(p.get("bw", 0.0)) * 1024.0  # KiB/s in older fio


def _numjobs(jobs: list[Mapping[str, Any]], global_options: Mapping[str, Any]) -> int:
    """Threads behind the result. Without group_reporting each thread has its own entry (same name);
    with it one entry stands for numjobs threads. numjobs may sit in the job section or in [global],
    and a bare `group_reporting` line leaves no trace in the JSON, so count entries per job name."""
    entries: dict[tuple[str, str], int] = {}
    declared: dict[tuple[str, str], int] = {}
    for j in jobs:
        key = (str(j.get("groupid", "")), str(j.get("jobname", "")))
        entries[key] = entries.get(key, 0) + 1
        opts = {**global_options, **(j.get("job options") or {})}
        try:
            declared[key] = max(1, int(opts.get("numjobs", 1)))
        except (TypeError, ValueError):
            declared[key] = 1
    return max(1, sum(max(count, declared[key]) for key, count in entries.items()))


def status_totals(doc: Mapping[str, Any]) -> dict[str, float]:
    """Cumulative counters of a status document: ios/bytes per direction, weighted latency sum, the jobs'
    elapsed whole seconds (ramp included) and their measured run time in seconds (job_runtime, ms precision)."""
    out = {"read_ios": 0.0, "write_ios": 0.0, "read_bytes": 0.0, "write_bytes": 0.0, "lat_sum_ns": 0.0,
           "elapsed_s": 0.0, "runtime_s": 0.0}
    for j in _jobs(doc):
        out["elapsed_s"] = max(out["elapsed_s"], float(j.get("elapsed", 0) or 0))
        out["runtime_s"] = max(out["runtime_s"], float(j.get("job_runtime", 0) or 0) / 1000.0)
        for ddir in ("read", "write"):
            p = j.get(ddir) or {}
            ios = float(p.get("total_ios", 0) or 0)
            out[f"{ddir}_ios"] += ios
            out[f"{ddir}_bytes"] += float(p.get("io_bytes", 0) or 0)
            block, scale = _latency_block(p, "clat")
            if block:
                out["lat_sum_ns"] += float(block.get("mean", 0.0)) * scale * float(block.get("N", 0) or 0)
    return out


def io_runtime_ms(doc: Mapping[str, Any]) -> int:
    """How long the I/O of a document's jobs has run, in ms: the longest per-direction run time (a thread's
    clock; `job_runtime` is summed over the threads of a group_reporting group, so it is not used)."""
    return max((int((j.get(d) or {}).get("runtime", 0) or 0) for j in _jobs(doc) for d in ("read", "write", "trim")),
               default=0)


def io_window(doc: Mapping[str, Any]) -> tuple[float, float] | None:
    """(start, end) of the I/O behind a fio document, in Unix seconds: fio stamps each document when it prints
    it (timestamp_ms; the final one once the jobs have ended), and the I/O has run io_runtime_ms by then.
    Accurate to the few milliseconds fio takes to print; None when the document lacks either."""
    stamp = doc.get("timestamp_ms")
    runtime = io_runtime_ms(doc)
    if not isinstance(stamp, (int, float)) or runtime <= 0:
        return None
    end = float(stamp) / 1000.0
    return end - runtime / 1000.0, end


def measurements_by_job(doc: Mapping[str, Any]) -> dict[str, Measurement]:
    """One Measurement per job name of a fio document (e.g. each stream section of a multi-stream point)."""
    by_name: dict[str, list[Mapping[str, Any]]] = {}
    for j in _jobs(doc):
        by_name.setdefault(str(j.get("jobname", "")), []).append(j)
    key = "jobs" if "jobs" in doc else "client_stats"
    return {name: measurement_from_document({**doc, key: jobs}) for name, jobs in by_name.items()}


_DEVICE_SUFFIX = re.compile(r"-d(\d+)$")


def device_index(jobname: str) -> int | None:
    """The device number N of a job section named `<...>-d<N>` (fio/job.build_device_job), else None."""
    m = _DEVICE_SUFFIX.search(jobname)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class DeviceResult:
    """What one device of a multi-device point did: its measurement (all its sections merged), and the first
    error fio reported for it ('' when none)."""

    measurement: Measurement
    error: str = ""


def results_by_device(doc: Mapping[str, Any]) -> dict[int, DeviceResult]:
    """Results per device of a point on several devices, whose job sections are named `<...>-d<N>`
    (fio/job.build_device_job): all sections of device N merged (bins added). Devices absent from the
    document (a host that dropped out) are absent from the result."""
    grouped: dict[int, list[Mapping[str, Any]]] = {}
    for j in _jobs(doc):
        index = device_index(str(j.get("jobname", "")))
        if index is not None:
            grouped.setdefault(index, []).append(j)
    key = "jobs" if "jobs" in doc else "client_stats"
    out = {}
    for index, jobs in sorted(grouped.items()):
        err = next((int(j.get("error", 0) or 0) for j in jobs if int(j.get("error", 0) or 0)), 0)
        text = f"fio error {err} ({os.strerror(err)})" if err else ""
        out[index] = DeviceResult(measurement_from_document({**doc, key: jobs}), text)
    return out
