"""The simulator's zoned random distribution (fio `random_distribution=zoned:...`) and blockalign: the model must
put the CBW stimulus's I/Os where fio would, or CBW on `sim:` would measure a uniform workload."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ssdlab.errors import UsageError
from ssdlab.results.model import TestPoint, Workload
from ssdlab.sim.executor import parse_zoned, translate, zone_table
from ssdlab.sim.validate import Bench

CBW_ZONES = "zoned:50/5:30/15:20/80"
CAP = 64 << 20


def test_parse_zoned_fills_directions_and_the_open_last_range() -> None:
    assert parse_zoned(CBW_ZONES)[0] == [(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)]
    assert parse_zoned("zoned:50/5:30/15:20/")[0][-1] == (20.0, 80.0)  # fio's open last range
    reads, writes, trims = parse_zoned("zoned:50/10:50/90,90/10:10/90")
    assert reads == [(50.0, 10.0), (50.0, 90.0)]
    assert writes == trims == [(90.0, 10.0), (10.0, 90.0)]
    for bad in ("zoned:", "zoned:50/5:60/95", "zoned:50/5:50/96", "zoned:x/5", "zoned:50/0:50/100"):
        with pytest.raises(UsageError):
            parse_zoned(bad)


def test_zone_table_is_aligned_and_covers_the_range() -> None:
    zones = zone_table(parse_zoned(CBW_ZONES)[1], 8192, CAP, 4096)
    assert [w for w, _, _ in zones] == [500000, 300000, 200000]
    starts = [s for _, s, _ in zones]
    assert starts[0] == 8192
    assert all((s - 8192) % 4096 == 0 for s in starts)
    assert sum(n for _, _, n in zones) == CAP  # contiguous, first to last byte
    assert zones[0][2] == int(CAP * 0.05) // 4096 * 4096


def _cbw_point(**kw: Any) -> TestPoint:
    w = Workload(rw="randrw", bs=4096, rwmixread=40, runtime_s=0.1, random_distribution=CBW_ZONES,
                 bssplit="512/4:4k/67:8k/29", options={"blockalign": "4k"}, **kw)
    return TestPoint(id="p", label="p", workload=w)


def test_translate_honours_zones_blockalign_and_the_mix() -> None:
    sw = translate(_cbw_point(), CAP, 1)
    assert sw.core["align"] == 4096  # blockalign, not the smallest block size
    assert sw.core["rmix"] == 40
    assert [bs for bs, _ in sw.core["bssplit"]] == [512, 4096, 8192]
    assert [len(z) for z in sw.core["zones"]] == [3, 3, 3]
    assert not sw.notes  # nothing is modelled as something else
    plain = translate(TestPoint(id="p", label="p", workload=Workload(rw="randwrite", bs=4096, bssplit="512/50:4k/50",
                                                                     runtime_s=0.1)), CAP, 1)
    assert plain.core["align"] == 512
    assert "zones" not in plain.core
    other = translate(TestPoint(id="p", label="p", workload=Workload(rw="randread", bs=4096, runtime_s=0.1,
                                                                     random_distribution="zipf:1.2")), CAP, 1)
    assert any("zipf" in n for n in other.notes)


def _mapped_per_zone(zones_text: str | None, writes: int) -> list[int]:
    """Write `writes` random 4 KiB blocks on a fresh drive, then count the mapped blocks of each CBW zone (a trim
    of a zone counts the mapped blocks it unmaps)."""
    b = Bench("tlc-4k", capacity="64MiB")
    wl: dict[str, Any] = {"rmix": 0, "random": 1, "trim": 0, "range_start": 0, "range_len": b.user, "align": 4096,
                          "iodepth": 4, "numjobs": 1, "time_based": 0, "ramp_ns": 0, "runtime_ns": 0,
                          "io_bytes": writes * 4096, "rate_iops": 0, "interval_ns": 0, "seed": 5,
                          "bssplit": [(4096, 1)]}
    table = zone_table(parse_zoned(CBW_ZONES)[1], 0, b.user, 4096)
    if zones_text is not None:
        wl["zones"] = [zone_table(z, 0, b.user, 4096) for z in parse_zoned(zones_text)]
    b.dev.begin(wl)
    while not b.dev.advance(2**62):
        pass
    b.dev.finish()
    out = []
    for _, start, length in table:
        before = b.dev.counters()["trimmed_slots"]
        b.dev.begin(wl | {"trim": 1, "random": 0, "range_start": start, "range_len": length, "io_bytes": length,
                          "bssplit": [(length, 1)], "zones": None})
        while not b.dev.advance(2**62):
            pass
        b.dev.finish()
        out.append(b.dev.counters()["trimmed_slots"] - before)
    return out


def _expected_unique(blocks: int, writes: float) -> float:
    return blocks * (1 - math.exp(-writes / blocks))


def test_zoned_writes_land_in_their_zones() -> None:
    n = 2000
    table = zone_table(parse_zoned(CBW_ZONES)[1], 0, CAP, 4096)
    blocks = [length // 4096 for _, _, length in table]
    got = _mapped_per_zone(CBW_ZONES, n)
    for share, nblk, count in zip((0.5, 0.3, 0.2), blocks, got, strict=True):
        assert count == pytest.approx(_expected_unique(nblk, share * n), rel=0.08)
    uniform = _mapped_per_zone(None, n)
    for frac, nblk, count in zip((0.05, 0.15, 0.8), blocks, uniform, strict=True):
        assert count == pytest.approx(_expected_unique(nblk, frac * n), rel=0.15)
    assert got[0] > 5 * uniform[0]  # the hot 5 % takes half the writes instead of 5 %


def test_core_rejects_zones_outside_the_range() -> None:
    b = Bench("tlc-4k", capacity="64MiB")
    wl: dict[str, Any] = {"rmix": 0, "random": 1, "trim": 0, "range_start": 0, "range_len": 1 << 20, "align": 4096,
                          "iodepth": 1, "numjobs": 1, "time_based": 0, "ramp_ns": 0, "runtime_ns": 0,
                          "io_bytes": 4096, "rate_iops": 0, "interval_ns": 0, "seed": 5, "bssplit": [(4096, 1)],
                          "zones": [[(1, 0, 2 << 20)], [], []]}
    with pytest.raises(ValueError, match="zone"):
        b.dev.begin(wl)
