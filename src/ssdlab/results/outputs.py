"""Files ssdlab writes where the user points it (`--junit`, `compare --out`, `plot --out`, `latency --out`):
never over a file ssdlab did not write itself, unless the user says `--force`.

A file counts as ssdlab's when it carries ssdlab's mark: JUnit XML whose <testsuites> is named "ssdlab ...",
an HTML page whose generator is ssdlab, a chart file with the comment (SVG) or the Software text (PNG) that
charts.write_figure puts in. Anything else in the way is refused with one line naming it. `--force` replaces
only regular files, and the checks return the line that says what it replaced (the command prints it); a
device node, socket, FIFO, directory or symbolic link in the way is refused even then (the write would replace
the node itself: `report --junit /dev/loop0 --force` once turned a device node into a regular file).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from ssdlab.errors import UsageError
from ssdlab.units import format_bytes

SVG_MARK = "<!-- written by ssdlab -->"
PNG_SOFTWARE = "ssdlab"
_HEAD = 64 * 1024
_MARK = re.compile(rb"<testsuites\b[^>]*\bname=\"ssdlab[ \"]"  # JUnit XML (report, compare)
                   rb"|<meta name=\"generator\" content=\"ssdlab[ \"]"  # HTML pages
                   + rb"|" + re.escape(SVG_MARK.encode())  # chart files, SVG
                   + rb"|tEXtSoftware\x00" + PNG_SOFTWARE.encode())  # chart files, PNG


def written_by_ssdlab(path: Path) -> bool:
    """Whether the file at `path` carries one of ssdlab's marks (whatever its name)."""
    if not path.is_file():
        return False
    try:
        with path.open("rb") as fh:
            return _MARK.search(fh.read(_HEAD)) is not None
    except OSError:
        return False


def _kind(mode: int) -> str:
    """What a non-regular file is, for the refusal."""
    for test, what in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return what
    return "not a regular file"


def _existing(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"{path} cannot be looked at ({exc.strerror or exc}): choose another path") from exc


def _replaceable(path: Path, st: os.stat_result, option: str) -> None:
    """Refuse (one line, also with --force) anything in the way that is not a regular file."""
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{option} {path} is {_kind(st.st_mode)}: ssdlab replaces only regular files, also with "
                         "--force; choose a file path")


def _replacing(path: Path, st: os.stat_result, option: str) -> str:
    return f"{option}: replacing {path} ({format_bytes(st.st_size)}, a file ssdlab did not write), as --force asks"


def check_new_file(path: Path, *, force: bool, option: str) -> str:
    """Refuse (one line) to replace an existing `path` that ssdlab did not write, unless `force`, and anything but
    a regular file whatever `force` says. Returns the line saying what --force replaces ('' when nothing)."""
    st = _existing(path)
    if st is None:
        return ""
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{option} {path} is a directory: name a file")
    _replaceable(path, st, option)
    if written_by_ssdlab(path):
        return ""
    if force:
        return _replacing(path, st, option)
    raise UsageError(f"{option} {path} exists and was not written by ssdlab: choose another path, or pass --force "
                     "to replace it")


def check_output_dir(path: Path, owner: str, others: Sequence[str], *, force: bool, option: str) -> str:
    """An output directory that will hold `owner` (a file ssdlab marks) and `others`: refused (one line) when
    one of them is already there and ssdlab did not write it (an earlier output of the same command, whose
    `owner` is ssdlab's, is replaced), unless `force`, and when one of them is not a regular file, whatever
    `force` says. Other files in the directory are left alone. Returns the lines saying what --force replaces
    ('' when nothing)."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path} is not a directory: choose another {option}")
    if not path.exists():
        return ""
    present = {name: st for name in (owner, *others) if (st := _existing(path / name)) is not None}
    for name, st in present.items():
        _replaceable(path / name, st, f"{option} {path}: its")
    if not present or written_by_ssdlab(path / owner):
        return ""
    if force:
        return "; ".join(_replacing(path / n, st, option) for n, st in present.items())
    if owner in present:
        raise UsageError(f"{option} {path} holds a {owner} that ssdlab did not write: choose another directory, or "
                         "pass --force to replace it")
    clash = sorted(present)
    raise UsageError(f"{option} {path} holds {clash[0]}, which ssdlab did not write: choose another directory, "
                     "or pass --force to replace it")
