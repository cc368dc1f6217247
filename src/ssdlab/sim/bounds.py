"""Upper bounds on what the simulated drive can do, from its parameters alone (no model run): the IOPS of a
workload before anything is measured, for wall-clock ETAs (the simulator's run time grows with the number of
I/Os it simulates, not with simulated time)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ssdlab.results.model import Workload
from ssdlab.sim.presets import mean_time


def iops_bound(params: Mapping[str, Any], w: Workload) -> float:
    """The most I/Os per simulated second `w` can reach on a drive with these parameters (sim presets' keys):
    the lowest of the controller, host link, channel and NAND ceilings and of the queue's latency bound."""
    bs = float(w.bs or 4096)
    dies = float(params.get("channels", 1)) * float(params.get("dies", 1))
    unit = float(params.get("planes", 1)) * float(params.get("page", 16384))  # bytes one die reads/programs at once
    t_r = mean_time(params, "tr") * 1e-6 / float(params.get("read_planes", 1))  # planes that read at once
    t_prog = mean_time(params, "tprog") * 1e-6
    fw = float(params.get("fw_us", 0.0)) * 1e-6
    read_share = (100 if w.rw in ("read", "randread") else 0 if w.rw in ("write", "randwrite", "trim", "randtrim")
                  else 50 if w.rwmixread is None else w.rwmixread) / 100.0
    # sequential reads smaller than a unit are read ahead: a sensing per unit, DRAM latency, less controller time
    ahead = not w.is_random and read_share > 0 and float(params.get("ra_kib", 0.0)) > 0 and bs < unit
    front = 1.0 - float(params.get("ctrl_be", 0.0)) / 100.0 if ahead else 1.0  # the controller time a read keeps
    fw *= front
    ceilings = [float(params.get("host_mbps", 1e5)) * 1e6 / bs,
                float(params.get("ch_mbps", 1e5)) * 1e6 * float(params.get("channels", 1)) / bs]
    if float(params.get("ctrl_kiops", 0.0)) > 0:
        ceilings.append(float(params["ctrl_kiops"]) * 1e3 / max(front, 1e-3))
    # per I/O: a read costs a NAND read of every unit it spans (at least one; a unit's share when read ahead), a
    # write its share of a program
    read_die_s = t_r * (bs / unit if ahead else max(1.0, bs / unit))
    write_die_s = t_prog * bs / unit
    die_s = read_share * read_die_s + (1 - read_share) * write_die_s
    if die_s > 0:
        ceilings.append(dies / die_s)
    latency = fw + (0.0 if ahead else read_share * t_r) + bs / (float(params.get("host_mbps", 1e5)) * 1e6)
    ceilings.append(w.outstanding / max(latency, 1e-9))
    return max(1.0, min(c for c in ceilings if math.isfinite(c) and c > 0))
