"""Attempts to make ssdlab write what the write gate did not clear, on real loop devices: every device (or part of
one) a test does not mean to write is byte-for-byte intact afterwards (sha256 of its backing file before and
after). Needs root, util-linux and fio; every loop device, mount and process made here is removed afterwards.
The file-only cases are in tests/unit/test_gate_attacks.py."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LoopFactory, MiB, one_error, run_cli, writer
from ssdlab import safety
from ssdlab.cli import Env
from ssdlab.errors import ExitCode, UnsafeTargetError
from ssdlab.fio import runner
from ssdlab.fio.executor import point_job
from ssdlab.results.model import TestPoint, Workload
from ssdlab.run.target import parse_target
from ssdlab.targets.base import Target

pytestmark = [pytest.mark.integration, pytest.mark.root]


WRITE = TestPoint(id="p", label="p", workload=Workload(rw="randwrite", bs=4096, runtime_s=0.5))


# --- --capacity is the span consent names: --footprint/--misalign never push I/O past it --------------------------

def test_act_with_misalign_never_writes_past_capacity(loops: LoopFactory, tmp_path: Path) -> None:
    """ACT's streams used --footprint as their size and --misalign as their offset: on a device tested with
    --capacity they wrote up to --misalign bytes past the span the consent line named."""
    dev = loops.create("act", 64 * MiB)
    tail = dev.digest(32 * MiB)
    out = tmp_path / "out"
    res = run_cli("run", "act", "--target", dev.dev, "--capacity", "32MiB", "--footprint", "100%", "--misalign",
                  "8MiB", "--duration", "2", "--slice", "2", "--service-threads", "2", "--yes", "--out", out,
                  "--quiet", "--no-report")
    assert res.code in (ExitCode.OK, ExitCode.NEGATIVE), res.err
    assert "the first 32 MiB" in res.err  # what the consent line said would be destroyed
    assert dev.digest(32 * MiB) == tail  # nothing past --capacity was written
    jobs = [j.read_text(encoding="utf-8") for j in out.glob("points/act-1x-*/job.fio")]
    assert jobs
    assert all("offset=8388608" in j and "size=25165824" in j for j in jobs)  # 8 MiB shift, 24 MiB left


# --- a partition is part of its disk: what uses the whole disk uses the partition's blocks ------------------------

def test_a_partition_of_a_disk_backing_a_mounted_loop_is_refused(loops: LoopFactory, tmp_path: Path) -> None:
    """A loop device over the whole disk (mounted) does not claim the disk exclusively, and only the partition
    itself was checked: writing the partition overwrote the mounted filesystem's blocks."""
    if not shutil.which("partx"):
        pytest.skip("partx not installed (util-linux)")
    disk = loops.create("parted", 64 * MiB, partition=True)
    part = disk.partitions()[0]
    upper = loops.over(disk)
    loops.mkfs(upper)
    loops.mount(upper)
    before = disk.digest()
    out = tmp_path / "out"
    res = run_cli("run", writer(tmp_path), "--target", part, "--yes", "--destructive", "--out", out, traceback=False)
    one_error(res, ExitCode.UNSAFE, f"refusing to write to {part}: {disk.dev} (the disk {part} is a partition of) "
                                    f"is the backing device of {upper.dev} (mounted on {upper.mountpoint})",
              "no flag overrides this")
    assert not out.exists()
    assert disk.digest() == before


# --- a device number is not a device: the disk behind it is checked, and held while fio runs ------------------------

def _attach_at(dev: str, backing: Path) -> None:
    """Attach `backing` as the loop device `dev` (which must be free), or skip when another process took it."""
    res = subprocess.run(["losetup", dev, str(backing)], capture_output=True, text=True, check=False, timeout=30)
    if res.returncode != 0:
        pytest.skip(f"{dev} was taken by another process meanwhile: {res.stderr.strip()}")


def _signed_image(tmp_path: Path, name: str = "signed.img") -> Path:
    path = tmp_path / name
    with path.open("wb") as fh:
        fh.truncate(32 * MiB)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(path)], check=True, capture_output=True, timeout=60)
    return path


def _writing_grant(target: Target) -> safety.WriteGrant:
    console = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    return safety.authorize(target, safety.WriteDecision("point p: rw=randwrite writes"), destructive=False,
                            yes=True, console=console)


def _digest(path: Path) -> str:
    os.sync()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_loop_device_attached_to_another_file_since_consent_is_refused(loops: LoopFactory, tmp_path: Path) -> None:
    """The gate compared the device number only: /dev/loopN detached and attached to a file carrying ext4 (as
    a user of group disk, or udisks, may do) passed, and fio wrote the filesystem."""
    if not shutil.which("mkfs.ext4"):
        pytest.skip("mkfs.ext4 not installed (apt-get install e2fsprogs)")
    blank = loops.create("blank", 32 * MiB)
    signed = _signed_image(tmp_path)
    target = parse_target(blank.dev)
    grant = _writing_grant(target)
    job = point_job(WRITE, target)
    subprocess.run(["losetup", "-d", blank.dev], check=True, capture_output=True, timeout=30)
    _attach_at(blank.dev, signed)  # the same number, another disk (its sequence number is new)
    before = _digest(signed)
    with pytest.raises(UnsafeTargetError, match=rf"{blank.dev} is still device \d+:\d+, but not the disk the run was "
                                                r"set up for \(disk sequence number \d+ then, \d+ now"):
        runner.run_job(job, tmp_path / "point", gate=grant)
    assert not (tmp_path / "point").exists()
    assert _digest(signed) == before


