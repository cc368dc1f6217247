"""The host side of the VM test tier: one QEMU guest with real NVMe and SATA devices, booted once per test session.

virtme-ng (`vng`, from PyPI) boots Debian's own kernel (linux-image-amd64, /boot/vmlinuz-*) over this machine's
filesystem, read-only, so the guest already has python, fio, nvme-cli, smartctl and the project's venv. QEMU adds
the devices under test (DEVICES below). A small agent (tests/vm/agent.py) runs in the guest as root and executes
the commands the tests send it, one JSON line each way over the guest's stdin/stdout.

Acceleration: KVM when /dev/kvm opens and a short probe boot (a bare kernel that panics at once for want of a
root filesystem) gets to its panic within PROBE_TIMEOUT_S; software emulation (TCG) otherwise. Nested KVM that
opens but never runs a guest is common on cloud machines, hence the probe. SSDLAB_VM_ACCEL=kvm|tcg overrides it.

Every wait has a hard limit: a boot that does not reach the agent, a command that outlives its timeout, a guest
that does not power off. Each failure is one line (VMError) naming what happened and the log to read.

Run `python tests/vm/machine.py` to boot the guest once and print its devices and boot time (a smoke test).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
AGENT = Path(__file__).with_name("agent.py")
MARK = "@@ssdlab-vm "
FAST_TAG = "ssdlab.root"
MiB = 1024**2

PROBE_TIMEOUT_S = 20.0
BOOT_TIMEOUT_S = float(os.environ.get("SSDLAB_VM_BOOT_TIMEOUT", "480"))  # software emulation, loaded machine
KVM_BOOT_TIMEOUT_S = 120.0  # a KVM boot takes seconds
COMMAND_TIMEOUT_S = 300.0
SHUTDOWN_TIMEOUT_S = 60.0


LAST_BOOT: Guest | None = None  # the guest boot() returned last (for the test session's summary line)


class VMError(Exception):
    """The VM could not be booted or stopped answering; str() is one line."""


@dataclass(frozen=True)
class Namespace:
    nsid: int
    size: int
    lba: int  # logical block size in bytes
    readonly: bool = False


@dataclass(frozen=True)
class Controller:
    """An NVMe controller behind its own PCIe root port. `subsystem`: attach it to an nvme-subsys device, which
    makes it a multi-controller-capable subsystem (CMIC bit 1): the kernel then names its namespaces through
    the subsystem (sysfs .../nvme-subsystem/nvme-subsysN/nvmeXnY), as with enterprise dual-port drives; without
    one the namespaces hang off the PCI function, as with client drives."""

    serial: str
    namespaces: tuple[Namespace, ...]
    subsystem: bool
    port: int  # the root port's chassis and slot number


@dataclass(frozen=True)
class SataDisk:
    serial: str
    model: str
    size: int


# The devices under test. Controller A: three namespaces (512 B and 4 KiB LBA formats; the third is the
# write gate's: a filesystem is made and mounted on it). Controller B: one namespace whose backing image QEMU
# opens read-only, so every purge method fails on the device itself (format's and discard's writes are refused).
CTRL_A = Controller("SSDLAB-NVME-A", (Namespace(1, 256 * MiB, 512), Namespace(2, 256 * MiB, 4096),
                                      Namespace(3, 64 * MiB, 512)), subsystem=True, port=1)
CTRL_B = Controller("SSDLAB-NVME-B", (Namespace(1, 64 * MiB, 512, readonly=True),), subsystem=False, port=2)
SATA = SataDisk("SSDLAB-SATA-1", "SSDLAB-SATA-SSD", 256 * MiB)
ROOT_PORT_SPEED, ROOT_PORT_WIDTH = "8", "4"  # a PCIe 3.0 x4 slot, like an M.2 socket


def expected_keys() -> list[str]:
    """The agent's names of every device the guest must show (see agent.inventory)."""
    keys = []
    for ctrl in (CTRL_A, CTRL_B):
        keys.append(f"ctrl:{ctrl.serial}")
        keys += [f"ns:{ctrl.serial}:{ns.nsid}" for ns in ctrl.namespaces]
    keys.append(f"ata:{SATA.serial}")
    return keys


