"""Fakes for drive-health tests: sysfs trees built under tmp_path and a tool runner that answers nvme/smartctl
command lines with outputs captured from real drives (tests/data/health/), keeping feature values as state so
set-feature/get-feature behave like a drive.

Nothing here invents a tool output: `answers` maps a subcommand to a captured file, and get-feature lines are
written in nvme-cli's own format (see tests/data/health/README.md).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ssdlab.targets.drivecli import Tools

HEALTH_DATA = Path(__file__).parent / "data" / "health"
FEATURE_NAMES = {2: "Power Management", 6: "Volatile Write Cache"}


def write(path: Path, text: str | bytes) -> Path:
    """Create `path` (and its parents) with `text`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def pcie_config(mps: int) -> bytes:
    """A 256-byte PCI config space whose PCI Express capability (at 0x70, after a PM capability at 0x40) has
    Device Control's Max_Payload_Size set to `mps`."""
    cfg = bytearray(256)
    cfg[0x06] = 0x10  # Status: capabilities list
    cfg[0x34] = 0x40
    cfg[0x40], cfg[0x41] = 0x01, 0x70  # power management, next at 0x70
    cfg[0x70], cfg[0x71] = 0x10, 0x00  # PCI Express, last
    code = {128: 0, 256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}[mps]
    cfg[0x78] = code << 5
    return bytes(cfg)


def nvme_tree(root: Path, *, speed: str = "16.0 GT/s PCIe", width: int = 4, max_speed: str = "16.0 GT/s PCIe",
              max_width: int = 4, port_speed: str = "16.0 GT/s PCIe", mps: int | None = 512,
              lbs: int = 512, size_sectors: int = 7814037168) -> Path:
    """/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/nvme/nvme0/nvme0n1 under `root`; returns the namespace."""
    port = root / "devices" / "pci0000:00" / "0000:00:01.1"
    write(port / "max_link_speed", port_speed + "\n")
    write(port / "max_link_width", f"{max_width}\n")
    pci = port / "0000:01:00.0"
    write(pci / "current_link_speed", speed + "\n")
    write(pci / "current_link_width", f"{width}\n")
    write(pci / "max_link_speed", max_speed + "\n")
    write(pci / "max_link_width", f"{max_width}\n")
    write(pci / "config", pcie_config(mps) if mps else bytes(64))
    ns = pci / "nvme" / "nvme0" / "nvme0n1"
    write(ns / "size", f"{size_sectors}\n")
    write(ns / "dev", "259:0\n")
    write(ns / "queue" / "logical_block_size", f"{lbs}\n")
    write(ns / "queue" / "physical_block_size", f"{lbs}\n")
    write(ns / "queue" / "rotational", "0\n")
    return ns


def sata_tree(root: Path, *, spd: str = "6.0 Gbps", hw: str = "6.0 Gbps", vendor: str = "ATA",
              cache_type: str = "write back") -> Path:
    """An AHCI port ata3 with disk sdb; returns the disk's sysfs directory."""
    ata = root / "devices" / "pci0000:00" / "0000:00:17.0" / "ata3"
    link = ata / "link3" / "ata_link" / "link3"
    write(link / "sata_spd", spd + "\n")
    write(link / "hw_sata_spd_limit", hw + "\n")
    write(link / "sata_spd_limit", "<unknown>\n")
    sdev = ata / "host2" / "target2:0:0" / "2:0:0:0"
    write(sdev / "vendor", vendor.ljust(8) + "\n")
    write(sdev / "scsi_disk" / "2:0:0:0" / "cache_type", cache_type + "\n")
    disk = sdev / "block" / "sdb"
    write(disk / "size", "976773168\n")
    write(disk / "queue" / "logical_block_size", "512\n")
    (disk / "device").symlink_to("../..")
    return disk


def feature_line(fid: int, value: int) -> str:
    """A `nvme get-feature` line in nvme-cli's printf("get-feature:%#0*x (%s), %s value:%#0*x\\n") format."""
    head = f"{fid:#04x}" if fid else "0"
    val = f"{value:#010x}" if value else "00000000"
    return f"get-feature:{head} ({FEATURE_NAMES.get(fid, 'Feature')}), Current value:{val}\n"


@dataclass
class FakeDrive:
    """Answers nvme/smartctl argv lists. `answers` maps a subcommand ('id-ctrl', 'smart-log', 'smartctl', ...)
    to a captured file under tests/data/health (or a callable returning (rc, stdout, stderr)); features hold
    the Set/Get Features state; `calls` records every argv; `on_call` runs before each answer."""

    answers: dict[str, str | Callable[[list[str]], tuple[int, str, str]]] = field(default_factory=dict)
    features: dict[int, int] = field(default_factory=lambda: {2: 0, 6: 1})
    installed: tuple[str, ...] = ("nvme",)
    refuse_set: set[int] = field(default_factory=set)
    calls: list[list[str]] = field(default_factory=list)
    on_call: Callable[[list[str]], None] | None = None

    def tools(self) -> Tools:
        return Tools(runner=self, which=lambda name: f"/usr/sbin/{name}" if name in self.installed else None)

    def __call__(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        if self.on_call is not None:
            self.on_call(argv)
        rc, out, err = self._answer(argv)
        return subprocess.CompletedProcess(argv, rc, out, err)

    def _answer(self, argv: list[str]) -> tuple[int, str, str]:
        tool = argv[0]
        if tool not in self.installed:
            return 127, "", f"{tool}: not found"
        sub = argv[1] if tool == "nvme" else "smartctl"
        if sub in ("get-feature", "set-feature"):
            fid = int(argv[argv.index("-f") + 1])
            if sub == "set-feature":
                if fid in self.refuse_set:
                    return 1, "", "NVMe status: Invalid Field in Command"
                self.features[fid] = int(argv[argv.index("-v") + 1])
                return 0, f"set-feature:{fid:#04x} ({FEATURE_NAMES.get(fid)}), value:{self.features[fid]:#010x}\n", ""
            if fid not in self.features:
                return 1, "", "NVMe status: Invalid Field in Command"
            return 0, feature_line(fid, self.features[fid]), ""
        answer = self.answers.get(sub)
        if answer is None:
            return 1, "", f"NVMe status: Invalid Command Opcode ({sub} not answered by the fake)"
        if callable(answer):
            return answer(argv)
        return 0, (HEALTH_DATA / answer).read_text(encoding="utf-8"), ""

    def set_calls(self, fid: int) -> list[int]:
        """Values written with set-feature for feature `fid`, in order."""
        return [int(c[c.index("-v") + 1]) for c in self.calls if c[:2] == ["nvme", "set-feature"]
                and int(c[c.index("-f") + 1]) == fid]
