"""ssdlab's ACT model against the formulas in ACT's own source (aerospike/act 6.6), restated here from the C:
service-thread concurrency and rates, large-block rates per device, the lag rule, and ACT's config keys.

Each reference function names the ACT file and function it restates. No test here runs fio or times anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ssdlab.errors import UsageError
from ssdlab.fio.job import build_job
from ssdlab.fio.pacing import ops_per_s, schedule_lag
from ssdlab.suites import act
from ssdlab.suites.act import ActSuite, config_for, levels
from ssdlab.suites.act_config import CONFIG_KEYS, SPLIT_RESOLUTION, derive, online_cpus, parse_config
from ssdlab.suites.base import PlanContext

# ------------------------------------------------------------------ ACT's formulas, restated


def act_service(read_reqs: int, write_reqs: int, update_pct: int, replication: int, commit: bool,
                threads: int) -> tuple[int, int]:
    """(requests/s per service thread, read split of 2^20).

    cfg_storage.c derive_configuration: internal reads = reads + writes * update_pct / 100 (integers);
    internal writes = replication * writes, kept only with commit-to-device.
    act_storage.c run_service: reqs_per_sec = (internal reads + internal writes) / service_threads (integer);
    read_split = SPLIT_RESOLUTION * internal reads / total.
    """
    internal_read = read_reqs + write_reqs * update_pct // 100
    internal_write = replication * write_reqs if commit else 0
    total = internal_read + internal_write
    return total // threads, (1 << 20) * internal_read // total


def act_large_block_per_device(write_reqs: int, record_bytes: int, lb_kib: int, lwm: int, replication: int,
                               devices: int, commit: bool) -> tuple[float, float]:
    """(large-block reads/s, writes/s) of one device's thread.

    cfg_storage.c derive_configuration: original = replication * writes / (lb_bytes / roundup16(record))
    with integer division inside; WA = 100 / (100 - lwm); reads = original * WA; writes = original * WA,
    or original * (WA - 1) with commit-to-device.
    act_storage.c run_large_block_reads/writes: target_us = count * 10^6 * num_devices / rate, i.e. each
    device's thread runs at rate / num_devices.
    """
    stored = (record_bytes + 15) // 16 * 16
    original = replication * write_reqs / (lb_kib * 1024 // stored)
    wa = 100.0 / (100 - lwm)
    writes = original * (wa - 1.0) if commit else original * wa
    return original * wa / devices, writes / devices


def act_thread_lags(latencies_ms: list[int], rate: float) -> list[float]:
    """A service thread's lag after each request, as act_storage.c run_service computes it: after request
    `count` completes, sleep_us = count * 10^6 / rate - elapsed; a negative value is the lag, and the thread
    issues the next request at once. Latencies are whole ms, as fio's log times are."""
    lags = []
    now_us = 0
    for count, lat in enumerate(latencies_ms, 1):
        now_us += lat * 1000  # the request completes
        due_us = round(count * 1_000_000 / rate)
        lags.append((now_us - due_us) / 1e6)  # -sleep, in whole microseconds as ACT counts it
        now_us = max(now_us, due_us)  # sleep until the next request is due, if ahead
    return lags


# ------------------------------------------------------------------ helpers


def _ctx(devices: int = 1, **opts: Any) -> PlanContext:
    return PlanContext(capacity=1 << 30, devices=devices,
                       options={"duration": "10", "slice": "10", "skip_prep": True, **opts})


def _service_section(ctx: PlanContext) -> dict[str, Any]:
    point = ActSuite().level_points(ctx, levels(ctx)[0])[0]
    devices = [{"filename": f"/dev/x{i}", "ioengine": "libaio", "direct": 1, "size": 1 << 30}
               for i in range(ctx.devices)]
    job = build_job(point, devices[0], devices)
    return {s.name: dict(s.options) for s in job.jobs}["service"]


