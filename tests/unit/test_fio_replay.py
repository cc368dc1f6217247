"""fio's iolog replay of a trace: the job (streams of queue depth 1 redirected to the target; as fast as
possible with replay_no_stall; --speed as replay_time_scale), the iologs it reads (byte for byte what a
per-line writer gives), and the write gate at the fio boundary (an iolog only from the point's directory, I/O
only to the section's own file; a read-only replay runs fio --readonly)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ssdlab.errors import UnsafeTargetError
from ssdlab.fio.executor import job_on
from ssdlab.fio.job import FioJob, FioSection
from ssdlab.fio.options import replays_readonly
from ssdlab.fio.replay import iolog_bytes, write_iologs
from ssdlab.results.model import TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.safety import WriteGrant
from ssdlab.targets.base import TargetOptions
from ssdlab.targets.file import FileTarget
from ssdlab.trace.mapping import ReplaySpec

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"


def point(**kw: object) -> TestPoint:
    s = ReplaySpec(trace=str(DATA / "alibaba.csv"), volume="3", **kw)  # type: ignore[arg-type]
    return TestPoint(id="replay", label="r", workload=Workload(rw="randrw", bs=4096, log_interval_ms=1000),
                     tags=PointTags.of(replay=s.to_tags()))


DEV = {"filename": "/data/t.dat", "ioengine": "libaio", "direct": 1, "size": 1 << 30}


def test_timed_replay_runs_streams_of_depth_one() -> None:
    job = job_on(point(depth=3), DEV, [DEV])
    assert [s.name for s in job.jobs] == ["replay-s0", "replay-s1", "replay-s2"]
    for k, s in enumerate(job.jobs):
        o = s.options
        assert o["iodepth"] == 1
        assert o["read_iolog"] == f"replay-s{k}.iolog"
        assert o["replay_redirect"] == "/data/t.dat"
        assert o["filename"] == "/data/t.dat"
        assert "replay_no_stall" not in o
        assert "replay_time_scale" not in o
        assert o["rw"] == "randrw"
    assert "new_group" not in job.jobs[1].options  # one reporting group


def test_streams_never_outnumber_the_ios() -> None:
    assert len(job_on(point(depth=64), DEV, [DEV]).jobs) == 4  # volume 3 has 4 I/Os


def test_speed_and_as_fast_as_possible() -> None:
    assert job_on(point(speed=2.0), DEV, [DEV]).jobs[0].options["replay_time_scale"] == 200
    job = job_on(point(speed=None, depth=32), DEV, [DEV])
    assert len(job.jobs) == 4  # streams: at most one per I/O (volume 3 has 4)
    for s in job.jobs:
        assert s.options["replay_no_stall"] == 1
        assert s.options["iodepth"] == 1


def test_several_devices_one_group_each() -> None:
    other = {**DEV, "filename": "/data/u.dat"}
    job = job_on(point(depth=2), DEV, [DEV, other])
    assert [s.name for s in job.jobs] == ["s0-d0", "s1-d0", "s0-d1", "s1-d1"]
    assert job.jobs[0].options["new_group"] == 1
    assert "new_group" not in job.jobs[1].options
    assert job.jobs[2].options["replay_redirect"] == "/data/u.dat"
    assert job.jobs[2].options["read_iolog"] == "replay-d1-s0.iolog"
    assert job.jobs[0].options["write_iops_log"] == "series_replay-d0"


def test_iologs_hold_every_io_once(tmp_path: Path) -> None:
    got = write_iologs(point(depth=3), [DEV], tmp_path)
    assert got["devices"] == [{"read": [2, 8192], "write": [2, 12288], "trim": [0, 0]}]
    lines = [ln for k in range(3) for ln in (tmp_path / f"replay-s{k}.iolog").read_text().splitlines()
             if ln.split()[2] in ("read", "write")]
    assert sorted(lines) == sorted(["1 replay read 0 4096", "101 replay write 4096 4096",
                                    "1001 replay write 8192 8192", "3001 replay read 0 4096"])
    s0 = (tmp_path / "replay-s0.iolog").read_text().splitlines()
    assert s0[:3] == ["fio version 3 iolog", "1 replay add", "1 replay open"]
    assert s0[-1].endswith("replay close")


def test_iolog_bytes_match_a_per_line_writer() -> None:
    rng = np.random.default_rng(4)
    n = 5000
    t = np.sort(rng.integers(1, 10**12, n))
    op = rng.integers(0, 3, n).astype(np.uint8)
    off = rng.integers(0, 2**45, n)
    size = rng.integers(1, 2**24, n)
    names = ("read", "write", "trim")
    want = "".join(f"{a} replay {names[o]} {b} {c}\n" for a, o, b, c in zip(t, op, off, size, strict=True))
    got = iolog_bytes(t, op, off, size).decode()
    body = got.split("\n", 3)[3]
    assert body == want + f"{t[-1]} replay close\n"


def file_target(tmp_path: Path) -> FileTarget:
    path = tmp_path / "t.dat"
    path.write_bytes(b"\0" * 4096)
    return FileTarget(spec=str(path), kind="file", options=TargetOptions(size=1 << 20), path=path)


def test_the_gate_takes_a_replay_job_as_built(tmp_path: Path) -> None:
    target = file_target(tmp_path)
    job = job_on(point(depth=2), target.fio_options(), target.device_fio_options())
    write_iologs(point(depth=2), target.device_fio_options(), tmp_path / "pt")
    WriteGrant(target, writes=True).check_job(job, tmp_path / "pt")
    with pytest.raises(UnsafeTargetError, match="not authorized to write"):
        WriteGrant(target, writes=False).check_job(job, tmp_path / "pt")


def test_the_gate_reads_the_iolog_fio_replays_and_refuses_io_past_the_span(tmp_path: Path) -> None:
    """fio 3.33 replays an iolog's offsets whatever the section's `size` says (replay_redirect changes the file,
    not the offsets): the span check on offset + size alone let a log reach past --capacity or extend a file
    target. The gate reads the log fio will read (in the point's directory) and bounds its highest byte."""
    target = file_target(tmp_path)
    where = tmp_path / "pt"
    job = job_on(point(depth=1), target.fio_options(), target.device_fio_options())
    write_iologs(point(depth=1), target.device_fio_options(), where)
    grant = WriteGrant(target, writes=True)
    grant.check_job(job, where)  # as written: inside the span
    span = int(target.device_fio_options()[0]["size"])
    log = where / "replay-s0.iolog"
    lines = log.read_text().splitlines()
    io = next(i for i, ln in enumerate(lines) if ln.split()[2] in ("read", "write"))
    t, name, action, _, length = lines[io].split()
    lines[io] = f"{t} {name} {action} {span - int(length) + 512} {length}"  # 512 bytes past the span
    log.write_text("\n".join(lines) + "\n")
    with pytest.raises(UnsafeTargetError, match=rf"replays I/O up to byte {span + 512} \(replay-s0.iolog\), "
                                                rf"past the first {span} bytes"):
        grant.check_job(job, where)
    with pytest.raises(UnsafeTargetError, match="an iolog the write gate was not shown"):
        grant.check_job(job)  # a bare name with no directory to read it in
    log.unlink()
    with pytest.raises(UnsafeTargetError, match="which the write gate cannot read"):
        grant.check_job(job, where)


def test_a_replay_over_every_device_at_once_is_refused(tmp_path: Path) -> None:
    """One section over both files (their names joined, as ACT's service threads run) replaying a log: no one
    device's span bounds it, so the gate refuses it rather than let the log's offsets go unchecked."""
    from ssdlab.targets.multi import MultiTarget

    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    members = [file_target(tmp_path / "a"), file_target(tmp_path / "b")]
    target = MultiTarget.from_targets(members, TargetOptions())
    devs = target.device_fio_options()
    joined = ":".join(str(d["filename"]) for d in devs)
    opts = {**devs[0], "filename": joined, "size": int(devs[0]["size"]) * 2, "rw": "randread", "bs": 4096,
            "read_iolog": "replay-s0.iolog", "replay_redirect": joined, "file_service_type": "random"}
    (tmp_path / "replay-s0.iolog").write_text("fio version 3 iolog\n1 replay add\n1 replay open\n"
                                             "2 replay read 0 4096\n3 replay close\n")
    with pytest.raises(UnsafeTargetError, match="over several devices at once, which the write gate cannot bound"):
        WriteGrant(target, writes=True).check_job(FioJob(jobs=(FioSection("all", opts),)), tmp_path)


@pytest.mark.parametrize(("key", "value"), [("read_iolog", "../x.iolog"), ("read_iolog", "/etc/passwd"),
                                       ("read_iolog", "a.iolog:b.iolog"), ("replay_redirect", "/dev/sda")])
def test_the_gate_refuses_a_replay_option_ssdlab_did_not_set(tmp_path: Path, key: str, value: str) -> None:
    target = file_target(tmp_path)
    job = job_on(point(depth=1), target.fio_options(), target.device_fio_options())
    (s,) = job.jobs
    bad = FioJob(jobs=(FioSection(s.name, {**s.options, key: value}),), global_options=job.global_options)
    with pytest.raises(UnsafeTargetError, match=f"sets {key}="):
        WriteGrant(target, writes=True).check_job(bad)


def test_a_replay_that_only_reads_runs_fio_readonly() -> None:
    reads = [{"rw": "randread", "read_iolog": "replay-s0.iolog"}]
    assert replays_readonly(reads)
    assert not replays_readonly([{"rw": "randrw", "read_iolog": "replay-s0.iolog"}])
    assert not replays_readonly([{"rw": "randread"}])  # not a replay: the runner's own rule
