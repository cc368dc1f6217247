"""The round-based PTS 2.0 tests: IOPS, TP (128 KiB and 1024 KiB) and LAT, and their suites."""

from __future__ import annotations

from ssdlab.suites.base import SuiteOption
from ssdlab.suites.pts import lathist
from ssdlab.suites.pts.common import (
    KiB,
    PtsSettings,
    RoundTest,
    Stimulus,
    Tracker,
    stimulus,
)
from ssdlab.suites.pts.family import register_suite, register_test, round_family_test

IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)  # read %, the outer loop
IOPS_BLOCK_SIZES = (1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB, 512)  # inner loop
IOPS_TRACKING = ((4 * KiB, 0), (64 * KiB, 65), (1024 * KiB, 100))  # PTS 2.0.2: all three must be steady
LAT_MIXES = (100, 65, 0)
LAT_BLOCK_SIZES = (8 * KiB, 4 * KiB, 512)


def iops_stimuli(s: PtsSettings) -> list[Stimulus]:
    """R/W mixes as the outer loop, block sizes (large to small) as the inner loop."""
    mixes = s.mixes if s.mixes is not None else IOPS_MIXES
    sizes = s.block_sizes if s.block_sizes is not None else IOPS_BLOCK_SIZES
    order_m = [m for m in IOPS_MIXES if m in mixes] + [m for m in mixes if m not in IOPS_MIXES]
    order_b = sorted(sizes, reverse=True)
    return [stimulus("RND", bs, mix) for mix in order_m for bs in order_b]


def iops_trackers(s: PtsSettings) -> list[Tracker]:
    keys = {st.key for st in iops_stimuli(s)}
    out = []
    for bs, mix in IOPS_TRACKING:
        st = stimulus("RND", bs, mix)
        if st.key not in keys:
            from ssdlab.errors import UsageError

            raise UsageError(f"the IOPS matrix must keep the tracking point {st.label} "
                             "(tracked: RND 4 KiB 0/100, 64 KiB 65/35, 1024 KiB 100/0)")
        out.append(Tracker(name=f"IOPS {st.label}", key=st.key, metric="iops", unit="IOPS"))
    return out


IOPS = RoundTest(name="iops", title="IOPS", stimuli=iops_stimuli, trackers=iops_trackers, metric="iops")


def _tp_test(bs: int) -> RoundTest:
    def stimuli(s: PtsSettings) -> list[Stimulus]:
        return [stimulus("SEQ", bs, 100), stimulus("SEQ", bs, 0)]

    def trackers(s: PtsSettings) -> list[Tracker]:
        return [Tracker(name=f"TP {st.label}", key=st.key, metric="mbps", unit="MB/s") for st in stimuli(s)]

    kib = bs // KiB
    return RoundTest(name=f"tp{kib}", title=f"Throughput {kib} KiB", stimuli=stimuli, trackers=trackers,
                     metric="mbps", wipc_bs=bs)


TP128 = _tp_test(128 * KiB)
TP1024 = _tp_test(1024 * KiB)


def lat_stimuli(s: PtsSettings) -> list[Stimulus]:
    return [stimulus("RND", bs, mix) for mix in LAT_MIXES for bs in LAT_BLOCK_SIZES]


def lat_trackers(s: PtsSettings) -> list[Tracker]:
    st = stimulus("RND", 4 * KiB, 0)
    return [Tracker(name=f"ART {st.label}", key=st.key, metric="art", unit="µs")]


LAT = RoundTest(name="lat", title="Latency", stimuli=lat_stimuli, trackers=lat_trackers, metric="art",
                fixed_tq=(1, 1), captures=lathist.captures)


IOPS_OPTIONS = (
    SuiteOption("pts-block-sizes", "str", None, "IOPS test only, for quick runs: comma list of KiB block sizes "
                "(e.g. 1024,64,4); the default is the spec's full list"),
    SuiteOption("pts-mixes", "str", None, "IOPS test only, for quick runs: comma list of read/write mixes "
                "(e.g. 100/0,65/35,0/100); the default is the spec's full list"),
)

LAT_OPTIONS = (
    SuiteOption("lat-hist-mixes", "str", "0/100,100/0", "LAT: R/W mixes of the RND 4 KiB T1Q1 response-time "
                "histogram captures after the rounds, or 'none' (0/100,100/0)"),
    SuiteOption("lat-hist-minutes", "float", 20.0, "LAT: length of each histogram capture, spec minutes (20)"),
)

register_test(round_family_test("iops", "IOPS", (IOPS,), IOPS_OPTIONS))
register_test(round_family_test("tp", "Throughput", (TP128, TP1024)))
register_test(round_family_test("lat", "Latency", (LAT,), LAT_OPTIONS))

register_suite("pts-iops", "SNIA PTS 2.0 IOPS: purge, WIPC, rounds of RND 7 mixes x 8 block sizes until steady "
               "state (3 tracking variables)", ("iops",))
register_suite("pts-tp", "SNIA PTS 2.0 Throughput: SEQ 128 KiB and 1024 KiB read/write, two tests each purged and "
               "preconditioned", ("tp",))
register_suite("pts-lat", "SNIA PTS 2.0 Latency: RND 0.5/4/8 KiB x 100/0, 65/35, 0/100 at T1Q1; ART, MRT, 5 nines",
               ("lat",))