CONFIGS = [
    # read reqs, write reqs, update-pct, replication, commit-to-device, service threads, devices
    (2000, 1000, 0, 1, False, 10, 1),  # 1x on a 2-CPU host
    (60000, 30000, 0, 1, False, 10, 1),  # 30x: 6000 requests/s per QD1 thread
    (2001, 1000, 0, 1, False, 6, 1),  # 2001 // 6 = 333: ACT runs 1998/s, not 2001
    (4000, 2000, 0, 1, False, 40, 2),  # one pool for both devices
    (2000, 1000, 0, 1, True, 10, 1),  # commit-to-device: the same threads write records
    (3000, 500, 50, 2, True, 7, 3),
    (0, 1000, 100, 1, False, 8, 1),  # reads only from updates
]


@pytest.mark.parametrize(("reads", "writes", "update", "repl", "commit", "threads", "devices"), CONFIGS)
def test_service_threads_are_acts_pool(reads: int, writes: int, update: int, repl: int, commit: bool,
                                       threads: int, devices: int) -> None:
    ctx = _ctx(devices, read_reqs_per_sec=reads, write_reqs_per_sec=writes, update_pct=update,
               replication_factor=repl, commit_to_device=commit or None, service_threads=threads)
    per_thread, split = act_service(reads, writes, update, repl, commit, threads)
    d = derive(config_for(ctx))
    assert d.service_reqs_per_thread == per_thread
    assert d.read_split == split
    section = _service_section(ctx)
    assert section["numjobs"] == threads  # one QD1 fio job per ACT service thread
    assert section["iodepth"] == 1
    assert section["ioengine"] == "psync"
    if devices > 1:  # a random device per request, from one pool (run_service: rand_32() % num_devices)
        assert section["file_service_type"] == "random"
        assert str(section["filename"]).count(":") == devices - 1
    if split == SPLIT_RESOLUTION:  # reads only: fio's integer rate_iops is ACT's integer per-thread rate
        assert section["rw"] == "randread"
        assert section["rate_iops"] == per_thread
    else:  # reads and commits: one fio schedule per direction at ACT's split, in bytes/s
        assert section["rw"] == "randrw"
        r, w = (int(x) for x in str(section["rate"]).split(","))
        bs = int(section["bs"])
        assert r == round(per_thread * split / SPLIT_RESOLUTION * bs)
        assert w == round(per_thread * (1 - split / SPLIT_RESOLUTION) * bs)
        assert section["rwmixread"] == round(100 * split / SPLIT_RESOLUTION)
        assert section["sync"] == "dsync"
    assert ops_per_s(section) == pytest.approx(per_thread, rel=1e-6)  # what the lag is measured against


@pytest.mark.parametrize(("writes", "record", "lb_kib", "lwm", "repl", "devices", "commit"), [
    (1000, 1536, 128, 50, 1, 1, False),
    (60000, 1500, 128, 60, 2, 2, False),
    (3000, 4000, 1024, 50, 1, 3, True),
])
def test_large_block_threads_run_per_device(writes: int, record: int, lb_kib: int, lwm: int, repl: int,
                                            devices: int, commit: bool) -> None:
    ctx = _ctx(devices, read_reqs_per_sec=1000 * devices, write_reqs_per_sec=writes, record_bytes=record,
               large_block_kib=lb_kib, defrag_lwm_pct=lwm, replication_factor=repl,
               commit_to_device=commit or None, service_threads=10)
    want_r, want_w = act_large_block_per_device(writes, record, lb_kib, lwm, repl, devices, commit)
    point = ActSuite().level_points(ctx, levels(ctx)[0])[0]
    devs = [{"filename": f"/dev/x{i}", "size": 1 << 30} for i in range(devices)]
    sections = {s.name: dict(s.options) for s in build_job(point, devs[0], devs).jobs}
    for i in range(devices):
        for name, want in (("large-block-reads", want_r), ("large-block-writes", want_w)):
            opts = sections[f"{name}-d{i}"]
            assert opts["numjobs"] == 1  # one thread per device, as ACT
            assert int(str(opts["rate"])) == round(want * lb_kib * 1024)


