"""The nvme-cli and smartctl boundary: every argv for them is built here and every output of theirs parsed here.

It is to these two tools what `ssdlab/fio/` is to fio: nothing else in ssdlab composes their command lines or
reads what they print. Commands are argv lists (never a shell) run through a `Runner`, so tests substitute a
fake one. Parsers take the tools' output as captured from real devices (tests/data/health/README.md lists
where each capture came from) and never invent a field: a value the output does not carry is absent from the
result, never zero.

Key names differ between versions, and each alias below names the version it was seen in:
  nvme-cli smart-log   1.x/2.3 `critical_warning` is a number; 2.11 an object {"value": n, ...} (its -H
                       form in 2.3); counters are numbers, floats or numeric strings depending on the build.
  nvme-cli id-ctrl     1.x/2.3 power states carry `flags` (bit 0 max-power scale, bit 1 non-operational);
                       2.11 splits them into `max_power_scale` and `non-operational_state`.
  smartctl --json      NVMe health sits in `nvme_smart_health_information_log` (°C, `host_reads`,
                       `percentage_used`); ATA in `ata_smart_attributes` and, with --xall, the standard
                       `ata_device_statistics`; SCSI in `scsi_error_counter_log`.
Units: nvme-cli reports temperature in kelvin, smartctl in °C; an NVMe data unit is 1000 x 512 bytes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Runner = Callable[[list[str]], "subprocess.CompletedProcess[str]"]

NVME_DATA_UNIT_BYTES = 512_000  # NVMe SMART "data units": thousands of 512-byte units (rounded up)
KELVIN_OFFSET = 273
QUERY_TIMEOUT_S = 60.0
FEATURE_POWER_MANAGEMENT = 2
FEATURE_VOLATILE_WRITE_CACHE = 6
INSTALL_HINTS = {"nvme": "sudo apt-get install nvme-cli", "smartctl": "sudo apt-get install smartmontools"}


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=QUERY_TIMEOUT_S)


class ToolError(Exception):
    """A command could not run or failed; str() is one line saying which and why."""


@dataclass
class Tools:
    """How commands run and how tools are found; tests replace `TOOLS` (or pass their own) with fakes."""

    runner: Runner = _run
    which: Callable[[str], str | None] = shutil.which

    def has(self, tool: str) -> bool:
        return self.which(tool) is not None

    def text(self, argv: list[str], what: str, ok_codes: Sequence[int] = (0,)) -> str:
        return run_text(self.runner, argv, what, ok_codes)

    def json(self, argv: list[str], what: str, ok_codes: Sequence[int] = (0,)) -> dict[str, Any]:
        return load_json(self.text(argv, what, ok_codes), what)

    def feature(self, ctrl: str, fid: int) -> int | None:
        """The current value of NVMe feature `fid` on controller `ctrl` (None when nvme-cli printed none)."""
        return parse_feature_value(self.text(nvme_get_feature(ctrl, fid), f"nvme get-feature {fid}"))


TOOLS = Tools()


def missing_reason(tool: str) -> str:
    package = "nvme-cli" if tool == "nvme" else "smartmontools"
    return f"{tool} ({package}) is not installed ({INSTALL_HINTS.get(tool, 'install it')})"


_NVME_NS = re.compile(r"^nvme(\d+)n(\d+)$")


def nvme_controller(dev: str) -> str | None:
    """'/dev/nvme0' for a namespace node '/dev/nvme0n1' (None for partitions and other devices)."""
    m = _NVME_NS.match(dev.rsplit("/", 1)[-1])
    return f"/dev/nvme{m.group(1)}" if m else None


def nvme_controller_of(sysdir: Path) -> str | None:
    """The controller node of an NVMe namespace from its sysfs directory (a partition's: its disk's): the
    namespace's parent for a namespace of one controller (.../nvme/nvme1/nvme1n1), the first live controller its
    subsystem lists for a multipath namespace (.../nvme-subsystem/nvme-subsys0/nvme0n1 next to nvme0 -> the
    controller), whose number need not match the name. None when neither is found."""
    try:
        disk = sysdir.parent if (sysdir / "partition").exists() else sysdir
        parent = disk.resolve().parent
        if _NVME_CTRL.fullmatch(parent.name):
            return f"/dev/{parent.name}"
        if not parent.name.startswith("nvme-subsys"):
            return None
        ctrls = sorted((c for c in parent.iterdir() if _NVME_CTRL.fullmatch(c.name)), key=lambda c: int(c.name[4:]))
    except OSError:
        return None
    live = [c for c in ctrls if _state(c) in ("live", "")]
    return f"/dev/{live[0].name}" if live else None


_NVME_CTRL = re.compile(r"nvme\d+")


def _state(ctrl: Path) -> str:
    try:
        return (ctrl / "state").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def run_text(runner: Runner, argv: list[str], what: str, ok_codes: Sequence[int] = (0,)) -> str:
    """stdout of `argv`; ToolError with the tool's last stderr line when it cannot run or fails."""
    try:
        proc = runner(argv)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolError(f"{what}: cannot run {argv[0]} ({exc})") from exc
    if proc.returncode not in ok_codes:
        msg = (proc.stderr or proc.stdout or "").strip().splitlines()
        raise ToolError(f"{what}: `{' '.join(argv)}` exited {proc.returncode}" + (f": {msg[-1]}" if msg else ""))
    return proc.stdout or ""


