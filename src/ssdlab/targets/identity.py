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

import functools
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ssdlab.errors import TargetError, UsageError
from ssdlab.targets import owned, sysfs
from ssdlab.termtext import printable

Kind = Literal["block", "file", "socket", "absent", "other"]


def check_text(text: str, what: str = "target path") -> None:
    """Refuse (one line, exit 2) a path that cannot be named in a job file: not UTF-8 (bytes the command line
    could not decode), or holding a NUL or a line break."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = text.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
        raise UsageError(f"{what} {shown} is not valid UTF-8: fio's job file cannot name it; rename it (fio opens "
                         "the file a link names, by that name)") from None
    bad = sorted({c for c in text if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0})
    if bad:  # a line break ends the job file's line; fio writes other control characters raw into its JSON
        raise UsageError(f"{what} {printable(text)} contains control characters "
                         f"({' '.join(printable(c) for c in bad)}): fio's job file and output cannot name it; "
                         "rename it")


@dataclass(frozen=True)
class Identity:
    """What a target path names: `path` is canonical and absolute; `given` is how the user named it."""

    given: str
    path: str
    kind: Kind
    rdev: tuple[int, int] | None = None  # a block device's (major, minor)
    dev: tuple[int, int] | None = None  # a regular file's filesystem (major, minor)
    ino: int | None = None  # ... and inode
    # a block device: what is behind its number (sysfs.occupant: disk sequence number, partition start, size);
    # a number that came to name another disk, or a loop device attached anew, differs here
    occupant: tuple[int, int, int] | None = None
    # a socket: when it was made (st_ctime_ns); a server started again on the same path makes a new socket, which
    # may get the freed inode's number
    made: int | None = None

    @property
    def key(self) -> tuple[object, ...]:
        """Equal for two identities that are one object: a device by its number, a file by its inode, a file
        that does not exist yet by its canonical path."""
        if self.kind == "block":
            return ("block", self.rdev)
        if self.kind in ("file", "socket"):
            return (self.kind, self.dev, self.ino)
        return ("path", self.path)

    @property
    def alias(self) -> str:
        """The name the user gave when it is not the canonical path ('' otherwise)."""
        return "" if self.given == self.path else self.given

    def describe(self) -> str:
        """'device 7:3' / 'inode 1234 on 8:1' / 'nothing yet'."""
        if self.kind == "block" and self.rdev is not None:
            return f"device {self.rdev[0]}:{self.rdev[1]}"
        if self.kind in ("file", "socket") and self.dev is not None:
            return f"{'socket ' if self.kind == 'socket' else ''}inode {self.ino} on {self.dev[0]}:{self.dev[1]}"
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
        return self._differs(_of(self.given, self.path, st))

    def opened_differs(self, fd: int) -> str:
        """'' when the open file `fd` (opened by this identity's path) is this identity; else why not. What an
        open device is cannot change while it stays open: a loop device is not detached while anyone holds it
        (the kernel defers it to the last close), and its number is not given to another disk."""
        return self._differs(_of(self.given, self.path, os.fstat(fd)))

    def _differs(self, now: Identity) -> str:
        if now.key != self.key or now.kind != self.kind:
            return f"{self.path} is now {now.describe()}, not the {self.describe()} the run was set up for"
        if self.kind == "socket" and now.made != self.made:
            return f"{self.path} is a socket made anew since the run was set up for it (a server started again)"
        if self.kind == "block" and now.occupant != self.occupant:
            was, has = self.occupant or (-1, -1, -1), now.occupant or (-1, -1, -1)
            return (f"{self.path} is still {self.describe()}, but not the disk the run was set up for (disk sequence "
                    f"number {was[0]} then, {has[0]} now; partition start {was[1]} then, {has[1]} now; "
                    f"{was[2]} sectors then, {has[2]} now): a loop device attached anew, or another disk")
        return ""

    def record(self) -> dict[str, Any]:
        """What a run stores to recognise this target when it is resumed, also after a reboot (`changed_since`):
        the path and kind; a device's number and disk sequence number with this boot's id, and what identifies it
        across reboots (sysfs.lasting_identity: WWID, serial, model, a loop device's backing file, partition
        start, size); a file's filesystem and inode, and ssdlab's creation tag when it made the file."""
        out: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.kind == "block" and self.rdev is not None:
            out.update(boot_id=boot_id(), device_number=f"{self.rdev[0]}:{self.rdev[1]}",
                       diskseq=self.occupant[0] if self.occupant else None, **sysfs.lasting_identity(self.rdev))
        elif self.kind == "file" and self.dev is not None:
            out.update(boot_id=boot_id(), filesystem=f"{self.dev[0]}:{self.dev[1]}", inode=self.ino)
            tag = owned.tag(Path(self.path))
            if tag:
                out["created"] = tag
        return out

    def changed_since(self, stored: Mapping[str, Any]) -> str:
        """'' when this identity, resolved now, is the device or file `stored` (its `record()` when the run was
        saved) describes; else what differs, in a few words. In the boot that recorded it: the same device number
        and disk sequence number, or else the same lasting identity (a drive plugged in again, a loop device
        attached again to the same file); a file's filesystem and inode. After a reboot (which renumbers devices):
        every lasting fact recorded (WWID, serial, model, loop backing file and offset, partition start, size);
        a file's inode and creation tag. A device recorded with no lasting identity is judged by its size alone
        after a reboot. A file ssdlab made (its creation tag recorded) that is gone is made anew, as when the
        run started: nothing else is at the path to mistake for it."""
        was = stored.get("kind")
        if was not in ("block", "file"):  # a file not laid out yet (nothing written to compare with), a socket
            return ""
        if self.kind == "absent" and was == "file" and stored.get("created"):
            return ""
        if self.kind != was:
            return f"it was a {_KIND_WORDS.get(str(was), str(was))}, now it is {self.describe()}"
        now = self.record()
        same_boot = stored.get("boot_id") == now.get("boot_id")
        if self.kind == "file":
            keys = ("filesystem", "inode", "created") if same_boot else ("inode", "created")
            return _first_change(stored, now, keys)
        if same_boot and (stored.get("device_number"), stored.get("diskseq")) == (now["device_number"],
                                                                                  now["diskseq"]):
            return ""
        lasting = [k for k in ("wwid", "serial", "loop_backing") if k in stored]
        if same_boot and not lasting:
            return _first_change(stored, now, ("device_number", "diskseq"))
        return _first_change(stored, now, (*lasting, "model", "partition_start", "size_bytes"))


_KIND_WORDS = {"block": "block device", "file": "regular file", "other": "neither a device nor a regular file"}
_FIELD_WORDS = {"wwid": "WWID", "serial": "serial", "loop_backing": "loop backing file", "model": "model",
                "partition_start": "partition start", "size_bytes": "size in bytes", "device_number": "device number",
                "diskseq": "disk sequence number", "filesystem": "filesystem", "inode": "inode",
                "created": "ssdlab creation tag"}


def _first_change(stored: Mapping[str, Any], now: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    """'its serial was X, now Y' for the first of `keys` that `stored` has and `now` does not match ('' when none);
    a loop backing file is compared by path, inode and offset (its filesystem's number may change with a boot)."""
    for key in keys:
        if key not in stored:
            continue
        was, has = stored[key], now.get(key)
        if key == "loop_backing" and isinstance(was, Mapping) and isinstance(has, Mapping):
            parts = ("file", "inode", "offset")
            if all(was.get(k) == has.get(k) for k in parts):
                continue
            was, has = (" ".join(f"{k} {m.get(k)}" for k in parts) for m in (was, has))
        elif was == has:
            continue
        return f"its {_FIELD_WORDS.get(key, key)} was {was}, now {'none' if has is None else has}"
    return ""


@functools.cache
def boot_id() -> str:
    """This boot's id (/proc/sys/kernel/random/boot_id; '' when the kernel does not say)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return ""


def _of(given: str, path: str, st: os.stat_result) -> Identity:
    """The identity of what `st` describes."""
    if stat.S_ISBLK(st.st_mode):
        num = (os.major(st.st_rdev), os.minor(st.st_rdev))
        return Identity(given, path, "block", rdev=num, occupant=sysfs.occupant(num))
    if stat.S_ISREG(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        if stat.S_ISREG(st.st_mode):
            return Identity(given, path, "file", dev=(os.major(st.st_dev), os.minor(st.st_dev)), ino=st.st_ino)
        return Identity(given, path, "socket", dev=(os.major(st.st_dev), os.minor(st.st_dev)), ino=st.st_ino,
                        made=st.st_ctime_ns)
    return Identity(given, path, "other")


def others_can_change(path: str) -> str:
    """'' when no user but root and this one can change what the canonical path `path` names; else which
    directory lets another user do it (who could rename, delete or replace its entry with a link between the
    write gate's last check and fio's open, sending fio's writes elsewhere). Every directory on the way must
    belong to root or this user and be closed to others' writes, or be sticky (/tmp) with the next entry
    belonging to root or this user (others cannot rename or delete it there). ACLs are not read."""
    trusted = {0, os.geteuid()}
    here = Path("/")
    for name in Path(path).parts[1:]:
        try:
            st = here.lstat()
        except OSError:
            return ""  # what cannot be looked at is refused elsewhere (the target's own checks)
        child = here / name
        if st.st_uid not in trusted:
            return f"{here} belongs to {_user(st.st_uid)}"
        open_to = ("every user" if st.st_mode & stat.S_IWOTH else
                   f"group {_group(st.st_gid)}" if st.st_mode & stat.S_IWGRP and st.st_gid != 0 else "")
        if open_to and not st.st_mode & stat.S_ISVTX:
            return f"{here} can be written by {open_to}"
        if open_to:  # sticky: only an entry's owner (and the directory's) may rename or delete it
            try:
                owner = child.lstat().st_uid
            except OSError:
                return ""  # not there yet: ssdlab creates it exclusively (never through a link)
            if owner not in trusted:
                return f"{child} belongs to {_user(owner)} in {here}, which every user may write"
        here = child
    return ""


def _user(uid: int) -> str:
    import pwd

    try:
        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _group(gid: int) -> str:
    import grp

    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"


def canonical(text: str) -> str:
    """The canonical absolute path of `text` (~ expanded, relative to the working directory, every link
    resolved; a missing last part is kept as named)."""
    check_text(text)
    try:
        path = str((Path.cwd() / Path(text).expanduser()).resolve())
    except (OSError, RuntimeError) as exc:  # a symlink loop, a working directory that is gone
        raise TargetError(f"cannot resolve {text} ({getattr(exc, 'strerror', None) or exc})") from exc
    check_text(path, f"target path {text} resolves to")  # a link's target is named in the job file too
    return path


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
