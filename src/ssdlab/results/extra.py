"""What a measurement records beyond its rates and latencies (Measurement.extra), one typed record: the wall time
and host CPU of the point, the host-limit flag, I/O errors and verify failures fio reported, per-stream results
and pacing, the simulator's counters, histogram logs, the hosts of a host group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ssdlab.results.record import Key, Nested, Record

_NONE: Mapping[str, Any] = MappingProxyType({})


class HostCpu(Record):
    """/proc/stat over a point on the CPUs fio may use (run/hostload.CpuSampler)."""

    __slots__ = ()
    available = Key[bool](False)
    reason = Key[str]("")  # why it is not available
    online_cpus = Key[int | None](None)
    submitting_cpus = Key[str]("")  # 'all' or a CPU list
    submitting_count = Key[int | None](None)
    system_busy_pct = Key[float | None](None)
    submitting_busy_pct = Key[float | None](None)  # the submitting CPUs' median busy share
    per_cpu_busy_pct = Key[Mapping[str, float]](_NONE)
    intervals = Key[int](0)
    interval_s = Key[float | None](None)


class HostLimit(Record):
    """The host-limit flag (run/hostload.assess): the submitting CPUs were saturated, why, what to change."""

    __slots__ = ()
    saturated = Key[bool](False)
    reasons = Key[Sequence[str]](())
    advice = Key[Sequence[str]](())
    note = Key[str]("")


class IoErrors(Record):
    """The I/O errors fio reported (fio/failures.summarize): how many, the first ones with their offsets."""

    __slots__ = ()
    count = Key[int](0)
    listed = Key[Sequence[Mapping[str, Any]]](())
    fio_total_err = Key[int | None](None)


class VerifyFailures(Record):
    """What fio's verify found (fio/failures.summarize): bytes checked, mismatches, the first ones."""

    __slots__ = ()
    checksum = Key[str]("")
    checked_bytes = Key[int](0)
    mismatches = Key[int](0)
    header_mismatches = Key[int](0)
    listed = Key[Sequence[Mapping[str, Any]]](())


class SimCounters(Record):
    """The simulated drive's counters over a point (sim/executor.py)."""

    __slots__ = ()
    wa_total = Key[float | None](None)
    wa_gc = Key[float | None](None)
    avg_power_w = Key[float | None](None)
    gc_runs = Key[int | None](None)
    rmw_reads = Key[int | None](None)
    simulated_ios = Key[float | None](None)
    simulated_ios_per_wall_s = Key[float | None](None)
    state = Key[str | None](None)  # the saved drive state the point started from
    notes = Key[Sequence[str]](())
    keep_position = Key[bool](False)  # a continuous sample: replayed alike on resume
    idle = Key[Mapping[str, Any] | None](None)  # background GC during the host idle before the point


class MeasurementExtra(Record):
    """Measurement.extra (see the module docstring)."""

    __slots__ = ()
    wall_s = Key[float | None](None)  # wall-clock seconds of the point, executor and bookkeeping
    host_cpu = Nested(HostCpu)
    host_limit = Nested(HostLimit)
    idle_s = Key[float | None](None)  # host idle achieved before the point (None: not measurable)
    io_errors = Nested(IoErrors)
    verify = Nested(VerifyFailures)
    streams = Key[Mapping[str, Mapping[str, Any]]](_NONE)  # per stream: its measurement's stored form
    pacing = Key[Mapping[str, Mapping[str, float]]](_NONE)  # per paced section: how far it fell behind
    sim = Nested(SimCounters)
    hist_logs = Key[Sequence[str]](())  # histogram-log files in the point directory
    hist_log_ms = Key[int | None](None)
    hosts = Key[Mapping[str, str]](_NONE)  # a host group: host -> its agent's address
    replay = Key[Mapping[str, Any] | None](None)  # a trace replay: expected and replayed I/Os, rates, lag
