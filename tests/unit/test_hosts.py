"""Host-group inventories and targets: validation, agent reports, hazards per host, consent text."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ssdlab.errors import TargetError, UsageError
from ssdlab.fio import client, runner
from ssdlab.targets.base import TargetOptions
from ssdlab.targets.hosts import HostGroupTarget, load_inventory, parse_inventory

INVENTORY = """
[[host]]
name = "a"
address = "10.0.0.2"
targets = ["/dev/nvme0n1", "/dev/disk/by-id/nvme-X"]
labels = { node = "a" }

[[host]]
address = "10.0.0.3"
port = 18765
targets = ["file:/data/ssdlab.dat?size=1GiB"]
"""


def _device(path: str, size: int = 4 * 1024**3, hazards: list[dict[str, Any]] | None = None,
            node: int | None = 1, aliases: list[str] | None = None) -> dict[str, Any]:
    return {"path": path, "kind": "block", "size_bytes": size, "logical_block_size": 512, "physical_block_size": 4096,
            "identity": {"model": "Model X", "serial": f"S-{path[-4:]}"}, "numa_node": node,
            "hazards": hazards or [], "aliases": aliases or []}


def _report(devices: list[dict[str, Any]], written: float | None = None) -> dict[str, Any]:
    return {"host": {"written": time.time() if written is None else written, "hostname": "node",
                     "fio_version": "3.33", "numa_nodes": {"0": "0-15", "1": "16-31"}}, "devices": devices}


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> dict[str, client.ProbeResult | dict[str, Any]]:
    """Agent reports by endpoint label, answered instead of running fio. Like `ssdlab agent`, each report answers
    the controller's last challenge (the token, file paths resolved as given, or as `resolved` maps them), unless
    it has "answers" of its own."""
    answers: dict[str, client.ProbeResult | dict[str, Any]] = {}
    challenged: dict[str, Any] = {}

    def challenge(requests: list[tuple[client.Endpoint, list[str]]], token: str, **_: Any) -> dict[str, str]:
        challenged.update({ep.label: (token, paths) for ep, paths in requests})
        return {}

    def fake(endpoints: list[client.Endpoint], workdir: Path, **_: Any) -> list[client.ProbeResult]:
        out = []
        for ep in endpoints:
            a = answers[ep.label]
            if isinstance(a, dict) and "answers" not in a and ep.label in challenged:
                token, paths = challenged[ep.label]
                resolved = answers.get("resolved") or {}
                a = {**a, "answers": [{"token": token, "paths": {x: resolved.get(x, x) for x in paths}}]}
            out.append(a if isinstance(a, client.ProbeResult) else client.ProbeResult(ep, report=a))
        return out

    monkeypatch.setattr(client, "send_challenges", challenge)
    monkeypatch.setattr(client, "probe_all", fake)
    monkeypatch.setattr(client, "CHALLENGE_WAIT_S", 0.3)
    monkeypatch.setattr(runner, "fio_binary", lambda: "/usr/bin/fio")
    monkeypatch.setattr(runner, "fio_version", lambda binary=None: "3.33")
    return answers


def _group(tmp_path: Path, text: str = INVENTORY, opts: TargetOptions | None = None) -> HostGroupTarget:
    path = tmp_path / "lab.toml"
    path.write_text(text)
    return HostGroupTarget.from_inventory(path, opts or TargetOptions())


def test_inventory_is_parsed_with_defaults(tmp_path: Path) -> None:
    (tmp_path / "lab.toml").write_text(INVENTORY)
    hosts = load_inventory(tmp_path / "lab.toml")
    assert [h.name for h in hosts] == ["a", "10.0.0.3:18765"]
    assert hosts[0].endpoint == client.Endpoint("10.0.0.2", 8765)
    assert hosts[0].labels == {"node": "a"}


@pytest.mark.parametrize(("data", "needle"), [
    ({}, "no [[host]] tables"),
    ({"host": [{"targets": ["/dev/x"]}]}, "address must be"),
    ({"host": [{"address": "h", "port": 70000, "targets": ["/dev/x"]}]}, "port 70000"),
    ({"host": [{"address": "h", "targets": []}]}, "targets must list"),
    ({"host": [{"address": "h", "targets": ["/dev/x", "/dev/x"]}]}, "listed twice"),
    ({"host": [{"address": "h", "targets": ["/dev/x"], "user": "root"}]}, "unknown key 'user'"),
    ({"host": [{"address": "h", "targets": ["/dev/x"]}, {"address": "h", "targets": ["/dev/y"]}]}, "share"),
    ({"hosts": []}, "unknown top-level key"),
])
def test_bad_inventories_get_one_line(data: dict[str, Any], needle: str) -> None:
    with pytest.raises(UsageError, match=None) as exc:
        parse_inventory(data, "lab.toml")
    assert needle in str(exc.value)
    assert "\n" not in str(exc.value)


def test_missing_inventory_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_inventory(tmp_path / "nope.toml")
    (tmp_path / "bad.toml").write_text("[[host]\n")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_inventory(tmp_path / "bad.toml")


def test_remote_targets_must_be_devices_absolute_files_or_null(tmp_path: Path, probes: dict[str, Any]) -> None:
    with pytest.raises(UsageError, match="absolute path"):
        _group(tmp_path, '[[host]]\naddress = "h"\ntargets = ["file:data.dat"]\n')
    with pytest.raises(UsageError, match="simulated targets run on this host only"):
        _group(tmp_path, '[[host]]\naddress = "h"\ntargets = ["sim:tlc-4k"]\n')
    with pytest.raises(UsageError, match="null targets cannot be combined"):
        _group(tmp_path, '[[host]]\naddress = "h"\ntargets = ["null", "/dev/x"]\n')


def test_group_takes_devices_from_agent_reports(tmp_path: Path, probes: dict[str, Any]) -> None:
    probes["10.0.0.2:8765"] = _report([_device("/dev/nvme0n1"),
                                       _device("/dev/nvme1n1", size=2 * 1024**3, aliases=["/dev/disk/by-id/nvme-X"])])
    probes["10.0.0.3:18765"] = _report([])
    g = _group(tmp_path, opts=TargetOptions(capacity=3 * 1024**3))
    assert g.device_names() == [("a", "/dev/nvme0n1"), ("a", "/dev/disk/by-id/nvme-X"),
                                ("10.0.0.3:18765", "/data/ssdlab.dat")]
    assert g.capacity() == 1024**3  # the smallest device: the remote file's 1 GiB
    opts = g.device_fio_options()
    assert opts[0]["filename"] == "/dev/nvme0n1"
    assert opts[0]["size"] == 3 * 1024**3
    assert opts[0]["cpus_allowed"] == "16-31"  # the device's NUMA node 1
    assert opts[1]["size"] == 2 * 1024**3
    assert "cpus_allowed" not in opts[2]  # a remote file's device is unknown
    assert g.kind == "multi"
    assert g.engine() == "fio-client"
    assert g.needs_write_consent()
    text = g.destroys()
    for needle in ("host a: ALL DATA on /dev/nvme0n1 (Model X", "/dev/disk/by-id/nvme-X",
                   "host 10.0.0.3:18765: the file /data/ssdlab.dat"):
        assert needle in text
    info = g.info()
    assert [h["name"] for h in info["hosts"]] == ["a", "10.0.0.3:18765"]
    assert info["identity"]["devices"] == 3
    assert g.layout_writes().startswith("fio creates or extends /data/ssdlab.dat on host 10.0.0.3:18765")
    # named by its hosts (results/naming.py) everywhere; consent still types the inventory's name back
    assert g.name == "hosts a, 10.0.0.3:18765"
    assert g.consent_name() == "lab"
    # a remote file whose agent did not read its block sizes: 4K assumed (REMOTE_FILE_BLOCK_SIZE)
    assert (info["devices"][2]["logical_block_size"], info["devices"][2]["physical_block_size"]) == (4096, 4096)


def test_a_remote_files_block_sizes_are_its_agents_reading(tmp_path: Path, probes: dict[str, Any]) -> None:
    """`info file:` said 512 B and the host-group report 4096 B for the same kind of file: the agent now reads
    the file's backing device as a local file target does (targets/file.block_sizes), unless ?lbs= is given."""
    probes["10.0.0.2:8765"] = _report([_device("/dev/nvme0n1"), _device("/dev/disk/by-id/nvme-X")])
    probes["10.0.0.3:18765"] = _report([])
    g = _group(tmp_path)
    token = g.hosts[1].devices[0]
    token.take_block_sizes([512, 4096])
    assert (token.lbs, token.pbs) == (512, 4096)
    token.take_block_sizes(None)  # an older agent: no reading, the value stays
    assert (token.lbs, token.pbs) == (512, 4096)
    given = _group(tmp_path, INVENTORY.replace("ssdlab.dat?size=1GiB", "ssdlab.dat?size=1GiB&lbs=4096"))
    fixed = given.hosts[1].devices[0]
    fixed.take_block_sizes([512, 512])
    assert (fixed.lbs, fixed.pbs) == (4096, 4096)