def qemu_devices(images: Path) -> list[str]:
    """QEMU arguments for DEVICES, backing images created (sparse) under `images`."""
    args: list[str] = []

    def image(name: str, size: int) -> Path:
        path = images / f"{name}.img"
        with path.open("wb") as fh:
            fh.truncate(size)
        return path

    for ctrl in (CTRL_A, CTRL_B):
        tag = ctrl.serial.rsplit("-", 1)[-1].lower()
        port = f"rp{ctrl.port}"
        args += ["-device", f"pcie-root-port,id={port},bus=pcie.0,chassis={ctrl.port},slot={ctrl.port},"
                            f"x-speed={ROOT_PORT_SPEED},x-width={ROOT_PORT_WIDTH}"]
        subsys = ""
        if ctrl.subsystem:
            args += ["-device", f"nvme-subsys,id=subsys{tag},nqn=nqn.2024-01.invalid.ssdlab:vm-{tag}"]
            subsys = f",subsys=subsys{tag}"
        args += ["-device", f"nvme,id=nvme{tag},serial={ctrl.serial},bus={port}{subsys}"]
        for ns in ctrl.namespaces:
            drive = f"ns{tag}{ns.nsid}"
            path = image(drive, ns.size)
            ro = ",readonly=on" if ns.readonly else ""
            args += ["-drive", f"file={path},if=none,id={drive},format=raw,cache=unsafe{ro}",
                     "-device", f"nvme-ns,drive={drive},bus=nvme{tag},nsid={ns.nsid},"
                                f"logical_block_size={ns.lba},physical_block_size={ns.lba}"]
    # the host's root once more, for the agent to mount with the page cache on (FAST_TAG, agent.fast_paths)
    args += ["-fsdev", "local,id=fastroot,path=/,security_model=none,readonly=on,multidevs=remap",
             "-device", f"virtio-9p-pci,fsdev=fastroot,mount_tag={FAST_TAG}"]
    path = image("sata", SATA.size)
    args += ["-device", "ich9-ahci,id=ahci1",
             "-drive", f"file={path},if=none,id=sata1,format=raw,cache=unsafe",
             "-device", f"ide-hd,drive=sata1,bus=ahci1.0,model={SATA.model},serial={SATA.serial},rotation_rate=1"]
    return args


# ------------------------------------------------------------------ kernel and acceleration

def find_kernel() -> tuple[Path, str]:
    """The newest /boot/vmlinuz-* that has its modules installed (the guest loads nvme, ahci ... from them)."""
    found = []
    for path in Path("/boot").glob("vmlinuz-*"):
        release = path.name.removeprefix("vmlinuz-")
        if (Path("/lib/modules") / release / "modules.dep").exists() and os.access(path, os.R_OK):
            found.append((_version_key(release), path, release))
    if not found:
        raise VMError("no bootable kernel: /boot/vmlinuz-* with its /lib/modules is missing "
                      "(apt-get install linux-image-amd64; bash scripts/test.sh --vm installs it)")
    _, path, release = max(found)
    return path, release


def _version_key(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", release))


def probe_kvm(kernel: Path, timeout_s: float = PROBE_TIMEOUT_S) -> str:
    """'' when KVM runs a guest here; otherwise why not (one phrase)."""
    if not Path("/dev/kvm").exists():
        return "/dev/kvm does not exist"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "/dev/kvm is not accessible to this user"
    argv = ["qemu-system-x86_64", "-accel", "kvm", "-machine", "q35", "-m", "256", "-nographic", "-no-reboot",
            "-net", "none", "-kernel", str(kernel), "-append", "console=ttyS0 panic=-1 loglevel=3"]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"a probe boot under KVM did not reach its end within {timeout_s:g} s (nested KVM that hangs)"
    except OSError as exc:
        return f"qemu-system-x86_64 cannot run ({exc})"
    text = (proc.stdout + proc.stderr).decode(errors="replace")
    if "Kernel panic" not in text:
        last = text.strip().splitlines()[-1] if text.strip() else f"exit {proc.returncode}"
        return f"a probe boot under KVM failed after {time.monotonic() - t0:.1f} s ({last[:120]})"
    return ""


def choose_accel(kernel: Path) -> tuple[str, str]:
    """('kvm' | 'tcg', why)."""
    forced = os.environ.get("SSDLAB_VM_ACCEL", "").lower()
    if forced in ("kvm", "tcg"):
        return forced, f"SSDLAB_VM_ACCEL={forced}"
    reason = probe_kvm(kernel)
    return ("tcg", f"software emulation: {reason}") if reason else ("kvm", "KVM works (probe boot)")


# ------------------------------------------------------------------ the guest

@dataclass(frozen=True)
class Result:
    argv: tuple[str, ...]
    rc: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool

    @property
    def err_lines(self) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.strip()]

    def describe(self) -> str:
        """The command and what it printed, for assertion messages."""
        return (f"$ {shlex.join(self.argv)}\n(exit {self.rc}, {self.seconds:.1f} s)\n--- stdout\n{self.stdout[-4000:]}"
                f"\n--- stderr\n{self.stderr[-4000:]}")


