"""The documented way to reach an agent on another host, end to end: a real sshd on a free loopback port (its own
throwaway host key, a key pair and config in a temporary directory), OpenSSH's Unix-socket forwarding from a
controller-side socket to the agent's socket, and a short suite on two file targets through it. Then, as a second
local user (created here), the agent's socket and the forwarded one cannot be opened, a --group member's can,
while the same user can open a socket that is not in a private directory (so the check could fail).

openssh-server is installed with apt when sshd is missing and we are root; the test is skipped, saying why, when
that is impossible.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import run_cli
from ssdlab.results.store import load_run

pytestmark = [pytest.mark.integration, pytest.mark.root]

SUITE = """
name = "ssh-smoke"
summary = "4K random read and write through an SSH-forwarded agent socket"
runtime_s = 0.3

[[matrix]]
name = "rnd"
rw = ["randread", "randwrite"]
bs = ["4k"]
iodepth = [4]
numjobs = [1]
"""
WAIT_S = 60.0
SSHD = "/usr/sbin/sshd"


def _wait_for(what: str, ready: object, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if callable(ready) and ready():
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"{what} did not start: {log.read_text(errors='replace')}")


def _stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)


def _ensure_sshd() -> None:
    if Path(SSHD).exists():
        return
    if shutil.which("apt-get") is None:
        pytest.skip("sshd is not installed and apt-get is not available (install openssh-server)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    res = subprocess.run(["apt-get", "install", "-y", "-qq", "openssh-server"], capture_output=True, text=True,
                         env=env, check=False)
    if not Path(SSHD).exists():
        res = subprocess.run(["sh", "-c", "apt-get update -qq && apt-get install -y -qq openssh-server"],
                             capture_output=True, text=True, env=env, check=False)
    if not Path(SSHD).exists():
        pytest.skip(f"openssh-server could not be installed: {(res.stderr or res.stdout).strip()[-200:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Forward:
    """An agent on a private socket, and its forward through sshd to a controller-side socket."""

    agent_socket: Path
    local_socket: Path
    base: Path


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A directory every user may walk through (pytest's own temporary directories are root's alone, which would
    keep a second user out whatever the agent did)."""
    path = Path(tempfile.mkdtemp(prefix="ssdlab-test-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def forward() -> Iterator[Forward]:
    _ensure_sshd()
    base = Path(tempfile.mkdtemp(prefix="ssdlab-ssh-", dir="/tmp"))
    base.chmod(0o755)  # the second user may walk through it: each socket's own directory or mode must stop it
    keys = base / "keys"
    keys.mkdir(mode=0o700)
    for name in ("host", "user"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    (keys / "authorized_keys").write_text((keys / "user.pub").read_text())
    (keys / "authorized_keys").chmod(0o600)
    port = _free_port()
    config = keys / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {keys / 'host'}",
        f"AuthorizedKeysFile {keys / 'authorized_keys'}", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password", "StrictModes no", "UsePAM no",
        "AllowStreamLocalForwarding yes", "AllowTcpForwarding local", "X11Forwarding no", "PermitTTY no",
        f"PidFile {keys / 'sshd.pid'}", ""]))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
    sshd_log = base / "sshd.log"
    with sshd_log.open("wb") as fh:
        sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
    agent_socket = base / "remote" / "agent.sock"
    agent_log = base / "agent.log"
    with agent_log.open("wb") as fh:
        agent = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "agent", "--socket", str(agent_socket),
                                  "--interval", "0.5"], stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    local_dir = base / "local"
    local_dir.mkdir()
    local_dir.chmod(0o755)  # open: the forwarded socket's own mode (ssh makes it 0600) must stop others
    local_socket = local_dir / "node-a.sock"
    ssh_log = base / "ssh.log"
    ssh: subprocess.Popen[bytes] | None = None
    try:
        _wait_for("sshd", lambda: "Server listening" in sshd_log.read_text(errors="replace"), sshd, sshd_log)
        _wait_for("the agent", lambda: "server on Unix socket" in agent_log.read_text(errors="replace"), agent,
                  agent_log)
        with ssh_log.open("wb") as fh:
            ssh = subprocess.Popen(
                ["ssh", "-N", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o",
                 "UserKnownHostsFile=/dev/null", "-o", "ExitOnForwardFailure=yes", "-i", str(keys / "user"),
                 "-p", str(port), "-L", f"{local_socket}:{agent_socket}", "root@127.0.0.1"],
                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        _wait_for("the SSH forward", local_socket.exists, ssh, ssh_log)
        yield Forward(agent_socket, local_socket, base)
    finally:
        if ssh is not None:
            _stop(ssh)
        _stop(agent, signal.SIGINT)
        _stop(sshd)
        shutil.rmtree(base, ignore_errors=True)


def test_a_suite_runs_through_an_ssh_forwarded_agent_socket(forward: Forward, tmp_path: Path) -> None:
    suite = tmp_path / "ssh-smoke.toml"
    suite.write_text(SUITE)
    files = [tmp_path / "d1.dat", tmp_path / "d2.dat"]
    inv = tmp_path / "lab.toml"
    inv.write_text(f'[[host]]\nname = "node-a"\nsocket = "{forward.local_socket}"\n'
                   f'targets = ["file:{files[0]}?size=16MiB", "file:{files[1]}?size=16MiB"]\n')
    res = run_cli("run", suite, "--hosts", inv, "--out", tmp_path / "r", "--yes")
    assert res.code == 0, res.err
    run = load_run(tmp_path / "r")
    measured = [r for r in run.points if r.point.phase == "measure" and r.point.id != "host-ceiling"]
    assert [r.point.workload.rw for r in measured] == ["randread", "randwrite"]
    for r in measured:
        assert r.measurement is not None
        assert [(p.host, p.status) for p in r.measurement.parts] == [("node-a", "ok"), ("node-a", "ok")]
        assert r.measurement.total_iops > 0
    assert all(f.stat().st_size >= 16 * 1024**2 for f in files)  # written on the "remote" side, through ssh
    assert stat.S_IMODE(forward.local_socket.stat().st_mode) == 0o600  # ssh makes the forwarded socket private


@contextlib.contextmanager
def _local_user(group: str | None = None) -> Iterator[str]:
    name = "ssdlabt" + secrets.token_hex(3)
    argv = ["useradd", "-M", "-s", "/usr/sbin/nologin", *(["-G", group] if group else []), name]
    res = subprocess.run(argv, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        pytest.skip(f"cannot create a second local user here: {res.stderr.strip()}")
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)


def _connects_as(user: str, path: Path) -> tuple[bool, str]:
    """Whether `user` can open the Unix socket at `path` (with fio's client, as an attacker would)."""
    job = Path("/tmp") / f"ssdlab-probe-{secrets.token_hex(4)}.fio"
    job.write_text("[j]\nioengine=null\nsize=1m\nrw=read\n")
    job.chmod(0o644)
    try:
        res = subprocess.run(["runuser", "-u", user, "--", "fio", f"--client=sock:{path}", "--output-format=json",
                              str(job)], capture_output=True, text=True, timeout=60, check=False)
    finally:
        job.unlink()
    return '"client_stats"' in res.stdout, (res.stderr + res.stdout)[-300:]


def test_another_local_user_cannot_reach_the_agent(forward: Forward, open_tmp: Path) -> None:
    if shutil.which("runuser") is None:
        pytest.skip("runuser is not available (util-linux)")
    open_dir = open_tmp
    open_socket = open_dir / "open.sock"
    with _local_user() as user:
        server = subprocess.Popen(["fio", f"--server=sock:{open_socket}"], cwd=open_dir, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + WAIT_S
            while not open_socket.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            ok, text = _connects_as(user, open_socket)
            assert ok, f"control: the second user should reach a socket in an open directory: {text}"
        finally:
            _stop(server, signal.SIGKILL)
        for path in (forward.agent_socket, forward.local_socket):
            ok, text = _connects_as(user, path)
            assert not ok, f"user {user} reached {path}"
            assert "Permission denied" in text


def test_a_group_member_can_reach_a_group_agent_and_others_cannot(open_tmp: Path) -> None:
    if shutil.which("runuser") is None or shutil.which("groupadd") is None:
        pytest.skip("runuser/groupadd are not available")
    group = "ssdlabg" + secrets.token_hex(3)
    if subprocess.run(["groupadd", group], capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot create a group here")
    sock = open_tmp / "grp" / "agent.sock"
    log = open_tmp / "agent.log"
    try:
        with log.open("wb") as fh:
            agent = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "agent", "--socket", str(sock), "--group",
                                      group], stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait_for("the agent", lambda: "server on Unix socket" in log.read_text(errors="replace"), agent, log)
            st = sock.stat()
            assert stat.S_IMODE(st.st_mode) == 0o660
            assert st.st_gid == grp.getgrnam(group).gr_gid
            with _local_user(group) as member, _local_user() as outsider:
                assert pwd.getpwnam(member).pw_name == member
                ok, text = _connects_as(member, sock)
                assert ok, text
                ok, text = _connects_as(outsider, sock)
                assert not ok
                assert "Permission denied" in text
        finally:
            _stop(agent, signal.SIGINT)
    finally:
        subprocess.run(["groupdel", group], capture_output=True, check=False)
