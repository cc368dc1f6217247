"""fio's client/server mode: command-line pieces, golden client outputs, lost hosts, probes."""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import GOLDEN_DIR, CliRunner
from ssdlab.fio import client
from ssdlab.fio.parse import measurement_from_document, results_by_device
from ssdlab.fio.parts import device_parts
from ssdlab.results import aggregate, hist

CLIENT_DIR = GOLDEN_DIR / "client"
A = client.Endpoint("127.0.0.2", 28765)
B = client.Endpoint("127.0.0.3", 28766)
NAMES = [("a", "/dev/x"), ("a", "/dev/y"), ("b", "/dev/x"), ("b", "/dev/y")]


def _doc(name: str) -> dict:
    return json.loads(client._final_document((CLIENT_DIR / name).read_text()))


def test_endpoint_forms() -> None:
    assert A.client_arg() == "ip:127.0.0.2,28765"
    assert client.Endpoint("lab-node-3", 8765).client_arg() == "lab-node-3,8765"
    assert client.Endpoint("::1", 9000).client_arg() == "ip6:::1,9000"
    assert client.Endpoint("::1", 9000).label == "[::1]:9000"
    assert client.server_argv("fio", "127.0.0.1", 8765) == ["fio", "--server=ip:127.0.0.1,8765"]
    assert client.is_loopback("127.0.0.9")
    assert client.is_loopback("::1")
    assert client.is_loopback("localhost")
    assert not client.is_loopback("0.0.0.0")  # noqa: S104 - the address the agent refuses
    assert not client.is_loopback("10.0.0.2")


def test_aggregate_of_two_hosts_is_the_sum_of_their_jobs_not_all_clients() -> None:
    doc = _doc("two-hosts.json")
    jobs = [j for j in doc["client_stats"] if j["jobname"] != "All clients"]
    assert len(jobs) == 4
    assert client.client_hosts(doc) == {("127.0.0.2", 28765), ("127.0.0.3", 28766)}
    m = measurement_from_document(doc)
    for d in ("read", "write"):
        assert m.directions[d].iops == pytest.approx(sum(j[d]["iops"] for j in jobs), rel=1e-12)
        assert m.directions[d].total_ios == sum(j[d]["total_ios"] for j in jobs)
        combined = sum((hist.counts_from_bins(j[d]["clat_ns"]["bins"]) for j in jobs), np.zeros(hist.PLAT_NR, np.int64))
        clat = m.directions[d].clat
        assert clat is not None
        assert list(clat.bins) == hist.sparse(combined)
        want = hist.percentiles(combined, [50.0, 99.0, 99.9])
        assert clat.percentiles([50.0, 99.0, 99.9]) == {p: float(v) for p, v in want.items()}


def test_per_device_and_per_host_results_add_up_to_the_aggregate() -> None:
    doc = _doc("two-hosts.json")
    m = measurement_from_document(doc)
    assert sorted(results_by_device(doc)) == [0, 1, 2, 3]
    parts = device_parts(doc, NAMES)
    assert [p.status for p in parts] == ["ok"] * 4
    shares = aggregate.by_host(parts)
    assert [s.host for s in shares] == ["a", "b"]
    host_sum = sum(s.measurement.total_iops for s in shares if s.measurement is not None)
    assert host_sum == pytest.approx(m.total_iops, rel=1e-12)
    merged = aggregate.merge([s.measurement for s in shares if s.measurement is not None])
    for d in ("read", "write"):
        assert merged.directions[d].clat is not None
        assert m.directions[d].clat is not None
        assert merged.directions[d].clat.bins == m.directions[d].clat.bins
        assert merged.directions[d].clat.percentiles([99.0, 99.99]) == m.directions[d].clat.percentiles([99.0, 99.99])
    # p-d0 folds two threads (group_reporting): one device, two jobs
    assert parts[0].measurement is not None
    assert parts[0].measurement.jobs == 2


