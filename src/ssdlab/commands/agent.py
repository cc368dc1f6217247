"""`ssdlab agent`: make this host drivable by a controller (`ssdlab run SUITE --hosts inventory.toml`).

A thin wrapper around `fio --server`. fio's client/server protocol has no authentication and no encryption:
whoever can connect can make the server run commands as its user (exec_prerun, ioengine=exec) and read or
overwrite any file or device. So by default the agent listens on a **Unix socket** in a directory only its own
user (root, to reach devices) can enter: `/run/ssdlab/agent.sock`, socket mode 0600, directory 0700; `--group`
lets one operators' group in (0660 / 0750). No other local user, and no other host, can reach it; a controller on
another host reaches it through OpenSSH's Unix-socket forwarding (docs/hosts.md). A TCP listener, loopback
included, is reachable by every process on the host: it needs `--insecure-tcp` and says so on every start.

Next to the server, the agent keeps a report of this host's block devices (targets/inspect.py: size, identity,
NUMA node, and the hazards a local run checks) in its probe job file, rewritten every --interval seconds;
controllers read it with a read-nothing fio job before they write anything. Each controller first sends a
challenge (fio/client.challenge_job: small files named after a fresh random token in the agent's working
directory); the agent answers with the token, and the real path of every file target the controller named, in
its next report, so a controller can tell a live agent's fresh report from an old or hand-written one.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import grp
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from ssdlab.errors import FioFailedError, UsageError
from ssdlab.fio import client, runner
from ssdlab.results import atomic

STARTUP_WAIT_S = 0.5
POLL_S = 0.1  # how often the agent looks for challenges (and whether fio still runs)
ANSWERS_KEPT = 16  # answers to recent challenges kept in the report (several controllers may probe at once)
ROOT_SOCKET = Path("/run/ssdlab/agent.sock")
WHY_NO_TCP = ("fio's client/server protocol has no authentication: any process that can reach the listener can "
              "make this host run commands as this user (root, for devices) and overwrite any device")


def default_socket() -> Path:
    """/run/ssdlab/agent.sock for root; for another user, a directory of its own ($XDG_RUNTIME_DIR or /tmp)."""
    if os.geteuid() == 0:
        return ROOT_SOCKET
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        return Path(runtime) / "ssdlab" / "agent.sock"
    return Path(tempfile.gettempdir()) / f"ssdlab-{os.geteuid()}" / "agent.sock"


def add_commands(subparsers: Any) -> dict[str, Any]:
    """Register `agent` on the CLI."""
    p = subparsers.add_parser(
        "agent", help="serve this host's devices to an ssdlab controller (fio --server on a root-only Unix socket)",
        description="Run `fio --server` on a Unix socket only root (or --group) can open, and keep a report of this "
                    "host's block devices for controllers' safety checks. Reach it from another host through SSH: "
                    "ssh -N -L /tmp/node-a.sock:/run/ssdlab/agent.sock root@node-a (docs/hosts.md). "
                    + WHY_NO_TCP + ".")
    p.add_argument("--socket", type=Path, metavar="PATH",
                   help=f"the Unix socket to listen on (default {ROOT_SOCKET} for root); its directory is created "
                        "if missing and must be accessible to this user only (or --group)")
    p.add_argument("--group", metavar="GROUP",
                   help="also let this group's members connect (socket 0660, directory 0750)")
    p.add_argument("--insecure-tcp", action="store_true",
                   help="listen on TCP (--bind, --port) instead of the socket: every process on this host, of any "
                        "user, can then connect")
    p.add_argument("--bind", metavar="ADDR", help="TCP address, with --insecure-tcp (default 127.0.0.1; anything but "
                                                  "loopback also needs --insecure-bind)")
    p.add_argument("--port", type=int, metavar="N",
                   help=f"TCP port, with --insecure-tcp (default {client.DEFAULT_PORT})")
    p.add_argument("--insecure-bind", action="store_true",
                   help="with --insecure-tcp, allow a non-loopback --bind (only on an isolated, trusted network)")
    p.add_argument("--dir", type=Path, metavar="DIR",
                   help="working directory of the server and its device report (default: a new private temporary "
                        "directory, removed at exit); the socket directory's rules apply: created 0700 if missing, "
                        "else owned by this user, closed to others, not a symlink, in a parent others cannot change")
    p.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                   help="how often the device report is refreshed (default 2)")
    return {"agent": cmd_agent}


def check_bind(bind: str, insecure: bool) -> str:
    """The warning every TCP start prints; raises UsageError (one line) for a non-loopback address without
    --insecure-bind."""
    if client.is_loopback(bind):
        return (f"WARNING: listening on TCP {bind} (loopback): {WHY_NO_TCP}; every process on this host can "
                "connect, whatever its user. Use the default Unix socket instead (docs/hosts.md)")
    what = "every interface" if bind in ("0.0.0.0", "::") else bind  # noqa: S104 - named to refuse it
    if not insecure:
        raise UsageError(f"refusing to listen on {what}: {WHY_NO_TCP}. Use the default Unix socket and reach this "
                         "host through an SSH forward (docs/hosts.md), or pass --insecure-bind on an isolated "
                         "network")
    return (f"WARNING: listening on {what} without authentication: {WHY_NO_TCP}. Use this only on an isolated "
            "network you trust")


def tcp_warning(args: argparse.Namespace) -> str:
    """'' for a socket agent; for TCP (which needs --insecure-tcp) the warning to print on every start."""
    if not args.insecure_tcp:
        if args.bind is not None or args.port is not None:
            raise UsageError(f"--bind and --port listen on TCP, which {WHY_NO_TCP.split(': ', 1)[1]}; every local "
                             "user can reach a TCP port, loopback included. The default is a Unix socket only root "
                             "can open (see --socket, --group); pass --insecure-tcp to listen on TCP anyway")
        return ""
    if args.socket is not None or args.group is not None:
        raise UsageError("--insecure-tcp listens on TCP: --socket and --group apply to the Unix socket only")
    return check_bind(args.bind or "127.0.0.1", args.insecure_bind)


def _group_id(name: str | None) -> int | None:
    if name is None:
        return None
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        raise UsageError(f"--group {name}: no such group on this host (create it, or leave --group out)") from None


def prepare_socket_dir(sock: Path, gid: int | None) -> None:
    """Make sure the socket's directory is this user's alone (or this user's and group `gid`'s): created with mode
    0700 (0750) if missing; an existing one must be owned by this user, not a symlink and closed to others,
    and its parent must not let others replace it. Raises UsageError saying what to fix."""
    private_dir(sock.parent, gid, f"--socket {sock}", "choose a socket path in a directory of this agent's own")


def private_dir(d: Path, gid: int | None, option: str, instead: str) -> None:
    """The rules of every directory the agent works in (its socket's, --dir): created with mode 0700 (0750 for
    group `gid`) if missing; an existing one must be a plain directory (not a symlink), owned by this user,
    closed to others (and to the group, without one), and in a parent only root or this user can change (or a
    sticky one, as /tmp). Raises UsageError naming `option`, what is wrong and what to do."""
    want = 0o750 if gid is not None else 0o700
    if not os.path.lexists(d):
        if d.parent.is_dir():  # nothing is made in a parent others can change
            _check_parent(d, option, instead)
        d.mkdir(parents=True, mode=want)
        d.chmod(want)  # mkdir's mode passes through the umask
        if gid is not None:
            os.chown(d, -1, gid)
    st = os.lstat(d)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{option}: {d} is not a plain directory (a symlink, or not a directory): {instead}")
    if st.st_uid != os.geteuid():
        raise UsageError(f"{option}: {d} belongs to another user, who could plant links or read what the agent "
                         f"writes there: {instead}")
    closed = 0o027 if gid is not None else 0o077
    if st.st_mode & closed or (gid is not None and st.st_gid != gid):
        fix = (f"chmod 750 {d} && chgrp {grp.getgrgid(gid).gr_name} {d}" if gid is not None else f"chmod 700 {d}")
        raise UsageError(f"{option}: {d} is open to other users (mode {stat.S_IMODE(st.st_mode):04o}), so "
                         f"they could reach the agent or change its files: {fix}, or {instead}")
    _check_parent(d, option, instead)


def _check_parent(d: Path, option: str, instead: str) -> None:
    parent = os.lstat(d.parent)
    if parent.st_uid not in (0, os.geteuid()) or (parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX):
        raise UsageError(f"{option}: {d.parent} can be changed by other users, who could replace {d}: {instead} "
                         "under a directory only root or this user can change")


def create_private(path: Path) -> int:
    """A new file at `path` for the agent to write, replacing what is there without following it: created as a
    temporary file with O_CREAT|O_EXCL|O_NOFOLLOW (mode 0600) beside it, then renamed over `path` (a rename
    replaces a planted symlink itself, never the file it points to). Returns the open descriptor."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        tmp.replace(path)
    except OSError:
        os.close(fd)
        raise
    return fd


