"""NBD targets: an export of a Network Block Device server, driven by fio's nbd engine (libnbd).

Targets are named by the NBD URI standard that libnbd and fio's `uri=` use:

  nbd://127.0.0.1[:10809][/EXPORT]          TCP (port 10809 when omitted)
  nbd+unix:///[EXPORT]?socket=/path.sock    a Unix domain socket

ssdlab asks the server for the export's size and flags before it plans anything (the NBD handshake,
NBD_OPT_INFO, then NBD_OPT_ABORT: nothing is read or written). A server someone else runs holds data someone
may want, so writing to it needs the same consent as a block device, and the same hazard checks: before a
write run, ssdlab reads the export's first and last MiB, and every other range blkid reads when it probes
(NBD_OPT_GO, NBD_CMD_READ, NBD_CMD_DISC: reads only), and looks for a filesystem, RAID or partition-table
signature as on a block device (sysfs.signature_in); a signature, or an export that cannot be read, needs
--destructive. `nbdkit:` targets
(see targets/nbdkit.py) are servers ssdlab starts itself.
"""

from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from ssdlab.errors import TargetError, UsageError
from ssdlab.fio.job import OptionValue
from ssdlab.targets import identity, sysfs
from ssdlab.targets.base import Hazard, Target, TargetOptions
from ssdlab.targets.identity import Identity
from ssdlab.targets.spec import URI_SCHEMES
from ssdlab.targets.spec import is_nbd_uri as is_nbd_uri
from ssdlab.units import format_bytes

DEFAULT_PORT = 10809
NO_HEALTH = "an NBD export is reached over the NBD protocol: there is no drive health log or link to read"

# NBD protocol constants (https://github.com/NetworkBlockDevice/nbd/blob/master/doc/proto.md)
_NBDMAGIC = 0x4E42444D41474943  # "NBDMAGIC"
_IHAVEOPT = 0x49484156454F5054  # "IHAVEOPT"
_REPLY_MAGIC = 0x3E889045565A9
_FLAG_FIXED_NEWSTYLE = 1 << 0
_FLAG_NO_ZEROES = 1 << 1
_OPT_ABORT = 2
_OPT_INFO = 6
_OPT_GO = 7
_REQUEST_MAGIC = 0x25609513
_SIMPLE_REPLY_MAGIC = 0x67446698
_CMD_READ = 0
_CMD_DISC = 2
SIGNATURE_SPAN = 1024**2  # bytes read at each end of an export for the signature check (then what blkid asks)
_READ_CHUNK = 256 * 1024  # below any server's maximum request size (the protocol's floor is 32 MiB)
_REP_ACK = 1
_REP_INFO = 3
_INFO_EXPORT = 0
_INFO_DESCRIPTION = 2
_INFO_BLOCK_SIZE = 3
_TFLAG_READ_ONLY = 1 << 1
_TFLAG_SEND_TRIM = 1 << 5
_REP_ERRORS = {1: "unsupported option", 2: "forbidden by the server's policy", 3: "invalid request",
               4: "not supported on this platform", 5: "TLS required", 6: "no such export",
               7: "server shutting down", 8: "block size required", 9: "request too big"}


@dataclass(frozen=True)
class ExportInfo:
    """What the server says about an export."""

    size: int
    read_only: bool
    trim: bool
    description: str = ""
    block_min: int = 1
    block_preferred: int = 4096
    block_max: int = 0


@dataclass(frozen=True)
class NbdAddress:
    """Where an export lives: a Unix socket path or a TCP host and port, and the export name."""

    uri: str
    socket_path: str = ""
    host: str = ""
    port: int = DEFAULT_PORT
    export: str = ""

    def describe(self) -> str:
        where = f"unix socket {self.socket_path}" if self.socket_path else f"{self.host}:{self.port}"
        return f"NBD export {self.export!r} at {where}" if self.export else f"NBD server at {where}"