def test_hazards_come_from_each_agent_and_name_the_host(tmp_path: Path, probes: dict[str, Any]) -> None:
    probes["10.0.0.2:8765"] = _report([
        _device("/dev/nvme0n1", hazards=[{"text": "/dev/nvme0n1p1 is mounted on /srv", "blocking": True}]),
        _device("/dev/nvme1n1", aliases=["/dev/disk/by-id/nvme-X"],
                hazards=[{"text": "/dev/nvme1n1 is not blank: it carries an existing xfs signature",
                          "blocking": False}])])
    probes["10.0.0.3:18765"] = _report([])
    g = _group(tmp_path)
    hz = g.hazards()
    assert [(h.text, h.blocking) for h in hz] == [
        ("host a: /dev/nvme0n1p1 is mounted on /srv", True),
        ("host a: /dev/nvme1n1 is not blank: it carries an existing xfs signature", False)]
    assert [h.text for h in g.blocking_hazards()] == ["host a: /dev/nvme0n1p1 is mounted on /srv"]


def test_a_stale_agent_report_blocks_writes(tmp_path: Path, probes: dict[str, Any]) -> None:
    probes["10.0.0.2:8765"] = _report([_device("/dev/nvme0n1"), _device("/dev/nvme1n1",
                                                                         aliases=["/dev/disk/by-id/nvme-X"])],
                                      written=time.time() - 3600)
    probes["10.0.0.3:18765"] = _report([])
    blocking = _group(tmp_path).blocking_hazards()
    assert len(blocking) == 1
    assert "report is 3600 s old" in blocking[0].text


