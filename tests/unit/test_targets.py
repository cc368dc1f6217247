"""Target strings and file/null targets (block devices are covered by the loop-device tests)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ssdlab.errors import TargetError, UsageError
from ssdlab.run.target import parse_target
from ssdlab.targets import BlockTarget, FileTarget, NullTarget, TargetOptions
from ssdlab.targets.spec import split_spec

MiB = 1024**2


@pytest.mark.parametrize(("text", "parsed"), [
    ("null", ("null", "", {})),
    ("null?size=2GiB", ("null", "", {"size": "2GiB"})),
    ("file:/tmp/x.dat?size=4GiB", ("file", "/tmp/x.dat", {"size": "4GiB"})),
    ("/dev/nvme0n1", ("", "/dev/nvme0n1", {})),
    ("relative/path.dat", ("", "relative/path.dat", {})),
    ("sim:pm9a3?seed=3&x=1", ("sim", "pm9a3", {"seed": "3", "x": "1"})),
], ids=["null", "null-size", "file", "dev", "relative", "scheme-with-params"])
def test_split_spec(text: str, parsed: tuple[str, str, dict[str, str]]) -> None:
    assert split_spec(text) == parsed


def test_null_target() -> None:
    t = parse_target("null?size=2GiB", TargetOptions(capacity=512 * MiB))
    assert isinstance(t, NullTarget)
    assert t.capacity() == 512 * MiB
    assert t.fio_options() == {"ioengine": "null", "size": 512 * MiB}
    assert t.hazards() == []
    assert not t.needs_write_consent()


def test_file_target_sizes(tmp_path: Path) -> None:
    spec = f"file:{tmp_path / 'a.dat'}"
    assert parse_target(spec).capacity() == 1024**3  # the 1 GiB default, as KDiskMark
    assert parse_target(spec + "?size=64MiB").capacity() == 64 * MiB
    assert parse_target(spec, TargetOptions(size=32 * MiB)).capacity() == 32 * MiB
    assert parse_target(spec + "?size=64MiB", TargetOptions(size=8 * MiB)).capacity() == 64 * MiB  # spec wins
    assert parse_target(spec + "?size=64MiB", TargetOptions(capacity=16 * MiB)).capacity() == 16 * MiB
    assert parse_target(spec + "?size=10000000").capacity() == 10000000 - 10000000 % 4096
    existing = tmp_path / "old.dat"
    existing.write_bytes(b"x" * (3 * MiB))
    assert parse_target(str(existing)).capacity() == 3 * MiB  # a plain path: an existing file keeps its size


def test_file_target_spec_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    t = parse_target("file:rel.dat?size=8MiB")
    assert t.spec == f"file:{tmp_path / 'rel.dat'}?size=8MiB"


def test_file_target_fio_options_escape_colons(tmp_path: Path) -> None:
    t = parse_target(f"file:{tmp_path / 'a:b.dat'}?size=8MiB", TargetOptions(ioengine="io_uring"))
    opts: dict[str, Any] = t.fio_options()
    assert opts["filename"] == str(tmp_path / "a\\:b.dat")
    assert (opts["ioengine"], opts["direct"], opts["size"]) == ("io_uring", 1, 8 * MiB)


@pytest.mark.parametrize(("name", "fragment"), [("a;b.dat", "';'"), ("a#b.dat", "'#'"), ("a$b.dat", "'$'")])
def test_file_paths_fio_would_misread_are_refused(tmp_path: Path, name: str, fragment: str) -> None:
    with pytest.raises(TargetError, match=re.escape(fragment)):
        parse_target(f"file:{tmp_path / name}?size=8MiB")


def test_file_target_errors(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="is a directory"):
        parse_target(f"file:{tmp_path}")
    with pytest.raises(TargetError, match="does not exist"):
        parse_target(f"file:{tmp_path / 'no' / 'x.dat'}")
    with pytest.raises(TargetError, match="too small"):
        parse_target(f"file:{tmp_path / 'x.dat'}?size=4k")
    with pytest.raises(UsageError, match="bad size"):
        parse_target(f"file:{tmp_path / 'x.dat'}?size=lots")
    with pytest.raises(UsageError, match="unknown target scheme"):
        parse_target("ftp:host/x")


def test_prepare_lays_out_random_data_once(tmp_path: Path) -> None:
    path = tmp_path / "t.dat"
    t = parse_target(f"file:{path}?size=4MiB")
    assert "will be created" in t.destroys()
    notes = t.prepare(writes=True)
    assert len(notes) == 1
    assert "laid out" in notes[0]
    data = path.read_bytes()
    assert len(data) == 4 * MiB
    assert len(set(data[:4096])) > 200  # random, not zeros or a repeated byte
    assert t.prepare(writes=True) == []  # already laid out: nothing written
    assert path.read_bytes() == data


def test_prepare_extends_a_short_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "t.dat"
    path.write_bytes(b"\1" * MiB)
    t = parse_target(f"file:{path}?size=3MiB")
    assert "existing file" in t.destroys()
    t.prepare(writes=True)
    assert path.stat().st_size == 3 * MiB
    assert path.read_bytes()[:MiB] == b"\1" * MiB  # the head is kept; only the missing part is written


def test_prepare_refuses_when_the_filesystem_is_too_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=MiB))
    t = parse_target(f"file:{tmp_path / 't.dat'}?size=8MiB")
    with pytest.raises(TargetError, match="not enough space"):
        t.prepare(writes=True)
    assert not (tmp_path / "t.dat").exists()


def test_info_of_a_file_target(tmp_path: Path) -> None:
    info = parse_target(f"file:{tmp_path / 't.dat'}?size=8MiB").info()
    assert info["kind"] == "file"
    assert info["capacity_bytes"] == 8 * MiB
    assert info["write_safe"] is True
    assert info["logical_block_size"] in (512, 4096)


def test_char_device_is_not_a_block_target() -> None:
    assert not BlockTarget.is_block_device("/dev/null")
    with pytest.raises(TargetError, match="not a block device"):
        parse_target("/dev/null")



def test_plain_path_of_a_regular_file_is_a_file_target(tmp_path: Path) -> None:
    assert isinstance(parse_target(str(tmp_path / "plain.dat")), FileTarget)


def _char_tree(root: Path, cls: str, name: str) -> Path:
    """/sys/dev/char/1:3 (the numbers of /dev/null, a character device every machine has) as a device of `cls`."""
    dev = root / "devices" / "pci0000:00" / "0000:00:01.0" / "0000:01:00.0" / "nvme" / name
    dev.mkdir(parents=True)
    (root / "class" / cls).mkdir(parents=True, exist_ok=True)
    (dev / "subsystem").symlink_to(root / "class" / cls)
    (root / "dev" / "char").mkdir(parents=True)
    (root / "dev" / "char" / "1:3").symlink_to(dev)
    return dev


def test_an_nvme_controllers_character_device_names_its_namespaces(tmp_path: Path) -> None:
    """`--target /dev/nvme0` (the controller, a character device): the error names the namespaces to use
    instead, not `file:` (seen on the VM tier's controller)."""
    from ssdlab.targets import identity
    from ssdlab.targets.blockdev import not_a_block_device

    ctrl = _char_tree(tmp_path, "nvme", "nvme0")
    ident = identity.resolve("/dev/null")
    assert not_a_block_device("/dev/nvme0", ident, tmp_path) == (
        "/dev/nvme0 is not a block device but NVMe controller nvme0: name a namespace (it has none now)")
    (ctrl / "nvme0n1").mkdir()  # a namespace of this controller alone
    (ctrl / "nvme0c0n2").mkdir()  # the hidden path of a multipath namespace: not a block device to name
    subsys = tmp_path / "class" / "nvme-subsystem" / "nvme-subsys3"
    for head in ("nvme3n2", "nvme3n10"):
        (subsys / head).mkdir(parents=True)
    (subsys / "nvme0").symlink_to(ctrl)
    other = tmp_path / "class" / "nvme-subsystem" / "nvme-subsys4"
    (other / "nvme4n1").mkdir(parents=True)  # another subsystem's namespace
    assert not_a_block_device("/dev/nvme0", ident, tmp_path) == (
        "/dev/nvme0 is not a block device but NVMe controller nvme0: name one of its namespaces: /dev/nvme0n1, "
        "/dev/nvme3n2, /dev/nvme3n10")


@pytest.mark.parametrize(("cls", "fragment"), [
    ("nvme-generic", "an NVMe namespace's generic character interface: name its block device (/dev/nvmeXnY"),
    ("mem", "a character device: name a block device (`lsblk` lists them)")])
def test_other_character_devices_say_what_they_are(tmp_path: Path, cls: str, fragment: str) -> None:
    from ssdlab.targets import identity
    from ssdlab.targets.blockdev import not_a_block_device

    _char_tree(tmp_path, cls, "ng0n1")
    assert not_a_block_device("/dev/x", identity.resolve("/dev/null"), tmp_path) == (
        f"/dev/x is not a block device but {fragment}" + ("; `nvme list` shows them)" if cls == "nvme-generic" else ""))
    assert not_a_block_device("/dev/x", identity.resolve("/dev/null"), tmp_path / "nowhere").endswith(
        "a character device: name a block device (`lsblk` lists them)")  # sysfs does not know it
