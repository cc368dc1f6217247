"""ACT pass/fail on synthetic histograms at and around each threshold; keep-up checks; the verdict hook."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from ssdlab.cli import verdict_exit_code
from ssdlab.errors import UsageError
from ssdlab.results import hist
from ssdlab.results.model import (
    DirectionStats,
    LatencyStats,
    Measurement,
    PointResult,
    Run,
    TestPoint,
    point_from_dict,
    to_dict,
)
from ssdlab.suites.act import ActSuite, StreamSlice, evaluate_level, judge
from ssdlab.suites.base import PlanContext

N = 100_000
FAST_NS = 200_000  # 0.2 ms


def counts(slow: dict[int, int]) -> hist.Counts:
    """N samples: `slow` maps latency (ns) -> count, the rest at 0.2 ms."""
    c = np.zeros(hist.PLAT_NR, dtype=np.int64)
    for ns, k in slow.items():
        c[hist.value_to_idx(ns)] += k
    c[hist.value_to_idx(FAST_NS)] += N - sum(slow.values())
    return c


def worst_of(c: hist.Counts) -> dict[int, float]:
    return StreamSlice("reads", N, 2000.0, 50.0, c, 0.0).exceedance()


@pytest.mark.parametrize(("ms", "limit_pct"), [(1, 5.0), (8, 1.0), (64, 0.1)])
def test_threshold_pass_just_below_fail_at_limit(ms: int, limit_pct: float) -> None:
    at_limit = int(N * limit_pct / 100)
    above = int(ms * 1.5 * 1_000_000)  # well inside the >= ms range
    assert judge(worst_of(counts({above: at_limit - 1})))
    assert not judge(worst_of(counts({above: at_limit})))  # "< 5 %": exactly 5 % fails


def test_exceedance_counts_samples_at_or_above_the_threshold_bucket() -> None:
    t = 8_000_000
    lower, upper = hist.idx_bounds(hist.value_to_idx(t))
    assert lower < t < upper  # 8 ms lies inside a fio bucket: that bucket counts as below
    first_above = upper  # lower bound of the next bucket
    ex = worst_of(counts({first_above: 1000, lower: 500}))
    assert ex[8] == pytest.approx(1.0)
    assert ex[4] == pytest.approx(1.5)
    assert ex[16] == 0.0


def test_each_threshold_row_matches_act_columns() -> None:
    ex = worst_of(counts({1_500_000: 1000, 3_000_000: 1000, 70_000_000: 100}))
    assert ex[1] == pytest.approx(2.1)
    assert ex[2] == pytest.approx(1.1)
    assert ex[4] == pytest.approx(0.1)
    assert ex[64] == pytest.approx(0.1)
    assert judge(ex) is False  # 0.1 % >= 64 ms is not < 0.1 %


# ------------------------------------------------------------------ evaluate a run


def _ctx(**opts: Any) -> PlanContext:
    options = {"duration": "4", "slice": "2", "load": "1x", "service_threads": 10, **opts}
    return PlanContext(capacity=64 * 1024**2, options=options)


Sections = dict[str, dict[str, tuple[int, hist.Counts]]]


def _measurement(sections: Sections, pacing: dict[str, dict[str, float]] | None = None) -> Measurement:
    """A stored slice: per fio section, per direction (ops, clat bins); optionally the executor's pacing."""
    streams = {}
    for name, dirs in sections.items():
        directions = {}
        for direction, (ops, c) in dirs.items():
            lat = LatencyStats(kind="clat", n=ops, min_ns=0, max_ns=0, mean_ns=0, stddev_ns=0, percentiles_ns={},
                               bins=tuple(hist.sparse(c)))
            directions[direction] = DirectionStats(iops=ops / 2, bw_bytes=0, io_bytes=0, total_ios=ops, runtime_ms=2000,
                                                   clat=lat)
        streams[name] = to_dict(Measurement(engine="fio", engine_version="3.33", directions=directions))
    extra: dict[str, Any] = {"streams": streams}
    if pacing is not None:
        extra["pacing"] = pacing
    return Measurement(engine="fio", engine_version="3.33", directions={}, extra=extra)


def _run(points: list[TestPoint], meas: list[Measurement]) -> Run:
    run = Run(schema_version=1, ssdlab_version="t", run_id="r", suite="act", status="running", created="",
              options={}, target={}, host={})
    for p, m in zip(points, meas, strict=False):
        run = run.with_point(PointResult(point=p, status="ok", started="", finished="", measurement=m))
    return run


def _bins(ops: int, slow: dict[int, int]) -> hist.Counts:
    c = np.zeros(hist.PLAT_NR, dtype=np.int64)
    c[hist.value_to_idx(FAST_NS)] = ops - sum(slow.values())
    for ns, k in slow.items():
        c[hist.value_to_idx(ns)] += k
    return c