@dataclass
class Guest:
    """A booted VM and its agent. `devices` maps the agent's names (agent.inventory) to /dev nodes."""

    accel: str
    accel_reason: str
    kernel: str
    shared: Path  # read-write in both the guest and the host (same path)
    log: Path
    boot_seconds: float
    devices: dict[str, str]
    _proc: subprocess.Popen[str]
    _lines: queue.Queue[dict[str, Any] | None]
    _next_id: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, argv: Sequence[str], *, timeout: float = COMMAND_TIMEOUT_S, env: dict[str, str] | None = None,
            stdin: str = "", cwd: str | None = None) -> Result:
        """Run `argv` in the guest as root; the agent kills it after `timeout` s (rc -9, timed_out)."""
        with self._lock:
            self._next_id += 1
            rid = self._next_id
            req = {"id": rid, "argv": list(argv), "timeout": timeout, "env": env or {}, "stdin": stdin,
                   "cwd": cwd or str(REPO)}
            self._send(req)
            deadline = time.monotonic() + timeout + 60  # the agent's own timeout fires first
            while True:
                msg = self._receive(deadline, f"`{shlex.join(argv)}`")
                if msg.get("id") == rid:
                    return Result(tuple(argv), int(msg["rc"]), str(msg["stdout"]), str(msg["stderr"]),
                                  float(msg["seconds"]), bool(msg["timed_out"]))

    def sh(self, script: str, *, timeout: float = COMMAND_TIMEOUT_S) -> Result:
        return self.run(["sh", "-c", script], timeout=timeout)

    def _send(self, doc: dict[str, Any]) -> None:
        if self._proc.poll() is not None or self._proc.stdin is None:
            raise VMError(f"the VM is gone (exit {self._proc.returncode}); see {self.log}")
        try:
            self._proc.stdin.write(json.dumps(doc) + "\n")
            self._proc.stdin.flush()
        except OSError as exc:
            raise VMError(f"the VM stopped listening ({exc}); see {self.log}") from exc

    def _receive(self, deadline: float, what: str) -> dict[str, Any]:
        try:
            msg = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise VMError(f"the guest agent gave no answer to {what} in time; see {self.log}") from None
        if msg is None:
            raise VMError(f"the VM exited while running {what} (exit {self._proc.poll()}); see {self.log}")
        return msg

    def kill(self) -> None:
        """Stop QEMU and everything virtme-ng started, at once."""
        _kill_group(self._proc)

    def close(self) -> None:
        """Ask the agent to quit (the guest powers off), wait, kill QEMU if it lingers."""
        if self._proc.poll() is None:
            with self._lock, contextlib.suppress(VMError):
                self._send({"quit": True})
            try:
                self._proc.wait(timeout=SHUTDOWN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                _kill_group(self._proc)
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


@dataclass
class _Log:
    """The console log: lines from virtme-ng's stdout and stderr, written whole, one at a time. (QEMU must not
    be handed the file itself: it reopens its stderr path with O_TRUNC and would empty it.)"""

    path: Path
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def write(self, text: str) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(text)


def _last_line(path: Path) -> str:
    """The log's last line that is not ours (QEMU's or the kernel's reason for stopping), shortened."""
    time.sleep(0.5)  # the reader threads write what the pipes still held
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()
             if ln.strip() and not ln.startswith("# ")]
    return lines[-1][:300] if lines else "it printed nothing"


