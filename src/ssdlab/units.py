"""Size strings (binary and decimal units) and human formatting."""

from __future__ import annotations

import re

from ssdlab.errors import UsageError

_UNITS: dict[str, int] = {
    "": 1, "b": 1,
    "k": 1024, "kib": 1024, "kb": 1000,
    "m": 1024**2, "mib": 1024**2, "mb": 1000**2,
    "g": 1024**3, "gib": 1024**3, "gb": 1000**3,
    "t": 1024**4, "tib": 1024**4, "tb": 1000**4,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """Parse '4GiB', '512k', '1.5G', '4096' into bytes. K/M/G/T without 'B' are binary, as in fio."""
    m = _SIZE_RE.match(text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS:
        raise UsageError(f"bad size {text!r}: use a number with an optional unit, e.g. 4GiB, 512MiB, 4k")
    value = float(m.group(1)) * _UNITS[unit]
    if value <= 0 or value != int(value):
        raise UsageError(f"bad size {text!r}: must be a positive whole number of bytes")
    return int(value)


def format_bytes(n: float) -> str:
    """Binary units for capacities and block sizes: 4 KiB, 1 MiB, 3.5 GiB."""
    for unit, scale in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if abs(n) >= scale:
            v = n / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.2f} {unit}"
    return f"{n:.0f} B"


def format_bs(n: int) -> str:
    """Compact block-size label as reviews write it: 512, 4K, 128K, 1M."""
    if n >= 1024**2 and n % 1024**2 == 0:
        return f"{n // 1024**2}M"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}K"
    return str(n)


def format_duration(seconds: float) -> str:
    s = round(seconds)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m{sec:02d}s"
    if m:
        return f"{m}m{sec:02d}s"
    return f"{sec}s"
