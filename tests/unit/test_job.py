"""Typed fio job files: exact rendering, filename escaping, refusal of values fio would misread."""

from __future__ import annotations

import pytest

from conftest import JOB_HEAD
from ssdlab.errors import UsageError
from ssdlab.fio.job import FioJob, FioSection, OptionValue, build_job, escape_filename, workload_options
from ssdlab.results.model import TestPoint, Workload

TARGET: dict[str, OptionValue] = {"filename": "/dev/nvme0n1", "ioengine": "libaio", "direct": 1, "size": 1 << 30}

EXPECTED_RND4K = JOB_HEAD.format(id="03-rnd4k-q32t1-read") + """\
size=1073741824
rw=randread
bs=4096
iodepth=32
numjobs=1
time_based=1
runtime=5
ramp_time=500ms
norandommap=1
randrepeat=0
"""


def point(**kw: object) -> TestPoint:
    """A test point with a randread 4k QD32 workload, overridable field by field."""
    fields: dict[str, object] = {"rw": "randread", "bs": 4096, "iodepth": 32, "numjobs": 1, "runtime_s": 5.0,
                                 "ramp_s": 0.5}
    fields.update(kw)
    return TestPoint(id="03-rnd4k-q32t1-read", label="RND4K Q32T1 Read", workload=Workload(**fields))  # type: ignore[arg-type]


def test_known_point_renders_byte_for_byte() -> None:
    assert build_job(point(), TARGET).render() == EXPECTED_RND4K


def test_sequential_size_based_point() -> None:
    text = build_job(point(rw="write", bs=1 << 20, iodepth=8, runtime_s=None, ramp_s=0.0, io_bytes=1 << 30),
                     TARGET).render()
    lines = text.splitlines()
    assert "rw=write" in lines
    assert "bs=1048576" in lines
    assert "io_size=1073741824" in lines
    assert not any(ln.startswith(("time_based", "runtime", "ramp_time", "norandommap", "randrepeat"))
                   for ln in lines)


def test_workload_size_is_bounded_by_the_target() -> None:
    assert "size=1048576" in build_job(point(size=1 << 20), TARGET).render().splitlines()
    assert "size=1073741824" in build_job(point(size=1 << 40), TARGET).render().splitlines()


def test_rwmix_bssplit_rate_and_extra_options() -> None:
    opts = workload_options(Workload(rw="randrw", bs=4096, rwmixread=70, bssplit="4k/50:64k/50",
                                     rate_iops=1000, random_distribution="zipf:1.2",
                                     options={"thinktime": "10"}))
    assert opts["rwmixread"] == 70
    assert opts["bssplit"] == "4k/50:64k/50"
    assert "bs" not in opts
    assert opts["rate_iops"] == 1000
    assert opts["random_distribution"] == "zipf:1.2"
    assert opts["thinktime"] == "10"
    # rwmixread only means something for mixed workloads
    assert "rwmixread" not in workload_options(Workload(rw="randread", bs=4096, rwmixread=70))


@pytest.mark.parametrize(("seconds", "text"), [(5.0, "5"), (60, "60"), (0.5, "500ms"), (1.25, "1250ms")])
def test_time_values(seconds: float, text: str) -> None:
    assert workload_options(Workload(rw="read", bs=4096, runtime_s=seconds))["runtime"] == text


def test_job_name_is_sanitised_from_the_point_id() -> None:
    p = TestPoint(id="weird id/with:chars", label="x", workload=Workload(rw="read", bs=4096))
    assert build_job(p, TARGET).render().splitlines()[1] == "[weird_id_with_chars]"


def test_values_render_bools_and_floats() -> None:
    job = FioJob(jobs=(FioSection("a", {"thread": True, "direct": False, "rate": 1.5}),))
    assert job.render().splitlines()[2:] == ["thread=1", "direct=0", "rate=1.5"]


def test_global_section_comes_first() -> None:
    job = FioJob(jobs=(FioSection("a", {"rw": "read"}),), global_options={"ioengine": "null"})
    assert job.render().splitlines()[1:] == ["[global]", "ioengine=null", "", "[a]", "rw=read"]


@pytest.mark.parametrize(("path", "escaped"), [
    ("/dev/disk/by-path/pci-0000:00:1f.2-ata-1", "/dev/disk/by-path/pci-0000\\:00\\:1f.2-ata-1"),
    ("/tmp/a:b.dat", "/tmp/a\\:b.dat"),
    ("/tmp/back\\slash.dat", "/tmp/back\\slash.dat"),  # fio keeps lone backslashes literally
    ("/tmp/plain.dat", "/tmp/plain.dat"),
])
def test_filename_colon_escaping(path: str, escaped: str) -> None:
    assert escape_filename(path) == escaped


@pytest.mark.parametrize("value", ["/tmp/a\nrw=write", "/tmp/a\rb", "x\0y", " lead", "trail "])
def test_newlines_and_edge_whitespace_are_rejected(value: str) -> None:
    with pytest.raises(UsageError, match="line break or edge whitespace"):
        FioJob(jobs=(FioSection("a", {"filename": value}),)).render()


@pytest.mark.parametrize("value", ["/tmp/a;b", "/tmp/a#b", "/tmp/${HOME}", "$ncpus"])
def test_comment_and_variable_symbols_are_rejected(value: str) -> None:
    """fio cuts values at ';'/'#' and expands '$': the job would name a different file."""
    with pytest.raises(UsageError, match="contains"):
        FioJob(jobs=(FioSection("a", {"filename": value}),)).render()


@pytest.mark.parametrize("key", ["Rw", "rw=x", "1bs", "bs size", "", "rw\n"])
def test_bad_option_names_are_rejected(key: str) -> None:
    with pytest.raises(UsageError, match="bad fio option name"):
        FioSection("a", {key: 1})


@pytest.mark.parametrize("name", ["", "a b", "a]", "[x", "a\nb", "a\n"])
def test_bad_job_names_are_rejected(name: str) -> None:
    with pytest.raises(UsageError, match="bad fio job name"):
        FioSection(name, {})


def test_extra_options_cannot_smuggle_lines() -> None:
    with pytest.raises(UsageError):
        build_job(point(options={"description": "x\n[evil]\nrw=write"}), TARGET).render()
