"""Job files of one point on several devices: one section per device, numbered across hosts."""

from __future__ import annotations

from ssdlab.fio.job import build_device_job
from ssdlab.results.model import TestPoint, Workload

DEV_A = {"filename": "/dev/nvme0n1", "ioengine": "libaio", "direct": 1, "size": 1 << 30,
         "cpus_allowed": "16-31", "cpus_allowed_policy": "shared"}
DEV_B = {"filename": "/dev/nvme1n1", "ioengine": "libaio", "direct": 1, "size": 1 << 29}


def test_one_section_per_device_each_its_own_group() -> None:
    p = TestPoint(id="03-rnd4k", label="x", workload=Workload(rw="randread", bs=4096, iodepth=32, numjobs=2,
                                                               runtime_s=1.0, size=3 << 28, log_interval_ms=500))
    job = build_device_job(p, [DEV_A, DEV_B], first_device=2)
    a, b = job.jobs
    assert [a.name, b.name] == ["03-rnd4k-d2", "03-rnd4k-d3"]
    assert a.options["new_group"] == 1
    assert a.options["filename"] == "/dev/nvme0n1"
    assert a.options["cpus_allowed"] == "16-31"  # the device's NUMA placement
    assert b.options["filename"] == "/dev/nvme1n1"
    assert "cpus_allowed" not in b.options
    assert a.options["size"] == 3 << 28  # the workload's active range, within the device
    assert b.options["size"] == 1 << 29  # the smaller device bounds it
    assert a.options["numjobs"] == 2  # every device gets the whole workload
    assert a.options["write_iops_log"] == "series_03-rnd4k-d2"  # per-device logs, read back per section
    assert job.global_options["group_reporting"] == 1
    assert job.writes() == []


def test_streams_run_on_every_device_with_global_numbers() -> None:
    reads = Workload(rw="randread", bs=1536, iodepth=1, runtime_s=1.0)
    writes = Workload(rw="write", bs=131072, iodepth=1, runtime_s=1.0)
    p = TestPoint(id="act", label="act", workload=reads, streams=(reads, writes),
                  tags={"stream_names": ["reads", "writes"]})
    job = build_device_job(p, [DEV_A, DEV_B], first_device=4)
    assert [s.name for s in job.jobs] == ["reads-d4", "writes-d4", "reads-d5", "writes-d5"]
    assert job.writes() == ["[writes-d4] rw=write writes", "[writes-d5] rw=write writes"]
