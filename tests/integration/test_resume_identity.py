"""`resume` goes on only on the device or file the run started on: a run records each local device's and file's
fingerprint (run.json target.fingerprint: device number and disk sequence number for this boot; WWID, serial,
model, a loop device's backing file, partition start and size across reboots; a file's inode and ssdlab's
creation tag), and a resume onto anything else (a by-id name now naming another drive, a loop device attached to
another file, a file replaced by another inode) is refused with one line and exit 9: nothing runs, nothing is
recorded. The same device under a new disk sequence number (a loop device attached again to the same file) and
the same file resume as before."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import WRITE_THEN_READ, LoopFactory, MiB, run_cli
from ssdlab.errors import ExitCode

pytestmark = [pytest.mark.integration]



def suite(tmp_path: Path) -> Path:
    path = tmp_path / "writer.toml"
    path.write_text(WRITE_THEN_READ, encoding="utf-8")
    return path


def run_then_interrupt(tmp_path: Path, target: str) -> tuple[Path, dict[str, Any]]:
    """A finished run made resumable again, as a killed run leaves it: its last point dropped, status interrupted.
    Returns (run directory, its run.json)."""
    out = tmp_path / "run"
    res = run_cli("run", suite(tmp_path), "--target", target, "--yes", "--out", out, "--quiet", "--no-report")
    assert res.code == 0, res.err
    doc: dict[str, Any] = json.loads((out / "run.json").read_text(encoding="utf-8"))
    doc["status"] = "interrupted"
    doc["points"] = doc["points"][:1]
    (out / "run.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return out, doc


def refused(out: Path, *fragments: str) -> str:
    before = (out / "run.json").read_text(encoding="utf-8")
    points = sorted(p.name for p in (out / "points").iterdir())
    res = run_cli("resume", out, "--yes", "--no-report", "--quiet", traceback=False)
    assert res.code == ExitCode.TARGET_CHANGED == 9, res.err
    assert len(res.err_lines) == 1, res.err
    line = res.err_lines[0]
    assert line.endswith("resume the run on that device, or start a new run") or line.endswith(
        "resume the run on that file, or start a new run"), line
    for fragment in fragments:
        assert fragment in line, line
    assert (out / "run.json").read_text(encoding="utf-8") == before  # nothing recorded
    assert sorted(p.name for p in (out / "points").iterdir()) == points  # nothing ran
    return line


def resumed(out: Path) -> None:
    res = run_cli("resume", out, "--yes", "--no-report", "--quiet")
    assert res.code == 0, res.err
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["status"] == "complete"


def test_a_file_replaced_since_the_run_started_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.dat"
    out, doc = run_then_interrupt(tmp_path, f"file:{path}?size=8MiB")
    (record,) = doc["target"]["fingerprint"]
    st = path.stat()
    assert (record["spec"], record["kind"], record["inode"]) == (f"file:{path}?size=8MiB", "file", st.st_ino)
    assert record["created"].startswith("ssdlab ")  # the run made it: its creation tag is part of the record
    other = tmp_path / "other.dat"
    other.write_bytes(path.read_bytes())  # the same bytes, the same name: another file
    other.replace(path)
    refused(out, f"file:{path}?size=8MiB is not the file the run started on (its inode was {st.st_ino}, now "
                 f"{path.stat().st_ino})")


def test_the_same_file_resumes(tmp_path: Path) -> None:
    out, _ = run_then_interrupt(tmp_path, f"file:{tmp_path / 't.dat'}?size=8MiB")
    resumed(out)


def test_a_file_ssdlab_made_that_is_gone_is_made_anew_and_a_users_file_is_not(tmp_path: Path) -> None:
    """The run made t.dat: gone, resume makes and lays it out again, as the run did, and records the new one.
    The user's own u.dat gone: resume does not put a file of its own in its place."""
    path = tmp_path / "t.dat"
    out, _ = run_then_interrupt(tmp_path, f"file:{path}?size=8MiB")
    path.unlink()
    resumed(out)
    (record,) = json.loads((out / "run.json").read_text(encoding="utf-8"))["target"]["fingerprint"]
    assert (record["inode"], path.stat().st_size) == (path.stat().st_ino, 8 * MiB)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    users = theirs / "u.dat"
    users.write_bytes(b"\0" * (8 * MiB))
    out, doc = run_then_interrupt(theirs, f"file:{users}")
    assert "created" not in doc["target"]["fingerprint"][0]
    users.unlink()
    refused(out, f"file:{users} is not the file the run started on (it was a regular file, now it is nothing yet)")
    assert not users.exists()


def test_a_run_stored_without_a_fingerprint_resumes(tmp_path: Path) -> None:
    out, doc = run_then_interrupt(tmp_path, f"file:{tmp_path / 't.dat'}?size=8MiB")
    del doc["target"]["fingerprint"]  # as runs stored before fingerprints were
    (out / "run.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    resumed(out)


def _reattach(dev: str, backing: Path) -> None:
    subprocess.run(["losetup", "-d", dev], check=True, capture_output=True, timeout=30)
    res = subprocess.run(["losetup", dev, str(backing)], capture_output=True, text=True, check=False, timeout=30)
    if res.returncode != 0:
        pytest.skip(f"{dev} was taken by another process meanwhile: {res.stderr.strip()}")


@pytest.mark.root
def test_a_name_now_naming_another_device_is_refused(loops: LoopFactory, tmp_path: Path) -> None:
    """A stable name (as /dev/disk/by-id/...: an absolute link, kept as given so a renumbered drive is found
    again) that now names another drive, and a loop device attached to another file under the same number."""
    first = loops.create("first", 32 * MiB)
    other = loops.create("other", 32 * MiB)
    name = tmp_path / "by-id" / "disk"
    name.parent.mkdir()
    name.symlink_to(first.dev)
    out, doc = run_then_interrupt(tmp_path, str(name))
    (record,) = doc["target"]["fingerprint"]
    assert (record["spec"], record["path"], record["kind"]) == (str(name), first.dev, "block")
    assert record["loop_backing"]["file"] == str(first.backing)
    other_before = other.digest()
    name.unlink()
    name.symlink_to(other.dev)  # the name now names another drive
    refused(out, f"{name} is not the device the run started on (its loop backing file was file {first.backing} "
                 f"inode {first.backing.stat().st_ino} offset 0, now file {other.backing} inode "
                 f"{other.backing.stat().st_ino} offset 0)")
    name.unlink()
    name.symlink_to(first.dev)
    _reattach(first.dev, other.backing)  # the same number, another file behind it
    refused(out, f"{name} is not the device the run started on (its loop backing file was file {first.backing}")
    assert other.digest() == other_before
    _reattach(first.dev, first.backing)  # the same file again, under a new disk sequence number: the same device
    resumed(out)