def test_default_service_threads_are_five_per_online_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """cfg_storage.c check_configuration: service-threads 0 (or absent) -> 5 * num_cpus(); hardware.c
    num_cpus counts the CPUs in /sys/devices/system/cpu/online."""
    online = tmp_path / "online"
    online.write_text("0-3,6,8-9\n")
    assert online_cpus(online) == 7
    monkeypatch.setattr(act, "online_cpus", lambda: 3)
    assert config_for(_ctx()).service_threads == 15
    assert config_for(_ctx(service_threads=0)).service_threads == 15  # ACT: 0 means the default
    assert config_for(_ctx(service_threads=4)).service_threads == 4


# ------------------------------------------------------------------ the lag rule


def _write_log(path: Path, times_ms: list[int], per_row: list[int]) -> None:
    rows = []
    for t, n in zip(times_ms, per_row, strict=True):
        bins = ["0"] * 1856
        bins[300] = str(n)
        rows.append(f"{t}, 0, 1536, " + ", ".join(bins))
    path.write_text("\n".join(rows) + "\n")


@settings(max_examples=60, deadline=None)
@given(latencies=st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=60),
       rate=st.sampled_from([5.0, 20.0, 100.0, 200.0]))
@example(latencies=[0, 105, 281, 400, 234], rate=200.0)  # a lag of exactly 1 s, the limit (floats put it below)
def test_schedule_lag_is_acts_thread_lag(tmp_path_factory: pytest.TempPathFactory, latencies: list[int],
                                         rate: float) -> None:
    """One histogram-log row per completion: the worst lag ssdlab reads is the worst ACT's thread sees."""
    act_lags = act_thread_lags(latencies, rate)
    now_ms, times = 0, []
    for count, lat in enumerate(latencies, 1):
        now_ms += lat
        times.append(now_ms)
        now_ms = max(now_ms, round(count * 1000 / rate))
    path = tmp_path_factory.mktemp("lag") / "h_clat_hist.1.log"
    _write_log(path, times, [1] * len(times))
    worst, at, done = schedule_lag(path, rate)
    assert done == len(latencies)
    assert worst == pytest.approx(max(act_lags), abs=1e-9)
    # `at` is a completion where ACT's lag is at its worst (ties: any of them)
    assert any(abs(t / 1000.0 - at) < 1e-9 and abs(lag - max(act_lags)) < 1e-9 for t, lag in zip(times, act_lags,
                                                                                                  strict=True))
    for limit in (1, 10):  # ACT stops when -sleep_us > max_lag_usec: so does ssdlab
        assert (worst > limit) == any(lag > limit for lag in act_lags)


def test_a_stall_shows_in_the_row_that_ends_it(tmp_path: Path) -> None:
    """fio writes a histogram row at a completion, so a stall longer than the log interval ends in a row
    stamped when the stalled request completed: 200/s for 1 s, then a 12-s request."""
    path = tmp_path / "h_clat_hist.1.log"
    _write_log(path, [1000, 13000], [200, 1])
    worst, at, done = schedule_lag(path, 200.0)
    assert done == 201
    assert at == 13.0
    assert worst == pytest.approx(13.0 - 201 / 200)


# ------------------------------------------------------------------ ACT's config keys


ALL_KEYS = """
# every item act_storage accepts (cfg_storage.c storage_configure)
device-names: /dev/x0,/dev/x1
file-size-mbytes: 0
service-threads: 12
test-duration-sec: 600
report-interval-sec: 2
microsecond-histograms: yes
read-reqs-per-sec: 6000
write-reqs-per-sec: 3000
record-bytes: 1500
record-bytes-range-max: 2000
large-block-op-kbytes: 256
replication-factor: 2
update-pct: 100
defrag-lwm-pct: 60
no-defrag-reads: no
compress-pct: 70
disable-odsync: no
commit-to-device: yes
tomb-raider: yes
tomb-raider-sleep-usec: 500
max-lag-sec: 0
"""


def test_every_act_config_key_is_accepted() -> None:
    values = parse_config(ALL_KEYS)
    assert len(CONFIG_KEYS) == 21
    assert {CONFIG_KEYS[k][0] for k in CONFIG_KEYS} == set(values)
    assert values["device_names"] == ["/dev/x0", "/dev/x1"]
    assert values["read_reqs_per_sec"] == 6000
    assert values["commit_to_device"] is True
    assert values["no_defrag_reads"] is False
    # every key maps to an option of the suite (device-names and file-size-mbytes are checked, not options)
    keys = {o.key for o in ActSuite().suite_options()}
    assert {opt for opt, _ in CONFIG_KEYS.values()} - keys == {"device_names", "file_size_mbytes"}


