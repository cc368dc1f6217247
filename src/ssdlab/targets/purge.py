"""Purge (return a target to a fresh-out-of-box-like state) and device write-cache control.

Block devices: NVMe format with user-data erase or sanitize (nvme-cli), or a discard of the whole device
(blkdiscard). File targets: punch the file's blocks out, or delete and re-create it, then re-allocate it
at full size without writing data (unwritten extents read as zeros, like deallocated LBAs on an SSD), or
as a last resort lay it out again with random data. The chosen method is returned in the line the run records.

The write cache is a device setting (NVMe feature 6, ATA `hdparm -W`), set and read back; when that is not
possible it is recorded as unknown. It is never emulated by dropping direct I/O.

Every external command goes through `RUNNER` (an argv list, no shell), so tests can substitute it; nvme-cli
command lines and the parsing of its output come from drivecli.py, the one nvme-cli/smartctl boundary.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ssdlab.errors import TargetError, UsageError
from ssdlab.targets import drivecli, owned
from ssdlab.targets.drivecli import Runner, nvme_controller
from ssdlab.units import format_bytes

FILE_METHODS = ("punch", "recreate", "rewrite")
BLOCK_METHODS = ("nvme-sanitize", "nvme-format", "blkdiscard")
SANITIZE_TIMEOUT_S = 6 * 3600.0

_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=SANITIZE_TIMEOUT_S)


RUNNER: Runner = _run


def _call(argv: list[str], what: str) -> str:
    """Run a command; raise TargetError with its stderr when it fails; return its stdout."""
    try:
        return drivecli.run_text(RUNNER, argv, f"{what} failed")
    except drivecli.ToolError as exc:
        raise TargetError(str(exc)) from exc


def choose(method: str, available: list[str], target_name: str, why_not: str = "") -> str:
    """The requested method if the target offers it; the best available one when none was requested.
    `why_not` says why methods the target might have had are not offered (appended to the refusal)."""
    because = f" ({why_not})" if why_not else ""
    if not available:
        raise TargetError(f"{target_name} offers no purge method{because} (install nvme-cli / util-linux, or use a "
                          "file)")
    if not method:
        return available[0]
    if method not in available:
        raise UsageError(f"--purge {method}: not available for {target_name}; available: {', '.join(available)}"
                         + because)
    return method


# ------------------------------------------------------------------ files

def _punch(fd: int, length: int) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
    if libc.fallocate(fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, 0, length) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _allocate(fd: int, size: int) -> str:
    """Allocate the file's blocks without writing data; returns how."""
    try:
        os.posix_fallocate(fd, 0, size)
        return "re-allocated as unwritten extents (reads return zeros, like deallocated LBAs)"
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            raise
        os.ftruncate(fd, size)
        return "left sparse (the filesystem cannot preallocate)"


def purge_file(path: Path, size: int, method: str, layout: Callable[[], list[str]]) -> str:
    """Purge a file target with `method` (punch | recreate | rewrite); returns what was done."""
    try:
        if method == "punch":
            with path.open("r+b") as fh:
                _punch(fh.fileno(), max(size, path.stat().st_size))
                how = _allocate(fh.fileno(), size)
                os.fsync(fh.fileno())
            return f"purge punch: punched out all {format_bytes(size)} of {path} (fallocate PUNCH_HOLE), {how}"
        if method == "recreate":
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            fd = owned.create_exclusive(path)  # a new inode, tagged as ssdlab's own
            try:
                how = _allocate(fd, size)
                os.fsync(fd)
            finally:
                os.close(fd)
            return f"purge recreate: deleted and re-created {path} ({format_bytes(size)}), {how}"
        if method == "rewrite":
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            notes = layout()
            return f"purge rewrite: deleted {path} and laid it out again ({'; '.join(notes) or 'done'})"
    except OSError as exc:
        raise TargetError(f"purge {method} of {path} failed: {exc.strerror or exc}") from exc
    raise UsageError(f"--purge {method}: not a file purge method ({', '.join(FILE_METHODS)})")


def file_write_cache(enabled: bool) -> str:
    """A file target cannot set the backing device's write cache: recorded as unknown."""
    want = "enabled" if enabled else "disabled"
    return (f"write cache: unknown (requested {want}; a file target does not change the backing device's "
            "cache, and direct I/O stays on)")


# ------------------------------------------------------------------ block devices

def _namespaces_of(ctrl: str) -> int:
    sysdir = Path("/sys/class/nvme") / Path(ctrl).name
    try:
        return sum(1 for p in sysdir.iterdir() if re.match(r"^nvme\d+(c\d+)?n\d+$", p.name))
    except OSError:
        return 0


