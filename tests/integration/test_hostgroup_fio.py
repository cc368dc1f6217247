"""Host groups on real fio: `ssdlab agent` processes on Unix sockets in private directories (one on TCP
127.0.0.x with --insecure-tcp), driven by `ssdlab run --hosts`.

Every agent is started by a fixture and always stopped in its teardown (by its own pid and its fio server's
process group, never by name). Points are short (0.3 s) and use the null engine or small files.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from conftest import CliResult, LoopFactory, MiB, run_cli
from ssdlab.results import aggregate, hist
from ssdlab.results.store import load_run
from ssdlab.targets.file import block_sizes

pytestmark = pytest.mark.integration

SUITE = """
name = "hosts-smoke"
summary = "random read then random write, 4K QD4 x 2 jobs"
runtime_s = 0.3

[[matrix]]
name = "rnd"
rw = ["randread", "randwrite"]
bs = ["4k"]
iodepth = [4]
numjobs = [2]
"""
START_TIMEOUT_S = 60.0


def free_port(address: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


@dataclass
class Agent:
    address: str
    port: int
    proc: subprocess.Popen[str]
    log: Path
    server_pid: int = 0
    socket: Path | None = None  # a socket agent (the default) listens here; a TCP agent on address:port

    def stop(self) -> None:
        """Stop the agent (Ctrl-C), then make sure its fio server's process group is gone."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=20)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=20)
        self.kill_server()

    def kill_server(self) -> None:
        """The host drops: its fio server and the job processes it forked die at once."""
        if self.server_pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.server_pid, signal.SIGKILL)


def start_agent(address: str, tmp: Path, port: int | None = None, *, tcp: bool = False) -> Agent:
    """An agent named after `address`: on a Unix socket in tmp (the default), or on TCP address:port."""
    port = port or (free_port(address) if tcp else 0)
    sock = None if tcp else tmp / f"agent-{address}" / "agent.sock"
    log = tmp / f"agent-{address}-{port}.log"
    where = ["--insecure-tcp", "--bind", address, "--port", str(port)] if tcp else ["--socket", str(sock)]
    with log.open("w") as fh:  # the agent keeps its own copy of the descriptor
        proc = subprocess.Popen([sys.executable, "-m", "ssdlab.cli", "agent", *where, "--interval", "0.5"],
                                stdout=fh, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    agent = Agent(address, port, proc, log, socket=sock)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        m = re.search(r"\(pid (\d+)\)", log.read_text())
        if m:
            agent.server_pid = int(m.group(1))
            return agent
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    agent.stop()
    raise AssertionError(f"agent {sock or f'{address}:{port}'} did not start: {log.read_text()}")


def _job_running(server_pid: int) -> bool:
    """Whether a fio server runs a job: its connection process has forked the job's (a live grandchild)."""
    parent: dict[int, int] = {}
    for proc_stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = proc_stat.read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                parent[int(proc_stat.parent.name)] = int(fields[1])
    return any(parent.get(ppid) == server_pid for ppid in parent.values())


@contextlib.contextmanager
def agents(tmp: Path, count: int) -> Iterator[list[Agent]]:
    started: list[Agent] = []
    try:
        for i in range(count):
            started.append(start_agent(f"127.0.0.{11 + i}", tmp))
        yield started
    finally:
        for a in started:
            a.stop()


def inventory(path: Path, hosts: list[tuple[str, Agent | tuple[str, int], list[str]]]) -> Path:
    lines = []
    for name, a, targets in hosts:
        if isinstance(a, Agent) and a.socket is not None:
            where = [f'socket = "{a.socket}"']
        else:
            address, port = (a.address, a.port) if isinstance(a, Agent) else a
            where = [f'address = "{address}"', f"port = {port}"]
        lines += ["[[host]]", f'name = "{name}"', *where,
                  "targets = [" + ", ".join(json.dumps(t) for t in targets) + "]", f'labels = {{ node = "{name}" }}',
                  ""]
    path.write_text("\n".join(lines))
    return path


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Agent]]:
    with agents(tmp_path_factory.mktemp("agents"), 3) as started:
        yield started


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("suite") / "hosts-smoke.toml"
    path.write_text(SUITE)
    return path


