"""Interface limits: the arithmetic for PCIe 3/4/5, SATA and SAS, and probing fake sysfs trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakedrive import nvme_tree, sata_tree, write
from ssdlab.targets import link

GB = 1e9


@pytest.mark.parametrize(("gts", "width", "after_encoding"), [
    (2.5, 1, 0.25 * GB),  # Gen1: 8b/10b
    (5.0, 4, 2.0 * GB),  # Gen2 x4: 8b/10b
    (8.0, 4, 8 * 128 / 130 / 8 * 4 * GB),  # Gen3 x4: 128b/130b, 3.938 GB/s
    (16.0, 4, 16 * 128 / 130 / 8 * 4 * GB),  # Gen4 x4: 7.877 GB/s
    (32.0, 4, 32 * 128 / 130 / 8 * 4 * GB),  # Gen5 x4: 15.754 GB/s
])
def test_pcie_line_rate_after_encoding(gts: float, width: int, after_encoding: float) -> None:
    assert link.pcie_line_rate(gts, width) == pytest.approx(after_encoding)


def test_pcie_usable_bandwidth_subtracts_tlp_overhead() -> None:
    assert link.pcie_line_rate(8.0, 4) == pytest.approx(3.938461538e9)
    assert link.pcie_usable(8.0, 4, 256) == pytest.approx(3.938461538e9 * 256 / 280)  # 3.60 GB/s
    assert link.pcie_usable(16.0, 4, 512) == pytest.approx(7.876923077e9 * 512 / 536)  # 7.52 GB/s
    assert link.pcie_usable(32.0, 4, 256) == pytest.approx(15.753846154e9 * 256 / 280)  # 14.40 GB/s
    assert link.pcie_usable(16.0, 4, None) == link.pcie_line_rate(16.0, 4)  # MPS unknown: encoding only


def test_the_pe321_anchor_is_99_percent_of_pcie_4_x4_at_512_byte_payloads() -> None:
    """The PE321 review (a seed article): 7.46 GB/s sequential read, called PCIe 4.0 x4's ceiling."""
    lnk = {"available": True, "label": "PCIe 4.0 x4", "usable_bytes_per_s": link.pcie_usable(16.0, 4, 512)}
    assert link.fraction(7.46e9, lnk) == pytest.approx(0.9915, abs=1e-3)
    assert link.fraction_text(7.46e9, lnk) == "99 % of PCIe 4.0 x4"
    assert link.fraction_text(7.46e9, {"available": False}) == ""


def test_sata_and_sas_arithmetic() -> None:
    assert link.sata_line_rate(6.0) == pytest.approx(600e6)
    assert link.sata_usable(6.0) == pytest.approx(600e6 * 8192 / 8208 * 256 / 258)  # 594 MB/s
    assert link.sata_usable(3.0) == pytest.approx(300e6 * 8192 / 8208 * 256 / 258)
    assert link.sas_usable(12.0) == pytest.approx(1.2e9 * 1024 / 1060)
    assert link.sas_usable(12.0, 4) == pytest.approx(4 * 1.2e9 * 1024 / 1060)
    assert link.sas_line_rate(22.5) == pytest.approx(2.4e9)  # 24G SAS: 128b/150b
    assert link.sas_label(22.5, 1) == "24G SAS"


def test_probe_nvme_behind_a_pcie_4_x4_link(tmp_path: Path) -> None:
    found = link.probe(nvme_tree(tmp_path))
    assert found["available"] is True
    assert found["kind"] == "pcie"
    assert found["label"] == "PCIe 4.0 x4"
    assert found["max_payload_bytes"] == 512
    assert found["usable_bytes_per_s"] == pytest.approx(link.pcie_usable(16.0, 4, 512))
    assert "below_max" not in found


def test_a_link_trained_below_its_maximum_is_reported(tmp_path: Path) -> None:
    found = link.probe(nvme_tree(tmp_path, speed="8.0 GT/s PCIe", width=2, port_speed="8.0 GT/s PCIe"))
    assert found["label"] == "PCIe 3.0 x2"
    assert found["max_label"] == "PCIe 4.0 x4"
    assert "below the device's maximum PCIe 4.0 x4 (speed and width)" in found["below_max"]
    assert "the port above it supports at most PCIe 3.0 x4" in found["below_max"]


