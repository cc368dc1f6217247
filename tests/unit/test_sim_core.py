"""The native core: FTL invariants, timing identities, state images, workload controls."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ssdlab.results import hist
from ssdlab.sim import core
from ssdlab.sim.presets import mean_read_us
from ssdlab.sim.validate import Bench, desnoyers_wa

SMALL = "256MiB"


def small(**kw: Any) -> Bench:
    return Bench("tlc-4k", capacity=kw.pop("capacity", SMALL), **kw)


def raw_workload(b: Bench, **kw: Any) -> dict[str, Any]:
    """A core workload dict over the whole drive (4K random reads, QD1) with `kw` changed."""
    wl: dict[str, Any] = {"rmix": 100, "random": 1, "trim": 0, "range_start": 0, "range_len": b.user,
                          "align": 4096, "iodepth": 1, "numjobs": 1, "time_based": 0, "ramp_ns": 0, "runtime_ns": 0,
                          "io_bytes": 0, "rate_iops": 0, "interval_ns": 0, "seed": 3, "bssplit": [(4096, 1)]}
    return wl | kw


def run_raw(b: Bench, **kw: Any) -> dict[str, Any]:
    """Run one point with raw_workload(b, **kw) to its end; the core's finish() result."""
    b.dev.begin(raw_workload(b, **kw))
    while not b.dev.advance(2**62):
        pass
    result: dict[str, Any] = b.dev.finish()
    return result


def test_plat_idx_matches_fio_scheme() -> None:
    rng = np.random.default_rng(1)
    values = [0, 1, 63, 64, 127, 128, 129, 255, 256, 1000, 2**20, 2**33, 2**34, 2**40]
    values += [int(v) for v in rng.integers(0, 2**35, 2000)]
    for v in values:
        assert core().plat_idx(v) == hist.value_to_idx(v)


def test_fob_then_fill_maps_everything_with_wa_one() -> None:
    b = small()
    c = b.dev.counters()
    assert c["mapped_slots"] == 0
    b.fill()
    c = b.dev.counters()
    assert c["mapped_slots"] == c["user_slots"]
    assert c["gc_runs"] == 0
    assert c["nand_write_slots"] == c["user_slots"]


def test_sequential_writes_do_not_amplify() -> None:
    b = small()
    b.fill()
    _, s = b.run(random=False, bs=128 * 1024, qd=8, io_bytes=2 * b.user)
    assert s["wa_gc"] == pytest.approx(1.0, abs=0.02)


def test_random_writes_amplify_near_the_formula() -> None:
    s = small(op=28).steady_random_write()
    assert 0.9 * desnoyers_wa(28) <= s["wa_gc"] <= 1.01 * desnoyers_wa(28)


def test_reset_returns_to_fob() -> None:
    b = small()
    b.fill()
    b.dev.reset()
    c = b.dev.counters()
    assert c["mapped_slots"] == 0
    assert c["free_blocks"] == c["blocks"]


