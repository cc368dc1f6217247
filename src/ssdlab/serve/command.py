"""`ssdlab serve [--results DIR] [--bind ADDR] [--port N]`: the results catalog and runs in progress in a browser.

Checks its options (one line and exit 2 for each mistake), generates the token, prints the URL that logs a browser
in (once), and runs the application (app.py) until Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Any

from ssdlab.serve import auth
from ssdlab.serve.lab import UsageError


def add_commands(sub: Any) -> dict[str, Any]:
    """Register `serve`."""
    p = sub.add_parser(
        "serve", help="the results catalog and runs in progress in a browser (loopback, with a token), and "
                      "/metrics for Prometheus",
        description="Serve a results root to a browser: every run of the catalog (filter, sort, open its report, "
                    "compare runs), and runs in progress live, with charts that grow every second. Listens on "
                    "127.0.0.1 by default; every request needs the token printed at start (in the login URL).")
    p.add_argument("--results", "--root", dest="results", type=Path, metavar="DIR",
                   help="results root (default $SSDLAB_RESULTS or ./results)")
    p.add_argument("--bind", default=auth.DEFAULT_BIND, metavar="ADDR",
                   help=f"address to listen on (default {auth.DEFAULT_BIND}; another address is reachable by other "
                        "hosts: the token still guards it, but plain HTTP does not hide it)")
    p.add_argument("--port", type=int, default=auth.DEFAULT_PORT, metavar="N",
                   help=f"port (default {auth.DEFAULT_PORT}; 0: any free port)")
    p.add_argument("--allow-tag-edits", action="store_true",
                   help="let the pages change runs' tags (DIR/tags.json); read-only without it")
    p.add_argument("--token-file", type=Path, metavar="FILE",
                   help="keep the token in FILE (created 0600 when missing, reused when it exists), e.g. for a "
                        "Prometheus scrape config; default: a new token each start, printed once")
    return {"serve": cmd_serve}


def _token(path: Path | None) -> str:
    """A new token, or the one kept in `path` (which must be private to this user)."""
    if path is None:
        return auth.new_token()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return _kept_token(path)
    except OSError as exc:
        raise UsageError(f"--token-file {path}: {exc.strerror or exc}") from None
    token = auth.new_token()
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return token


def _kept_token(path: Path) -> str:
    """The token kept in `path`: a regular file (never a device, FIFO or link), read at most 4 KiB, UTF-8."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise UsageError(f"--token-file {path} is not a regular file: name a file of its own (created "
                                 "0600 when missing)")
            token = os.read(fd, 4096).decode("utf-8").strip()
        finally:
            os.close(fd)
    except UnicodeDecodeError:
        raise UsageError(f"--token-file {path} holds no token (not UTF-8 text): remove it for a new one") from None
    except OSError as exc:
        raise UsageError(f"--token-file {path}: {exc.strerror or exc}") from None
    if st.st_mode & 0o077 or st.st_uid != os.getuid():
        raise UsageError(f"--token-file {path} can be read by others or belongs to another user: "
                         f"chmod 600 {path}, or remove it for a new one")
    if len(token) < 16:
        raise UsageError(f"--token-file {path} holds no token (16 characters or more): remove it for a new one")
    return token


def cmd_serve(args: argparse.Namespace, env: Any) -> int:
    from ssdlab.results.catalog import default_root

    root: Path = args.results or default_root()
    if not root.is_dir():
        raise UsageError(f"results root {root} is not a directory: pass --results DIR (or set SSDLAB_RESULTS)")
    warning = auth.check_bind(args.bind, args.port)
    token = _token(args.token_file)
    if warning:
        env.err(warning)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(root.resolve(), args, token, env))
    return 0


async def _serve(root: Path, args: argparse.Namespace, token: str, env: Any) -> None:
    from aiohttp import web

    from ssdlab.serve.app import make_app

    runner = web.AppRunner(make_app(root, token, allow_tags=args.allow_tag_edits), access_log=None,
                           handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, args.bind, args.port, reuse_address=False)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(f"port {args.port} on {args.bind} is in use: choose another --port") from None
        raise UsageError(f"cannot listen on {args.bind}:{args.port}: {exc.strerror or exc}") from None
    port = next((int(a[1]) for a in runner.addresses), args.port)  # the one picked for --port 0
    host = f"[{args.bind}]" if ":" in args.bind else args.bind
    where = f"http://{host}:{port}"
    env.err(f"ssdlab serve: {root} on {where} (tag edits {'allowed' if args.allow_tag_edits else 'off'}); "
            "stop with Ctrl-C")
    env.out(f"{where}/login#token={token}")  # once: the URL that logs a browser in (the token is in its fragment)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