def test_without_root_the_payload_size_is_unknown_and_said_so(tmp_path: Path) -> None:
    found = link.probe(nvme_tree(tmp_path, mps=None))  # non-root: only the first 64 config bytes are readable
    assert "max_payload_bytes" not in found
    assert found["usable_bytes_per_s"] == pytest.approx(link.pcie_line_rate(16.0, 4))
    assert "not subtracted" in found["model"]


def test_older_kernels_print_speeds_without_the_suffix(tmp_path: Path) -> None:
    found = link.probe(nvme_tree(tmp_path, speed="8 GT/s", max_speed="8 GT/s", port_speed="8 GT/s"))
    assert found["label"] == "PCIe 3.0 x4"


def test_unknown_or_unmodelled_links_are_not_available(tmp_path: Path) -> None:
    assert link.probe(nvme_tree(tmp_path / "a", speed="Unknown"))["available"] is False
    gen6 = link.probe(nvme_tree(tmp_path / "b", speed="64.0 GT/s PCIe"))
    assert gen6["available"] is False
    assert "does not cover" in gen6["reason"]


def test_probe_sata_link_from_libata(tmp_path: Path) -> None:
    found = link.probe(sata_tree(tmp_path, spd="3.0 Gbps", hw="6.0 Gbps"))
    assert found["kind"] == "sata"
    assert found["label"] == "SATA 3 Gb/s"
    assert found["usable_bytes_per_s"] == pytest.approx(link.sata_usable(3.0))
    assert "below its maximum SATA 6 Gb/s" in found["below_max"]
    assert link.probe(sata_tree(tmp_path / "ok"))["label"] == "SATA 6 Gb/s"


def test_probe_sas_wide_port(tmp_path: Path) -> None:
    host = tmp_path / "devices" / "pci0000:00" / "0000:02:00.0" / "host0"
    port = host / "port-0:0"
    for phy in ("phy-0:0", "phy-0:1"):
        cls = host / phy / "sas_phy" / phy
        write(cls / "negotiated_linkrate", "12.0 Gbit\n")
        write(cls / "maximum_linkrate_hw", "12.0 Gbit\n")
        port.mkdir(parents=True, exist_ok=True)
        (port / phy).symlink_to(f"../{phy}")
    disk = port / "end_device-0:0" / "target0:0:0" / "0:0:0:0" / "block" / "sdc"
    disk.mkdir(parents=True)
    found = link.probe(disk)
    assert found["label"] == "SAS 12 Gb/s x2"
    assert found["usable_bytes_per_s"] == pytest.approx(link.sas_usable(12.0, 2))


def test_virtual_devices_have_no_link(tmp_path: Path) -> None:
    loop = tmp_path / "devices" / "virtual" / "block" / "loop0"
    loop.mkdir(parents=True)
    found = link.probe(loop)
    assert found == {"available": False, "reason": "loop0 is a virtual block device (no physical link)"}
    assert link.probe(None)["available"] is False


def test_max_payload_size_walks_the_capability_list(tmp_path: Path) -> None:
    from fakedrive import pcie_config

    for mps in (128, 256, 512, 1024):
        assert link.max_payload_size(write(tmp_path / f"c{mps}", pcie_config(mps))) == mps
    looped = bytearray(pcie_config(256))
    looped[0x71] = 0x40  # the PCIe capability points back to the first one: a corrupt list ends, not hangs
    looped[0x70] = 0x05
    assert link.max_payload_size(write(tmp_path / "loop", bytes(looped))) is None
    assert link.max_payload_size(tmp_path / "missing") is None