def test_unknown_devices_and_unreachable_agents_are_named(tmp_path: Path, probes: dict[str, Any]) -> None:
    probes["10.0.0.2:8765"] = _report([_device("/dev/nvme0n1")])
    probes["10.0.0.3:18765"] = client.ProbeResult(client.Endpoint("10.0.0.3", 18765),
                                                  error="cannot connect to an agent at 10.0.0.3:18765")
    with pytest.raises(TargetError) as exc:
        _group(tmp_path)
    text = str(exc.value)
    assert text.startswith("2 of 2 agent hosts cannot be used")
    assert "host a: /dev/disk/by-id/nvme-X is not a block device there" in text
    assert "host 10.0.0.3:18765: cannot connect" in text


def test_dropped_hosts_and_devices_leave_later_points(tmp_path: Path, probes: dict[str, Any]) -> None:
    probes["10.0.0.2:8765"] = _report([_device("/dev/nvme0n1"), _device("/dev/nvme1n1",
                                                                         aliases=["/dev/disk/by-id/nvme-X"])])
    probes["10.0.0.3:18765"] = _report([])
    g = _group(tmp_path)
    g.drop("a:/dev/nvme0n1", "I/O error")
    assert g.device_names() == [("a", "/dev/disk/by-id/nvme-X"), ("10.0.0.3:18765", "/data/ssdlab.dat")]
    g.drop("10.0.0.3:18765", "disconnected")
    assert [h.name for h, _ in g.host_devices()] == ["a"]
    with pytest.raises(TargetError, match="no device of the host group is left"):
        g.drop("a", "disconnected")
    twin = g.null_twin()
    assert all(o["ioengine"] == "null" for o in twin.device_fio_options())


# ---------------------------------------------------------------- the executor, on golden client outputs

TWO_HOSTS = """
[[host]]
name = "a"
address = "127.0.0.2"
port = 28765
targets = ["null", "null?size=64MiB"]

[[host]]
name = "b"
address = "127.0.0.3"
port = 28766
targets = ["null", "null?size=64MiB"]
"""


