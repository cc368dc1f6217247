"""Target string syntax: `scheme:rest?key=value&key=value`."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from ssdlab.errors import UsageError

_SCHEME_RE = re.compile(r"^([a-z][a-z0-9]*):(.*)$")
URI_SCHEMES = ("nbd", "nbd+unix")  # NBD URIs (targets/nbd.py), which carry their own query


def is_nbd_uri(text: str) -> bool:
    head = text.split(":", 1)[0].lower()
    return ":" in text and (head in URI_SCHEMES or head.startswith("nbds"))


def split_spec(text: str) -> tuple[str, str, dict[str, str]]:
    """('file', '/tmp/x', {'size': '4GiB'}) from 'file:/tmp/x?size=4GiB'; bare 'null' -> ('null', '', {})."""
    body, _, query = text.partition("?")
    params: dict[str, str] = {}
    if query:
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
        except ValueError as exc:
            raise UsageError(f"bad target parameters {query!r}: write them as key=value&key=value") from exc
        params = dict(pairs)
    if body in ("null", "sim"):
        return body, "", params
    m = _SCHEME_RE.match(body)
    if m and not body.startswith("/"):
        return m.group(1), m.group(2), params
    return "", body, params
