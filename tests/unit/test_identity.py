"""One target, one identity (targets/identity.py), without devices: file targets named through links and
relative paths, the write gate comparing every job's filename with the identity just before fio starts, and
target strings that cannot be named in a job file refused with one line."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from conftest import CliRunner, scratch
from ssdlab import safety
from ssdlab.errors import ExitCode, UnsafeTargetError, UsageError
from ssdlab.fio import runner
from ssdlab.fio.executor import point_job
from ssdlab.results.model import TestPoint, Workload
from ssdlab.run.target import parse_target
from ssdlab.targets import FileTarget, TargetOptions, identity
from ssdlab.targets.multi import MultiTarget

READ = TestPoint(id="p", label="p", workload=Workload(rw="randread", bs=4096, runtime_s=0.5))
WRITE = TestPoint(id="p", label="p", workload=Workload(rw="randwrite", bs=4096, runtime_s=0.5))


def test_a_relative_file_behind_a_link_resolves_to_one_absolute_file(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    real = scratch(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "lnk").symlink_to("../scratch.dat")
    monkeypatch.chdir(tmp_path / "sub")
    target = parse_target("file:./lnk")
    assert isinstance(target, FileTarget)
    ident = target.identities()[0]
    st = real.stat()
    assert (ident.path, ident.kind, ident.ino) == (str(real), "file", st.st_ino)
    assert ident.given == "./lnk"
    assert point_job(READ, target).jobs[0].options["filename"] == str(real)


def test_the_boundary_refuses_a_file_replaced_after_the_run_was_set_up(tmp_path: Path) -> None:
    path = scratch(tmp_path)
    target = parse_target(f"file:{path}")
    grant = safety.WriteGrant(target, writes=False)
    job = point_job(READ, target)
    grant.check_job(job)  # as set up: accepted
    other = scratch(tmp_path, "other.dat")
    other.replace(path)  # another inode under the same name
    with pytest.raises(UnsafeTargetError, match=f"{path} is now inode .*, not the inode .* the run was set up for"):
        runner.run_job(job, tmp_path / "point", gate=grant)
    assert not (tmp_path / "point").exists()
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere.dat")
    scratch(tmp_path, "elsewhere.dat")
    with pytest.raises(UnsafeTargetError, match="would not open what the run was set up for"):
        grant.check_job(job)


def test_the_layout_makes_the_file_it_creates_the_identity(tmp_path: Path) -> None:
    target = parse_target(f"file:{tmp_path / 'new.dat'}?size=1MiB")
    assert target.identities()[0].kind == "absent"
    target.prepare(True)
    ident = target.identities()[0]
    assert (ident.kind, ident.ino) == ("file", (tmp_path / "new.dat").stat().st_ino)
    safety.WriteGrant(target, writes=True).check_job(point_job(WRITE, target))


def test_the_boundary_refuses_relative_filenames_and_engines_that_run_commands(tmp_path: Path) -> None:
    target = parse_target(f"file:{scratch(tmp_path)}")
    assert isinstance(target, FileTarget)
    # a target that would hand fio a relative name (as a relative block device target did before issue 31)
    relative = dataclasses.replace(target, path=Path("scratch.dat"))
    with pytest.raises(UnsafeTargetError, match=r"names the relative path scratch\.dat, which fio would open inside"):
        safety.WriteGrant(relative, writes=True).check_job(point_job(WRITE, relative))
    for engine in ("exec", "external", "filecreate"):  # e.g. from a hand-edited run.json
        odd = parse_target(f"file:{tmp_path / 'scratch.dat'}", TargetOptions(ioengine=engine))
        with pytest.raises(UnsafeTargetError, match=f"uses ioengine={engine}, which is not a plain"):
            safety.WriteGrant(odd, writes=True).check_job(point_job(WRITE, odd))


def test_two_names_of_one_file_are_one_target(tmp_path: Path) -> None:
    path = scratch(tmp_path)
    (tmp_path / "alias").symlink_to(path)
    os.link(path, tmp_path / "hard")
    opts = TargetOptions()
    for other in ("alias", "hard"):
        with pytest.raises(UsageError, match="are the same file"):
            MultiTarget.from_targets([parse_target(f"file:{path}"), parse_target(f"file:{tmp_path / other}")], opts)
    with pytest.raises(UsageError, match="are the same file"):
        MultiTarget.from_targets([parse_target(f"file:{path}"), parse_target(f"nbdkit:file:{path}")], opts)


def test_identity_keys_and_stable_specs() -> None:
    a = identity.Identity("/dev/disk/by-id/x", "/dev/sda", "block", rdev=(8, 0))
    b = identity.Identity("/tmp/node", "/tmp/node", "block", rdev=(8, 0))
    assert a.key == b.key
    assert a.alias == "/dev/disk/by-id/x"
    assert b.alias == ""
    assert identity.stable_spec("/dev/disk/by-id/x", a) == "/dev/disk/by-id/x"  # survives renumbering
    assert identity.stable_spec("../../lnk", a) == "/dev/sda"
    assert identity.stable_spec("/dev/disk/../sda", a) == "/dev/sda"


def test_a_target_path_that_is_not_utf8_is_one_line(cli: CliRunner, tmp_path: Path) -> None:
    raw = os.fsdecode(bytes(tmp_path) + b"/\xff\x9bx")  # as the command line hands it over (surrogateescape)
    for spec in (raw, f"file:{raw}?size=8MiB"):
        res = cli("run", "quick", "--target", spec, "--runtime", "0.5", "--out", tmp_path / "out", traceback=False)
        assert res.code == ExitCode.USAGE, res.err
        assert len(res.err_lines) == 1
        assert "is not valid UTF-8: fio's job file cannot name it" in res.err
        assert "\\xff\\x9bx" in res.err  # the bytes shown escaped
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("uri", ["nbd://[::1", "nbd://[::1/export", "nbd+unix://[/?socket=/x"])
def test_a_malformed_nbd_uri_is_one_line(cli: CliRunner, uri: str) -> None:
    res = cli("plan", "quick", "--target", uri, traceback=False)
    assert res.code == ExitCode.USAGE, res.err
    assert res.err_lines == [res.err_lines[0]]
    assert res.err_lines[0].startswith(f"ssdlab: error: {uri}: not a valid URI")


def test_purge_and_layout_are_refused_on_a_file_replaced_after_consent(tmp_path: Path) -> None:
    path = scratch(tmp_path)
    target = parse_target(f"file:{path}")
    grant = safety.WriteGrant(target, writes=True)
    grant.require("purge")  # as set up: allowed
    scratch(tmp_path, "other.dat").replace(path)
    with pytest.raises(UnsafeTargetError, match=r"refusing to purge on .*: .* is now inode"):
        grant.require("purge")


def test_a_path_another_user_may_rename_is_named_and_one_only_root_can_change_is_not(tmp_path: Path) -> None:
    """The write gate's last check and fio's open are two moments: whoever may rename or replace a directory
    entry on the way (a directory they own or may write, not sticky; or their own entry in a sticky one, as
    /tmp) could swap the target for a link to a device between them. Every such directory is named."""
    if os.geteuid() != 0:
        pytest.skip("the other users' directories are made with chown (root)")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o755)
    assert identity.others_can_change(str(closed / "t.dat")) == ""
    for mode, gid, who in ((0o777, 0, "every user"), (0o775, 65534, "group")):
        shared = tmp_path / f"shared-{mode:o}"
        shared.mkdir()
        os.chown(shared, 0, gid)
        shared.chmod(mode)
        assert identity.others_can_change(str(shared / "t.dat")).startswith(f"{shared} can be written by {who}")
    os.chown(tmp_path / "shared-775", 0, 0)  # written by root's group only: root's own
    assert identity.others_can_change(str(tmp_path / "shared-775" / "t.dat")) == ""
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    mine = sticky / "mine"
    mine.mkdir()
    theirs = sticky / "theirs"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    assert identity.others_can_change(str(mine / "t.dat")) == ""  # in /tmp-like: only root renames root's entry
    why = identity.others_can_change(str(theirs / "t.dat"))
    assert why.startswith(f"{theirs} belongs to ")
    assert why.endswith(f"(uid 65534) in {sticky}, which every user may write")