def test_config_values_reach_the_plan() -> None:
    values = parse_config(ALL_KEYS)
    values.pop("device_names")
    ctx = PlanContext(capacity=1 << 30, devices=2, options={"act_config_values": values, "skip_prep": True,
                                                            "slice": "300"})
    cfg = config_for(ctx)
    assert (cfg.read_reqs_per_s, cfg.write_reqs_per_s, cfg.service_threads) == (6000, 3000, 12)
    assert (cfg.record_bytes, cfg.record_bytes_range_max, cfg.large_block_bytes) == (1500, 2000, 256 * 1024)
    assert (cfg.replication_factor, cfg.update_pct, cfg.defrag_lwm_pct, cfg.compress_pct) == (2, 100, 60, 70)
    assert cfg.commit_to_device
    assert cfg.tomb_raider
    assert cfg.tomb_raider_sleep_us == 500
    assert cfg.max_lag_s == 0
    points = ActSuite().plan(ctx)
    assert [p.id for p in points] == ["act-1_5x-s001", "act-1_5x-s002"]  # 6000/3000 on 2 devices is 1.5x
    assert points[0].workload.hist_log_ms == 2000  # report-interval-sec
    assert points[0].tags["stream_names"] == ["service", "large-block-reads", "large-block-writes", "tomb-raider"]
    assert points[0].tags["max_lag_s"] == 0


def test_explicit_options_win_over_the_file_and_rates_name_levels() -> None:
    values = parse_config("read-reqs-per-sec: 5000\nwrite-reqs-per-sec: 0\nupdate-pct: 20\n")
    ctx = PlanContext(capacity=1 << 30, options={"act_config_values": values, "update_pct": 10,
                                                 "service_threads": 10, "duration": "2", "slice": "2"})
    assert derive(config_for(ctx)).reads_per_s == 5000  # writes 0: update-pct adds nothing
    assert levels(ctx)[0].label == "5000 reads/s + 0 writes/s"
    assert ActSuite().level_points(ctx, levels(ctx)[0])[0].id == "act-r5000-w0-s001"
    # --load on the command line replaces the file's rates
    ctx = PlanContext(capacity=1 << 30, options={"act_config_values": values, "load": "2x", "service_threads": 10})
    assert levels(ctx)[0].label == "2x"
    with pytest.raises(UsageError, match="either --load"):
        levels(PlanContext(capacity=1 << 30, options={"load": "2x", "read_reqs_per_sec": 100}))
    fm = PlanContext(capacity=1 << 30, options={"read_reqs_per_sec": 5000, "find_max": True, "max_load": "3x"})
    assert [lv.read_reqs_per_s for lv in levels(fm)] == [5000, 10000, 15000]


@pytest.mark.parametrize(("text", "message"), [
    ("update-pct: 101\n", "update-pct"),  # check_configuration refuses it
    ("defrag-lwm-pct: 100\n", "defrag-lwm-pct"),
    ("compress-pct: 101\n", "compress-pct"),
    ("replication-factor: 0\n", "replication-factor"),
    ("record-bytes: 0\n", "record-bytes"),
    ("large-block-op-kbytes: 96\n", "power of 2"),
    ("disable-odsync: yes\ncommit-to-device: yes\n", "disable-odsync"),
    ("read-reqs-per-sec: 0\nwrite-reqs-per-sec: 0\n", "both be zero"),
    ("read-reqs-per-sec: 5\nwrite-reqs-per-sec: 0\nservice-threads: 10\n", "load config too small"),
    ("record-bytes-range-max: 1000\n", "range-max"),
    ("record-bytes: 1536\nrecord-bytes-range-max: 4096\n", "divides 100"),  # 6 sizes: fio cannot split evenly
])
def test_what_act_refuses_is_refused(text: str, message: str) -> None:
    ctx = PlanContext(capacity=1 << 30, options={"act_config_values": parse_config(text), "duration": "2",
                                                 "slice": "2", "service_threads": 10})
    with pytest.raises(UsageError, match=message):
        ActSuite().validate(ctx, None)