def parse_uri(text: str) -> NbdAddress:
    """An NbdAddress from an NBD URI; one clear line for anything ssdlab cannot use."""
    try:
        parts = urlsplit(text)
    except ValueError as exc:  # e.g. an IPv6 address without its closing bracket
        raise UsageError(f"{text}: not a valid URI ({exc}): write nbd://HOST[:PORT][/EXPORT], an IPv6 address in "
                         "brackets (nbd://[::1]/EXPORT)") from None
    scheme = parts.scheme.lower()
    if scheme.startswith("nbds") or scheme in ("nbd+vsock",):
        raise UsageError(f"{text}: {scheme} URIs (TLS, vsock) are not supported; use nbd:// or nbd+unix://")
    if scheme not in URI_SCHEMES:
        raise UsageError(f"{text}: not an NBD URI (nbd://HOST[:PORT][/EXPORT] or nbd+unix:///EXPORT?socket=PATH)")
    export = parts.path[1:] if parts.path.startswith("/") else parts.path
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if scheme == "nbd+unix":
        path = query.get("socket", "")
        if not path:
            raise UsageError(f"{text}: nbd+unix URIs name their socket: nbd+unix:///EXPORT?socket=/path.sock")
        return NbdAddress(uri=text, socket_path=path, export=export)
    if not parts.hostname:
        raise UsageError(f"{text}: name the server: nbd://HOST[:PORT][/EXPORT]")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise UsageError(f"{text}: bad port") from None
    return NbdAddress(uri=text, host=parts.hostname, port=port, export=export)


