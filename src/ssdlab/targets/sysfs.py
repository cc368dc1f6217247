"""Block device facts from sysfs and procfs: identity, sizes, partitions, holders, mounts, swap."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

SYS_BLOCK = Path("/sys/class/block")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def devno(path: str) -> tuple[int, int] | None:
    """(major, minor) of a block device node, or None if `path` is not one."""
    try:
        st = Path(path).stat()
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return os.major(st.st_rdev), os.minor(st.st_rdev)


def sys_dir(major: int, minor: int) -> Path | None:
    p = Path(f"/sys/dev/block/{major}:{minor}")
    return p.resolve() if p.exists() else None


def partitions(sysdir: Path) -> list[Path]:
    """sysfs directories of the partitions of a whole disk."""
    return sorted(d for d in sysdir.iterdir() if d.is_dir() and (d / "partition").exists())


def devno_of(sysdir: Path) -> tuple[int, int] | None:
    text = _read(sysdir / "dev")
    if ":" not in text:
        return None
    a, b = text.split(":", 1)
    return int(a), int(b)


def holders(sysdir: Path) -> list[str]:
    h = sysdir / "holders"
    try:
        return sorted(p.name for p in h.iterdir())
    except OSError:
        return []


def mounted_devnos() -> dict[tuple[int, int], str]:
    """(major, minor) -> mount point, from /proc/self/mountinfo (names do not matter, numbers do)."""
    out: dict[tuple[int, int], str] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        fields = line.split()
        if len(fields) > 4 and ":" in fields[2]:
            a, b = fields[2].split(":", 1)
            if a.isdigit() and b.isdigit():
                out.setdefault((int(a), int(b)), fields[4])
    return out


def swap_devnos() -> set[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    try:
        lines = Path("/proc/swaps").read_text(encoding="utf-8").splitlines()[1:]
    except OSError:
        return out
    for line in lines:
        name = line.split()[0] if line.split() else ""
        d = devno(name.replace("\\040", " "))
        if d:
            out.add(d)
    return out


def signature(dev_path: str) -> str:
    """Filesystem / partition-table / RAID signature found on the device ('' when none).

    Uses blkid's low-level probe (no cache) when available; otherwise checks the common magics itself.
    """
    blkid = shutil.which("blkid") or ("/sbin/blkid" if Path("/sbin/blkid").exists() else None)
    if blkid:
        try:
            res = subprocess.run([blkid, "-p", "-o", "export", dev_path], capture_output=True, text=True,
                                 timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            res = None
        if res is not None and res.returncode in (0, 2):
            if res.returncode == 2:
                return ""
            info = dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)
            kind = info.get("TYPE") or info.get("PTTYPE") or info.get("USAGE") or "unknown"
            what = "partition table" if "PTTYPE" in info and "TYPE" not in info else "signature"
            return f"{kind} {what}"
    return _magic_signature(dev_path)


def _magic_signature(dev_path: str) -> str:
    try:
        with Path(dev_path).open("rb") as fh:
            head = fh.read(69 * 1024)
    except OSError:
        return ""
    if len(head) >= 520 and head[512:520] == b"EFI PART":
        return "gpt partition table"
    if len(head) >= 1082 and head[1080:1082] == b"\x53\xef":
        return "ext2/3/4 signature"
    if head[:4] == b"XFSB":
        return "xfs signature"
    if len(head) >= 65608 + 8 and head[65600:65608] == b"_BHRfS_M":
        return "btrfs signature"
    if len(head) >= 4096 + 10 and head[4086:4096] in (b"SWAPSPACE2", b"SWAP-SPACE"):
        return "swap signature"
    if len(head) >= 512 and head[510:512] == b"\x55\xaa" and any(head[446:510]):
        return "dos partition table"
    return ""


def identity(sysdir: Path) -> dict[str, Any]:
    """Model, serial, firmware, vendor, transport from sysfs (whole disk for partitions)."""
    disk = sysdir.parent if (sysdir / "partition").exists() else sysdir
    dev = disk / "device"
    ident: dict[str, Any] = {"name": disk.name}
    for key, files in {
        "model": ("model",), "serial": ("serial", "wwid"), "firmware": ("firmware_rev", "rev"),
        "vendor": ("vendor",), "transport": ("transport",),
    }.items():
        for f in files:
            value = _read(dev / f)
            if value:
                ident[key] = value
                break
    backing = _read(disk / "loop" / "backing_file")
    if backing:
        ident["loop_backing_file"] = backing
        ident["loop_direct_io"] = _read(disk / "loop" / "dio") == "1"
        ident.setdefault("model", "Linux loop device")
    ident["rotational"] = _read(disk / "queue" / "rotational") == "1"
    ident["scheduler"] = _read(disk / "queue" / "scheduler")
    wc = _read(disk / "queue" / "write_cache")
    if wc:
        ident["write_cache"] = wc
    if disk.name.startswith("nvme"):
        ident.update(_nvme_cli(disk.name))
    return ident


def _nvme_cli(name: str) -> dict[str, Any]:
    nvme = shutil.which("nvme")
    if not nvme:
        return {}
    try:
        res = subprocess.run([nvme, "id-ctrl", f"/dev/{name}", "-o", "json"], capture_output=True, text=True,
                             timeout=20, check=False)
        data = json.loads(res.stdout) if res.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
        return {}
    out = {k: str(data[src]).strip() for k, src in (("model", "mn"), ("serial", "sn"), ("firmware", "fr"))
           if src in data}
    out["identity_source"] = "nvme-cli"
    return out


def block_sizes(sysdir: Path) -> tuple[int, int]:
    disk = sysdir.parent if (sysdir / "partition").exists() else sysdir
    lbs = _read(disk / "queue" / "logical_block_size")
    pbs = _read(disk / "queue" / "physical_block_size")
    return int(lbs or 512), int(pbs or lbs or 512)


def size_bytes(sysdir: Path) -> int:
    return int(_read(sysdir / "size") or 0) * 512
