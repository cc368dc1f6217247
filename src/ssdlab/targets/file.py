"""Regular-file targets: created and laid out at the requested size when absent.

An existing file that ssdlab did not create (targets/owned.py) holds someone's data: writing it needs the
same consent as a block device, and a file that backs a loop device or swap is never written. The file is named
by its identity (targets/identity.py): its canonical absolute path and, once it exists, its inode, which the
write gate compares before every job (re-pinned when ssdlab itself creates the file: layout, purge)."""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import TargetError
from ssdlab.fio.job import FIO_UNSAFE_CHARS, OptionValue, escape_filename
from ssdlab.targets import identity, owned, sysfs
from ssdlab.targets.base import Hazard, Target, TargetOptions
from ssdlab.targets.identity import Identity
from ssdlab.units import format_bytes, parse_size

DEFAULT_FILE_SIZE = 1024**3  # KDiskMark's default test file is 1 GiB
NO_HEALTH = ("a file target sits behind a filesystem; the drive's counters would mix in every other writer "
             "(run on the block device for health data)")



def _target_size(path: Path, existed: bool, params: dict[str, str], opts: TargetOptions) -> int:
    """The span a file target uses: ?size=, --size, an existing file's size, or the default; within --capacity;
    whole 4 KiB blocks, at least 1 MiB (else one line saying what was found and what to use)."""
    if "size" in params:
        size = parse_size(params["size"])
    elif opts.size:
        size = opts.size
    elif existed and path.stat().st_size > 0:
        size = path.stat().st_size
    else:
        size = DEFAULT_FILE_SIZE
    if opts.capacity:
        size = min(size, opts.capacity)
    if size - size % 4096 < 1024**2:
        what = (f"{path} holds {format_bytes(size)}" if existed and "size" not in params and not opts.size
                else f"file size {format_bytes(size)}")
        raise TargetError(f"{what}, too small for a target: use at least 1 MiB (size=..., e.g. "
                          f"file:{path}?size=64MiB)")
    return size - size % 4096

