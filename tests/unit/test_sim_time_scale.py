"""Time scaled with capacity (issue 33): `time_scale` S makes the drive's state move S times more slowly per second
of host writes (time-based points) and of idle GC, while every write still costs what it costs the drive in its
present state. A full-size drive's minutes are then the model's minutes (`time_scale=0`: full_size / capacity)."""

from __future__ import annotations

import math

import pytest

from ssdlab.errors import UsageError
from ssdlab.sim.lab import Drive
from ssdlab.sim.presets import PRESETS, resolve, time_scale

SMALL = {"capacity": "256MiB"}


def _drive(scale: float, **more: str) -> Drive:
    return Drive("tlc-4k", {**SMALL, "time_scale": f"{scale:g}", **more})


def test_a_time_based_point_moves_the_state_by_one_write_in_s() -> None:
    """From a new drive, a time-based point of 4K random writes maps one written IU in S (every write is still
    issued, counted and programmed), and the drive stays fresh-out-of-box for S times longer."""
    plain, scaled = _drive(1, layout="0"), _drive(20, layout="0")
    p1 = plain.run(rmix=0, qd=32, jobs=4, runtime_s=0.05)
    p20 = scaled.run(rmix=0, qd=32, jobs=4, runtime_s=0.05)
    c1, c20 = plain.dev.counters(), scaled.dev.counters()
    writes = c20["host_write_bytes"] // 4096
    assert c20["host_write_slots"] + c20["buffer_merges"] == writes  # every write is programmed (or merged)
    assert math.isclose(c20["mapped_slots"], writes / 20, rel_tol=0.02)
    assert c1["mapped_slots"] > 10 * c20["mapped_slots"]
    assert math.isclose(p20.iops, p1.iops, rel_tol=0.05)  # both at the fresh drive's rate


def test_steady_state_costs_the_same_at_any_scale() -> None:
    """At 4K random-write steady state a phantom write costs what a write costs there (its program and GC's reads,
    programs and erases at the victims' ratio): IOPS and write amplification as without the time scale."""
    out = {}
    for scale in (1.0, 50.0):
        d = _drive(scale).steady()
        p = d.run(rmix=0, qd=32, jobs=4, runtime_s=0.5, ramp_s=0.05)
        out[scale] = (p.iops, p.wa_gc)
    (i1, wa1), (i50, wa50) = out[1.0], out[50.0]
    assert wa1 > 4.0  # GC is working hard: the comparison means something
    assert math.isclose(i50, i1, rel_tol=0.08)
    assert math.isclose(wa50, wa1, rel_tol=0.08)


def test_the_write_cliff_comes_s_times_later_in_time() -> None:
    """From a new drive, time-based rounds of 4K random writes: the cliff (IOPS below 70 % of the fresh rate) comes
    after S times the host writes, with the same share of the drive written (state) at it; rounds S times longer
    then follow the same curve down."""
    at: dict[float, tuple[int, int]] = {}
    curve: dict[float, list[float]] = {}
    for scale in (1.0, 8.0):
        d = _drive(scale, layout="0")
        iops = [d.run(rmix=0, qd=32, jobs=4, runtime_s=0.02 * scale).iops for _ in range(3)]
        fob = sorted(iops)[1]
        while len(iops) < 400:
            iops.append(d.run(rmix=0, qd=32, jobs=4, runtime_s=0.02 * scale).iops)
            if iops[-1] < 0.7 * fob and scale not in at:
                c = d.dev.counters()
                at[scale] = (c["host_write_bytes"], c["mapped_slots"])
                cliff = len(iops)
            if scale in at and len(iops) == cliff + 20:
                curve[scale] = [i / fob for i in iops[cliff:]]
                break
    assert set(at) == {1.0, 8.0}
    (host1, mapped1), (host8, mapped8) = at[1.0], at[8.0]
    assert math.isclose(host8 / host1, 8.0, rel_tol=0.15)
    assert math.isclose(mapped8, mapped1, rel_tol=0.15)
    for a, b in zip(curve[1.0], curve[8.0], strict=True):
        assert math.isclose(a, b, abs_tol=0.08)


