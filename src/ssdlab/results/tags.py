"""Point tags: what a suite records about each point beyond its workload (the test and round of a PTS point, the
matrix and curve of a characterization point, an ACT slice's level and target rates ...), one typed vocabulary
per suite family. A point's tags are one PointTags, which reads every family's keys (a point carries the keys of
its own family only; the others read as absent). Suites build them with `PointTags.of(...)`; verdicts, reports
and comparisons read attributes. Stored runs load their tags as they were written (results/record.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ssdlab.results.record import Key, Record

_NONE: Mapping[str, Any] = MappingProxyType({})


class CommonTags(Record):
    """Keys any point may carry: the run's common options, a re-run's planned time, streams, purge steps."""

    __slots__ = ()
    footprint_bytes = Key[int | None](None)  # --footprint: the active range (suites/base.apply_common)
    misalign_bytes = Key[int | None](None)  # --misalign: bytes added to every offset
    planned_runtime_s = Key[float | None](None)  # a short point run again longer: the runtime it was planned with
    stream_names = Key[Sequence[str]](())  # names of the point's concurrent streams (fio sections)
    shared_streams = Key[Sequence[str]](())  # streams that are one section over all devices
    readonly = Key[bool](False)  # fio runs with --readonly (integrity checks)
    errors_are_results = Key[bool](False)  # I/O errors are what the point measures, not a failure
    method = Key[str | None](None)  # a purge step's method ('' or None: the target's best)
    write_cache = Key[str | None](None)  # a purge step also sets the write cache: 'enabled' / 'disabled'
    amount_bytes = Key[int | None](None)  # how much a preconditioning step writes
    shape_of = Key[str | None](None)  # the host-ceiling point: the id of the point whose shape it runs


class PtsTags(Record):
    """SNIA PTS points (suites/pts/): the test, its round or sample, the stimulus."""

    __slots__ = ()
    test = Key[str | None](None)  # 'iops', 'tp', 'lat', 'wsat', 'hir', 'xsr', 'cbw', 'dirth' ...
    round = Key[int | None](None)
    key = Key[str | None](None)  # the stimulus of a round point, e.g. 'rnd4k-65-35'
    access = Key[str | None](None)  # 'seq' / 'rnd'
    bs = Key[int | None](None)
    read_pct = Key[int | None](None)
    sample = Key[int | None](None)  # WSAT, XSR, HIR: the sample's number
    segment = Key[str | None](None)  # XSR: 'a', 'b', 'c'; HIR: 'pc', 'burst', 'baseline'
    wait_s = Key[float | None](None)  # HIR: the host idle between bursts
    burst = Key[int | None](None)
    stage = Key[str | None](None)  # CBW/DIRTH/LAT histograms: 'pc', 'prewrite', 'sweep', 'hist-prewrite', 'hist'
    tc = Key[int | None](None)  # thread count
    qd = Key[int | None](None)  # queue depth per thread
    toio = Key[int | None](None)  # total outstanding I/O (tc x qd)
    role = Key[str | None](None)  # a histogram capture's role (MaxIOPS, MidIOPS, MinIOPS)
    roles = Key[Sequence[str]](())
    spec_minutes = Key[float | None](None)  # the duration the spec asks for


class QuickTags(Record):
    """quick, four-corners, quick-read (suites/quick.py)."""

    __slots__ = ()
    direction = Key[str | None](None)  # 'read' / 'write'
    access = Key[str | None](None)  # 'seq' / 'rnd'


class CharacterizationTags(Record):
    """Sweeps, curves, application profiles and stability runs (suites/toml_suite.py, curves.py)."""

    __slots__ = ()
    family = Key[str | None](None)  # 'characterization'
    view = Key[str | None](None)  # how the report shows it: 'matrix', 'iorate', 'lat-curve', 'stability', ...
    suite_title = Key[str | None](None)
    matrix = Key[str | None](None)  # the matrix (TOML [[matrix]] name) the point belongs to
    axes = Key[Mapping[str, Any] | None](None)  # swept parameters as displayed
    swept = Key[Sequence[str]](())  # the names of the parameters swept
    translation = Key[Mapping[str, Any] | None](None)  # an application profile's published vs fio values
    curve = Key[str | None](None)  # the curve (iorate / latency curve) the point belongs to
    rate = Key[str | float | None](None)  # 'max', a percentage of it ('50%'), or IOPS
    rate_pct = Key[float | None](None)
    max_point = Key[str | None](None)  # the id of the max run a percentage refers to
    max_iops = Key[float | None](None)
    target_iops = Key[float | None](None)
    rate_per_job_read = Key[float | None](None)
    rate_per_job_write = Key[float | None](None)
    read_fraction = Key[float | None](None)
    rate_note = Key[str | None](None)
    p99_limit_us = Key[float | None](None)  # stability / latency curve: the p99 limit


class ActTags(Record):
    """ACT slices (suites/act.py): the level, the slice and the rates each stream must hold."""

    __slots__ = ()
    load = Key[float | None](None)  # the level's load (times ACT's 1x rates)
    level = Key[str | None](None)  # its label, e.g. '30x'
    slice = Key[int | None](None)
    slice_s = Key[int | None](None)
    target_per_s = Key[Mapping[str, float]](_NONE)  # stream -> I/Os per second it must hold (all devices)
    jobs = Key[Mapping[str, int]](_NONE)
    service_threads = Key[int | None](None)
    devices = Key[int | None](None)
    min_op = Key[int | None](None)
    max_lag_s = Key[float | None](None)


class IntegrityTags(Record):
    """The integrity suite (suites/integrity.py): a point's role, and the write's checksum and seed."""

    __slots__ = ()
    integrity = Key[str | None](None)  # 'write', 'check', 'mixed', 'reverify'
    checksum = Key[str | None](None)
    seed = Key[int | None](None)


class ReplayTags(Record):
    """Trace replays (suites/replay.py): what the point replays and how (trace/mapping.ReplaySpec's fields), and
    what the trace holds (I/Os and bytes per direction, duration), for the report's expected-vs-replayed counts."""

    __slots__ = ()
    replay = Key[Mapping[str, Any] | None](None)
    trace = Key[Mapping[str, Any] | None](None)


class PointTags(CommonTags, PtsTags, QuickTags, CharacterizationTags, ActTags, IntegrityTags, ReplayTags):
    """A point's tags: every family's keys (see the module docstring)."""

    __slots__ = ()

    def test_or(self, suite: str) -> str:
        """The test the point belongs to: its PTS test, else the suite (one test per run)."""
        return str(self.test or suite)