@pytest.fixture(scope="module")
def null_run(three: list[Agent], suite_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[CliResult, Path]:
    base = tmp_path_factory.mktemp("null-run")
    inv = inventory(base / "lab.toml", [("a", three[0], ["null", "null?size=64MiB"]), ("b", three[1], ["null"]),
                                        ("c", three[2], ["null"])])
    out = base / "results"
    return run_cli("run", suite_file, "--hosts", inv, "--out", out), out


def test_three_hosts_aggregate_is_the_exact_sum_of_devices_and_hosts(null_run: tuple[CliResult, Path]) -> None:
    res, out = null_run
    assert res.code == 0, res.err
    run = load_run(out)
    measured = [r for r in run.points if r.point.phase == "measure"]
    assert [r.point.workload.rw for r in measured] == ["randread", "randwrite"]
    for r in measured:
        m = r.measurement
        assert m is not None
        assert [(p.host, p.device, p.status) for p in m.parts] == [
            ("a", "null", "ok"), ("a", "null", "ok"), ("b", "null", "ok"), ("c", "null", "ok")]
        assert m.total_iops == pytest.approx(sum(p.measurement.total_iops for p in m.parts  # type: ignore[union-attr]
                                                 ), rel=1e-9)
        shares = aggregate.by_host(m.parts)
        assert [s.host for s in shares] == ["a", "b", "c"]
        assert m.total_iops == pytest.approx(sum(s.measurement.total_iops for s in shares  # type: ignore[union-attr]
                                                 ), rel=1e-9)
        d = next(iter(m.directions))
        combined = np.zeros(hist.PLAT_NR, dtype=np.int64)
        for p in m.parts:
            assert p.measurement is not None
            lat = p.measurement.directions[d].clat
            assert lat is not None
            combined += hist.counts_from_sparse(lat.bins)
        agg = m.directions[d].clat
        assert agg is not None
        assert list(agg.bins) == hist.sparse(combined)  # bins added across jobs, devices and hosts
        want = hist.percentiles(combined, [50.0, 99.0, 99.9])
        assert agg.percentiles([50.0, 99.0, 99.9]) == {p: float(v) for p, v in want.items()}
        assert (out / "points" / r.point.id / "fio.json").is_file()
        assert len(list((out / "points" / r.point.id).glob("job-*.fio"))) == 3  # one job file per host


def test_host_ceiling_runs_first_on_the_same_sections(null_run: tuple[CliResult, Path]) -> None:
    _, out = null_run
    run = load_run(out)
    assert run.points[0].point.id != "host-ceiling"  # a null group is its own ceiling: no check
    assert all(r.point.phase == "measure" for r in run.points)


def test_report_shows_hosts_devices_and_aggregate(null_run: tuple[CliResult, Path]) -> None:
    _, out = null_run
    text = (out / "report.html").read_text()
    for needle in ("Hosts and devices", "Per-device and per-host results", "host a", "host b", "all devices",
                   "node=a", "IOPS per device"):
        assert needle in text


def test_file_targets_on_two_hosts_write_and_report_the_ceiling(three: list[Agent], suite_file: Path,
                                                               tmp_path: Path) -> None:
    files = [tmp_path / "a1.dat", tmp_path / "a2.dat", tmp_path / "b1.dat"]
    inv = inventory(tmp_path / "lab.toml", [
        ("a", three[0], [f"file:{files[0]}?size=16MiB", f"file:{files[1]}?size=16MiB"]),
        ("b", three[1], [f"file:{files[2]}?size=16MiB"])])
    refused = run_cli("run", suite_file, "--hosts", inv, "--out", tmp_path / "refused")
    assert refused.code == 4, refused.err  # files on agent hosts: writing needs consent
    assert "host a: the file" in refused.err
    res = run_cli("run", suite_file, "--hosts", inv, "--out", tmp_path / "r", "--yes")
    assert res.code == 0, res.err
    assert all(f.stat().st_size >= 16 * 1024**2 for f in files)  # fio laid them out on the agent side
    run = load_run(tmp_path / "r")
    ceiling = run.result("host-ceiling")
    assert ceiling is not None
    assert ceiling.status == "ok"
    assert ceiling.measurement is not None
    assert len(ceiling.measurement.parts) == 3
    for job in (tmp_path / "r" / "points" / "host-ceiling").glob("job-*.fio"):
        assert "ioengine=null" in job.read_text()
        assert "filename" not in job.read_text()
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Host ceiling" in html
    # the console: the suite's 2 points announced, counted and ended as 2 (the ceiling check aside), the check
    # named once, the run named by its hosts (not the inventory's file name), here as in the report and catalog
    said = res.out + res.err
    assert "hosts-smoke.toml on hosts a, b: 2 points, estimated" in said, said
    assert "[1/2]" in said
    assert "[2/2]" in said
    assert "[3/" not in said
    assert "run complete: 2 measured points" in said
    assert "host ceiling: Host ceiling" not in said
    assert said.count("Host ceiling: null engine") == 1
    assert "hosts-smoke.toml on hosts a, b" in html
    assert "on lab<" not in html
    listed = run_cli("runs", "--root", tmp_path, "--json")
    assert [e["target"] for e in json.loads(listed.out) if e["path"].endswith("/r")] == ["hosts a, b"]
    # a file's block sizes are its backing device's, read on its host as a local file target reads them
    local = block_sizes(files[0])
    for d in run.target["devices"]:
        assert (d["logical_block_size"], d["physical_block_size"]) == local


def test_an_unreachable_agent_is_one_line_before_anything_runs(three: list[Agent], suite_file: Path,
                                                               tmp_path: Path) -> None:
    ghost = ("127.0.0.19", free_port("127.0.0.19"))  # nothing listens there
    inv = inventory(tmp_path / "lab.toml", [("a", three[0], ["null"]), ("ghost", ghost, ["null"])])
    res = run_cli("run", suite_file, "--hosts", inv, "--out", tmp_path / "r", traceback=False)
    assert res.code == 3
    assert len(res.err_lines) == 1
    assert "host ghost: cannot connect to an agent at 127.0.0.19" in res.err
    # the hint is the command that listens there: address and port included
    assert f"`ssdlab agent --insecure-tcp --bind 127.0.0.19 --port {ghost[1]}`" in res.err
    assert not (tmp_path / "r").exists()


def test_a_host_killed_mid_run_stops_the_run_and_resume_finishes_it(three: list[Agent], tmp_path: Path) -> None:
    slow = tmp_path / "slow.toml"  # one 2-s point: long enough to lose a host during it
    slow.write_text(SUITE.replace("runtime_s = 0.3", "runtime_s = 2").replace('["randread", "randwrite"]',
                                                                          '["randread"]'))
    with agents(tmp_path, 1) as (b,):
        inv = inventory(tmp_path / "lab.toml", [("a", three[0], ["null"]), ("b", b, ["null"])])
        out = tmp_path / "r"
        result: list[CliResult] = []
        t = threading.Thread(target=lambda: result.append(run_cli("run", slow, "--hosts", inv, "--out", out)))
        t.start()
        deadline = time.monotonic() + 120
        while not list(out.glob("points/*/cmd.txt")) and time.monotonic() < deadline:
            time.sleep(0.05)  # the fio client starts right after its command is written
        while not _job_running(b.server_pid) and time.monotonic() < deadline:
            time.sleep(0.02)  # b's server forked a connection, and that its job (however loaded the machine)
        time.sleep(0.3)
        b.kill_server()  # host b dies during the point
        t.join(timeout=180)
        assert len(result) == 1, "the run did not finish"
        assert result[0].code == 6, result[0].err
        assert "host b" in result[0].err
        run = load_run(out)
        assert run.status == "failed"
        failed = run.points[-1]
        assert failed.status == "failed"
        assert failed.measurement is not None  # what host a finished is kept
        assert [p.status for p in failed.measurement.parts] == ["ok", "failed"]
        assert failed.measurement.total_iops == failed.measurement.parts[0].measurement.total_iops  # type: ignore[union-attr]
        b.stop()
        b2 = start_agent(b.address, tmp_path, port=b.port)  # the host is back
        try:
            resumed = run_cli("resume", out)
            assert resumed.code == 0, resumed.err
            run = load_run(out)
            assert run.status == "complete"
            done = run.points[-1]
            assert done.attempt == 2
            assert done.measurement is not None
            assert [p.status for p in done.measurement.parts] == ["ok", "ok"]
        finally:
            b2.stop()


def test_local_devices_run_together_with_per_device_results(suite_file: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.dat", tmp_path / "b.dat"
    res = run_cli("run", suite_file, "--target", f"file:{a}?size=16MiB", "--target", f"file:{b}?size=16MiB",
                  "--out", tmp_path / "r")
    assert res.code == 0, res.err
    run = load_run(tmp_path / "r")
    assert run.points[0].point.id == "host-ceiling"
    for r in run.points[1:]:
        assert r.measurement is not None
        assert [p.device for p in r.measurement.parts] == [str(a), str(b)]
        assert r.measurement.total_iops == pytest.approx(
            sum(p.measurement.total_iops for p in r.measurement.parts), rel=1e-9)  # type: ignore[union-attr]
    said = res.out + res.err
    assert "[1/2]" in said
    assert "[3/" not in said
    assert "run complete: 2 measured points" in said
    job = (tmp_path / "r" / "points" / "001-rnd-randread" / "job.fio").read_text()
    assert "[001-rnd-randread-d0]" in job
    assert "[001-rnd-randread-d1]" in job
    assert any("NUMA placement" in str(e.get("text", "")) for e in run.events)


@pytest.mark.root
def test_safety_is_checked_on_every_host_by_device_name(three: list[Agent], suite_file: Path, tmp_path: Path,
                                                        loops: LoopFactory) -> None:
    """Loop devices seen through the agents: a mounted one refuses the run whatever the flags, one with a
    filesystem needs --destructive, and a clean one is written after consent naming every device."""
    clean = loops.create("clean", 16 * MiB)
    ext4 = loops.create("fs", 16 * MiB, ext4=True)
    mounted = loops.create("mnt", 16 * MiB, mount=True)
    time.sleep(2)  # the agents' device reports (refreshed every 0.5 s) now list the new loop devices

    def inv(name: str, devices: list[str]) -> Path:
        return inventory(tmp_path / f"{name}.toml", [("a", three[0], devices[:1]), ("b", three[1], devices[1:])])

    res = run_cli("run", suite_file, "--hosts", inv("m", [clean.dev, mounted.dev]), "--out", tmp_path / "m",
                  "--yes", "--destructive", traceback=False)
    assert res.code == 4
    assert f"host b: {mounted.dev} is mounted on" in res.err
    assert not (tmp_path / "m").exists()
    res = run_cli("run", suite_file, "--hosts", inv("f", [clean.dev, ext4.dev]), "--out", tmp_path / "f", "--yes",
                  traceback=False)
    assert res.code == 4
    assert f"host b: {ext4.dev} is not blank: it carries an existing ext4" in res.err
    assert "--destructive" in res.err
    before = ext4.digest()
    res = run_cli("run", suite_file, "--hosts", inv("ok", [clean.dev, ext4.dev]), "--out", tmp_path / "ok", "--yes",
                  "--destructive")
    assert res.code == 0, res.err
    assert f"host a: ALL DATA on {clean.dev}" in res.err
    assert f"host b: ALL DATA on {ext4.dev}" in res.err
    assert ext4.digest() != before  # consent given: the device was written through its agent


def test_the_agent_socket_is_private_and_tcp_still_works_when_asked(three: list[Agent], suite_file: Path,
                                                                    tmp_path: Path) -> None:
    sock = three[0].socket
    assert sock is not None
    assert stat.S_ISSOCK(sock.stat().st_mode)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    tcp = start_agent("127.0.0.21", tmp_path, tcp=True)
    try:
        assert "WARNING: listening on TCP 127.0.0.21 (loopback)" in tcp.log.read_text()
        inv = inventory(tmp_path / "lab.toml", [("a", three[0], ["null"]), ("t", tcp, ["null"])])
        res = run_cli("run", suite_file, "--hosts", inv, "--out", tmp_path / "r")
        assert res.code == 0, res.err
        m = load_run(tmp_path / "r").points[-1].measurement
        assert m is not None
        assert [p.host for p in m.parts] == ["a", "t"]
    finally:
        tcp.stop()


def test_a_plain_fio_server_with_a_written_report_is_refused(suite_file: Path, tmp_path: Path) -> None:
    """A hand-written report (here: no hazards, dated an hour ahead) served by a plain fio --server cannot answer
    the controller's fresh challenge: the run is refused before anything is written."""
    from ssdlab.fio import client

    work = tmp_path / "fake"
    (work / "s").mkdir(parents=True, mode=0o700)
    host = {"written": time.time() + 3600, "hostname": "fake", "fio_version": "3.33", "numa_nodes": {}}
    (work / client.PROBE_FILE).write_text(client.probe_job(host, [], [{"token": "0" * 32, "paths": {}}]).render())
    sock = work / "s" / "fio.sock"
    proc = subprocess.Popen(["fio", f"--server=sock:{sock}"], cwd=work, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        target = tmp_path / "victim.dat"
        inv = tmp_path / "lab.toml"
        inv.write_text(f'[[host]]\nname = "fake"\nsocket = "{sock}"\ntargets = ["file:{target}?size=16MiB"]\n')
        res = run_cli("run", suite_file, "--hosts", inv, "--out", tmp_path / "r", "--yes", traceback=False)
        assert res.code == 3, res.err
        assert len(res.err_lines) == 1
        assert "host fake: the agent at" in res.err
        assert "did not answer this run's challenge" in res.err
        assert not target.exists()
        assert not (tmp_path / "r").exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)


def test_one_file_named_twice_through_a_symlink_is_refused(three: list[Agent], suite_file: Path,
                                                            tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    inv = inventory(tmp_path / "lab.toml", [("a", three[0], [f"file:{tmp_path}/real/d.dat?size=16MiB",
                                                            f"file:{tmp_path}/alias/d.dat?size=16MiB"])])
    res = run_cli("plan", suite_file, "--hosts", inv, traceback=False)
    assert res.code == 3, res.err
    assert "are the same file" in res.err
    assert f"(file:{tmp_path}/real/d.dat)" in res.err
