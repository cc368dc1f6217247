"""The write gate against attempts to make fio touch what was not checked, without devices (files only); the
loop-device cases are in tests/integration/test_gate_attacks_loop.py."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from conftest import CliRunner, MiB, scratch
from ssdlab import safety
from ssdlab.errors import ExitCode, UnsafeTargetError
from ssdlab.fio.executor import point_job
from ssdlab.results.model import TestPoint, Workload
from ssdlab.run.target import parse_target

WRITE = TestPoint(id="p", label="p", workload=Workload(rw="randwrite", bs=4096, runtime_s=0.5))
READ = TestPoint(id="p", label="p", workload=Workload(rw="randread", bs=4096, runtime_s=0.5))


# --- offset + size past the span: --capacity, --footprint and --misalign bound every job -------------------------

def test_the_boundary_refuses_a_job_reaching_past_the_span(tmp_path: Path) -> None:
    path = scratch(tmp_path)
    target = parse_target(f"file:{path}")
    for point in (READ, WRITE):  # a read past the end would make fio extend the file: a write
        shifted = dataclasses.replace(point, workload=dataclasses.replace(point.workload, offset=4096))
        job = point_job(shifted, target)
        assert job.jobs[0].options["size"] == 8 * MiB  # the target's span, shifted by 4 KiB: one block past it
        with pytest.raises(UnsafeTargetError, match=rf"job \[p\] reaches byte {8 * MiB + 4096} \(offset 4096 \+ "
                                                    rf"size {8 * MiB}\), past the first {8 * MiB} bytes"):
            safety.WriteGrant(target, writes=True).check_job(job)
        assert safety.span_problems(job, target.device_fio_options())
    inside = dataclasses.replace(WRITE, workload=dataclasses.replace(WRITE.workload, offset=4096, size=8 * MiB - 4096))
    safety.WriteGrant(target, writes=True).check_job(point_job(inside, target))  # up to the last byte: accepted


@pytest.mark.parametrize("extra", [["--misalign", "4096"], ["--footprint", "100%", "--misalign", "1MiB"],
                                   ["--footprint", "50%", "--misalign", "1MiB"]])
def test_act_with_footprint_and_misalign_stays_inside_the_target(cli: CliRunner, tmp_path: Path,
                                                                 extra: list[str]) -> None:
    """ACT's streams took --footprint as their size and --misalign as their offset, so their I/O reached up to
    --misalign bytes past the target (past --capacity on a device, extending a file target)."""
    from ssdlab.cli import build_parser, run_request
    from ssdlab.run.setup import setup_run
    from ssdlab.suites.base import apply_common

    path = scratch(tmp_path, size=16 * MiB)
    args = build_parser("plan").parse_args(["plan", "act", "--target", f"file:{path}", "--duration", "4",
                                            "--slice", "2", *extra])
    setup = setup_run(run_request(args))
    devices = setup.target.device_fio_options()
    jobs = [point_job(apply_common(setup.ctx, p), setup.target) for p in setup.plan]
    assert jobs
    assert all(not safety.span_problems(job, devices) for job in jobs)
    ends = {int(s.options.get("offset", 0)) + int(s.options["size"]) for job in jobs for s in job.jobs}
    assert max(ends) == 16 * MiB  # the span after the shift, to the target's last byte
    assert cli("plan", "act", "--target", f"file:{path}", "--duration", "4", "--slice", "2", *extra).code == 0


# --- a target path fio cannot name in its output: control characters ---------------------------------------------

def test_a_target_path_with_control_characters_is_one_line(cli: CliRunner, tmp_path: Path) -> None:
    """fio writes a filename's control characters raw into its JSON output, which then does not parse: a run on
    `file:$'\\e[31m'x` failed every point ("fio failed: exit status 0"). Refused before anything exists, the name
    shown escaped; also when only a link's target holds them."""
    odd = tmp_path / "\x1b[31mx"
    (tmp_path / "lnk").symlink_to(odd)
    for spec, shown in ((f"file:{odd}?size=4MiB", "\\x1b[31mx?size=4MiB contains control characters (\\x1b)"),
                        (f"file:{tmp_path / 'lnk'}?size=4MiB", "resolves to"),
                        (f"{tmp_path}/tab\tname", "contains control characters (\\x09)")):
        res = cli("run", "quick", "--target", spec, "--runtime", "0.5", "--out", tmp_path / "out", traceback=False)
        assert res.code == ExitCode.USAGE, res.err
        assert len(res.err_lines) == 1, res.err
        assert shown in res.err_lines[0]
        assert "\x1b" not in res.err
        assert not (tmp_path / "out").exists()
        assert not odd.exists()


# --- what blkid reads of a disk known only through reads (an NBD export) is read for the check ---------------------

@pytest.mark.skipif(not shutil.which("blkid"), reason="blkid not installed (util-linux)")
def test_the_signature_check_reads_what_blkid_reads() -> None:
    """A disk read only through `fetch` (as an NBD export) carries a VMFS filesystem magic at 2 MiB: blkid on its
    first and last MiB alone found nothing; asked for the ranges blkid reads, the check finds it, and reads
    little more than blkid needs."""
    from ssdlab.targets import sysfs

    size = 64 * MiB
    disk = {2 * MiB: b"\x5e\xf1\xab\x2f"}
    asked: list[tuple[int, int]] = []

    def fetch(ranges: list[tuple[int, int]]) -> list[tuple[int, bytes]]:
        asked.extend(ranges)
        out = []
        for off, n in ranges:
            data = bytearray(n)
            for at, magic in disk.items():
                if off <= at < off + n:
                    data[at - off:at - off + len(magic)] = magic
            out.append((off, bytes(data)))
        return out

    assert sysfs.signature_in(size, fetch) == "VMFS signature"
    assert asked[:2] == [(0, MiB), (size - MiB, MiB)]  # the ends first
    assert any(off <= 2 * MiB < off + n for off, n in asked[2:])  # then what blkid read beyond them
    assert sum(n for _, n in asked) < 3 * MiB
    disk.clear()
    asked.clear()
    assert sysfs.signature_in(size, fetch) == ""  # a blank disk
