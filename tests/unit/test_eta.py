"""Wall-clock ETAs: the estimator's arithmetic (priors, learning, simulator calibration) and the expected /
worst-case outlook of adaptive suites (PTS rounds and WSAT), checked against what the suites then run."""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any

import pytest

from pts_points import pts_context, pts_result
from ssdlab.results.model import DirectionStats, Measurement, PointResult, Run, TestPoint, Workload
from ssdlab.run.eta import (
    HOST_GROUP_OVERHEAD_PRIOR_S,
    SIM_IOPS_SHARE_PRIORS,
    SIM_OVERHEAD_PRIOR_S,
    SIM_UNIT_BYTES,
    SIM_UNIT_RATE_PRIOR,
    Estimator,
    Eta,
    History,
    shape,
    sim_kind,
)
from ssdlab.sim.bounds import iops_bound
from ssdlab.sim.presets import resolve
from ssdlab.suites import get_suite
from ssdlab.suites.base import Outlook
from ssdlab.suites.pts import common
from ssdlab.suites.pts.tests import IOPS

MiB = 1024**2


def pt(pid: str, phase: str = "measure", **kw: Any) -> TestPoint:
    w: dict[str, Any] = {"rw": "randread", "bs": 4096, "runtime_s": 5.0}
    w.update(kw)
    return TestPoint(id=pid, label=pid, workload=Workload(**w), phase=phase)


def done(p: TestPoint, *, bw: float = 1e9, sim: dict[str, Any] | None = None) -> PointResult:
    d = DirectionStats(iops=bw / p.workload.bs, bw_bytes=bw, io_bytes=1, total_ios=1, runtime_ms=1)
    m = Measurement(engine="sim" if sim else "fio", engine_version="0", directions={"write": d},
                    extra={"sim": sim} if sim else {})
    return PointResult(point=p, status="ok", started="", finished="", measurement=m)


def test_fio_time_based_points_take_their_run_time_plus_the_measured_overhead() -> None:
    est = Estimator({"kind": "file"}, overhead_s=0.5)
    a, b = pt("a"), pt("b", bs=8192, iodepth=4)
    assert est.seconds(a) == 5.5  # the suite's overhead before anything ran
    est.observe(done(a), 5.2)
    est.observe(done(b), 5.4)
    est.observe(done(pt("c", bs=16384)), 5.3)
    # the median of what points took beyond their run time, the first one's aside (fio's start-up costs)
    assert est.overhead_s == pytest.approx(0.35)
    assert est.seconds(pt("d", bs=65536, runtime_s=60.0)) == pytest.approx(60.35)
    assert est.seconds(pt("a-again")) == 5.2  # the same shape ran before: its own time


def test_fio_size_based_points_use_the_measured_bandwidth() -> None:
    est = Estimator({"kind": "block", "capacity_bytes": 64 << 30})
    wipc = pt("wipc", "precondition", rw="write", bs=131072, runtime_s=None, io_bytes=8 << 30)
    assert est.seconds(wipc) == pytest.approx((8 << 30) / 500e6 + 0.5)  # 500 MB/s before any measurement
    est.observe(done(pt("w1", "precondition", rw="write", bs=131072, runtime_s=None, io_bytes=1 << 30),
                     bw=2e9), 1.0)
    assert est.seconds(wipc) == pytest.approx((8 << 30) / 2e9 + 0.5)
    whole = pt("fill", "precondition", rw="write", bs=131072, runtime_s=None)  # no size: the whole device
    assert est.seconds(whole) == pytest.approx((64 << 30) / 2e9 + 0.5)
    assert est.seconds(pt("p", "purge", rw="write")) == 10.0  # a device purge before one ran