def test_idle_gc_recovers_one_s_th_as_much() -> None:
    """Background GC in host idle time relocates idle_gc MB/s of the full-size drive: 1/S of it on the model, so a
    wait S times longer relocates as much (PTS HIR's recovery on a drive S times larger)."""
    moved: dict[object, int] = {}
    for scale, wait in ((1.0, 1.0), (10.0, 1.0), (10.0, 10.0)):
        d = _drive(scale, idle_gc="20", idle_gc_ms="0", capacity="1GiB").steady()
        moved[(scale, wait)] = d.dev.idle(int(wait * 1e9))["relocated_slots"]
    d = _drive(10.0, idle_gc="20", idle_gc_ms="0", capacity="1GiB").steady()
    moved["ten waits of 1 s"] = sum(d.dev.idle(int(1e9))["relocated_slots"] for _ in range(10))
    spb = d.dev.geometry()["slots_per_block"]
    assert moved[(1.0, 1.0)] > 4 * spb
    assert moved[(10.0, 1.0)] < moved[(1.0, 1.0)] / 3
    assert math.isclose(moved[(10.0, 10.0)], moved[(1.0, 1.0)], abs_tol=spb)
    # a victim is cleaned once the waits have paid for it: short waits add up, none cleans one for free
    assert math.isclose(moved["ten waits of 1 s"], moved[(10.0, 10.0)], abs_tol=spb)


def test_size_based_points_move_the_state_by_all_their_bytes() -> None:
    """A point of so many bytes (a fill, a preconditioning pass) writes them all: the time scale is about time."""
    d = _drive(100, layout="0")
    d.run(rmix=0, bs=128 * 1024, qd=32, random=False, io_bytes=d.user)
    c = d.dev.counters()
    assert c["mapped_slots"] == c["user_slots"]


def test_a_sequential_stream_moves_on_with_its_state_changing_writes() -> None:
    """Time-based sequential writes: the stream's position advances with the writes that change the state, so the
    state sees a contiguous run of 1/S of the bytes (as the full-size drive's sequential write covers 1/S of it)."""
    d = _drive(10, layout="0")
    d.run(rmix=0, bs=128 * 1024, qd=32, random=False, runtime_s=0.05)
    c = d.dev.counters()
    written = c["host_write_bytes"] // 4096
    assert math.isclose(c["mapped_slots"], written / 10, rel_tol=0.05)
    assert c["erases"] == 0  # nothing overwritten: the run is contiguous from the start of the drive


def test_save_load_with_a_time_scale_continues_identically() -> None:
    """The phantom accounting (which write comes next, GC owed) is part of the state image."""
    a = _drive(7)
    a.steady()
    a.run(rmix=30, qd=16, runtime_s=0.05)
    image = a.dev.save()
    b = _drive(7)
    b.dev.load(image)
    b.seed = a.seed
    pa = a.run(rmix=30, qd=16, runtime_s=0.1)
    pb = b.run(rmix=30, qd=16, runtime_s=0.1)
    assert pa.result["dirs"] == pb.result["dirs"]
    assert a.dev.counters() == b.dev.counters()


def test_full_size_pace_is_the_capacity_ratio() -> None:
    for name in ("p5430", "p5316", "s3500", "cm5-r", "cd5", "pe321", "p5430-op"):
        v = resolve(name, {"time_scale": "0"})
        assert time_scale(v) == pytest.approx(int(v["full_size"]) / int(v["capacity"]))
        assert time_scale(v) > 400
    assert time_scale(resolve("p5430", {})) == 1.0  # the default: the scaled drive's own pace
    with pytest.raises(UsageError, match="full_size"):
        resolve("tlc-4k", {"time_scale": "0"})
    with pytest.raises(UsageError, match="1 or more"):
        resolve("tlc-4k", {"time_scale": "0.5"})
    assert all(time_scale(resolve(n, {})) == 1.0 for n in PRESETS)
