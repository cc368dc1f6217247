"""How far one controller drives a host group: many agents on loopback, one `ssdlab run --hosts` each.

For every group size N it starts N `ssdlab agent --insecure-tcp` processes on 127.0.0.(40+i) (free ports; each
agent's fio server killed by process group at exit; the devices are the null engine, so nothing is inspected),
and times the command users run:

    ssdlab run bench.toml --hosts inventory-N.toml --runtime R --no-report -q

(one 4K random-read point, QD4, one null-engine device per host). Group sizes are run round-robin, repeats
alternating their order, and every figure is the median over repeats with its spread (min-max):

- wall: the whole command (start-up, probing every agent, the point, run.json);
- point: the point alone as the run recorded it (one fio client for all hosts, parsing); overhead = point - R;
- client CPU: user+sys seconds of the one fio client process (from its rusage), and of ssdlab itself;
- result size: bytes of fio's json+ document per host, and of run.json per point per host;
- result stream: bytes the client and each server exchanged for the point, counted by a relay in front of
  every server (a separate pass: the relay adds hops, so its timings are not reported).

    .venv/bin/python benchmarks/scale_clients.py [--sizes 1,2,4,8,16,32] [--repeats 3] [--runtime 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from timing import check, load, run, ssdlab, stop_agent, wait_for_agents

from ssdlab.fio.runner import fio_version

SUITE = """
name = "scale-bench"
summary = "one 4K random-read point"
runtime_s = 0.5