def _reader(stream: Any, out: queue.Queue[dict[str, Any] | None] | None, log: _Log) -> None:
    """Agent lines to `out` (None when the stream ends); every other line to the log."""
    for line in stream:
        if out is not None and line.startswith(MARK):
            try:
                out.put(json.loads(line[len(MARK):]))
                continue
            except json.JSONDecodeError:
                pass
        log.write(line)
    if out is not None:
        out.put(None)


def vng_path() -> str:
    found = shutil.which("vng") or shutil.which("vng", path=str(Path(sys.executable).parent))
    if not found:
        raise VMError("virtme-ng is not installed (pip install virtme-ng; bash scripts/test.sh --vm installs it)")
    return found


# Under software emulation one vCPU and a CPU model without AVX halve the CPU time the tier costs (QEMU's CPU time,
# measured with tests/vm/machine.py's guest on this 2-core machine: booting 25 s instead of 40, importing ssdlab
# and numpy 3.9 s instead of 9.2, a `quick` run 34 s instead of 67): multi-threaded TCG pays for keeping two
# vCPUs coherent, and emulating AVX costs more than the SSE4.2 code glibc and numpy pick without it (numpy needs
# SSE4.2: Nehalem has it, QEMU's default qemu64 model does not).
TCG_CPUS = 1
TCG_CPU_MODEL = "Nehalem"


def boot(workdir: Path, *, memory: str = "1G", cpus: int = 2) -> Guest:
    """Boot the guest with every device; returns once the agent has seen them all. `workdir` holds the backing
    images (images/), the directory shared with the guest (shared/) and the console log (vm.log). A KVM boot that
    passed the probe but still does not reach the agent within KVM_BOOT_TIMEOUT_S is tried once more without KVM."""
    if shutil.which("qemu-system-x86_64") is None:
        raise VMError("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)")
    kernel, release = find_kernel()
    accel, why = choose_accel(kernel)
    if accel == "kvm" and "SSDLAB_VM_ACCEL" not in os.environ:
        try:
            return _start(workdir, kernel, release, accel, why, KVM_BOOT_TIMEOUT_S, memory, cpus)
        except VMError as exc:
            why = f"software emulation: the KVM boot failed ({exc})"
            accel = "tcg"
    return _start(workdir, kernel, release, accel, why, BOOT_TIMEOUT_S, memory, cpus)


def _start(workdir: Path, kernel: Path, release: str, accel: str, why: str, timeout_s: float, memory: str,
           cpus: int) -> Guest:
    images, shared = workdir / "images", workdir / "shared"
    images.mkdir(parents=True, exist_ok=True)
    shared.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "vm.log"
    exec_cmd = shlex.join(["env", f"SSDLAB_VM_EXPECT={','.join(expected_keys())}", f"SSDLAB_VM_FAST_TAG={FAST_TAG}",
                           f"SSDLAB_VM_FAST_PATHS=/usr:{REPO}", sys.executable, str(AGENT)])
    tcg = accel == "tcg"
    argv = [vng_path(), "--run", str(kernel), "--disable-microvm", "--memory", memory,
            "--cpus", str(TCG_CPUS if tcg else cpus), "--rwdir", str(shared), "--cwd", str(REPO), "--exec", exec_cmd,
            *(["--disable-kvm"] if tcg else []),
            "--qemu-opts=" + " ".join([*qemu_devices(images), *(["-cpu", TCG_CPU_MODEL] if tcg else []),
                                       *os.environ.get("SSDLAB_VM_QEMU_EXTRA", "").split()])]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    log_path.write_text(f"# accel {accel} ({why}); kernel {kernel}\n# {shlex.join(argv)}\n", encoding="utf-8")
    log = _Log(log_path)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True, bufsize=1)
    lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines, log), daemon=True).start()
    threading.Thread(target=_reader, args=(proc.stderr, None, log), daemon=True).start()
    try:
        msg = lines.get(timeout=timeout_s)
    except queue.Empty:
        _kill_group(proc)
        raise VMError(f"the VM did not boot within {timeout_s:g} s ({accel}; its last line: "
                      f"{_last_line(log_path)}); see {log_path}") from None
    if msg is None or "hello" not in msg:
        _kill_group(proc)
        why_not = msg.get("fatal") if msg else (f"the VM exited ({proc.returncode}) before its agent started: "
                                                f"{_last_line(log_path)}")
        raise VMError(f"VM boot failed: {why_not}; see {log_path}")
    hello = msg["hello"]
    guest = Guest(accel=accel, accel_reason=why, kernel=release, shared=shared, log=log_path,
                  boot_seconds=time.monotonic() - t0, devices=dict(hello["devices"]), _proc=proc, _lines=lines)
    global LAST_BOOT
    LAST_BOOT = guest
    return guest