def _executor_on(tmp_path: Path, probes: dict[str, Any], monkeypatch: pytest.MonkeyPatch, golden: str,
                 on_error: str) -> tuple[Any, HostGroupTarget, list[Any]]:
    from test_fio_client import CLIENT_DIR

    from ssdlab.fio.client import ClientRun
    from ssdlab.targets import hostgroup

    probes["127.0.0.2:28765"] = _report([])
    probes["127.0.0.3:28766"] = _report([])
    g = _group(tmp_path, TWO_HOSTS)
    g.on_error = on_error
    text = (CLIENT_DIR / golden).read_text()
    sent: list[Any] = []

    def fake_run(assignments: list[Any], point_dir: Path, **_: Any) -> ClientRun:
        sent.extend(assignments)
        eps = [ep for ep, _ in assignments]
        return ClientRun(text=client._final_document(text), lost=client._lost_hosts(eps, text, ""), returncode=1,
                         stderr="")

    monkeypatch.setattr(hostgroup, "run_clients", fake_run)
    from ssdlab.safety import WriteGrant

    return hostgroup.HostGroupExecutor(g, WriteGrant(g, writes=False)), g, sent


def _point() -> Any:
    from ssdlab.results.model import TestPoint, Workload

    return TestPoint(id="p", label="p", workload=Workload(rw="randrw", bs=4096, iodepth=4, rwmixread=70,
                                                           runtime_s=1.0))


