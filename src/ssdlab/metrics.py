"""The metric registry: every measured quantity ssdlab reports, compares, plots, exports or gates on, with its name,
label, unit, direction (is higher better?), how to read it from a stored measurement and how to format it.

Names (pyperf's metadata registry is the model: key -> unit, type, formatter):
  iops, bw_MBps, lat_mean_us, lat_max_us     over the reads and writes of a point (latency: fio's completion
                                             latency, the directions' histogram bins added)
  pNN_us                                     any percentile from those bins: p50_us, p99_us, p99_9_us (or p99.9_us)
  read_..., write_...                        the same for one direction: read_iops, write_p99_99_us
  usr_cpu, sys_cpu, cpu                      fio's CPU use per job (%)
  art, mrt, nines                            SNIA PTS's response times (average, maximum, 99.999th percentile)
                                             over every I/O of the point, as the PTS suites track them
  mbps                                       another name for bw_MBps (the PTS suites' name)

`value(name, point)` reads one metric of a stored point (None when the point did not measure it);
`values(names, point)` reads several sharing the work (the directions' bins are merged once). The tuples
below list what each consumer offers: COMPARED (what `ssdlab compare` judges and `--fail-on` accepts, in its
column order), MAIN (the metrics JUnit cases list), PLOTTED (what `ssdlab plot --help` lists), PTS.

Suites, comparisons and renderers all read metrics here; this module imports no renderer (and nothing heavy at
import: numpy loads only when bins are merged).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ssdlab import formatting
from ssdlab.results.aggregate import merge_latency
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, PointResult

DIRECTIONS = ("read", "write")  # the directions the totals add (trim is reported only by art, mrt, nines)


class Reading:
    """One measurement as the metrics read it, with what several metrics share worked out once."""

    def __init__(self, m: Measurement) -> None:
        self.m = m
        self._latency: dict[str | None, LatencyStats | None] = {}

    @property
    def simulated(self) -> bool:
        """Whether the simulator measured it (no fio, no host CPU figures)."""
        return self.m.engine == "sim"

    def direction(self, which: str) -> DirectionStats | None:
        """One direction's statistics, when it completed I/O."""
        d = self.m.get(which)
        return d if d is not None and d.total_ios > 0 else None

    def latency(self, which: str | None) -> LatencyStats | None:
        """Completion latency of one direction, or of reads and writes together (bins added)."""
        if which not in self._latency:
            dirs = [d for n in ((which,) if which else DIRECTIONS) if (d := self.direction(n)) is not None]
            self._latency[which] = merge_latency([d.clat for d in dirs if d.clat is not None])
        return self._latency[which]

    def all_clats(self) -> list[LatencyStats]:
        """Completion latency of every direction that completed I/O, trims included (SNIA PTS response times)."""
        return [d.clat for d in self.m.directions.values() if d.total_ios > 0 and d.clat is not None and d.clat.n > 0]


Reader = Callable[[Reading], float | None]


@dataclass(frozen=True)
class Metric:
    name: str  # canonical: read_p99_9_us
    label: str  # read p99.9 latency
    unit: str  # IOPS | MB/s | µs | %
    higher_is_better: bool
    read: Reader
    fmt: Callable[[float | None], str]  # its usual text in a results table

    def text(self, value: float | None) -> str:
        return self.fmt(value)

    @property
    def title(self) -> str:
        """Its name on a chart's axis: the label with its unit ('p99 latency (µs)', 'read IOPS', 'MB/s')."""
        return self.label if self.unit in self.label else f"{self.label} ({self.unit})"


def _iops(which: str | None) -> Reader:
    if which is None:
        return lambda rd: rd.m.total_iops if rd.m.directions else None
    return lambda rd: d.iops if (d := rd.direction(which)) is not None else None


def _bw(which: str | None) -> Reader:
    if which is None:
        return lambda rd: rd.m.total_bw_bytes / 1e6 if rd.m.directions else None
    return lambda rd: d.bw_mbps if (d := rd.direction(which)) is not None else None


def _lat_mean(which: str | None) -> Reader:
    return lambda rd: lat.mean_ns / 1000.0 if (lat := rd.latency(which)) is not None else None


def _lat_max(which: str | None) -> Reader:
    return lambda rd: lat.max_ns / 1000.0 if (lat := rd.latency(which)) is not None else None


def _pct(which: str | None, p: float) -> Reader:
    def read(rd: Reading) -> float | None:
        lat = rd.latency(which)
        v = lat.percentile(p) if lat is not None else None
        return v / 1000.0 if v is not None else None

    return read


def _art(rd: Reading) -> float | None:
    lats = rd.all_clats()
    n = sum(c.n for c in lats)
    return sum(c.mean_ns * c.n for c in lats) / n / 1000.0 if n else None


def _mrt(rd: Reading) -> float | None:
    lats = rd.all_clats()
    return max(c.max_ns for c in lats) / 1000.0 if lats else None


def _nines(rd: Reading, p: float = 99.999) -> float | None:
    """Over all I/Os: the percentile of the added bins (clamped to the observed range) when fio gave json+ for
    every direction, else the worse direction's reported value."""
    lats = rd.all_clats()
    if not lats:
        return None
    if all(c.bins for c in lats):
        from ssdlab.results import hist

        counts = hist.counts_from_sparse(lats[0].bins)
        for c in lats[1:]:
            counts = counts + hist.counts_from_sparse(c.bins)
        value = float(hist.percentiles(counts, [p]).get(p, 0))  # a bin midpoint: clamp to the observed range
        return min(max(value, min(c.min_ns for c in lats)), max(c.max_ns for c in lats)) / 1000.0
    values = [c.percentile(p) for c in lats]
    known = [v for v in values if v is not None]
    return max(known) / 1000.0 if len(known) == len(values) else None


