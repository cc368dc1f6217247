"""fio's client/server mode: command lines, runs over several agents, and their results.

One fio client process drives every host of a group at once: `fio --output-format=json+ --client=ADDR,PORT
job-<host>.fio --client=... job-<host2>.fio`. Each agent host runs `fio --server` (`ssdlab agent`). The
client's single JSON document holds `client_stats` (one element per job section of every host, each with
its `hostname` and `port`) instead of `jobs`, plus an "All clients" element that ssdlab never uses: it sums
all groups of all hosts and its percentiles are not those of any group (fio.md §9).

Quirks handled here, observed on fio 3.33:
- a host that cannot be reached is reported on stderr ("fio: failed to connect to ADDR:PORT") and the others
  run anyway, with exit status 0: every host's presence is checked in the result;
- a host that drops mid-run is reported on stdout ("client: host=ADDR disconnected"); the others finish and
  the document holds their results only (exit status 1);
- the protocol is version-locked: a server of another protocol version is refused with "client/server version
  mismatch (A != B)", reported as one line naming both fio versions when known;
- there are no status documents in client mode (no live progress).

Agents describe their block devices in a probe job file in their working directory (written by `ssdlab
agent`); `probe()` runs it with `--remote-config`, a null-engine job that reads nothing, and returns the
description carried back in the job's `description`.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import json
import os
import re
import secrets
import shlex
import socket
import subprocess
import tempfile
import time
import zlib
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab.errors import FioFailedError, FioMissingError
from ssdlab.fio import runner
from ssdlab.fio.job import FioJob, FioSection, OptionValue
from ssdlab.fio.runner import JobGate
from ssdlab.results import atomic

DEFAULT_PORT = 8765  # fio's own default server port
PROBE_FILE = "ssdlab-probe.fio"  # in the agent's working directory (fio --server's cwd)
PROBE_TAG = "ssdlab-agent/1"
PROBE_TIMEOUT_S = 60.0

# FIO_SERVER_VER (the client/server protocol version) of fio releases, to name versions in a mismatch (fio.md §1)
PROTOCOL_VERSIONS = {97: "3.33", 101: "3.36", 107: "3.38", 113: "3.41", 120: "3.42"}

_DISCONNECTED = re.compile(r"client: host=(\S+) disconnected")
_NO_CONNECT = re.compile(r"failed to connect to (\S+?):(\d+)")
_NO_SOCKET = re.compile(r"fio: connect; ([^\n]+)")  # a Unix-socket client that cannot connect (path not named)
_MISMATCH = re.compile(r"client/server version mismatch \((\d+) != (\d+)\)")


@dataclass(frozen=True)
class Endpoint:
    """Where an agent listens: a Unix socket (`socket`, the default and the safe way), or an IP address or host
    name and a port (TCP: only with the agent's --insecure-tcp)."""

    address: str = ""
    port: int = DEFAULT_PORT
    socket: str = ""  # absolute path of a Unix socket (the local end of an SSH forward for a remote host)

    @property
    def label(self) -> str:
        if self.socket:
            return self.socket
        return f"[{self.address}]:{self.port}" if ":" in self.address else f"{self.address}:{self.port}"

    def agent_command(self) -> str:
        """The `ssdlab agent` command that listens where this endpoint points (on its host): for TCP with
        --bind and --port, and --insecure-bind for an address other than loopback (docs/hosts.md)."""
        if self.socket:
            return f"ssdlab agent --socket {self.socket}"
        try:
            loopback = ipaddress.ip_address(self.address).is_loopback
        except ValueError:
            loopback = self.address == "localhost"
        return (f"ssdlab agent --insecure-tcp --bind {self.address} --port {self.port}"
                + ("" if loopback else " --insecure-bind"))

    def client_arg(self) -> str:
        """The value of fio's --client= for this endpoint."""
        if self.socket:
            return f"sock:{self.socket}"
        if ":" in self.address:
            return f"ip6:{self.address},{self.port}"
        try:
            ipaddress.IPv4Address(self.address)
        except ValueError:
            return f"{self.address},{self.port}"  # a host name: fio resolves it
        return f"ip:{self.address},{self.port}"

    def matches(self, hostname: str, port: int) -> bool:
        """Whether a client_stats element (its hostname and port) came from this endpoint (fio names a Unix-socket
        client by its path, with its default port)."""
        if self.socket:
            return hostname == self.socket
        return hostname == self.address and port == self.port


def server_argv(binary: str, bind: str, port: int) -> list[str]:
    """`fio --server` listening on exactly one TCP address (never fio's bare --server, which listens on all)."""
    family = "ip6" if ":" in bind else "ip"
    return [binary, f"--server={family}:{bind},{port}"]


def socket_server_argv(binary: str, path: str) -> list[str]:
    """`fio --server` listening on a Unix socket only."""
    return [binary, f"--server=sock:{path}"]


def ipv4_dotted(address: str) -> str:
    """An IPv4 address in the dotted-quad form fio parses ('127.1' -> '127.0.0.1'); other text unchanged."""
    if ":" in address or not address or not all(c.isdigit() or c == "." for c in address):
        return address
    try:
        return socket.inet_ntoa(socket.inet_aton(address))
    except OSError:
        return address


def is_loopback(address: str) -> bool:
    """Whether `address` (an IP literal, in any form inet_aton takes such as '127.1', or 'localhost') is a
    loopback address."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(ipv4_dotted(address)).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ClientRun:
    """What one fio client run over several agents returned."""

    text: str  # the final JSON document ('' when fio printed none)
    lost: Mapping[str, str]  # endpoint label -> why it has no result (unreachable, disconnected)
    returncode: int
    stderr: str
    argv: tuple[str, ...] = ()
    banner: str = ""  # the client's text output around the JSON (the agents' messages, prefixed '<host>')

    def first_error(self) -> str:
        """The first fio error line an agent or the client printed ('' when none)."""
        for line in (self.stderr + "\n" + self.banner).splitlines():
            if "fio:" in line or "error" in line.lower():
                return line.strip()
        return ""


def version_mismatch(text: str, local_version: str = "") -> str:
    """One line about a protocol mismatch in fio's output ('' when there is none)."""
    m = _MISMATCH.search(text)
    if not m:
        return ""
    theirs, ours = int(m.group(1)), int(m.group(2))
    their_fio = PROTOCOL_VERSIONS.get(theirs)
    our_fio = local_version or PROTOCOL_VERSIONS.get(ours, "")
    return (f"fio client/server protocol mismatch: the agent speaks protocol {theirs}"
            + (f" (fio {their_fio})" if their_fio else "")
            + f", this fio{' ' + our_fio if our_fio else ''} speaks {ours}: install the same fio version on both "
            "hosts (the protocol is version-locked)")


def _job_file_name(index: int, label: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.\-]", "_", label)[:40]
    return f"job-{index}-{safe}.fio"


def run_clients(assignments: Sequence[tuple[Endpoint, FioJob]], point_dir: Path, *, gate: JobGate,
                binary: str | None = None, local_version: str = "") -> ClientRun:
    """Run one job per agent with one fio client; keep job-<n>-<host>.fio, cmd.txt, fio.json and the client's
    text output (client.txt) in `point_dir`. Every job passes `gate` (the run's write gate, as runner.run_job's
    jobs do) before anything is written or started. As runner.run_job's, the files are flushed to disk once,
    after the client ends, so the client's start does not wait for the disk."""
    for _, job in assignments:
        gate.check_job(job, point_dir)  # an iolog's bare name would be read in point_dir, fio's directory
    exe = binary or runner.fio_binary()
    point_dir.mkdir(parents=True, exist_ok=True)
    argv = [exe, "--output-format=json+"]
    kept: list[Path] = []
    for i, (ep, job) in enumerate(assignments):
        kept.append(point_dir / _job_file_name(i, ep.label))
        atomic.write_text(kept[-1], job.render(), durable=False)
        argv += [f"--client={ep.client_arg()}", str(kept[-1].resolve())]
    kept.append(point_dir / "cmd.txt")
    atomic.write_text(kept[-1], shlex.join(argv) + "\n", durable=False)
    code, out, err = _run(argv, point_dir)
    text = _final_document(out)
    banner = "".join(ln for ln in out.splitlines(keepends=True) if not ln.startswith((" ", "{", "}", "\t")))
    for name, content in (("client.txt", banner), ("stderr.txt", err), ("fio.json", text)):
        if content.strip():  # fio.json: '' or a whole document
            kept.append(point_dir / name)
            atomic.write_text(kept[-1], content, durable=False)
    atomic.flush_later([*kept, point_dir])  # in the background, before the point's record (runner.run_job)
    mismatch = version_mismatch(out + err, local_version)
    if mismatch:
        raise FioFailedError(mismatch, cmd=argv, returncode=code, stderr=err)
    lost = _lost_hosts([ep for ep, _ in assignments], out, err)
    return ClientRun(text=text, lost=lost, returncode=code, stderr=err, argv=tuple(argv), banner=banner)


def _lost_hosts(endpoints: Sequence[Endpoint], out: str, err: str) -> dict[str, str]:
    lost: dict[str, str] = {}
    for m in _NO_CONNECT.finditer(err + out):
        for ep in endpoints:
            if ep.address == m.group(1) and ep.port == int(m.group(2)):
                lost[ep.label] = (f"cannot connect to the agent at {ep.label} (is `{ep.agent_command()}` running "
                                  "there?)")
    for m in _DISCONNECTED.finditer(out + err):
        for ep in endpoints:
            if (ep.socket or ep.address) == m.group(1) and ep.label not in lost:
                lost[ep.label] = f"the agent at {ep.label} disconnected during the point"
    return lost


def _final_document(out: str) -> str:
    """The last JSON document in the client's stdout (server text lines come before it)."""
    lines = out.splitlines(keepends=True)
    start = max((i for i, ln in enumerate(lines) if ln.rstrip("\n") == "{"), default=-1)
    if start < 0:
        return ""
    end = max((i for i, ln in enumerate(lines) if ln.rstrip("\n") == "}" and i > start), default=-1)
    if end < 0:
        return ""
    text = "".join(lines[start:end + 1])
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return ""
    return text


def _run(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run the fio client as runner.run_job runs fio (runner.fio_process: stop signals held around the fork,
    fio killed with ssdlab, Ctrl-C forwarded as SIGINT so fio stops its servers' jobs cleanly)."""
    with runner.fio_process(argv, cwd) as proc:
        out, err = proc.communicate()
    return proc.returncode, out, err


def client_hosts(doc: Mapping[str, Any]) -> set[tuple[str, int]]:
    """(hostname, port) of every host with a result in a client document ("All clients" excluded)."""
    out = set()
    for j in doc.get("client_stats", []):
        if j.get("jobname") != "All clients":
            out.add((str(j.get("hostname", "")), int(j.get("port", 0) or 0)))
    return out


def missing_hosts(res: ClientRun, present: set[tuple[str, int]], endpoints: Sequence[Endpoint]) -> dict[str, str]:
    """Endpoint label -> why that agent has no result in the client's run: lost (unreachable, disconnected), or
    absent from the document's hosts `present` (client_hosts())."""
    out: dict[str, str] = {}
    for ep in endpoints:
        if ep.label in res.lost:
            out[ep.label] = res.lost[ep.label]
        elif not any(ep.matches(h, p) for h, p in present):
            why = res.first_error()
            out[ep.label] = f"no result from the agent at {ep.label}" + (f" ({why})" if why else "")
    return out


# ------------------------------------------------------------------ agent probes

PROBE_CHUNK = 200  # fio keeps 255 characters of a job's description (FIO_JOBDESC_SIZE) in its results


def probe_job(host: Mapping[str, Any], devices: Sequence[Mapping[str, Any]],
              answers: Sequence[Mapping[str, Any]] = ()) -> FioJob:
    """The probe job an agent keeps in its working directory: null-engine sections (they touch no device)
    whose descriptions carry the agent's report. fio returns at most 255 characters of a description, so the
    report (JSON, zlib-compressed, base64: fio's job parser would cut JSON at ';' or '#' and expand '$') is
    split over as many sections as it needs, each description '<tag> <index>/<count> <chunk>'."""
    doc = {"host": host, "devices": list(devices), "answers": list(answers)}
    blob = base64.b64encode(zlib.compress(json.dumps(doc, sort_keys=True).encode(), 9)).decode()
    chunks = [blob[i:i + PROBE_CHUNK] for i in range(0, len(blob), PROBE_CHUNK)] or [""]
    sections = [FioSection(f"ssdlab-probe-{i}", {
        "description": f"{PROBE_TAG} {i}/{len(chunks)} {chunk}", "ioengine": "null", "size": 4096, "rw": "read",
        "thread": 1}) for i, chunk in enumerate(chunks)]
    return FioJob(jobs=tuple(sections))


def decode_probe(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The agent report carried back by a probe run: {"host": {...}, "devices": [...], "answers": [...]} (None
    when the document holds no complete report)."""
    chunks: dict[int, str] = {}
    count = -1
    for j in doc.get("client_stats", []):
        desc = str(j.get("desc") or "")
        if not desc.startswith(PROBE_TAG + " "):
            continue
        try:
            _, where, chunk = desc.split(" ", 2)
            index, _, total = where.partition("/")
            chunks[int(index)] = chunk
            count = int(total)
        except ValueError:
            return None
    if count <= 0 or sorted(chunks) != list(range(count)):
        return None
    try:
        data = json.loads(zlib.decompress(base64.b64decode("".join(chunks[i] for i in range(count)))))
    except (ValueError, zlib.error, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("host"), dict) or \
            not isinstance(data.get("devices"), list):
        return None
    return data


@dataclass(frozen=True)
class ProbeResult:
    """What probing one agent found: its report, or one line saying why there is none."""

    endpoint: Endpoint
    report: dict[str, Any] | None = None
    error: str = ""
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def probe(endpoint: Endpoint, workdir: Path, *, binary: str | None = None, local_version: str = "",
          timeout: float = PROBE_TIMEOUT_S) -> ProbeResult:
    """Run the agent's own probe job (a null-engine job that reads nothing) and decode its report."""
    exe = binary or runner.fio_binary()
    argv = [exe, "--output-format=json", f"--client={endpoint.client_arg()}", "--remote-config", PROBE_FILE]
    t0 = time.monotonic()
    try:  # a short read-nothing job, run from worker threads: a plain subprocess with a time limit
        res = subprocess.run(argv, capture_output=True, text=True, cwd=workdir, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return ProbeResult(endpoint, error=f"the agent at {endpoint.label} did not answer within {timeout:g} s")
    except OSError as exc:
        raise FioMissingError(f"fio could not be started ({exc}): {runner.INSTALL_HINT}") from exc
    code, out, err = res.returncode, res.stdout, res.stderr
    seconds = time.monotonic() - t0
    mismatch = version_mismatch(out + err, local_version)
    if mismatch:
        return ProbeResult(endpoint, error=f"{endpoint.label}: {mismatch}", seconds=seconds)
    if _NO_CONNECT.search(err + out):
        return ProbeResult(endpoint, error=f"cannot connect to an agent at {endpoint.label}: start "
                                           f"`{endpoint.agent_command()}` on that host, or better its default "
                                           "Unix socket (docs/hosts.md)",
                           seconds=seconds)
    no_socket = _NO_SOCKET.search(err + out)
    if no_socket and endpoint.socket:
        return ProbeResult(endpoint, error=f"cannot connect to an agent at {endpoint.socket} "
                                           f"({no_socket.group(1).strip()}): start `ssdlab agent` on that host and, "
                                           "for a remote host, the SSH forward of its socket (docs/hosts.md)",
                           seconds=seconds)
    if "unable to open" in out + err and PROBE_FILE in out + err:
        return ProbeResult(endpoint, error=f"{endpoint.label} runs a plain `fio --server`, not `ssdlab agent`: "
                                           "its devices cannot be checked; start `ssdlab agent` there instead",
                           seconds=seconds)
    text = _final_document(out)
    report = None
    if text:
        with contextlib.suppress(json.JSONDecodeError):
            report = decode_probe(json.loads(text))
    if report is None:
        first = next((ln for ln in (err + out).splitlines() if ln.strip()), f"exit status {code}")
        return ProbeResult(endpoint, error=f"no agent report from {endpoint.label}: {first.strip()}",
                           seconds=seconds)
    return ProbeResult(endpoint, report=report, seconds=seconds)


def probe_all(endpoints: Sequence[Endpoint], workdir: Path, *, binary: str | None = None,
              local_version: str = "", parallel: int = 32) -> list[ProbeResult]:
    """Probe several agents: one fio client for all of them (one process, whatever the group's size), then each
    agent without a report again on its own, so that every failure names its host."""
    exe = binary or runner.fio_binary()
    if not endpoints:
        return []
    found: dict[str, ProbeResult] = {}
    if len(endpoints) > 1:
        argv = [exe, "--output-format=json"]
        for ep in endpoints:
            argv += [f"--client={ep.client_arg()}", "--remote-config", PROBE_FILE]
        t0 = time.monotonic()
        try:
            res = subprocess.run(argv, capture_output=True, text=True, cwd=workdir, timeout=PROBE_TIMEOUT_S,
                                 check=False)
            text = _final_document(res.stdout)
            doc = json.loads(text) if text else {}
        except (subprocess.TimeoutExpired, json.JSONDecodeError):
            doc = {}
        except OSError as exc:
            raise FioMissingError(f"fio could not be started ({exc}): {runner.INSTALL_HINT}") from exc
        seconds = time.monotonic() - t0
        for ep in endpoints:
            own = [j for j in doc.get("client_stats", []) if ep.matches(str(j.get("hostname", "")),
                                                                         int(j.get("port", 0) or 0))]
            report = decode_probe({"client_stats": own}) if own else None
            if report is not None:
                found[ep.label] = ProbeResult(ep, report=report, seconds=seconds)
    rest = [ep for ep in endpoints if ep.label not in found]
    if rest:
        with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(rest)))) as pool:
            for r in pool.map(lambda ep: probe(ep, workdir, binary=exe, local_version=local_version), rest):
                found[r.endpoint.label] = r
    return [found[ep.label] for ep in endpoints]


# ------------------------------------------------------------------ challenges: reports tied to this run

CHALLENGE_PREFIX = "ssdlab-challenge-"
CHALLENGE_WAIT_S = 5.0  # how long a controller waits for every agent to answer its challenge
CHALLENGE_RE = re.compile(r"^ssdlab-challenge-([0-9a-f]{32})(?:-(\d{1,4}))?$")
MAX_RESOLVE_PATTERN = 500  # fio keeps at most 512 bytes of a buffer_pattern
CHALLENGE_MARK = "ssdlab-paths-"  # the token file's data: ssdlab-paths-<count>. (repeated)


def new_token() -> str:
    """A fresh random challenge token (128 bits, hex)."""
    return secrets.token_hex(16)


def encode_path(path: str) -> str:
    """A path as a fio buffer_pattern string can carry it: base64url without padding, ended by '.', which base64url
    never uses (the pattern repeats over the file)."""
    return base64.urlsafe_b64encode(path.encode()).decode().rstrip("=") + "."


def decode_path(data: bytes) -> str | None:
    """The path a resolve file carries (encode_path's text, repeated), or None when it carries none."""
    head = data.split(b".", 1)[0]
    if not head or len(data) == len(head):
        return None
    try:
        return base64.urlsafe_b64decode(head + b"=" * (-len(head) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None


def challenge_job(token: str, paths: Sequence[str]) -> FioJob:
    """The job a controller sends an agent before it trusts the agent's report: it writes small files named after
    `token` into the agent's working directory (fio --server's cwd) and nothing else. First one file per path the
    agent should resolve on its side (realpath), carrying the path in its data, then (after a stonewall) the
    token's own file, whose data says how many path files there are (fio may create every file, empty or
    zeroed, before it writes any: the agent answers once all of them carry their data). `ssdlab agent` answers
    by putting the token, and what each path resolves to, in its next report; a plain `fio --server` serving a
    written report cannot."""
    asked = [path for path in paths if len(encode_path(path)) <= MAX_RESOLVE_PATTERN]
    sections = [FioSection(f"resolve-{i}", {"filename": f"{CHALLENGE_PREFIX}{token}-{i}",
                                            "buffer_pattern": f'"{encode_path(path)}"'})
                for i, path in enumerate(asked)]
    sections.append(FioSection("challenge", {"filename": f"{CHALLENGE_PREFIX}{token}", "stonewall": 1,
                                             "buffer_pattern": f'"{CHALLENGE_MARK}{len(asked)}."'}))
    return FioJob(jobs=tuple(sections), global_options={"ioengine": "psync", "rw": "write", "size": 4096,
                                                          "bs": 4096, "thread": 1})


def send_challenges(requests: Sequence[tuple[Endpoint, Sequence[str]]], token: str, *,
                    binary: str | None = None, local_version: str = "",
                    timeout: float = PROBE_TIMEOUT_S) -> dict[str, str]:
    """Send each agent its challenge job with one fio client. Returns endpoint label -> why it cannot be used when
    fio's output pins a protocol mismatch on the one agent challenged; any other failure (unreachable, not an
    ssdlab agent) shows in the probe that follows."""
    if not requests:
        return {}
    exe = binary or runner.fio_binary()
    with tempfile.TemporaryDirectory(prefix="ssdlab-challenge-") as tmp:
        argv = [exe, "--output-format=json"]
        for i, (ep, paths) in enumerate(requests):
            job = Path(tmp) / f"challenge-{i}.fio"
            job.write_text(challenge_job(token, paths).render(), encoding="utf-8")
            argv += [f"--client={ep.client_arg()}", str(job)]
        try:
            res = subprocess.run(argv, capture_output=True, text=True, cwd=tmp, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return {}
        except OSError as exc:
            raise FioMissingError(f"fio could not be started ({exc}): {runner.INSTALL_HINT}") from exc
    mismatch = version_mismatch(res.stdout + res.stderr, local_version)
    if mismatch and len(requests) == 1:
        return {requests[0][0].label: f"{requests[0][0].label}: {mismatch}"}
    return {}


def challenge_count(data: bytes) -> int | None:
    """How many path files a complete token file announces (None while fio has not written it yet)."""
    head = data.split(b".", 1)[0].decode("ascii", "replace")
    if not head.startswith(CHALLENGE_MARK) or len(data) == len(head):
        return None
    try:
        return int(head[len(CHALLENGE_MARK):])
    except ValueError:
        return None


def answer_for(report: Mapping[str, Any], token: str) -> dict[str, Any] | None:
    """The agent's answer to challenge `token` in its report ({"token", "at", "paths": {asked: real}}), if any."""
    for a in report.get("answers") or []:
        if isinstance(a, dict) and a.get("token") == token:
            return a
    return None


# ------------------------------------------------------------------ purge on agent hosts

PURGE_BS = 64 * 1024**2


def purge_job(devices: Sequence[tuple[str, Mapping[str, OptionValue]]]) -> FioJob:
    """A purge of one host's devices through fio (nothing else runs on an agent host): each block device's span
    is discarded (rw=trim, psync: fio's trim is BLKDISCARD), each file rewritten once with random data."""
    sections = []
    for i, (kind, dev) in enumerate(devices):
        opts: dict[str, OptionValue] = {**dev, "ioengine": "psync", "direct": 1, "numjobs": 1, "iodepth": 1}
        if kind == "block":  # fio refuses a block size larger than the span
            opts.update({"rw": "trim", "bs": min(PURGE_BS, int(dev.get("size") or PURGE_BS))})
        else:
            opts.update({"rw": "write", "bs": 1024**2, "refill_buffers": 1})
        sections.append(FioSection(f"purge-d{i}", opts))
    return FioJob(jobs=tuple(sections), global_options={"thread": 1, "group_reporting": 1})


def purge_problem(res: ClientRun, endpoints: Sequence[Endpoint]) -> str:
    """'' when every host finished its purge job without errors, else one line saying what failed."""
    if res.lost:
        return "; ".join(res.lost.values())
    if not res.text:
        first = next((ln for ln in res.stderr.splitlines() if ln.strip()), f"exit status {res.returncode}")
        return f"fio returned no result ({first})"
    doc = json.loads(res.text)
    gone = missing_hosts(res, client_hosts(doc), endpoints)
    if gone:
        return next(iter(gone.values()))
    for j in doc.get("client_stats", []):
        if j.get("jobname") != "All clients" and int(j.get("error", 0) or 0):
            err = int(j["error"])
            return f"{j.get('hostname')}: {j.get('jobname')}: fio error {err} ({os.strerror(err)})"
    return ""
