"""Typed exceptions carrying the user-facing message and the exit code the CLI maps them to.

Exit codes (documented in README and `ssdlab --help`):
  0  success
  1  a verdict was negative: not steady, fail or incomplete (verdict.EXIT_CODES is the one mapping)
  2  bad usage or bad input (option, size string, suite name, target string)
  3  target problem (missing, unreadable, too small)
  4  refused: writing would destroy data the user did not consent to
  5  fio is missing or too old
  6  fio failed while running a point
  7  results directory problem (exists, not writable, full)
  8  stored results unreadable (corrupt, unknown schema_version)
  9  resume: the target is not the device or file the run started on
  130 interrupted (Ctrl-C); finished points are kept
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    OK = 0
    NEGATIVE = 1
    USAGE = 2
    TARGET = 3
    UNSAFE = 4
    FIO_MISSING = 5
    FIO_FAILED = 6
    RESULTS = 7
    STORED = 8
    TARGET_CHANGED = 9
    INTERRUPTED = 130


class SsdlabError(Exception):
    """Base class: `str(err)` is one line a user can act on."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(SsdlabError):
    exit_code = ExitCode.USAGE


class TargetError(SsdlabError):
    exit_code = ExitCode.TARGET


class UnsafeTargetError(SsdlabError):
    exit_code = ExitCode.UNSAFE


class FioMissingError(SsdlabError):
    exit_code = ExitCode.FIO_MISSING


class FioFailedError(SsdlabError):
    """fio exited non-zero or produced no parsable result; carries what a user needs to debug it."""

    exit_code = ExitCode.FIO_FAILED

    def __init__(self, message: str, *, cmd: list[str] | None = None, returncode: int | None = None,
                 stderr: str = "", output: str = "", partial: Any = None) -> None:
        super().__init__(message)
        self.cmd = cmd or []
        self.returncode = returncode
        self.stderr = stderr
        self.output = output  # fio's last JSON document, when it wrote one before failing
        self.partial = partial  # the Measurement of what the point finished, when the executor parsed it


class ResultsDirError(SsdlabError):
    exit_code = ExitCode.RESULTS


class StoredResultsError(SsdlabError):
    exit_code = ExitCode.STORED


class TargetChangedError(SsdlabError):
    """A run is resumed on a device or file other than the one it started on (a by-id name now naming another
    drive, a loop device attached to another file, a file replaced): nothing runs."""

    exit_code = ExitCode.TARGET_CHANGED


class RunInterrupted(SsdlabError):
    exit_code = ExitCode.INTERRUPTED