def test_a_host_killed_mid_run_is_named_and_its_devices_fail() -> None:
    text = (CLIENT_DIR / "host-killed.txt").read_text()
    lost = client._lost_hosts([A, B], text, "")
    assert list(lost) == ["127.0.0.3:28766"]
    assert "disconnected" in lost["127.0.0.3:28766"]
    doc = json.loads(client._final_document(text))
    assert client.client_hosts(doc) == {("127.0.0.2", 28765)}
    parts = device_parts(doc, NAMES, missing={"b": lost["127.0.0.3:28766"]})
    assert [p.status for p in parts] == ["ok", "ok", "failed", "failed"]
    assert "disconnected" in parts[2].reason
    total = measurement_from_document(doc)
    assert total.total_iops == pytest.approx(sum(p.measurement.total_iops for p in parts[:2]  # type: ignore[union-attr]
                                                 ), rel=1e-12)


def test_an_unreachable_host_is_named_from_stderr() -> None:
    err = (CLIENT_DIR / "unreachable.stderr").read_text()
    b_wrong = client.Endpoint("127.0.0.3", 28799)
    lost = client._lost_hosts([A, b_wrong], (CLIENT_DIR / "unreachable.txt").read_text(), err)
    assert list(lost) == ["127.0.0.3:28799"]
    assert "cannot connect" in lost["127.0.0.3:28799"]


def test_version_mismatch_is_one_line_naming_both_versions() -> None:
    line = client.version_mismatch("fio: client/server version mismatch (101 != 97)\n", "3.33")
    assert "protocol 101 (fio 3.36)" in line
    assert "3.33" in line
    assert "\n" not in line
    assert client.version_mismatch("all fine") == ""


def test_probe_report_survives_fio_description_limits() -> None:
    devices = [{"path": f"/dev/nvme{i}n1", "size_bytes": 3_840_755_982_336, "hazards": [
        {"text": f"/dev/nvme{i}n1p1 is mounted on /srv/data{i} ; # $x", "blocking": True}],
        "identity": {"model": "SAMSUNG MZQL23T8HCLS-00A07" * 3, "serial": f"S64HNE0T{i:06d}"}} for i in range(24)]
    host = {"written": 1.5, "hostname": "node-a", "numa_nodes": {"0": "0-31", "1": "32-63"}}
    job = client.probe_job(host, devices)
    text = job.render()
    assert all(len(line) < 8000 for line in text.splitlines())
    for section in job.jobs:
        assert len(str(section.options["description"])) <= 255  # fio keeps 255 characters
        assert section.options["ioengine"] == "null"
    doc = {"client_stats": [{"jobname": s.name, "desc": s.options["description"]} for s in reversed(job.jobs)]}
    assert client.decode_probe(doc) == {"host": host, "devices": devices, "answers": []}
    doc["client_stats"].pop(1)  # a section missing: no report rather than a wrong one
    assert client.decode_probe(doc) is None


def test_purge_job_trims_devices_and_rewrites_files() -> None:
    job = client.purge_job([("block", {"filename": "/dev/x", "ioengine": "libaio", "direct": 1, "size": 1 << 30}),
                            ("file", {"filename": "/d/f", "ioengine": "libaio", "direct": 1, "size": 1 << 20})])
    a, b = job.jobs
    assert a.options["rw"] == "trim"
    assert a.options["ioengine"] == "psync"
    assert a.options["size"] == 1 << 30
    assert b.options["rw"] == "write"
    assert b.options["filename"] == "/d/f"


def test_run_clients_checks_every_job_with_the_gate_before_anything_starts(tmp_path: Path) -> None:
    from ssdlab.errors import UnsafeTargetError
    from ssdlab.fio.job import FioJob, FioSection

    seen = []

    class Refuse:
        def check_job(self, job: FioJob, where: Path | None = None) -> None:
            seen.append(job)
            if len(seen) == 2:
                raise UnsafeTargetError("refusing to start fio: not authorized")

    jobs = [(A, FioJob((FioSection("p-d0", {"ioengine": "null", "size": 4096}),))),
            (B, FioJob((FioSection("p-d1", {"rw": "write", "filename": "/dev/x"}),)))]
    with pytest.raises(UnsafeTargetError):
        client.run_clients(jobs, tmp_path / "pt", gate=Refuse(), binary="/nonexistent/fio")
    assert len(seen) == 2
    assert not (tmp_path / "pt").exists()