def _capabilities(ctrl: str) -> dict[str, bool] | None:
    """What the controller says it can do (drivecli.parse_nvme_capabilities), None when id-ctrl cannot be read."""
    try:
        doc = drivecli.load_json(_call(drivecli.nvme_id_ctrl(ctrl), "nvme id-ctrl"), "nvme id-ctrl")
    except (TargetError, drivecli.ToolError):
        return None
    return drivecli.parse_nvme_capabilities(doc)


def _discard_supported(sysdir: Path | None) -> bool:
    if sysdir is None:
        return False
    try:
        return int((sysdir / "queue" / "discard_max_bytes").read_text().strip() or 0) > 0
    except (OSError, ValueError):
        return False


def block_offer(dev: str, sysdir: Path | None, limited: bool) -> tuple[list[str], list[str]]:
    """(purge methods for a block device, best first; why others are not offered), from what the device reports.

    NVMe (nvme-cli): sanitize (block erase: SANICAP bit 1) acts on the whole controller, so it is offered only
    when the namespace is the controller's only one; format with user-data erase when OACS says Format NVM is
    supported, and, when the controller has several namespaces, only if FNA says a format (and its erase) stays
    within the namespace. A capacity-limited run only discards its own span: format and sanitize would erase
    beyond it. blkdiscard when the kernel reports discard support."""
    out: list[str] = []
    why: list[str] = []
    ctrl = _controller_of(dev, sysdir)
    if ctrl and limited:
        why.append("nvme-format and nvme-sanitize would erase beyond the run's --capacity")
    elif ctrl and not shutil.which("nvme"):
        why.append(f"nvme-format and nvme-sanitize need {drivecli.missing_reason('nvme')}")
    elif ctrl:
        caps = _capabilities(ctrl)
        several = _namespaces_of(ctrl) > 1
        if caps is None:  # id-ctrl unreadable: format is the one mandatory-in-practice method; the drive decides
            out.append("nvme-format")
        else:
            _nvme_offer(caps, several, ctrl, out, why)
    if not shutil.which("blkdiscard"):
        why.append("blkdiscard is not installed (util-linux)")
    elif _discard_supported(sysdir):
        out.append("blkdiscard")
    else:
        why.append(f"{dev} does not support discard (sysfs discard_max_bytes is 0)")
    return out, why


def _nvme_offer(caps: dict[str, bool], several: bool, ctrl: str, out: list[str], why: list[str]) -> None:
    if not caps["sanitize_block"]:
        why.append(f"{ctrl} does not offer sanitize block erase (id-ctrl SANICAP bit 1 is 0)")
    elif several:
        why.append(f"nvme-sanitize would erase every namespace of {ctrl}, not only this one")
    else:
        out.append("nvme-sanitize")
    if not caps["format"]:
        why.append(f"{ctrl} does not support Format NVM (id-ctrl OACS bit 1 is 0)")
    elif several and (caps["format_all_namespaces"] or caps["erase_all_namespaces"]):
        why.append(f"nvme-format would erase every namespace of {ctrl} (id-ctrl FNA: a format or its erase applies "
                   "to all namespaces)")
    else:
        out.append("nvme-format")


def block_methods(dev: str, sysdir: Path | None, limited: bool) -> list[str]:
    """Purge methods for a block device, best first (block_offer)."""
    return block_offer(dev, sysdir, limited)[0]


def _controller_of(dev: str, sysdir: Path | None) -> str | None:
    """The NVMe controller node of a namespace (sysfs first: a multipath namespace is named after its subsystem)."""
    found = drivecli.nvme_controller_of(sysdir) if sysdir is not None and nvme_controller(dev) else None
    return found or nvme_controller(dev)


def purge_device(dev: str, sysdir: Path | None, requested: str, span: int, limited: bool, name: str) -> str:
    """Purge a block device: the requested method, or the best one the device offers; when that one is refused,
    the next, and so on. Returns the line the run records (naming any refused method); one line naming every
    refusal when all of them are refused, so the run stops before anything is measured."""
    offered, why_not = block_offer(dev, sysdir, limited)
    first = choose(requested, offered, name, "; ".join(why_not))
    ladder = [first] if requested else offered
    refused: list[str] = []
    for method in ladder:
        try:
            done = purge_block(dev, method, span, limited, sysdir)
        except TargetError as exc:
            refused.append(f"{method}: {exc}")
            continue
        return done + (f" (refused first: {'; '.join(refused)})" if refused else "")
    what = "every method it offers was refused" if len(ladder) > 1 else "the device refused it"
    raise TargetError(f"purge of {name} failed, {what}: {'; '.join(refused)}; nothing was measured")


