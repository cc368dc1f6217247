"""`ssdlab info` on each namespace and the SATA disk names what nvme-cli, smartctl and the kernel say the device is."""

from __future__ import annotations

import json
import re
from typing import Any

import machine
import pytest
from vmlab import Lab


def _info(lab: Lab, dev: str) -> dict[str, Any]:
    run = lab.ssdlab("info", dev, "--json")
    assert run.rc == 0, run.res.describe()
    doc: dict[str, Any] = json.loads(run.res.stdout)
    return doc


def _kernel(lab: Lab, dev: str) -> tuple[int, int, int]:
    """(bytes, logical, physical block size) as the kernel reports them."""
    name = dev.rsplit("/", 1)[-1]
    size = int(lab.tool("blockdev", "--getsize64", dev))
    return (size, int(lab.sysfs(f"/sys/block/{name}/queue/logical_block_size")),
            int(lab.sysfs(f"/sys/block/{name}/queue/physical_block_size")))


@pytest.mark.parametrize(("nsid", "lba"), [(1, 512), (2, 4096)])
def test_info_names_what_nvme_cli_reports_for_each_namespace(lab: Lab, nsid: int, lba: int) -> None:
    dev = lab.ns(nsid)
    ctrl = lab.json("nvme", "id-ctrl", lab.ctrl_a, "--output-format=json")
    ns = lab.json("nvme", "id-ns", dev, "--output-format=json")
    index = ns["flbas"] & 0xF
    ds, ms = 1 << ns["lbafs"][index]["ds"], ns["lbafs"][index]["ms"]
    assert ds == lba  # the namespace is formatted as the VM defines it
    size, logical, physical = _kernel(lab, dev)
    info = _info(lab, dev)

    ident = info["identity"]
    assert ident["model"] == ctrl["mn"].strip() == "QEMU NVMe Ctrl"
    assert ident["serial"] == ctrl["sn"].strip() == machine.CTRL_A.serial
    assert ident["firmware"] == ctrl["fr"].strip()
    assert info["capacity_bytes"] == size == ns["nsze"] * ds
    assert (info["logical_block_size"], info["physical_block_size"]) == (logical, physical) == (lba, lba)
    drive = info["drive"]["drive"]  # the line from the drive's own tool
    assert drive.startswith(f"{ctrl['mn'].strip()}, serial {ctrl['sn'].strip()}, firmware {ctrl['fr'].strip()}, ")
    assert f"{ns['nsze'] * ds:,} bytes" in drive
    assert f"LBA format {index}: {ds} B data + {ms} B metadata" in drive
    assert drive.endswith("(nvme-cli)")


def test_info_names_what_smartctl_and_the_kernel_report_for_the_sata_disk(lab: Lab) -> None:
    dev = lab.sata
    smart = lab.json("smartctl", "--json", "--xall", dev, ok=tuple(range(0, 256, 4)))
    size, logical, physical = _kernel(lab, dev)
    info = _info(lab, dev)

    ident = info["identity"]
    assert ident["model"] == smart["model_name"] == machine.SATA.model
    assert ident["serial"] == smart["serial_number"] == machine.SATA.serial  # VPD page 80h, not the WWID
    assert ident["firmware"] == smart["firmware_version"]
    assert info["capacity_bytes"] == size == smart["user_capacity"]["bytes"]
    assert (info["logical_block_size"], info["physical_block_size"]) == (logical, physical) == (
        smart["logical_block_size"], smart["physical_block_size"])
    drive = info["drive"]["drive"]
    assert drive.startswith(f"{smart['model_name']}, serial {smart['serial_number']}, "
                            f"firmware {smart['firmware_version']}, {smart['user_capacity']['bytes']:,} bytes")
    assert f"sectors {smart['logical_block_size']} B logical, {smart['physical_block_size']} B physical" in drive
    version = ".".join(str(v) for v in smart["smartctl"]["version"])
    assert drive.endswith(f"(smartctl {version})")
    speed = lab.sysfs(_ata_link(lab, dev) + "/sata_spd")  # e.g. "1.5 Gbps"
    gbps = re.match(r"([\d.]+) Gbps", speed)
    assert gbps, speed
    assert info["drive"]["interface"].startswith(f"SATA {float(gbps.group(1)):g} Gb/s")


def _ata_link(lab: Lab, dev: str) -> str:
    """The ata_link directory in sysfs of a SATA disk (libata)."""
    real = lab.tool("readlink", "-f", f"/sys/block/{dev.rsplit('/', 1)[-1]}").strip()
    port = re.search(r"/(ata\d+)/", real)
    assert port, real
    found = lab.tool("sh", "-c", f"ls -d /sys/class/ata_link/link{port.group(1)[3:]}").strip()
    return found


@pytest.mark.parametrize("ctrl", [machine.CTRL_A, machine.CTRL_B])
def test_info_on_a_controller_names_its_namespaces(lab: Lab, ctrl: machine.Controller) -> None:
    """The controller's character device (/dev/nvme0) is not a target: the one error line names the namespaces
    nvme-cli lists for that controller (a subsystem's namespaces for controller A, its own for B)."""
    node = lab.dev(f"ctrl:{ctrl.serial}")
    listed = lab.json("nvme", "list", "--output-format=json")["Devices"]
    namespaces = sorted((d["DevicePath"] for d in listed if d["SerialNumber"] == ctrl.serial),
                        key=lambda p: [int(n) for n in re.findall(r"\d+", p)])
    assert len(namespaces) == len(ctrl.namespaces)
    run = lab.ssdlab("info", node)
    assert run.rc == 3, run.res.describe()
    assert run.error_lines() == [f"ssdlab: error: {node} is not a block device but NVMe controller "
                                 f"{node.rsplit('/', 1)[-1]}: name one of its namespaces: {', '.join(namespaces)}"]
    assert "Traceback" not in run.res.stderr
