"""Whose bytes a drive's counters count: a namespace's own (id-ctrl LPA bit 0, as QEMU's controller keeps them) or
the whole controller's; the cross-check compares them with the bytes that went to exactly those devices, never
with the host ceiling's null-engine bytes. Found on the VM tier's two-namespace run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakedrive import FakeDrive, nvme_tree, sata_tree, write
from ssdlab.results.model import DirectionStats, Measurement, PartResult, PointResult, TestPoint, Workload
from ssdlab.targets import health

QEMU_ID_CTRL = "nvme-cli/id-ctrl-2.3-qemu-7.2.json"  # LPA 7: SMART log per namespace
SN730_ID_CTRL = "nvme-cli/id-ctrl-1.x-sn730-ironic.json"  # LPA 30: bit 0 clear, one log for the controller


def _written(n: int) -> Measurement:
    d = DirectionStats(iops=1.0, bw_bytes=1.0, io_bytes=n, total_ios=1, runtime_ms=1000)
    return Measurement(engine="fio", engine_version="3.33", directions={"write": d})


def _point(pid: str, m: Measurement, phase: str = "measure") -> PointResult:
    return PointResult(point=TestPoint(id=pid, label=pid, workload=Workload(rw="write", bs=4096), phase=phase),
                       status="ok", started="", finished="", measurement=m)


def test_the_host_ceiling_moves_no_byte_to_the_drive() -> None:
    points = [_point("host-ceiling", _written(7_000_000), phase="ceiling"), _point("p1", _written(4096))]
    assert health.bytes_moved(points) == (4096, 0)


def test_a_point_on_several_devices_counts_each_devices_part() -> None:
    both = Measurement(engine="fio", engine_version="3.33", directions=_written(3000).directions,
                       parts=(PartResult(host="", device="/dev/nvme0n1", measurement=_written(1000)),
                              PartResult(host="", device="/dev/nvme0n2", measurement=_written(2000)),
                              PartResult(host="", device="/dev/nvme1n1", status="failed", reason="x"),
                              # failed mid-point: what fio reported before the failure is not a result
                              PartResult(host="", device="/dev/nvme2n1", status="failed", reason="y",
                                         measurement=_written(5000))))
    points = [_point("p1", both)]
    assert health.bytes_moved(points) == (3000, 0)  # the aggregate
    assert health.bytes_moved(points, {"/dev/nvme0n1"}) == (1000, 0)
    assert health.bytes_moved(points, {"/dev/nvme0n1", "/dev/nvme0n2"}) == (3000, 0)
    assert health.bytes_moved(points, {"/dev/nvme1n1"}) == (0, 0)  # failed: nothing of it counts
    assert health.bytes_moved(points, {"/dev/nvme2n1"}) == (0, 0)


def _snap(path: str, units: int, scope: str, ctrl: str = "/dev/nvme0", when: str = "before") -> dict[str, Any]:
    return {"when": when, "device": path, "kind": "nvme", "available": True, "controller": ctrl,
            "counter_scope": scope, "health": {"bytes_written": units * 512_000, "bytes_read": 0}}


def _entry(path: str, before: int, after: int, scope: str) -> dict[str, Any]:
    return {"path": path, "kind": "nvme",
            "snapshots": [_snap(path, before, scope), _snap(path, after, scope, when="after")]}


def _two_namespace_point() -> PointResult:
    both = Measurement(engine="fio", engine_version="3.33", directions=_written(3 * 512_000).directions,
                       parts=(PartResult(host="", device="/dev/nvme0n1", measurement=_written(512_000)),
                              PartResult(host="", device="/dev/nvme0n2", measurement=_written(2 * 512_000))))
    return _point("p1", both)


def test_per_namespace_counters_are_checked_against_that_namespace_alone() -> None:
    entries = [_entry("/dev/nvme0n1", 10, 11, "namespace 1"), _entry("/dev/nvme0n2", 20, 22, "namespace 2")]
    points = [_two_namespace_point()]
    first = health.device_cross_check(points, entries[0], entries)
    second = health.device_cross_check(points, entries[1], entries)
    assert [(c["test_bytes"], c["drive_bytes"]) for c in first if c["direction"] == "written"] == [(512_000, 512_000)]
    assert [(c["test_bytes"], c["drive_bytes"]) for c in second if c["direction"] == "written"] == [
        (1_024_000, 1_024_000)]
    assert "covers" not in first[0]


def test_a_controller_wide_counter_is_checked_against_all_its_namespaces_in_the_run() -> None:
    entries = [_entry("/dev/nvme0n1", 10, 13, "controller"), _entry("/dev/nvme0n2", 10, 13, "controller"),
               {"path": "/dev/nvme1n1", "kind": "nvme",
                "snapshots": [_snap("/dev/nvme1n1", 0, "controller", "/dev/nvme1"),
                              _snap("/dev/nvme1n1", 0, "controller", "/dev/nvme1", when="after")]}]
    rows = health.device_cross_check([_two_namespace_point()], entries[0], entries)
    written = next(c for c in rows if c["direction"] == "written")
    assert (written["test_bytes"], written["drive_bytes"]) == (3 * 512_000, 3 * 512_000)
    assert written["covers"] == ["/dev/nvme0n1", "/dev/nvme0n2"]  # not /dev/nvme1n1: another controller


@pytest.mark.parametrize(("id_ctrl", "scope", "nsid_arg"), [
    (QEMU_ID_CTRL, "namespace 1", ["--namespace-id=1"]), (SN730_ID_CTRL, "controller", [])])
def test_the_snapshot_asks_for_the_namespaces_own_log_when_the_controller_keeps_one(
        tmp_path: Path, id_ctrl: str, scope: str, nsid_arg: list[str]) -> None:
    ns = nvme_tree(tmp_path)
    write(ns / "nsid", "1\n")
    drive = FakeDrive(answers={"id-ctrl": id_ctrl, "id-ns": "nvme-cli/id-ns-2.3-qemu-7.2-512.json",
                               "smart-log": "nvme-cli/smart-log-2.3-qemu-7.2-ns1.json"})
    dev = health.Device(path="/dev/nvme0n1", sysdir=ns, kind="nvme", name="nvme0n1")
    snap = health.Snapshotter(drive.tools()).snapshot(dev, "before")
    assert snap["counter_scope"] == scope
    assert snap["controller"] == "/dev/nvme0"
    smart_calls = [c for c in drive.calls if c[:2] == ["nvme", "smart-log"]]
    assert smart_calls == [["nvme", "smart-log", "/dev/nvme0", "--output-format=json", *nsid_arg]]
    assert snap["health"]["data_units_written"] == 17


def test_info_names_the_drive_as_its_tool_reports_it(tmp_path: Path) -> None:
    ns = nvme_tree(tmp_path)
    drive = FakeDrive(answers={"id-ctrl": QEMU_ID_CTRL, "id-ns": "nvme-cli/id-ns-2.3-qemu-7.2-4k.json",
                               "smart-log": "nvme-cli/smart-log-2.3-qemu-7.2.json"})
    snap = health.Snapshotter(drive.tools()).snapshot(
        health.Device(path="/dev/nvme0n2", sysdir=ns, kind="nvme", name="nvme0n2"), "now")
    assert health.identity_line(snap) == ("QEMU NVMe Ctrl, serial SSDLAB-NVME-A, firmware 7.2.22, 268,435,456 bytes "
                                          "(256 MiB), LBA format 4: 4096 B data + 0 B metadata (nvme-cli)")
    disk = sata_tree(tmp_path / "sata")
    sata = FakeDrive(answers={"smartctl": "smartctl/7.3-x-sata-qemu-7.2.json"}, installed=("smartctl",))
    snap = health.Snapshotter(sata.tools()).snapshot(
        health.Device(path="/dev/sdb", sysdir=disk, kind="ata", name="sdb"), "now")
    assert health.identity_line(snap) == ("SSDLAB-SATA-SSD, serial SSDLAB-SATA-1, firmware 2.5+, 268,435,456 bytes "
                                          "(256 MiB), sectors 512 B logical, 512 B physical (smartctl 7.3)")


def test_a_sata_disks_serial_comes_from_its_vpd_page_not_its_wwid(tmp_path: Path) -> None:
    from ssdlab.targets import sysfs

    disk = sata_tree(tmp_path)
    dev = disk / "device"
    write(dev / "wwid", "t10.ATA     SSDLAB-SATA-SSD                         SSDLAB-SATA-1\n")
    assert sysfs.identity(disk)["serial"].startswith("t10.ATA")  # no VPD page: the WWID, as before
    write(dev / "vpd_pg80", b"\x00\x80\x00\x14SSDLAB-SATA-1       ")  # as QEMU's disk answers (VM tier)
    assert sysfs.identity(disk)["serial"] == "SSDLAB-SATA-1"
    # the page's length byte (3) bounds the serial: what follows it is not part of it
    write(dev / "vpd_pg80", b"\x00\x80\x00\x08S3Z9NB0K\x00\x00JUNK")
    assert sysfs.identity(disk)["serial"] == "S3Z9NB0K"
    # another page in the file (its code, byte 1, is not 80h) or a truncated header: not a serial, the WWID stands
    write(dev / "vpd_pg80", b"\x00\x83\x00\x08S3Z9NB0K")
    assert sysfs.identity(disk)["serial"].startswith("t10.ATA")
    write(dev / "vpd_pg80", b"\x00\x80")
    assert sysfs.identity(disk)["serial"].startswith("t10.ATA")


def test_an_emulated_link_gets_no_share_column() -> None:
    from ssdlab.report import health as report_health
    from ssdlab.results.model import SCHEMA_VERSION, Run

    lnk: dict[str, Any] = {"available": True, "kind": "pcie", "label": "PCIe 1.0 x1", "usable_bytes_per_s": 2.1e8}

    def run_with(link: dict[str, Any]) -> Run:
        return Run(schema_version=SCHEMA_VERSION, ssdlab_version="0", run_id="x", suite="quick", status="complete",
                   created="", options={}, target={}, host={},
                   health={"available": True, "devices": [{"path": "/dev/nvme0n1", "snapshots": [{"link": link}]}]})

    assert report_health.link_of(run_with(lnk)) == lnk
    assert report_health.link_of(run_with({**lnk, "emulated": "QEMU emulates this device"})) is None
