"""nbdkit targets: an NBD server ssdlab starts for the run, with injected faults.

  nbdkit:memory?size=64MiB[&FAULTS]       a private RAM disk (nothing to overwrite: no consent needed)
  nbdkit:file:/path/disk.img[?FAULTS]      a regular file served by nbdkit (a write to that file)

FAULTS (query parameters; sizes take units, durations take ms or s):

  read-error=OFF[:LEN],...   reads touching these ranges fail with EIO (LEN defaults to 4 KiB). Implemented
                             with nbdkit's ddrescue filter (a bad-sector map) under its cow filter, so the
                             disk stays writable: a write over a bad range replaces it, as a drive remaps a
                             bad sector. With read errors, writes go to nbdkit's temporary overlay, never to
                             a backing file.
  write-error=OFF[:LEN],...  writes that change data in these ranges fail with EPERM (nbdkit's protect filter)
  error-rate=P%              every request fails with EIO with probability P (nbdkit's error filter)
  delay-read=T, delay-write=T  every read / write is delayed by T (nbdkit's delay filter)
  stall=LEN@AT,...           all I/O stops for LEN, AT after fio connects in each point (nbdkit's pause filter,
                             driven through its control socket while the point runs)

The server listens on a Unix socket in a private temporary directory (never on the network), runs with
--exit-with-parent (it cannot outlive ssdlab) and stops when the run stops. fio reaches it through its nbd
engine (libnbd).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab.errors import TargetError, UsageError
from ssdlab.fio.job import OptionValue
from ssdlab.results.model import TestPoint
from ssdlab.targets import owned
from ssdlab.targets.base import Hazard, Target, TargetOptions
from ssdlab.targets.file import FileTarget
from ssdlab.targets.nbd import NO_HEALTH, NbdAddress, nbd_fio_options, query_export
from ssdlab.units import format_bytes, parse_size

DEFAULT_MEMORY_SIZE = 1024**3
DEFAULT_ERROR_LEN = 4096
START_TIMEOUT_S = 15.0
INSTALL_HINT = "install it with `sudo apt-get install nbdkit` (Debian/Ubuntu)"
PLUGINS = ("memory", "file")
FAULT_KEYS = ("read-error", "write-error", "error-rate", "delay-read", "delay-write", "stall")

Range = tuple[int, int]  # (offset, length) in bytes


@dataclass(frozen=True)
class Stall:
    at_s: float  # seconds after the point starts
    length_s: float

    def describe(self) -> str:
        return f"{_fmt_s(self.length_s)} stall {_fmt_s(self.at_s)} after fio connects in each point"


@dataclass(frozen=True)
class Faults:
    """The faults a target injects, parsed from its query parameters."""

    read_errors: tuple[Range, ...] = ()
    write_errors: tuple[Range, ...] = ()
    error_rate: float = 0.0  # probability per request
    delay_read_ms: int = 0
    delay_write_ms: int = 0
    stalls: tuple[Stall, ...] = ()

    @classmethod
    def from_params(cls, params: dict[str, str]) -> Faults:
        return cls(
            read_errors=_ranges("read-error", params.get("read-error", "")),
            write_errors=_ranges("write-error", params.get("write-error", "")),
            error_rate=_rate(params.get("error-rate", "")),
            delay_read_ms=_ms("delay-read", params.get("delay-read", "")),
            delay_write_ms=_ms("delay-write", params.get("delay-write", "")),
            stalls=_stalls(params.get("stall", "")),
        )

    def any(self) -> bool:
        return bool(self.read_errors or self.write_errors or self.error_rate or self.delay_read_ms
                    or self.delay_write_ms or self.stalls)

    def check(self, size: int) -> None:
        for name, ranges in (("read-error", self.read_errors), ("write-error", self.write_errors)):
            for off, length in ranges:
                if off + length > size:
                    raise UsageError(f"{name} range {off}:{length} ends beyond the disk ({size} bytes)")

    def describe(self) -> list[str]:
        out = []
        if self.read_errors:
            out.append("read errors (EIO) at " + _ranges_text(self.read_errors))
        if self.write_errors:
            out.append("write errors (EPERM) at " + _ranges_text(self.write_errors))
        if self.error_rate:
            out.append(f"random EIO on {self.error_rate:.2%} of requests")
        if self.delay_read_ms:
            out.append(f"every read delayed {self.delay_read_ms} ms")
        if self.delay_write_ms:
            out.append(f"every write delayed {self.delay_write_ms} ms")
        out.extend(s.describe() for s in self.stalls)
        return out

    def filters(self) -> list[str]:
        """nbdkit filters, outermost first."""
        out = []
        if self.stalls:
            out.append("pause")
        if self.delay_read_ms or self.delay_write_ms:
            out.append("delay")
        if self.error_rate:
            out.append("error")
        if self.write_errors:
            out.append("protect")
        if self.read_errors:
            out += ["cow", "ddrescue"]
        return out

    def arguments(self, workdir: Path, size: int) -> list[str]:
        """The filters' key=value arguments (writes the ddrescue map into `workdir`)."""
        args = []
        if self.stalls:
            args.append(f"pause-control={workdir / 'pause.sock'}")
        if self.delay_read_ms:
            args.append(f"delay-read={self.delay_read_ms}ms")
        if self.delay_write_ms:
            args.append(f"delay-write={self.delay_write_ms}ms")
        if self.error_rate:
            args += ["error=EIO", f"error-rate={self.error_rate:.6f}"]
        for off, length in self.write_errors:
            args.append(f"protect={off}-{off + length - 1}")
        if self.read_errors:
            mapfile = workdir / "bad-blocks.map"
            mapfile.write_text(ddrescue_map(self.read_errors, size), encoding="ascii")
            args += ["cow-block-size=4096", f"ddrescue-mapfile={mapfile}"]
        return args


