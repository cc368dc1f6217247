"""The integrity suite and `ssdlab verify` on a real loop device: bytes flipped in its backing file at known
offsets are found, every one and nothing else.

Needs root (losetup) and fio. The loop device is detached in the fixture's teardown whatever happens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import LoopFactory, flip_bytes, run_cli
from ssdlab.errors import ExitCode
from ssdlab.results.store import load_run

pytestmark = [pytest.mark.integration, pytest.mark.root]

MiB = 1024**2
BS = 4096
SPAN = 4 * MiB
# (byte offset in the device, what fio finds): data bytes give a checksum mismatch, the header's fields
# (magic at 0-1, length at 4-7, offset at 16-23) a header mismatch; one corruption per block
PLANTED = [
    (3 * BS + 100, "checksum"), (10 * BS + 2000, "checksum"), (77 * BS + 4095, "checksum"),
    (50 * BS + 19, "header"), (200 * BS + 5, "header"), (300 * BS + 0, "header"), (1023 * BS + 600, "checksum"),
]


@pytest.fixture
def loop(loops: LoopFactory) -> tuple[str, Path]:
    """(device, backing file) of an 8 MiB loop device over a zero-filled file; detached afterwards."""
    made = loops.create("disk", 8 * MiB)
    return made.dev, made.backing


def test_integrity_then_verify_finds_exactly_the_planted_corruptions(loop: tuple[str, Path], tmp_path: Path) -> None:
    dev, backing = loop
    out = tmp_path / "run"
    r = run_cli("run", "integrity", "--target", dev, "--capacity", "4MiB", "--yes", "--quiet", "--out", out)
    assert r.code == 0, r.err
    run = load_run(out)
    assert [(p.point.id, p.status) for p in run.points] == [("01-write", "ok"), ("02-check", "ok")]
    verdict = run.events[-1]
    assert verdict["passed"] is True
    assert "4 MiB (4,194,304 bytes) checked, no mismatch" in verdict["text"]
    assert "--readonly" in (out / "points" / "02-check" / "cmd.txt").read_text()

    r = run_cli("verify", out, "--no-report")  # nothing changed yet: clean
    assert r.code == 0, r.err
    assert "4,194,304 bytes) checked, no mismatch" in r.err

    flip_bytes(backing, [off for off, _ in PLANTED])
    r = run_cli("verify", out)
    assert r.code == ExitCode.NEGATIVE, r.err
    run = load_run(out)
    last = run.points[-1]
    assert last.point.id == "reverify-02"
    assert last.measurement is not None
    v = last.measurement.extra["verify"]
    expected = sorted((off - off % BS, kind) for off, kind in PLANTED)
    assert sorted((f["offset"], f["kind"]) for f in v["listed"]) == expected  # every one, none invented
    assert v["mismatches"] == len(PLANTED)
    assert v["checked_bytes"] == SPAN
    assert all(f["time"] for f in v["listed"])  # when fio found each
    for f in v["listed"]:
        if f["kind"] == "checksum":
            assert len(f["expected"]) == 8
            assert f["expected"] != f["received"]
    assert run.events[-1]["kind"] == "verdict"
    assert run.events[-1]["passed"] is False
    assert f"{len(PLANTED)} mismatching block(s)" in r.err
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Mismatching and unreadable blocks" in report
    for off, _ in expected:
        assert f"<td>{off}</td>" in report


def test_verify_refuses_a_different_device(loop: tuple[str, Path], tmp_path: Path) -> None:
    dev, _ = loop
    out = tmp_path / "run"
    assert run_cli("run", "integrity", "--target", dev, "--capacity", "1MiB", "--yes", "--quiet", "--no-report",
                   "--out", out).code == 0
    other = tmp_path / "other.dat"
    other.write_bytes(b"\0" * MiB)
    r = run_cli("verify", out, "--target", f"file:{other}", traceback=False)
    assert r.code == ExitCode.TARGET
    assert "is not the target that was written" in r.err
