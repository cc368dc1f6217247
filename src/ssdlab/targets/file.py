"""Regular-file targets: created and laid out at the requested size when absent."""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import TargetError
from ssdlab.fio.job import FIO_UNSAFE_CHARS, OptionValue, escape_filename
from ssdlab.targets import sysfs
from ssdlab.targets.base import Target, TargetOptions
from ssdlab.units import format_bytes, parse_size

DEFAULT_FILE_SIZE = 1024**3  # KDiskMark's default test file is 1 GiB


@dataclass
class FileTarget(Target):
    path: Path = Path()
    size: int = DEFAULT_FILE_SIZE
    existed: bool = False

    @classmethod
    def from_path(cls, text: str, params: dict[str, str], opts: TargetOptions) -> FileTarget:
        if not text:
            raise TargetError("file target needs a path: file:/path/to/testfile?size=4GiB")
        path = Path(text).expanduser()
        unsafe = sorted({c for c in str(path.resolve()) if c in FIO_UNSAFE_CHARS or c in "\n\r\0"})
        if unsafe:
            raise TargetError(f"{path}: fio cannot open a path containing {' '.join(map(repr, unsafe))} "
                              "(it would open a different file); choose another name")
        if path.is_dir():
            raise TargetError(f"{path} is a directory: name a file inside it, e.g. file:{path / 'ssdlab.dat'}")
        if not path.parent.is_dir():
            raise TargetError(f"directory {path.parent} does not exist: create it or choose another path")
        existed = path.exists()
        if existed and not path.is_file():
            raise TargetError(f"{path} exists but is not a regular file")
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
        size -= size % 4096
        if size < 1024**2:
            raise TargetError(f"file size {format_bytes(size)} is too small: use at least 1 MiB (size=...)")
        # absolute, so `ssdlab resume` from another directory opens the same file
        spec = f"file:{path.resolve()}" + (f"?size={params['size']}" if "size" in params else "")
        return cls(spec=spec, kind="file", options=opts, path=path.resolve(), size=size, existed=existed)

    @property
    def name(self) -> str:
        return str(self.path)

    def capacity(self) -> int:
        return self.size

    def _device_sysdir(self) -> Path | None:
        try:
            st = (self.path if self.path.exists() else self.path.parent).stat()
        except OSError:
            return None
        return sysfs.sys_dir(os.major(st.st_dev), os.minor(st.st_dev))

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
        return purge.purge_file(self.path, self.size, chosen, lambda: self.prepare(True))

    def set_write_cache(self, enabled: bool) -> str:
        """A file cannot change its backing device's cache: recorded as unknown."""
        from ssdlab.targets.purge import file_write_cache

        return file_write_cache(enabled)

    def logical_block_size(self) -> int:
        sysdir = self._device_sysdir()
        return sysfs.block_sizes(sysdir)[0] if sysdir else 512

    def fio_options(self) -> dict[str, OptionValue]:
        return {"filename": escape_filename(str(self.path)), "ioengine": self.options.ioengine, "direct": 1,
                "size": self.size}

    def destroys(self) -> str:
        if self.existed:
            return f"the contents of the existing file {self.path} (first {format_bytes(self.size)})"
        return f"nothing: {self.path} will be created ({format_bytes(self.size)})"

    def prepare(self, writes: bool) -> list[str]:
        """Create the file and write it out in full, so reads read real blocks, not holes."""
        current = self.path.stat().st_size if self.path.exists() else -1
        if current >= self.size:
            return []
        free = shutil.disk_usage(self.path.parent).free
        if self.size - max(current, 0) > free:
            raise TargetError(f"not enough space for {self.path}: need {format_bytes(self.size)}, "
                              f"{format_bytes(free)} free; choose a smaller size=")
        chunk = 1024**2
        block = os.urandom(chunk)  # incompressible, so compressing filesystems do not flatter reads
        try:
            with self.path.open("r+b" if current >= 0 else "wb") as fh:
                fh.seek(max(current, 0) - max(current, 0) % chunk)
                written = fh.tell()
                while written < self.size:
                    n = min(chunk, self.size - written)
                    fh.write(block[:n])
                    written += n
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise TargetError(f"cannot lay out {self.path}: {exc.strerror or exc}") from exc
        return [f"laid out {self.path} to {format_bytes(self.size)} with random data"]

    def info(self) -> dict[str, Any]:
        sysdir = self._device_sysdir()
        ident: dict[str, Any] = {"file": str(self.path)}
        lbs = pbs = 512
        if sysdir is not None:
            lbs, pbs = sysfs.block_sizes(sysdir)
            dev = sysfs.identity(sysdir)
            ident["backing_device"] = dev.get("name", "")
            ident.update({k: v for k, v in dev.items() if k in ("model", "serial", "firmware")})
        with contextlib.suppress(OSError):
            ident["filesystem_block_size"] = os.statvfs(self.path.parent).f_bsize
        return {
            "spec": self.spec, "kind": "file", "name": str(self.path), "path": str(self.path),
            "capacity_bytes": self.size, "logical_block_size": lbs, "physical_block_size": pbs,
            "identity": ident, "write_safe": True, "safety": [],
            "note": "a file on a filesystem: results include filesystem and page-cache-free direct I/O effects",
        }
