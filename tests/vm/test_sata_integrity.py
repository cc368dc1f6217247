"""quick on the AHCI SATA disk (smartctl's path), and integrity with verify on a 4 KiB-formatted namespace whose
data is then changed behind the host's back (in QEMU's backing image): `ssdlab verify` finds exactly that block."""

from __future__ import annotations

import re

import machine
from test_quick_nvme import _panel
from vmlab import Lab

MiB = 1024**2


def test_quick_on_the_sata_disk(lab: Lab) -> None:
    dev = lab.sata
    smart = lab.json("smartctl", "--json", "--xall", dev, ok=tuple(range(0, 256, 4)))
    run = lab.ssdlab("run", "quick", "--target", dev, "--capacity", "16MiB", "--runtime", "1", "--yes",
                     "--no-report", out="quick-sata")
    assert run.rc == 0, run.res.describe()
    assert "verdict: complete (exit code 0)" in run.res.stderr
    snap = run.run_json()["health"]["devices"][0]["snapshots"][0]
    assert snap["kind"] == "ata"
    assert snap["tool"].startswith("smartctl")
    assert run.out is not None
    page = lab.report(run)
    panel = " ".join(_panel(page, "Drive identity").split())
    for value in (smart["model_name"], smart["serial_number"], smart["firmware_version"]):
        assert value in panel
    assert f"{smart['user_capacity']['bytes']:,} bytes" in panel
    cache = lab.sysfs(f"/sys/block/{dev.rsplit('/', 1)[-1]}/device/scsi_disk/"
                      + lab.tool("ls", f"/sys/block/{dev.rsplit('/', 1)[-1]}/device/scsi_disk").strip()
                      + "/cache_type")
    assert ("write cache enabled" if cache.startswith("write back") else "write cache disabled") in panel
    speed = re.match(r"([\d.]+) Gbps", lab.tool("sh", "-c", "cat /sys/class/ata_link/link*/sata_spd").strip())
    assert speed
    link = " ".join(_panel(page, "Interface limit").split())
    assert f"trained at SATA {float(speed.group(1)):g} Gb/s" in link
    # QEMU's disk keeps no Device Statistics log: no byte counter, and the report says so instead of a number
    assert "ata_device_statistics" not in smart
    assert "Logical Sectors Written" not in page


def test_integrity_with_verify_finds_a_block_changed_on_the_medium(lab: Lab) -> None:
    dev = lab.ns(2)
    run = lab.ssdlab("run", "integrity", "--target", dev, "--capacity", "8MiB", "--yes", "--no-report",
                     out="integrity")
    assert run.rc == 0, run.res.describe()
    assert run.out is not None
    guest_dir = "/run/ssdlab-runs/integrity"
    first = lab.ssdlab("verify", "--no-report", guest_dir)
    assert first.rc == 0, first.res.describe()
    # change one byte of the namespace's medium, 5 MiB + 100 into it, where the guest cannot see it coming
    image = lab.vm.shared.parent / "images" / f"ns{machine.CTRL_A.serial.rsplit('-', 1)[-1].lower()}2.img"
    offset = 5 * MiB + 100
    with image.open("r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0xFF]))
    second = lab.ssdlab("verify", "--no-report", guest_dir)
    assert second.rc == 1, second.res.describe()
    block = offset - offset % 4096  # the 4 KiB block (the namespace's LBA size and the verify block) holding it
    bad = [ln.strip() for ln in second.res.stderr.splitlines() if ln.strip().startswith("offset ")]
    assert len(bad) == 1, second.res.describe()  # exactly that block, nothing else
    assert bad[0].startswith(f"offset {block}: "), second.res.describe()
