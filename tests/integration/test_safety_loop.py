"""Write safety on real block devices: loop devices that are mounted, carry ext4, or are clean.

Needs root, util-linux (losetup, mount, blkid), e2fsprogs (mkfs.ext4) and fio. Every loop device and
mount made here is removed in the fixture teardown, whatever happens in the test.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import CliResult, run_cli
from ssdlab.cli import Env, main
from ssdlab.errors import ExitCode

pytestmark = [pytest.mark.integration, pytest.mark.root]

MiB = 1024**2


@dataclass
class Loop:
    """One loop device over a backing file in tmp_path."""

    dev: str
    backing: Path
    mountpoint: Path | None = None

    def digest(self, start: int = 0, length: int | None = None) -> str:
        """sha256 of the backing file (or a slice), after flushing every dirty page to it."""
        os.sync()
        h = hashlib.sha256()
        with self.backing.open("rb") as fh:
            fh.seek(start)
            remaining = length if length is not None else self.backing.stat().st_size - start
            while remaining > 0:
                chunk = fh.read(min(remaining, MiB))
                if not chunk:
                    break
                h.update(chunk)
                remaining -= len(chunk)
        return h.hexdigest()


@dataclass
class LoopFactory:
    """Creates loop devices and remembers them for teardown."""

    base: Path
    made: list[Loop] = field(default_factory=list)

    def create(self, name: str, size: int, *, ext4: bool = False, mount: bool = False) -> Loop:
        """A loop device over a zero-filled `size`-byte file, optionally with ext4, optionally mounted."""
        backing = self.base / f"{name}.img"
        with backing.open("wb") as fh:
            fh.truncate(size)
        res = subprocess.run(["losetup", "--find", "--show", str(backing)], capture_output=True, text=True,
                             check=False, timeout=30)
        if res.returncode != 0 or not res.stdout.strip().startswith("/dev/loop"):
            pytest.skip(f"cannot create loop devices here: {res.stderr.strip() or res.stdout.strip()}")
        loop = Loop(dev=res.stdout.strip(), backing=backing)
        self.made.append(loop)
        if ext4 or mount:
            if not shutil.which("mkfs.ext4"):
                pytest.skip("mkfs.ext4 not installed (apt-get install e2fsprogs)")
            # no lazy init: the kernel must not write inode tables in the background after mounting
            subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", loop.dev],
                           check=True, capture_output=True, timeout=60)
        if mount:
            mnt = self.base / f"{name}-mnt"
            mnt.mkdir()
            res = subprocess.run(["mount", "-o", "noatime", loop.dev, str(mnt)], capture_output=True, text=True,
                                 check=False, timeout=30)
            if res.returncode != 0:
                pytest.skip(f"cannot mount a loop device here: {res.stderr.strip()}")
            loop.mountpoint = mnt
        return loop

    def cleanup(self) -> None:
        """Unmount and detach everything this factory made."""
        for loop in reversed(self.made):
            if loop.mountpoint is not None:
                res = subprocess.run(["umount", str(loop.mountpoint)], capture_output=True, check=False,
                                     timeout=60)
                if res.returncode != 0:  # still busy: detach it lazily rather than leave it mounted
                    subprocess.run(["umount", "-l", str(loop.mountpoint)], capture_output=True, check=False,
                                   timeout=60)
            subprocess.run(["losetup", "-d", loop.dev], capture_output=True, check=False, timeout=30)
        self.made.clear()


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[LoopFactory]:
    """Loop device factory; every device is detached (and unmounted) afterwards."""
    if not shutil.which("losetup"):
        pytest.skip("losetup not installed (apt-get install util-linux)")
    factory = LoopFactory(tmp_path)
    try:
        yield factory
    finally:
        factory.cleanup()


def refused(res: CliResult, *fragments: str) -> str:
    """Assert a one-line refusal with exit code 4; return the line."""
    assert res.code == ExitCode.UNSAFE, res.err
    assert len(res.err_lines) == 1, res.err
    line = res.err_lines[0]
    assert line.startswith("ssdlab: error: refusing to write") or "needs confirmation" in line, line
    for fragment in fragments:
        assert fragment in line, line
    return line


def run_is_refused(loop: Loop, out: Path, flags: list[str], *fragments: str) -> None:
    """A quick run on `loop` with `flags` is refused (see `refused`), creates no `out` and writes nothing."""
    before = loop.digest()
    res = run_cli("run", "quick", "--target", loop.dev, "--runtime", "1", "--out", out, *flags,
                  traceback=False)
    refused(res, loop.dev, *fragments)
    assert not out.exists()
    assert loop.digest() == before


@pytest.mark.parametrize("flags", [[], ["--yes"], ["--destructive", "--yes"]])
def test_mounted_device_is_always_refused_and_left_untouched(loops: LoopFactory, tmp_path: Path,
                                                          flags: list[str]) -> None:
    loop = loops.create("mounted", 64 * MiB, mount=True)
    run_is_refused(loop, tmp_path / "out", flags, f"is mounted on {loop.mountpoint}")


@pytest.mark.parametrize("flags", [[], ["--yes"]])
def test_signed_device_is_refused_without_destructive_and_left_untouched(loops: LoopFactory, tmp_path: Path,
                                                                      flags: list[str]) -> None:
    loop = loops.create("signed", 64 * MiB, ext4=True)
    run_is_refused(loop, tmp_path / "out", flags, "ext4 signature", "--destructive")


def test_signed_device_runs_with_destructive_and_yes(loops: LoopFactory, tmp_path: Path) -> None:
    loop = loops.create("signed", 64 * MiB, ext4=True)
    out = tmp_path / "out"
    res = run_cli("run", "four-corners", "--target", loop.dev, "--runtime", "0.5", "--out", out,
                  "--destructive", "--yes", "--no-report")
    assert res.code == 0, res.err
    assert f"WARNING: this run will destroy ALL DATA on {loop.dev}" in res.err
    assert "ext4 signature" in res.err
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "complete"
    assert run["target"]["kind"] == "block"
    assert run["target"]["identity"]["loop_backing_file"] == str(loop.backing)


def test_read_only_suite_needs_no_consent_and_writes_nothing(loops: LoopFactory, tmp_path: Path) -> None:
    loop = loops.create("signed", 64 * MiB, ext4=True)
    before = loop.digest()
    res = run_cli("run", "quick-read", "--target", loop.dev, "--runtime", "0.5", "--out", tmp_path / "out",
                  "--no-report")
    assert res.code == 0, res.err
    assert "WARNING" not in res.err
    assert loop.digest() == before


def test_clean_device_needs_yes_without_a_terminal_then_runs(loops: LoopFactory, tmp_path: Path) -> None:
    loop = loops.create("clean", 96 * MiB)
    before = loop.digest()
    out = tmp_path / "out"
    res = run_cli("run", "quick", "--target", loop.dev, "--runtime", "1", "--capacity", "64MiB", "--out", out,
                  traceback=False)
    assert res.code == ExitCode.UNSAFE
    assert res.err_lines[-1].startswith(f"ssdlab: error: writing to {loop.dev} needs confirmation")
    assert "--yes" in res.err_lines[-1]
    assert not out.exists()
    assert loop.digest() == before
    tail_before = loop.digest(64 * MiB)

    res = run_cli("run", "quick", "--target", loop.dev, "--runtime", "1", "--capacity", "64MiB", "--out", out,
                  "--yes")
    assert res.code == 0, res.err
    assert f"WARNING: this run will destroy ALL DATA on {loop.dev}" in res.err
    assert "the first 64 MiB" in res.err
    assert (out / "report.html").is_file()
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "complete"
    assert len([p for p in run["points"] if p["status"] == "ok"]) == 8
    assert run["target"]["capacity_bytes"] == 64 * MiB
    assert run["target"]["device_bytes"] == 96 * MiB
    for p in run["points"]:
        job = (out / "points" / p["point"]["id"] / "job.fio").read_text(encoding="utf-8").splitlines()
        assert f"filename={loop.dev}" in job
        assert f"size={64 * MiB}" in job
    exported = run_cli("export", out, "--format", "csv")
    assert exported.code == 0
    assert exported.out.startswith("point,")
    assert len(exported.out.strip().splitlines()) == 9
    # fio wrote only inside --capacity: the last 32 MiB are still zeros
    assert loop.digest(64 * MiB) == tail_before == hashlib.sha256(bytes(32 * MiB)).hexdigest()
    assert loop.digest(0, 64 * MiB) != hashlib.sha256(bytes(64 * MiB)).hexdigest()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_typed_confirmation_must_match_the_device_name(loops: LoopFactory, tmp_path: Path) -> None:
    loop = loops.create("clean", 64 * MiB)
    before = loop.digest()
    err = _Tty()
    code = main(["run", "quick", "--target", loop.dev, "--runtime", "1", "--out", str(tmp_path / "out")],
                env=Env(stdout=io.StringIO(), stderr=err, stdin=_Tty("loop-wrong\n")))
    assert code == ExitCode.UNSAFE
    assert f"Type the device name ({Path(loop.dev).name}) to confirm" in err.getvalue()
    assert "does not match" in err.getvalue()
    assert not (tmp_path / "out").exists()
    assert loop.digest() == before


def test_info_says_why_a_device_is_not_writable(loops: LoopFactory) -> None:
    mounted = loops.create("mounted", 64 * MiB, mount=True)
    signed = loops.create("signed", 64 * MiB, ext4=True)
    clean = loops.create("clean", 64 * MiB)
    hashes = {lp.dev: lp.digest() for lp in (mounted, signed, clean)}

    res = run_cli("info", mounted.dev)
    assert res.code == 0, res.err
    assert f"writable:  NO: {mounted.dev} is mounted on {mounted.mountpoint}" in res.out
    res = run_cli("info", signed.dev)
    assert (f"writable:  NO: {signed.dev} is not blank: it carries an existing ext4 signature "
            "(override with --destructive)") in res.out
    assert "capacity:  64 MiB" in res.out
    res = run_cli("info", clean.dev)
    assert "writable:  yes" in res.out
    assert str(clean.backing) in res.out  # identity: the loop's backing file
    data = json.loads(run_cli("info", signed.dev, "--json").out)
    assert data["write_safe"] is False
    assert data["logical_block_size"] == 512
    for lp in (mounted, signed, clean):
        assert lp.digest() == hashes[lp.dev]


def test_plan_prints_what_will_be_overwritten(loops: LoopFactory) -> None:
    mounted = loops.create("mounted", 64 * MiB, mount=True)
    signed = loops.create("signed", 64 * MiB, ext4=True)
    before = signed.digest()
    res = run_cli("plan", "quick", "--target", signed.dev, "--runtime", "1")
    assert res.code == 0, res.err
    assert f"will overwrite: ALL DATA on {signed.dev} (Linux loop device" in res.out
    assert "the whole device" in res.out
    assert f"! {signed.dev} is not blank: it carries an existing ext4 signature (needs --destructive)" in res.out
    res = run_cli("plan", "quick", "--target", mounted.dev, "--runtime", "1", "--capacity", "16MiB")
    assert res.code == 0, res.err
    assert f"is mounted on {mounted.mountpoint} (blocks any write)" in res.out
    assert "the first 16 MiB" in res.out
    res = run_cli("plan", "quick-read", "--target", signed.dev)
    assert "will overwrite: nothing (read-only suite)" in res.out
    assert signed.digest() == before


def test_teardown_leaves_no_loop_devices(tmp_path: Path) -> None:
    """The factory detaches what it made (checked against losetup's own list)."""
    if not shutil.which("losetup"):
        pytest.skip("losetup not installed")
    factory = LoopFactory(tmp_path)
    try:
        loop = factory.create("probe", 8 * MiB)
    finally:
        factory.cleanup()
    listing = subprocess.run(["losetup", "-j", str(loop.backing)], capture_output=True, text=True, check=False)
    assert listing.stdout.strip() == ""
    with contextlib.suppress(OSError):
        loop.backing.unlink()
