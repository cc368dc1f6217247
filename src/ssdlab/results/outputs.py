"""Files ssdlab writes where the user points it (`--junit`, `compare --out`, `plot --out`, `latency --out`):
never over a file ssdlab did not write itself, unless the user says `--force`.

A file counts as ssdlab's when it carries ssdlab's mark: JUnit XML whose <testsuites> is named "ssdlab ...",
an HTML page whose generator is ssdlab, a chart file with the comment (SVG) or the Software text (PNG) that
charts.write_figure puts in. Anything else in the way is refused with one line naming it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ssdlab.errors import UsageError

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


def check_new_file(path: Path, *, force: bool, option: str) -> None:
    """Refuse (one line) to replace an existing `path` that ssdlab did not write, unless `force`."""
    if path.is_dir():
        raise UsageError(f"{option} {path} is a directory: name a file")
    if force or not path.exists() or written_by_ssdlab(path):
        return
    raise UsageError(f"{option} {path} exists and was not written by ssdlab: choose another path, or pass --force "
                     "to replace it")


def check_output_dir(path: Path, owner: str, others: Sequence[str], *, force: bool, option: str) -> None:
    """An output directory that will hold `owner` (a file ssdlab marks) and `others`: refused (one line) when
    one of them is already there and ssdlab did not write it (an earlier output of the same command, whose
    `owner` is ssdlab's, is replaced), unless `force`. Other files in the directory are left alone."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path} is not a directory: choose another {option}")
    if force or not path.exists():
        return
    present = sorted(p.name for p in path.iterdir())
    if not present or written_by_ssdlab(path / owner):
        return
    if owner in present:
        raise UsageError(f"{option} {path} holds a {owner} that ssdlab did not write: choose another directory, or "
                         "pass --force to replace it")
    clash = [n for n in present if n in others]
    if clash:
        raise UsageError(f"{option} {path} holds {clash[0]}, which ssdlab did not write: choose another directory, "
                         "or pass --force to replace it")
