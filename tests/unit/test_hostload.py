"""Host limit: /proc/stat arithmetic, CPU lists, the sampler's median and the saturation flag's rule."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ssdlab.results.extra import MeasurementExtra
from ssdlab.results.model import DirectionStats, Measurement
from ssdlab.run import hostload

STAT = """cpu  400 0 100 500 0 0 0 0 0 0
cpu0 300 0 50 100 50 0 0 0 0 0
cpu1 100 0 50 400 0 0 0 0 0 0
intr 12345
"""


def test_cpu_times_count_iowait_as_idle_and_steal_as_busy(tmp_path: Path) -> None:
    path = tmp_path / "stat"
    path.write_text(STAT + "cpu2 10 0 10 10 0 0 0 70 0 0\n", encoding="ascii")
    times = hostload.read_cpu_times(path)
    assert times[0] == (350, 500)  # idle 100 + iowait 50 out of 500
    assert times[1] == (150, 550)
    assert times[2] == (90, 100)  # steal counts as busy
    assert hostload.read_cpu_times(tmp_path / "missing") == {}


def test_busy_share_between_readings() -> None:
    a = {0: (100, 200), 1: (100, 200)}
    b = {0: (190, 300), 1: (110, 300)}
    assert hostload.busy_pct(a, b) == {0: pytest.approx(90.0), 1: pytest.approx(10.0)}
    assert hostload.busy_pct(a, b, [1]) == {1: pytest.approx(10.0)}


@pytest.mark.parametrize(("text", "cpus"), [("0", {0}), ("0-3,6", {0, 1, 2, 3, 6}), ("0-6:2", {0, 2, 4, 6}),
                                            ("1, 3", {1, 3})])
def test_cpu_lists(text: str, cpus: set[int]) -> None:
    assert hostload.parse_cpu_list(text) == cpus
    assert hostload.parse_cpu_list(hostload.format_cpu_list(sorted(cpus))) == cpus


def test_bad_cpu_list() -> None:
    with pytest.raises(ValueError, match="not a CPU list"):
        hostload.parse_cpu_list("all")


def test_the_sampler_takes_the_median_over_intervals_of_the_submitting_cpus() -> None:
    """Start-up and tear-down intervals (idle CPU 0) do not hide a saturated middle."""
    sampler = hostload.CpuSampler(cpus={0}, interval_s=0.1)
    busy0 = [0, 5, 15, 25, 35, 45, 46]  # CPU 0: 50 %, then 100 % x4, then 10 %
    sampler._readings = [(0.1 * i, {0: (b, 10 * i), 1: (i, 10 * i)}) for i, b in enumerate(busy0)]
    res = sampler.result()
    assert res["available"] is True
    assert res["submitting_cpus"] == "0"
    assert res["submitting_count"] == 1
    assert res["online_cpus"] == 2
    assert res["submitting_busy_pct"] == 100.0
    assert res["per_cpu_busy_pct"] == {"0": pytest.approx(76.7, abs=0.1), "1": 10.0}


def test_a_sampler_without_readings_says_why(tmp_path: Path) -> None:
    with hostload.CpuSampler(path=tmp_path / "missing") as s:
        pass
    assert s.result() == {"available": False, "reason": f"{tmp_path / 'missing'} is not readable"}


def test_a_real_sampler_reads_this_host() -> None:
    with hostload.CpuSampler(interval_s=0.02) as s:  # /proc/stat counts in jiffies: run several of them
        end = time.monotonic() + 0.15
        while time.monotonic() < end:
            sum(range(10_000))
    res = s.result()
    assert res["available"] is True
    assert 0.0 <= res["system_busy_pct"] <= 100.0
    assert res["submitting_cpus"] == "all"


# ------------------------------------------------------------------ the flag (pure: numbers in, verdict out)

def test_an_idle_host_is_not_flagged() -> None:
    limit = hostload.assess(40.0, 35.0, numjobs=1, submitting_count=8, online_cpus=8)
    assert limit.saturated is False
    assert hostload.assess(None, None).saturated is False


def test_a_job_that_never_waits_is_flagged_and_told_to_add_jobs() -> None:
    limit = hostload.assess(97.0, 20.0, numjobs=1, submitting_count=8, online_cpus=8, ioengine="libaio")
    assert limit.saturated is True
    assert limit.reasons == ("fio's jobs kept their CPUs 97 % busy (usr+sys per job)",)
    assert any(a.startswith("more jobs") for a in limit.advice)
    assert any("io_uring with fixed buffers and registered files" in a for a in limit.advice)


def test_other_processes_load_alone_raises_no_flag() -> None:
    """Issue 34: on a loaded host points were flagged where fio itself used 3-8 % CPU."""
    assert hostload.assess(5.0, 100.0, numjobs=2, submitting_count=1, online_cpus=2,
                           options={"cpus_allowed": "0"}).saturated is False
    assert hostload.assess(10.0, 99.0, numjobs=1, submitting_count=4, online_cpus=4).saturated is False


def test_other_load_is_named_in_the_advice() -> None:
    limit = hostload.assess(92.0, 99.0, numjobs=1, submitting_count=4, online_cpus=4)
    assert limit.advice[0] == "stopping other load: fio used about 23 % of those CPUs, other processes the rest"


def test_the_null_engine_is_never_flagged() -> None:
    """null measures the host itself: no flag, no 'expected' note."""
    assert hostload.assess(99.0, 100.0, null_target=True) == hostload.HostLimit(False)


def test_io_uring_with_fixed_buffers_is_not_advised_again() -> None:
    limit = hostload.assess(95.0, None, ioengine="io_uring", options={"fixedbufs": "1", "registerfiles": "1"})
    assert not any("io_uring" in a for a in limit.advice)


def test_threshold_is_inclusive() -> None:
    assert hostload.assess(hostload.SATURATED_PCT, None).saturated is True
    assert hostload.assess(hostload.SATURATED_PCT - 0.1, 100.0).saturated is False


def _stored(cpu: float, limit: dict[str, object]) -> Measurement:
    d = DirectionStats(iops=1.0, bw_bytes=1.0, io_bytes=1, total_ios=1, runtime_ms=1)
    return Measurement(engine="fio", engine_version="3.33", directions={"read": d}, usr_cpu=cpu, sys_cpu=0.0,
                       extra=MeasurementExtra.of(host_limit=limit))


def test_stored_flags_are_held_to_fio_s_own_share() -> None:
    """Runs stored before the rule changed: a flag raised by other load, or on null, no longer shows."""
    assert hostload.saturated(_stored(97.0, {"saturated": True}))
    assert not hostload.saturated(_stored(6.0, {"saturated": True}))  # raised by /proc/stat alone
    assert not hostload.saturated(_stored(99.0, {"saturated": True, "note": "expected on the null engine, ..."}))
    assert not hostload.saturated(_stored(97.0, {}))


def test_advice_text_is_one_paragraph_with_each_advice_once() -> None:
    flags = [_stored(97.0, {"saturated": True, "advice": ["a", "b"]}), _stored(97.0, {"advice": ["b", "c"]})]
    advice = hostload.stored_advice(flags)
    assert advice == ["a", "b", "c"]
    text = hostload.advice_text(2, 26, advice)
    assert text.startswith("2 of 26 measured point(s) ran with fio's submitting threads saturated")
    assert text.endswith(". To lift it: a; b; c")