def test_fio_opens_the_device_the_gate_checked_even_when_it_is_swapped_right_after(loops: LoopFactory,
                                                                                  tmp_path: Path) -> None:
    """Between the gate's last check and fio's open (fio starting up) the loop device was detached and attached to
    another file: fio wrote that one. The gate now holds the device open from its check until fio ends, so the
    detach waits for the last close and nothing else can be attached under that number meanwhile."""
    if not shutil.which("mkfs.ext4"):
        pytest.skip("mkfs.ext4 not installed (apt-get install e2fsprogs)")
    blank = loops.create("blank", 32 * MiB)
    signed = _signed_image(tmp_path)
    before, blank_before = _digest(signed), blank.digest()
    fio = tmp_path / "fio"  # fio as a racing attacker would have it: the swap happens after the gate's check
    fio.write_text(f"#!/bin/sh\nlosetup -d {blank.dev}\nlosetup {blank.dev} {signed} 2>/dev/null\n"
                   f'exec {runner.fio_binary()} "$@"\n', encoding="utf-8")
    fio.chmod(0o755)
    target = parse_target(blank.dev)
    runner.run_job(point_job(WRITE, target), tmp_path / "point", gate=_writing_grant(target), binary=str(fio))
    try:
        assert _digest(signed) == before  # never attached, never written
        assert blank.digest() != blank_before  # fio wrote the device consent was given for
    finally:
        attached = Path(f"/sys/block/{Path(blank.dev).name}/loop/backing_file")
        now = attached.read_text(encoding="utf-8").strip() if attached.exists() else ""
        if now not in (str(blank.backing), str(signed)):  # detached when fio and the gate closed it: not ours now
            loops.made.remove(blank)


# --- a path another user can change: a link planted after the last check would send fio's writes elsewhere ---------

def test_a_file_target_in_a_directory_another_user_owns_is_refused(loops: LoopFactory, tmp_path: Path) -> None:
    """root runs on a file in a directory another user owns; between the gate's check and fio's open that user
    replaces the file with a link to a device: fio followed it and wrote the device."""
    decoy = loops.create("decoy", 32 * MiB, ext4=True)
    before = decoy.digest()
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, 65534, 65534)  # nobody's directory
    path = home / "t.dat"
    with path.open("wb") as fh:
        fh.truncate(8 * MiB)
    res = run_cli("run", writer(tmp_path), "--target", f"file:{path}", "--yes", "--out", tmp_path / "out",
                  traceback=False)
    one_error(res, ExitCode.UNSAFE, f"refusing to write to {path}: another user can change what {path} names "
                                    f"({home} belongs to", "uid 65534)", "no flag overrides this")
    assert not (tmp_path / "out").exists()
    fio = tmp_path / "fio"  # the other user's move, made while fio starts
    fio.write_text(f"#!/bin/sh\nrm -f {path}\nln -s {decoy.dev} {path}\nexec {runner.fio_binary()} \"$@\"\n",
                   encoding="utf-8")
    fio.chmod(0o755)
    target = parse_target(f"file:{path}")
    with pytest.raises(UnsafeTargetError, match="another user can change what"):
        runner.run_job(point_job(WRITE, target), tmp_path / "point", gate=safety.WriteGrant(target, writes=True),
                       binary=str(fio))
    assert decoy.digest() == before
    assert path.is_file()
    assert not path.is_symlink()


# --- a device another program writes to without claiming it -----------------------------------------------------

def _holding(dev: str, flags: str) -> subprocess.Popen[str]:
    """A process holding `dev` open (flags 'O_RDWR' or 'O_RDONLY') until it is stopped; it says when it holds it."""
    code = f"import os, sys, time\nfd = os.open({dev!r}, os.{flags})\nprint('open', flush=True)\ntime.sleep(120)\n"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "open"
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


def test_a_device_another_program_holds_open_for_writing_is_refused(loops: LoopFactory, tmp_path: Path) -> None:
    """A program using the raw device (a virtual machine's disk, a database) opens it without an exclusive claim:
    mounts, holders and the exclusive open all passed, and ssdlab wrote under it."""
    dev = loops.create("used", 32 * MiB)
    before = dev.digest()
    proc = _holding(dev.dev, "O_RDWR")
    try:
        res = run_cli("run", writer(tmp_path), "--target", dev.dev, "--yes", "--destructive", "--out",
                      tmp_path / "out", traceback=False)
    finally:
        _stop(proc)
    one_error(res, ExitCode.UNSAFE, f"{dev.dev} is open for writing by process {proc.pid} (python",
              "no flag overrides this")
    assert not (tmp_path / "out").exists()
    assert dev.digest() == before
    proc = _holding(dev.dev, "O_RDONLY")  # a reader (a monitor, blkid) does not make it in use
    try:
        assert run_cli("plan", writer(tmp_path), "--target", dev.dev, traceback=False).code == 0
    finally:
        _stop(proc)
