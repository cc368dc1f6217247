"""Block device facts from sysfs and procfs: identity, sizes, partitions, holders, mounts, swap, read-only flags,
exclusive claims and loop devices (what backs them)."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import stat
import struct
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import TargetError

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


def whole_disk(sysdir: Path) -> Path:
    """The sysfs directory of the disk itself: a partition's parent, else `sysdir`."""
    return sysdir.parent if (sysdir / "partition").exists() else sysdir


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
        if res is not None and res.returncode == 8:
            return "ambivalent signature (blkid found several conflicting ones)"
        if res is not None and res.returncode in (0, 2):
            if res.returncode == 2:
                return ""
            return _blkid_signature(res.stdout)
    return _magic_signature(dev_path)


Fetch = Callable[[list[tuple[int, int]]], list[tuple[int, bytes]]]

PROBE_ROUNDS = 16  # blkid runs at most: each may ask for bytes the one before showed it needs (a GPT's backup)
PROBE_BYTES = 64 * 1024**2  # bytes fetched at most, beyond the first and last MiB
_PROBE_ALIGN = 4096
_BLKID_READ = re.compile(rb"read: off=(\d+) len=(\d+)")


def signature_in(size: int, fetch: Fetch, span: int = 1024**2) -> str:
    """The signature (as `signature`) of a disk of `size` bytes that can only be read through `fetch` (ranges ->
    [(offset, data)]; an NBD export): its first and last `span` bytes are placed in a sparse private copy of its
    size, the rest reads as zeros, and blkid probes the copy. blkid reports every byte range it reads
    (LIBBLKID_DEBUG=lowprobe); ranges it read that were not fetched (a VMFS volume at 1 MiB, LUKS2 secondary
    headers up to 4 MiB, a GPT backup where the primary header says) are fetched and it probes again, until
    it reads nothing new. So the copy answers every read blkid makes, as the disk would. Where the copy cannot
    be as large as the disk, or this blkid does not report its reads, the first and last `span` bytes are
    checked as they are; a disk that needs more than PROBE_ROUNDS probes or PROBE_BYTES bytes cannot be
    checked (TargetError)."""
    ends = [(0, min(span, size))]
    if size > span:
        ends.append((max(span, size - span), size - max(span, size - span)))
    with tempfile.TemporaryDirectory(prefix="ssdlab-probe-") as tmp:
        path = Path(tmp) / "disk"
        with path.open("wb") as fh:
            try:
                fh.truncate(size)
            except OSError:  # larger than this filesystem's largest file: the head alone
                fh.seek(0)
                fh.write(fetch(ends[:1])[0][1])
                fh.close()
                return signature(str(path))
        have: list[tuple[int, int]] = []
        wanted = ends
        fetched = 0
        for _ in range(PROBE_ROUNDS):
            _place(path, fetch(wanted))
            have = _merged(have + wanted)
            fetched += sum(n for _, n in wanted)
            result, reads = _probe_reporting_reads(str(path))
            if reads is None:  # this blkid does not say what it reads: what was fetched is what is checked
                return signature(str(path))
            wanted = _missing(reads, have, size)
            if not wanted:
                return result
            if fetched + sum(n for _, n in wanted) > PROBE_BYTES + 2 * span:
                break
        raise TargetError(f"blkid kept asking for more of it than the check reads ({PROBE_ROUNDS} probes, "
                          f"{PROBE_BYTES // 1024**2} MiB)")