def _slice(reads_slow: dict[int, int], reads_ops: int = 4000, lb_ops: int = 47, lag: float | None = None,
           commits: tuple[int, dict[int, int]] | None = None, per_thread: float = 200.0) -> Measurement:
    """One 2-s slice at 1x: the service pool (10 threads), large-block reads and writes; `lag`: the worst
    in-slice lag of the pool's jobs from their histogram logs (None: no pacing record, as older runs)."""
    service: dict[str, tuple[int, hist.Counts]] = {"read": (reads_ops, _bins(reads_ops, reads_slow))}
    if commits is not None:
        service["write"] = (commits[0], _bins(commits[0], commits[1]))
    lb = _bins(lb_ops, {})
    sections: Sections = {"service": service, "large-block-reads-d0": {"read": (lb_ops, lb)},
                          "large-block-writes-d0": {"write": (lb_ops, lb)}}
    pacing = None
    if lag is not None:
        pacing = {"service": {"ops_per_s_per_job": per_thread, "jobs": 10.0, "max_lag_s": lag, "at_s": 1.0,
                              "logs": 10.0},
                  **{name: {"ops_per_s_per_job": 1000 / 85 * 2, "jobs": 1.0, "max_lag_s": 0.0, "at_s": 1.0,
                            "logs": 1.0} for name in ("large-block-reads-d0", "large-block-writes-d0")}}
    return _measurement(sections, pacing)


def test_worst_slice_decides_and_conclude_records_verdict() -> None:
    suite = ActSuite()
    ctx = _ctx(skip_prep=True)
    level = suite.level_points(ctx, 1.0)
    good = _slice({1_500_000: 100})  # 2.5 %
    bad = _slice({1_500_000: 240})  # 6 %
    result = evaluate_level(ctx, _run(level, [good, good]), 1.0, level)
    assert result.complete
    assert result.passed
    assert not result.lagging
    result = evaluate_level(ctx, _run(level, [good, bad]), 1.0, level)
    assert not result.passed
    assert result.worst[1] == pytest.approx(6.0)
    assert result.rows("reads")[0][0] == pytest.approx(4.25)  # avg row
    run = suite.conclude(ctx, _run(level, [good, bad]))
    assert verdict_exit_code(run) == 1
    assert "FAIL" in run.events[-1]["text"]
    assert verdict_exit_code(suite.conclude(ctx, _run(level, [good, good]))) == 0


def test_lagging_stream_stops_the_run() -> None:
    suite = ActSuite()
    ctx = _ctx(skip_prep=True, max_lag=1)
    level = suite.level_points(ctx, 1.0)
    slow = _slice({}, reads_ops=1000)  # 500/s of 2000/s: 1.5 s behind at the end of a 2-s slice (max-lag 1 s)
    run = _run(level[:1], [slow])
    assert suite.next_points(ctx, run) == []
    result = evaluate_level(ctx, run, 1.0, level)
    assert "service threads fell 1.5 s behind" in result.lagging
    assert "more --service-threads" in result.lagging  # ACT's advice: the generator, not the drive
    assert not result.passed
    assert verdict_exit_code(suite.conclude(ctx, run)) == 1


def test_lag_is_carried_over_slices_as_on_one_schedule() -> None:
    """ACT keeps one schedule for the whole run (act_storage.c: every thread's n-th request is due at
    n / rate after g_run_start_us). 6 s behind at the end of slice 1 plus 5 s within slice 2 is 11 s,
    over the 10-s max-lag, though neither slice alone is."""
    suite = ActSuite()
    ctx = _ctx(skip_prep=True, duration="20", slice="10")
    level = suite.level_points(ctx, 1.0)
    behind = _slice({}, reads_ops=8000, lb_ops=236, lag=6.0)  # 10-s slice at 2000/s wants 20000: 6 s short at the end
    catching = _slice({}, reads_ops=20000, lb_ops=236, lag=5.0)
    result = evaluate_level(ctx, _run(level, [behind, catching]), 1.0, level)
    assert "fell 11.0 s behind" in result.lagging
    assert "slice 2" in result.lagging
    assert result.max_lag_s["service"] == pytest.approx(11.0)
    # max-lag 0: ACT never stops because of lag; the run completes and is judged on its latencies
    never = _ctx(skip_prep=True, duration="20", slice="10", max_lag=0)
    result = evaluate_level(never, _run(level, [behind, catching]), 1.0, level)
    assert result.lagging == ""
    assert result.complete
    assert result.passed
    assert result.max_lag_s["service"] == pytest.approx(11.0)  # still measured and reported


