"""Write safety on real block devices: loop devices that are mounted, carry ext4, or are clean.

Needs root, util-linux (losetup, mount, blkid), e2fsprogs (mkfs.ext4) and fio. Every loop device and
mount made here is removed in the fixture teardown, whatever happens in the test.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CliResult, Loop, LoopFactory, MiB, run_cli
from ssdlab.cli import Env, main
from ssdlab.errors import ExitCode

pytestmark = [pytest.mark.integration, pytest.mark.root]


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
    assert "the reads were not prefilled" in res.err  # said on the console (and in the report's warnings)
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
    assert len([p for p in run["points"] if p["status"] == "ok"]) == 9
    prefill = run["points"][0]  # a raw device has no layout step: the span the reads touch is written first
    assert prefill["point"]["phase"] == "precondition"
    assert prefill["measurement"]["directions"]["write"]["io_bytes"] == 64 * MiB
    assert run["target"]["capacity_bytes"] == 64 * MiB
    assert run["target"]["device_bytes"] == 96 * MiB
    for p in run["points"]:
        job = (out / "points" / p["point"]["id"] / "job.fio").read_text(encoding="utf-8").splitlines()
        assert f"filename={loop.dev}" in job
        assert f"size={64 * MiB}" in job
    exported = run_cli("export", out, "--format", "csv")
    assert exported.code == 0
    assert exported.out.startswith("point,")
    assert len(exported.out.strip().splitlines()) == 10  # header, prefill, 8 points
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
    res = run_cli("plan", "quick", "--target", signed.dev, "--runtime", "1", "--destructive")
    assert res.code == 0, res.err
    assert f"will overwrite: ALL DATA on {signed.dev} (Linux loop device" in res.out
    assert "the whole device" in res.out
    assert f"! {signed.dev} is not blank: it carries an existing ext4 signature (accepted: --destructive)" in res.out
    # without --destructive the run would be refused: plan says so and exits 4, naming nothing it would destroy
    res = run_cli("plan", "quick", "--target", signed.dev, "--runtime", "1", traceback=False)
    assert res.code == ExitCode.UNSAFE
    assert "will overwrite: nothing: the run would be refused" in res.out
    assert "ALL DATA" not in res.out
    assert f"! {signed.dev} is not blank: it carries an existing ext4 signature (needs --destructive)" in res.out
    assert res.err_lines == [f"ssdlab: error: refusing to write to {signed.dev}: {signed.dev} is not blank: it "
                             "carries an existing ext4 signature; pass --destructive if its contents may be destroyed"]
    for flags in ([], ["--destructive", "--yes"]):
        res = run_cli("plan", "quick", "--target", mounted.dev, "--runtime", "1", "--capacity", "16MiB", *flags,
                      traceback=False)
        assert res.code == ExitCode.UNSAFE
        assert f"is mounted on {mounted.mountpoint} (blocks any write)" in res.out
        assert "ALL DATA" not in res.out
        assert len(res.err_lines) == 1
        assert "is mounted on" in res.err_lines[0]
    res = run_cli("plan", "quick-read", "--target", signed.dev)
    assert res.code == 0
    assert "will overwrite: nothing (no point writes)" in res.out
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
