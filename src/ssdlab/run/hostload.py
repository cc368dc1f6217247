"""Host limit: whether the CPU that submitted a point's I/O, rather than the device, may have set its result.

The flag comes from fio's own CPU share per submitting thread (its usr+sys per job in the json output): a job
whose thread kept its CPU SATURATED_PCT busy never waited for the device, so the host set the pace. Other
processes' load does not raise the flag: a busy host slows fio down, and fio's share then stays low. The
system-wide busy share of the CPUs fio may use (sampled from /proc/stat during the point, the median over short
intervals) is recorded beside it and shapes the advice. On the null engine there is no device: the host is
what it measures, so nothing is flagged.

The advice (how to take the host out of the measurement) is said once per run and once per report
(`advice_text`), never under every point.
"""

from __future__ import annotations

import itertools
import statistics
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab.results.model import Measurement

SATURATED_PCT = 90.0
PROC_STAT = Path("/proc/stat")

CpuTimes = dict[int, tuple[int, int]]  # cpu index -> (busy jiffies, total jiffies)


def read_cpu_times(path: Path = PROC_STAT) -> CpuTimes:
    """Per-CPU (busy, total) jiffies. Busy is everything but idle and iowait (steal included: a CPU the
    hypervisor took is not available to fio either); guest time is already inside user."""
    out: CpuTimes = {}
    try:
        lines = path.read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu" or not name[3:].isdigit():
            continue
        values = [int(v) for v in rest.split()[:8] if v.isdigit()]
        if len(values) < 5:
            continue
        idle = values[3] + values[4]
        total = sum(values)
        out[int(name[3:])] = (total - idle, total)
    return out


def busy_pct(a: CpuTimes, b: CpuTimes, cpus: Iterable[int] | None = None) -> dict[int, float]:
    """Busy share (%) of each CPU between two readings (CPUs without elapsed time are left out)."""
    wanted = set(cpus) if cpus is not None else set(a) & set(b)
    out = {}
    for cpu in sorted(wanted & set(a) & set(b)):
        dbusy, dtotal = b[cpu][0] - a[cpu][0], b[cpu][1] - a[cpu][1]
        if dtotal > 0:
            out[cpu] = 100.0 * max(0, dbusy) / dtotal
    return out


def parse_cpu_list(text: str) -> set[int]:
    """fio/Linux CPU list syntax: '0-3,6,8-10' (a ':stride' suffix on a range, as fio allows, too)."""
    cpus: set[int] = set()
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        rng, _, stride = part.partition(":")
        lo, _, hi = rng.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or (stride and not stride.isdigit()):
            raise ValueError(f"not a CPU list: {text!r}")
        cpus.update(range(int(lo), int(hi or lo) + 1, int(stride or 1)))
    return cpus


