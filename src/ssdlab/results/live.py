"""Live progress samples: what an executor reports while a point runs (fio's status output, the simulator's
counters), read by progress.py. A leaf module: executors and progress displays both import it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from ssdlab.results.model import Measurement


@dataclass(frozen=True)
class LiveSample:
    """One interval of live progress: rates over the last status interval, and how far the point has got.

    `elapsed_s` is the point's elapsed run time as the engine counts it (fio's job time; simulated time for
    the simulator), `bytes_done` the bytes read and written since the point started (both for telling how
    much of a time-based or size-based point is done).
    """

    elapsed_s: float
    read_iops: float = 0.0
    write_iops: float = 0.0
    read_mbps: float = 0.0
    write_mbps: float = 0.0
    mean_lat_us: float = 0.0
    bytes_done: float = 0.0
    # the interval's mean completion latency per direction, and its p99/p99.9/p99.99 (LIVE_PERCENTILES) from
    # the difference of fio's histogram bins (None: the engine does not give them, e.g. the simulator)
    read_lat_us: float = 0.0
    write_lat_us: float = 0.0
    read_pcts_us: tuple[float, ...] | None = None
    write_pcts_us: tuple[float, ...] | None = None
    # a point on several devices of this host: one sample per device, in the target's device order
    parts: tuple[LiveSample | None, ...] = ()
    interval_s: float = 0.0  # the engine time the rates cover (fio: run time between status documents; 0: unknown)

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def mbps(self) -> float:
        return self.read_mbps + self.write_mbps


LIVE_PERCENTILES = (99.0, 99.9, 99.99)  # the percentiles a LiveSample carries per direction

LiveCallback = Callable[[LiveSample], None]

# a continuous series hands each finished sample over; the answer is the next sample's directory, or None to
# end the stimulus there (orchestrate stores the sample and asks the suite whether the series goes on)
SampleCallback = Callable[["Measurement"], "Path | None"]
