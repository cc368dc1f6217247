"""`ssdlab agent` listens on a Unix socket only its user (or one group) can open; TCP, loopback included, needs
--insecure-tcp and says why on every start."""

from __future__ import annotations

import argparse
import os
import socket
import stat
from pathlib import Path

import pytest

from conftest import CliRunner
from ssdlab.commands.agent import _Agent, check_bind, clear_stale_socket, prepare_socket_dir, tcp_warning
from ssdlab.errors import UsageError
from ssdlab.fio import client


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "10.1.2.3", "lab-node-7"])  # noqa: S104 - refused addresses
def test_agent_refuses_non_loopback_without_the_flag(cli: CliRunner, bind: str) -> None:
    res = cli("agent", "--insecure-tcp", "--bind", bind, traceback=False)
    assert res.code == 2
    assert len(res.err_lines) == 1
    line = res.err_lines[0]
    for needle in ("refusing to listen", "no authentication", "run commands", "SSH forward", "--insecure-bind"):
        assert needle in line


@pytest.mark.parametrize("args", [["--bind", "127.0.0.1"], ["--port", "8765"], ["--bind", "127.1"]])
def test_tcp_of_any_kind_needs_insecure_tcp(cli: CliRunner, args: list[str]) -> None:
    res = cli("agent", *args, traceback=False)
    assert res.code == 2
    assert len(res.err_lines) == 1
    for needle in ("every local user can reach a TCP port", "Unix socket", "--insecure-tcp"):
        assert needle in res.err_lines[0]


def test_every_tcp_start_warns_even_on_loopback() -> None:
    warning = check_bind("0.0.0.0", insecure=True)  # noqa: S104 - the explicit, warned case
    assert warning.startswith("WARNING: listening on every interface without authentication")
    for loopback in ("127.0.0.5", "::1", "127.1", "localhost"):
        warning = check_bind(loopback, insecure=False)
        assert warning.startswith(f"WARNING: listening on TCP {loopback} (loopback)")
        assert "every process on this host can connect" in warning
    with pytest.raises(UsageError):
        check_bind("192.168.0.10", insecure=False)
    ns = argparse.Namespace(insecure_tcp=True, bind=None, port=None, socket=None, group=None, insecure_bind=False)
    assert "127.0.0.1 (loopback)" in tcp_warning(ns)
    ns.socket = Path("/run/x.sock")
    with pytest.raises(UsageError, match="--socket and --group apply to the Unix socket only"):
        tcp_warning(ns)


def test_loopback_in_short_forms_is_loopback() -> None:
    assert client.is_loopback("127.1")
    assert client.ipv4_dotted("127.1") == "127.0.0.1"
    assert client.ipv4_dotted("10.0.0.2") == "10.0.0.2"
    assert client.ipv4_dotted("lab-node") == "lab-node"
    assert not client.is_loopback("128.1")


def test_agent_rejects_bad_port_and_interval(cli: CliRunner) -> None:
    assert cli("agent", "--insecure-tcp", "--port", "0", traceback=False).code == 2
    assert cli("agent", "--interval", "0.01", traceback=False).code == 2


def test_socket_directory_is_created_private(tmp_path: Path) -> None:
    sock = tmp_path / "run" / "agent.sock"
    prepare_socket_dir(sock, None)
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    prepare_socket_dir(sock, None)  # again: it is ours and closed


def test_socket_directory_open_to_others_is_refused_with_the_fix(tmp_path: Path) -> None:
    d = tmp_path / "open"
    d.mkdir(mode=0o755)
    d.chmod(0o755)
    with pytest.raises(UsageError, match=f"open to other users .*chmod 700 {d}"):
        prepare_socket_dir(d / "agent.sock", None)
    link = tmp_path / "link"
    link.symlink_to(d)
    with pytest.raises(UsageError, match="not a plain directory"):
        prepare_socket_dir(link / "agent.sock", None)


def test_socket_directory_in_a_world_writable_parent_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # no sticky bit: anyone could rename our directory away and put theirs in its place
    with pytest.raises(UsageError, match="can be changed by other users"):
        prepare_socket_dir(shared / "mine" / "agent.sock", None)


def test_group_socket_directory_is_0750_of_that_group(tmp_path: Path) -> None:
    gid = os.getegid()
    sock = tmp_path / "grp" / "agent.sock"
    prepare_socket_dir(sock, gid)
    st = sock.parent.stat()
    assert stat.S_IMODE(st.st_mode) == 0o750
    assert st.st_gid == gid


def test_a_stale_socket_is_removed_and_a_live_one_refused(tmp_path: Path) -> None:
    path = tmp_path / "agent.sock"
    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(str(path))
    live.listen(1)
    try:
        with pytest.raises(UsageError, match="already listens"):
            clear_stale_socket(path)
    finally:
        live.close()
    clear_stale_socket(path)  # bound once, nobody listens now: left behind
    assert not path.exists()
    path.write_text("not a socket")
    with pytest.raises(UsageError, match="is not a socket"):
        clear_stale_socket(path)


