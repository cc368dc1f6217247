"""Purge methods of file targets (real files) and the nvme-cli/hdparm handling (with a fake command runner)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ssdlab.errors import TargetError, UsageError
from ssdlab.run.target import parse_target
from ssdlab.targets import purge

MiB = 1024**2


def _file_target(tmp_path: Path) -> tuple[Path, Any]:
    path = tmp_path / "t.dat"
    target = parse_target(f"file:{path}?size=4MiB")
    target.prepare(True)
    return path, target


@pytest.mark.parametrize("method", ["punch", "recreate"])
def test_file_purge_leaves_a_full_size_file_that_reads_zeros(tmp_path: Path, method: str) -> None:
    path, target = _file_target(tmp_path)
    assert path.read_bytes()[:4096] != bytes(4096)  # laid out with random data
    line = target.purge(method)
    assert line.startswith(f"purge {method}:")
    assert path.stat().st_size == 4 * MiB
    assert path.read_bytes() == bytes(4 * MiB)


def test_file_purge_rewrite_lays_out_again(tmp_path: Path) -> None:
    path, target = _file_target(tmp_path)
    before = path.read_bytes()[:4096]
    line = target.purge("rewrite")
    assert "laid it out again" in line
    after = path.read_bytes()[:4096]
    assert path.stat().st_size == 4 * MiB
    assert after != bytes(4096)
    assert after != before


def test_default_method_is_the_best_available(tmp_path: Path) -> None:
    _path, target = _file_target(tmp_path)
    assert target.purge_methods()[0] == "punch"
    assert target.purge("").startswith("purge punch:")


def test_unknown_method_names_the_available_ones(tmp_path: Path) -> None:
    _path, target = _file_target(tmp_path)
    with pytest.raises(UsageError, match="available: punch, recreate, rewrite"):
        target.purge("nvme-format")


def test_file_write_cache_is_recorded_unknown(tmp_path: Path) -> None:
    _path, target = _file_target(tmp_path)
    line = target.set_write_cache(False)
    assert line.startswith("write cache: unknown (requested disabled")
    assert purge.write_cache_state(line) == "unknown"


class FakeRunner:
    """Records argv lists and answers from a table of (argv prefix -> (rc, stdout))."""

    def __init__(self, answers: dict[tuple[str, ...], tuple[int, str]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        self.calls.append(argv)
        for prefix, (rc, out) in self.answers.items():
            if tuple(argv[:len(prefix)]) == prefix:
                return subprocess.CompletedProcess(argv, rc, out, "" if rc == 0 else "device busy")
        return subprocess.CompletedProcess(argv, 1, "", "unexpected command")


def test_nvme_write_cache_is_set_and_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    readback = "get-feature:0x06 (Volatile Write Cache), Current value:0x00000000"
    fake = FakeRunner({("nvme", "set-feature"): (0, "set-feature:0x06, value:0"),
                       ("nvme", "get-feature"): (0, readback)})
    monkeypatch.setattr(purge, "RUNNER", fake)
    monkeypatch.setattr(purge.shutil, "which", lambda name: f"/usr/sbin/{name}")
    line = purge.set_block_write_cache("/dev/nvme0n1", False)
    assert fake.calls[0] == ["nvme", "set-feature", "/dev/nvme0", "-f", "6", "-v", "0"]  # the controller
    assert line.startswith("write cache: disabled")
    assert "read back 0x0" in line
    fake.answers[("nvme", "get-feature")] = (0, "get-feature:0x06 (Volatile Write Cache), Current value:0x1")
    assert purge.write_cache_state(purge.set_block_write_cache("/dev/nvme0n1", True)) == "enabled"


def test_nvme_without_volatile_cache_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(purge, "RUNNER", FakeRunner({("nvme", "set-feature"): (1, "")}))
    monkeypatch.setattr(purge.shutil, "which", lambda name: f"/usr/sbin/{name}")
    line = purge.set_block_write_cache("/dev/nvme0n1", False)
    assert line.startswith("write cache: unknown")
    assert "device busy" in line


def test_sata_uses_hdparm_and_others_are_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeRunner({("hdparm", "-W0"): (0, ""), ("hdparm", "-W"): (0, "/dev/sda:\n write-caching =  0 (off)\n")})
    monkeypatch.setattr(purge, "RUNNER", fake)
    monkeypatch.setattr(purge.shutil, "which", lambda name: f"/usr/sbin/{name}")
    assert purge.set_block_write_cache("/dev/sda", False).startswith("write cache: disabled")
    assert purge.set_block_write_cache("/dev/vdb", False).startswith("write cache: unknown")


def test_block_purge_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeRunner({("nvme", "format"): (0, "Success"), ("blkdiscard",): (0, "")})
    monkeypatch.setattr(purge, "RUNNER", fake)
    assert "user data erase" in purge.purge_block("/dev/nvme0n1", "nvme-format", 10 * MiB, False)
    assert fake.calls[-1] == ["nvme", "format", "/dev/nvme0n1", "--ses=1", "--force"]
    assert "the first 10 MiB" in purge.purge_block("/dev/sdb", "blkdiscard", 10 * MiB, True)
    # -f: the write gate already decided about signatures (--destructive); blkdiscard's own check would refuse
    assert fake.calls[-1] == ["blkdiscard", "-f", "-o", "0", "-l", str(10 * MiB), "/dev/sdb"]
    purge.purge_block("/dev/sdb", "blkdiscard", 10 * MiB, False)
    assert fake.calls[-1] == ["blkdiscard", "-f", "/dev/sdb"]
    fake.answers[("nvme", "format")] = (1, "")
    with pytest.raises(TargetError, match="nvme format failed"):
        purge.purge_block("/dev/nvme0n1", "nvme-format", 10 * MiB, False)


HEALTH = Path(__file__).parent.parent / "data" / "health"
QEMU_ID_CTRL = (HEALTH / "nvme-cli" / "id-ctrl-2.3-qemu-7.2.json").read_text(encoding="utf-8")  # VM tier's


def _controller(monkeypatch: pytest.MonkeyPatch, id_ctrl: str = QEMU_ID_CTRL, namespaces: int = 1,
                **changes: int) -> FakeRunner:
    """A runner whose controller answers id-ctrl with `id_ctrl` (fields replaced by `changes`) and has
    `namespaces` namespaces; discard is supported and every tool is installed."""
    doc = json.loads(id_ctrl)
    doc.update(changes)
    fake = FakeRunner({("nvme", "id-ctrl"): (0, json.dumps(doc))})
    monkeypatch.setattr(purge, "RUNNER", fake)
    monkeypatch.setattr(purge.shutil, "which", lambda name: f"/usr/sbin/{name}")
    monkeypatch.setattr(purge, "_discard_supported", lambda sysdir: True)
    monkeypatch.setattr(purge, "_namespaces_of", lambda ctrl: namespaces)
    return fake


def test_qemu_controller_offers_format_then_discard(monkeypatch: pytest.MonkeyPatch) -> None:
    _controller(monkeypatch)  # SANICAP 0, OACS bit 1, FNA 0: what QEMU's controller reports
    offered, why = purge.block_offer("/dev/nvme0n1", None, limited=False)
    assert offered == ["nvme-format", "blkdiscard"]
    assert why == ["/dev/nvme0 does not offer sanitize block erase (id-ctrl SANICAP bit 1 is 0)"]
    # several namespaces with FNA 0: format stays within the namespace and is still offered
    _controller(monkeypatch, namespaces=3)
    assert purge.block_methods("/dev/nvme0n1", None, limited=False) == ["nvme-format", "blkdiscard"]


def test_sanitize_is_best_on_a_single_namespace_controller_that_offers_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _controller(monkeypatch, sanicap=0x2)
    assert purge.block_methods("/dev/nvme0n1", None, limited=False) == ["nvme-sanitize", "nvme-format", "blkdiscard"]
    _controller(monkeypatch, sanicap=0x2, namespaces=2)
    offered, why = purge.block_offer("/dev/nvme0n1", None, limited=False)
    assert offered == ["nvme-format", "blkdiscard"]
    assert "nvme-sanitize would erase every namespace of /dev/nvme0, not only this one" in why


@pytest.mark.parametrize("fna", [0x1, 0x2])
def test_format_that_erases_every_namespace_is_not_offered_with_several(monkeypatch: pytest.MonkeyPatch,
                                                                         fna: int) -> None:
    _controller(monkeypatch, fna=fna, namespaces=2)
    offered, why = purge.block_offer("/dev/nvme0n1", None, limited=False)
    assert offered == ["blkdiscard"]
    assert any("nvme-format would erase every namespace of /dev/nvme0" in w for w in why)
    _controller(monkeypatch, fna=fna, namespaces=1)  # alone on its controller: nothing else to erase
    assert purge.block_methods("/dev/nvme0n1", None, limited=False) == ["nvme-format", "blkdiscard"]


def test_a_controller_without_format_nvm_is_not_formatted(monkeypatch: pytest.MonkeyPatch) -> None:
    _controller(monkeypatch, oacs=0x8)
    offered, why = purge.block_offer("/dev/nvme0n1", None, limited=False)
    assert offered == ["blkdiscard"]
    assert "/dev/nvme0 does not support Format NVM (id-ctrl OACS bit 1 is 0)" in why
    with pytest.raises(UsageError, match=r"--purge nvme-format: not available .*OACS bit 1 is 0"):
        purge.choose("nvme-format", offered, "/dev/nvme0n1", "; ".join(why))


def test_limited_capacity_never_offers_whole_device_erase(monkeypatch: pytest.MonkeyPatch) -> None:
    _controller(monkeypatch, sanicap=0x2)
    assert purge.block_methods("/dev/nvme0n1", None, limited=True) == ["blkdiscard"]
    assert purge.block_methods("/dev/nvme0n1p1", None, limited=False) == ["blkdiscard"]  # a partition
    with pytest.raises(TargetError):
        purge.choose("", [], "/dev/x")


def test_a_refused_method_falls_back_to_the_next_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _controller(monkeypatch)
    fake.answers[("nvme", "format")] = (1, "")
    fake.answers[("blkdiscard",)] = (0, "")
    line = purge.purge_device("/dev/nvme0n1", None, "", 10 * MiB, False, "/dev/nvme0n1")
    assert line.startswith("purge blkdiscard: discarded the whole device of /dev/nvme0n1 (refused first: "
                           "nvme-format: nvme format failed: ")
    assert [c[0] for c in fake.calls if c[:2] != ["nvme", "id-ctrl"]] == ["nvme", "blkdiscard"]


def test_a_controller_that_refuses_every_method_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _controller(monkeypatch)
    fake.answers[("nvme", "format")] = (1, "")
    fake.answers[("blkdiscard",)] = (1, "")
    with pytest.raises(TargetError) as err:
        purge.purge_device("/dev/nvme0n1", None, "", 10 * MiB, False, "/dev/nvme0n1")
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("purge of /dev/nvme0n1 failed, every method it offers was refused: nvme-format: ")
    assert "; blkdiscard: blkdiscard failed" in text
    assert text.endswith("nothing was measured")


def test_a_requested_method_is_the_only_one_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _controller(monkeypatch)
    fake.answers[("nvme", "format")] = (1, "")
    fake.answers[("blkdiscard",)] = (0, "")
    with pytest.raises(TargetError, match="failed, the device refused it: nvme-format: "):
        purge.purge_device("/dev/nvme0n1", None, "nvme-format", 10 * MiB, False, "/dev/nvme0n1")
    assert not [c for c in fake.calls if c[0] == "blkdiscard"]
