"""ACT points as fio job files: one section per stream and device, paced rates, O_DSYNC writes, hist logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.errors import UsageError
from ssdlab.fio.job import build_job
from ssdlab.run.target import parse_target
from ssdlab.suites.act import ActSuite
from ssdlab.suites.base import PlanContext
from ssdlab.targets import TargetOptions
from ssdlab.targets.multi import MultiTarget


def _ctx(devices: int = 1, lbs: int = 512, **opts: object) -> PlanContext:
    return PlanContext(capacity=64 * 1024**2, logical_block_size=lbs, devices=devices,
                       options={"duration": "4", "slice": "2", "load": "1x", **opts})


def test_one_device_three_paced_streams() -> None:
    point = ActSuite().level_points(_ctx(service_threads=10), 1.0)[0]
    job = build_job(point, {"filename": "/tmp/x", "ioengine": "libaio", "direct": 1, "size": 1 << 26})
    by_name = {s.name: dict(s.options) for s in job.jobs}
    assert list(by_name) == ["service", "large-block-reads-d0", "large-block-writes-d0"]
    reads = by_name["service"]
    assert reads["ioengine"] == "psync"
    assert reads["iodepth"] == 1
    assert reads["numjobs"] == 10  # ACT's service threads, each a QD1 job
    assert reads["bs"] == 1536
    assert reads["blockalign"] == "512"
    assert reads["rate_iops"] == 200  # 2000 reads/s // 10 threads, ACT's integer per-thread rate
    assert "file_service_type" not in reads  # one device: nothing to pick from
    writes = by_name["large-block-writes-d0"]
    assert writes["sync"] == "dsync"
    assert writes["refill_buffers"] == "1"
    assert writes["buffer_compress_percentage"] == "0"
    assert writes["buffer_compress_chunk"] == "512"
    assert int(str(writes["rate"])) == round(1000 / 85 * 2 * 131072)
    for opts in by_name.values():
        assert opts["new_group"] == 1  # one reporting group per stream
        assert opts["runtime"] == "2"
        assert opts["time_based"] == 1
        assert str(opts["write_hist_log"]).startswith("hist_")
    text = job.render()
    assert text.count("[service]") == 1
    assert "[global]" in text


def test_4kn_device_reads_4k_and_compress_pct() -> None:
    point = ActSuite().level_points(_ctx(lbs=4096, compress_pct=40), 1.0)[0]
    job = build_job(point, {"filename": "/tmp/x"})
    reads = dict(job.jobs[0].options)
    assert reads["bs"] == 4096
    assert reads["blockalign"] == "4096"
    assert dict(job.jobs[2].options)["buffer_compress_percentage"] == "60"


def test_multi_target_shares_the_service_threads_and_splits_large_blocks(tmp_path: Path) -> None:
    opts = TargetOptions()
    targets = [parse_target(f"file:{tmp_path / n}?size=64MiB", opts) for n in ("a.dat", "b.dat")]
    multi = MultiTarget.from_targets(targets, opts)
    assert multi.capacity() == 64 * 1024**2
    assert multi.name.count("+") == 1
    point = ActSuite().level_points(_ctx(devices=2, service_threads=10), 1.0)[0]
    job = build_job(point, multi.fio_options(), multi.device_fio_options())
    names = [s.name for s in job.jobs]
    assert names == ["service", "large-block-reads-d0", "large-block-writes-d0",
                     "large-block-reads-d1", "large-block-writes-d1"]
    pool = dict(job.jobs[0].options)
    # ACT's pool: every thread picks a device at random for every request (act_storage.c run_service)
    assert str(pool["filename"]).endswith("a.dat:" + str(tmp_path / "b.dat"))
    assert pool["file_service_type"] == "random"
    assert pool["size"] == 2 * 64 * 1024**2  # fio splits size evenly: each device's whole span
    assert pool["numjobs"] == 10
    assert pool["rate_iops"] == 400  # 2 devices x 2000 reads/s over 10 threads
    assert str(dict(job.jobs[3].options)["filename"]).endswith("b.dat")
    # large blocks: one thread per device at half the total (run_large_block_reads: rate / num_devices)
    lb_total = 2000 / 85 * 2
    assert int(str(dict(job.jobs[1].options)["rate"])) == round(lb_total / 2 * 131072)
    with pytest.raises(UsageError, match="more than once"):
        MultiTarget.from_targets([targets[0], targets[0]], opts)


def test_prep_points_fill_twice_zeros_then_random() -> None:
    prep = ActSuite().prep_points(_ctx())
    assert [p.id for p in prep] == ["act-prep-zero", "act-prep-salt"]
    zero = build_job(prep[0], {"filename": "/tmp/x", "size": 1 << 26})
    salt = build_job(prep[1], {"filename": "/tmp/x", "size": 1 << 26})
    assert dict(zero.jobs[0].options)["zero_buffers"] == "1"
    assert dict(salt.jobs[0].options)["refill_buffers"] == "1"
    for j in (zero, salt):
        o = dict(j.jobs[0].options)
        assert o["rw"] == "write"
        assert o["bs"] == 131072
        assert "runtime" not in o


def test_null_target_keeps_the_null_engine(tmp_path: Path) -> None:
    point = ActSuite().level_points(PlanContext(capacity=1 << 30, target_kind="null",
                                                options={"duration": "2", "slice": "2",
                                                         "service_threads": 4}), 1.0)[0]
    null = parse_target("null")
    job = build_job(point, null.fio_options())
    for section in job.jobs:
        assert dict(section.options)["ioengine"] == "null"  # never psync on job-named files in the cwd
    with pytest.raises(UsageError, match="null"):
        MultiTarget.from_targets([null, parse_target(f"file:{tmp_path / 'a.dat'}?size=64MiB")], TargetOptions())


def test_the_write_gate_takes_the_shared_pool_and_nothing_wider(tmp_path: Path) -> None:
    """The service pool is one fio section over every device (filename=a:b); the gate at the fio boundary
    accepts exactly the target's devices in that form, no other file and no span past the devices'."""
    import dataclasses

    from ssdlab import safety
    from ssdlab.errors import UnsafeTargetError
    from ssdlab.fio.executor import point_job
    from ssdlab.fio.job import FioSection

    opts = TargetOptions()
    targets = [parse_target(f"file:{tmp_path / n}?size=64MiB", opts) for n in ("a.dat", "b.dat")]
    multi = MultiTarget.from_targets(targets, opts)
    point = ActSuite().level_points(_ctx(devices=2, service_threads=10), 1.0)[0]
    job = point_job(point, multi)
    grant = safety.WriteGrant(multi, writes=True)
    grant.check_job(job)  # accepted as built
    pool = dict(job.jobs[0].options)
    for key, value in (("filename", f"{pool['filename']}:{tmp_path / 'c.dat'}"),
                       ("filename", str(pool["filename"]).split(":")[0]), ("size", 3 * 64 * 1024**2),
                       ("direct", 0)):
        bad = FioSection("service", {**pool, key: value})
        with pytest.raises(UnsafeTargetError, match="refusing to start fio"):
            grant.check_job(dataclasses.replace(job, jobs=(bad, *job.jobs[1:])))