def captures(guest: Guest) -> dict[str, list[str]]:
    """Golden outputs of the emulated devices: file name under tests/data/health -> the command printing it."""
    ctrl, ns512 = guest.devices[f"ctrl:{CTRL_A.serial}"], guest.devices[f"ns:{CTRL_A.serial}:1"]
    ns4k, sata = guest.devices[f"ns:{CTRL_A.serial}:2"], guest.devices[f"ata:{SATA.serial}"]
    return {
        "nvme-cli/id-ctrl-2.3-qemu-7.2.json": ["nvme", "id-ctrl", ctrl, "--output-format=json"],
        "nvme-cli/id-ns-2.3-qemu-7.2-512.json": ["nvme", "id-ns", ns512, "--output-format=json"],
        "nvme-cli/id-ns-2.3-qemu-7.2-4k.json": ["nvme", "id-ns", ns4k, "--output-format=json"],
        "nvme-cli/smart-log-2.3-qemu-7.2.json": ["nvme", "smart-log", ctrl, "--output-format=json"],
        "nvme-cli/smart-log-2.3-qemu-7.2-ns1.json": ["nvme", "smart-log", ctrl, "--output-format=json",
                                                     "--namespace-id=1"],
        "nvme-cli/list-2.3-qemu-7.2.json": ["nvme", "list", "--output-format=json"],
        "nvme-cli/get-feature-6-2.3-qemu-7.2.txt": ["nvme", "get-feature", ctrl, "-f", "6"],
        "nvme-cli/get-feature-2-2.3-qemu-7.2.txt": ["nvme", "get-feature", ctrl, "-f", "2"],
        "smartctl/7.3-x-sata-qemu-7.2.json": ["smartctl", "--json", "--xall", sata],
        "smartctl/7.3-nvme-qemu-7.2.json": ["smartctl", "--json", "--all", ctrl],
    }


def capture(guest: Guest, into: Path) -> None:
    """Write every capture (captures()) under `into`, exactly as the tool printed it. 8 MiB are written to the
    first namespace first, so the SMART log's data-unit counters hold a known amount: 8,388,608 bytes are
    16.4 units of 512,000 bytes, which the controller counts as 17 (rounded up)."""
    ns512 = guest.devices[f"ns:{CTRL_A.serial}:1"]
    res = guest.run(["dd", "if=/dev/zero", f"of={ns512}", "bs=1M", "count=8", "oflag=direct"], timeout=120)
    if res.rc != 0:
        raise VMError(f"capture: {res.describe()}")
    for name, argv in captures(guest).items():
        res = guest.run(argv, timeout=120)
        # smartctl's exit status is a bit mask: bits 0-1 mean it could not ask; higher bits report on the disk
        # (bit 2: a SMART command failed, e.g. a log QEMU does not keep) and come with a full answer
        if not (res.rc == 0 or (argv[0] == "smartctl" and res.rc > 0 and res.rc & 0x3 == 0)):
            raise VMError(f"capture {name}: {res.describe()}")
        path = into / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(res.stdout, encoding="utf-8")
        print(f"  {path}  <- {shlex.join(argv)}")


def main(argv: Sequence[str]) -> int:
    """Boot once and print the devices; with --capture DIR, write the devices' golden outputs under DIR."""
    into = Path(argv[argv.index("--capture") + 1]) if "--capture" in argv else None
    with tempfile.TemporaryDirectory(prefix="ssdlab-vm-") as tmp:
        try:
            guest = boot(Path(tmp))
        except VMError as exc:
            print(f"vm: {exc}", file=sys.stderr)
            return 1
        try:
            print(f"booted {guest.kernel} in {guest.boot_seconds:.1f} s ({guest.accel}: {guest.accel_reason})")
            for key, dev in sorted(guest.devices.items()):
                print(f"  {key:32} {dev}")
            if into is not None:
                capture(guest, into)
        except VMError as exc:
            print(f"vm: {exc}", file=sys.stderr)
            return 1
        finally:
            guest.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
