"""fio's periodic status output (`--status-interval=N` with json+): documents and per-interval rates.

fio prints one JSON document per status interval and the final one at the end; each holds cumulative counters
(I/Os, bytes and mean completion latency per direction, the job's run time in ms). The difference between
consecutive documents over their run time gives the interval's IOPS, MB/s and mean latency.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ssdlab.results.live import LiveSample


def documents(lines: Iterable[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(text, parsed) of each JSON document in fio's output; a document ends with a line that is exactly '}'.
    Text between documents (fio's notes) and unparsable documents are skipped."""
    buf: list[str] = []
    for line in lines:
        if not buf and not line.startswith("{"):
            continue  # text between or before documents
        buf.append(line)
        if line.rstrip("\n") == "}":
            text = "".join(buf)
            buf = []
            try:
                doc = json.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(doc, dict):
                yield text, doc


class StatusRates:
    """Turns a stream of status documents into LiveSamples (None for a document that adds no run time)."""

    def __init__(self) -> None:
        self._previous: dict[str, float] = {}

    def feed(self, doc: Mapping[str, Any]) -> LiveSample | None:
        from ssdlab.fio.parse import status_totals  # numpy's import waits until fio runs (runner.run_job)

        now = status_totals(doc)
        if now["runtime_s"] <= 0:  # fio older than job_runtime: whole elapsed seconds
            now["runtime_s"] = now["elapsed_s"]
        dt = now["runtime_s"] - self._previous.get("runtime_s", 0.0)
        if dt <= 0:
            return None
        d = {k: now[k] - self._previous.get(k, 0.0) for k in now}
        self._previous = now
        ios = d["read_ios"] + d["write_ios"]
        return LiveSample(
            elapsed_s=max(now["elapsed_s"], now["runtime_s"]), read_iops=d["read_ios"] / dt,
            write_iops=d["write_ios"] / dt, read_mbps=d["read_bytes"] / dt / 1e6,
            write_mbps=d["write_bytes"] / dt / 1e6, mean_lat_us=(d["lat_sum_ns"] / ios / 1000.0) if ios > 0 else 0.0,
            bytes_done=now["read_bytes"] + now["write_bytes"],
        )
