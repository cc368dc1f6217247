"""NBD exports are checked for signatures as block devices are: blkid probes beyond the first and last MiB
(a VMFS volume at 1 MiB, a VMFS filesystem at 2 MiB, LUKS2 secondary headers up to 4 MiB), and whatever it
reads of the export is read over NBD for the check. Needs nbdkit and blkid; no root (the export serves a plain
image file, which is intact afterwards)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import WRITER, run_cli
from ssdlab.errors import ExitCode

pytestmark = [pytest.mark.integration]
MiB = 1024**2


@contextmanager
def exported(tmp_path: Path, image: Path) -> Iterator[str]:
    """`image` served by an nbdkit someone else runs, on a Unix socket; its NBD URI."""
    if not shutil.which("nbdkit") or not shutil.which("blkid"):
        pytest.skip("nbdkit and blkid are needed (apt-get install nbdkit util-linux)")
    sock = tmp_path / f"{image.stem}.sock"
    proc = subprocess.Popen(["nbdkit", "--foreground", "--exit-with-parent", "--unix", str(sock), "file",
                             f"file={image}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(1000):
            if sock.exists():
                break
            time.sleep(0.01)
        yield f"nbd+unix:///?socket={sock}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def image_with(tmp_path: Path, name: str, offset: int, magic: bytes, size: int = 64 * MiB) -> Path:
    path = tmp_path / f"{name}.img"
    with path.open("wb") as fh:
        fh.truncate(size)
        fh.seek(offset)
        fh.write(magic)
    return path


@pytest.mark.parametrize(("offset", "magic", "kind"), [
    (1 * MiB, b"\x0d\xd0\x01\xc0", "VMFS_volume_member"),  # blkid's VMFS volume magic, at 1 MiB
    (2 * MiB, b"\x5e\xf1\xab\x2f", "VMFS"),  # and the VMFS filesystem's, at 2 MiB
])
def test_a_signature_past_the_first_mib_of_an_export_needs_destructive(tmp_path: Path, offset: int, magic: bytes,
                                                                       kind: str) -> None:
    """Only the export's first and last MiB were read: a signature blkid finds further in was never seen, and
    `--yes` alone overwrote it."""
    image = image_with(tmp_path, kind, offset, magic)
    probe = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", str(image)], capture_output=True, text=True,
                           check=False, timeout=30)
    assert probe.stdout.strip() == kind  # what blkid says of the same bytes as a file
    before = hashlib.sha256(image.read_bytes()).hexdigest()
    suite = tmp_path / "writer.toml"
    suite.write_text(WRITER, encoding="utf-8")
    with exported(tmp_path, image) as uri:
        res = run_cli("run", suite, "--target", uri, "--yes", "--out", tmp_path / "out", traceback=False)
        plan = run_cli("plan", suite, "--target", uri, traceback=False)
    assert res.code == ExitCode.UNSAFE, res.err
    assert f"is not blank: it carries an existing {kind} signature; pass --destructive" in res.err
    assert not (tmp_path / "out").exists()
    assert plan.code == ExitCode.UNSAFE
    assert f"{kind} signature (needs --destructive)" in plan.out
    assert hashlib.sha256(image.read_bytes()).hexdigest() == before


def test_a_blank_export_needs_only_consent(tmp_path: Path) -> None:
    image = image_with(tmp_path, "blank", 0, b"")
    suite = tmp_path / "writer.toml"
    suite.write_text(WRITER, encoding="utf-8")
    with exported(tmp_path, image) as uri:
        plan = run_cli("plan", suite, "--target", uri, traceback=False)
    assert plan.code == 0, plan.err
    assert "will overwrite: ALL DATA in the NBD server" in plan.out


# --- the socket fio connects to is the one checked -------------------------------------------------------------------

def _serve(image: Path, sock: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(["nbdkit", "--foreground", "--exit-with-parent", "--unix", str(sock), "file",
                             f"file={image}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(1000):
        if sock.exists():
            break
        time.sleep(0.01)
    return proc


def test_fio_connects_to_the_socket_checked_not_through_a_link(tmp_path: Path) -> None:
    """The socket was named to fio as given: a link on the way (its owner may point it at another server after the
    checks) was followed again when fio connected. fio now gets the canonical socket path; and a server restarted
    or replaced on that socket since the checks (a new socket) is refused before any job."""
    if not shutil.which("nbdkit") or not shutil.which("blkid"):
        pytest.skip("nbdkit and blkid are needed (apt-get install nbdkit util-linux)")
    from ssdlab import safety
    from ssdlab.errors import UnsafeTargetError
    from ssdlab.fio.executor import point_job
    from ssdlab.results.model import TestPoint, Workload
    from ssdlab.run.target import parse_target

    image = image_with(tmp_path, "blank", 0, b"")
    sock = tmp_path / "real.sock"
    link = tmp_path / "link.sock"
    link.symlink_to(sock)
    proc = _serve(image, sock)
    try:
        target = parse_target(f"nbd+unix:///?socket={link}")
        job = point_job(TestPoint(id="p", label="p", workload=Workload(rw="randwrite", bs=4096, runtime_s=0.5)),
                        target)
        assert job.jobs[0].options["uri"] == f"nbd+unix:///?socket={sock}"
        grant = safety.WriteGrant(target, writes=True)
        grant.check_job(job)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    sock.unlink(missing_ok=True)
    proc = _serve(image, sock)  # another server on the same path: a socket with another inode
    try:
        with pytest.raises(UnsafeTargetError, match=f"it would not reach what the run was set up for: {sock} is "
                                                    "(now socket inode|a socket made anew)"):
            grant.check_job(job)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.root
def test_a_socket_in_a_directory_another_user_owns_is_refused_for_writing(tmp_path: Path) -> None:
    """root writes to an export whose socket sits in another user's directory: that user could point the socket's
    name at another server (one only root may connect to) between the checks and fio's connect."""
    import os

    image = image_with(tmp_path, "blank", 0, b"")
    before = hashlib.sha256(image.read_bytes()).hexdigest()
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, 65534, 65534)
    suite = tmp_path / "writer.toml"
    suite.write_text(WRITER, encoding="utf-8")
    if not shutil.which("nbdkit") or not shutil.which("blkid"):
        pytest.skip("nbdkit and blkid are needed (apt-get install nbdkit util-linux)")
    proc = _serve(image, home / "nbd.sock")
    try:
        res = run_cli("run", suite, "--target", f"nbd+unix:///?socket={home / 'nbd.sock'}", "--yes", "--out",
                      tmp_path / "out", traceback=False)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert res.code == ExitCode.UNSAFE, res.err
    assert f"another user can change what socket {home / 'nbd.sock'} names ({home} belongs to" in res.err
    assert not (tmp_path / "out").exists()
    assert hashlib.sha256(image.read_bytes()).hexdigest() == before