@dataclass
class CpuSampler:
    """Samples /proc/stat in a thread while a point runs: `with CpuSampler(cpus) as s: ...; s.result()`."""

    cpus: set[int] | None = None  # the CPUs fio may submit from (None: all)
    interval_s: float = 0.1
    path: Path = PROC_STAT
    _readings: list[tuple[float, CpuTimes]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> CpuSampler:
        self._readings.append((time.monotonic(), read_cpu_times(self.path)))
        self._thread = threading.Thread(target=self._loop, name="ssdlab-cpu-sampler", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._readings.append((time.monotonic(), read_cpu_times(self.path)))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._readings.append((time.monotonic(), read_cpu_times(self.path)))

    def result(self) -> dict[str, Any]:
        """What the report stores: per-CPU mean busy over the point, the submitting CPUs' median busy."""
        readings = [r for r in self._readings if r[1]]
        if len(readings) < 2:
            return {"available": False, "reason": f"{self.path} is not readable"}
        first, last = readings[0][1], readings[-1][1]
        online = sorted(set(first) & set(last))
        submit = sorted(self.cpus & set(online)) if self.cpus else online
        if not submit:
            return {"available": False, "reason": f"none of CPUs {sorted(self.cpus or [])} is online"}
        per_cpu = busy_pct(first, last)
        intervals = []
        for (_, a), (_, b) in itertools.pairwise(readings):
            shares = busy_pct(a, b, submit)
            if shares:
                intervals.append(sum(shares.values()) / len(shares))
        return {
            "available": True, "online_cpus": len(online),
            "submitting_cpus": "all" if not self.cpus else format_cpu_list(submit),
            "submitting_count": len(submit),
            "system_busy_pct": round(sum(per_cpu.values()) / len(per_cpu), 1) if per_cpu else None,
            "submitting_busy_pct": round(statistics.median(intervals), 1) if intervals else None,
            "per_cpu_busy_pct": {str(c): round(v, 1) for c, v in per_cpu.items()},
            "intervals": len(intervals), "interval_s": self.interval_s,
        }


def format_cpu_list(cpus: Sequence[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    runs: list[list[int]] = []
    for c in sorted(set(cpus)):
        if runs and c == runs[-1][-1] + 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def sample_interval(runtime_s: float | None) -> float:
    """About twenty intervals per point, between 0.05 s and 1 s."""
    if not runtime_s:
        return 0.25
    return min(1.0, max(0.05, runtime_s / 20))


# ------------------------------------------------------------------ the flag

@dataclass(frozen=True)
class HostLimit:
    saturated: bool
    reasons: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"saturated": self.saturated, "reasons": list(self.reasons),
                               "advice": list(self.advice)}
        if self.note:
            out["note"] = self.note
        return out


def assess(job_cpu_pct: float | None, submitting_busy_pct: float | None, *, numjobs: int = 1,
           submitting_count: int | None = None, online_cpus: int | None = None, ioengine: str = "",
           options: Mapping[str, Any] | None = None, null_target: bool = False) -> HostLimit:
    """Whether fio's submitting threads were saturated, why, and what to change. Pure: tests feed it numbers."""
    if null_target or job_cpu_pct is None or job_cpu_pct < SATURATED_PCT:
        return HostLimit(False)
    reasons = [f"fio's jobs kept their CPUs {job_cpu_pct:.0f} % busy (usr+sys per job)"]
    advice = _advice(job_cpu_pct, submitting_busy_pct, numjobs=numjobs, submitting_count=submitting_count,
                     online_cpus=online_cpus, ioengine=ioengine, options=options or {})
    return HostLimit(True, tuple(reasons), tuple(advice))


def saturated(m: Measurement) -> bool:
    """Whether a stored point is flagged: its stored flag, held to today's rule (fio's own CPU share per job; runs
    stored before it was the rule were also flagged for other processes' load, and on the null engine)."""
    if m.engine != "fio" or m.usr_cpu + m.sys_cpu < SATURATED_PCT:
        return False
    limit = m.extra.host_limit
    return limit is not None and limit.saturated and "null engine" not in limit.note


def _advice(job_cpu_pct: float | None, submitting_busy_pct: float | None, *, numjobs: int,
            submitting_count: int | None, online_cpus: int | None, ioengine: str,
            options: Mapping[str, Any]) -> list[str]:
    """What to change to lift a host limit, given what was busy and how the jobs ran."""
    advice = []
    fio_share = None  # the part of the submitting CPUs' time fio's own jobs used, in %
    if job_cpu_pct is not None and submitting_count:
        fio_share = job_cpu_pct * max(1, numjobs) / submitting_count
    busy = submitting_busy_pct is not None and submitting_busy_pct >= SATURATED_PCT
    if busy and fio_share is not None and (submitting_busy_pct or 0.0) - fio_share >= 25:
        advice.append(f"stopping other load: fio used about {fio_share:.0f} % of those CPUs, other processes the "
                      "rest")
    job_bound = job_cpu_pct is not None and job_cpu_pct >= SATURATED_PCT
    if job_bound and (submitting_count is None or numjobs < submitting_count) and not busy:
        advice.append("more jobs (numjobs) so submission spreads over the idle CPUs")
    if ioengine != "io_uring" or not (options.get("fixedbufs") and options.get("registerfiles")):
        advice.append("io_uring with fixed buffers and registered files (--ioengine io_uring; fio options "
                      "fixedbufs=1, registerfiles=1) to cut the CPU cost per I/O")
    if "cpus_allowed" in options and submitting_count is not None and online_cpus is not None \
            and submitting_count < online_cpus:
        advice.append(f"allowing more CPUs than cpus_allowed={options['cpus_allowed']}")
    else:
        advice.append("pinning the jobs (cpus_allowed) to CPUs near the device's NUMA node that nothing else uses")
    return advice


def advice_text(count: int, of: int, advice: Sequence[str]) -> str:
    """The one paragraph of a run (console) or a report: how many points were flagged and how to lift it."""
    text = (f"{count} of {of} measured point(s) ran with fio's submitting threads saturated (usr+sys per job >= "
            f"{SATURATED_PCT:g} %): their results may be the host's limit, not the device's")
    return text + (". To lift it: " + "; ".join(advice) if advice else "")


def stored_advice(measurements: Iterable[Measurement]) -> list[str]:
    """The advice of flagged points' stored flags (extra.host_limit), each once, in order."""
    out: list[str] = []
    for m in measurements:
        limit = m.extra.host_limit
        for a in limit.advice if limit is not None else ():
            if a not in out:
                out.append(str(a))
    return out