def clear_stale_socket(sock: Path) -> None:
    """Remove a socket a stopped agent left behind (fio refuses to listen where a socket file exists); refuse when
    something still listens there or the path is not a socket."""
    try:
        st = os.lstat(sock)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise UsageError(f"--socket {sock} exists and is not a socket: remove it or choose another path")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(sock))
        except OSError:
            sock.unlink()  # nothing listens: left behind by an agent that was killed
            return
    raise UsageError(f"another agent (or fio server) already listens on {sock}: stop it, or choose another --socket")


def cmd_agent(args: argparse.Namespace, env: Any) -> int:
    from ssdlab.targets.inspect import Inspector

    warning = tcp_warning(args)
    port = args.port if args.port is not None else client.DEFAULT_PORT
    if not 1 <= port <= 65535:
        raise UsageError(f"--port {port} must be from 1 to 65535")
    if args.interval < 0.2:
        raise UsageError("--interval must be at least 0.2 seconds")
    sock = None
    gid = _group_id(args.group)
    if not args.insecure_tcp:
        sock = (args.socket or default_socket()).absolute()
        prepare_socket_dir(sock, gid)
        clear_stale_socket(sock)
    if warning:
        env.err(warning)
    binary = runner.fio_binary()
    inspector = Inspector(interval_s=args.interval, fio_version=runner.fio_version(binary))
    own_dir = args.dir is None
    if not own_dir:  # before anything is written there (also the temporary directory's rules, checked)
        private_dir(args.dir.absolute(), None, f"--dir {args.dir}",
                    "choose a directory this agent's user alone owns and can change")
    workdir = Path(tempfile.mkdtemp(prefix="ssdlab-agent-")) if own_dir else args.dir.absolute()
    try:
        agent = _Agent(workdir, inspector)
        agent.write_report()
        if sock is not None:
            argv = client.socket_server_argv(binary, str(sock))
            where = f"Unix socket {sock}" + (f" (group {args.group})" if args.group else "")
        else:
            bind = client.ipv4_dotted(args.bind or "127.0.0.1")
            argv = client.server_argv(binary, bind, port)
            where = f"TCP {bind}:{port}"
        return _serve(argv, where, env, workdir, agent, args.interval, sock, gid)
    finally:
        if own_dir:
            shutil.rmtree(workdir, ignore_errors=True)