def test_a_slice_ending_ahead_banks_nothing() -> None:
    """fio starts each slice with one request per job at once, so a slice can end a little ahead; ACT's one
    schedule cannot bank that, so the carried lag stays at 0 and the next slice's lag counts in full."""
    suite = ActSuite()
    ctx = _ctx(skip_prep=True, duration="20", slice="10", max_lag=3)
    level = suite.level_points(ctx, 1.0)
    ahead = _slice({}, reads_ops=20010, lb_ops=236, lag=-0.005)
    late = _slice({}, reads_ops=20000, lb_ops=236, lag=3.5)
    result = evaluate_level(ctx, _run(level, [ahead, late]), 1.0, level)
    assert "fell 3.5 s behind" in result.lagging


def test_commit_writes_are_judged_like_reads() -> None:
    """With commit-to-device the service threads also write records (ACT's `writes` histogram); a device
    whose commit writes miss the limits fails, however fast its reads are."""
    suite = ActSuite()
    ctx = _ctx(skip_prep=True, commit_to_device=True)
    level = suite.level_points(ctx, 1.0)
    assert level[0].tags["target_per_s"]["writes"] == pytest.approx(1000, abs=1)
    assert level[0].tags["target_per_s"]["reads"] == pytest.approx(2000, abs=1)
    fine = _slice({}, commits=(2000, {}), per_thread=300.0, lag=0.0)
    slow_commits = _slice({}, commits=(2000, {2_000_000: 200}), per_thread=300.0, lag=0.0)  # 10 % >= 1 ms
    assert evaluate_level(ctx, _run(level, [fine, fine]), 1.0, level).passed
    result = evaluate_level(ctx, _run(level, [fine, slow_commits]), 1.0, level)
    assert not result.passed
    assert result.worst[1] == 0.0
    assert result.worst_commits is not None
    assert result.worst_commits[1] == pytest.approx(10.0)
    concluded = suite.conclude(ctx, _run(level, [fine, slow_commits]))
    assert "writes 10.00% >= 1 ms" in concluded.events[-1]["text"]
    assert concluded.events[-1]["levels"][0]["worst_writes_pct"][1] == pytest.approx(10.0)
    assert verdict_exit_code(concluded) == 1


def test_runs_of_earlier_versions_still_evaluate() -> None:
    """Stored runs from before the shared pool: per-device `reads-d0` sections and no pacing record."""
    suite = ActSuite()
    ctx = _ctx(skip_prep=True, max_lag=1)
    level = suite.level_points(ctx, 1.0)
    old = _measurement({"reads-d0": {"read": (1000, _bins(1000, {}))},
                        "large-block-reads-d0": {"read": (47, _bins(47, {}))},
                        "large-block-writes-d0": {"write": (47, _bins(47, {}))}})
    result = evaluate_level(ctx, _run(level[:1], [old]), 1.0, level)
    assert "fell 1.5 s behind" in result.lagging


def test_find_max_steps_until_a_level_fails() -> None:
    suite = ActSuite()
    ctx = _ctx(skip_prep=True, find_max=True, max_load="3x")
    l1, l2 = suite.level_points(ctx, 1.0), suite.level_points(ctx, 2.0)
    good = _slice({})
    run = _run(l1, [good, good])
    assert [p.id for p in suite.next_points(ctx, run)] == [p.id for p in l2]
    # 2x keeps up (8000 reads, 94 large blocks in 2 s) but 10 of 8000 reads >= 64 ms (0.125 %) fail it
    scaled = [_slice({}, reads_ops=8000, lb_ops=94), _slice({70_000_000: 10}, reads_ops=8000, lb_ops=94)]
    run = _run([*l1, *l2], [good, good, *scaled])
    result = evaluate_level(ctx, run, 2.0, l2)
    assert result.complete
    assert not result.lagging
    assert not result.passed
    assert suite.next_points(ctx, run) == []
    concluded = suite.conclude(ctx, run)
    assert concluded.events[-1]["highest_passing_load"] == 1.0
    assert "2x failed" in concluded.events[-1]["text"]
    assert verdict_exit_code(concluded) == 0


def test_streams_survive_serialisation_and_sim_is_refused() -> None:
    suite = ActSuite()
    p = suite.level_points(_ctx(), 1.0)[0]
    again = point_from_dict(to_dict(p))
    assert again == p
    assert len(again.streams) == 3
    with pytest.raises(UsageError, match="simulated SSD"):
        suite.plan(PlanContext(capacity=1 << 30, target_kind="sim", options={"duration": "4", "slice": "2"}))
    with pytest.raises(UsageError, match="simulated SSD"):
        suite.validate(PlanContext(capacity=1 << 30, target_kind="sim", options={}), None)