def load_json(text: str, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolError(f"{what}: output is not JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(doc, dict):
        raise ToolError(f"{what}: output is not a JSON object")
    return doc


# ------------------------------------------------------------------ command lines

def nvme_id_ctrl(dev: str) -> list[str]:
    return ["nvme", "id-ctrl", dev, "--output-format=json"]


def nvme_id_ns(dev: str) -> list[str]:
    return ["nvme", "id-ns", dev, "--output-format=json"]


def nvme_smart_log(dev: str, nsid: int | None = None) -> list[str]:
    """The SMART / Health log: the controller's (all namespaces) or, with `nsid`, one namespace's counters (only
    when id-ctrl's LPA bit 0 says the controller keeps them per namespace: `parse_nvme_capabilities`)."""
    return ["nvme", "smart-log", dev, "--output-format=json", *([f"--namespace-id={nsid}"] if nsid else [])]


def nvme_get_feature(ctrl: str, fid: int) -> list[str]:
    """Current value of a feature; `ctrl` is the controller node (/dev/nvme0), so nvme-cli sends the
    controller-wide namespace id these features need."""
    return ["nvme", "get-feature", ctrl, "-f", str(fid)]


def nvme_set_feature(ctrl: str, fid: int, value: int) -> list[str]:
    """Set a feature for this power cycle only (no --save: a power cycle restores the drive's default)."""
    return ["nvme", "set-feature", ctrl, "-f", str(fid), "-v", str(value)]


def nvme_format(ns: str, ses: int) -> list[str]:
    return ["nvme", "format", ns, f"--ses={ses}", "--force"]


def nvme_sanitize(ctrl: str, sanact: int) -> list[str]:
    return ["nvme", "sanitize", ctrl, f"--sanact={sanact}"]


def nvme_sanitize_log(ctrl: str) -> list[str]:
    return ["nvme", "sanitize-log", ctrl, "--output-format=json"]


def smartctl_all(dev: str, *, ata: bool = False) -> list[str]:
    """Everything smartctl reports; ATA drives get --xall, which adds the standard Device Statistics log
    (logical sectors written/read) that --all leaves out."""
    return ["smartctl", "--json", "--xall" if ata else "--all", dev]


def smartctl_attributes(dev: str) -> list[str]:
    """The cheaper query used for temperature samples during a run (the attributes carry temperature)."""
    return ["smartctl", "--json", "--attributes", dev]


def smartctl_failed(doc: Mapping[str, Any]) -> str:
    """'' when smartctl answered; otherwise why. Exit-status bits 0-1 mean the command line or the device
    open failed; the higher bits report the disk's health and still come with a full answer."""
    status = _int(_get(doc, "smartctl", "exit_status"))
    if status is not None and status & 0x3:
        messages = _get(doc, "smartctl", "messages")
        text = ""
        if isinstance(messages, list) and messages and isinstance(messages[0], Mapping):
            text = str(messages[0].get("string", ""))
        return f"smartctl exit status {status}" + (f": {text}" if text else "")
    return ""


# ------------------------------------------------------------------ value helpers

def _get(doc: Any, *keys: str | int) -> Any:
    for key in keys:
        if isinstance(key, int):
            if not isinstance(doc, list) or not -len(doc) <= key < len(doc):
                return None
            doc = doc[key]
        else:
            if not isinstance(doc, Mapping):
                return None
            doc = doc.get(key)
    return doc


def _int(value: Any) -> int | None:
    """An integer from a JSON number, an integral float, or a numeric string ('1,234' too); None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value == int(value) else None
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        if re.fullmatch(r"-?\d+", text):
            return int(text)
        if re.fullmatch(r"-?\d+\.0*", text):
            return int(float(text))
    return None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip().replace(",", ""))
        except ValueError:
            return None
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


# ------------------------------------------------------------------ nvme-cli parsers

def parse_nvme_smart_log(doc: Mapping[str, Any]) -> dict[str, Any]:
    """`nvme smart-log -o json` -> the normalised health record (see module docstring for the aliases)."""
    out: dict[str, Any] = {}
    warning = doc.get("critical_warning", doc.get("critical_warrning"))  # the second: ocp-diag-autoval capture
    if isinstance(warning, Mapping):  # nvme-cli 2.11 (and 2.3 with -H)
        warning = warning.get("value")
    _put(out, "critical_warning", _int(warning))
    kelvin = _int(doc.get("temperature"))
    if kelvin is not None and kelvin > 0:
        out["temperature_c"] = kelvin - KELVIN_OFFSET
    sensors = [k - KELVIN_OFFSET for n in range(1, 9)
               if (k := _int(doc.get(f"temperature_sensor_{n}"))) is not None and k > 0]
    if sensors:
        out["temperature_sensors_c"] = sensors
    for key, src in (("available_spare_pct", "avail_spare"), ("available_spare_threshold_pct", "spare_thresh"),
                     ("percentage_used", "percent_used"), ("data_units_read", "data_units_read"),
                     ("data_units_written", "data_units_written"), ("host_read_commands", "host_read_commands"),
                     ("host_write_commands", "host_write_commands"), ("power_cycles", "power_cycles"),
                     ("power_on_hours", "power_on_hours"), ("unsafe_shutdowns", "unsafe_shutdowns"),
                     ("media_errors", "media_errors"), ("error_log_entries", "num_err_log_entries"),
                     ("warning_temp_minutes", "warning_temp_time"), ("critical_temp_minutes", "critical_comp_time"),
                     ("controller_busy_minutes", "controller_busy_time")):
        _put(out, key, _int(doc.get(src)))
    thermal: dict[str, Any] = {}
    for key, src in (("tmt1_transitions", "thm_temp1_trans_count"), ("tmt2_transitions", "thm_temp2_trans_count"),
                     ("tmt1_seconds", "thm_temp1_total_time"), ("tmt2_seconds", "thm_temp2_total_time")):
        _put(thermal, key, _int(doc.get(src)))
    if thermal:
        out["thermal_management"] = thermal
    _add_bytes(out)
    return out


def _add_bytes(health: dict[str, Any]) -> None:
    for unit_key, byte_key in (("data_units_read", "bytes_read"), ("data_units_written", "bytes_written")):
        if unit_key in health:
            health[byte_key] = health[unit_key] * NVME_DATA_UNIT_BYTES


def parse_nvme_id_ctrl(doc: Mapping[str, Any]) -> dict[str, Any]:
    """`nvme id-ctrl -o json` -> identity: model, serial, firmware, capacity, write cache, power states."""
    out: dict[str, Any] = {}
    _put(out, "model", _text(doc.get("mn")))
    _put(out, "serial", _text(doc.get("sn")))
    _put(out, "firmware", _text(doc.get("fr")))
    capacity = _int(doc.get("tnvmcap"))
    if capacity:  # 0: not reported (optional without namespace management; QEMU's controller prints "0")
        out["total_capacity_bytes"] = capacity
    vwc = _int(doc.get("vwc"))
    if vwc is not None:
        out["volatile_write_cache_present"] = bool(vwc & 1)
    for key, src in (("warning_temp_c", "wctemp"), ("critical_temp_c", "cctemp")):
        kelvin = _int(doc.get(src))
        if kelvin:
            out[key] = kelvin - KELVIN_OFFSET
    apsta = _int(doc.get("apsta"))
    if apsta is not None:
        out["apst_supported"] = bool(apsta & 1)
    states = doc.get("psds")
    if isinstance(states, list):
        out["power_states"] = [_power_state(i, ps) for i, ps in enumerate(states) if isinstance(ps, Mapping)]
    return out


def parse_nvme_capabilities(doc: Mapping[str, Any]) -> dict[str, bool]:
    """What an NVMe controller says it can do, from `nvme id-ctrl -o json` (NVMe Base Specification, Identify
    Controller): `format` OACS bit 1 (Format NVM); `sanitize_crypto`/`sanitize_block`/`sanitize_overwrite`
    SANICAP bits 0-2; `format_all_namespaces` FNA bit 0 (a format erases every namespace of the controller);
    `erase_all_namespaces` FNA bit 1 (a format's secure erase does); `namespace_smart` LPA bit 0 (the SMART log
    is kept per namespace). A field the output lacks reads as not offered."""
    oacs, sanicap = _int(doc.get("oacs")) or 0, _int(doc.get("sanicap")) or 0
    fna, lpa = _int(doc.get("fna")) or 0, _int(doc.get("lpa")) or 0
    return {"format": bool(oacs & 0x2), "sanitize_crypto": bool(sanicap & 0x1),
            "sanitize_block": bool(sanicap & 0x2), "sanitize_overwrite": bool(sanicap & 0x4),
            "format_all_namespaces": bool(fna & 0x1), "erase_all_namespaces": bool(fna & 0x2),
            "namespace_smart": bool(lpa & 0x1)}


def _power_state(index: int, ps: Mapping[str, Any]) -> dict[str, Any]:
    flags = _int(ps.get("flags"))
    if flags is not None:  # nvme-cli 1.x / 2.3
        scale, nonop = flags & 1, bool(flags & 2)
    else:  # nvme-cli 2.11
        scale, nonop = _int(ps.get("max_power_scale")) or 0, bool(_int(ps.get("non-operational_state")))
    out: dict[str, Any] = {"ps": index, "operational": not nonop}
    mp = _int(ps.get("max_power"))
    if mp is not None:
        out["max_power_w"] = round(mp * (0.0001 if scale else 0.01), 4)  # MXPS: 0.0001 W units, else 0.01 W
    _put(out, "entry_latency_us", _int(ps.get("entry_lat")))
    _put(out, "exit_latency_us", _int(ps.get("exit_lat")))
    return out


RELATIVE_PERFORMANCE = ("best", "better", "good", "degraded")


def parse_nvme_id_ns(doc: Mapping[str, Any]) -> dict[str, Any]:
    """`nvme id-ns -o json` -> size and the LBA format in use (flbas bits 3:0, plus bits 6:5 as the high
    bits when there are more than 16 formats)."""
    out: dict[str, Any] = {}
    formats = []
    lbafs = doc.get("lbafs")
    for i, f in enumerate(lbafs if isinstance(lbafs, list) else []):
        if not isinstance(f, Mapping):
            continue
        ds, ms, rp = _int(f.get("ds")), _int(f.get("ms")), _int(f.get("rp"))
        entry: dict[str, Any] = {"index": _int(f.get("lbaf")) if f.get("lbaf") is not None else i}
        if ds is not None and 0 < ds < 64:
            entry["data_bytes"] = 1 << ds
        _put(entry, "metadata_bytes", ms)
        if rp is not None and 0 <= rp < len(RELATIVE_PERFORMANCE):
            entry["relative_performance"] = RELATIVE_PERFORMANCE[rp]
        if f.get("in_use") is not None:  # nvme-cli after PR #2817 marks the format in use itself
            entry["in_use"] = bool(_int(f.get("in_use")))
        formats.append(entry)
    if formats:
        out["lba_formats"] = formats
    flbas = _int(doc.get("flbas"))
    in_use = next((f for f in formats if f.get("in_use")), None)
    if in_use is None and flbas is not None:
        nlbaf = _int(doc.get("nlbaf")) or 0
        index = (flbas & 0xF) | (((flbas >> 5) & 0x3) << 4 if nlbaf >= 16 else 0)
        in_use = next((f for f in formats if f["index"] == index), None)
    if in_use is not None:
        out["lba_format"] = in_use
    blocks = _int(doc.get("nsze"))
    _put(out, "namespace_blocks", blocks)
    if blocks is not None and in_use is not None and "data_bytes" in in_use:
        out["capacity_bytes"] = blocks * int(in_use["data_bytes"])
    return out


_FEATURE_VALUE = re.compile(r"[Cc]urrent value\s*:\s*(?:0x)?([0-9a-fA-F]+)")


def parse_feature_value(text: str) -> int | None:
    """The value in `nvme get-feature` output: 'get-feature:0x06 (Volatile Write Cache), Current value:0x00000001'.

    nvme-cli prints it with printf's %#x, which writes a zero without the 0x prefix ('Current value:00000000'),
    so the digits are hexadecimal either way."""
    m = _FEATURE_VALUE.search(text)
    return int(m.group(1), 16) if m else None


# ------------------------------------------------------------------ smartctl parsers

def parse_smartctl(doc: Mapping[str, Any]) -> dict[str, Any]:
    """`smartctl --json --all|--xall` -> {"protocol", "identity": {...}, "health": {...}, "interface": {...}}."""
    protocol = str(_get(doc, "device", "protocol") or "")
    identity: dict[str, Any] = {}
    _put(identity, "model", _text(doc.get("model_name")) or _text(doc.get("scsi_model_name")))
    _put(identity, "vendor", _text(doc.get("scsi_vendor")))
    _put(identity, "serial", _text(doc.get("serial_number")))
    _put(identity, "firmware", _text(doc.get("firmware_version")) or _text(doc.get("scsi_revision")))
    _put(identity, "capacity_bytes", _int(_get(doc, "user_capacity", "bytes")))
    _put(identity, "logical_block_size", _int(doc.get("logical_block_size")))
    _put(identity, "physical_block_size", _int(doc.get("physical_block_size")))
    rotation = _int(doc.get("rotation_rate"))
    if rotation is not None:
        identity["rotation"] = "solid state" if rotation == 0 else f"{rotation} rpm"
    _put(identity, "form_factor", _text(_get(doc, "form_factor", "name")))
    _put(identity, "sata_version", _text(_get(doc, "sata_version", "string")))
    _put(identity, "transport", _text(_get(doc, "scsi_transport_protocol", "name")))
    lba = _int(_get(doc, "nvme_namespaces", 0, "formatted_lba_size"))
    if lba is not None:
        identity["lba_format"] = {"data_bytes": lba}
    wc = _get(doc, "write_cache", "enabled")  # ATA, with --xall
    health: dict[str, Any] = {}
    passed = _get(doc, "smart_status", "passed")
    if isinstance(passed, bool):
        health["smart_passed"] = passed
    _put(health, "temperature_c", _int(_get(doc, "temperature", "current")))
    _put(health, "power_on_hours", _int(_get(doc, "power_on_time", "hours")))
    _put(health, "power_cycles", _int(doc.get("power_cycle_count")))
    if protocol == "NVMe":
        health.update(_smartctl_nvme(doc))
    elif protocol == "ATA":
        health.update(_smartctl_ata(doc))
    elif protocol == "SCSI":
        health.update(_smartctl_scsi(doc))
    interface: dict[str, Any] = {}
    for which in ("current", "max"):
        speed = _get(doc, "interface_speed", which)
        units, bits = _int(_get(speed, "units_per_second")), _int(_get(speed, "bits_per_unit"))
        if units is not None and bits is not None:
            interface[f"{which}_gbps"] = units * bits / 1e9
            interface[f"{which}_text"] = _text(_get(speed, "string")) or ""
    out: dict[str, Any] = {"protocol": protocol, "identity": identity, "health": health}
    if interface:
        out["interface"] = interface
    if isinstance(wc, bool):
        out["write_cache"] = "enabled" if wc else "disabled"
    version = _get(doc, "smartctl", "version")
    if isinstance(version, list) and all(isinstance(v, int) for v in version):
        out["tool_version"] = "smartctl " + ".".join(str(v) for v in version)
    return out


def _smartctl_nvme(doc: Mapping[str, Any]) -> dict[str, Any]:
    log = doc.get("nvme_smart_health_information_log")
    if not isinstance(log, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key, src in (("critical_warning", "critical_warning"), ("available_spare_pct", "available_spare"),
                     ("available_spare_threshold_pct", "available_spare_threshold"),
                     ("percentage_used", "percentage_used"), ("data_units_read", "data_units_read"),
                     ("data_units_written", "data_units_written"), ("host_read_commands", "host_reads"),
                     ("host_write_commands", "host_writes"), ("power_cycles", "power_cycles"),
                     ("power_on_hours", "power_on_hours"), ("unsafe_shutdowns", "unsafe_shutdowns"),
                     ("media_errors", "media_errors"), ("error_log_entries", "num_err_log_entries"),
                     ("warning_temp_minutes", "warning_temp_time"), ("critical_temp_minutes", "critical_comp_time"),
                     ("controller_busy_minutes", "controller_busy_time")):
        _put(out, key, _int(log.get(src)))
    _put(out, "temperature_c", _int(log.get("temperature")))  # smartctl already converts to °C
    _add_bytes(out)
    return out


# ATA attributes by the names smartctl's drive database gives them; raw units of 241/242 are vendor-specific
_ATA_COUNTERS = {"Reallocated_Sector_Ct": "reallocated_sectors", "Reported_Uncorrect": "reported_uncorrectable",
                 "Uncorrectable_Error_Cnt": "reported_uncorrectable",
                 "Total_LBAs_Written": "attr241_total_lbas_written_raw",
                 "Total_LBAs_Read": "attr242_total_lbas_read_raw"}
# ATA Device Statistics (standard log 04h, units defined by ACS): name -> key
_ATA_STATS = {"Logical Sectors Written": "logical_sectors_written", "Logical Sectors Read": "logical_sectors_read",
              "Number of Reported Uncorrectable Errors": "reported_uncorrectable",
              "Percentage Used Endurance Indicator": "percentage_used"}


def _smartctl_ata(doc: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    table = _get(doc, "ata_smart_attributes", "table")
    for attr in table if isinstance(table, list) else []:
        if isinstance(attr, Mapping) and attr.get("name") in _ATA_COUNTERS:
            _put(out, _ATA_COUNTERS[str(attr["name"])], _int(_get(attr, "raw", "value")))
    pages = _get(doc, "ata_device_statistics", "pages")
    for page in pages if isinstance(pages, list) else []:
        rows = page.get("table") if isinstance(page, Mapping) else None
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, Mapping) and row.get("name") in _ATA_STATS and _get(row, "flags", "valid") is not False:
                _put(out, _ATA_STATS[str(row["name"])], _int(row.get("value")))
    sector = _int(doc.get("logical_block_size"))
    if sector:
        for count_key, byte_key in (("logical_sectors_written", "bytes_written"),
                                    ("logical_sectors_read", "bytes_read")):
            if count_key in out:
                out[byte_key] = out[count_key] * sector
    if "reported_uncorrectable" in out:
        out["media_errors"] = out["reported_uncorrectable"]
    return out


def _smartctl_scsi(doc: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    log = doc.get("scsi_error_counter_log")
    uncorrected = 0
    seen = False
    for direction in ("read", "write", "verify"):
        entry = _get(log, direction)
        errors = _int(_get(entry, "total_uncorrected_errors"))
        if errors is not None:
            uncorrected, seen = uncorrected + errors, True
        gb = _float(_get(entry, "gigabytes_processed"))  # 10^9 bytes, printed with three decimals
        if gb is not None and direction in ("read", "write"):
            out["bytes_read" if direction == "read" else "bytes_written"] = round(gb * 1e9)
    if seen:
        out["media_errors"] = uncorrected
    _put(out, "grown_defects", _int(doc.get("scsi_grown_defect_list")))
    return out
