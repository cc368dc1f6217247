"""The reviewer's shape rules of `ssdlab sim validate` (sim/shapes.py) judged on made-up measurements: each rule
fails on the shape it is there to catch and passes on a drive-like one. (The rules on the model itself run in
`ssdlab sim validate`; docs/sim.md gives their results.)"""

from __future__ import annotations

import numpy as np
import pytest

from ssdlab.results import hist
from ssdlab.sim.lab import Drive, Point
from ssdlab.sim.presets import ENVELOPES, form_factor
from ssdlab.sim.shapes import (
    CAP_WAIT_X,
    COV_FLOOR_PCT,
    COV_POINTS,
    MIN_IOS,
    WSAT_ROUNDS_PER_FILL,
    Battery,
    Shape,
    bends,
    caps,
    cov_shape,
    op_shape,
    power_shape,
    settling,
    spread_shape,
    wait_ratio,
    worst_gc_step_us,
    zero_width,
)


def made(read_ns: list[int], write_ns: list[int] | None = None, *, per_second: list[float] | None = None,
         power_w: float = 10.0) -> Point:
    """A point with these latencies (ns) per direction, an optional per-second IOPS series and a power draw."""
    dirs = []
    for lat in (read_ns, write_ns or [], []):
        counts = np.zeros(hist.PLAT_NR, dtype=np.int64)
        for v in lat:
            counts[hist.value_to_idx(v)] += 1
        n = len(lat)
        dirs.append((n, 4096 * n, float(sum(lat)), float(sum(v * v for v in lat)), min(lat, default=0),
                     max(lat, default=0), counts.tobytes()))
    series = [(v, 0, 0, 0, 0, 0, 0, 0, 0) for v in (per_second or [])] + [(0,) * 9]
    p = Point(result={"dirs": dirs, "series": series}, iops=float(len(read_ns)), secs=1.0, wa_gc=0.0, power_w=power_w)
    p.interval_s = 1.0 if per_second else 0.0
    return p


def spread_ns(n: int, lo: int = 80_000, hi: int = 400_000) -> list[int]:
    rng = np.random.default_rng(1)
    return [int(v) for v in rng.uniform(lo, hi, n)]


def test_a_zero_width_point_fails_and_is_named() -> None:
    bat = Battery()
    bat.add("128K sequential read", made([562_000] * 170_846))
    bat.add("QD1 4K read", made(spread_ns(5000)))
    bat.add("short", made([50_000] * (MIN_IOS - 1)))  # too few I/Os to count
    shape = zero_width("x", bat)
    assert not shape.ok
    assert "1 of 2 flat" in shape.measured
    assert "128K sequential read reads at 56" in shape.measured


def test_a_point_with_a_spread_passes_even_with_a_flat_bulk() -> None:
    # 99.98 % at one latency, a few slower: p99.99 > p50
    lat = [50_000] * 9998 + [90_000, 120_000]
    assert zero_width("x", Battery({"w": made([], lat)})).ok


def test_flat_writes_fail_too() -> None:
    shape = zero_width("x", Battery({"QD1 4K write": made(spread_ns(2000), [50_200] * 944_064)}))
    assert not shape.ok
    assert "writes at" in shape.measured


def test_per_second_iops_pinned_to_a_ceiling_fail_the_cov_floor() -> None:
    noisy = [100_000.0 * (1 + 0.01 * np.sin(k)) for k in range(10)]
    pinned = [93_006.0] * 10
    points = {name: made(spread_ns(1000), per_second=noisy) for name in COV_POINTS}
    assert cov_shape("x", points).ok
    points[COV_POINTS[0]] = made(spread_ns(1000), per_second=pinned)
    shape = cov_shape("x", points)
    assert not shape.ok
    assert COV_POINTS[0] in shape.measured
    assert shape.rule == f">= {COV_FLOOR_PCT:g} % each"