def ddrescue_map(bad: tuple[Range, ...], size: int) -> str:
    """A GNU ddrescue mapfile marking `bad` as bad sectors ('-') and the rest of `size` as rescued ('+')."""
    merged: list[list[int]] = []
    for off, length in sorted(bad):
        if merged and off <= merged[-1][0] + merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], off + length - merged[-1][0])
        else:
            merged.append([off, length])
    lines = ["# Mapfile written by ssdlab (injected read errors)", "# current_pos  current_status  current_pass",
             "0x00000000     +               1", "#      pos        size  status"]
    pos = 0
    for off, length in merged:
        if off > pos:
            lines.append(f"0x{pos:08X}  0x{off - pos:08X}  +")
        lines.append(f"0x{off:08X}  0x{length:08X}  -")
        pos = off + length
    if pos < size:
        lines.append(f"0x{pos:08X}  0x{size - pos:08X}  +")
    return "\n".join(lines) + "\n"


def _fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:g} ms" if seconds < 1 else f"{seconds:g} s"


def _ranges_text(ranges: tuple[Range, ...]) -> str:
    return ", ".join(f"{off} (+{format_bytes(length)})" for off, length in ranges)


def _offset(name: str, text: str) -> int:
    text = text.strip()
    if text in ("0", "0x0"):
        return 0
    try:
        return int(text, 0) if text.lower().startswith("0x") else parse_size(text)
    except (UsageError, ValueError):
        raise UsageError(f"bad {name} offset {text!r}: use bytes with an optional unit, e.g. 1MiB or 4096") from None


def _ranges(name: str, text: str) -> tuple[Range, ...]:
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        off_text, _, len_text = item.partition(":")
        off = _offset(name, off_text)
        length = parse_size(len_text) if len_text else DEFAULT_ERROR_LEN
        out.append((off, length))
    return tuple(out)


def _rate(text: str) -> float:
    if not text:
        return 0.0
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise UsageError(f"bad error-rate {text!r}: use a percentage (1%) or a probability (0.01)") from None
    if not 0 < value <= 1:
        raise UsageError(f"error-rate {text} is out of range: use more than 0% and at most 100%")
    return value


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$")


def _seconds(name: str, text: str) -> float:
    m = _DURATION.match(text)
    if not m:
        raise UsageError(f"bad {name} duration {text!r}: use e.g. 300ms or 1.5s")
    value = float(m.group(1))
    return value / 1000 if m.group(2) == "ms" else value


