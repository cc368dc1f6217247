"""Issue 10's attacks on real loop devices: each is refused (exit code, message) and the device's checksum is
unchanged. Needs root, util-linux and e2fsprogs; every loop device and mount is removed afterwards.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import Loop, LoopFactory, MiB, one_error, run_cli
from ssdlab import safety
from ssdlab.cli import Env
from ssdlab.errors import ExitCode, UnsafeTargetError
from ssdlab.fio import runner
from ssdlab.fio.job import build_job
from ssdlab.results.model import TestPoint, Workload
from ssdlab.run.target import parse_target

pytestmark = [pytest.mark.integration, pytest.mark.root]

READ_ONLY_SUITE = """name = "reader"
runtime_s = 0.5
[[matrix]]
name = "rd"
rw = "randread"
bs = "4k"
"""


def suite_file(tmp_path: Path, extra: str = "", name: str = "reader.toml") -> Path:
    path = tmp_path / name
    path.write_text(READ_ONLY_SUITE + extra, encoding="utf-8")
    return path


def blkid_type(dev: str) -> str:
    res = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", dev], capture_output=True, text=True,
                         check=False, timeout=30)
    return res.stdout.strip()


# --- 1. a read-only suite turned into a writer by --axis: decided from the expanded jobs ----------------

def test_axis_rw_randwrite_on_a_read_only_suite_needs_consent(loops: LoopFactory, tmp_path: Path) -> None:
    clean = loops.create("clean", 32 * MiB)
    before = clean.digest()
    out = tmp_path / "out"
    res = run_cli("run", suite_file(tmp_path), "--target", clean.dev, "--axis", "rw=randwrite", "--out", out,
                  traceback=False)
    one_error(res, ExitCode.UNSAFE, f"writing to {clean.dev} needs confirmation", "--yes")
    assert f"WARNING: this run will destroy ALL DATA on {clean.dev}" in res.err
    assert not out.exists()
    assert clean.digest() == before
    plan = run_cli("plan", suite_file(tmp_path), "--target", clean.dev, "--axis", "rw=randwrite")
    assert plan.code == 0, plan.err
    assert "writes: point 001-rd: rw=randwrite writes" in plan.out
    assert f"will overwrite: ALL DATA on {clean.dev}" in plan.out


def test_axis_rw_randwrite_on_a_mounted_device_is_refused_and_records_nothing(loops: LoopFactory,
                                                                            tmp_path: Path) -> None:
    mounted = loops.create("mounted", 64 * MiB, mount=True)
    before = mounted.digest()
    out = tmp_path / "out"
    for flags in ([], ["--yes", "--destructive"]):
        res = run_cli("run", suite_file(tmp_path), "--target", mounted.dev, "--axis", "rw=randwrite", "--out", out,
                      *flags, traceback=False)
        one_error(res, ExitCode.UNSAFE, f"refusing to write to {mounted.dev}", f"is mounted on {mounted.mountpoint}")
        assert not out.exists()  # no point ran, so none was recorded "ok" with zero bytes
    assert mounted.digest() == before


# --- 2. a suite file's options cannot redirect fio or run commands -------------------------------------

def test_options_filename_cannot_redirect_a_file_run_to_a_device(loops: LoopFactory, tmp_path: Path) -> None:
    victim = loops.create("victim", 32 * MiB, ext4=True)
    before = victim.digest()
    decoy = tmp_path / "decoy.dat"
    path = suite_file(tmp_path, f'options = {{ filename = "{victim.dev}" }}\n')
    res = run_cli("run", path, "--target", f"file:{decoy}?size=8MiB", "--axis", "rw=randwrite", "--yes",
                  "--out", tmp_path / "out", traceback=False)
    line = one_error(res, ExitCode.USAGE, str(path), "fio option filename in matrix 1 is not allowed")
    assert "docs/suites.md" in line
    assert not decoy.exists()
    assert not (tmp_path / "out").exists()
    assert victim.digest() == before
    assert blkid_type(victim.dev) == "ext4"


# --- 3. a loop device backing another (mounted) loop device --------------------------------------------

def test_a_device_backing_a_mounted_loop_is_refused_even_with_destructive(loops: LoopFactory,
                                                                         tmp_path: Path) -> None:
    lower = loops.create("lower", 64 * MiB)
    upper = loops.over(lower)
    loops.mkfs(upper)
    loops.mount(upper)
    before = lower.digest()
    out = tmp_path / "out"
    res = run_cli("run", "four-corners", "--target", lower.dev, "--runtime", "0.5", "--destructive", "--yes",
                  "--out", out, traceback=False)
    one_error(res, ExitCode.UNSAFE, f"refusing to write to {lower.dev}",
              f"is the backing device of {upper.dev} (mounted on {upper.mountpoint})", "no flag overrides this")
    assert not out.exists()
    plan = run_cli("plan", "four-corners", "--target", lower.dev, "--destructive", traceback=False)
    assert plan.code == ExitCode.UNSAFE
    assert f"is the backing device of {upper.dev}" in plan.out
    assert lower.digest() == before


def test_a_loop_sharing_its_backing_file_with_a_mounted_loop_is_refused(loops: LoopFactory, tmp_path: Path) -> None:
    mounted = loops.create("shared", 64 * MiB, mount=True)
    twin = loops.sharing(mounted)
    before = mounted.digest()
    res = run_cli("run", "four-corners", "--target", twin.dev, "--runtime", "0.5", "--destructive", "--yes",
                  "--out", tmp_path / "out", traceback=False)
    one_error(res, ExitCode.UNSAFE, f"shares its backing file {mounted.backing} with {mounted.dev} "
                                    f"(mounted on {mounted.mountpoint})")
    # the backing file itself, as a file target
    res = run_cli("run", "four-corners", "--target", f"file:{mounted.backing}", "--runtime", "0.5", "--yes",
                  "--destructive", "--out", tmp_path / "out", traceback=False)
    one_error(res, ExitCode.UNSAFE, f"is the backing file of {mounted.dev} (mounted on {mounted.mountpoint})")
    assert mounted.digest() == before


def test_a_device_claimed_exclusively_by_another_program_is_refused(loops: LoopFactory, tmp_path: Path) -> None:
    clean = loops.create("claimed", 32 * MiB)
    before = clean.digest()
    fd = os.open(clean.dev, os.O_RDONLY | os.O_EXCL)
    try:
        res = run_cli("run", "four-corners", "--target", clean.dev, "--runtime", "0.5", "--yes",
                      "--out", tmp_path / "out", traceback=False)
    finally:
        os.close(fd)
    one_error(res, ExitCode.UNSAFE, f"{clean.dev} is claimed by another user",
              "the kernel refused an exclusive open")
    assert clean.digest() == before


# --- 4. a read-only device is refused at plan time, before any point runs -------------------------------

def test_a_read_only_device_is_refused_before_any_point(loops: LoopFactory, tmp_path: Path) -> None:
    ro = loops.create("ro", 32 * MiB, read_only=True)
    before = ro.digest()
    out = tmp_path / "out"
    res = run_cli("run", "quick", "--target", ro.dev, "--runtime", "0.5", "--yes", "--out", out, traceback=False)
    one_error(res, ExitCode.UNSAFE, f"refusing to write to {ro.dev}", "is read-only (sysfs ro=1")
    assert not out.exists()  # no read point ran first
    plan = run_cli("plan", "quick", "--target", ro.dev, traceback=False)
    assert plan.code == ExitCode.UNSAFE
    assert "ALL DATA" not in plan.out
    assert "is read-only" in plan.out
    # reading it is fine
    res = run_cli("run", "quick-read", "--target", ro.dev, "--runtime", "0.5", "--out", out, "--no-report")
    assert res.code == 0, res.err
    assert ro.digest() == before


# --- 6. an empty partition is blank ---------------------------------------------------------------------

def test_an_empty_partition_is_blank_and_its_disk_has_a_partition_table(loops: LoopFactory, tmp_path: Path) -> None:
    if not shutil.which("partx"):
        pytest.skip("partx not installed (util-linux)")
    disk = loops.create("parted", 32 * MiB, partition=True)
    part = disk.partitions()[0]
    res = run_cli("info", part)
    assert res.code == 0, res.err
    assert "writable:  yes" in res.out
    assert "unknown" not in res.out
    res = run_cli("info", disk.dev)
    assert f"writable:  NO: {disk.dev} has partitions: {part} (override with --destructive)" in res.out
    assert f"writable:  NO: {disk.dev} is not blank: it carries an existing dos partition table" in res.out
    # a mounted partition blocks the whole disk, and the refusal names the mount (not the kernel's claim)
    loops.mkfs(Loop(dev=part, backing=disk.backing))
    mnt = Loop(dev=part, backing=disk.backing)
    loops.mount(mnt)
    try:
        res = run_cli("run", "four-corners", "--target", disk.dev, "--destructive", "--yes", "--runtime", "0.5",
                      "--out", tmp_path / "out", traceback=False)
        one_error(res, ExitCode.UNSAFE, f"refusing to write to {disk.dev}: {part} is mounted on {mnt.mountpoint}")
        assert not (tmp_path / "out").exists()
    finally:
        subprocess.run(["umount", str(mnt.mountpoint)], capture_output=True, check=False, timeout=60)


# --- 7. the fio boundary re-checks a device that became busy after consent -------------------------------

def test_the_boundary_refuses_a_device_mounted_after_consent(loops: LoopFactory, tmp_path: Path) -> None:
    dev = loops.create("late", 64 * MiB, ext4=True)
    target = parse_target(dev.dev)
    decision = safety.WriteDecision("point p: rw=randwrite writes")
    grant = safety.authorize(target, decision, destructive=True, yes=True,
                             console=Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO()))
    loops.mount(dev)
    before = dev.digest()
    job = build_job(TestPoint(id="p", label="p", workload=Workload(rw="randwrite", bs=4096, runtime_s=0.5)),
                    target.fio_options())
    with pytest.raises(UnsafeTargetError, match=f"is mounted on {dev.mountpoint} \\(found just before writing\\)"):
        runner.run_job(job, tmp_path / "point", gate=grant)
    assert not (tmp_path / "point").exists()
    assert dev.digest() == before


def test_loops_made_here_are_gone_afterwards(loops: LoopFactory) -> None:
    """Sanity for the fixture: a device made and cleaned up leaves nothing attached to its backing file."""
    loop: Loop = loops.create("probe", 8 * MiB, read_only=True)
    loops.cleanup()
    listing = subprocess.run(["losetup", "-j", str(loop.backing)], capture_output=True, text=True, check=False)
    assert listing.stdout.strip() == ""