def test_the_simulator_is_timed_by_simulated_work_not_simulated_time() -> None:
    params = resolve("tlc-4k", {})
    est = Estimator({"kind": "sim", "sim": {"params": params}})
    read = pt("r", runtime_s=0.5, iodepth=32, numjobs=4)
    share = SIM_IOPS_SHARE_PRIORS[(True, "r")]  # a random read reaches about half its bound before one ran
    ios = iops_bound(params, read.workload) * 0.5 * share
    assert est.simulated_ios(read) == pytest.approx(ios)
    weight = 1 + 4096 / SIM_UNIT_BYTES
    assert est.seconds(read) == pytest.approx(ios * weight / SIM_UNIT_RATE_PRIOR + SIM_OVERHEAD_PRIOR_S)
    paced = pt("q", runtime_s=2.0, rate_iops=1000, numjobs=2)
    assert est.simulated_ios(paced) == pytest.approx(2 * 1000 * 2.0)  # rate_iops is per job
    sized = pt("s", rw="write", runtime_s=None, io_bytes=256 * MiB, bs=131072)
    assert est.simulated_ios(sized) == 2048
    # a random write that simulated 3 M I/Os at 6 M per second of the core, and took 0.6 s in all
    wr = pt("x", rw="randwrite")
    est.observe(done(wr, sim={"simulated_ios": 3e6, "simulated_ios_per_wall_s": 6e6}), 0.6)
    units = 3e6 * weight
    assert est.sim_rate(wr.workload) == pytest.approx(units / 0.5)  # its kind's rate
    assert est.sim_rate() == pytest.approx(units / 0.5)  # and, before others ran, every kind's
    assert est.overhead_s == pytest.approx(0.1)
    sized_weight = 1 + 131072 / SIM_UNIT_BYTES
    assert est.seconds(sized) == pytest.approx(2048 * sized_weight / (units / 0.5) + 0.1)
    # the drive reached 3e6 I/Os of its bound over 5 s: points of that kind expect the same share
    bound = iops_bound(params, wr.workload) * 5.0
    assert est.iops_share(wr.workload) == pytest.approx(3e6 / bound)
    # a kind not seen yet: its prior, scaled as the random writes turned out against theirs
    ratio = (3e6 / bound) / SIM_IOPS_SHARE_PRIORS[(True, "w")]
    assert est.iops_share(read.workload) == pytest.approx(min(1.5, share * ratio))


def test_sim_kind_groups_workloads_by_pattern_direction_and_depth() -> None:
    assert sim_kind(pt("a").workload) == (True, "r", True)
    assert sim_kind(pt("b", rw="write", iodepth=32).workload) == (False, "w", False)
    assert sim_kind(pt("c", rw="randrw", rwmixread=70).workload) == (True, "m", True)
    assert sim_kind(pt("d", rw="randrw", rwmixread=0).workload) == (True, "w", True)


def test_the_uncertainty_is_learned_from_the_errors_of_new_shapes() -> None:
    est = Estimator({"kind": "file"}, overhead_s=0.0)
    later = Outlook.of([pt(f"n{i}", bs=512 << i) for i in range(4)])
    assert est.estimate(later).spread == pytest.approx(0.25)  # the fio prior
    # three new shapes taking 5.5, 6 and 5.5 s (predicted 5, then 5 + the overhead learned: the first point's
    # 0.5 s while it is the only one, then the second's 1 s)
    for i, (bs, took) in enumerate(((1 << 20, 5.5), (2 << 20, 6.0), (4 << 20, 5.5))):
        est.observe(done(pt(f"m{i}", bs=bs)), took)
    assert est.error(False) == pytest.approx(statistics.median([0.1, 0.5 / 5.5, 1 - 5.5 / 6.0]))
    assert est.error(True) == pytest.approx(0.1)  # no shape ran twice: the prior
    eta = est.estimate(later)
    assert eta.spread == pytest.approx(est.error(False))
    assert eta.plus_minus() == "±10 %"  # (0.09: in steps of 5 %)
    assert eta.text().startswith(eta.duration().split(" (")[0])


def test_an_eta_without_uncertainty_prints_none() -> None:
    bare = Eta(expected_s=75.0, worst_s=75.0, expected_points=8, worst_points=8)
    assert bare.text() == "1m15s"
    assert bare.duration() == "1m15s"
    sure = dataclasses.replace(bare, spread=0.12)
    assert sure.text() == "1m15s ±10 %"
    assert sure.duration() == "1m15s (±10 %)"
    first = sure.with_first(5.0, 0.5)
    assert (first.expected_s, first.worst_s, first.next_s) == (80.0, 80.0, 5.0)
    assert first.spread == pytest.approx((0.12 * 75 + 0.5 * 5) / 80)


