"""Text from stored results and user input made safe to show on a terminal: control characters (C0, DEL, C1:
escape sequences that clear the screen, set the window title, move the cursor ...) and the invisible bidirectional
overrides are shown escaped (`\\x1b`, `\\u202e`) instead of acting. Raw bytes that are not UTF-8 (a command-line
argument or file name Python decoded with surrogateescape: an 8-bit CSI `\\x9b` among them) are shown as the
`\\xNN` of the byte, never written to the terminal as they are. Every terminal view passes what it did not write
itself through `printable`; cli.Env does it for every plain line as a last line of defence."""

from __future__ import annotations

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_TABLE = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}
_TABLE.update({c: f"\\u{c:04x}" for c in _BIDI})
_TABLE.update({c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)})  # lone surrogates: never valid text
_TABLE.update({c: f"\\x{c - 0xDC00:02x}" for c in range(0xDC80, 0xDD00)})  # surrogateescape: the raw byte
_TABLE_LINES = {k: v for k, v in _TABLE.items() if k != 0x0A}


def printable(text: str, *, newlines: bool = False) -> str:
    """`text` with every control character shown escaped (newlines kept when `newlines`)."""
    return text.translate(_TABLE_LINES if newlines else _TABLE)


def encodable(text: str) -> str:
    """`text` as valid Unicode: each lone surrogate (from bytes that were not UTF-8) as its backslash escape, the
    rest unchanged. For data written as it is (an export), which must neither fail to encode nor carry raw bytes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
