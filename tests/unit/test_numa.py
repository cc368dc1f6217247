"""NUMA placement: a device's node from sysfs, the host's CPU nodes, and when jobs are pinned."""

from __future__ import annotations

from pathlib import Path

from ssdlab.targets import numa


def _tree(tmp_path: Path) -> Path:
    """/sys/devices-like: a PCI function on node 1 with an NVMe namespace below it; a virtual device."""
    root = tmp_path / "devices"
    ns = root / "pci0000:80" / "0000:80:01.0" / "nvme" / "nvme1" / "nvme1n1"
    ns.mkdir(parents=True)
    (root / "pci0000:80" / "0000:80:01.0" / "numa_node").write_text("1\n")
    loop = root / "virtual" / "block" / "loop3"
    loop.mkdir(parents=True)
    vm = root / "pci0000:00" / "0000:00:02.0" / "block" / "vda"
    vm.mkdir(parents=True)
    (root / "pci0000:00" / "0000:00:02.0" / "numa_node").write_text("-1\n")
    return root


def test_device_node_is_inherited_from_the_nearest_ancestor(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert numa.device_node(root / "pci0000:80/0000:80:01.0/nvme/nvme1/nvme1n1", root) == 1
    assert numa.device_node(root / "virtual/block/loop3", root) is None
    assert numa.device_node(root / "pci0000:00/0000:00:02.0/block/vda", root) == -1
    assert numa.device_node(None) is None


def test_cpu_nodes_lists_nodes_with_cpus(tmp_path: Path) -> None:
    for n, cpus in ((0, "0-15,32-47"), (1, "16-31,48-63"), (2, "")):
        (tmp_path / f"node{n}").mkdir()
        (tmp_path / f"node{n}" / "cpulist").write_text(cpus + "\n")
    (tmp_path / "online").write_text("0-2\n")
    assert numa.cpu_nodes(tmp_path) == {0: "0-15,32-47", 1: "16-31,48-63"}


def test_placement_pins_only_when_it_means_something() -> None:
    two = {0: "0-15", 1: "16-31"}
    p = numa.placement("/dev/nvme1n1", 1, two)
    assert p.options == {"cpus_allowed": "16-31", "cpus_allowed_policy": "shared"}
    assert "node 1" in p.note
    assert numa.placement("/dev/nvme1n1", 1, {0: "0-1"}).options == {}
    assert "one NUMA node" in numa.placement("/dev/x", 0, {0: "0-1"}).note
    assert "numa_node -1" in numa.placement("/dev/vda", -1, two).note
    assert "no numa_node" in numa.placement("/dev/loop3", None, two).note
    assert numa.placement("/dev/x", 3, two).options == {}