def test_report_section_tables_and_chart(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ssdlab.report import act as act_report
    from ssdlab.report.sections import sections_for

    suite = ActSuite()
    ctx = _ctx(skip_prep=True)
    level = suite.level_points(ctx, 1.0)
    run = suite.conclude(ctx, _run(level, [_slice({1_500_000: 100}), _slice({1_500_000: 240})]))
    (section,) = act_report.build(run, tmp_path)
    text = section.html
    assert "ACT 1x: FAIL" in text
    for row in ("<th>avg</th><th>4.25</th>", "<th>overall</th><th>4.25</th>"):
        assert row in text
    # the failing value is marked, with the limit it breaks in its tooltip; the passing ones are not
    assert "<th>max</th><th class='fail' title='6.00% of reads at or above 1 ms: ACT&#x27;s limit is below 5%'>" \
        "6.00</th>" in text
    assert "<td class='fail'" in text  # the failing slice
    assert text.count("class='fail' title=") == 2  # (and the key above the tables)
    # each criterion's limit line in a style of its own (dashed, dash-dot, dotted)
    limits = re.findall(r"<i class='([^']*)' style='color:[^;]*;border-top-style:(\w+)'></i>\s*limit", text)
    assert len(limits) == 3
    assert len(set(limits)) == 3, limits
    assert "large-block writes" in text
    assert text.count("<svg") == 1  # per-slice chart (no histogram logs in tmp_path for the timeline)
    assert any(s.title == "ACT certification" for s in sections_for(run, tmp_path))


def test_console_prints_acts_table_and_never_adds_large_block_reads_to_reads() -> None:
    """The end-of-run console shows act_latency.py's table per histogram (with -x's rate column): small reads
    at 2000/s and large-block reads at 23.5/s stay apart; nothing prints their sum (2023.5)."""
    import io

    from ssdlab.report.act import console_lines
    from ssdlab.report.terminal import print_results
    from ssdlab.run.progress import _summary

    suite = ActSuite()
    ctx = _ctx(skip_prep=True)
    level = suite.level_points(ctx, 1.0)
    run = suite.conclude(ctx, _run(level, [_slice({1_500_000: 100}, lag=0.0), _slice({3_000_000: 240}, lag=0.0)]))
    lines = [line.rstrip() for line in console_lines(run)]  # act_latency pads the name lines
    start = lines.index("        reads")
    assert lines[start:start + 9] == [
        "        reads",
        "        %>(ms)",
        "slice        1      2      4      8     16     32     64       rate",
        "-----   ------ ------ ------ ------ ------ ------ ------ ----------",
        "    1     2.50   0.00   0.00   0.00   0.00   0.00   0.00     2000.0",
        "    2     6.00   6.00   0.00   0.00   0.00   0.00   0.00     2000.0",
        "-----   ------ ------ ------ ------ ------ ------ ------ ----------",
        "  avg     4.25   3.00   0.00   0.00   0.00   0.00   0.00     2000.0",
        "  max     6.00   6.00   0.00   0.00   0.00   0.00   0.00     2000.0",
    ]
    lb = lines.index("        large-block-reads")
    assert lines[lb + 4].endswith("       23.5")
    out = io.StringIO()
    print_results(run, out)
    printed = out.getvalue()
    assert "2000.0" in printed
    assert "2023" not in printed
    assert "large-block-writes" in printed
    # the per-slice progress line names each stream's rate on its own
    summary = _summary(run.points[0])
    assert "service read 2,000.0 IOPS" in summary
    assert "large-block-reads-d0 read 23.5 IOPS" in summary
    assert "2,023" not in summary


def test_find_max_eta_expects_the_levels_up_to_the_predicted_failure() -> None:
    """Worst case: every level up to --max-load. Expected: up to the level the last finished level's worst
    read exceedance, grown in proportion to the load, predicts to fail."""
    suite = ActSuite()
    ctx = _ctx(skip_prep=True, find_max=True, max_load="4x")
    lv = [suite.level_points(ctx, float(k)) for k in (1, 2, 3, 4)]
    empty = _run([], [])
    out = suite.outlook(ctx, empty)
    assert out.next_point == suite.next_points(ctx, empty)[0]
    assert sum(n for _, n in out.worst) == 8  # 4 levels of 2 slices
    assert out.expected is None  # nothing measured yet: the worst case is the expectation
    # 1x passes with 0.05 % of reads >= 64 ms (half the 0.1 % limit): 2x is expected to reach the limit
    half = _slice({70_000_000: 2}, reads_ops=4000)
    run = _run(lv[0], [half, half])
    out = suite.outlook(ctx, run)
    assert [p.id for p, _ in out.worst] == [p.id for level in lv[1:] for p in level]
    assert [p.id for p, _ in out.expected or ()] == [p.id for p in lv[1]]
    # no exceedance at all: nothing predicts a failure, so every level is expected
    good = _slice({})
    out = suite.outlook(ctx, _run(lv[0], [good, good]))
    assert sum(n for _, n in out.expected or out.worst) == 6
