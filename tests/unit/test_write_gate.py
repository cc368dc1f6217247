"""The write gate without devices: the decision from expanded jobs, the fio-boundary check, purge/layout, and a
property test that random suite files with random overrides never get a writing job past an unauthorized run."""

from __future__ import annotations

import io
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab import safety
from ssdlab.cli import Env
from ssdlab.errors import ExitCode, UnsafeTargetError, UsageError
from ssdlab.fio import runner
from ssdlab.fio.executor import point_job
from ssdlab.fio.job import FioJob, FioSection, build_job
from ssdlab.fio.options import PATH_OR_COMMAND_OPTIONS, SSDLAB_LOG_OPTIONS, SUITE_FILE_OPTIONS
from ssdlab.results.model import TestPoint, Workload
from ssdlab.run.target import parse_target
from ssdlab.suites import get_suite
from ssdlab.suites.base import apply_common
from ssdlab.suites.sweeps import RW_VALUES
from ssdlab.suites.toml_suite import load_toml_text
from ssdlab.targets import TargetOptions
from ssdlab.targets.base import Target


def ctx_for(target: Target, **options: object) -> object:
    from ssdlab.results.request import RunRequest
    from ssdlab.run.setup import plan_context

    return plan_context(target, RunRequest(runtime_s=0.5, suite_options=dict(options)))


READ_SUITE = """name = "reader"
[[matrix]]
name = "rd"
rw = "randread"
bs = ["4k", "64k"]
iodepth = [1, 8]
"""


def existing_file(tmp_path: Path, size: int = 8 << 20) -> Target:
    """A file target on a file that already exists at full size (so the layout writes nothing)."""
    path = tmp_path / "scratch.dat"
    with path.open("wb") as fh:
        fh.truncate(size)
    return parse_target(f"file:{path}", TargetOptions())


def test_a_read_only_suite_file_reads(tmp_path: Path) -> None:
    target = existing_file(tmp_path)
    suite = load_toml_text(READ_SUITE, "reader.toml")
    assert safety.decide(suite, ctx_for(target, axis=None), target).reason == ""  # type: ignore[arg-type]


def test_an_axis_override_that_writes_makes_the_run_write(tmp_path: Path) -> None:
    target = existing_file(tmp_path)
    suite = load_toml_text(READ_SUITE, "reader.toml")
    assert not suite.writes  # what the file declares plays no part
    decision = safety.decide(suite, ctx_for(target, axis=["rw=randwrite"]), target)  # type: ignore[arg-type]
    assert decision.writes
    assert decision.reason == "point 001-rd-bs4k-q1: rw=randwrite writes"
    # the last point alone writing is enough
    decision = safety.decide(suite, ctx_for(target, axis=["rw=randread,randwrite"]), target)  # type: ignore[arg-type]
    assert decision.reason == "point 005-rd-randwrite-bs4k-q1: rw=randwrite writes"


def test_purge_and_layout_count_as_writes(tmp_path: Path) -> None:
    target = parse_target(f"file:{tmp_path / 'new.dat'}?size=4MiB")
    suite = load_toml_text(READ_SUITE, "reader.toml")
    decision = safety.decide(suite, ctx_for(target, axis=None), target)  # type: ignore[arg-type]
    assert decision.reason == f"layout creates {tmp_path / 'new.dat'} and lays it out (4 MiB)"
    pts = get_suite("pts-iops")
    file = existing_file(tmp_path)
    reason = safety.decide(pts, ctx_for(file, **pts_defaults()), file).reason  # type: ignore[arg-type]
    assert reason == f"point iops-0-purge: purges {file.name}"


def pts_defaults() -> dict[str, object]:
    return {o.key: o.default for o in get_suite("pts-iops").suite_options()}


def _grant(target: Target, writes: bool) -> safety.WriteGrant:
    return safety.WriteGrant(target, writes=writes)


def _job(target: Target, rw: str, **options: str) -> FioJob:
    return build_job(TestPoint(id="p", label="p", workload=Workload(rw=rw, bs=4096, options=options)),
                     target.fio_options())