@dataclass
class FileTarget(Target):
    path: Path = Path()
    size: int = DEFAULT_FILE_SIZE
    existed: bool = False
    owned: bool = False  # created by ssdlab (an earlier run's scratch file)
    existing_bytes: int = 0
    ident: Identity | None = None  # what `path` names: resolved once (from_path), checked before every job

    @classmethod
    def from_path(cls, text: str, params: dict[str, str], opts: TargetOptions) -> FileTarget:
        if not text:
            raise TargetError("file target needs a path: file:/path/to/testfile?size=4GiB")
        path = Path(text).expanduser()
        ident = identity.resolve(text)
        unsafe = sorted({c for c in ident.path if c in FIO_UNSAFE_CHARS or c in "\n\r\0"})
        if unsafe:
            raise TargetError(f"{path}: fio cannot open a path containing {' '.join(map(repr, unsafe))} "
                              "(it would open a different file); choose another name")
        if path.is_dir():
            raise TargetError(f"{path} is a directory: name a file inside it, e.g. file:{path / 'ssdlab.dat'}")
        real = Path(ident.path)
        if not real.parent.is_dir():
            raise TargetError(f"directory {path.parent} does not exist: create it or choose another path")
        existed = ident.kind != "absent"
        if existed and ident.kind != "file":
            raise TargetError(f"{path} exists but is not a regular file")
        size = _target_size(real, existed, params, opts)
        # absolute, so `ssdlab resume` from another directory opens the same file
        spec = f"file:{real}" + (f"?size={params['size']}" if "size" in params else "")
        return cls(spec=spec, kind="file", options=opts, path=real, size=size, existed=existed,
                   owned=existed and owned.created_by_ssdlab(real),
                   existing_bytes=real.stat().st_size if existed else 0, ident=ident)

    def identities(self) -> list[Identity]:
        return [self.ident] if self.ident is not None else []

    @property
    def name(self) -> str:
        return str(self.path)

    def health_unavailable(self) -> str:
        return NO_HEALTH

    def resume_spec(self, given: str) -> str:
        """The absolute path (resume may run in another directory and must open the same file)."""
        return self.spec

    def capacity(self) -> int:
        return self.size

    def _device_sysdir(self) -> Path | None:
        return backing_sysdir(self.path)

    def purge_methods(self) -> list[str]:
        """punch (deallocate the blocks), recreate (new file), rewrite (lay out random data again)."""
        from ssdlab.targets.purge import FILE_METHODS

        return list(FILE_METHODS)

    def purge(self, method: str) -> str:
        """Purge the file (see targets/purge.py); returns the line recorded for the run."""
        from ssdlab.targets import purge

        chosen = purge.choose(method, self.purge_methods(), self.name)
        if chosen == "punch" and not self.path.exists():
            chosen = "recreate"
        done = purge.purge_file(self.path, self.size, chosen, lambda: self.prepare(True))
        if self.ident is not None:  # recreate made a new inode: the one ssdlab made is the target's from now on
            self.ident = identity.resolve(str(self.path))
        return done

    def set_write_cache(self, enabled: bool) -> str:
        """A file cannot change its backing device's cache: recorded as unknown."""
        from ssdlab.targets.purge import file_write_cache

        return file_write_cache(enabled)

    def logical_block_size(self) -> int:
        return block_sizes(self.path)[0]

    def numa_sysdir(self) -> Path | None:
        return self._device_sysdir()

    def fio_options(self) -> dict[str, OptionValue]:
        return {"filename": escape_filename(str(self.path)), "ioengine": self.options.ioengine, "direct": 1,
                "size": self.size}

    def _someone_elses(self) -> bool:
        """An existing, non-empty file that ssdlab did not create."""
        return self.existed and not self.owned and self.existing_bytes > 0

    def needs_write_consent(self) -> bool:
        """Someone else's file: a typed-back name or --yes, as for a block device."""
        return self._someone_elses()

    def destroys(self) -> str:
        if self._someone_elses():
            return (f"the contents of the existing file {self.path} ({format_bytes(self.existing_bytes)}, "
                    f"not created by ssdlab): the first {format_bytes(self.size)}")
        if self.existed and self.owned:
            return f"the contents of ssdlab's own scratch file {self.path} (first {format_bytes(self.size)})"
        if self.existed:
            return f"nothing: the existing file {self.path} is empty"
        return f"nothing: {self.path} will be created ({format_bytes(self.size)})"

    def hazards(self) -> list[Hazard]:
        found = self.blocking_hazards()
        if self._someone_elses():
            sig = sysfs.signature(str(self.path))
            if sig:
                found.append(Hazard(f"{self.path} is not blank: it carries an existing {sig} (a disk image?)"))
        return found

    def blocking_hazards(self) -> list[Hazard]:
        """A file backing a loop device or used as swap, on a read-only filesystem, or in a directory another user
        can change (identity.others_can_change)."""
        found: list[Hazard] = []
        try:
            st = self.path.stat() if self.path.exists() else None
            ro = bool(os.statvfs(self.path.parent).f_flag & os.ST_RDONLY)
        except OSError:
            return found
        if st is not None:
            ident = ((os.major(st.st_dev), os.minor(st.st_dev)), st.st_ino)
            for lb in sysfs.loops_backed_by_file(*ident):
                found.append(Hazard(f"{self.path} is the backing file of {lb.loop} ({sysfs.in_use_text(lb)}); "
                                    f"detach it first (losetup -d {lb.loop})", blocking=True))
            if ident in sysfs.swap_files():
                found.append(Hazard(f"{self.path} is in use as swap", blocking=True))
        if ro:
            found.append(Hazard(f"{self.path.parent} is on a read-only filesystem", blocking=True))
        exposed = identity.others_can_change(str(self.path))
        if exposed:  # they could put a link to a device there after the last check: fio follows it
            found.append(Hazard(f"another user can change what {self.path} names ({exposed}): fio opens it by "
                                "that path after the last check; use a file in a directory only you and root can "
                                "change", blocking=True))
        return found

    def layout_writes(self) -> str:
        current = self.path.stat().st_size if self.path.exists() else -1
        if current < 0:
            return f"creates {self.path} and lays it out ({format_bytes(self.size)})"
        if current < self.size:
            return f"extends {self.path} from {format_bytes(current)} to {format_bytes(self.size)}"
        return ""

    def check_space(self) -> None:
        """The layout's growth must fit in the filesystem's free space."""
        current = self.path.stat().st_size if self.path.exists() else 0
        if current >= self.size:
            return
        free = shutil.disk_usage(self.path.parent).free
        if self.size - current > free:
            raise TargetError(f"not enough space for {self.path}: need {format_bytes(self.size - current)} more, "
                              f"{format_bytes(free)} free; choose a smaller size=")

    def prepare(self, writes: bool) -> list[str]:
        """Create the file and write it out in full, so reads read real blocks, not holes. A new file is created
        exclusively (never over a file that appeared meanwhile) and tagged as ssdlab's."""
        current = self.path.stat().st_size if self.path.exists() else -1
        if current >= self.size:
            return []
        self.check_space()
        chunk = 1024**2
        block = os.urandom(chunk)  # incompressible, so compressing filesystems do not flatter reads
        try:
            fd = owned.create_exclusive(self.path) if current < 0 else os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
            self._pin(fd, created=current < 0)
            with os.fdopen(fd, "r+b") as fh:
                fh.seek(max(current, 0) - max(current, 0) % chunk)
                written = fh.tell()
                while written < self.size:
                    n = min(chunk, self.size - written)
                    fh.write(block[:n])
                    written += n
                fh.flush()
                os.fsync(fh.fileno())
        except FileExistsError as exc:
            raise TargetError(f"{self.path} appeared while ssdlab was about to create it: run again to be "
                              "asked about the existing file") from exc
        except OSError as exc:
            raise TargetError(f"cannot lay out {self.path}: {exc.strerror or exc}") from exc
        if current < 0:
            self.existed = self.owned = True
        return [f"laid out {self.path} to {format_bytes(self.size)} with random data"]

    def _pin(self, fd: int, *, created: bool) -> None:
        """The file ssdlab is about to lay out, open as `fd`: a file it created becomes the target's identity;
        an existing one must still be the file the run was set up for."""
        if self.ident is None:
            return
        now = self.ident.pinned(fd)
        if not created and (now.key != self.ident.key or self.ident.kind == "absent"):
            os.close(fd)
            raise TargetError(f"{self.path} was replaced since the run was set up ({now.describe()}, not "
                              f"{self.ident.describe()}): run again to check the file now there")
        self.ident = now

    def info(self) -> dict[str, Any]:
        sysdir = self._device_sysdir()
        ident: dict[str, Any] = {"file": str(self.path)}
        lbs, pbs = block_sizes(self.path)
        if sysdir is not None:
            dev = sysfs.identity(sysdir)
            ident["backing_device"] = dev.get("name", "")
            ident.update({k: v for k, v in dev.items() if k in ("model", "serial", "firmware")})
        with contextlib.suppress(OSError):
            ident["filesystem_block_size"] = os.statvfs(self.path.parent).f_bsize
        hz = self.hazards()
        return {
            "spec": self.spec, "kind": "file", "name": str(self.path), "path": str(self.path),
            "capacity_bytes": self.size, "logical_block_size": lbs, "physical_block_size": pbs,
            "identity": ident, "write_safe": not hz, "safety": [h.text for h in hz],
            "created_by_ssdlab": self.owned if self.existed else None,
            "note": "a file on a filesystem: results include filesystem and page-cache-free direct I/O effects",
        }


def backing_sysdir(path: Path) -> Path | None:
    """The sysfs directory of the block device holding `path` (or, before it exists, its directory)."""
    try:
        st = (path if path.exists() else path.parent).stat()
    except OSError:
        return None
    return sysfs.sys_dir(os.major(st.st_dev), os.minor(st.st_dev))


def block_sizes(path: Path) -> tuple[int, int]:
    """(logical, physical) block size of a file's backing device, 512 B when it is not known: the one rule for a
    file target, here and on an agent's host (the agent answers it for the controller's file targets)."""
    sysdir = backing_sysdir(path)
    return sysfs.block_sizes(sysdir) if sysdir is not None else (512, 512)