def test_power_over_the_form_factors_envelope_fails() -> None:
    assert form_factor("p5430") == ("U.2", 25.0)
    assert form_factor("s3500") == ("SATA 2.5-inch", 7.2)
    ok = {"a": made([1], power_w=24.0), "b": made([1], power_w=12.0)}
    assert power_shape("p5430", ok).ok
    hot = {"a": made([1], power_w=61.0), "b": made([1], power_w=12.0)}
    shape = power_shape("p5430", hot)
    assert not shape.ok
    assert "61.0 W (a)" in shape.measured
    assert not power_shape("s3500", {"a": made([1], power_w=ENVELOPES["SATA 2.5-inch"] + 0.1)}).ok
    # judged to 0.1 W: a drive held at its 25 W cap averages 25.03 W in the model's accounting
    assert power_shape("p5430", {"a": made([1], power_w=25.04)}).ok
    assert not power_shape("p5430", {"a": made([1], power_w=25.06)}).ok


def test_a_stall_under_a_power_cap_fails_the_wait_bound() -> None:
    steady = made(spread_ns(10_000, 5_000_000, 10_000_000))  # mean 7.5 ms, longest 10 ms
    x, mean = wait_ratio(steady)
    assert x < CAP_WAIT_X
    assert mean == pytest.approx(7_500, rel=0.02)
    stalled = made([*spread_ns(10000, 5000000, 10000000), 900000000])  # a 0.9-s stall
    assert wait_ratio(stalled)[0] > CAP_WAIT_X


def test_the_caps_are_the_power_modes_or_half_way_to_the_uncapped_draw() -> None:
    assert caps("p5430", {}, 6.1) == (15.0, 10.0)
    assert caps("tlc-4k", {"a": made([1], power_w=45.0), "b": made([1], power_w=20.0)}, 5.0) == (25.0,)


def test_iops_linear_then_flat_has_no_bend() -> None:
    corner = {qd: min(qd * 10_000.0, 1_100_000.0) for qd in (1, 2, 4, 8, 16, 32, 64, 128, 256)}
    assert bends(corner) == []
    # a queueing knee: IOPS = top * qd / (qd + k)
    knee = {qd: 1_100_000.0 * qd / (qd + 100) * 1.01 for qd in (1, 2, 4, 8, 16, 32, 64, 128, 256)}
    found = bends(knee)
    assert found
    _qd, linear, top = found[0]
    assert linear <= 0.9
    assert top <= 0.9


def test_wsat_that_slides_does_not_settle_one_with_a_cliff_and_plateau_does() -> None:
    n = WSAT_ROUNDS_PER_FILL
    cliff = [300_000.0] * n + [150_000.0 - 2_000 * k for k in range(n // 2)] + [100_000.0] * (3 * n - n // 2)
    plateau, settled = settling(cliff)
    assert plateau == pytest.approx(100_000.0)
    assert settled == pytest.approx(1.5)
    slide = [300_000.0 * (1 - 0.15 * k / n) for k in range(4 * n)]  # still falling in the fourth fill
    assert settling(slide)[1] > 3


def test_a_tail_that_does_not_move_with_the_seed_fails() -> None:
    assert not spread_shape("x", "QD1 4K read p99.99", [178.0] * 5).ok
    moving = spread_shape("x", "QD1 4K read p99.99", [171.0, 178.0, 169.0, 182.0, 175.0])
    assert moving.ok
    assert moving.measured.startswith("169 / 175 / 182 µs")


def test_op_check_fails_when_the_variant_reads_slower() -> None:
    # the variant with one read unit per die instead of four: its 16K-1M reads trail by far more than 5 %
    slow = op_shape("tlc-4k-28", Drive("tlc-4k-28", {"read_planes": "1"}), Drive("tlc-4k"))
    assert not slow.ok
    assert slow.rule == ">= 0.95"
    assert slow.measured.startswith("0.")


def test_worst_gc_step_grows_with_the_slowest_program() -> None:
    v = dict(Drive("tlc-4k").values)
    base = worst_gc_step_us(v)
    v["tprog"] = (1200.0,)
    assert worst_gc_step_us(v) > base + 500


def test_shape_is_plain_data() -> None:
    s = Shape("p", "n", "m", "r", True)
    assert (s.preset, s.ok) == ("p", True)