[[matrix]]
name = "rnd"
rw = ["randread"]
bs = ["4k"]
iodepth = [4]
numjobs = [1]
"""


def free_port(address: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    address: str
    port: int
    proc: subprocess.Popen[bytes]
    workdir: Path


@contextlib.contextmanager
def servers(n: int, base: Path) -> Iterator[list[Server]]:
    """N `ssdlab agent`s on loopback TCP (each answers the controller's challenged probe, as on a lab host);
    always stopped: Ctrl-C, then their fio servers' process groups (by the pid each agent logs)."""
    started: list[Server] = []
    logs: list[Path] = []
    try:
        for i in range(n):
            address = f"127.0.0.{40 + i}"
            port = free_port(address)
            wd = base / f"srv-{i}"
            wd.mkdir(parents=True, exist_ok=True)
            log = wd / "agent.log"
            with log.open("wb") as fh:
                proc = subprocess.Popen([str(ssdlab()), "agent", "--insecure-tcp", "--bind", address, "--port",
                                         str(port), "--interval", "2"], cwd=wd, stdout=fh, stderr=subprocess.STDOUT,
                                        start_new_session=True)
            started.append(Server(address, port, proc, wd))
            logs.append(log)
        wait_for_agents([(s.proc, log) for s, log in zip(started, logs, strict=True)])
        yield started
    finally:
        for s, log in zip(started, logs, strict=True):
            stop_agent(s.proc, log)


def write_inventory(path: Path, endpoints: list[tuple[str, int]]) -> None:
    lines = []
    for i, (address, port) in enumerate(endpoints):
        lines += ["[[host]]", f'name = "h{i:03d}"', f'address = "{address}"', f"port = {port}",
                  'targets = ["null"]', ""]
    path.write_text("\n".join(lines))


@dataclass
class Sample:
    wall_s: float
    point_wall_s: float
    ssdlab_cpu_s: float
    client_cpu_s: float
    json_bytes: int
    run_json_bytes: int


def run_command(endpoints: list[tuple[str, int]], base: Path, runtime: float, tag: str) -> tuple[list[str], Path]:
    """The command users run for one point on these hosts (its inventory and suite file written), and its
    results directory (emptied)."""
    inv = base / f"inv-{tag}.toml"
    write_inventory(inv, endpoints)
    suite = base / "bench.toml"
    suite.write_text(SUITE)
    out = base / f"run-{tag}"
    shutil.rmtree(out, ignore_errors=True)
    return [str(ssdlab()), "run", str(suite), "--hosts", str(inv), "--runtime", str(runtime), "--out", str(out),
            "--no-report", "-q"], out


def run_once(n: int, endpoints: list[tuple[str, int]], base: Path, runtime: float, tag: str) -> Sample:
    argv, out = run_command(endpoints, base, runtime, tag)
    whole = check(f"N={n}: ssdlab run", run(argv))
    point = next(p for p in (out / "points").iterdir() if p.name != "host-ceiling")
    # the fio client alone, re-run from the stored command (its own rusage)
    client_cpu = run((point / "cmd.txt").read_text().split(), cwd=point).cpu
    run_json = json.loads((out / "run.json").read_text())
    point_json = next(p for p in run_json["points"] if p["point"]["phase"] == "measure")
    point_wall = float(point_json["measurement"]["extra"]["wall_s"])  # the point alone, as the run recorded it
    sample = Sample(whole.wall, point_wall, whole.cpu, client_cpu, (point / "fio.json").stat().st_size,
                    len(json.dumps(point_json)))
    shutil.rmtree(out, ignore_errors=True)
    return sample


def point_stream(n: int, endpoints: list[tuple[str, int]], base: Path, runtime: float,
                 counters: list[Counter]) -> tuple[float, float]:
    """Bytes per server of one point alone: a run through the relays, then its stored fio client command
    again with the counters reset (the run itself also probed every agent)."""
    argv, out = run_command(endpoints, base, runtime, f"relay-{n}")
    check(f"N={n} through the relays: ssdlab run", run(argv))
    point = next(p for p in (out / "points").iterdir())
    for c in counters:
        with c.lock:
            c.to_server = c.to_client = 0
    run((point / "cmd.txt").read_text().split(), cwd=point)
    time.sleep(0.2)
    shutil.rmtree(out, ignore_errors=True)
    return statistics.mean(c.to_client for c in counters), statistics.mean(c.to_server for c in counters)


# ------------------------------------------------------------------ byte counting relay

@dataclass
class Counter:
    to_server: int = 0
    to_client: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def start_relays(targets: list[Server]) -> tuple[list[tuple[str, int]], list[Counter], asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    counters = [Counter() for _ in targets]
    endpoints: list[tuple[str, int]] = []

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, c: Counter, up: bool) -> None:
        try:
            while data := await reader.read(65536):
                with c.lock:
                    if up:
                        c.to_server += len(data)
                    else:
                        c.to_client += len(data)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    def handler(srv: Server, c: Counter):  # type: ignore[no-untyped-def]
        async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            sr, sw = await asyncio.open_connection(srv.address, srv.port)
            await asyncio.gather(pipe(r, sw, c, True), pipe(sr, w, c, False))
        return handle

    async def setup() -> None:
        for srv, c in zip(targets, counters, strict=True):
            address = srv.address.replace("127.0.0.", "127.0.1.")
            port = free_port(address)
            await asyncio.start_server(handler(srv, c), address, port)
            endpoints.append((address, port))

    loop.run_until_complete(setup())
    threading.Thread(target=loop.run_forever, daemon=True).start()
    return endpoints, counters, loop


def fmt(values: list[float], unit: str = "", digits: int = 2) -> str:
    med = statistics.median(values)
    return f"{med:.{digits}f}{unit} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,2,4,8,16,32")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--runtime", type=float, default=0.5)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    base = Path(tempfile.mkdtemp(prefix="ssdlab-scale-"))
    samples: dict[int, list[Sample]] = {n: [] for n in sizes}
    try:
        with servers(max(sizes), base) as all_servers:
            for rep in range(args.repeats):
                order = sizes if rep % 2 == 0 else list(reversed(sizes))
                for n in order:
                    eps = [(s.address, s.port) for s in all_servers[:n]]
                    samples[n].append(run_once(n, eps, base, args.runtime, f"{n}-{rep}"))
                    print(f"  repeat {rep + 1}, N={n}: {samples[n][-1].wall_s:.2f} s", file=sys.stderr)
            # result-stream bytes: one run through counting relays, for the smallest and largest group
            stream: dict[int, tuple[float, float]] = {}
            for n in sorted({sizes[0], sizes[-1]}):
                eps, counters, loop = start_relays(all_servers[:n])
                try:
                    stream[n] = point_stream(n, eps, base, args.runtime, counters)
                finally:
                    loop.call_soon_threadsafe(loop.stop)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"fio {fio_version()}, {load()}, runtime {args.runtime:g} s per point, "
          f"{args.repeats} repeats: median (min-max)")
    print(f"{'hosts':>5}  {'wall s':>18}  {'point overhead s':>18}  {'ssdlab CPU s':>18}  {'fio client CPU s':>18}  "
          f"{'json+ B/host':>12}  {'run.json B/host':>15}")
    for n in sizes:
        ss = samples[n]
        print(f"{n:>5}  {fmt([s.wall_s for s in ss]):>18}  {fmt([s.point_wall_s - args.runtime for s in ss]):>18}  "
              f"{fmt([s.ssdlab_cpu_s for s in ss]):>18}  {fmt([s.client_cpu_s for s in ss]):>18}  "
              f"{statistics.median(s.json_bytes for s in ss) / n:>12,.0f}  "
              f"{statistics.median(s.run_json_bytes for s in ss) / n:>15,.0f}")
    for n, (down, up) in stream.items():
        print(f"result stream, N={n}: {down:,.0f} B from each server to the controller and {up:,.0f} B to it for one "
              f"point ({down * n / 1e6:.2f} MB in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
