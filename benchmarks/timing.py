"""Shared by the benchmarks: run the commands users run as child processes, alternate the sides, report the
median and spread of wall-clock and CPU time, and the host's load while measuring.

Each side is a command line; every run is a fresh process, measured from outside (wall clock around it;
CPU time and peak RSS from the kernel's accounting of the child and everything it waited for, os.wait4).
Rounds alternate which side goes first, so slow drift on a shared host hits both sides alike.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sample:
    """One run of a command: wall-clock seconds, CPU seconds (user + system, children included), exit code,
    peak resident set size (of the process or the largest child it waited for) and the end of its stderr."""

    wall: float
    cpu: float
    code: int
    rss_mb: float = 0.0
    err: str = ""
    own_mb: float = 0.0  # the command's own process's peak RSS (VmHWM, polled; `own=True`), its children aside


def user_env() -> dict[str, str]:
    """The environment the commands run in: this one, as a user's shell has it. Some sandboxes and CI images
    export PYTHONDONTWRITEBYTECODE, which makes every start of a Python command compile its sources again
    (for ssdlab, ~40 ms of each start); users' machines cache bytecode, so both sides run with it."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(argv: Sequence[str | Path], *, stdout: Path | None = None, cwd: Path | None = None,
        env: Mapping[str, str] | None = None, tty: bool = False, own: bool = False) -> Sample:
    """Run argv to completion (stdout to a file or discarded; the end of stderr kept for failure messages).
    `tty`: stdout and stderr on a pseudo-terminal, as in a user's terminal (progress bars drawn and all).
    `rss_mb` is wait4's ru_maxrss: the largest of the process and the children it waited for (fio, for an
    ssdlab run); `own`: also the process's own peak (Sample.own_mb)."""
    if tty:
        return _run_tty(argv, cwd=cwd, env=env)
    out = stdout.open("wb") if stdout is not None else subprocess.DEVNULL
    hwm: list[float] = [0.0]
    try:
        with tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen([str(a) for a in argv], stdout=out, stderr=err, cwd=cwd,
                                    env=dict(env) if env is not None else user_env())
            if own:
                threading.Thread(target=_poll_hwm, args=(proc.pid, hwm), daemon=True).start()
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            tail = err.read()[-4000:].decode(errors="replace").strip()
    finally:
        if stdout is not None:
            out.close()  # type: ignore[union-attr]
    return Sample(wall=wall, cpu=usage.ru_utime + usage.ru_stime, code=proc.returncode,
                  rss_mb=usage.ru_maxrss / 1024.0, err=tail, own_mb=hwm[0])


def _poll_hwm(pid: int, out: list[float], every_s: float = 0.02) -> None:
    """The process's own peak RSS so far (VmHWM in /proc/PID/status), every `every_s` until it is gone (its last
    20 ms can escape: a command's last moments write files, they do not build large structures)."""
    status = Path(f"/proc/{pid}/status")
    while True:
        try:
            text = status.read_text(encoding="ascii", errors="replace")
        except OSError:
            return
        if "VmHWM:" not in text:  # a zombie: exited, not yet reaped
            return
        kb = int(text.split("VmHWM:", 1)[1].split()[0])
        out[0] = max(out[0], kb / 1024.0)
        time.sleep(every_s)


def _run_tty(argv: Sequence[str | Path], *, cwd: Path | None, env: Mapping[str, str] | None) -> Sample:
    """run() on a pseudo-terminal of 120 x 40 (what the command writes is read as a terminal would, and kept
    for failure messages)."""
    import fcntl
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            seen.append(chunk)
            del seen[:-64]

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                                cwd=cwd, env={**(dict(env) if env is not None else user_env()), "TERM": "xterm"})
        os.close(slave)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        reader.join(timeout=5)
    finally:
        os.close(master)
    tail = b"".join(seen)[-4000:].decode(errors="replace").strip()
    return Sample(wall=wall, cpu=usage.ru_utime + usage.ru_stime, code=proc.returncode,
                  rss_mb=usage.ru_maxrss / 1024.0, err=tail)


def check(name: str, sample: Sample) -> Sample:
    """`sample`, or exit with the command's last line of stderr when it failed."""
    if sample.code != 0:
        raise SystemExit(f"{name} failed (exit {sample.code}): {sample.err.splitlines()[-1] if sample.err else ''}")
    return sample


def alternate(sides: Mapping[str, Callable[[], Sample]], rounds: int, *, warm: bool = True) -> dict[str, list[Sample]]:
    """`rounds` timed runs of every side, the order rotating each round (A B, B A, ...), after one untimed run
    of each (unless not `warm`: for long commands whose start is noise, or whose runs are counted elsewhere)."""
    names = list(sides)
    out: dict[str, list[Sample]] = {n: [] for n in names}
    for name in names if warm else ():  # untimed: bytecode and page caches warm, alike for every side
        check(name, sides[name]())
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            out[name].append(check(name, sides[name]()))
    return out


def spread(values: Sequence[float], unit: str = "s", digits: int = 3) -> str:
    """'median 0.123 s (min 0.110, max 0.140, n 5)'."""
    return (f"median {statistics.median(values):.{digits}f} {unit} (min {min(values):.{digits}f}, "
            f"max {max(values):.{digits}f}, n {len(values)})")


def load() -> str:
    """The host's load averages and cores, to print with every figure (other processes share the host)."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def ssdlab() -> Path:
    """The ssdlab console script next to this interpreter (the command users run)."""
    import sys

    exe = Path(sys.executable).with_name("ssdlab")
    if not exe.exists():
        raise SystemExit(f"{exe} not found: install ssdlab into this interpreter's environment first")
    return exe


AGENT_PID = re.compile(r"\(pid (\d+)\)")  # how an agent's log names its fio server's process group


def wait_for_agents(started: Sequence[tuple[subprocess.Popen[bytes], Path]], timeout: float = 60) -> None:
    """Until every `ssdlab agent` has logged its fio server's pid; an agent that exits first ends the benchmark."""
    deadline = time.monotonic() + timeout
    for proc, log in started:
        while not AGENT_PID.search(log.read_text()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"an agent did not start: {log.read_text().strip()}")
            time.sleep(0.05)


def stop_agent(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Stop an agent as its user would (Ctrl-C), then make sure its fio server's process group is gone."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    m = AGENT_PID.search(log.read_text())
    if m:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(int(m.group(1)), signal.SIGKILL)
