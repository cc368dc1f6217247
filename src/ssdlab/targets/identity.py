"""One target, one identity: what a target path names, resolved once, before any check.

A path the user gives (plain, relative, through symlinks, /dev/disk/by-id/...) becomes one canonical absolute path
(every link resolved, from the directory ssdlab was started in) and what is there: a block device's number
(st_rdev), a regular file's filesystem and inode (st_dev, st_ino), or nothing yet (a file target ssdlab will
create). The hazard checks, the consent line, the job file (fio gets the canonical absolute path, never a
relative one: fio runs inside the point's directory), health, purge and the report all use it, and the write
gate (`safety.WriteGrant.check_job`) compares what each job will open with it just before fio starts
(`Identity.mismatch`). Two targets of one run with the same identity are refused (targets/multi.py).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ssdlab.errors import TargetError, UsageError

Kind = Literal["block", "file", "absent", "other"]


def check_text(text: str, what: str = "target path") -> None:
    """Refuse (one line, exit 2) a path that cannot be named in a job file: not UTF-8 (bytes the command line
    could not decode), or holding a NUL or a line break."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = text.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
        raise UsageError(f"{what} {shown} is not valid UTF-8: fio's job file cannot name it; rename it, or link to "
                         "it from a UTF-8 name") from None
    bad = sorted({c for c in text if c in "\n\r\0"})
    if bad:
        raise UsageError(f"{what} {text!r} contains {' '.join(map(repr, bad))}: fio's job file cannot name it")


@dataclass(frozen=True)
class Identity:
    """What a target path names: `path` is canonical and absolute; `given` is how the user named it."""

    given: str
    path: str
    kind: Kind
    rdev: tuple[int, int] | None = None  # a block device's (major, minor)
    dev: tuple[int, int] | None = None  # a regular file's filesystem (major, minor)
    ino: int | None = None  # ... and inode

    @property
    def key(self) -> tuple[object, ...]:
        """Equal for two identities that are one object: a device by its number, a file by its inode, a file
        that does not exist yet by its canonical path."""
        if self.kind == "block":
            return ("block", self.rdev)
        if self.kind == "file":
            return ("file", self.dev, self.ino)
        return ("path", self.path)

    @property
    def alias(self) -> str:
        """The name the user gave when it is not the canonical path ('' otherwise)."""
        return "" if self.given == self.path else self.given

    def describe(self) -> str:
        """'device 7:3' / 'inode 1234 on 8:1' / 'nothing yet'."""
        if self.kind == "block" and self.rdev is not None:
            return f"device {self.rdev[0]}:{self.rdev[1]}"
        if self.kind == "file" and self.dev is not None:
            return f"inode {self.ino} on {self.dev[0]}:{self.dev[1]}"
        return "nothing yet" if self.kind == "absent" else "not a device or regular file"

    def pinned(self, fd: int) -> Identity:
        """This identity as the open file `fd` is (a file ssdlab just created or opened to lay out)."""
        return _of(self.given, self.path, os.fstat(fd))

    def mismatch(self, path: str) -> str:
        """'' when `path`, opened now as fio opens it (following links), is still this identity; else why not."""
        if path != self.path:
            return f"it names {path}, not {self.path}"
        try:
            st = Path(path).stat()
        except FileNotFoundError:  # a file not laid out yet is still what the run was set up for
            return f"{path} no longer exists" if self.kind != "absent" else ""
        except OSError as exc:
            return f"{path} cannot be looked at ({exc.strerror or exc})"
        now = _of(self.given, self.path, st)
        if now.key != self.key or now.kind != self.kind:
            return f"{path} is now {now.describe()}, not the {self.describe()} the run was set up for"
        return ""


def _of(given: str, path: str, st: os.stat_result) -> Identity:
    """The identity of what `st` describes."""
    if stat.S_ISBLK(st.st_mode):
        return Identity(given, path, "block", rdev=(os.major(st.st_rdev), os.minor(st.st_rdev)))
    if stat.S_ISREG(st.st_mode):
        return Identity(given, path, "file", dev=(os.major(st.st_dev), os.minor(st.st_dev)), ino=st.st_ino)
    return Identity(given, path, "other")


def canonical(text: str) -> str:
    """The canonical absolute path of `text` (~ expanded, relative to the working directory, every link
    resolved; a missing last part is kept as named)."""
    check_text(text)
    try:
        return str((Path.cwd() / Path(text).expanduser()).resolve())
    except (OSError, RuntimeError) as exc:  # a symlink loop, a working directory that is gone
        raise TargetError(f"cannot resolve {text} ({getattr(exc, 'strerror', None) or exc})") from exc


def resolve(text: str) -> Identity:
    """The identity of the target path `text`, resolved now."""
    path = canonical(text)
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        return Identity(given=text, path=path, kind="absent")
    except OSError as exc:
        raise TargetError(f"cannot look at {text} ({exc.strerror or exc})") from exc
    return _of(text, path, st)


def stable_spec(given: str, ident: Identity) -> str:
    """The path `resume` opens the target by: the name given when it is absolute and plain (a /dev/disk/by-id
    name survives a reboot that renumbers devices), else the canonical path (a relative name depends on the
    directory ssdlab was started in)."""
    parts = given.split("/")
    plain = given.startswith("/") and not any(p in (".", "..") for p in parts[1:])
    return given if plain else ident.path
