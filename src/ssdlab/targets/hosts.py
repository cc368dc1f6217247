"""Host groups: an inventory of agent hosts and their devices, driven as one target.

    [[host]]
    name = "a"                       # optional (default: the socket or address:port); names the host in reports
    socket = "/run/ssdlab/node-a.sock"   # its `ssdlab agent`'s Unix socket (here forwarded over SSH), or:
    # address = "127.0.0.1"          # a TCP agent (`ssdlab agent --insecure-tcp`) and its port (fio's 8765)
    # port = 8765
    targets = ["/dev/nvme0n1", "/dev/nvme1n1"]   # block devices, file:/ABS/PATH?size=4GiB, or null
    labels = { node = "a" }          # optional, shown in reports

Every host runs `ssdlab agent` (fio --server plus a report of its block devices); ssdlab never starts anything
on another host. Before a run, every agent is challenged and probed (fio/client): the controller sends a fresh
random token, and the agent's report must answer it, be dated within CLOCK_SKEW_S of this host's clock, and
carry the real path of each file target; then its fio protocol must match, each named block device must exist
there, no device may be named twice (by-id names and file paths resolved on the agent's side), and the same
hazards a local run checks (mounted, swap, held, signature, partitions, read-only) are taken from the agent's
report; consent names every device of every host. Files on agent hosts cannot be inspected from here: fio
creates and lays them out, and writing to them always needs consent.

The group's capacity is its smallest device's, so every device runs the same active range in lockstep.
"""

from __future__ import annotations

import contextlib
import dataclasses
import posixpath
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssdlab.errors import TargetError, UnsafeTargetError, UsageError
from ssdlab.fio.client import DEFAULT_PORT, Endpoint, ProbeResult, ipv4_dotted
from ssdlab.fio.job import FIO_UNSAFE_CHARS, OptionValue, escape_filename
from ssdlab.fio.runner import JobGate
from ssdlab.results.naming import device_name, hosts_name
from ssdlab.targets import file, null, numa
from ssdlab.targets.base import Hazard, Target, TargetOptions
from ssdlab.targets.null import DEFAULT_NULL_SIZE

if TYPE_CHECKING:
    from ssdlab.targets.base import Executor
from ssdlab.targets.spec import split_spec
from ssdlab.units import format_bytes, parse_size

DEFAULT_REMOTE_FILE_SIZE = 1024**3
# a remote file's block size until its agent reads its backing device's (targets/file.block_sizes), or when
# that agent does not answer it: 4K sectors assumed (?lbs= sets it)
REMOTE_FILE_BLOCK_SIZE = 4096
PROBE_MAX_AGE_S = 30.0  # a controller re-probes before writing when its copy of an agent report is older
REPORT_MAX_AGE_S = 60.0  # an agent report written longer ago than this (agent clock) is not trusted
# An answered report is written after the challenge it answers: its date (agent clock) may differ from this
# host's clock by at most this much either way (NTP keeps hosts within milliseconds; 5 s is well above that and
# far below the time a stale or prepared report would be off by)
CLOCK_SKEW_S = 5.0
HOST_KEYS = {"name", "address", "port", "socket", "targets", "labels"}


# ------------------------------------------------------------------ inventory

@dataclass(frozen=True)
class HostSpec:
    """One [[host]] table of an inventory."""

    name: str
    endpoint: Endpoint
    targets: tuple[str, ...]
    labels: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        where: dict[str, Any] = ({"socket": self.endpoint.socket} if self.endpoint.socket else
                                 {"address": self.endpoint.address, "port": self.endpoint.port})
        return {"name": self.name, **where, "targets": list(self.targets), "labels": dict(self.labels)}


def _endpoint(t: dict[str, Any], where: str) -> Endpoint:
    """A host table's agent endpoint: `socket`, or `address` (and `port`)."""
    sock = t.get("socket")
    if sock is not None:
        if "address" in t or "port" in t:
            raise UsageError(f"{where}: give either socket or address (and port), not both")
        if not isinstance(sock, str) or not sock.startswith("/") or any(c in sock for c in " ,\t\n;#$"):
            raise UsageError(f"{where}: socket must be the absolute path of the agent's Unix socket, e.g. "
                             "socket = \"/run/ssdlab/node-a.sock\"")
        return Endpoint(socket=posixpath.normpath(sock))
    address = t.get("address")
    if not isinstance(address, str) or not address.strip() or any(c in address for c in " ,/\t"):
        raise UsageError(f"{where}: name its agent's Unix socket, e.g. socket = \"/run/ssdlab/node-a.sock\", or for "
                         "a TCP agent: address must be an IP address or host name, e.g. address = \"10.0.0.2\"")
    port = t.get("port", DEFAULT_PORT)
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise UsageError(f"{where}: port {port!r} must be a number from 1 to 65535")
    return Endpoint(ipv4_dotted(address.strip()), port)


