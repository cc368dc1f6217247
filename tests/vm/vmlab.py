"""What the VM tier's tests use (the fixtures in conftest.py hand them out): `Lab`, ssdlab and the device tools in
the guest and reports rendered on the host, and `Run`, one ssdlab command's output and results directory.

A module of its own, not conftest.py: the default tier never imports this directory (pyproject's norecursedirs),
and a second module named conftest would shadow tests/conftest.py for `from conftest import ...`."""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import machine

GUEST_RUNS = "/run/ssdlab-runs"  # results are written on the guest's tmpfs (fsync over 9p is slow), then copied
GUEST_ENV = {
    "OPENBLAS_NUM_THREADS": "1",  # numpy's BLAS starts a thread per CPU at import: seconds under emulation
    "MPLCONFIGDIR": "/run/ssdlab-mpl",  # the guest's home is read-only; one font cache for the session
    "XDG_CACHE_HOME": "/run/ssdlab-cache",
    "COLUMNS": "200",
}
SSDLAB = str(machine.REPO / ".venv" / "bin" / "ssdlab")


@dataclass(frozen=True)
class Run:
    """One ssdlab command in the guest: what it printed and, when it made one, its results directory as the
    host sees it."""

    res: machine.Result
    out: Path | None

    @property
    def rc(self) -> int:
        return self.res.rc

    def run_json(self) -> dict[str, Any]:
        assert self.out is not None, self.res.describe()
        assert (self.out / "run.json").exists(), self.res.describe()
        doc: dict[str, Any] = json.loads((self.out / "run.json").read_text(encoding="utf-8"))
        return doc

    def error_lines(self) -> list[str]:
        return [ln for ln in self.res.err_lines if ln.startswith("ssdlab: error")]


class Lab:
    """ssdlab in the guest, the device tools beside it, and reports rendered on the host."""

    def __init__(self, vm: machine.Guest) -> None:
        self.vm = vm
        self.names: set[str] = set()
        self.pages: dict[Path, str] = {}

    def dev(self, key: str) -> str:
        """The /dev node of a device under test by the agent's name ('ns:SSDLAB-NVME-A:1', 'ata:...')."""
        return self.vm.devices[key]

    @property
    def ctrl_a(self) -> str:
        return self.dev(f"ctrl:{machine.CTRL_A.serial}")

    def ns(self, nsid: int, ctrl: machine.Controller = machine.CTRL_A) -> str:
        return self.dev(f"ns:{ctrl.serial}:{nsid}")

    @property
    def sata(self) -> str:
        return self.dev(f"ata:{machine.SATA.serial}")

    def ssdlab(self, *args: str, out: str | None = None, timeout: float = 600) -> Run:
        """`ssdlab ARGS` in the guest; with `out`, --out is a fresh directory on the guest's tmpfs, copied to the
        shared directory afterwards (the host path is Run.out, None when ssdlab made no directory)."""
        argv = [SSDLAB, *args]
        guest_out = f"{GUEST_RUNS}/{out}" if out else None
        if out:
            assert out not in self.names, f"two runs named {out}"
            self.names.add(out)
            argv += ["--out", f"{GUEST_RUNS}/{out}"]
        res = self.vm.run(argv, timeout=timeout, env=GUEST_ENV)
        host_out = None
        if out and guest_out:
            copy = self.vm.sh(f"test -d {shlex.quote(guest_out)} || exit 3; cp -a {shlex.quote(guest_out)} "
                              f"{shlex.quote(str(self.vm.shared))}/", timeout=120)
            assert copy.rc in (0, 3), copy.describe()
            host_out = self.vm.shared / out if copy.rc == 0 else None
        return Run(res, host_out)

    def tool(self, *argv: str, ok: tuple[int, ...] = (0,), timeout: float = 120) -> str:
        """A device tool's (nvme, smartctl, cat ...) stdout in the guest; fails the test when it exits otherwise."""
        res = self.vm.run(list(argv), timeout=timeout)
        assert res.rc in ok, res.describe()
        return res.stdout

    def json(self, *argv: str, ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.tool(*argv, ok=ok))
        return doc

    def sysfs(self, path: str) -> str:
        return self.tool("cat", path).strip()

    def report(self, run: Run) -> str:
        """report.html of a stored run, rendered on the host (renderers read only the stored run, so this is the
        page the guest would have written, without matplotlib under emulation). `ssdlab report` exits with the
        run's verdict, as the run did."""
        assert run.out is not None, run.res.describe()
        if run.out in self.pages:
            return self.pages[run.out]
        proc = subprocess.run([SSDLAB, "report", str(run.out)], capture_output=True, text=True, timeout=600,
                              check=False)
        assert proc.returncode == run.rc, proc.stderr
        assert proc.stdout.strip() == str(run.out / "report.html")
        self.pages[run.out] = (run.out / "report.html").read_text(encoding="utf-8")
        return self.pages[run.out]
