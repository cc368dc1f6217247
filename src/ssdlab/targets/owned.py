"""Which regular files ssdlab created itself (its scratch files), so a later run may reuse them without consent.

ssdlab creates a file target only with O_CREAT|O_EXCL (never over an existing file) and then tags the new
inode with the extended attribute `user.ssdlab.created`. The tag lives on the inode: it survives renames and
is gone when someone else deletes the file and creates another one under the same name. A file without the
tag (someone else's, or on a filesystem without user xattrs) is treated as data that needs consent.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from ssdlab import __version__

XATTR = "user.ssdlab.created"


def create_exclusive(path: Path) -> int:
    """Create `path` (it must not exist), tag it as ssdlab's, return a writable fd."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    mark(fd)
    return fd


def mark(fd: int) -> bool:
    """Tag an open file as created by ssdlab; False when the filesystem keeps no user xattrs."""
    value = f"ssdlab {__version__} {time.strftime('%Y-%m-%dT%H:%M:%S%z')}".encode()
    try:
        os.setxattr(fd, XATTR, value)
    except OSError:
        return False
    return True


def created_by_ssdlab(path: Path) -> bool:
    """Whether `path` carries ssdlab's creation tag."""
    with contextlib.suppress(OSError):
        return bool(os.getxattr(path, XATTR))
    return False


def tag(path: Path) -> str:
    """ssdlab's creation tag of `path` (its version and the second it made the file), '' when it has none."""
    with contextlib.suppress(OSError):
        return os.getxattr(path, XATTR).decode("utf-8", "replace")
    return ""