def test_qemu_emulated_controller_shows_its_link_but_no_share_of_it(tmp_path: Path) -> None:
    """QEMU's NVMe controller (PCI 1b36:0010) reports a 2.5 GT/s x1 link in sysfs while moving ~1 GB/s (seen in
    the VM tier): the panel shows what sysfs reports and says it is emulated; no '405 % of PCIe 1.0 x1'."""
    ns = nvme_tree(tmp_path, speed="2.5 GT/s PCIe", width=1, max_speed="2.5 GT/s PCIe", max_width=1,
                   port_speed="8.0 GT/s PCIe", mps=128)
    pci = ns.parents[2]
    write(pci / "vendor", "0x1b36\n")
    write(pci / "device", "0x0010\n")
    found = link.probe(ns)
    assert found["label"] == "PCIe 1.0 x1"
    assert found["emulated"].startswith("QEMU emulates this device (PCI 0x1b36:0x0010)")
    assert link.fraction(850e6, found) is None
    assert link.fraction_text(850e6, found) == ""
    write(pci / "vendor", "0x144d\n")  # a real vendor (Samsung): a share again
    assert link.fraction(105e6, link.probe(ns)) == pytest.approx(105e6 / link.pcie_usable(2.5, 1, 128))


def test_a_multipath_namespace_finds_its_controllers_link(tmp_path: Path) -> None:
    """With an NVMe subsystem (CMIC multi-controller, as QEMU's nvme-subsys and dual-port drives have) the
    namespace's disk hangs off /sys/devices/virtual/nvme-subsystem/nvme-subsysN; its controllers link to their
    PCI functions."""
    ns = nvme_tree(tmp_path, speed="8.0 GT/s PCIe", max_speed="8.0 GT/s PCIe")
    ctrl = ns.parent  # .../0000:01:00.0/nvme/nvme0
    subsys = tmp_path / "devices" / "virtual" / "nvme-subsystem" / "nvme-subsys0"
    head = subsys / "nvme0n1"
    head.mkdir(parents=True)
    (subsys / "nvme0").symlink_to(ctrl)
    write(ctrl / "state", "live\n")
    (ctrl / "device").symlink_to(ctrl.parent.parent)
    found = link.probe(head)
    assert found["label"] == "PCIe 3.0 x4"
    from ssdlab.targets import drivecli, health

    assert drivecli.nvme_controller_of(head) == "/dev/nvme0"
    assert drivecli.nvme_controller_of(ns) == "/dev/nvme0"
    # the head is named after the subsystem, the controller after its own instance: they need not agree
    other = tmp_path / "devices" / "virtual" / "nvme-subsystem" / "nvme-subsys2"
    (other / "nvme2n1").mkdir(parents=True)
    (other / "nvme5").symlink_to(ctrl)
    assert drivecli.nvme_controller_of(other / "nvme2n1") == "/dev/nvme5"
    dev = health.Device(path="/dev/nvme2n1", sysdir=other / "nvme2n1", kind="nvme", name="nvme2n1")
    assert dev.controller == "/dev/nvme5"  # not the /dev/nvme2 the name suggests


def test_a_multipath_namespace_is_answered_by_a_live_controller(tmp_path: Path) -> None:
    """A dual-port subsystem whose lower-numbered controller is resetting or gone: the namespace's SMART log and
    features are asked of a controller that is live, not of the first one the subsystem lists."""
    from ssdlab.targets import drivecli

    subsys = tmp_path / "devices" / "virtual" / "nvme-subsystem" / "nvme-subsys0"
    head = subsys / "nvme0n1"
    head.mkdir(parents=True)
    for name, state in (("nvme0", "resetting"), ("nvme3", "live"), ("nvme11", "live"), ("nvme2", "dead")):
        ctrl = tmp_path / "devices" / "pci0000:00" / f"port-{name}" / "nvme" / name
        write(ctrl / "state", f"{state}\n")
        (subsys / name).symlink_to(ctrl)
    assert drivecli.nvme_controller_of(head) == "/dev/nvme3"  # numeric order: nvme3 before nvme11
    write(subsys / "nvme3" / "state", "connecting\n")
    assert drivecli.nvme_controller_of(head) == "/dev/nvme11"
    write(subsys / "nvme11" / "state", "deleting\n")
    assert drivecli.nvme_controller_of(head) is None  # no controller can answer: none is named
    # a partition of the head: its disk's controller
    (head / "nvme0n1p1").mkdir()
    write(head / "nvme0n1p1" / "partition", "1\n")
    write(subsys / "nvme3" / "state", "live\n")
    assert drivecli.nvme_controller_of(head / "nvme0n1p1") == "/dev/nvme3"
