"""Who may use `ssdlab serve`: where it listens, its token, and the checks every request passes.

The server listens on loopback unless `--bind` names another address. Loopback is reachable by every user of
the host, so every request needs the token the server generates at start (printed once, in the URL that logs a
browser in): a cookie set by /login (HttpOnly, SameSite=Lax: links in a stored report, which is shown sandboxed, still
open), or an `Authorization: Bearer` header (scripts,
Prometheus). Beyond loopback the same token guards the pages, and the server says once that plain HTTP does not
hide it from the network. Requests that change something (tag edits, when allowed) must also come from the
server's own pages (their Origin), and every page forbids framing and loading anything from elsewhere.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from ssdlab.serve.lab import UsageError, is_loopback

COOKIE = "ssdlab_token"
DEFAULT_BIND = "127.0.0.1"
DEFAULT_PORT = 8680
OPEN_PATHS = frozenset({"/login", "/static/login.js", "/static/app.css"})  # what a browser needs to log in
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def new_token() -> str:
    return secrets.token_urlsafe(24)


def check_bind(bind: str, port: int) -> str:
    """'' for loopback; the warning to print for another address. Raises UsageError (one line) for a port out
    of range or an address that is not an IP literal (a name could resolve to more than the user meant)."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} must be from 1 to 65535 (0: any free port)")
    if is_loopback(bind):
        return ""
    import ipaddress

    try:
        ipaddress.ip_address(bind)
    except ValueError:
        raise UsageError(f"--bind {bind!r} is not an IP address: give one (e.g. 127.0.0.1, the default, or this "
                         "host's LAN address)") from None
    what = "every interface" if bind in ("0.0.0.0", "::") else bind  # noqa: S104 - named to warn about it
    return (f"WARNING: listening on {what}: anyone who can reach it needs the token, but plain HTTP does not hide "
            "the token or the pages from the network. Prefer the default 127.0.0.1 and an SSH tunnel "
            "(ssh -N -L 8680:127.0.0.1:8680 HOST), or use this only on a network you trust")


def token_of(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.cookies.get(COOKIE, "")


def same_token(given: str, token: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())


def guard(token: str) -> Middleware:
    """The middleware: the token on every request but the login page's own; the server's origin on requests
    that change something; headers that keep pages from being framed or loading anything from elsewhere."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path not in OPEN_PATHS and not same_token(token_of(request), token):
            if request.method == "GET" and "text/html" in request.headers.get("Accept", ""):
                raise web.HTTPSeeOther("/login")
            raise web.HTTPUnauthorized(text="the token is missing or wrong: log in with the URL `ssdlab serve` "
                                            "printed, or send 'Authorization: Bearer TOKEN'\n")
        if request.method not in ("GET", "HEAD") and not _same_origin(request):
            raise web.HTTPForbidden(text="a change must come from this server's own pages\n")
        response = await handler(request)
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")  # no-referrer would make Origin null
        response.headers.setdefault("Content-Security-Policy",
                                    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                                    "frame-ancestors 'none'")
        return response

    return middleware


def _same_origin(request: web.Request) -> bool:
    """A browser names the page a request comes from (Origin); scripts with the header token send none."""
    origin = request.headers.get("Origin")
    if origin is None:
        return "Authorization" in request.headers
    return origin == f"{request.scheme}://{request.host}"