def test_outlook_sums_counts_and_keeps_the_next_point() -> None:
    est = Estimator({"kind": "file"}, overhead_s=0.0)
    a, b = pt("a", runtime_s=1.0), pt("b", runtime_s=2.0)
    eta = est.estimate(Outlook(worst=((a, 1), (b, 10)), expected=((a, 1), (b, 3))))
    assert (eta.worst_s, eta.worst_points, eta.expected_s, eta.expected_points) == (21.0, 11, 7.0, 4)
    assert eta.next_s == 1.0
    assert eta.adaptive
    assert not est.estimate(Outlook.of([a, b])).adaptive


def test_eta_counts_down_within_a_point() -> None:
    eta = Eta(expected_s=100.0, worst_s=100.0, expected_points=10, worst_points=10, next_s=20.0)
    assert eta.after(5.0) == 95.0  # no progress figure: the prediction minus the time spent
    assert eta.after(30.0) == 80.0  # past its prediction: the later points only
    assert eta.after(10.0, 0.25) == pytest.approx(80.0 + 30.0)  # a quarter done in 10 s: 30 s to go


def test_shape_ignores_the_point_id_but_not_the_workload() -> None:
    assert shape(pt("iops-r01-x")) == shape(pt("iops-r02-x"))
    assert shape(pt("a")) != shape(pt("a", bs=8192))
    assert shape(pt("a")) != shape(pt("a", phase="precondition"))


def test_a_point_after_longer_host_idle_is_predicted_longer() -> None:
    """PTS HIR: the same workload after 5 s and after 15 s of idle are two shapes (the idle is part of the time)."""
    est = Estimator({"kind": "file"}, overhead_s=0.0)
    after5 = dataclasses.replace(pt("h5"), idle_before_s=5.0)
    after15 = dataclasses.replace(pt("h15"), idle_before_s=15.0)
    assert shape(after5) != shape(after15)
    est.observe(done(after5), 10.5)
    assert est.seconds(after5) == 10.5
    assert est.seconds(after15) == pytest.approx(20.5)
    eta = est.estimate(Outlook.of([after5, after15]))
    assert eta.expected_s == pytest.approx(31.0)


# ---------------------------------------------------------------- adaptive suites


