"""Issue 31 on real loop devices: what the write gate checks is exactly what fio opens. A target is resolved once
to its identity (canonical absolute path, device number), and every device these tests do not mean to write
is byte-for-byte intact afterwards (sha256 of its backing file before and after).

Needs root, util-linux, e2fsprogs and fio; the NBD case also nbdkit. Every loop device, mount and server made
here is removed afterwards.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Loop, LoopFactory, MiB, one_error, run_cli, writer
from ssdlab import safety
from ssdlab.cli import Env
from ssdlab.errors import ExitCode, UnsafeTargetError
from ssdlab.fio import runner
from ssdlab.fio.executor import point_job
from ssdlab.results.model import TestPoint, Workload
from ssdlab.run.target import parse_target

pytestmark = [pytest.mark.integration, pytest.mark.root]


def job_filenames(out: Path) -> set[str]:
    return {ln.split("=", 1)[1] for job in out.glob("points/*/job.fio")
            for ln in job.read_text(encoding="utf-8").splitlines() if ln.startswith("filename=")}


# --- a relative target is resolved from where ssdlab was started, never from the point's directory --------

def _relative_layout(tmp_path: Path, blank: Loop, decoy: Loop) -> tuple[Path, Path]:
    """cwd tmp/a/b/c, where ../../../lnk is the blank device; a link of the same name three levels above the
    point directories (tmp/x/lnk, with --out tmp/x/run) names the decoy. Returns (cwd, out)."""
    cwd = tmp_path / "a" / "b" / "c"
    cwd.mkdir(parents=True)
    (tmp_path / "lnk").symlink_to(blank.dev)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "lnk").symlink_to(decoy.dev)
    return cwd, tmp_path / "x" / "run"


@pytest.mark.parametrize("decoy_kind", ["signed", "mounted"])
def test_a_relative_link_drives_the_device_it_names_from_the_working_directory(
        loops: LoopFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decoy_kind: str) -> None:
    blank = loops.create("blank", 32 * MiB)
    decoy = loops.create(decoy_kind, 64 * MiB, ext4=True, mount=decoy_kind == "mounted")
    decoy_before, blank_before = decoy.digest(), blank.digest()
    cwd, out = _relative_layout(tmp_path, blank, decoy)
    monkeypatch.chdir(cwd)
    res = run_cli("run", writer(tmp_path), "--target", "../../../lnk", "--yes", "--out", out, "--no-report",
                  "--quiet")
    assert res.code == 0, res.err
    assert f"WARNING: this run will destroy ALL DATA on {blank.dev} (given as ../../../lnk;" in res.err
    assert job_filenames(out) == {blank.dev}  # absolute: fio in the point directory opens the same device
    assert decoy.digest() == decoy_before  # the decoy (ext4, or a mounted filesystem) was never opened
    assert blank.digest() != blank_before  # the device the consent named was the one written
    if decoy.mountpoint is not None:
        assert os.path.ismount(decoy.mountpoint)


def test_dot_slash_link_measures_the_device_not_a_file_in_the_point_directory(
        loops: LoopFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blank = loops.create("blank", 32 * MiB)
    before = blank.digest()
    (tmp_path / "lnk").symlink_to(blank.dev)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    res = run_cli("run", writer(tmp_path), "--target", "./lnk", "--yes", "--out", out, "--no-report", "--quiet")
    assert res.code == 0, res.err
    assert job_filenames(out) == {blank.dev}
    assert not [p for p in out.rglob("lnk")]  # fio created no regular file named lnk anywhere
    assert blank.digest() != before
    run = (out / "run.json").read_text(encoding="utf-8")
    assert f'"name": "{blank.dev}"' in run
    assert '"given": "./lnk"' in run
    assert f'"target_specs": [\n   "{blank.dev}"\n  ]' in run  # resume opens the device, from any directory


# --- at the fio boundary, the path must still be the device consent was given for -------------------------

def test_the_boundary_refuses_a_node_that_names_another_device_since_consent(loops: LoopFactory,
                                                                            tmp_path: Path) -> None:
    blank = loops.create("blank", 32 * MiB)
    signed = loops.create("signed", 32 * MiB, ext4=True)
    node = tmp_path / "disk"
    os.mknod(node, stat.S_IFBLK | 0o600, Path(blank.dev).stat().st_rdev)
    target = parse_target(str(node))
    grant = safety.authorize(target, safety.WriteDecision("point p: rw=randwrite writes"), destructive=False,
                             yes=True, console=Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO()))
    job = point_job(TestPoint(id="p", label="p", workload=Workload(rw="randwrite", bs=4096, runtime_s=0.5)), target)
    node.unlink()  # the same name, now another device: the signed one
    os.mknod(node, stat.S_IFBLK | 0o600, Path(signed.dev).stat().st_rdev)
    before = signed.digest()
    rdev = Path(signed.dev).stat().st_rdev
    with pytest.raises(UnsafeTargetError, match=f"{node} is now device {os.major(rdev)}:{os.minor(rdev)}, not the "
                                                "device .* the run was set up for"):
        runner.run_job(job, tmp_path / "point", gate=grant)
    assert not (tmp_path / "point").exists()
    assert signed.digest() == before


# --- one device under two names is one target --------------------------------------------------------------

def test_one_device_under_two_names_is_refused(loops: LoopFactory, tmp_path: Path) -> None:
    dev = loops.create("twice", 32 * MiB)
    before = dev.digest()
    link = tmp_path / "alias"
    link.symlink_to(dev.dev)
    node = tmp_path / "node"
    os.mknod(node, stat.S_IFBLK | 0o600, Path(dev.dev).stat().st_rdev)
    for alias in (link, node):
        res = run_cli("run", writer(tmp_path), "--target", dev.dev, "--target", alias, "--yes",
                      "--out", tmp_path / "out", traceback=False)
        one_error(res, ExitCode.USAGE, f"--target {dev.dev} and --target", "are the same device")
        assert not (tmp_path / "out").exists()
    assert dev.digest() == before


def test_a_partition_and_its_disk_are_refused_together(loops: LoopFactory, tmp_path: Path) -> None:
    if not shutil.which("partx"):
        pytest.skip("partx not installed (util-linux)")
    disk = loops.create("parted", 32 * MiB, partition=True)
    part = disk.partitions()[0]
    before = disk.digest()
    res = run_cli("run", writer(tmp_path), "--target", disk.dev, "--target", part, "--yes", "--destructive",
                  "--out", tmp_path / "out", traceback=False)
    one_error(res, ExitCode.USAGE, f"--target {part} is a partition of --target {disk.dev}")
    assert disk.digest() == before


# --- an NBD export of a signed device needs --destructive, as the device itself does ---------------------------

@pytest.fixture
def nbd_over(tmp_path: Path) -> Iterator[tuple[LoopFactory, Loop, str]]:
    """A signed (ext4) loop device exported by an nbdkit someone else runs, on a Unix socket."""
    if not shutil.which("nbdkit"):
        pytest.skip("nbdkit not installed (apt-get install nbdkit)")
    if not runner.engine_available("nbd"):
        pytest.skip("this fio has no nbd engine")
    factory = LoopFactory(tmp_path)
    proc = None
    try:
        dev = factory.create("exported", 32 * MiB, ext4=True)
        sock = tmp_path / "nbd.sock"
        proc = subprocess.Popen(["nbdkit", "--foreground", "--exit-with-parent", "--unix", str(sock), "file",
                                 f"file={dev.dev}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(500):
            if sock.exists():
                break
            time.sleep(0.01)
        yield factory, dev, f"nbd+unix:///?socket={sock}"
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
        factory.cleanup()


def test_an_nbd_export_of_a_signed_device_needs_destructive(nbd_over: tuple[LoopFactory, Loop, str],
                                                            tmp_path: Path) -> None:
    _, dev, uri = nbd_over
    before = dev.digest()
    for flags in ([], ["--yes"]):
        res = run_cli("run", writer(tmp_path), "--target", uri, "--out", tmp_path / "out", *flags, traceback=False)
        one_error(res, ExitCode.UNSAFE, f"refusing to write to {uri}", "is not blank: it carries an existing ext4 "
                                        "signature", "--destructive")
        assert not (tmp_path / "out").exists()
    plan = run_cli("plan", writer(tmp_path), "--target", uri, traceback=False)
    assert plan.code == ExitCode.UNSAFE
    assert "ext4 signature (needs --destructive)" in plan.out
    assert dev.digest() == before


# --- --force never turns a device node into a regular file -----------------------------------------------------

def test_force_does_not_replace_a_device_node(loops: LoopFactory, tmp_path: Path) -> None:
    from stored_runs import SCHEMA1

    dev = loops.create("junit", 8 * MiB)
    before = dev.digest()
    node = tmp_path / "loopnode"  # a node of the test's loop device (as `report --junit /dev/loopN --force`)
    os.mknod(node, stat.S_IFBLK | 0o600, Path(dev.dev).stat().st_rdev)
    run_dir = Path(shutil.copytree(SCHEMA1 / "quick-file", tmp_path / "run"))
    for path in (node, Path(dev.dev)):
        res = run_cli("report", run_dir, "--junit", path, "--force", traceback=False)
        one_error(res, ExitCode.USAGE, f"--junit {path} is a block device: ssdlab replaces only regular files")
        assert stat.S_ISBLK(path.lstat().st_mode)
    assert dev.digest() == before
