"""The guest side of the VM test tier: runs inside the VM (started by virtme-ng's --exec), reads one JSON request
per line on stdin and answers each with one line on stdout. Standard library only.

Protocol (every line the agent writes starts with MARK, so anything else on the console is ignored):
  agent -> host  MARK {"hello": {"devices": {...}, "kernel": "..."}}            once, when the devices are up
                 MARK {"fatal": "why"}                                           instead, when they never came up
  host -> agent  {"id": n, "argv": [...], "timeout": s, "env": {...}, "cwd": "...", "stdin": "..."}
  agent -> host  MARK {"id": n, "rc": int, "stdout": str, "stderr": str, "seconds": float, "timed_out": bool}
  host -> agent  {"quit": true}                                                  the agent exits, the VM powers off

Every command runs in its own process group with a hard timeout; on expiry the whole group is killed (rc -9).
Devices are named by what the drives say about themselves (serial number and namespace id), never by probe
order: two NVMe controllers probe concurrently, so which one becomes nvme0 differs from boot to boot.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

MARK = "@@ssdlab-vm "
MODULES = ("nvme", "ahci", "sd_mod", "ext4")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def inventory() -> dict[str, str]:
    """{'ctrl:SERIAL': '/dev/nvmeX', 'ns:SERIAL:NSID': '/dev/nvmeXnY', 'ata:SERIAL': '/dev/sdX'}."""
    out: dict[str, str] = {}
    for ctrl in sorted(Path("/sys/class/nvme").glob("nvme*")):
        serial = _read(ctrl / "serial")
        if serial:
            out[f"ctrl:{serial}"] = f"/dev/{ctrl.name}"
    for disk in sorted(Path("/sys/block").iterdir()):
        if disk.name.startswith("nvme"):
            serial, nsid = _read(disk / "device" / "serial"), _read(disk / "nsid")
            if serial and nsid:
                out[f"ns:{serial}:{nsid}"] = f"/dev/{disk.name}"
        elif disk.name.startswith("sd"):
            vpd = (disk / "device" / "vpd_pg80")
            serial = ""
            try:
                raw = vpd.read_bytes()
                serial = raw[4:].decode("ascii", errors="replace").strip()
            except OSError:
                pass
            out[f"ata:{serial or disk.name}"] = f"/dev/{disk.name}"
    return out


def _say(doc: dict[str, object]) -> None:
    sys.stdout.write(MARK + json.dumps(doc) + "\n")
    sys.stdout.flush()


def fast_paths(tag: str, paths: list[str]) -> str:
    """Mount the host's root a second time (9p tag `tag`, read-only) with the page cache on, and bind its copy of
    each path over the one virtme-ng mounted without a cache. Without the cache every page of a shared library
    is fetched from the host again on every use: importing numpy took 15 s under software emulation; with it,
    once. The host does not change these paths while the tests run, so the cache cannot go stale. '' when
    done, else why not (the tests still run, slower)."""
    root = Path("/run/ssdlab-fastroot")
    root.mkdir(parents=True, exist_ok=True)
    steps = [["mount", "-t", "9p", "-o", "trans=virtio,version=9p2000.L,cache=loose,msize=512000,ro", tag, str(root)]]
    steps += [["mount", "--bind", str(root / p.lstrip("/")), p] for p in paths]
    for argv in steps:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
        if proc.returncode != 0:
            return f"{' '.join(argv)}: {proc.stderr.strip()}"
    return ""


def wait_for(expected: list[str], timeout_s: float) -> dict[str, str]:
    for module in MODULES:
        subprocess.run(["modprobe", module], capture_output=True, check=False, timeout=60)
    deadline = time.monotonic() + timeout_s
    while True:
        found = inventory()
        if all(key in found for key in expected) or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def run(req: dict[str, object]) -> dict[str, object]:
    argv = [str(a) for a in req["argv"]]  # type: ignore[attr-defined]
    timeout = float(req.get("timeout", 120))  # type: ignore[arg-type]
    env = dict(os.environ)
    env.update({str(k): str(v) for k, v in dict(req.get("env") or {}).items()})  # type: ignore[call-overload]
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, cwd=str(req.get("cwd") or Path.cwd()), start_new_session=True)
    except OSError as exc:
        return {"id": req.get("id"), "rc": 127, "stdout": "", "stderr": f"cannot run {argv[0]}: {exc}",
                "seconds": 0.0, "timed_out": False}
    timed_out = False
    try:
        out, err = proc.communicate(str(req.get("stdin") or ""), timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return {"id": req.get("id"), "rc": proc.returncode, "stdout": out, "stderr": err,
            "seconds": round(time.monotonic() - t0, 3), "timed_out": timed_out}


def main() -> int:
    expected = [e for e in os.environ.get("SSDLAB_VM_EXPECT", "").split(",") if e]
    tag = os.environ.get("SSDLAB_VM_FAST_TAG", "")
    slow = fast_paths(tag, [p for p in os.environ.get("SSDLAB_VM_FAST_PATHS", "").split(":") if p]) if tag else ""
    found = wait_for(expected, float(os.environ.get("SSDLAB_VM_DEVICE_TIMEOUT", "60")))
    missing = [e for e in expected if e not in found]
    if missing:
        _say({"fatal": f"the guest booted but these devices never appeared: {', '.join(missing)} "
                       f"(found: {', '.join(sorted(found)) or 'none'})"})
        return 1
    _say({"hello": {"devices": found, "kernel": os.uname().release, "uncached": slow}})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        if req.get("quit"):
            break
        _say(run(req))
    return 0


if __name__ == "__main__":
    sys.exit(main())
