"""I/O errors as fio reports them, and the job options that make fio report every one of them.

By default fio ends a job at its first I/O error. `continue_options()` keeps it going past the errors a
device returns (EIO, EPERM, ENOSPC, ...) and has it print each one with its offset (`error_dump`), so a
point hit by several errors lists them all. fio prints each error on stderr as

    fio: io_u error on file /dev/nbd0: Input/output error: read offset=1048576, buflen=4096

and an error raised before an I/O had an offset (e.g. a write refused by a read-only export) only as the
job's `error` field in its JSON result.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ssdlab.fio.stderr import Line

# fio's ignore_error lists (read, write, verify) replace its default non-fatal set (EIO, EILSEQ). fio knows
# the names of errno 1-34 only; the rest are numbers: 61 ENODATA, 84 EILSEQ, 110 ETIMEDOUT, 121 EREMOTEIO.
_DEVICE_ERRORS = "EIO:EPERM:ENOSPC:EROFS:ENXIO:61:110:121"
IGNORE_ERROR = f"{_DEVICE_ERRORS},{_DEVICE_ERRORS},84:EIO"

EILSEQ = 84  # fio's errno for a verify failure

_IO_U = re.compile(r"^fio: io_u error(?: on file (?P<file>.+?))?: (?P<error>.+?): (?P<ddir>[a-z_]+) "
                   r"offset=(?P<offset>\d+), buflen=(?P<length>\d+)\s*$")


@dataclass(frozen=True)
class IoError:
    """One failed I/O (offset and length known) or a job's error without an offset."""

    direction: str  # read | write | trim | sync | ... ; "" when fio named none
    offset: int | None
    length: int | None
    error: str  # the system's message, e.g. "Input/output error"
    file: str = ""
    seconds: float | None = None  # after fio started, when fio reported it

    def describe(self) -> str:
        if self.offset is None:
            return f"{self.error} (job error, no offset)"
        return f"{self.direction} at offset {self.offset} ({self.length} bytes): {self.error}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def continue_options() -> dict[str, str]:
    """Options that keep a job going past device errors, printing every error with its offset."""
    return {"continue_on_error": "all", "ignore_error": IGNORE_ERROR, "error_dump": "1"}


def parse_io_errors(lines: Iterable[Line]) -> list[IoError]:
    """Every `io_u error` line of fio's stderr, in order."""
    out = []
    for line in lines:
        m = _IO_U.match(line.text)
        if m:
            out.append(IoError(direction=m["ddir"], offset=int(m["offset"]), length=int(m["length"]),
                               error=m["error"], file=m["file"] or "", seconds=line.seconds))
    return out


def job_errors(doc: Mapping[str, Any], *, ignore: Iterable[int] = ()) -> list[IoError]:
    """Errors fio recorded on jobs of a JSON result (errno in `error`/`first_error`), except `ignore`."""
    skip = set(ignore)
    out = []
    jobs = doc.get("jobs") or doc.get("client_stats") or []
    for j in jobs:
        errno = int(j.get("error", 0) or 0)
        if errno and errno not in skip:
            out.append(IoError(direction="", offset=None, length=None, error=_strerror(errno)))
    return out


def error_total(doc: Mapping[str, Any]) -> int:
    """fio's own count of errors it continued past (`total_err`, present with continue_on_error)."""
    jobs = doc.get("jobs") or doc.get("client_stats") or []
    return sum(int(j.get("total_err", 0) or 0) for j in jobs)


def _strerror(errno: int) -> str:
    try:
        return f"{os.strerror(errno)} (errno {errno})"
    except ValueError:
        return f"errno {errno}"