@pytest.mark.parametrize("settles_at", [5, 9])
def test_pts_outlook_matches_what_runs_and_learns_the_rounds(settles_at: int, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """Drive `pts` with synthetic results that settle from round `settles_at` on (steady state 4 rounds later)
    in every test. At every step the outlook's next point is the suite's next point and its worst case counts
    exactly the worst-case remaining points; the expectation starts at 5 rounds per test and, once the first
    test has finished, is exactly what remains."""
    # (the step at `settles_at` is not noise: test_noisy_rounds_are_expected_to_run_to_the_maximum has that)
    monkeypatch.setattr(common, "too_noisy", lambda tracking: False)
    suite, c = get_suite("pts"), pts_context(max_rounds=15, wsat_hours=0.05)  # WSAT: 3 samples at most
    run = Run(schema_version=2, ssdlab_version="t", run_id="t", suite="pts", status="running", created="",
              options={}, target={"kind": "file", "capacity_bytes": c.capacity}, host={})
    iops = IOPS
    steps: list[tuple[int, int, bool]] = []  # (worst, expected, first test finished)
    while True:
        pending = suite.next_points(c, run)
        out = suite.outlook(c, run)
        assert out.next_point == (pending[0] if pending else None)
        worst = sum(n for _, n in out.worst)
        # (a goal, WSAT's samples before anything says what one writes, counts as the estimator finds: at most
        # its limit)
        expected = sum(n for _, n in (out.expected or out.worst)) + sum(g.at_most for g in out.goals)
        assert worst == len(pending)
        assert expected <= worst
        steps.append((worst, expected, common.analyse(iops, common.settings(c), run).finished))
        if not pending:
            break
        p = pending[0]
        r = int(p.tags.get("round", 0))
        run = run.with_point(pts_result(p, 10_000.0 if r >= settles_at else 1_000.0 * r + 1))
    total = len(steps) - 1
    # before anything ran: set-up + 5 rounds of each test (IOPS 9 points a round, TP 2, LAT 9 and its two
    # histogram captures), WSAT's 1+3 and its histogram capture
    assert steps[0][1] == (2 + 5 * 9) + 2 * (2 + 5 * 2) + (2 + 5 * 9 + 2) + (1 + 3 + 1)
    learned = next(i for i, (_, _, first_done) in enumerate(steps) if first_done)
    for i in range(learned, len(steps)):
        assert steps[i][1] == total - i, f"step {i}"


def test_noisy_rounds_are_expected_to_run_to_the_maximum() -> None:
    """A file on a busy host: rounds that scatter around their trend by more than ±10 % rarely make a steady
    window, so the test is expected to run its maximum rounds; a trend alone (leaving FOB) is not noise."""
    assert not common.too_noisy({"w": [27060.0, 32720.0]})  # two rounds say nothing yet
    assert not common.too_noisy({"w": [40000.0, 30000.0, 20000.0, 19000.0, 18800.0]})  # a trend that settles
    assert not common.too_noisy({"w": [1000.0, 1050.0, 980.0, 1020.0]})
    assert common.too_noisy({"w": [27060.0, 32720.0, 38300.0, 5280.0]})  # as measured on a shared machine
    assert common.too_noisy({"a": [1.0, 1.0, 1.0], "w": [100.0, 140.0, 90.0, None]})  # any tracker
    suite, c = get_suite("pts-iops"), pts_context(max_rounds=15)
    run = Run(schema_version=2, ssdlab_version="t", run_id="t", suite="pts-iops", status="running", created="",
              options={}, target={"kind": "file", "capacity_bytes": c.capacity}, host={})
    values = iter([27060.0, 32720.0, 38300.0, 5280.0] * 10)
    rounds_seen = 0
    while rounds_seen < 4:
        p = suite.next_points(c, run)[0]
        r = int(p.tags.get("round", 0))
        rounds_seen = max(rounds_seen, r - 1)
        run = run.with_point(pts_result(p, next(values) if r else 1.0))
    out = suite.outlook(c, run)
    assert sum(n for _, n in out.expected or ()) == sum(n for _, n in out.worst)  # expected: the worst case


def test_a_host_group_expects_the_agents_round_trip_per_point() -> None:
    group = Estimator({"kind": "multi", "hosts": [{"name": "a"}, {"name": "b"}]}, overhead_s=0.5)
    assert group.seconds(pt("a", runtime_s=1.0)) == pytest.approx(1.0 + HOST_GROUP_OVERHEAD_PRIOR_S)
    assert Estimator({"kind": "multi"}, overhead_s=0.5).seconds(pt("a", runtime_s=1.0)) == 1.5  # local devices


# ---------------------------------------------------------------- issue 34: estimates that hold on a busy host


def test_cpu_share_follows_the_tasks_that_want_a_cpu() -> None:
    from ssdlab.run.eta import cpu_share

    assert cpu_share(cpus=2, runnable=1) == 1.0  # this process alone
    assert cpu_share(cpus=2, runnable=12) == pytest.approx(2 / 12)  # eleven others running on two CPUs
    assert cpu_share(cpus=2, runnable=3) == pytest.approx(2 / 3)  # a load average of 26 from I/O waits aside
    assert cpu_share(cpus=2, runnable=1000) == 0.05  # never below
    # without a count of runnable tasks: the 1-minute load average, this process added
    assert cpu_share(cpus=2, load=0.3) == 1.0
    assert cpu_share(cpus=2, load=6.0) == pytest.approx(2 / 7)


def test_the_cpu_share_is_the_one_this_process_got(tmp_path: Any) -> None:
    """What the kernel says this thread got while it wanted a CPU (schedstat: ns on a CPU, ns waiting in a run
    queue), before any guess from other tasks: a run under a CPU hog started 67 % short of its time from them."""
    from ssdlab.run.eta import cpu_share, observed_share

    stat = tmp_path / "schedstat"
    stat.write_text("300000000 900000000 40\n", encoding="ascii")  # 0.3 s on a CPU, 0.9 s waiting for one
    assert observed_share(stat) == 0.25
    assert cpu_share(schedstat=stat) == 0.25  # whatever the count of runnable tasks or the load average says
    assert cpu_share(cpus=2, runnable=1, schedstat=stat) == 1.0  # a count given: that count
    stat.write_text("400000000 0 9\n", encoding="ascii")
    assert observed_share(stat) == 1.0  # never waited: a CPU of its own
    stat.write_text("1000000 999000000000 9\n", encoding="ascii")
    assert observed_share(stat) == 0.05  # never below
    for too_little in ("20000000 20000000 3\n", "0 0 0\n", "garbage\n", ""):
        stat.write_text(too_little, encoding="ascii")
        assert observed_share(stat) is None  # under 0.05 s measured, or nothing the kernel said
    assert observed_share(tmp_path / "missing") is None
    assert cpu_share(schedstat=tmp_path / "missing") > 0  # then the runnable count, or the load average


def test_a_simulator_runs_eta_follows_the_cpu_share_this_process_got(tmp_path: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulator is CPU work, all of it (points, purge, layout): with a quarter of a CPU it takes four times
    as long, and the ETA a run starts with says so; the share injected, nothing here depends on this host."""
    from ssdlab.results.request import RunRequest
    from ssdlab.run import eta
    from ssdlab.run.setup import setup_run

    stat = tmp_path / "schedstat"
    monkeypatch.setattr(eta, "SCHEDSTAT", stat)
    setup = setup_run(RunRequest(suite="pts-iops", target_specs=("sim:p5430",), runtime_s=0.5))
    etas = {}
    for share, text in ((1.0, "500000000 0 9\n"), (0.25, "500000000 1500000000 9\n")):
        stat.write_text(text, encoding="ascii")
        assert eta.cpu_share() == share
        etas[share] = eta.plan_eta(setup.suite, setup.ctx, history=History())
    assert etas[1.0].expected_s > 1.0
    assert etas[0.25].expected_s == pytest.approx(4 * etas[1.0].expected_s)
    assert etas[0.25].worst_s == pytest.approx(4 * etas[1.0].worst_s)
    assert etas[0.25].expected_points == etas[1.0].expected_points


def test_procs_running_is_read_from_proc_stat(tmp_path: Any) -> None:
    from ssdlab.run.eta import procs_running

    stat = tmp_path / "stat"
    stat.write_text("cpu  1 2 3 4\nctxt 5\nprocs_running 7\nprocs_blocked 20\n", encoding="ascii")
    assert procs_running(stat) == 7  # tasks blocked on I/O (procs_blocked) are not counted
    assert procs_running(tmp_path / "missing") is None
    assert procs_running() is not None  # this host's


def test_a_loaded_host_slows_the_priors_not_what_was_measured() -> None:
    params = resolve("tlc-4k", {})
    quiet = Estimator({"kind": "sim", "sim": {"params": params}}, share=1.0)
    busy = Estimator({"kind": "sim", "sim": {"params": params}}, share=2 / 7)
    read = pt("r", runtime_s=0.5, iodepth=32, numjobs=4)
    assert busy.seconds(read) == pytest.approx(quiet.seconds(read) * 3.5)
    wr = pt("x", rw="randwrite")
    busy.observe(done(wr, sim={"simulated_ios": 3e6, "simulated_ios_per_wall_s": 6e6}), 0.6)
    assert busy.sim_rate() == pytest.approx(3e6 * (1 + 4096 / SIM_UNIT_BYTES) / 0.5)  # measured: no share applied
    # a fio point's overhead prior is not slowed: fio's start-up waits more than it computes
    assert Estimator({"kind": "file"}, 0.5, share=0.25).seconds(pt("a")) == 5.5


def _history(**kw: Any) -> dict[str, Any]:
    return {"results": 338, "wall_s": 13.0, "exec_s": 10.7, "overhead_s": 0.01, "bookkeeping_s": 0.005,
            "sim_units": 8e7, "sim_core_s": 8.0, **kw}


def test_history_of_earlier_runs_takes_the_median_of_each_figure() -> None:
    from ssdlab.run.eta import History

    h = History.of([_history(), _history(results=400, sim_units=4e7), _history(results=300, layout_s=2.0,
                                                                                 layout_bytes=800e6)])
    assert h.runs == 3
    assert h.results == 338
    assert h.sim_rate == pytest.approx(1e7)  # the median of 1e7, 5e6, 1e7
    assert h.overhead_s == pytest.approx(0.015)  # executor overhead and bookkeeping per point
    assert h.layout_bps == pytest.approx(400e6)
    assert History.of([]).sim_rate is None


def test_earlier_runs_replace_the_priors_until_this_run_measures() -> None:
    from ssdlab.run.eta import History

    params = resolve("tlc-4k", {})
    history = History.of([_history(share=0.5)])  # an earlier run with half a CPU: 2e7 units/s on an idle one
    assert history.sim_rate == pytest.approx(2e7)
    assert history.overhead_s == pytest.approx(0.0075)
    est = Estimator({"kind": "sim", "sim": {"params": params}}, history=history, share=0.25)
    assert est.sim_rate() == pytest.approx(5e6)  # the earlier runs' rate, with today's quarter of a CPU
    assert est.overhead_s == pytest.approx(0.03)
    wr = pt("x", rw="randwrite")
    est.observe(done(wr, sim={"simulated_ios": 3e6, "simulated_ios_per_wall_s": 6e6}), 0.6)
    assert est.sim_rate() == pytest.approx(3e6 * (1 + 4096 / SIM_UNIT_BYTES) / 0.5)  # then this run's own


def test_an_adaptive_suite_is_expected_to_need_the_points_earlier_runs_needed() -> None:
    """pts-iops expected 282 points (steady at round 5) and ran 338: earlier runs say so."""
    from ssdlab.run.eta import History

    worst = (pt("a", runtime_s=1.0), 100)
    expected = (pt("a", runtime_s=1.0), 20)
    outlook = Outlook(worst=(worst,), expected=(expected,))
    plain = Estimator({"kind": "file"}, overhead_s=0.0).estimate(outlook)
    assert (plain.expected_points, plain.expected_s) == (20, pytest.approx(20.0))
    learned = Estimator({"kind": "file"}, overhead_s=0.0, history=History(runs=1, results=50.0))
    eta = learned.estimate(outlook, done=10)  # 10 results stored: 40 more expected, at most the worst case
    assert (eta.expected_points, eta.expected_s) == (40, pytest.approx(40.0))
    assert learned.estimate(outlook, done=45).expected_points == 20  # fewer earlier: the suite's own expectation
    capped = Estimator({"kind": "file"}, overhead_s=0.0, history=History(runs=1, results=500.0))
    assert capped.estimate(outlook).expected_points == 100


def test_laying_out_the_target_is_part_of_the_estimate() -> None:
    from ssdlab.run.eta import History, layout_bytes

    est = Estimator({"kind": "file"}, overhead_s=0.0, share=0.5)
    assert est.layout_s(400e6) == pytest.approx(2.0)  # 400 MB/s before any run laid one out, halved by the load
    assert Estimator({"kind": "file"}, history=History(layout_bps=100e6)).layout_s(400e6) == pytest.approx(4.0)
    eta = Eta(expected_s=10.0, worst_s=10.0, expected_points=4, worst_points=4, next_s=2.0, spread=0.1)
    with_layout = eta.with_setup(5.0, 0.4)
    assert (with_layout.expected_s, with_layout.next_s) == (15.0, 7.0)
    assert with_layout.spread == pytest.approx((1.0 + 2.0) / 15.0)
    target = {"kind": "file", "capacity_bytes": 1 << 30}
    assert layout_bytes(target, "creates /x and lays it out (1 GiB)") == 1 << 30
    assert layout_bytes(target, "") == 0
    sim = {"kind": "sim", "capacity_bytes": 3 << 30, "sim": {"params": {"layout": 1}}}
    assert layout_bytes(sim, "") == 3 << 30
    assert layout_bytes(sim, "", resumed=True) == 0  # a resumed simulated drive reloads its state


def test_an_eta_never_says_0s_while_points_remain() -> None:
    eta = Eta(expected_s=0.3, worst_s=0.3, expected_points=17, worst_points=17)
    assert eta.text() == "<1s"
    assert Eta(expected_s=0.0, worst_s=0.0, expected_points=0, worst_points=0).text() == "0s"
    assert progress_live_eta(0.2) == "<1s"


def progress_live_eta(seconds: float) -> str:
    from ssdlab.results.live import LiveSample
    from ssdlab.run.progress import live_text

    text = live_text(LiveSample(elapsed_s=1.0, read_iops=1.0), 0.5, seconds)
    return text.rsplit("ETA ", 1)[1]


def test_the_worst_case_gives_its_point_count_as_the_bound_and_its_time_as_an_estimate() -> None:
    eta = Eta(expected_s=6.0, worst_s=29.0, expected_points=282, worst_points=1402, spread=0.8)
    assert eta.text() == "6s ±80 % expected, at most 1402 points"
    assert eta.worst_text() == "about 29s if all run"


def test_a_large_outlook_between_full_estimates_keeps_each_point_s_overhead(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortcut for long outlooks once said 0s with about 60 points left."""
    from ssdlab.run import eta as eta_mod

    est = Estimator({"kind": "file"}, overhead_s=0.5)
    outlook = Outlook(worst=tuple((pt(f"p{i}", runtime_s=0.01), 1) for i in range(300)))
    clock = iter([100.0, 200.0])
    monkeypatch.setattr(eta_mod.time, "monotonic", lambda: next(clock))
    est.estimate(outlook)
    est._full = (199.5, est._full[1], est._observed)  # type: ignore[index]  # a full estimate 0.5 s ago
    later = est.estimate(outlook)
    assert later.expected_s >= 300 * 0.5


def test_a_resumed_simulated_drive_replays_the_points_after_its_checkpoint() -> None:
    params = resolve("tlc-4k", {})
    est = Estimator({"kind": "sim", "sim": {"params": params}})
    replayed = [done(pt(f"r{i}", rw="randwrite"), sim={"simulated_ios": 2e6, "simulated_ios_per_wall_s": 4e6})
                for i in range(3)]
    weight = 1 + 4096 / SIM_UNIT_BYTES
    assert est.replay_s(replayed) == pytest.approx(3 * 2e6 * weight / SIM_UNIT_RATE_PRIOR)
    assert est.replay_s([done(pt("fio-point"))]) == 0.0


def test_a_resumed_run_s_earlier_points_teach_times_not_confidence() -> None:
    """A resume estimated 17 s ±5 % took 21 s: the earlier session's points had made the estimate sure of itself."""
    est = Estimator({"kind": "file"}, overhead_s=0.0)
    points = [pt(f"p{i}", bs=4096 << (i % 3)) for i in range(9)]
    for p in points:
        est.observe(done(p), 5.0, earlier=True)  # as resume replays them: exactly as predicted after the first
    outlook = Outlook(worst=tuple((p, 1) for p in points[:3]))
    eta = est.estimate(outlook)
    assert eta.expected_s == pytest.approx(15.0)
    assert eta.spread == pytest.approx(est.error(False))  # not the repeat error of shapes this session ran
    assert est.error(False) == 0.25  # and no error was learned from them
    for p in points[:3]:
        est.observe(done(p), 5.0)  # the same shapes run in this session
    assert est.estimate(outlook).spread == pytest.approx(est.error(True))


def test_a_run_of_one_point_says_point_not_points() -> None:
    from ssdlab.run.progress import run_text

    one = Eta(expected_s=2.0, worst_s=2.0, expected_points=1, worst_points=1)
    assert run_text("replay on file:x", one).startswith("replay on file:x: 1 point, estimated ")
    maybe = Eta(expected_s=2.0, worst_s=9.0, expected_points=1, worst_points=3)
    assert "about 1 point, " in run_text("pts", maybe)
    assert "at most 3 points (" in run_text("pts", maybe)
