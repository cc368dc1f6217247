"""fio's verification machinery: the job options that write and check verify headers, and the parser of the
failures fio prints.

A write job with `verify=<checksum>` puts a header at the start of every block: a magic number, the
checksum type, the block length, the seed of the block's random data, the block's own offset, the write
time, the job and I/O numbers, a crc32c of the header itself, then the checksum of the rest of the block.
A *read* job with the same `verify=` and block size checks every block it reads against its header (the
header's seed is taken from the header itself; no state of the writing job is needed) and runs under fio's
`--readonly`, so checking never needs write consent. fio prints each failure on stderr:

    crc32c: verify failed at file /dev/loop3 offset 12288, length 4096 (requested block: ...)
           Expected CRC: 5f0a9b23
           Received CRC: 7bbcbf09
    verify: bad header offset 16777216, wanted 204800 at file /dev/loop3 offset 204800, length 4096 (...)

A failed header check ends the check of that block (fio does not compute the data checksum then); a
checksum failure is printed with both checksums. fio stops a job at its first failure unless
`continue_on_error` covers verify errors, which `check_options` always sets, so every mismatch is reported.
(fio also leaves its write state, `*-verify.state`, in the point directory; ssdlab checks from the headers.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ssdlab.fio.ioerrors import continue_options
from ssdlab.fio.stderr import Line

# checksums offered (fio's names); crc32c is fio's fastest strong one and the default
CHECKSUMS = ("crc32c", "crc64", "md5", "sha1", "sha256", "sha512", "sha3-256", "sha3-512", "xxhash")
DEFAULT_CHECKSUM = "crc32c"
HEADER_BYTES = 40  # struct verify_header in fio 3.x, before the checksum-specific part

_CHECKSUM_LINE = re.compile(
    r"^(?P<name>\S{1,8}): verify failed at file (?P<file>.+) offset (?P<offset>\d+), length (?P<length>\d+)"
    r"(?: \(requested block: offset=(?P<req_offset>\d+), length=(?P<req_length>\d+)(?:, flags=\w+)?\))?\s*$")
_HEADER_LINE = re.compile(
    r"^verify: bad (?:magic header|header (?P<field>\w+)) (?P<received>\S+), (?:wanted|calculated) "
    r"(?P<expected>\S+) at file (?P<file>.+) offset (?P<offset>\d+), length (?P<length>\d+)"
    r"(?: \(requested block: offset=\d+, length=\d+\))?\s*$")
_EXPECTED = re.compile(r"^\s*Expected CRC: (?P<hex>[0-9a-fA-F]*)\s*$")
_RECEIVED = re.compile(r"^\s*Received CRC: (?P<hex>[0-9a-fA-F]*)\s*$")


@dataclass(frozen=True)
class VerifyFailure:
    """One block that failed verification: where, what was checked, what was expected and found."""

    offset: int  # byte offset of the block (verify interval) on the device or file
    length: int
    kind: str  # "checksum" (data does not match its checksum) | "header" (a header field is wrong)
    check: str  # the checksum name (crc32c, sha256, ...) or the header field (magic, offset, length, ...)
    expected: str  # as fio printed it: checksum in hex, or the header field's expected value
    received: str
    file: str = ""
    seconds: float | None = None  # after fio started, when fio reported it

    def describe(self) -> str:
        if self.kind == "header":
            return (f"bad header {self.check} at offset {self.offset}: found {self.received}, "
                    f"expected {self.expected}")
        return f"{self.check} mismatch at offset {self.offset}: expected {self.expected}, got {self.received}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def write_options(checksum: str, seed: int) -> dict[str, str]:
    """A write job that lays down verify headers and checksums, and does not read them back itself."""
    return {"verify": checksum, "do_verify": "0", "randseed": str(seed)}


def check_options(checksum: str) -> dict[str, str]:
    """A read job that checks every block against its header, reporting every failure (and read errors)."""
    return {"verify": checksum, **continue_options()}


def backlog_options(checksum: str, seed: int, backlog: int) -> dict[str, str]:
    """A write job that reads back and checks each batch of `backlog` blocks while it keeps writing.

    The random map stays on (every block once per pass) so two writes of one block are never in flight
    together, which would make a correct drive fail verification."""
    return {"verify": checksum, "do_verify": "1", "verify_backlog": str(backlog), "randseed": str(seed),
            "norandommap": "0", **continue_options()}


def parse_failures(lines: Iterable[Line]) -> list[VerifyFailure]:
    """Every verification failure in fio's stderr, in the order fio reported them."""
    out: list[VerifyFailure] = []
    pending: dict[str, Any] | None = None

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            out.append(VerifyFailure(**pending))
            pending = None

    for line in lines:
        text = line.text
        if pending is not None:
            m = _EXPECTED.match(text)
            if m:
                pending["expected"] = m["hex"].lower()
                continue
            m = _RECEIVED.match(text)
            if m:
                pending["received"] = m["hex"].lower()
                continue
        m = _CHECKSUM_LINE.match(text)
        if m:
            flush()
            pending = {"offset": int(m["offset"]), "length": int(m["length"]), "kind": "checksum",
                       "check": m["name"], "expected": "", "received": "", "file": m["file"],
                       "seconds": line.seconds}
            continue
        m = _HEADER_LINE.match(text)
        if m:
            flush()
            out.append(VerifyFailure(offset=int(m["offset"]), length=int(m["length"]), kind="header",
                                     check=m["field"] or "magic", expected=m["expected"], received=m["received"],
                                     file=m["file"], seconds=line.seconds))
    flush()
    return out