class _Inspector:
    fio_version = "3.33"

    def report(self) -> tuple[dict[str, object], list[dict[str, object]]]:
        return {"written": 1.0}, []


def _write(path: Path, data: bytes) -> None:
    path.write_bytes((data * (4096 // len(data) + 1))[:4096])


def test_agent_answers_a_complete_challenge_and_resolves_paths(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    agent = _Agent(tmp_path, _Inspector())
    token = client.new_token()
    asked = f"{tmp_path}/link/./d.dat"
    base = tmp_path / f"{client.CHALLENGE_PREFIX}{token}"
    base.write_bytes(b"\0" * 4096)  # fio created it, zeroed, before writing anything
    _write(tmp_path / f"{base.name}-0", b"\0")
    assert not agent.answer_challenges()
    _write(base, f"{client.CHALLENGE_MARK}1.".encode())
    assert not agent.answer_challenges()  # the path file is not written yet
    _write(tmp_path / f"{base.name}-0", client.encode_path(asked).encode())
    assert agent.answer_challenges()
    assert list(agent.answers)[-1]["paths"] == {asked: f"{tmp_path}/real/d.dat"}
    assert not list(tmp_path.glob(client.CHALLENGE_PREFIX + "*"))
    agent.write_report()
    text = (tmp_path / client.PROBE_FILE).read_text()
    doc = {"client_stats": [{"desc": line.split("=", 1)[1]} for line in text.splitlines()
                            if line.startswith("description=")]}
    report = client.decode_probe(doc)
    assert report is not None
    assert client.answer_for(report, token) is not None
    assert client.answer_for(report, client.new_token()) is None


# --- the agent's working directory (--dir) gets the socket directory's rules (issue 31) --------------------

NOBODY = 65534


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    """A directory another user owns, holding a link named like the agent's log to a file of this user's."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    (d / "fio-server.log").symlink_to(victim)
    os.lchown(d / "fio-server.log", NOBODY, NOBODY)
    os.chown(d, NOBODY, NOBODY)
    return d, victim


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a directory to another user")
def _never_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent these tests start must be refused before it serves (a served one would run until stopped)."""
    import ssdlab.commands.agent as agent

    def serve(*args: object, **kwargs: object) -> int:
        raise AssertionError("the agent started serving from a directory it should have refused")

    monkeypatch.setattr(agent, "_serve", serve)


def test_agent_dir_owned_by_another_user_is_refused_before_anything_is_written(cli: CliRunner, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _never_serve(monkeypatch)
    d, victim = _planted(tmp_path)
    res = cli("agent", "--socket", tmp_path / "run" / "agent.sock", "--dir", d, traceback=False)
    assert res.code == 2, res.err
    assert res.err_lines == [f"ssdlab: error: --dir {d}: {d} belongs to another user, who could plant links or read "
                             "what the agent writes there: choose a directory this agent's user alone owns and can "
                             "change"]
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "run" / "agent.sock").exists()


def test_agent_dir_open_to_others_a_link_or_in_a_shared_parent_is_refused(cli: CliRunner, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _never_serve(monkeypatch)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o755)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "private")
    (tmp_path / "private").mkdir(mode=0o700)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    for d, why in ((open_dir, f"is open to other users (mode 0755), so they could reach the agent or change its "
                              f"files: chmod 700 {open_dir}"),
                   (link, "is not a plain directory (a symlink, or not a directory)"),
                   (shared / "mine", f"{shared} can be changed by other users")):
        res = cli("agent", "--socket", tmp_path / "run" / "agent.sock", "--dir", d, traceback=False)
        assert res.code == 2, res.err
        assert len(res.err_lines) == 1
        assert why in res.err, res.err
    assert not (shared / "mine").exists()  # nothing was made where others could change it


def test_agent_files_never_follow_a_link_planted_among_them(tmp_path: Path) -> None:
    from ssdlab.commands.agent import _read_head, create_private, private_dir

    d = tmp_path / "work"
    private_dir(d, None, "--dir", "choose another")
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (d / "fio-server.log").symlink_to(victim)
    fd = create_private(d / "fio-server.log")
    with os.fdopen(fd, "w") as fh:
        fh.write("log\n")
    assert victim.read_text() == "precious\n"  # the link itself was replaced, not the file it named
    assert not (d / "fio-server.log").is_symlink()
    assert stat.S_IMODE((d / "fio-server.log").stat().st_mode) == 0o600
    (d / f"{client.CHALLENGE_PREFIX}x").symlink_to(victim)
    assert _read_head(d / f"{client.CHALLENGE_PREFIX}x") == b""  # a challenge file is never read through a link