class _Agent:
    """The agent's report file: the inspector's view of this host plus answers to recent challenges."""

    def __init__(self, workdir: Path, inspector: Any) -> None:
        self.workdir = workdir
        self.inspector = inspector
        self.answers: collections.deque[dict[str, Any]] = collections.deque(maxlen=ANSWERS_KEPT)

    def write_report(self) -> None:
        host, devices = self.inspector.report()
        atomic.write_text(self.workdir / client.PROBE_FILE,
                          client.probe_job(host, devices, list(self.answers)).render())

    def answer_challenges(self) -> bool:
        """Take every complete challenge in the working directory (its token's own file is written last): record
        the token and the real path of each path it asks about, remove its files. True when there was one."""
        found: dict[str, list[Path]] = {}
        for path in self.workdir.glob(client.CHALLENGE_PREFIX + "*"):
            m = client.CHALLENGE_RE.match(path.name)
            if m:
                found.setdefault(m.group(1), []).append(path)
        answered = False
        for token, files in found.items():
            paths = _complete_challenge(self.workdir / f"{client.CHALLENGE_PREFIX}{token}", files)
            if paths is None:
                continue  # fio is still writing it
            for f in files:
                with contextlib.suppress(OSError):
                    f.unlink()
            self.answers.append({"token": token, "at": time.time(), "paths": paths, "blocks": _block_sizes(paths)})
            answered = True
        return answered