def test_the_boundary_refuses_a_writing_job_in_a_read_only_run_before_anything_exists(tmp_path: Path) -> None:
    target = existing_file(tmp_path)
    before = (tmp_path / "scratch.dat").read_bytes()
    with pytest.raises(UnsafeTargetError) as err:
        runner.run_job(_job(target, "randwrite"), tmp_path / "point", gate=_grant(target, False), binary="/bin/false")
    assert err.value.exit_code == ExitCode.UNSAFE
    assert str(err.value) == ("refusing to start fio: its job rw=randwrite writes, but this run was not authorized "
                              f"to write to {tmp_path / 'scratch.dat'}")
    assert not (tmp_path / "point").exists()  # no job file, no command, fio never started
    assert (tmp_path / "scratch.dat").read_bytes() == before


@pytest.mark.parametrize("rw", ["write", "randtrim", "trimwrite", "randrw", "rw"])
def test_every_writing_mode_is_refused_without_authorization(tmp_path: Path, rw: str) -> None:
    target = existing_file(tmp_path)
    with pytest.raises(UnsafeTargetError, match="not authorized to write"):
        _grant(target, False).check_job(_job(target, rw))
    _grant(target, True).check_job(_job(target, rw))  # an authorized run may
    _grant(target, False).check_job(_job(target, "randread"))


def test_the_boundary_refuses_jobs_that_open_anything_but_the_target(tmp_path: Path) -> None:
    target = existing_file(tmp_path)
    grant = _grant(target, True)
    own = dict(target.fio_options())
    elsewhere = FioJob(jobs=(FioSection("p", {**own, "rw": "read", "filename": "/dev/sda"}),))
    with pytest.raises(UnsafeTargetError, match=r"does not run on .* as the target set it up"):
        grant.check_job(elsewhere)
    buffered = FioJob(jobs=(FioSection("p", {**own, "rw": "read", "direct": 0}),))
    with pytest.raises(UnsafeTargetError, match="as the target set it up"):
        grant.check_job(buffered)
    for key in sorted(PATH_OR_COMMAND_OPTIONS - {"filename", "ioengine", "write_bw_log", "write_lat_log",
                                                 "write_iops_log", "write_hist_log", "hugepage-size"}):
        job = FioJob(jobs=(FioSection("p", {**own, "rw": "read", key: "x"}),))
        with pytest.raises(UnsafeTargetError, match=f"sets {re.escape(key)}=x"):
            grant.check_job(job)
    for value in ("/tmp/log", "../log", ".hidden"):
        job = FioJob(jobs=(FioSection("p", {**own, "rw": "read", "write_bw_log": value}),))
        with pytest.raises(UnsafeTargetError, match="outside the point's directory"):
            grant.check_job(job)
    grant.check_job(FioJob(jobs=(FioSection("p", {**own, "rw": "read", "write_bw_log": "series"}),)))
    null = parse_target("null")
    with pytest.raises(UnsafeTargetError, match="as the target set it up"):
        _grant(null, True).check_job(FioJob(jobs=(FioSection("p", {"ioengine": "null", "size": 1 << 20,
                                                                   "filename": "/dev/sda"}),)))
    with pytest.raises(UnsafeTargetError, match="as the target set it up"):
        _grant(null, True).check_job(FioJob(jobs=(FioSection("p", {"ioengine": "libaio", "size": 1 << 20}),)))


def test_purge_and_layout_need_an_authorized_run(tmp_path: Path) -> None:
    target = parse_target(f"file:{tmp_path / 'new.dat'}?size=4MiB")
    with pytest.raises(UnsafeTargetError, match=r"refusing to purge .*not authorized to write"):
        _grant(target, False).require(f"purge {target.name}")
    _grant(target, True).require("purge")