def normal_file_path(path: str) -> str:
    """A file target's path without '.', '..' and repeated slashes (what it resolves to through symlinks is only
    known on its host: the agent answers that)."""
    norm = posixpath.normpath(path)
    return "/" + norm.lstrip("/") if norm.startswith("//") else norm


def parse_inventory(data: dict[str, Any], source: str = "inventory") -> list[HostSpec]:
    """Validated hosts from a parsed inventory (each problem is one UsageError line naming the host)."""
    unknown = sorted(set(data) - {"host"})
    if unknown:
        raise UsageError(f"{source}: unknown top-level key {unknown[0]!r}: an inventory holds [[host]] tables")
    tables = data.get("host")
    if not isinstance(tables, list) or not tables:
        raise UsageError(f"{source}: no [[host]] tables: list each agent host with address and targets")
    hosts = [_host(t, f"{source}: host #{i}") for i, t in enumerate(tables, 1)]
    checks: list[tuple[str, list[str]]] = [("name", [h.name for h in hosts]),
                                           ("address and port", [h.endpoint.label for h in hosts])]
    for what, names in checks:
        shared = next((k for i, k in enumerate(names) if k in names[:i]), "")
        if shared:
            raise UsageError(f"{source}: two hosts share the {what} {shared}: each agent is listed once")
    return hosts


def _host(t: Any, where: str) -> HostSpec:
    """One [[host]] table, checked key by key."""
    if not isinstance(t, dict):
        raise UsageError(f"{where}: write it as a [[host]] table")
    bad = sorted(set(t) - HOST_KEYS)
    if bad:
        raise UsageError(f"{where}: unknown key {bad[0]!r} (known: {', '.join(sorted(HOST_KEYS))})")
    ep = _endpoint(t, where)
    name = t.get("name", ep.label)
    if not isinstance(name, str) or not name.strip() or any(c in name for c in FIO_UNSAFE_CHARS + "\n"):
        raise UsageError(f"{where}: name must be a short text (no ; # $)")
    where = f"{where} ({name})"
    targets = t.get("targets")
    if not isinstance(targets, list) or not targets or not all(isinstance(x, str) and x.strip() for x in targets):
        raise UsageError(f"{where}: targets must list its devices, e.g. targets = [\"/dev/nvme0n1\"]")
    same = _same_target(targets)
    if same:
        raise UsageError(f"{where}: {same}: list each device once")
    labels = t.get("labels", {})
    if not isinstance(labels, dict):
        raise UsageError(f"{where}: labels must be a table, e.g. labels = {{ node = \"a\" }}")
    return HostSpec(name.strip(), ep, tuple(x.strip() for x in targets), {str(k): str(v) for k, v in labels.items()})


def _same_target(targets: list[str]) -> str:
    """'' when no two targets name the same file or device as written (paths normalised), else which two do."""
    seen: dict[str, str] = {}
    for x in targets:
        scheme, rest, _ = split_spec(x.strip())
        key = f"file:{normal_file_path(rest)}" if scheme == "file" else (x.strip() if scheme == "null" else
                                                                          normal_file_path(rest or x.strip()))
        if key in seen:
            first = seen[key]
            return f"target {x} is listed twice" if first == x else f"{first} and {x} are the same target"
        seen[key] = x
    return ""


