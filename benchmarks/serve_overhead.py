"""What `ssdlab serve` costs a running test: the same run with and without a server (and a client) watching it.

Each repeat runs the same `ssdlab run` twice, once alone and once while `ssdlab serve` follows it and a client
reads its live events (server-sent events, as a browser's live page does; --browser watches with headless
chromium instead), the two sides alternating and the side that goes first alternating too, so drift on a
shared host hits both alike. Per run it takes the run's wall time and CPU time (ssdlab and fio, from wait4),
the server's CPU time over the run (/proc/PID/stat) and the client's. At the end it prints each figure's median
and spread (min..max) and the server's CPU as a share of the run's CPU and of one core over the run's time.

    .venv/bin/python benchmarks/serve_overhead.py [--repeats 5] [--runtime 1] [--suite quick] \\
        [--target null] [--browser]

The default run is the quick suite on fio's null engine (8 points, fio busy on the CPU the whole time): the
load on which a server competing for the CPU would show most. Everything is made in a temporary directory and
removed; the server listens on a free loopback port.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
TICK = os.sysconf("SC_CLK_TCK")
WATCH = """
import asyncio, sys, json
from aiohttp import ClientSession, ClientTimeout
base, token = sys.argv[1], sys.argv[2]
head = {"Authorization": "Bearer " + token}
async def main():
    async with ClientSession(timeout=ClientTimeout(total=None), headers=head) as s:
        while True:
            async with s.get(base + "/api/live") as r:
                runs = (await r.json())["runs"]
            if runs:
                break
            await asyncio.sleep(0.2)
        async with s.get(base + "/api/live/" + runs[0]["id"] + "/events") as r:
            async for line in r.content:
                pass
asyncio.run(main())
"""
BROWSE = """
import sys, time
from playwright.sync_api import sync_playwright
url, base = sys.argv[1], sys.argv[1].split("/login")[0]
with sync_playwright() as p:
    b = p.chromium.launch(executable_path=sys.argv[2], args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking"])
    page = b.new_page()
    page.goto(url)
    page.wait_for_url(base + "/")
    while True:
        runs = page.evaluate("() => fetch('/api/live').then(r => r.json())")["runs"]
        if runs:
            break
        time.sleep(0.2)
    page.goto(base + "/live/" + runs[0]["id"])
    while True:
        time.sleep(1)
"""


def cpu_s(pid: int) -> float:
    """User + system seconds of a live process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and every live descendant (a browser's renderer processes)."""
    total = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            total += cpu_s(p)
            kids = Path(f"/proc/{p}/task/{p}/children").read_text(encoding="ascii").split()
        except OSError:
            continue
        todo.extend(int(k) for k in kids)
    return total


def one_run(args: argparse.Namespace, root: Path, n: int, watched: bool) -> dict[str, float]:
    server = watcher = None
    out: dict[str, float] = {}
    if watched:
        server = subprocess.Popen([PYTHON, "-m", "ssdlab", "serve", "--results", str(root), "--port", "0"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        base, token = url.split("/login#token=")
        if args.browser:
            chromium = shutil.which("chromium")
            if chromium is None:
                raise SystemExit("--browser needs chromium (apt-get install chromium)")
            watcher = subprocess.Popen([PYTHON, "-c", BROWSE, url, chromium], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
        else:
            watcher = subprocess.Popen([PYTHON, "-c", WATCH, base, token], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(1.0)  # the server is up and idle, the client polling for a run
        server_before, watcher_before = cpu_s(server.pid), tree_cpu_s(watcher.pid)
    target = args.target if args.target != "file" else f"file:{root / 'target.dat'}?size=256MiB"
    start = time.monotonic()
    run = subprocess.Popen([PYTHON, "-m", "ssdlab", "run", args.suite, "--target", target, "--runtime",
                            str(args.runtime), "--out", str(root / f"run-{n}"), "--yes", "-q"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(run.pid, 0)
    out["wall_s"] = time.monotonic() - start
    run.returncode = os.waitstatus_to_exitcode(status)
    if run.returncode != 0:
        raise SystemExit(f"the run failed ({run.returncode}): {run.stderr.read().decode() if run.stderr else ''}")
    out["run_cpu_s"] = usage.ru_utime + usage.ru_stime
    if server is not None and watcher is not None:
        out["server_cpu_s"] = cpu_s(server.pid) - server_before
        out["client_cpu_s"] = tree_cpu_s(watcher.pid) - watcher_before
        os.killpg(watcher.pid, signal.SIGKILL)
        watcher.wait()
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
    shutil.rmtree(root / f"run-{n}")
    return out


def spread(values: list[float], fmt: str = "{:.3f}") -> str:
    return (f"median {fmt.format(statistics.median(values))} "
            f"(min {fmt.format(min(values))} .. max {fmt.format(max(values))})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--runtime", type=float, default=1.0, help="--runtime of each point (s)")
    p.add_argument("--suite", default="quick")
    p.add_argument("--target", default="null", help="null (default), file (a 256 MiB file), or a target string")
    p.add_argument("--browser", action="store_true", help="watch with headless chromium instead of an SSE client")
    args = p.parse_args()
    alone: list[dict[str, float]] = []
    watched: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="ssdlab-serve-bench-") as tmp:
        root = Path(tmp)
        n = 0
        for i in range(args.repeats):
            for side in ((False, True) if i % 2 == 0 else (True, False)):
                n += 1
                (watched if side else alone).append(one_run(args, root, n, side))
                print(f"repeat {i + 1} {'watched' if side else 'alone  '}: " + ", ".join(
                    f"{k} {v:.3f}" for k, v in (watched if side else alone)[-1].items()), flush=True)
    client = "headless chromium" if args.browser else "an SSE client"
    print(f"\n{args.suite} on {args.target}, --runtime {args.runtime:g}, {args.repeats} repeats; watched = "
          f"`ssdlab serve` + {client} on its live page")
    for key in ("wall_s", "run_cpu_s"):
        a, w = [r[key] for r in alone], [r[key] for r in watched]
        print(f"run {key:10s} alone {spread(a)}; watched {spread(w)}; "
              f"watched/alone {statistics.median(w) / statistics.median(a):.4f}")
    server = [r["server_cpu_s"] for r in watched]
    share = [100 * r["server_cpu_s"] / r["run_cpu_s"] for r in watched]
    core = [100 * r["server_cpu_s"] / r["wall_s"] for r in watched]
    print(f"server CPU over the run: {spread(server)} s")
    print(f"server CPU / the run's CPU: {spread(share, '{:.2f}')} %")
    print(f"server CPU / the run's wall time (share of one core): {spread(core, '{:.2f}')} %")
    print(f"client CPU over the run: {spread([r['client_cpu_s'] for r in watched])} s (not the server's)")


if __name__ == "__main__":
    main()