def test_a_file_that_shrank_is_not_laid_out_by_a_read_only_run(tmp_path: Path) -> None:
    target = existing_file(tmp_path)
    (tmp_path / "scratch.dat").write_bytes(b"x")
    with pytest.raises(UnsafeTargetError, match="fio would write to lay it out"):
        _grant(target, False).check_job(_job(target, "randread"))


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_someone_elses_file_needs_consent_and_ssdlabs_own_does_not(tmp_path: Path) -> None:
    mine = parse_target(f"file:{tmp_path / 'mine.dat'}?size=4MiB")
    mine.prepare(True)  # created by ssdlab: tagged
    theirs = tmp_path / "theirs.dat"
    theirs.write_bytes(random.Random(166).randbytes(4 << 20))  # fixed: random bytes may carry a signature
    decision = safety.WriteDecision("point x: rw=write writes")
    quiet = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    again = parse_target(f"file:{tmp_path / 'mine.dat'}")
    assert safety.authorize(again, decision, destructive=False, yes=False, console=quiet).writes
    target = parse_target(f"file:{theirs}")
    assert target.needs_write_consent()
    assert "not created by ssdlab" in target.destroys()
    with pytest.raises(UnsafeTargetError, match=r"needs confirmation: run interactively, or pass --yes"):
        safety.authorize(target, decision, destructive=False, yes=False, console=quiet)
    assert safety.authorize(target, decision, destructive=False, yes=True, console=quiet).writes
    err = _Tty()
    with pytest.raises(UnsafeTargetError, match=r"does not match 'theirs\.dat'"):
        safety.authorize(target, decision, destructive=False, yes=False,
                         console=Env(stdout=io.StringIO(), stderr=err, stdin=_Tty("mine.dat\n")))
    assert "Type the file name (theirs.dat) to confirm" in err.getvalue()
    assert safety.authorize(target, decision, destructive=False, yes=False,
                            console=Env(stdout=io.StringIO(), stderr=_Tty(), stdin=_Tty("theirs.dat\n"))).writes
    # a read-only run needs nothing, and an empty file holds nothing to destroy
    assert not safety.authorize(target, safety.WriteDecision(), destructive=False, yes=False, console=quiet).writes
    (tmp_path / "empty.dat").touch()
    assert not parse_target(f"file:{tmp_path / 'empty.dat'}?size=4MiB").needs_write_consent()


def test_a_file_ssdlab_did_not_create_is_not_taken_for_its_own(tmp_path: Path) -> None:
    mine = parse_target(f"file:{tmp_path / 'mine.dat'}?size=4MiB")
    mine.prepare(True)
    (tmp_path / "mine.dat").unlink()  # someone else's file under the same name
    (tmp_path / "mine.dat").write_bytes(random.Random(198).randbytes(4 << 20))
    assert parse_target(f"file:{tmp_path / 'mine.dat'}").needs_write_consent()


# ------------------------------------------------------------------ property: nothing writes unauthorized

_SAFE_OPTIONS = sorted(SUITE_FILE_OPTIONS)
_ANY_OPTIONS = _SAFE_OPTIONS + sorted(PATH_OR_COMMAND_OPTIONS) + ["rw", "size", "offset", "direct", "runtime"]


@st.composite
def suite_files(draw: st.DrawFn) -> tuple[str, bool]:
    """(TOML text, whether every option key in it is on the allow-list)."""
    allowed = True

    def options() -> str:
        nonlocal allowed
        keys = draw(st.lists(st.sampled_from(_ANY_OPTIONS), max_size=3, unique=True))
        allowed = allowed and all(k in SUITE_FILE_OPTIONS for k in keys)
        return "{ " + ", ".join(f'"{k}" = "{draw(st.sampled_from(["1", "0", "/dev/sda", "randwrite"]))}"'
                                for k in keys) + " }"

    lines = ['name = "random"']
    for i in range(draw(st.integers(0, 2))):
        lines += ["[[phase]]", f'name = "ph{i}"', f'rw = "{draw(st.sampled_from(RW_VALUES))}"', 'bs = "4k"',
                  "runtime_s = 1"]
        if draw(st.booleans()):
            lines.append(f"rwmixread = {draw(st.sampled_from([0, 50, 100]))}")
        if draw(st.booleans()):
            lines.append(f"options = {options()}")
    for i in range(draw(st.integers(1, 2))):
        rws = draw(st.lists(st.sampled_from(RW_VALUES), min_size=1, max_size=3, unique=True))
        lines += ["[[matrix]]", f'name = "m{i}"', "rw = [" + ", ".join(f'"{r}"' for r in rws) + "]",
                  'bs = ["4k", "8k"]']
        if draw(st.booleans()):
            mixes = draw(st.lists(st.sampled_from([0, 30, 100]), min_size=1, max_size=2, unique=True))
            lines.append(f"rwmixread = [{', '.join(str(v) for v in mixes)}]")
        if draw(st.booleans()):
            lines.append(f"options = {options()}")
    return "\n".join(lines) + "\n", allowed