@pytest.mark.parametrize(("text", "message"), [
    ("read-reqs-per-second: 2000\n", "unknown ACT config item"),  # storage_configure: unknown -> error
    ("commit-to-device: true\n", "yes or no"),  # ACT would read it as "no"
    ("read-reqs-per-sec: 2k\n", "whole number"),  # ACT's strtoul would read 2
    ("read-reqs-per-sec: 4294967296\n", "overflows"),  # parse_uint32: overflows unsigned int
    ("device-names:\n", "names no device"),
])
def test_bad_config_lines_are_refused_with_the_line(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as err:
        parse_config(text, "act.conf")
    assert "act.conf line 1" in str(err.value)


def test_refused_runs_leave_no_results_directory(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    res = cli("run", "act", "--target", "sim:tlc-4k", "--out", str(out), "--duration", "2", "--slice", "2")
    assert res.code == 2
    assert "simulated SSD" in res.err
    assert not out.exists()
    target = f"file:{tmp_path / 'x.dat'}?size=64MiB"
    for text, message in (("update-pct: 101\n", "update-pct"), ("file-size-mbytes: 100\n", "buffered I/O"),
                          (f"device-names: {tmp_path / 'other.dat'}\n", "not the --target devices")):
        conf = tmp_path / "act.conf"
        conf.write_text(text)
        res = cli("run", "act", "--target", target, "--act-config", str(conf), "--out", str(out),
                  "--duration", "2", "--slice", "2")
        assert res.code == 2, res.err
        assert message in res.err
        assert not out.exists()
        assert not (tmp_path / "x.dat").exists()  # nothing was laid out either
    res = cli("run", "act", "--target", target, "--update-pct", "101", "--out", str(out), "--duration", "2")
    assert res.code == 2
    assert not out.exists()


def test_device_names_matching_the_targets_are_accepted(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "act.conf"
    conf.write_text(f"device-names: {tmp_path / 'x.dat'}\ntest-duration-sec: 4\nread-reqs-per-sec: 3000\n"
                    "write-reqs-per-sec: 1500\nservice-threads: 5\nmax-lag-sec: 0\n")
    res = cli("plan", "act", "--target", f"file:{tmp_path / 'x.dat'}?size=64MiB", "--act-config", str(conf),
              "--slice", "2")
    assert res.code == 0, res.err
    assert "act-1_5x-s002" in res.out
    assert "5 service threads" in res.out
    assert "never stops because of lag" in res.out


def test_validate_records_what_a_resume_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The config file's values and the host's default thread count are written into the run's options, so
    a resumed run (on another host, or after the file changed) runs the same slices."""
    conf = tmp_path / "act.conf"
    conf.write_text("read-reqs-per-sec: 4000\nwrite-reqs-per-sec: 2000\ntest-duration-sec: 4\n")
    monkeypatch.setattr(act, "online_cpus", lambda: 4)
    ctx = PlanContext(capacity=1 << 30, options={"act_config": str(conf), "slice": "2"})
    ActSuite().validate(ctx, None)
    assert ctx.options["service_threads"] == 20
    assert ctx.options["act_config_values"]["read_reqs_per_sec"] == 4000
    conf.unlink()
    monkeypatch.setattr(act, "online_cpus", lambda: 64)
    resumed = PlanContext(capacity=1 << 30, options=dict(ctx.options))
    point = ActSuite().plan(resumed)[-1]
    assert point.id == "act-2x-s002"
    assert point.tags["service_threads"] == 20


def test_act_on_the_simulator_is_refused_and_suites_and_readme_say_so(cli: Any) -> None:
    res = cli("plan", "act", "--target", "sim:p5430", traceback=False)
    assert res.code == 2
    assert "the simulated SSD does not model" in res.err
    listing = next(line for line in cli("suites").out.splitlines() if line.startswith("act "))
    assert "fio targets only: the simulator has no paced concurrent streams" in listing
    readme = (Path(__file__).parent.parent.parent / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| Certification |"))
    assert "`--target sim:...` is refused" in row