def _place(path: Path, pieces: list[tuple[int, bytes]]) -> None:
    with path.open("r+b") as fh:
        for offset, data in pieces:
            fh.seek(offset)
            fh.write(data)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(offset, length) ranges sorted, overlapping and touching ones joined."""
    out: list[tuple[int, int]] = []
    for off, n in sorted(r for r in ranges if r[1] > 0):
        if out and off <= out[-1][0] + out[-1][1]:
            last_off, last_n = out[-1]
            out[-1] = (last_off, max(last_n, off + n - last_off))
        else:
            out.append((off, n))
    return out


def _missing(reads: list[tuple[int, int]], have: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """The parts of `reads` not inside `have`, widened to whole 4 KiB blocks within the disk, joined."""
    out = []
    for off, n in reads:
        start = off - off % _PROBE_ALIGN
        end = min(size, -(-(off + n) // _PROBE_ALIGN) * _PROBE_ALIGN)
        if end > start and not any(h_off <= start and end <= h_off + h_n for h_off, h_n in have):
            out.append((start, end - start))
    return _merged(out)


def _probe_reporting_reads(path: str) -> tuple[str, list[tuple[int, int]] | None]:
    """(the signature blkid finds in `path`, the (offset, length) of every read it made); None for the reads when
    blkid is missing or does not report them."""
    blkid = shutil.which("blkid") or ("/sbin/blkid" if Path("/sbin/blkid").exists() else None)
    if blkid is None:
        return "", None
    try:
        res = subprocess.run([blkid, "-p", "-o", "export", path], capture_output=True, timeout=60, check=False,
                             env={**os.environ, "LIBBLKID_DEBUG": "lowprobe"})
    except (OSError, subprocess.TimeoutExpired):
        return "", None
    reads = [(int(a), int(b)) for a, b in _BLKID_READ.findall(res.stderr)]
    if not reads or res.returncode not in (0, 2, 8):
        return "", None
    if res.returncode == 8:
        return "ambivalent signature (blkid found several conflicting ones)", reads
    found = _blkid_signature(res.stdout.decode("utf-8", "replace")) if res.returncode == 0 else ""
    return found, reads


# keys blkid prints about the device node or, for a partition, its entry in the partition table: they say
# nothing about the contents (an empty partition has them all)
_NOT_CONTENT = ("DEVNAME", "PART_ENTRY_")


def _blkid_signature(export: str) -> str:
    """The signature named in `blkid -p -o export` output ('' when only partition-table entry keys remain)."""
    info = dict(line.split("=", 1) for line in export.splitlines() if "=" in line)
    content = {k: v for k, v in info.items() if not k.startswith(_NOT_CONTENT)}
    if not content:
        return ""
    kind = content.get("TYPE") or content.get("PTTYPE") or content.get("USAGE") or "unknown"
    what = "partition table" if "PTTYPE" in content and "TYPE" not in content else "signature"
    return f"{kind} {what}"


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
    disk = whole_disk(sysdir)
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
    from ssdlab.targets import drivecli

    tools = drivecli.TOOLS
    if not tools.has("nvme"):
        return {}
    try:
        ident = drivecli.parse_nvme_id_ctrl(tools.json(drivecli.nvme_id_ctrl(f"/dev/{name}"), "nvme id-ctrl"))
    except drivecli.ToolError:
        return {}
    out: dict[str, Any] = {k: ident[k] for k in ("model", "serial", "firmware") if k in ident}
    out["identity_source"] = "nvme-cli"
    return out


def block_sizes(sysdir: Path) -> tuple[int, int]:
    disk = whole_disk(sysdir)
    lbs = _read(disk / "queue" / "logical_block_size")
    pbs = _read(disk / "queue" / "physical_block_size")
    return int(lbs or 512), int(pbs or lbs or 512)


def size_bytes(sysdir: Path) -> int:
    return int(_read(sysdir / "size") or 0) * 512


def read_only(sysdir: Path) -> bool:
    """Whether the kernel marks the device (or, for a partition, it or its disk) read-only (sysfs `ro`)."""
    nodes = [sysdir, sysdir.parent] if (sysdir / "partition").exists() else [sysdir]
    return any(_read(n / "ro") == "1" for n in nodes)


def exclusive_open_error(dev_path: str) -> str:
    """'' when `dev_path` can be opened exclusively (O_EXCL), else why not. The kernel refuses an exclusive
    open of a block device that is mounted (in any mount namespace), swapped on, or claimed by md, dm, btrfs,
    bcache or another program's exclusive open; nothing is read or written."""
    try:
        fd = os.open(dev_path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return "the kernel refused an exclusive open (device busy)"
        return f"it cannot be opened ({exc.strerror or exc})"
    os.close(fd)
    return ""


def occupant(num: tuple[int, int]) -> tuple[int, int, int] | None:
    """What is behind the device number `num` now: (its disk's sequence number, the partition's first sector
    or 0, its size in sectors). The kernel gives every disk a new sequence number (sysfs `diskseq`, Linux 5.15)
    when it appears and whenever a loop device is attached or detached, so a device number that came to name
    another device, or a loop device attached to another file, differs here even when the number is the same.
    None when sysfs has no such device."""
    sdir = sys_dir(*num)
    if sdir is None:
        return None
    disk = whole_disk(sdir)
    seq = _read(disk / "diskseq")
    start = _read(sdir / "start") if disk != sdir else "0"
    size = _read(sdir / "size")
    return (int(seq) if seq.isdigit() else -1, int(start) if start.isdigit() else -1,
            int(size) if size.isdigit() else -1)


def lasting_identity(num: tuple[int, int]) -> dict[str, Any]:
    """What identifies the device `num` across reboots (which renumber devices and disk sequence numbers): the
    disk's WWID, serial and model from sysfs, a loop device's backing file (path, inode and offset, from the loop
    driver), the partition's first sector and the size. Only what the device has; reads sysfs only."""
    sdir = sys_dir(*num)
    if sdir is None:
        return {}
    disk = whole_disk(sdir)
    out: dict[str, Any] = {}
    for key, files in (("wwid", ("wwid", "device/wwid")), ("serial", ("serial", "device/serial")),
                       ("model", ("device/model",))):
        for f in files:
            value = _read(disk / f)
            if value:
                out[key] = value
                break
    loop = next((lb for lb in loop_backings() if lb.loop == f"/dev/{disk.name}"), None)
    if loop is not None:
        out["loop_backing"] = {"file": loop.backing_path, "inode": loop.file_ino, "offset": loop.offset,
                               "device": None if loop.rdev is None else f"{loop.rdev[0]}:{loop.rdev[1]}"}
    if disk != sdir:
        out["partition_start"] = int(_read(sdir / "start") or 0)
    out["size_bytes"] = size_bytes(sdir)
    return out


def writers(nums: set[tuple[int, int]]) -> dict[tuple[int, int], list[str]]:
    """Processes (other than this one) holding one of the block devices `nums` open for writing, per device:
    ['1234 (qemu-system-x86)', ...], from /proc/PID/fd and the access mode in /proc/PID/fdinfo. Such a program
    (a virtual machine's disk, a database on a raw device, another benchmark) uses the device without claiming
    it exclusively, so neither mounts nor holders nor an exclusive open show it."""
    out: dict[tuple[int, int], list[str]] = {}
    me = str(os.getpid())
    try:
        procs = [p for p in Path("/proc").iterdir() if p.name.isdigit() and p.name != me]
    except OSError:
        return out
    for proc in procs:
        try:
            fds = list((proc / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                st = fd.stat()
            except OSError:
                continue
            num = (os.major(st.st_rdev), os.minor(st.st_rdev))
            if not stat.S_ISBLK(st.st_mode) or num not in nums or not _open_for_writing(proc / "fdinfo" / fd.name):
                continue
            who = f"{proc.name} ({_read(proc / 'comm') or '?'})"
            if who not in out.setdefault(num, []):
                out[num].append(who)
    return out


def _open_for_writing(fdinfo: Path) -> bool:
    for line in _read(fdinfo).splitlines():
        if line.startswith("flags:"):
            return int(line.split()[1], 8) & os.O_ACCMODE != os.O_RDONLY
    return False


@dataclass(frozen=True)
class LoopBacking:
    """An attached loop device and the identity of the file or device behind it."""

    loop: str  # /dev/loopN
    devno: tuple[int, int] | None  # the loop device's own numbers
    backing_path: str  # as the kernel reports it (may end in ' (deleted)')
    file_dev: tuple[int, int] | None  # (major, minor) of the filesystem holding the backing inode
    file_ino: int | None
    rdev: tuple[int, int] | None  # when the backing file is a block device: its numbers
    offset: int = 0  # where the loop device starts in it (losetup -o)


_LOOP_GET_STATUS64 = 0x4C05
_LOOP_INFO64_SIZE = 232  # struct loop_info64 (linux/loop.h): lo_device, lo_inode, lo_rdevice, lo_offset first


def _dev_pair(encoded: int) -> tuple[int, int] | None:
    return (os.major(encoded), os.minor(encoded)) if encoded else None


def loop_backings() -> list[LoopBacking]:
    """Every attached loop device with its backing file's identity: device and inode numbers from the loop
    driver (LOOP_GET_STATUS64), which hold even when the backing path was renamed or deleted; the path from
    /sys/block/loopN/loop/backing_file as a fallback."""
    out = []
    for ldir in sorted(Path("/sys/block").glob("loop*")):
        backing = _read(ldir / "loop" / "backing_file")
        if not backing:
            continue  # not attached
        node = f"/dev/{ldir.name}"
        file_dev = rdev = None
        ino = None
        lo_offset = int(_read(ldir / "loop" / "offset") or 0)
        try:
            fd = os.open(node, os.O_RDONLY | os.O_CLOEXEC)
            try:
                buf = bytearray(_LOOP_INFO64_SIZE)
                fcntl.ioctl(fd, _LOOP_GET_STATUS64, buf)
            finally:
                os.close(fd)
            lo_device, lo_inode, lo_rdevice, lo_offset = struct.unpack_from("=QQQQ", buf)
            file_dev, ino, rdev = _dev_pair(lo_device), lo_inode, _dev_pair(lo_rdevice)
        except OSError:
            try:
                st = Path(backing.removesuffix(" (deleted)")).stat()
                file_dev, ino = (os.major(st.st_dev), os.minor(st.st_dev)), st.st_ino
                rdev = (os.major(st.st_rdev), os.minor(st.st_rdev)) if stat.S_ISBLK(st.st_mode) else None
            except OSError:
                pass
        out.append(LoopBacking(loop=node, devno=devno_of(ldir), backing_path=backing, file_dev=file_dev,
                               file_ino=ino, rdev=rdev, offset=lo_offset))
    return out


def loops_backed_by_device(num: tuple[int, int]) -> list[LoopBacking]:
    """Loop devices whose backing file is the block device `num`."""
    return [lb for lb in loop_backings() if lb.rdev == num]


def loops_backed_by_file(file_dev: tuple[int, int], ino: int, *, exclude: str = "") -> list[LoopBacking]:
    """Loop devices (other than `exclude`) whose backing file is the inode `ino` on filesystem `file_dev`."""
    return [lb for lb in loop_backings()
            if lb.file_dev == file_dev and lb.file_ino == ino and lb.rdev is None and lb.loop != exclude]


def in_use_text(lb: LoopBacking) -> str:
    """How a loop device is in use: 'mounted on /mnt/x', 'held by dm-0', or 'attached'."""
    if lb.devno is None:
        return "attached"
    mounts = mounted_devnos()
    sdir = sys_dir(*lb.devno)
    nodes = [sdir, *partitions(sdir)] if sdir is not None else []
    for node in nodes:
        num = devno_of(node)
        if num in mounts:
            return f"mounted on {mounts[num]}"
    for node in nodes:
        held = holders(node)
        if held:
            return f"held by {', '.join(held)}"
    if lb.devno in swap_devnos():
        return "used as swap"
    return "attached"


def swap_files() -> set[tuple[tuple[int, int], int]]:
    """(filesystem device, inode) of every regular file in use as swap."""
    out: set[tuple[tuple[int, int], int]] = set()
    try:
        lines = Path("/proc/swaps").read_text(encoding="utf-8").splitlines()[1:]
    except OSError:
        return out
    for line in lines:
        fields = line.split()
        if len(fields) < 2 or fields[1] != "file":
            continue
        try:
            st = Path(fields[0].replace("\\040", " ")).stat()
        except OSError:
            continue
        out.add(((os.major(st.st_dev), os.minor(st.st_dev)), st.st_ino))
    return out
