"""What an agent reports about its own host: every block device with its size, identity, NUMA node and the
same write hazards a local run checks (mounted, swap, held, signatures, partitions, read-only).

`ssdlab agent` rewrites this report every few seconds into its probe job file (fio/client.probe_job); a
controller reads it through fio itself (`fio --client --remote-config`) before a run, and again before writing
when its copy is older than targets/hosts.PROBE_MAX_AGE_S. Identity is looked up once per device (nvme-cli is
slow); hazards are checked on every refresh, because mounts and holders change at any time.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab import __version__
from ssdlab.errors import SsdlabError
from ssdlab.targets import numa, sysfs
from ssdlab.targets.base import TargetOptions
from ssdlab.targets.blockdev import BlockTarget

ALIAS_DIRS = (Path("/dev/disk/by-id"), Path("/dev/disk/by-path"), Path("/dev/disk/by-uuid"))


@dataclass
class Inspector:
    """Builds the agent's report; keeps identities between refreshes (they do not change while attached)."""

    interval_s: float = 2.0
    fio_version: str = ""
    block_root: Path = sysfs.SYS_BLOCK
    _identity: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)

    def host(self) -> dict[str, Any]:
        return {"written": time.time(), "interval_s": self.interval_s, "hostname": socket.gethostname(),
                "ssdlab_version": __version__, "fio_version": self.fio_version,
                "numa_nodes": {str(k): v for k, v in numa.cpu_nodes().items()}, "pid": os.getpid()}

    def devices(self) -> list[dict[str, Any]]:
        aliases = _aliases()
        out: list[dict[str, Any]] = []
        try:
            names = sorted(p.name for p in self.block_root.iterdir())
        except OSError:
            return out
        for name in names:
            path = f"/dev/{name}"
            if not Path(path).exists():
                continue
            out.append(self._device(path, [a for a, real in aliases.items() if real == path]))
        return out

    def _device(self, path: str, aliases: list[str]) -> dict[str, Any]:
        entry: dict[str, Any] = {"path": path, "kind": "block", "aliases": sorted(aliases)}
        try:
            t = BlockTarget.from_path(path, {}, TargetOptions())
        except SsdlabError as exc:  # unbound loop devices, unreadable nodes: listed, not usable
            entry["error"] = str(exc)
            return entry
        assert t.sysdir is not None
        key = (str(t.sysdir), t.full_size)
        ident = self._identity.get(key)
        if ident is None:
            ident = self._identity[key] = t.identity()
        lbs, pbs = sysfs.block_sizes(t.sysdir)
        entry.update({
            "size_bytes": t.full_size, "logical_block_size": lbs, "physical_block_size": pbs, "identity": ident,
            "numa_node": numa.device_node(t.sysdir),
            "hazards": [{"text": h.text, "blocking": h.blocking} for h in t.hazards()],
        })
        return entry

    def report(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        return self.host(), self.devices()


def _aliases() -> dict[str, str]:
    """/dev/disk/by-* link -> the device node it names."""
    out: dict[str, str] = {}
    for d in ALIAS_DIRS:
        try:
            links = list(d.iterdir())
        except OSError:
            continue
        for link in links:
            try:
                out[str(link)] = str(link.resolve())
            except OSError:
                continue
    return out