def _read_head(path: Path) -> bytes:
    """The start of a challenge file: a regular file, never followed through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        return os.read(fd, 4096) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    except OSError:
        return b""
    finally:
        os.close(fd)


def _complete_challenge(base: Path, files: list[Path]) -> dict[str, str] | None:
    """{asked path: its real path here} once the token file and every path file it announces carry their data;
    None before."""
    count = client.challenge_count(_read_head(base)) if base in files else None
    if count is None:
        return None
    paths: dict[str, str] = {}
    for i in range(count):
        asked = client.decode_path(_read_head(base.with_name(f"{base.name}-{i}")))
        if asked is None:
            return None
        paths[asked] = os.path.realpath(asked)
    return paths


def _block_sizes(paths: dict[str, str]) -> dict[str, list[int]]:
    """{asked path: [logical, physical] block size of its backing device here}, as a local file target reads
    them (targets/file.block_sizes)."""
    from ssdlab.targets.file import block_sizes

    return {asked: list(block_sizes(Path(real))) for asked, real in paths.items()}


def _server_umask(group: bool) -> None:
    """In fio's child: the socket it creates gets mode 0600 (0660 with a group) from the start."""
    runner._child_setup()
    os.umask(0o117 if group else 0o177)


def _serve(argv: list[str], where: str, env: Any, workdir: Path, agent: _Agent, interval: float,
           sock: Path | None, gid: int | None) -> int:
    log = workdir / "fio-server.log"
    with os.fdopen(create_private(log), "w", encoding="utf-8") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=workdir, start_new_session=True,
                                preexec_fn=lambda: _server_umask(gid is not None))
    try:
        time.sleep(STARTUP_WAIT_S)
        if proc.poll() is not None:
            text = log.read_text(encoding="utf-8", errors="replace")
            first = next((ln for ln in text.splitlines() if "fio:" in ln), text.strip() or "no output")
            raise UsageError(f"fio --server could not listen on {where}: {first.strip()}"
                             + ("" if sock else " (choose another --port)"))
        if sock is not None:  # belt and braces: the umask already did this
            sock.chmod(0o660 if gid is not None else 0o600)
            if gid is not None:
                os.chown(sock, -1, gid)
        env.err(f"ssdlab agent: fio {agent.inspector.fio_version} server on {where} (pid {proc.pid}); device "
                f"report every {interval:g} s in {workdir}; stop with Ctrl-C")
        while proc.poll() is None:
            agent.write_report()
            deadline = time.monotonic() + interval
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(POLL_S)
                if agent.answer_challenges():
                    agent.write_report()
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        raise FioFailedError(f"fio --server stopped (exit status {proc.returncode})"
                             + (f": {lines[-1]}" if lines else ""))
    except KeyboardInterrupt:
        env.err("ssdlab agent: stopped")
        return 0
    finally:
        _stop_server(proc)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.unlink()


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