def test_save_load_roundtrip_continues_identically() -> None:
    a = small()
    a.fill()
    a.run(io_bytes=a.user // 2)
    image = a.dev.save()
    b = small()
    b.dev.load(image)
    b.seed = a.seed
    ra, _ = a.run(rmix=50, qd=16, runtime_s=0.2)
    rb, _ = b.run(rmix=50, qd=16, runtime_s=0.2)
    assert ra["dirs"] == rb["dirs"]
    assert a.dev.counters() == b.dev.counters()


def test_save_load_roundtrip_under_a_power_cap() -> None:
    """The governor's booked energy and the controller's cores are part of the state image: a capped drive reloaded
    between points continues exactly as the live one."""
    a = small(power=7)
    a.fill()
    a.run(io_bytes=a.user // 2)
    a.run(rmix=70, qd=16, runtime_s=0.1)  # leaves program/erase work booked past its end
    image = a.dev.save()
    b = small(power=7)
    b.dev.load(image)
    b.seed = a.seed
    ra, _ = a.run(rmix=70, qd=16, runtime_s=0.2)
    rb, _ = b.run(rmix=70, qd=16, runtime_s=0.2)
    assert ra["dirs"] == rb["dirs"]
    assert a.dev.counters() == b.dev.counters()


def test_load_rejects_other_geometry() -> None:
    a = small()
    image = a.dev.save()
    b = small(capacity="512MiB")
    with pytest.raises(ValueError, match="geometry"):
        b.dev.load(image)


def test_histogram_counts_equal_ios_and_littles_law() -> None:
    b = small()
    b.fill()
    r, s = b.run(rmix=100, qd=16, jobs=2, runtime_s=0.3)
    n, _, lat_sum, _, lo, hi, hbytes = r["dirs"][0]
    counts = np.frombuffer(hbytes, dtype=np.int64)
    assert int(counts.sum()) == n
    assert lo <= lat_sum / n <= hi
    assert s["iops"] * s["mean_lat_s"] == pytest.approx(32, rel=0.02)


def test_qd1_read_is_firmware_plus_tr_plus_transfers() -> None:
    b = small()
    b.fill()
    _, s = b.run(rmix=100, qd=1, runtime_s=0.1)
    assert s["mean_lat_s"] * 1e6 == pytest.approx(mean_read_us(b.values), rel=0.01)


def test_unmapped_reads_skip_nand() -> None:
    b = small()  # fresh out of box: nothing mapped
    _, s = b.run(rmix=100, qd=1, runtime_s=0.05)
    assert s["mean_lat_s"] * 1e6 < min(b.values["tr"])


def test_partial_map_cache_costs_reads() -> None:
    full, part = small(), small(map_cache=0.01)
    for b in (full, part):
        b.fill()
    _, s_full = full.run(rmix=100, qd=1, runtime_s=0.1)
    _, s_part = part.run(rmix=100, qd=1, runtime_s=0.1)
    assert s_part["mean_lat_s"] > 1.5 * s_full["mean_lat_s"]
    assert part.dev.counters()["map_misses"] > 0
    assert full.dev.counters()["map_misses"] == 0


def test_sub_iu_writes_read_modify_write() -> None:
    b = Bench("qlc-64k", capacity="256MiB")
    b.fill()
    _, s = b.run(bs=4096, qd=8, io_bytes=b.user // 16)
    c = b.dev.counters()
    assert c["rmw_reads"] > 0
    assert s["wa_total"] >= 16 * 0.98


def test_sequential_sub_iu_writes_coalesce_in_the_buffer() -> None:
    b = Bench("qlc-64k", capacity="256MiB")
    b.fill()
    _, s = b.run(bs=4096, qd=1, random=False, io_bytes=b.user // 4)
    assert s["wa_total"] < 1.2
    assert b.dev.counters()["buffer_merges"] > 0


def test_slow_path_only_hits_unaligned_writes() -> None:
    fast, slow = small(), small(slowpath_us=50)
    for b in (fast, slow):
        b.fill()
    _, a = fast.run(qd=1, runtime_s=0.05)
    _, c = slow.run(qd=1, runtime_s=0.05)
    assert c["mean_lat_s"] == pytest.approx(a["mean_lat_s"], rel=0.05)  # aligned 4K: no slow path


def test_rate_iops_caps_throughput() -> None:
    b = small()
    b.fill()
    r = run_raw(b, iodepth=4, numjobs=2, time_based=1, runtime_ns=500_000_000, rate_iops=1000)
    assert r["dirs"][0][0] == pytest.approx(2 * 1000 * 0.5, rel=0.02)


def test_trim_unmaps() -> None:
    b = small()
    b.fill()
    r = run_raw(b, rmix=0, random=0, trim=1, range_len=b.user // 2, align=65536, io_bytes=b.user // 2, seed=1,
                bssplit=[(65536, 1)])
    c = b.dev.counters()
    assert r["dirs"][2][0] == b.user // 2 // 65536
    assert c["mapped_slots"] == c["user_slots"] // 2


def test_bssplit_mixes_sizes() -> None:
    b = small()
    b.fill()
    n, nbytes = run_raw(b, iodepth=8, time_based=1, runtime_ns=200_000_000,
                        bssplit=[(4096, 750_000), (65536, 250_000)])["dirs"][0][:2]
    mean_bs = nbytes / n
    assert mean_bs == pytest.approx(0.75 * 4096 + 0.25 * 65536, rel=0.05)


def test_power_cap_limits_average_power() -> None:
    free = small()  # uncapped, the drive draws more than the cap below
    capped = small(power=7)
    for b in (free, capped):
        b.fill()
        b.run(io_bytes=b.user)
    _, s_free = free.run(runtime_s=1.0, ramp_s=0.5)
    _, s = capped.run(runtime_s=1.0, ramp_s=0.5)
    assert s_free["power_w"] > 8
    assert 7 * 0.95 <= s["power_w"] <= 7 * 1.02


def test_workload_outside_drive_is_rejected() -> None:
    b = small()
    with pytest.raises(ValueError, match="outside"):
        b.dev.begin(raw_workload(b, range_start=b.user, range_len=4096, io_bytes=4096, seed=1))


def test_idle_time_gc_refills_the_free_pool_at_its_rate() -> None:
    b = small(idle_gc=200, idle_gc_ms=50, idle_free=50)
    b.steady_random_write()
    free0 = b.dev.counters()["free_blocks"]
    mapped = b.dev.counters()["mapped_slots"]
    short = b.dev.idle(int(0.3e9))
    assert short["free_before"] == free0
    # paced: about 200 MB/s of relocated data after the 50 ms idle delay (one victim more at most)
    victim = b.dev.geometry()["slots_per_block"] * 4096
    assert abs(short["relocated_slots"] * 4096 - 200e6 * 0.25) <= victim
    assert short["free_after"] > free0
    long = b.dev.idle(int(60e9))  # far longer than needed: stops at the free-pool target
    c = b.dev.counters()
    assert c["mapped_slots"] == mapped  # GC moves data, never loses or adds any
    again = b.dev.idle(int(10e9))
    assert again["victims"] == 0
    assert again["free_after"] == long["free_after"] == c["free_blocks"]


def test_no_idle_gc_when_disabled_and_points_run_back_to_back() -> None:
    b = small(idle_gc=0)
    b.steady_random_write()
    done = b.dev.idle(int(5e9))
    assert done["victims"] == 0
    assert done["free_after"] == done["free_before"]
    b.dev.begin(raw_workload(b))
    with pytest.raises(RuntimeError, match="idle"):
        b.dev.idle(1000)


def test_qlc_does_not_out_write_tlc() -> None:  # a surprise reviewers noticed: qlc-4k wrote 2.1x faster than tlc-4k
    from ssdlab.sim.lab import Drive

    tlc = Drive("tlc-4k", {"capacity": "512MiB"}).steady().run(rmix=0, qd=32, runtime_s=0.5, ramp_s=0.2)
    qlc = Drive("qlc-4k", {"capacity": "512MiB"}).steady().run(rmix=0, qd=32, runtime_s=0.5, ramp_s=0.2)
    assert qlc.iops < tlc.iops


def test_reads_after_writes_wait_for_one_op_at_most() -> None:
    """A QD1 read point right after a write point: reads go ahead of the queued program/erase work (they suspend the
    op in progress), so none waits for the backlog the writes left (tens of ms before GC ran in steps)."""
    from ssdlab.sim.lab import Drive

    d = Drive("tlc-4k", {"capacity": "512MiB"}).steady()
    d.run(rmix=0, qd=32, runtime_s=0.3)
    assert d.dev.counters()["die_backlog_ns"] > 5_000_000  # the writes left work on the dies
    reads = d.run(rmix=100, qd=1, runtime_s=0.3)
    assert reads.max_us((0,)) < 1000  # at most a program (600 µs) and the read, never the backlog


def test_suspend_off_waits_for_the_op_in_progress() -> None:
    from ssdlab.sim.lab import Drive

    out = {}
    for suspend in ("1", "0"):
        d = Drive("tlc-4k", {"capacity": "512MiB", "suspend": suspend}).steady()
        out[suspend] = d.run(rmix=70, qd=4, runtime_s=0.5, ramp_s=0.1).pct_us(99.9, (0,))
    assert out["0"] > out["1"] * 1.3
