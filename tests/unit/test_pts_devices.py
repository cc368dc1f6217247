"""PTS on several devices at once: rounds in lockstep, steady state judged per device, reported for the group."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tests.unit.test_pts_rounds import SMALL, ctx, drive, measurement, new_run, suite

from ssdlab.results import aggregate
from ssdlab.results.model import PartResult, PointResult, Run, TestPoint
from ssdlab.suites.pts import common
from ssdlab.suites.pts.tests import IOPS

DEVICES = ("/dev/loop1", "/dev/loop2")
DeviceValue = Callable[[TestPoint, str], float | None]


def simulate_devices(value: DeviceValue, limit: int = 5000, **options: object) -> Run:
    """Drive pts-iops like the orchestrator does; each point's measurement is the exact aggregate of one
    synthetic measurement per device (None: the device has no result in that point)."""
    s = suite("pts-iops")
    c = ctx(**SMALL, **options)

    def result(p: TestPoint) -> PointResult:
        if p.phase == "purge":
            return PointResult(point=p, status="ok", started="", finished="", reason="purged")
        parts = []
        for dev in DEVICES:
            v = value(p, dev)
            parts.append(PartResult("", dev, measurement=measurement(p, v)) if v is not None
                         else PartResult("", dev, status="failed", reason="I/O error"))
        m = aggregate.merge([q.measurement for q in parts if q.measurement is not None], parts=tuple(parts))
        return PointResult(point=p, status="ok", started="", finished="", measurement=m)

    return drive(s, c, new_run(s.name, {"kind": "multi", "capacity_bytes": c.capacity}), result, limit)


def _without_parts(run: Run) -> Run:
    """The same run as if it had one device: aggregates only."""
    return dataclasses.replace(run, points=tuple(
        dataclasses.replace(r, measurement=dataclasses.replace(r.measurement, parts=()))
        if r.measurement is not None else r for r in run.points))


def _round(p: TestPoint) -> int:
    return int(p.tags.get("round", 0))


def test_group_is_steady_only_when_every_device_is() -> None:
    """Device 1 is flat from the start; device 2 doubles every round until round 9, then is flat: the group's test
    ends at the first window where both are steady. The aggregate alone (dominated by device 1) looks steady
    from round 5 and would have stopped there."""
    def value(p: TestPoint, dev: str) -> float:
        if dev == DEVICES[0]:
            return 10_000.0
        return float(2 ** min(_round(p), 9))

    run = simulate_devices(value)
    state = common.analyse(IOPS, common.settings(ctx(**SMALL)), run)
    assert state.steady
    assert state.window_end == 13
    aggregate_only = _without_parts(run)
    assert common.analyse(IOPS, common.settings(ctx(**SMALL)), aggregate_only).window_end == 5
    assert set(state.device_determinations) == set(DEVICES)
    assert all(d.steady for per in state.device_determinations.values() for d in per.values())
    event = next(e for e in run.events if e.get("kind") == "pts-steady-state")
    assert set(event["devices"]) == set(DEVICES)
    assert event["steady"] is True
    assert "on every device (2)" in event["note"]


def test_a_device_that_never_settles_keeps_the_group_from_steady_state() -> None:
    def value(p: TestPoint, dev: str) -> float:
        return 10_000.0 if dev == DEVICES[0] else 1_000.0 * (1 + _round(p))

    run = simulate_devices(value, max_rounds=7)
    state = common.analyse(IOPS, common.settings(ctx(**SMALL, max_rounds=7)), run)
    assert state.finished
    assert not state.steady
    assert state.rounds_done == 7
    per = state.device_determinations
    assert all(d.steady for d in per[DEVICES[0]].values())
    assert not all(d.steady for d in per[DEVICES[1]].values())


def test_a_device_that_left_the_run_is_not_judged() -> None:
    """Device 2 fails from round 3 on (--on-error continue): the group is judged on device 1 alone."""
    def value(p: TestPoint, dev: str) -> float | None:
        if dev == DEVICES[1] and _round(p) >= 3:
            return None
        return 10_000.0

    run = simulate_devices(value)
    state = common.analyse(IOPS, common.settings(ctx(**SMALL)), run)
    assert state.steady
    assert state.window_end == 5
    assert list(state.device_determinations) == [DEVICES[0]]


def test_single_device_runs_keep_the_aggregate_rule() -> None:
    def value(p: TestPoint, dev: str) -> float:
        return 10_000.0

    run = simulate_devices(value)
    state = common.analyse(IOPS, common.settings(ctx(**SMALL)), _without_parts(run))
    assert state.steady
    assert state.window_end == 5
    assert state.device_determinations == {}