def test_executor_sends_one_job_per_host_with_devices_numbered_across_the_group(
        tmp_path: Path, probes: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    ex, g, sent = _executor_on(tmp_path, probes, monkeypatch, "two-hosts.json", "stop")
    m = ex.run_point(_point(), g, tmp_path / "pt")
    assert [ep.label for ep, _ in sent] == ["127.0.0.2:28765", "127.0.0.3:28766"]
    assert [[s.name for s in job.jobs] for _, job in sent] == [["p-d0", "p-d1"], ["p-d2", "p-d3"]]
    assert [(p.host, p.status) for p in m.parts] == [("a", "ok"), ("a", "ok"), ("b", "ok"), ("b", "ok")]
    assert m.total_iops == pytest.approx(sum(p.measurement.total_iops for p in m.parts  # type: ignore[union-attr]
                                             ), rel=1e-12)


def test_a_lost_host_stops_the_run_with_what_finished(tmp_path: Path, probes: dict[str, Any],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from ssdlab.errors import FioFailedError

    ex, g, _ = _executor_on(tmp_path, probes, monkeypatch, "host-killed.txt", "stop")
    with pytest.raises(FioFailedError) as exc:
        ex.run_point(_point(), g, tmp_path / "pt")
    assert "host b: the agent at 127.0.0.3:28766 disconnected" in str(exc.value)
    partial = exc.value.partial
    assert [p.status for p in partial.parts] == ["ok", "ok", "failed", "failed"]
    assert partial.total_iops > 0
    assert g.dropped == {}  # stop: the next attempt (resume) runs on every host


def test_a_lost_host_is_left_out_under_continue(tmp_path: Path, probes: dict[str, Any],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ex, g, _ = _executor_on(tmp_path, probes, monkeypatch, "host-killed.txt", "continue")
    m = ex.run_point(_point(), g, tmp_path / "pt")
    assert [p.status for p in m.parts] == ["ok", "ok", "failed", "failed"]
    assert list(g.dropped) == ["b"]
    assert [h.name for h, _ in g.host_devices()] == ["a"]


def test_every_agents_job_meets_the_write_gate(tmp_path: Path, probes: dict[str, Any]) -> None:
    """A run authorized only to read cannot send a writing job to any agent: refused before fio starts."""
    from ssdlab.errors import UnsafeTargetError
    from ssdlab.results.model import TestPoint, Workload
    from ssdlab.safety import WriteGrant
    from ssdlab.targets import hostgroup

    probes["127.0.0.2:28765"] = _report([])
    probes["127.0.0.3:28766"] = _report([])
    g = _group(tmp_path, TWO_HOSTS)
    ex = hostgroup.HostGroupExecutor(g, WriteGrant(g, writes=False))
    write = TestPoint(id="w", label="w", workload=Workload(rw="randwrite", bs=4096, runtime_s=1.0))
    with pytest.raises(UnsafeTargetError, match="not authorized to write"):
        ex.run_point(write, g, tmp_path / "pt")
    assert not (tmp_path / "pt").exists()  # no job file, no command, no fio


def test_inventory_names_a_socket_or_an_address_not_both(tmp_path: Path) -> None:
    hosts = parse_inventory({"host": [{"socket": "/run/ssdlab//a.sock", "targets": ["null"]},
                                      {"address": "127.1", "targets": ["null"]}]})
    assert hosts[0].endpoint == client.Endpoint(socket="/run/ssdlab/a.sock")
    assert hosts[0].name == "/run/ssdlab/a.sock"
    assert hosts[0].to_dict()["socket"] == "/run/ssdlab/a.sock"
    assert "address" not in hosts[0].to_dict()
    assert hosts[1].endpoint == client.Endpoint("127.0.0.1", 8765)
    for bad, needle in (({"socket": "/a.sock", "address": "h"}, "not both"),
                        ({"socket": "run/a.sock"}, "absolute path"), ({"socket": "/a b.sock"}, "absolute path")):
        with pytest.raises(UsageError, match=needle):
            parse_inventory({"host": [{**bad, "targets": ["null"]}]})


@pytest.mark.parametrize("pair", [("file:/x/d.dat", "file:/x/./d.dat"), ("file:/x/d.dat", "file://x/y/../d.dat"),
                                  ("/dev/nvme0n1", "/dev/./nvme0n1")])
def test_the_same_path_twice_in_one_host_is_refused(pair: tuple[str, str]) -> None:
    with pytest.raises(UsageError, match="are the same target"):
        parse_inventory({"host": [{"address": "h", "targets": list(pair)}]})


def test_aliases_and_symlinks_resolved_on_the_agent_are_one_device(tmp_path: Path, probes: dict[str, Any]) -> None:
    probes["10.0.0.2:8765"] = _report([_device("/dev/nvme0n1", aliases=["/dev/disk/by-id/nvme-X"])])
    probes["10.0.0.3:18765"] = _report([])
    with pytest.raises(TargetError, match="/dev/nvme0n1 and /dev/disk/by-id/nvme-X are the same device"):
        _group(tmp_path)
    probes["10.0.0.2:8765"] = _report([_device("/dev/nvme0n1"), _device("/dev/nvme1n1",
                                                                         aliases=["/dev/disk/by-id/nvme-X"])])
    probes["resolved"] = {"/data/ssdlab.dat": "/srv/ssdlab.dat", "/srv/link.dat": "/srv/ssdlab.dat"}
    two = INVENTORY.replace('targets = ["file:/data/ssdlab.dat?size=1GiB"]',
                            'targets = ["file:/data/ssdlab.dat?size=1GiB", "file:/srv/link.dat?size=1GiB"]')
    with pytest.raises(TargetError, match=r"host 10.0.0.3:18765: file:/data/ssdlab.dat\?size=1GiB and "
                                          r"file:/srv/link.dat\?size=1GiB are the same file \(file:/srv/ssdlab.dat\)"):
        _group(tmp_path, two)


def test_a_report_that_does_not_answer_the_challenge_is_refused(tmp_path: Path, probes: dict[str, Any]) -> None:
    """A plain fio --server serving a written report (or an old agent) cannot answer a fresh token."""
    probes["10.0.0.2:8765"] = {**_report([_device("/dev/nvme0n1"), _device("/dev/nvme1n1",
                                                                            aliases=["/dev/disk/by-id/nvme-X"])]),
                               "answers": [{"token": "0" * 32, "paths": {}}]}
    probes["10.0.0.3:18765"] = _report([])
    with pytest.raises(TargetError) as exc:
        _group(tmp_path)
    assert "host a: the agent at 10.0.0.2:8765 did not answer this run's challenge" in str(exc.value)
    assert "10.0.0.3" not in str(exc.value)


def test_a_report_dated_in_the_future_is_refused_naming_both_clocks(tmp_path: Path, probes: dict[str, Any]) -> None:
    devices = [_device("/dev/nvme0n1"), _device("/dev/nvme1n1", aliases=["/dev/disk/by-id/nvme-X"])]
    probes["10.0.0.3:18765"] = _report([])
    probes["10.0.0.2:8765"] = _report(devices, written=time.time() + 3000)
    with pytest.raises(TargetError) as exc:
        _group(tmp_path)
    text = str(exc.value)
    assert "host a: its agent's report is dated 3000 s in the future (agent clock 20" in text
    assert "this host's 20" in text
    probes["10.0.0.2:8765"] = _report(devices, written=time.time() + 2)  # within the allowed skew
    assert _group(tmp_path).blocking_hazards() == []
