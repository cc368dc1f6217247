"""NUMA placement: run each device's fio jobs on the CPUs of the NUMA node the device is attached to.

A device's node is the `numa_node` of the nearest device in its sysfs path (an NVMe namespace inherits its
controller's PCI function's node). Placement is fio's `cpus_allowed` (the node's CPU list, shared by the
device's jobs), which works in every fio build; `numa_cpu_nodes` needs fio built with libnuma.

No placement is made, and a note says why, when the host has a single NUMA node with CPUs, when the device
reports no node (numa_node -1, common in VMs and for virtual devices such as loop), or when the node has no CPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

NODE_ROOT = Path("/sys/devices/system/node")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def device_node(sysdir: Path | None, root: Path = Path("/sys/devices")) -> int | None:
    """NUMA node of a block device from sysfs: the first numa_node file walking up from the device towards
    `root` (None when no ancestor has one; -1 means the platform reports no node)."""
    if sysdir is None:
        return None
    here = sysdir.resolve()
    top = root.resolve()
    while here != here.parent and here.is_relative_to(top):
        text = _read(here / "numa_node") or _read(here / "device" / "numa_node")
        if text:
            try:
                return int(text)
            except ValueError:
                return None
        here = here.parent
    return None


def cpu_nodes(root: Path = NODE_ROOT) -> dict[int, str]:
    """NUMA node -> CPU list (as sysfs writes it, e.g. '0-15,32-47') of every node that has CPUs."""
    out: dict[int, str] = {}
    try:
        entries = sorted(root.glob("node[0-9]*"))
    except OSError:
        return out
    for d in entries:
        cpus = _read(d / "cpulist")
        if cpus:
            out[int(d.name[4:])] = cpus
    return out


@dataclass(frozen=True)
class Placement:
    """fio options that pin a device's jobs to its node's CPUs (empty: not pinned) and a note saying what."""

    options: dict[str, str]
    note: str
    node: int | None = None


def placement(device: str, node: int | None, nodes: dict[int, str]) -> Placement:
    """Where `device`'s jobs run, given its node and the host's CPU nodes."""
    if len(nodes) <= 1:
        why = "this host has one NUMA node" if nodes else "this host reports no NUMA node with CPUs"
        return Placement({}, f"{device}: not pinned ({why})", node)
    if node is None or node < 0:
        shown = "no numa_node in sysfs" if node is None else "numa_node -1"
        return Placement({}, f"{device}: not pinned ({shown}: the platform does not say which node it is "
                             "attached to)", node)
    cpus = nodes.get(node)
    if not cpus:
        return Placement({}, f"{device}: not pinned (NUMA node {node} has no CPUs)", node)
    return Placement({"cpus_allowed": cpus, "cpus_allowed_policy": "shared"},
                     f"{device}: jobs on NUMA node {node} (CPUs {cpus})", node)
