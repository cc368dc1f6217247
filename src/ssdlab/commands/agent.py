"""`ssdlab agent`: make this host drivable by a controller (`ssdlab run SUITE --hosts inventory.toml`).

A thin wrapper around `fio --server`, listening on loopback by default. fio's client/server protocol has no
authentication and no encryption: anyone who can connect can make the server run commands as its user
(exec_prerun, ioengine=exec) and read or overwrite any file or device. So the agent listens on one address
only, loopback unless --insecure-bind says otherwise, and remote controllers reach it through an SSH tunnel
(docs/hosts.md). ssdlab never starts an agent on another host by itself.

Next to the server, the agent keeps a report of this host's block devices (targets/inspect.py: size,
identity, NUMA node, and the hazards a local run checks) in its probe job file, rewritten every --interval
seconds; controllers read it with a read-nothing fio job before they write anything.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from ssdlab.errors import FioFailedError, UsageError
from ssdlab.fio import client, runner
from ssdlab.results import atomic

STARTUP_WAIT_S = 0.5
WHY_LOOPBACK = ("fio's client/server protocol has no authentication: anyone who can reach the port can make "
                "this host run commands as this user (root, for devices) and overwrite any device")


def add_commands(subparsers: Any) -> dict[str, Any]:
    """Register `agent` on the CLI."""
    p = subparsers.add_parser(
        "agent", help="serve this host's devices to an ssdlab controller (fio --server, loopback only by default)",
        description="Run `fio --server` on one address (127.0.0.1 by default) and keep a report of this host's "
                    "block devices for controllers' safety checks. Reach it from another host through an SSH "
                    "tunnel: ssh -N -L 18765:127.0.0.1:8765 HOST. " + WHY_LOOPBACK + ".")
    p.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                   help="address to listen on (default 127.0.0.1; anything but loopback needs --insecure-bind)")
    p.add_argument("--port", type=int, default=client.DEFAULT_PORT, metavar="N",
                   help=f"port (default fio's {client.DEFAULT_PORT})")
    p.add_argument("--insecure-bind", action="store_true",
                   help="allow a non-loopback --bind (only on an isolated, trusted network: there is no "
                        "authentication)")
    p.add_argument("--dir", type=Path, metavar="DIR",
                   help="working directory of the server and its device report (default: a new temporary "
                        "directory, removed at exit)")
    p.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                   help="how often the device report is refreshed (default 2)")
    return {"agent": cmd_agent}


def check_bind(bind: str, insecure: bool) -> str:
    """'' when `bind` may be used; raises UsageError (one line) for a non-loopback address without consent.
    Returns the warning to print when consent was given."""
    if client.is_loopback(bind):
        return ""
    what = "every interface" if bind in ("0.0.0.0", "::") else bind  # noqa: S104 - named to refuse it
    if not insecure:
        raise UsageError(f"refusing to listen on {what}: {WHY_LOOPBACK}. Keep the default 127.0.0.1 and reach "
                         "this host through an SSH tunnel (docs/hosts.md), or pass --insecure-bind on an isolated "
                         "network")
    return (f"WARNING: listening on {what} without authentication: {WHY_LOOPBACK}. Use this only on an "
            "isolated network you trust")


def cmd_agent(args: argparse.Namespace, env: Any) -> int:
    from ssdlab.targets.inspect import Inspector

    warning = check_bind(args.bind, args.insecure_bind)
    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} must be from 1 to 65535")
    if args.interval < 0.2:
        raise UsageError("--interval must be at least 0.2 seconds")
    if warning:
        env.err(warning)
    binary = runner.fio_binary()
    inspector = Inspector(interval_s=args.interval, fio_version=runner.fio_version(binary))
    own_dir = args.dir is None
    workdir = Path(tempfile.mkdtemp(prefix="ssdlab-agent-")) if own_dir else args.dir
    try:
        if not own_dir:
            workdir.mkdir(parents=True, exist_ok=True)
        _write_report(workdir, inspector)
        return _serve(args, env, binary, workdir, inspector)
    finally:
        if own_dir:
            shutil.rmtree(workdir, ignore_errors=True)


def _write_report(workdir: Path, inspector: Any) -> None:
    host, devices = inspector.report()
    atomic.write_text(workdir / client.PROBE_FILE, client.probe_job(host, devices).render())


def _serve(args: argparse.Namespace, env: Any, binary: str, workdir: Path, inspector: Any) -> int:
    argv = client.server_argv(binary, args.bind, args.port)
    log = workdir / "fio-server.log"
    with log.open("w", encoding="utf-8") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=workdir, start_new_session=True,
                                preexec_fn=runner._child_setup)
    try:
        time.sleep(STARTUP_WAIT_S)
        if proc.poll() is not None:
            text = log.read_text(encoding="utf-8", errors="replace")
            first = next((ln for ln in text.splitlines() if "fio:" in ln), text.strip() or "no output")
            raise UsageError(f"fio --server could not listen on {args.bind}:{args.port}: {first.strip()} "
                             "(choose another --port)")
        env.err(f"ssdlab agent: fio {inspector.fio_version} server on {args.bind}:{args.port} (pid {proc.pid}); "
                f"device report every {args.interval:g} s in {workdir}; stop with Ctrl-C")
        while proc.poll() is None:
            _write_report(workdir, inspector)
            deadline = time.monotonic() + args.interval
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(min(0.2, args.interval))
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        raise FioFailedError(f"fio --server stopped (exit status {proc.returncode})"
                             + (f": {lines[-1]}" if lines else ""))
    except KeyboardInterrupt:
        env.err("ssdlab agent: stopped")
        return 0
    finally:
        _stop_server(proc)


def _stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Stop our own fio server and the job processes it forked: its process group, which it leads (it was
    started in a session of its own), by id, never by name."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=wait)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # any job process left behind in the group