def load_inventory(path: Path) -> list[HostSpec]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"inventory {path} does not exist: write one (docs/hosts.md) or fix the path") from None
    except OSError as exc:
        raise UsageError(f"cannot read inventory {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"inventory {path} is not valid TOML: {exc}") from exc
    return parse_inventory(data, str(path))


# ------------------------------------------------------------------ devices on agent hosts

@dataclass
class RemoteDevice:
    """One device on an agent host, as the inventory names it, with what the agent reported about it."""

    host: str
    spec: str
    kind: str  # block | file | null
    path: str
    size: int
    options: TargetOptions
    lbs: int = 512
    pbs: int = 512
    lbs_given: bool = False  # a file's block size set by its spec (?lbs=): kept over what its agent reads
    report: dict[str, Any] = field(default_factory=dict)  # the agent's entry for a block device
    real: str = ""  # a file's real path on its host, as its agent resolved it
    place: numa.Placement = field(default_factory=lambda: numa.Placement({}, ""))

    @classmethod
    def parse(cls, host: str, text: str, opts: TargetOptions) -> RemoteDevice:
        scheme, rest, params = split_spec(text)
        if scheme == "null":
            size = parse_size(params["size"]) if "size" in params else (opts.size or DEFAULT_NULL_SIZE)
            return cls(host, text, "null", "null", size, opts)
        if scheme == "file":
            if not rest.startswith("/"):
                raise UsageError(f"host {host}: file target {text!r} needs an absolute path (file:/data/x.dat)")
            bad = sorted({c for c in rest if c in FIO_UNSAFE_CHARS or c in "\n\r\0"})
            if bad:
                raise UsageError(f"host {host}: {rest} contains {' '.join(bad)}, which fio would misread")
            size = parse_size(params["size"]) if "size" in params else (opts.size or DEFAULT_REMOTE_FILE_SIZE)
            lbs = int(params.get("lbs", REMOTE_FILE_BLOCK_SIZE))
            return cls(host, text, "file", normal_file_path(rest), size, opts, lbs=lbs, pbs=lbs,
                       lbs_given="lbs" in params)
        if scheme in ("", "dev") and normal_file_path(rest).startswith("/dev/"):
            return cls(host, text, "block", normal_file_path(rest), 0, opts)
        raise UsageError(f"host {host}: target {text!r}: use a block device (/dev/...), file:/ABS/PATH?size=4GiB "
                         "or null (simulated targets run on this host only)")

    @property
    def name(self) -> str:
        return self.path

    @property
    def key(self) -> str:
        return device_name(self.host, self.name)

    def capacity(self) -> int:
        cap = self.size
        if self.options.capacity:
            cap = min(cap, self.options.capacity)
        return cap - cap % max(self.lbs, 4096)

    def take_block_sizes(self, sizes: Any) -> None:
        """A file's block sizes as its agent read them ([logical, physical]), unless the spec's ?lbs= set them."""
        if self.lbs_given or not isinstance(sizes, list) or len(sizes) != 2:
            return
        with contextlib.suppress(TypeError, ValueError):
            lbs, pbs = int(sizes[0]), int(sizes[1])
            if lbs > 0 and pbs > 0:
                self.lbs, self.pbs = lbs, pbs

    def attach(self, entry: dict[str, Any]) -> None:
        """Take the agent's report of this block device."""
        if entry.get("error"):
            raise TargetError(f"host {self.host}: {self.path}: {entry['error']}")
        self.report = entry
        self.size = int(entry.get("size_bytes") or 0)
        self.lbs = int(entry.get("logical_block_size") or 512)
        self.pbs = int(entry.get("physical_block_size") or self.lbs)
        if self.size <= 0:
            raise TargetError(f"host {self.host}: {self.path} has zero capacity there")

    def fio_options(self) -> dict[str, OptionValue]:
        if self.kind == "null":
            return {"ioengine": "null", "size": self.capacity(), **self.place.options}
        opts: dict[str, OptionValue] = {"filename": escape_filename(self.path), "ioengine": self.options.ioengine,
                                        "direct": 1, "size": self.capacity()}
        opts.update(self.place.options)
        return opts

    def hazards(self) -> list[Hazard]:
        if self.kind != "block":
            return []
        return [Hazard(f"host {self.host}: {h.get('text', '')}", bool(h.get("blocking")))
                for h in self.report.get("hazards", [])]

    def destroys(self) -> str:
        if self.kind == "null":
            return f"nothing on host {self.host} (null engine)"
        if self.kind == "file":
            return (f"host {self.host}: the file {self.path} (created by fio if absent; if it exists, its first "
                    f"{format_bytes(self.capacity())} are overwritten: its contents cannot be checked from here)")
        ident = self.report.get("identity") or {}
        span = "the whole device" if self.capacity() >= self.size else f"the first {format_bytes(self.capacity())}"
        return (f"host {self.host}: ALL DATA on {self.path} ({ident.get('model', 'unknown model')}, "
                f"{ident.get('serial', 'no serial')}, {format_bytes(self.size)}): {span}")

    def info(self) -> dict[str, Any]:
        hz = self.hazards()
        return {"host": self.host, "spec": self.spec, "kind": self.kind, "name": self.name,
                "capacity_bytes": self.capacity(), "device_bytes": self.size, "logical_block_size": self.lbs,
                "physical_block_size": self.pbs, "identity": dict(self.report.get("identity") or {}),
                "numa_node": self.place.node, "placement": self.place.note,
                "write_safe": not any(h.blocking for h in hz), "safety": [h.text for h in hz]}


@dataclass
class Host:
    spec: HostSpec
    devices: list[RemoteDevice]
    report: dict[str, Any] = field(default_factory=dict)  # the agent's host entry
    probed_at: float = 0.0  # time.monotonic() of the last probe

    @property
    def name(self) -> str:
        return self.spec.name


# ------------------------------------------------------------------ challenges and answers

def challenge_and_probe(hosts: list[Host], binary: str, local_fio: str) -> tuple[str, list[ProbeResult]]:
    """Send every agent a fresh challenge (asking it to resolve its file targets), then probe them until each
    report answers it, CHALLENGE_WAIT_S at most: (the token, the probes' results)."""
    from ssdlab.fio import client

    token = client.new_token()
    failed = client.send_challenges([(h.spec.endpoint, [d.path for d in h.devices if d.kind == "file"])
                                     for h in hosts], token, binary=binary, local_version=local_fio)
    found = {label: ProbeResult(h.spec.endpoint, error=why) for h in hosts
             for label, why in failed.items() if label == h.spec.endpoint.label}
    deadline = time.monotonic() + client.CHALLENGE_WAIT_S
    while True:
        pending = [h.spec.endpoint for h in hosts if h.spec.endpoint.label not in found]
        for r in client.probe_all(pending, Path("/"), binary=binary, local_version=local_fio):
            if r.report is None or client.answer_for(r.report, token) is not None or time.monotonic() > deadline:
                found[r.endpoint.label] = r
        if len(found) == len(hosts):
            return token, [found[h.spec.endpoint.label] for h in hosts]
        time.sleep(0.1)


def _utc(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def check_answer(host: str, r: ProbeResult, token: str) -> dict[str, Any]:
    """The agent's answer to this run's challenge; raises TargetError when the report does not answer it (an old
    or hand-written report, a plain fio --server) or is dated in the future beyond CLOCK_SKEW_S. (A report dated
    in the past beyond REPORT_MAX_AGE_S blocks writes: HostGroupTarget.hazards.)"""
    from ssdlab.fio import client

    assert r.report is not None
    answer = client.answer_for(r.report, token)
    if answer is None:
        raise TargetError(f"host {host}: the agent at {r.endpoint.label} did not answer this run's challenge within "
                          f"{client.CHALLENGE_WAIT_S:g} s, so its device report may be old or written by hand (a "
                          "plain `fio --server`, or an older ssdlab agent): run this version's `ssdlab agent` there")
    now = time.time()
    written = float((r.report.get("host") or {}).get("written") or 0)
    if written > now + CLOCK_SKEW_S:
        raise TargetError(f"host {host}: its agent's report is dated {written - now:.0f} s in the future (agent "
                          f"clock {_utc(written)}, this host's {_utc(now)}; at most {CLOCK_SKEW_S:g} s of skew is "
                          "accepted): synchronise the two clocks (NTP) before writing through it")
    return answer


def _same_device(devices: list[RemoteDevice]) -> str:
    """'' when the devices of one host are all different ones (block devices by the agent's node, whatever alias
    named them; files by their real path there), else which two are the same."""
    seen: dict[str, RemoteDevice] = {}
    for d in devices:
        if d.kind == "null":
            continue
        key = str(d.report.get("path") or d.path) if d.kind == "block" else f"file:{d.real or d.path}"
        first = seen.get(key)
        if first is not None:
            return f"{first.spec} and {d.spec} are the same {'device' if d.kind == 'block' else 'file'} ({key})"
        seen[key] = d
    return ""


def _entries_by_name(devices: list[Any]) -> dict[str, dict[str, Any]]:
    """An agent report's block devices by path and by every alias (by-id, by-path ...)."""
    entries: dict[str, dict[str, Any]] = {}
    for e in devices:
        if isinstance(e, dict) and e.get("path"):
            entries[str(e["path"])] = e
            for alias in e.get("aliases") or []:
                entries.setdefault(str(alias), e)
    return entries


def _attach_block(host: str, d: RemoteDevice, entries: dict[str, dict[str, Any]], devices: list[Any],
                  nodes: dict[int, str]) -> None:
    """Give a block device of the inventory its entry in the agent's report and its NUMA placement."""
    entry = entries.get(d.path)
    if entry is None:
        known = ", ".join(sorted(str(e.get("path")) for e in devices if not e.get("error"))[:8]) or "none"
        raise TargetError(f"host {host}: {d.path} is not a block device there (the agent lists: {known})")
    d.attach(entry)
    node = entry.get("numa_node")
    d.place = numa.placement(d.path, int(node) if node is not None else None, nodes)


# ------------------------------------------------------------------ the group

@dataclass
class HostGroupTarget(Target):
    """Every device of every host in an inventory, driven together by one fio client per point."""

    inventory: str = ""
    hosts: list[Host] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)  # host name or device key -> why it left the run
    on_error: str = "stop"  # --on-error: stop the run when a host or device fails, or continue without it
    gate: JobGate | None = None  # the run's write gate, set by the executor (purge jobs pass it too)
    local_fio: str = ""

    @classmethod
    def from_inventory(cls, path: Path, opts: TargetOptions, *, hosts: list[HostSpec] | None = None,
                       on_error: str = "stop", dropped: dict[str, str] | None = None) -> HostGroupTarget:
        """Parse the inventory (or take the hosts a stored run recorded), leave out what a resumed run had
        dropped, probe every other agent and resolve every device."""
        specs = hosts if hosts is not None else load_inventory(path)
        group = cls(spec=str(path), kind="multi", options=opts, inventory=str(path),
                    hosts=[Host(h, [RemoteDevice.parse(h.name, t, opts) for t in h.targets]) for h in specs],
                    on_error=on_error, dropped=dict(dropped or {}))
        kinds = {d.kind for h in group.hosts for d in h.devices}
        if "null" in kinds and len(kinds) > 1:
            raise UsageError("null targets cannot be combined with devices or files in one host group")
        group.kind = kinds.pop() if len(kinds) == 1 else "multi"
        group.refresh()
        return group

    # -- probing

    def refresh(self) -> None:
        """Challenge and probe every active agent; raise one TargetError naming every host that cannot be used."""
        from ssdlab.fio import runner

        binary = runner.fio_binary()
        if not self.local_fio:
            self.local_fio = runner.fio_version(binary)
        active = [h for h in self.hosts if h.name not in self.dropped]
        token, results = challenge_and_probe(active, binary, self.local_fio)
        problems = []
        for h, r in zip(active, results, strict=True):
            try:
                self._take(h, r, token)
            except TargetError as exc:
                problems.append(str(exc))
        if problems:
            lead = f"{len(problems)} of {len(active)} agent hosts cannot be used: " if len(active) > 1 else ""
            raise TargetError(lead + "; ".join(problems))

    def _take(self, h: Host, r: ProbeResult, token: str) -> None:
        if r.report is None:
            raise TargetError(f"host {h.name}: {r.error}")
        answer = check_answer(h.name, r, token)
        h.report = dict(r.report["host"])
        h.probed_at = time.monotonic()
        entries = _entries_by_name(r.report["devices"])
        nodes = {int(k): str(v) for k, v in (h.report.get("numa_nodes") or {}).items()}
        for d in h.devices:
            if d.kind == "block":
                _attach_block(h.name, d, entries, r.report["devices"], nodes)
            elif d.kind == "file":
                d.real = str((answer.get("paths") or {}).get(d.path) or d.path)
                d.take_block_sizes((answer.get("blocks") or {}).get(d.path))
                d.place = numa.Placement({}, f"{d.path}: not pinned (a file: its device is not known here)")
            else:
                d.place = numa.Placement({}, f"{d.path}: null engine, not pinned")
        same = _same_device(h.devices)
        if same:
            raise TargetError(f"host {h.name}: {same}: two writers on one device would each count its work; list "
                              "it once")

    def _fresh(self) -> None:
        """Re-probe when the last probe of any active host is older than PROBE_MAX_AGE_S."""
        now = time.monotonic()
        if any(now - h.probed_at > PROBE_MAX_AGE_S for h in self.active_hosts()):
            self.refresh()

    @classmethod
    def from_stored(cls, stored: dict[str, Any], opts: TargetOptions, *, on_error: str = "stop",
                    dropped: dict[str, str] | None = None) -> HostGroupTarget:
        """The group of a stored run, from its target record (info(): the inventory's hosts as they were read),
        so `ssdlab resume` drives the same hosts and devices even if the inventory file changed since."""
        tables = [{k: h[k] for k in HOST_KEYS if k in h} for h in stored.get("hosts") or []]
        hosts = parse_inventory({"host": tables}, "the stored run's inventory")
        return cls.from_inventory(Path(str(stored.get("inventory") or "hosts")), opts, hosts=hosts,
                                  on_error=on_error, dropped=dropped)

    def null_twin(self) -> HostGroupTarget:
        """The same hosts and CPUs with fio's null engine in place of every device (the host-ceiling check)."""
        hosts = []
        for h, devs in self.host_devices():
            twins = [dataclasses.replace(d, kind="null", spec="null", size=min(d.capacity(), 1024**3), report={})
                     for d in devs]
            hosts.append(Host(h.spec, twins, dict(h.report), h.probed_at))
        return dataclasses.replace(self, hosts=hosts, dropped={}, kind="null", gate=None)

    # -- membership

    def active_hosts(self) -> list[Host]:
        return [h for h in self.hosts if h.name not in self.dropped]

    def active_devices(self) -> list[RemoteDevice]:
        return [d for h in self.active_hosts() for d in h.devices if d.key not in self.dropped]

    def drop(self, name: str, reason: str) -> None:
        """Leave a host (its name) or a device ('host:device') out of every later point."""
        self.dropped.setdefault(name, reason)
        if not self.active_devices():
            raise TargetError(f"no device of the host group is left ({reason})")

    # -- Target

    @property
    def name(self) -> str:
        return hosts_name([h.name for h in self.hosts])  # (results/naming.py: never the inventory's file name)

    def consent_name(self) -> str:
        """The inventory's name, typed back to allow writing (docs/hosts.md): the group's own name lists hosts."""
        return Path(self.inventory).stem or "hosts"

    def capacity(self) -> int:
        return min(d.capacity() for d in self.active_devices())

    def logical_block_size(self) -> int:
        return max(d.lbs for d in self.active_devices())

    def engine(self) -> str:
        return "fio-client"

    fio_here = False  # its points run through one fio client on the agent hosts, on their CPUs

    def executor(self, gate: JobGate) -> Executor:
        """One fio client drives every agent host (targets/hostgroup.py)."""
        from ssdlab.targets.hostgroup import HostGroupExecutor

        return HostGroupExecutor(self, gate)

    def ceiling_twin(self) -> Target | None:
        """The null twin (null_twin) of a group of several devices that are not null already."""
        if len(self.device_names()) < 2 or self.kind == "null":
            return None
        return self.null_twin()

    def health_unavailable(self) -> str:
        if self.kind == "null":
            return null.NO_HEALTH
        if self.kind == "file":
            return file.NO_HEALTH
        return f"{self.kind} targets have no drive to query"  # its devices are another host's

    def fio_options(self) -> dict[str, OptionValue]:
        return self.active_devices()[0].fio_options()

    def device_fio_options(self) -> list[dict[str, OptionValue]]:
        return [d.fio_options() for d in self.active_devices()]

    def device_names(self) -> list[tuple[str, str]]:
        return [(d.host, d.name) for d in self.active_devices()]

    def host_devices(self) -> list[tuple[Host, list[RemoteDevice]]]:
        """Active hosts with their active devices, in inventory order (the order of device_names())."""
        out = []
        for h in self.active_hosts():
            devs = [d for d in h.devices if d.key not in self.dropped]
            if devs:
                out.append((h, devs))
        return out

    def hazards(self) -> list[Hazard]:
        self._fresh()
        found = [hz for d in self.active_devices() for hz in d.hazards()]
        now = time.time()
        for h in self.active_hosts():
            if any(d.kind == "block" for d in h.devices):
                written = float(h.report.get("written") or 0)
                age = now - written
                if age > REPORT_MAX_AGE_S:
                    found.append(Hazard(f"host {h.name}: its agent's device report is {age:.0f} s old (agent clock "
                                        f"{_utc(written)}, this host's {_utc(now)}: the agent's inspector stopped, "
                                        "or the two clocks differ by that much): its devices cannot be checked",
                                        blocking=True))
        return found

    def needs_write_consent(self) -> bool:
        return any(d.kind in ("block", "file") for d in self.active_devices())

    def destroys(self) -> str:
        return "; ".join(d.destroys() for d in self.active_devices())

    def layout_writes(self) -> str:
        files = [d for d in self.active_devices() if d.kind == "file"]
        if not files:
            return ""
        return "fio creates or extends " + ", ".join(f"{d.path} on host {d.host}" for d in files) + " if needed"

    def prepare(self, writes: bool) -> list[str]:
        notes = []
        for h in self.active_hosts():
            r = h.report
            notes.append(f"host {h.name} ({h.spec.endpoint.label}): agent on {r.get('hostname', '?')}, "
                         f"fio {r.get('fio_version') or '?'}, ssdlab {r.get('ssdlab_version') or '?'}")
        notes.append("NUMA placement: " + "; ".join(f"host {d.host}: {d.place.note}" for d in self.active_devices()))
        return notes

    def purge_methods(self) -> list[str]:
        """'fio': a fio job on every host trims each block device's span (discard) and rewrites each file with
        random data; nothing else can run on an agent host."""
        return [] if any(d.kind == "null" for d in self.active_devices()) else ["fio"]

    def purge(self, method: str) -> str:
        from ssdlab.fio.client import purge_job, purge_problem, run_clients
        from ssdlab.targets.purge import choose

        choose(method, self.purge_methods(), self.name)
        if self.gate is None:  # the executor hands the run's write gate over before any point runs
            raise UnsafeTargetError(f"refusing to purge {self.name}: no write gate for this run")
        pairs = self.host_devices()
        with tempfile.TemporaryDirectory(prefix="ssdlab-purge-") as tmp:
            jobs = [(h.spec.endpoint, purge_job([(d.kind, d.fio_options()) for d in devs])) for h, devs in pairs]
            problem = purge_problem(run_clients(jobs, Path(tmp), gate=self.gate, local_version=self.local_fio),
                                    [h.spec.endpoint for h, _ in pairs])
        if problem:
            raise TargetError(f"purge of the host group failed: {problem}")
        done = [f"{d.key} " + ("trimmed (discard)" if d.kind == "block" else "rewritten with random data")
                for d in self.active_devices()]
        return f"fio purge on {len(pairs)} host(s): " + ", ".join(done)

    def info(self) -> dict[str, Any]:
        devs = self.active_devices()
        infos = [d.info() for d in devs]
        hosts = []
        for h in self.hosts:
            r = h.report
            hosts.append({**h.spec.to_dict(), "agent_hostname": r.get("hostname", ""),
                          "fio_version": r.get("fio_version", ""), "ssdlab_version": r.get("ssdlab_version", ""),
                          "numa_nodes": r.get("numa_nodes", {}),
                          "dropped": self.dropped.get(h.name, "")})
        return {
            "spec": self.inventory, "kind": self.kind, "name": self.name, "inventory": self.inventory,
            "hosts": hosts, "devices": infos, "capacity_bytes": self.capacity(),
            "logical_block_size": self.logical_block_size(),
            "physical_block_size": max(d.pbs for d in devs),
            "identity": {"hosts": ", ".join(h.name for h in self.hosts), "devices": len(infos)},
            "write_safe": all(i["write_safe"] for i in infos), "safety": [s for i in infos for s in i["safety"]],
            "note": f"a host group: {len(self.hosts)} host(s), {len(infos)} device(s) driven together by one fio "
                    "client; results are per device, per host and their exact aggregate",
        }


def inventory_path(text: str) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else Path.cwd() / path