overrides = st.lists(st.sampled_from([
    "rw=randwrite", "rw=randread", "rw=read,randtrim", "rw=randrw", "rwmixread=100", "rwmixread=0,100",
    "bs=4k,16k", "iodepth=1..4", "numjobs=2",
]), max_size=3, unique_by=lambda s: s.split("=")[0])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=suite_files(), axis=overrides)
def test_random_suite_files_never_get_a_writing_job_past_an_unauthorized_run(
        tmp_path: Path, doc: tuple[str, bool], axis: list[str]) -> None:
    text, allowed = doc
    target = existing_file(tmp_path)
    if not allowed:  # a file with any option outside the allow-list is refused, naming the file
        refused = r"^random\.toml: (fio option \S+|bad fio option name \S+) in (matrix|phase) \d"
        with pytest.raises(UsageError, match=refused):
            load_toml_text(text, "random.toml")
        return
    suite = load_toml_text(text, "random.toml")
    ctx = ctx_for(target, axis=axis or None)
    try:
        decision = safety.decide(suite, ctx, target)  # type: ignore[arg-type]
    except UsageError:
        return  # an override that names an axis no matrix sweeps
    unauthorized = safety.WriteGrant(target, writes=False)
    granted = safety.WriteGrant(target, writes=decision.writes)  # what authorize() returns after consent
    for planned in suite.plan(ctx):  # type: ignore[arg-type]
        job = point_job(apply_common(ctx, planned), target)  # type: ignore[arg-type]
        granted.check_job(job)  # the decision never under-states what a job does
        for section in job.jobs:
            assert section.options["filename"] == target.fio_options()["filename"]
            assert not set(section.options) & (PATH_OR_COMMAND_OPTIONS - {"filename", "ioengine"} - SSDLAB_LOG_OPTIONS)
            assert all("/" not in str(v) for k, v in section.options.items() if k in SSDLAB_LOG_OPTIONS)
        if job.writes():
            assert decision.writes
            with pytest.raises(UnsafeTargetError):
                unauthorized.check_job(job)
        else:
            unauthorized.check_job(job)


# ------------------------------------------------------------------ what counts as a signature

@pytest.mark.parametrize(("export", "found"), [
    # an empty partition: blkid describes only its entry in the partition table
    ("DEVNAME=/dev/loop0p1\nPART_ENTRY_SCHEME=dos\nPART_ENTRY_TYPE=0x83\nPART_ENTRY_NUMBER=1\n"
     "PART_ENTRY_OFFSET=2048\nPART_ENTRY_SIZE=63488\nPART_ENTRY_DISK=7:0\n", ""),
    ("DEVNAME=/dev/loop0p1\nUUID=1234\nTYPE=ext4\nUSAGE=filesystem\nPART_ENTRY_SCHEME=dos\n", "ext4 signature"),
    ("DEVNAME=/dev/loop0\nPTUUID=abcd\nPTTYPE=dos\n", "dos partition table"),
    ("DEVNAME=/dev/loop0\nUSAGE=raid\n", "raid signature"),
    ("DEVNAME=/dev/loop0\nSOMETHING=else\n", "unknown signature"),
])
def test_blkid_partition_entry_keys_describe_the_table_not_the_contents(export: str, found: str) -> None:
    from ssdlab.targets.sysfs import _blkid_signature

    assert _blkid_signature(export) == found
