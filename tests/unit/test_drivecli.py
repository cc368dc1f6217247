"""nvme-cli and smartctl parsers against outputs captured from real drives (tests/data/health/README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ssdlab.targets import drivecli

DATA = Path(__file__).parent.parent / "data" / "health"


def load(name: str) -> Any:
    """A captured output, parsed as JSON."""
    return json.loads((DATA / name).read_text(encoding="utf-8"))


# ------------------------------------------------------------------ nvme smart-log

def test_smart_log_of_nvme_cli_2_3() -> None:
    h = drivecli.parse_nvme_smart_log(load("nvme-cli/smart-log-2.3-netdata.json"))
    assert h["temperature_c"] == 310 - 273  # nvme-cli prints kelvin
    assert h["critical_warning"] == 0
    assert h["percentage_used"] == 2
    assert h["media_errors"] == 0
    assert h["unsafe_shutdowns"] == 39
    assert h["data_units_written"] == 136157684
    assert h["bytes_written"] == 136157684 * 512_000  # NVMe data units are 1000 x 512 bytes
    assert h["bytes_read"] == 9898518 * 512_000
    assert h["power_on_hours"] == 4974
    assert h["thermal_management"] == {"tmt1_transitions": 0, "tmt2_transitions": 0, "tmt1_seconds": 0,
                                       "tmt2_seconds": 0}


def test_smart_log_of_nvme_cli_2_11_has_an_object_critical_warning_and_throttling() -> None:
    doc = load("nvme-cli/smart-log-2.11-netdata.json")
    assert isinstance(doc["critical_warning"], dict)  # the capture really has the 2.11 shape
    h = drivecli.parse_nvme_smart_log(doc)
    assert h["critical_warning"] == 0
    assert h["temperature_c"] == 324 - 273
    assert h["percentage_used"] == 30
    assert h["thermal_management"]["tmt1_transitions"] == 3
    assert h["thermal_management"]["tmt1_seconds"] == 1474
    assert h["error_log_entries"] == 212


def test_smart_log_with_the_misspelt_key_and_sensor_temperatures() -> None:
    h = drivecli.parse_nvme_smart_log(load("nvme-cli/smart-log-autoval.json"))
    assert h["critical_warning"] == 0  # read from "critical_warrning"
    assert h["temperature_sensors_c"] == [306 - 273]
    assert h["data_units_written"] == 47217872


def test_smart_log_never_invents_a_field() -> None:
    doc = load("nvme-cli/smart-log-2.3-netdata.json")
    del doc["media_errors"], doc["temperature"]
    h = drivecli.parse_nvme_smart_log(doc)
    assert "media_errors" not in h
    assert "temperature_c" not in h


@pytest.mark.parametrize(("value", "expected"), [(136157684, 136157684), (136157684.0, 136157684),
                                                 ("136157684", 136157684), ("1,234", 1234), (1.5, None),
                                                 (True, None), ("n/a", None)])
def test_counter_values_in_every_form_nvme_cli_prints(value: object, expected: int | None) -> None:
    h = drivecli.parse_nvme_smart_log({"data_units_written": value})
    assert h.get("data_units_written") == expected


# ------------------------------------------------------------------ nvme id-ctrl / id-ns / get-feature

def test_id_ctrl_of_a_drive_with_a_volatile_cache_and_idle_states() -> None:
    ident = drivecli.parse_nvme_id_ctrl(load("nvme-cli/id-ctrl-1.x-sn730-ironic.json"))
    assert ident["model"] == "WDC PC SN730 SDBQNTY-256G-1001"  # padding stripped
    assert ident["firmware"] == "11170101"
    assert ident["volatile_write_cache_present"] is True
    assert ident["warning_temp_c"] == 357 - 273
    states = ident["power_states"]
    assert [s["ps"] for s in states] == [0, 1, 2, 3, 4]
    assert [s["max_power_w"] for s in states] == [5.0, 3.5, 3.0, 0.07, 0.0035]  # PS3/4 use the 0.0001 W scale
    assert [s["operational"] for s in states] == [True, True, True, False, False]
    assert states[4]["exit_latency_us"] == 40000


def test_id_ctrl_of_a_drive_without_a_volatile_cache() -> None:
    ident = drivecli.parse_nvme_id_ctrl(load("nvme-cli/id-ctrl-1.x-pm983-autoval.json"))
    assert ident["volatile_write_cache_present"] is False
    assert ident["serial"] == "S43ANA0M405593"
    assert ident["total_capacity_bytes"] == 900185481216
    assert ident["power_states"] == [{"ps": 0, "operational": True, "max_power_w": 8.0, "entry_latency_us": 0,
                                      "exit_latency_us": 0}]


def test_id_ctrl_power_state_keys_of_nvme_cli_2_11() -> None:
    """No published 2.11 capture was found: the keys are the ones nvme-print-json.c (v2.11) writes."""
    ident = drivecli.parse_nvme_id_ctrl({"psds": [{"max_power": 35, "max_power_scale": 1,
                                                   "non-operational_state": 1}]})
    assert ident["power_states"] == [{"ps": 0, "operational": False, "max_power_w": 0.0035}]


def test_id_ns_lba_formats_as_captured() -> None:
    ns = drivecli.parse_nvme_id_ns({"lbafs": load("nvme-cli/id-ns-lbafs-issue2811.json")})
    formats = ns["lba_formats"]
    assert [(f["data_bytes"], f["metadata_bytes"]) for f in formats] == [(512, 0), (512, 8), (4096, 0), (4096, 8),
                                                                         (4096, 64)]
    assert [f["relative_performance"] for f in formats] == ["better", "degraded", "best", "good", "degraded"]
    assert "lba_format" not in ns  # the capture has no flbas: the format in use is not guessed


def test_id_ns_format_in_use_from_flbas() -> None:
    lbafs = load("nvme-cli/id-ns-lbafs-issue2811.json")
    ns = drivecli.parse_nvme_id_ns({"lbafs": lbafs, "flbas": 1, "nlbaf": 4, "nsze": 1000})
    assert ns["lba_format"]["index"] == 1
    assert ns["capacity_bytes"] == 1000 * 512
    # more than 16 formats: flbas bits 6:5 are the high bits of the index
    many = [{"ms": 0, "ds": 9, "rp": 0}] * 17 + [{"ms": 0, "ds": 12, "rp": 0}]
    assert drivecli.parse_nvme_id_ns({"lbafs": many, "flbas": 0x21, "nlbaf": 17})["lba_format"]["index"] == 17


@pytest.mark.parametrize(("text", "value"), [
    ("get-feature:0x06 (Volatile Write Cache), Current value:0x00000001", 1),
    ("get-feature:0x06 (Volatile Write Cache), Current value:00000000", 0),  # %#x prints zero without 0x
    ("get-feature:0xe (Timestamp), Current value:00000000\n", 0),  # as quoted by ocp-diag-autoval-ssd
    ("get-feature:0x02 (Power Management), Current value:0x00000023", 0x23),
    ("get-feature:0x02 (Power Management), Current value:00000010", 0x10),  # hex even without the prefix
    ("NVMe status: Invalid Field in Command", None),
])
def test_get_feature_values(text: str, value: int | None) -> None:
    assert drivecli.parse_feature_value(text) == value


def test_feature_command_lines_address_the_controller() -> None:
    assert drivecli.nvme_controller("/dev/nvme0n1") == "/dev/nvme0"
    assert drivecli.nvme_controller("/dev/nvme0n1p1") is None
    assert drivecli.nvme_set_feature("/dev/nvme0", 6, 0) == ["nvme", "set-feature", "/dev/nvme0", "-f", "6", "-v", "0"]
    assert drivecli.smartctl_all("/dev/sda", ata=True) == ["smartctl", "--json", "--xall", "/dev/sda"]


# ------------------------------------------------------------------ smartctl

def test_smartctl_nvme_is_already_celsius() -> None:
    p = drivecli.parse_smartctl(load("smartctl/7.3-nvme-firecuda530-netdata.json"))
    assert p["protocol"] == "NVMe"
    assert p["tool_version"] == "smartctl 7.3"
    assert p["identity"]["model"] == "Seagate FireCuda 530 ZP4000GM30023"
    assert p["identity"]["capacity_bytes"] == 4000787030016
    assert p["identity"]["lba_format"] == {"data_bytes": 512}
    h = p["health"]
    assert h["temperature_c"] == 39
    assert h["data_units_read"] == 52
    assert h["bytes_written"] == 0
    assert h["unsafe_shutdowns"] == 1
    assert h["smart_passed"] is True
    assert "thermal_management" not in h  # smartctl 7.3 does not print the transition counters


def test_smartctl_sata_ssd_without_device_statistics() -> None:
    p = drivecli.parse_smartctl(load("smartctl/7.3-sata-wd-sa500-netdata.json"))
    assert p["protocol"] == "ATA"
    h = p["health"]
    assert h["temperature_c"] == 27
    assert h["power_on_hours"] == 8244
    assert h["media_errors"] == 0
    assert h["attr241_total_lbas_written_raw"] == 173833  # vendor units: kept raw, never turned into bytes
    assert "bytes_written" not in h
    assert p["interface"]["current_gbps"] == pytest.approx(6.0)
    assert p["interface"]["max_text"] == "6.0 Gb/s"


def test_smartctl_xall_adds_the_standard_device_statistics() -> None:
    p = drivecli.parse_smartctl(load("smartctl/7.0-x-sata-samsung860-scrutiny.json"))
    h = p["health"]
    assert h["logical_sectors_written"] == 64777770148
    assert h["bytes_written"] == 64777770148 * 512
    assert h["bytes_read"] == 34909544344 * 512
    assert h["percentage_used"] == 19
    assert p["write_cache"] == "enabled"
    assert p["identity"]["rotation"] == "solid state"


def test_smartctl_sas_gigabytes_processed() -> None:
    p = drivecli.parse_smartctl(load("smartctl/7.3-sas-hgst-netdata.json"))
    assert p["protocol"] == "SCSI"
    assert p["identity"]["vendor"] == "HGST"
    assert p["identity"]["transport"] == "SAS (SPL-4)"
    h = p["health"]
    assert h["bytes_written"] == 2_811_293_000_000
    assert h["bytes_read"] == 36_537_378_000_000
    assert h["media_errors"] == 0
    assert h["temperature_c"] == 34


def test_smartctl_7_1_nvme() -> None:
    h = drivecli.parse_smartctl(load("smartctl/7.1-nvme-intel660p-scrutiny.json"))["health"]
    assert h["data_units_written"] == 7773431
    assert h["power_cycles"] == 266


def test_smartctl_failure_bits() -> None:
    assert drivecli.smartctl_failed(load("smartctl/7.3-sata-wd-sa500-netdata.json")) == ""
    failed = {"smartctl": {"exit_status": 2, "messages": [{"string": "Unable to detect device type",
                                                           "severity": "error"}]}}
    assert drivecli.smartctl_failed(failed) == "smartctl exit status 2: Unable to detect device type"
    assert drivecli.smartctl_failed({"smartctl": {"exit_status": 64}}) == ""  # a health bit, not a failure


# ------------------------------------------------------------------ QEMU's NVMe controller and AHCI disk (VM tier)
# Captured by `python tests/vm/machine.py --capture tests/data/health` from the devices the VM tier tests against
# (QEMU 7.2, nvme-cli 2.3, smartctl 7.3); tests/data/health/README.md.

QEMU = "nvme-cli/{}-2.3-qemu-7.2{}.json"


def test_qemu_id_ctrl_identity_and_what_the_controller_offers() -> None:
    doc = load(QEMU.format("id-ctrl", ""))
    ident = drivecli.parse_nvme_id_ctrl(doc)
    assert (ident["model"], ident["serial"], ident["firmware"]) == ("QEMU NVMe Ctrl", "SSDLAB-NVME-A", "7.2.22")
    assert doc["tnvmcap"] == "0"  # QEMU reports no total capacity: absent, never "0 bytes"
    assert "total_capacity_bytes" not in ident
    assert ident["volatile_write_cache_present"] is True
    assert ident["power_states"] == [{"ps": 0, "operational": True, "max_power_w": 25.0, "entry_latency_us": 16,
                                      "exit_latency_us": 4}]
    assert drivecli.parse_nvme_capabilities(doc) == {
        "format": True, "sanitize_crypto": False, "sanitize_block": False, "sanitize_overwrite": False,
        "format_all_namespaces": False, "erase_all_namespaces": False, "namespace_smart": True}


def test_capabilities_read_each_bit() -> None:
    caps = drivecli.parse_nvme_capabilities({"oacs": 0x8, "sanicap": 0x7, "fna": 0x3, "lpa": 0x2})
    assert caps == {"format": False, "sanitize_crypto": True, "sanitize_block": True, "sanitize_overwrite": True,
                    "format_all_namespaces": True, "erase_all_namespaces": True, "namespace_smart": False}
    assert not any(drivecli.parse_nvme_capabilities({}).values())  # nothing said: nothing offered


@pytest.mark.parametrize(("suffix", "index", "data"), [("-512", 0, 512), ("-4k", 4, 4096)])
def test_qemu_id_ns_formats_agree_with_nvme_list(suffix: str, index: int, data: int) -> None:
    ns = drivecli.parse_nvme_id_ns(load(QEMU.format("id-ns", suffix)))
    assert ns["lba_format"] == {"index": index, "data_bytes": data, "metadata_bytes": 0,
                                "relative_performance": "best"}
    assert len(ns["lba_formats"]) == 8  # 512 and 4096 B, each with 0, 8, 16 and 64 B of metadata
    # nvme-cli's own summary of the same namespace (its `list`, captured in the same session) agrees
    listed = [d for d in load(QEMU.format("list", ""))["Devices"]
              if d["SerialNumber"] == "SSDLAB-NVME-A" and d["SectorSize"] == data and d["PhysicalSize"] == 256 << 20]
    assert len(listed) == 1
    assert ns["capacity_bytes"] == listed[0]["PhysicalSize"]
    assert ns["namespace_blocks"] == listed[0]["MaximumLBA"]


def test_qemu_smart_log_counts_data_units_rounded_up() -> None:
    # the capture wrote 8 MiB (8,388,608 bytes = 16.4 units of 512,000) to namespace 1 after boot, nothing else
    per_ns = drivecli.parse_nvme_smart_log(load(QEMU.format("smart-log", "-ns1")))
    whole = drivecli.parse_nvme_smart_log(load(QEMU.format("smart-log", "")))
    assert per_ns["data_units_written"] == whole["data_units_written"] == -(-8 * 1024**2 // 512_000) == 17
    assert per_ns["temperature_c"] == 323 - 273
    assert whole["data_units_read"] >= per_ns["data_units_read"]  # the controller's count includes every namespace


def test_qemu_get_feature_lines() -> None:
    six = (DATA / "nvme-cli" / "get-feature-6-2.3-qemu-7.2.txt").read_text(encoding="utf-8")
    two = (DATA / "nvme-cli" / "get-feature-2-2.3-qemu-7.2.txt").read_text(encoding="utf-8")
    assert six.startswith("get-feature:0x06 (Volatile Write Cache), Current value:0x00000001")
    assert drivecli.parse_feature_value(six) == 1
    assert two.startswith("get-feature:0x02 (Power Management), Current value:00000000")  # zero: no 0x
    assert drivecli.parse_feature_value(two) == 0


def test_qemu_sata_disk_through_smartctl() -> None:
    doc = load("smartctl/7.3-x-sata-qemu-7.2.json")
    assert drivecli.smartctl_failed(doc) == ""  # exit status 4: a SMART log QEMU lacks, the answer stands
    parsed = drivecli.parse_smartctl(doc)
    assert parsed["protocol"] == "ATA"
    assert parsed["identity"] == {"model": "SSDLAB-SATA-SSD", "serial": "SSDLAB-SATA-1", "firmware": "2.5+",
                                  "capacity_bytes": 256 << 20, "logical_block_size": 512, "physical_block_size": 512,
                                  "rotation": "solid state"}
    assert parsed["write_cache"] == "enabled"
    assert parsed["health"]["temperature_c"] == 31
    assert "bytes_written" not in parsed["health"]  # no Device Statistics log: no byte counter, not a zero


def test_qemu_nvme_through_smartctl() -> None:
    parsed = drivecli.parse_smartctl(load("smartctl/7.3-nvme-qemu-7.2.json"))
    assert parsed["protocol"] == "NVMe"
    assert (parsed["identity"]["model"], parsed["identity"]["serial"]) == ("QEMU NVMe Ctrl", "SSDLAB-NVME-A")
    nvme = drivecli.parse_nvme_smart_log(load(QEMU.format("smart-log", "")))
    assert parsed["health"]["data_units_written"] == nvme["data_units_written"]
    assert parsed["health"]["temperature_c"] == nvme["temperature_c"]