def _ms(name: str, text: str) -> int:
    if not text:
        return 0
    ms = round(_seconds(name, text) * 1000)
    if ms <= 0:
        raise UsageError(f"{name}={text} must be at least 1 ms")
    return ms


def _stalls(text: str) -> tuple[Stall, ...]:
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        length, sep, at = item.partition("@")
        if not sep:
            raise UsageError(f"bad stall {item!r}: write LENGTH@TIME, e.g. 300ms@1s (a 300 ms stall 1 s into "
                             "each point)")
        stall = Stall(at_s=_seconds("stall", at), length_s=_seconds("stall", length))
        if stall.length_s <= 0:
            raise UsageError(f"bad stall {item!r}: the length must be more than 0")
        out.append(stall)
    return tuple(sorted(out, key=lambda s: s.at_s))


def nbdkit_binary() -> str:
    path = shutil.which("nbdkit")
    if path is None:
        raise TargetError(f"nbdkit was not found on PATH: {INSTALL_HINT}")
    return path


@dataclass
class NbdkitTarget(Target):
    """A disk served by an nbdkit process ssdlab starts (memory or a file), with optional injected faults."""

    plugin: str = "memory"
    path: Path | None = None  # the file plugin's file
    size: int = DEFAULT_MEMORY_SIZE
    faults: Faults = field(default_factory=Faults)
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    # the private directory of the socket: named now (fio options name the socket before the server runs,
    # e.g. when the write gate checks the plan), created only when the server starts
    _workdir: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) /
                           f"ssdlab-nbdkit-{os.getpid()}-{secrets.token_hex(6)}", repr=False)
    _started: bool = field(default=False, repr=False)

    @classmethod
    def from_spec(cls, rest: str, params: dict[str, str], opts: TargetOptions) -> NbdkitTarget:
        plugin, _, arg = rest.partition(":")
        if plugin not in PLUGINS:
            raise UsageError(f"nbdkit:{rest}: use nbdkit:memory?size=64MiB or nbdkit:file:/path/disk.img")
        unknown = sorted(set(params) - {"size", *FAULT_KEYS})
        if unknown:
            raise UsageError(f"unknown nbdkit target parameter {unknown[0]!r}: use size and the faults "
                             f"{', '.join(FAULT_KEYS)}")
        path: Path | None = None
        if plugin == "memory":
            if arg:
                raise UsageError(f"nbdkit:memory takes no path (got {arg!r}); write nbdkit:memory?size=64MiB")
            size = parse_size(params["size"]) if "size" in params else (opts.size or DEFAULT_MEMORY_SIZE)
        else:
            if not arg:
                raise UsageError("nbdkit:file needs a path: nbdkit:file:/path/disk.img[?size=1GiB]")
            path = Path(arg).expanduser().resolve()
            if path.exists() and not path.is_file():
                raise TargetError(f"{path} is not a regular file (serve a block device by naming it directly)")
            if "size" in params:
                size = parse_size(params["size"])
            elif path.exists():
                size = path.stat().st_size
            else:
                raise TargetError(f"{path} does not exist: create it, or give its size (nbdkit:file:{path}?size=1GiB)")
        if opts.capacity:
            size = min(size, opts.capacity)
        size -= size % 4096
        if size < 1024**2:
            raise TargetError(f"disk size {format_bytes(size)} is too small: use at least 1 MiB (size=...)")
        faults = Faults.from_params(params)
        faults.check(size)
        query = "&".join(f"{k}={v}" for k, v in params.items())
        spec = f"nbdkit:{plugin}" + (f":{path}" if path else "") + (f"?{query}" if query else "")
        return cls(spec=spec, kind="nbdkit", options=opts, plugin=plugin, path=path, size=size, faults=faults)

    @property
    def name(self) -> str:
        return f"nbdkit {self.plugin}" + (f" {self.path}" if self.path else "")

    def health_unavailable(self) -> str:
        return NO_HEALTH

    def capacity(self) -> int:
        return self.size

    def logical_block_size(self) -> int:
        return 512

    # ------------------------------------------------------------ the server

    @property
    def socket_path(self) -> Path:
        return self._workdir / "nbd.sock"

    @property
    def uri(self) -> str:
        return f"nbd+unix:///?socket={self.socket_path}"

    def fio_options(self) -> dict[str, OptionValue]:
        return nbd_fio_options(self.uri, self.size)

    def prepare(self, writes: bool) -> list[str]:
        self.start()
        faults = self.faults.describe()
        return [f"started nbdkit ({self.name}, {format_bytes(self.size)}) on {self.socket_path}"
                + (": " + "; ".join(faults) if faults else "")]

    def start(self) -> None:
        """Start nbdkit (once) and wait until it answers the NBD handshake."""
        if self._proc is not None and self._proc.poll() is None:
            return
        from ssdlab.fio.runner import engine_available

        binary = nbdkit_binary()
        if not engine_available("nbd"):
            raise TargetError("this fio has no nbd engine (it was built without libnbd): nbdkit targets need it")
        if self.path is not None and not self.path.exists():
            fd = owned.create_exclusive(self.path)  # tagged as ssdlab's scratch file
            try:
                os.ftruncate(fd, self.size)  # sparse: nbdkit reads zeros from holes
            finally:
                os.close(fd)
        workdir = self._workdir
        try:
            workdir.mkdir(mode=0o700)
        except OSError as exc:
            raise TargetError(f"cannot create nbdkit's private directory {workdir} ({exc.strerror or exc})") from exc
        self._started = True
        sock = workdir / "nbd.sock"
        plugin_args = [f"size={self.size}"] if self.plugin == "memory" else [f"file={self.path}"]
        argv = [binary, "--foreground", "--exit-with-parent", "--unix", str(sock),
                *(f"--filter={f}" for f in self.faults.filters()), self.plugin, *plugin_args,
                *self.faults.arguments(workdir, self.size)]
        (workdir / "cmd.txt").write_text(" ".join(argv) + "\n", encoding="utf-8")
        log = (workdir / "nbdkit.log").open("wb")
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True)
        except OSError as exc:
            log.close()
            self.close()
            raise TargetError(f"nbdkit could not be started ({exc}): {INSTALL_HINT}") from exc
        log.close()
        self._proc = proc
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                why = (workdir / "nbdkit.log").read_text(encoding="utf-8", errors="replace").strip()
                self.close()
                raise TargetError(f"nbdkit exited at start (status {proc.returncode}): "
                                  f"{why.splitlines()[-1] if why else 'no message'}")
            if sock.exists():
                try:
                    query_export(NbdAddress(uri="", socket_path=str(sock)), timeout=2.0)
                    return
                except TargetError:
                    pass
            if time.monotonic() > deadline:
                self.close()
                raise TargetError(f"nbdkit did not answer on {sock} within {START_TIMEOUT_S:.0f} s")
            time.sleep(0.02)

    def close(self) -> None:
        """Stop nbdkit and remove its private directory (the memory disk's data goes with it)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(sig)
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self._started:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._started = False

    @contextlib.contextmanager
    def during_point(self, point: TestPoint) -> Iterator[None]:
        """Run the stall schedule while the point's I/O runs (times count from the point's start)."""
        if not self.faults.stalls:
            yield
            return
        ctl = _StallSchedule(self._workdir / "pause.sock", self._workdir / "nbd.sock", self.faults.stalls)
        ctl.start()
        try:
            yield
        finally:
            ctl.stop()

    # ------------------------------------------------------------ safety and identity

    def _file(self) -> FileTarget | None:
        """The file nbdkit serves, when writes reach it (not a memory disk, no cow overlay) and it exists:
        its hazards and consent are a file target's (someone else's file, a loop backing file, swap)."""
        if self.path is None or self.faults.read_errors or not self.path.exists():
            return None
        return FileTarget.from_path(str(self.path), {"size": str(self.size)}, self.options)

    def identity_keys(self) -> list[tuple[object, ...]]:
        """The file it serves (a memory disk is its own): a file target on the same file is the same target."""
        from ssdlab.targets import identity

        return [identity.resolve(str(self.path)).key] if self.path is not None else []

    def layout_writes(self) -> str:
        if self.path is not None and not self.path.exists():
            return f"creates {self.path} ({format_bytes(self.size)}, sparse) for nbdkit to serve"
        return ""

    def hazards(self) -> list[Hazard]:
        f = self._file()
        return f.hazards() if f is not None else []

    def needs_write_consent(self) -> bool:
        f = self._file()
        return f.needs_write_consent() if f is not None else False

    def destroys(self) -> str:
        if self.plugin == "memory":
            return f"nothing: a private nbdkit memory disk ({format_bytes(self.size)}) that ends with the run"
        if self.faults.read_errors:
            return f"nothing: writes go to nbdkit's temporary overlay (read-error faults); {self.path} is only read"
        f = self._file()
        if f is None:
            return f"nothing: {self.path} will be created ({format_bytes(self.size)}) and served by nbdkit"
        return f"{f.destroys()}, served by nbdkit"

    def info(self) -> dict[str, Any]:
        faults = self.faults.describe()
        ident: dict[str, Any] = {"server": "nbdkit", "plugin": self.plugin}
        if faults:
            ident["filters"] = ", ".join(self.faults.filters())
            ident["faults"] = "; ".join(faults)
        if self.path is not None:
            ident["file"] = str(self.path)
        note = (f"nbdkit {self.plugin} disk over fio's nbd engine"
                + (f", with injected faults: {'; '.join(faults)}" if faults else "")
                + ": results show nbdkit and the socket path, not a drive")
        return {
            "spec": self.spec, "kind": self.kind, "name": self.name, "capacity_bytes": self.size,
            "logical_block_size": 512, "physical_block_size": 4096, "identity": ident, "write_safe": True,
            "safety": [], "note": note, "faults": faults,
        }


def connected_clients(sock_path: Path) -> set[int]:
    """Inodes of the connections nbdkit has accepted on `sock_path` (from /proc/net/unix; empty if unreadable)."""
    out = set()
    try:
        with Path("/proc/net/unix").open(encoding="ascii", errors="replace") as fh:
            next(fh, None)
            for line in fh:
                fields = line.split()
                # Num RefCount Protocol Flags Type St Inode Path; St 03 = connected
                if len(fields) >= 8 and fields[5] == "03" and fields[7] == str(sock_path):
                    out.add(int(fields[6]))
    except (OSError, ValueError):
        return set()
    return out


class _StallSchedule:
    """Pauses nbdkit (its pause filter's control socket: 'p' pauses, 'r' resumes) at the planned times,
    counted from the moment fio connects (fio spends a variable time starting up before its first I/O)."""

    CONNECT_WAIT_S = 60.0

    def __init__(self, control: Path, data_socket: Path, stalls: tuple[Stall, ...]) -> None:
        self.control = control
        self.data_socket = data_socket
        self.stalls = stalls
        self.cancel = threading.Event()
        self.thread = threading.Thread(target=self._run, name="nbdkit-stalls", daemon=True)
        self.before: set[int] = set()

    def start(self) -> None:
        self.before = connected_clients(self.data_socket)
        self.thread.start()

    def stop(self) -> None:
        self.cancel.set()
        self.thread.join(timeout=30)

    def _connected(self) -> float:
        """When fio's connection appeared (monotonic), or the time the wait gave up."""
        deadline = time.monotonic() + self.CONNECT_WAIT_S
        while time.monotonic() < deadline and not self.cancel.is_set():
            if connected_clients(self.data_socket) - self.before:
                break
            time.sleep(0.002)
        return time.monotonic()

    @staticmethod
    def _command(sock: socket.socket, cmd: bytes) -> None:
        sock.sendall(cmd)
        sock.recv(1)  # 'P' once requests in flight have finished, 'R' at once

    def _run(self) -> None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(60)
                sock.connect(str(self.control))
                t0 = self._connected()
                for stall in self.stalls:
                    if self.cancel.wait(max(0.0, t0 + stall.at_s - time.monotonic())):
                        return
                    self._command(sock, b"p")
                    try:
                        self.cancel.wait(stall.length_s)
                    finally:
                        self._command(sock, b"r")
        except OSError:
            return  # the server went away (the run stopped): nothing is left paused
