"""Golden job files: the exact fio text ssdlab.fio.job.build_job writes for representative suite points."""

from __future__ import annotations

from conftest import JOB_HEAD
from ssdlab.fio.job import build_job
from ssdlab.results.model import DirectionStats, Measurement, PointResult, Run
from ssdlab.suites.base import PlanContext, Suite, apply_common, common_limits
from ssdlab.suites.characterization import builtin_suites

TARGET = {"filename": "/dev/nvme0n1", "ioengine": "libaio", "direct": 1}
CTX = PlanContext(capacity=1 << 30)


def _suite(name: str) -> Suite:
    return next(s for s in builtin_suites() if s.name == name)


def _job(suite: str, point_id: str, ctx: PlanContext = CTX, run: Run | None = None) -> str:
    s = _suite(suite)
    points = s.next_points(ctx, run) if run is not None else s.plan(ctx)
    point = next(p for p in points if p.id == point_id)
    return build_job(apply_common(ctx, point), TARGET).render()


def _run_with(point_id: str, read_iops: float, write_iops: float) -> Run:
    dirs = {}
    for name, iops in (("read", read_iops), ("write", write_iops)):
        if iops:
            dirs[name] = DirectionStats(iops=iops, bw_bytes=iops * 4096, io_bytes=int(iops * 4096 * 60),
                                        total_ios=int(iops * 60), runtime_ms=60000)
    m = Measurement(engine="fio", engine_version="3.33", directions=dirs)
    run = Run(schema_version=1, ssdlab_version="t", run_id="r", suite="s", status="running", created="",
              options={}, target={}, host={})
    from ssdlab.results.model import TestPoint, Workload

    fake = TestPoint(id=point_id, label="max", workload=Workload(rw="randrw", bs=4096))
    return run.with_point(PointResult(point=fake, status="ok", started="", finished="", measurement=m))


def test_sweep_bs_random_read_4k() -> None:
    assert _job("sweep-bs", "016-rnd-read-bs4k") == JOB_HEAD.format(id="016-rnd-read-bs4k") + """rw=randread
bs=4096
iodepth=16
numjobs=16
time_based=1
runtime=120
norandommap=1
randrepeat=0
"""


def test_sweep_qd_mixed_point() -> None:
    ctx = PlanContext(capacity=1 << 30, runtime_s=30)
    assert _job("sweep-qd", "035-rnd-mix70-t4-q64", ctx) == JOB_HEAD.format(id="035-rnd-mix70-t4-q64") + """rw=randrw
bs=4096
rwmixread=70
iodepth=64
numjobs=4
time_based=1
runtime=30
norandommap=1
randrepeat=0
"""


def test_stability_logs_per_second_and_histograms() -> None:
    assert _job("stability", "001-stability") == JOB_HEAD.format(id="001-stability") + """rw=randrw
bs=4096
rwmixread=70
iodepth=16
numjobs=16
time_based=1
runtime=1200
ramp_time=10
norandommap=1
randrepeat=0
write_iops_log=series
write_bw_log=series
write_lat_log=series
log_avg_msec=1000
write_hist_log=hist
log_hist_msec=1000
"""


def test_iometer_fileserver() -> None:
    assert _job("iometer-fileserver", "004-load-q64") == JOB_HEAD.format(id="004-load-q64") + """rw=randrw
bssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10
rwmixread=80
iodepth=64
numjobs=1
time_based=1
runtime=60
norandommap=1
randrepeat=0
"""


def test_app_vdi_uncapped_max_point() -> None:
    assert _job("app-vdi", "001-curve-ratemax") == JOB_HEAD.format(id="001-curve-ratemax") + """rw=randrw
bssplit=4k/50:16k/21:32k/13:64k/16,4k/82:8k/18
rwmixread=59
iodepth=8
numjobs=1
time_based=1
runtime=60
norandommap=1
randrepeat=0
percentage_random=80
dedupe_percentage=86
buffer_compress_percentage=88
buffer_compress_chunk=4k
"""


def test_app_sql_curve_point_rate_from_the_stored_max() -> None:
    # max run: 16000 reads/s + 7450 writes/s = 23450; 70 % -> 16415 -> rounded up to 16500 (vdbench rule);
    # split by the observed read share 16000/23450 -> 11257.99 reads/s, 5242.004 writes/s, rounded up per job
    run = _run_with("001-curve-ratemax", 16000, 7450)
    text = _job("app-sql", "004-curve-rate70", run=run)
    assert text == JOB_HEAD.format(id="004-curve-rate70") + """rw=randrw
bssplit=8k/65:64k/35,4k/31:8k/39:64k/30
rwmixread=68
iodepth=8
numjobs=1
time_based=1
runtime=60
rate_iops=11258,5243
norandommap=1
randrepeat=0
percentage_random=80
dedupe_percentage=50
buffer_compress_percentage=50
buffer_compress_chunk=4k
rate_process=poisson
"""


def test_iorate_curve_rate_is_divided_over_the_jobs() -> None:
    run = _run_with("001-rnd-read-ratemax", 412345.0, 0)
    text = _job("iorate-curve", "003-rnd-read-rate50", run=run)
    # 50 % of 412345 = 206172.5 -> 206200 total -> 8 jobs x 25775
    assert "rate_iops=25775\n" in text
    assert "rate_process=poisson\n" in text
    assert "numjobs=8\niodepth" not in text
    assert "iodepth=32\nnumjobs=8\n" in text


def test_footprint_and_misalignment_reach_the_job_file() -> None:
    capacity, footprint, shift = common_limits(1 << 30, 512, "5%", 512)
    ctx = PlanContext(capacity=capacity, footprint=footprint, misalign=shift)
    assert (capacity, footprint, shift) == (53686272, 53686272, 512)
    text = _job("sweep-bs", "028-seq-write-bs4k", ctx)
    assert text == JOB_HEAD.format(id="028-seq-write-bs4k") + """rw=write
bs=4096
iodepth=1
numjobs=1
time_based=1
runtime=120
offset=512
size=53686272
"""


def test_lat_curve_point() -> None:
    ctx = PlanContext(capacity=1 << 30, options={"p99_limit": 500.0})
    s = _suite("lat-curve")
    point = next(p for p in s.plan(ctx) if p.id == "021-curve-bs4k-r100-t4-q16")
    assert point.tags["p99_limit_us"] == 500.0
    assert build_job(point, TARGET).render() == JOB_HEAD.format(id=point.id) + """rw=randrw
bs=4096
rwmixread=100
iodepth=16
numjobs=4
time_based=1
runtime=30
ramp_time=5
norandommap=1
randrepeat=0
"""