def _recv(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise TargetError("the NBD server closed the connection during the handshake")
        buf += chunk
    return buf


def _connect(addr: NbdAddress, timeout: float) -> socket.socket:
    try:
        if addr.socket_path:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(timeout)
                sock.connect(addr.socket_path)
            except OSError:
                sock.close()
                raise
            return sock
        return socket.create_connection((addr.host, addr.port), timeout=timeout)
    except OSError as exc:
        raise TargetError(f"cannot connect to the {addr.describe()} ({exc.strerror or exc}): is the server "
                          "running?") from exc


def query_export(addr: NbdAddress, timeout: float = 10.0) -> ExportInfo:
    """Ask the server for the export's size and flags (fixed-newstyle handshake, NBD_OPT_INFO, abort)."""
    with _connect(addr, timeout) as sock:
        try:
            info = _handshake(sock, addr, _OPT_INFO)
            sock.sendall(struct.pack(">QII", _IHAVEOPT, _OPT_ABORT, 0))
            return info
        except (OSError, struct.error) as exc:
            raise TargetError(f"NBD handshake with the {addr.describe()} failed ({exc})") from exc


def signature(addr: NbdAddress, timeout: float = 30.0) -> str:
    """The filesystem, RAID or partition-table signature the export carries ('' when none), as blkid finds it on
    a block device: its first and last MiB, then every range blkid reads beyond them, read through the NBD
    protocol (NBD_OPT_GO, NBD_CMD_READ, NBD_CMD_DISC: nothing is written; sysfs.signature_in)."""
    with _connect(addr, timeout) as sock:
        try:
            info = _handshake(sock, addr, _OPT_GO)
            align = max(info.block_min, 1)

            def fetch(ranges: list[tuple[int, int]]) -> list[tuple[int, bytes]]:
                out = []
                for offset, length in ranges:
                    start = offset - offset % align
                    end = min(info.size, -(-(offset + length) // align) * align)
                    out.append((start, _read(sock, addr, start, end - start, info)))
                return out

            found = sysfs.signature_in(info.size, fetch, SIGNATURE_SPAN)
            sock.sendall(struct.pack(">IHHQQI", _REQUEST_MAGIC, 0, _CMD_DISC, 0, 0, 0))
            return found
        except (OSError, struct.error) as exc:
            raise TargetError(f"reading the {addr.describe()} failed ({exc})") from exc


def _read(sock: socket.socket, addr: NbdAddress, offset: int, length: int, info: ExportInfo) -> bytes:
    """`length` bytes at `offset`, in requests no larger than the server takes (simple replies)."""
    chunk = min(_READ_CHUNK, info.block_max or _READ_CHUNK)
    out = bytearray()
    handle = 1
    while len(out) < length:
        n = min(chunk, length - len(out))
        sock.sendall(struct.pack(">IHHQQI", _REQUEST_MAGIC, 0, _CMD_READ, handle, offset + len(out), n))
        magic, error, got = struct.unpack(">IIQ", _recv(sock, 16))
        if magic != _SIMPLE_REPLY_MAGIC or got != handle:
            raise TargetError(f"the {addr.describe()} sent a malformed reply to a read")
        if error:
            raise TargetError(f"the {addr.describe()} refused to read {n} bytes at {offset + len(out)} "
                              f"({os.strerror(error)})")
        out += _recv(sock, n)
        handle += 1
    return bytes(out)


def _handshake(sock: socket.socket, addr: NbdAddress, option: int) -> ExportInfo:
    """The fixed-newstyle handshake up to the reply to `option` (NBD_OPT_INFO: the export's facts, the socket
    is then still in option haggling; NBD_OPT_GO: the same facts, then the transmission phase)."""
    magic, opt_magic, flags = struct.unpack(">QQH", _recv(sock, 18))
    if magic != _NBDMAGIC or opt_magic != _IHAVEOPT:
        raise TargetError(f"the {addr.describe()} does not speak the NBD newstyle protocol")
    if not flags & _FLAG_FIXED_NEWSTYLE:
        raise TargetError(f"the {addr.describe()} lacks fixed-newstyle negotiation (too old for ssdlab)")
    sock.sendall(struct.pack(">I", flags & (_FLAG_FIXED_NEWSTYLE | _FLAG_NO_ZEROES)))
    name = addr.export.encode()
    requests = (_INFO_DESCRIPTION, _INFO_BLOCK_SIZE)
    data = struct.pack(">I", len(name)) + name + struct.pack(">H", len(requests)) + \
        b"".join(struct.pack(">H", r) for r in requests)
    sock.sendall(struct.pack(">QII", _IHAVEOPT, option, len(data)) + data)
    size: int | None = None
    tflags = 0
    desc = ""
    bmin, bpref, bmax = 1, 4096, 0
    while True:
        rmagic, _opt, rtype, length = struct.unpack(">QIII", _recv(sock, 20))
        payload = _recv(sock, length) if length else b""
        if rmagic != _REPLY_MAGIC:
            raise TargetError(f"the {addr.describe()} sent a malformed option reply")
        if rtype == _REP_ACK:
            break
        if rtype & 0x80000000:
            why = _REP_ERRORS.get(rtype & 0x7FFFFFFF, f"error {rtype & 0x7FFFFFFF}")
            text = payload.decode(errors="replace").strip()
            opt = "NBD_OPT_GO" if option == _OPT_GO else "NBD_OPT_INFO"
            raise TargetError(f"the {addr.describe()} refused {opt}: {why}" + (f" ({text})" if text else ""))
        if rtype == _REP_INFO and len(payload) >= 2:
            (itype,) = struct.unpack(">H", payload[:2])
            if itype == _INFO_EXPORT and len(payload) >= 12:
                size, tflags = struct.unpack(">QH", payload[2:12])
            elif itype == _INFO_DESCRIPTION:
                desc = payload[2:].decode(errors="replace")
            elif itype == _INFO_BLOCK_SIZE and len(payload) >= 14:
                bmin, bpref, bmax = struct.unpack(">III", payload[2:14])
    if size is None:
        raise TargetError(f"the {addr.describe()} did not say the export's size")
    return ExportInfo(size=size, read_only=bool(tflags & _TFLAG_READ_ONLY), trim=bool(tflags & _TFLAG_SEND_TRIM),
                      description=desc, block_min=bmin, block_preferred=bpref, block_max=bmax)


def nbd_fio_options(uri: str, size: int) -> dict[str, OptionValue]:
    """fio options that drive an NBD export: the nbd engine (libnbd) and the export's URI."""
    return {"ioengine": "nbd", "uri": uri, "size": size}


@dataclass
class NbdTarget(Target):
    """An export of an NBD server ssdlab does not run (its contents are someone's data)."""

    address: NbdAddress = field(default_factory=lambda: NbdAddress(uri=""))
    export: ExportInfo = field(default_factory=lambda: ExportInfo(size=0, read_only=True, trim=False))
    socket: Identity | None = None  # a Unix socket's identity, resolved once when the target is made
    _contents: Hazard | None = field(default=None, repr=False, compare=False)
    _looked: bool = field(default=False, repr=False, compare=False)

    @classmethod
    def from_uri(cls, text: str, opts: TargetOptions) -> NbdTarget:
        addr = parse_uri(text)
        sock = identity.resolve(addr.socket_path) if addr.socket_path else None
        return cls(spec=text, kind="nbd", options=opts, address=addr, export=query_export(addr), socket=sock)

    @property
    def name(self) -> str:
        return self.spec

    def health_unavailable(self) -> str:
        return NO_HEALTH

    def capacity(self) -> int:
        cap = self.export.size
        if self.options.capacity:
            cap = min(cap, self.options.capacity)
        return cap - cap % 4096

    def logical_block_size(self) -> int:
        return max(512, self.export.block_min)

    def fio_options(self) -> dict[str, OptionValue]:
        return nbd_fio_options(self._fio_uri(), self.capacity())

    def _fio_uri(self) -> str:
        """The URI fio connects to: the one given, its socket named by its canonical path (the path the checks
        looked at: a link on the way, which its owner could point elsewhere, is not followed again)."""
        if not self.address.socket_path:
            return self.address.uri
        parts = urlsplit(self.address.uri)
        query = [(k, identity.canonical(v) if k == "socket" else v)
                 for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        text = urlencode(query, safe="/", quote_via=quote)  # %20, not '+': libnbd decodes percent escapes only
        return f"{parts.scheme}://{parts.netloc}{parts.path}?{text}"  # (urlunsplit drops an empty host's '//')

    def identities(self) -> list[Identity]:
        """A Unix socket's: the write gate checks before every job that the socket checked is still there (a
        server restarted or replaced since the check serves what was not checked)."""
        return [self.socket] if self.socket is not None else []

    def identity_keys(self) -> list[tuple[object, ...]]:
        """One export is one target, whatever its URI's spelling: its server's socket (canonical) or address,
        and its name."""
        where = (os.path.realpath(self.address.socket_path) if self.address.socket_path
                 else f"{self.address.host.lower()}:{self.address.port}")
        return [("nbd", where, self.address.export)]

    def hazards(self) -> list[Hazard]:
        """Read-only (blocking), then what the export carries: read once (its first and last MiB and what blkid
        asks for beyond them) and checked for signatures as a block device's are (--destructive)."""
        found = self.blocking_hazards()
        contents = self._signature()
        return [*found, contents] if contents is not None else found

    def blocking_hazards(self) -> list[Hazard]:
        found = []
        if self.export.read_only:
            found.append(Hazard(f"the {self.address.describe()} is exported read-only", blocking=True))
        if self.address.socket_path:
            real = identity.canonical(self.address.socket_path)
            exposed = identity.others_can_change(real)
            if exposed:  # they could point it at another server (one only root may reach) after the check
                found.append(Hazard(f"another user can change what socket {real} names ({exposed}): fio connects "
                                    "after the last check; serve the export on a socket in a directory only you "
                                    "and root can change", blocking=True))
        return found

    def _signature(self) -> Hazard | None:
        if not self._looked:
            self._looked = True
            try:
                sig = signature(self.address)
            except TargetError as exc:
                self._contents = Hazard(f"the {self.address.describe()} could not be read to look for a "
                                        f"filesystem or partition table ({exc})")
            else:
                if sig:
                    self._contents = Hazard(f"the {self.address.describe()} is not blank: it carries an existing "
                                            f"{sig}")
        return self._contents

    def needs_write_consent(self) -> bool:
        return True

    def destroys(self) -> str:
        whole = self.capacity() >= self.export.size
        span = "the whole export" if whole else f"the first {format_bytes(self.capacity())}"
        return f"ALL DATA in the {self.address.describe()} ({format_bytes(self.export.size)}): {span}"

    def info(self) -> dict[str, Any]:
        hz = self.hazards()
        return {
            "spec": self.spec, "kind": self.kind, "name": self.name, "capacity_bytes": self.capacity(),
            "device_bytes": self.export.size, "logical_block_size": self.logical_block_size(),
            "physical_block_size": max(self.logical_block_size(), self.export.block_preferred),
            "identity": {"nbd_uri": self.address.uri, "export": self.address.export,
                         "description": self.export.description, "read_only": self.export.read_only,
                         "trim": self.export.trim, "export_bytes": self.export.size},
            "write_safe": not hz, "safety": [h.text for h in hz],
            "note": "an NBD export over fio's nbd engine (libnbd): results include the network or socket path "
                    "and the server",
        }