def purge_block(dev: str, method: str, span: int, limited: bool, sysdir: Path | None = None) -> str:
    """Purge a block device with `method`; returns what was done."""
    ctrl = _controller_of(dev, sysdir)
    if method == "nvme-format" and ctrl:
        _call(drivecli.nvme_format(dev, ses=1), "nvme format")
        return f"purge nvme-format: nvme format {dev} --ses=1 (user data erase)"
    if method == "nvme-sanitize" and ctrl:
        _call(drivecli.nvme_sanitize(ctrl, sanact=2), "nvme sanitize")
        waited = _wait_sanitize(ctrl)
        return f"purge nvme-sanitize: block erase of {ctrl}, completed after {waited:.0f} s"
    if method == "blkdiscard":
        # -f: blkdiscard (util-linux >= 2.36) refuses a device that carries a signature unless forced; the write
        # gate has already decided (a signature needs --destructive), so blkdiscard's own check would only
        # refuse what the user agreed to
        argv = ["blkdiscard", "-f", "-o", "0", "-l", str(span), dev] if limited else ["blkdiscard", "-f", dev]
        _call(argv, "blkdiscard")
        scope = f"the first {format_bytes(span)}" if limited else "the whole device"
        return f"purge blkdiscard: discarded {scope} of {dev}"
    raise UsageError(f"--purge {method}: not a method for {dev} ({', '.join(BLOCK_METHODS)})")


def _wait_sanitize(ctrl: str, poll_s: float = 5.0) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < SANITIZE_TIMEOUT_S:
        try:
            doc = json.loads(_call(drivecli.nvme_sanitize_log(ctrl), "nvme sanitize-log"))
        except json.JSONDecodeError as exc:
            raise TargetError(f"nvme sanitize-log of {ctrl}: unreadable output ({exc})") from exc
        log = next(iter(doc.values())) if doc and all(isinstance(v, dict) for v in doc.values()) else doc
        sstat = int(log.get("sstat", 0))
        state = sstat & 0x7
        if state == 1 and int(log.get("sprog", 65535)) == 65535:
            return time.monotonic() - t0
        if state == 3:
            raise TargetError(f"nvme sanitize of {ctrl} failed (sanitize log sstat {sstat:#x})")
        time.sleep(poll_s)
    raise TargetError(f"nvme sanitize of {ctrl} did not finish within {SANITIZE_TIMEOUT_S / 3600:.0f} h")


_HDPARM = re.compile(r"write-caching\s*=\s*(\d)")


def set_block_write_cache(dev: str, enabled: bool) -> str:
    """Set the device's volatile write cache and read it back; 'unknown' when neither tool can."""
    want = "enabled" if enabled else "disabled"
    bit = 1 if enabled else 0
    ctrl = nvme_controller(dev)
    if ctrl and shutil.which("nvme"):
        fid = drivecli.FEATURE_VOLATILE_WRITE_CACHE
        try:
            _call(drivecli.nvme_set_feature(ctrl, fid, bit), "nvme set-feature 6")
            out = _call(drivecli.nvme_get_feature(ctrl, fid), "nvme get-feature 6")
        except TargetError as exc:
            return f"write cache: unknown (requested {want}; {exc})"
        value = drivecli.parse_feature_value(out)
        if value is None:
            return f"write cache: unknown (requested {want}; nvme get-feature 6 printed no value)"
        state = "enabled" if value & 1 else "disabled"
        return f"write cache: {state} (requested {want}; nvme set-feature 6, read back {value:#x})"
    if Path(dev).name.startswith("sd") and shutil.which("hdparm"):
        try:
            _call(["hdparm", f"-W{bit}", dev], "hdparm -W")
            out = _call(["hdparm", "-W", dev], "hdparm -W")
        except TargetError as exc:
            return f"write cache: unknown (requested {want}; {exc})"
        m = _HDPARM.search(out)
        if not m:
            return f"write cache: unknown (requested {want}; hdparm -W printed no state)"
        state = "enabled" if m.group(1) == "1" else "disabled"
        return f"write cache: {state} (requested {want}; hdparm -W{bit}, read back {m.group(1)})"
    return (f"write cache: unknown (requested {want}; no nvme-cli/hdparm control for {dev}; "
            "direct I/O stays on)")


def write_cache_state(line: str) -> str:
    """'enabled' | 'disabled' | 'not applicable' | 'unknown' from a recorded purge/write-cache line."""
    m = re.search(r"write cache: (enabled|disabled|not applicable|unknown)", line)
    return m.group(1) if m else "unknown"