# ---------------------------------------------------------------- a server of another protocol version

def _crc16_arc(data: bytes) -> int:
    """CRC-16 with polynomial 0x8005, reflected, initial 0: what fio's protocol checks on each command header."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


@pytest.fixture
def newer_server() -> Iterator[client.Endpoint]:
    """A listener on 127.0.0.30 that answers the client's first command on every connection with a well-formed
    header of protocol version 101 (fio 3.36), as a newer fio server would (a controller connects more than once:
    its challenge, then its probe)."""
    sock = socket.socket()
    sock.bind(("127.0.0.30", 0))
    sock.listen(4)
    sock.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                with contextlib.suppress(OSError):
                    conn.recv(4096)
                head = struct.pack("<HHIQI", 101, 10, 0, 0, 0)  # version, opcode PROBE, flags, tag, pdu_len
                with contextlib.suppress(OSError):
                    conn.sendall(head + struct.pack("<HH", _crc16_arc(head), 0))
                with contextlib.suppress(OSError):
                    conn.recv(4096)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield client.Endpoint("127.0.0.30", sock.getsockname()[1])
    finally:
        stop.set()
        t.join(timeout=30)
        sock.close()


@pytest.mark.integration
def test_a_protocol_mismatch_is_one_line_naming_both_versions(newer_server: client.Endpoint, tmp_path: Path,
                                                              cli: CliRunner) -> None:
    r = client.probe(newer_server, tmp_path, local_version="3.33", timeout=30)
    assert r.report is None
    assert "the agent speaks protocol 101 (fio 3.36), this fio 3.33 speaks 97" in r.error


@pytest.mark.integration
def test_plan_on_a_mismatched_agent_exits_3_with_one_line(newer_server: client.Endpoint, tmp_path: Path,
                                                          cli: CliRunner) -> None:
    inv = tmp_path / "lab.toml"
    inv.write_text(f'[[host]]\nname = "new"\naddress = "{newer_server.address}"\nport = {newer_server.port}\n'
                   'targets = ["null"]\n')
    res = cli("plan", "quick", "--hosts", inv, traceback=False)
    assert res.code == 3
    assert len(res.err_lines) == 1
    assert "host new" in res.err
    assert "protocol mismatch" in res.err


def test_socket_endpoints_name_their_path() -> None:
    ep = client.Endpoint(socket="/run/ssdlab/node-a.sock")
    assert ep.client_arg() == "sock:/run/ssdlab/node-a.sock"
    assert ep.label == "/run/ssdlab/node-a.sock"
    assert ep.matches("/run/ssdlab/node-a.sock", 8765)  # fio names a socket client by its path
    assert not ep.matches("127.0.0.1", 8765)
    assert client.socket_server_argv("fio", "/run/ssdlab/agent.sock") == ["fio", "--server=sock:/run/ssdlab/agent.sock"]


def test_challenge_job_writes_only_token_files_in_the_agents_directory() -> None:
    token = client.new_token()
    assert client.CHALLENGE_RE.match(client.CHALLENGE_PREFIX + token)
    job = client.challenge_job(token, ["/data/a.dat", "/data/./b.dat", "/x" * 400])
    names = [str(s.options["filename"]) for s in job.jobs]
    assert names == [f"{client.CHALLENGE_PREFIX}{token}-0", f"{client.CHALLENGE_PREFIX}{token}-1",
                     f"{client.CHALLENGE_PREFIX}{token}"]  # the over-long path is not asked about
    assert all("/" not in n for n in names)  # relative: inside fio --server's working directory
    last = job.jobs[-1].options
    assert last["stonewall"] == 1
    assert client.challenge_count(str(last["buffer_pattern"]).strip('"').encode() * 3) == 2
    assert client.challenge_count(b"\0" * 4096) is None
    pattern = str(job.jobs[1].options["buffer_pattern"]).strip('"')
    assert client.decode_path((pattern * 300).encode()[:4096]) == "/data/./b.dat"
    assert client.decode_path(b"\0" * 4096) is None
    for ch in ";#$":
        assert ch not in job.render().split("[resolve-0]", 1)[1]