def _mbps_text(v: float | None) -> str:
    return "" if v is None else formatting.mbps(v)


_WHOLE: Callable[[float | None], str] = formatting.grouped
_PCT_RE = re.compile(r"^(?:(read|write)_)?p(\d+(?:[._]\d+)?)_us$")
_PCTS = ("50", "99", "99_9", "99_99", "99_999")  # the percentiles compare judges


def _percentile(prefix: str, text: str) -> Metric:
    p = float(text.replace("_", "."))
    who = prefix.replace("_", " ")
    return Metric(f"{prefix}p{text.replace('.', '_')}_us", f"{who}p{p:g} latency", "µs", False,
                  _pct(prefix.rstrip("_") or None, p), formatting.latency_us)


def _directional() -> dict[str, Metric]:
    """The totals and each direction's: rates, mean, percentiles and maximum of the completion latency."""
    out: dict[str, Metric] = {}
    for prefix in ("", "read_", "write_"):
        which = prefix.rstrip("_") or None
        who = prefix.replace("_", " ")
        for m in (
            Metric(f"{prefix}iops", f"{who}IOPS", "IOPS", True, _iops(which), _WHOLE),
            Metric(f"{prefix}bw_MBps", f"{who}MB/s", "MB/s", True, _bw(which), _mbps_text),
            Metric(f"{prefix}lat_mean_us", f"{who}mean latency", "µs", False, _lat_mean(which),
                   formatting.latency_us),
            *(_percentile(prefix, p) for p in _PCTS),
            Metric(f"{prefix}lat_max_us", f"{who}max latency", "µs", False, _lat_max(which), formatting.latency_us),
        ):
            out[m.name] = m
    return out


def _others() -> dict[str, Metric]:
    """fio's CPU use and SNIA PTS's response times."""
    out: dict[str, Metric] = {}
    # (the simulator uses no host CPU per I/O: nothing was measured, and a 0 would read as a measurement)
    for name, label, read in (("usr_cpu", "fio user CPU", lambda rd: None if rd.simulated else rd.m.usr_cpu),
                              ("sys_cpu", "fio system CPU", lambda rd: None if rd.simulated else rd.m.sys_cpu),
                              ("cpu", "fio CPU",
                               lambda rd: None if rd.simulated else rd.m.usr_cpu + rd.m.sys_cpu)):
        out[name] = Metric(name, label, "%", False, read, _WHOLE)
    out["art"] = Metric("art", "ART", "µs", False, _art, formatting.latency_us)
    out["mrt"] = Metric("mrt", "MRT", "µs", False, _mrt, formatting.latency_us)
    out["nines"] = Metric("nines", "5 nines (99.999 %)", "µs", False, _nines, formatting.latency_us)
    return out


_DIRECTIONAL = _directional()
_NAMED = {**_DIRECTIONAL, **_others()}
_ALIASES = {"mbps": "bw_MBps"}

COMPARED: tuple[str, ...] = tuple(_DIRECTIONAL)
MAIN = ("read_iops", "write_iops", "iops", "read_bw_MBps", "write_bw_MBps", "bw_MBps", "read_lat_mean_us",
        "write_lat_mean_us", "lat_mean_us", "read_p99_us", "write_p99_us", "read_p99_99_us", "write_p99_99_us",
        "p99_999_us", "lat_max_us")
PLOTTED = ("iops", "read_iops", "write_iops", "bw_MBps", "read_bw_MBps", "write_bw_MBps", "lat_mean_us",
           "read_lat_mean_us", "write_lat_mean_us", "p50_us", "p99_us", "p99.9_us", "p99.99_us", "read_p99_us",
           "write_p99_us", "lat_max_us", "usr_cpu", "sys_cpu", "cpu")
PTS = ("iops", "mbps", "art", "mrt", "nines")


@functools.lru_cache(maxsize=512)
def get(name: str) -> Metric:
    """The metric of a name (any alias, any percentile written with '.' or '_'); KeyError when unknown."""
    found = _NAMED.get(_ALIASES.get(name, name))
    if found is not None:
        return found
    match = _PCT_RE.match(name)
    if match is None:
        raise KeyError(name)
    return _percentile(f"{match.group(1)}_" if match.group(1) else "", match.group(2))


def is_metric(name: str) -> bool:
    try:
        get(name)
    except KeyError:
        return False
    return True


def _reading(r: PointResult | None) -> Reading | None:
    if r is None or r.status != "ok" or r.measurement is None:
        return None
    return Reading(r.measurement)


def value(name: str, r: PointResult | None) -> float | None:
    """One metric of a stored point: None when the point is missing, did not finish ok or lacks it."""
    rd = _reading(r)
    return get(name).read(rd) if rd is not None else None


def values(names: Iterable[str], r: PointResult) -> dict[str, float]:
    """The named metrics a stored point has (read together: the directions' bins are merged once)."""
    rd = _reading(r)
    if rd is None:
        return {}
    out = {}
    for name in names:
        v = get(name).read(rd)
        if v is not None:
            out[name] = v
    return out
