"""LAT's response-time histogram captures: after the rounds (steady or not), RND 4 KiB at T1Q1 for
--lat-hist-minutes spec minutes per R/W mix (20 and 0/100 + 100/0 by default, as the 2.0-era scripts run them).
The report draws the histogram, CDF, exceedance and the 3/4/5-nines confidence levels from each capture's fio
histogram bins. One spec minute lasts --runtime seconds, so a scaled run shortens the captures alike and says so.

Point ids: lat-h-<stimulus key>, e.g. lat-h-rnd4k-0-100.
"""

from __future__ import annotations

import math

from ssdlab.errors import UsageError
from ssdlab.results.model import TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.suites.pts.common import KiB, PtsSettings, parse_mix, stimulus

HIST_BS = 4 * KiB
SPEC_MINUTES = 20.0
TEST = "lat"


def mixes(s: PtsSettings) -> tuple[int, ...]:
    """Read percentages of the captures, in the order given ('none': no capture)."""
    text = str(s.option("lat_hist_mixes", "0/100,100/0")).strip().lower()
    if text in ("none", ""):
        return ()
    out: list[int] = []
    for part in text.split(","):
        try:
            read = parse_mix(part.strip())
        except ValueError:
            raise UsageError(f"--lat-hist-mixes {text!r}: give READ/WRITE mixes such as 0/100,100/0, or none") \
                from None
        if read in out:
            raise UsageError(f"--lat-hist-mixes {text!r}: each mix once")
        out.append(read)
    return tuple(out)


def minutes(s: PtsSettings) -> float:
    v = float(s.option("lat_hist_minutes", SPEC_MINUTES))
    if not v > 0 or not math.isfinite(v):
        raise UsageError(f"--lat-hist-minutes {v:g}: give a positive number of minutes")
    return v


def capture_id(read_pct: int) -> str:
    return f"{TEST}-h-{stimulus('RND', HIST_BS, read_pct).key}"


def captures(s: PtsSettings) -> list[TestPoint]:
    """The capture points (after the LAT rounds): RND 4 KiB, T1Q1, one per mix, per-minute interval logs."""
    n = minutes(s)
    out = []
    for read in mixes(s):
        st = stimulus("RND", HIST_BS, read)
        out.append(TestPoint(
            id=capture_id(read), label=f"Latency histogram capture {st.label} T1Q1 ({n:g} min)",
            workload=Workload(rw=st.rw(), bs=HIST_BS, iodepth=1, numjobs=1,
                              rwmixread=read if st.rw() == "randrw" else None, runtime_s=n * s.runtime_s,
                              size=s.active_range_bytes, options=s.pattern_options(),
                              log_interval_ms=max(1, round(s.runtime_s * 1000))),
            phase="measure", group=TEST,
            tags=PointTags.of(test=TEST, stage="hist", key=st.key, read_pct=read, bs=HIST_BS, spec_minutes=n)))
    return out
