"""The SNIA report header's facts that a run cannot measure: test sponsor, auditor, revision, dates, and the
device and platform details the operator knows (`--pts-header FILE`, a TOML file).

    [report]
    sponsor = "Example Labs"        # test sponsor
    auditor = "J. Doe"
    revision = "1.0"                # report revision
    test_date = "2026-11-20"        # default: the run's start and end
    report_date = "2026-11-23"      # default: the day the run ended
    notes = "..."

    [device]                        # each value replaces what ssdlab read from the device
    manufacturer = "..."            # model, serial, firmware, capacity, nand_type, form_factor, interface

    [platform]                      # reference, motherboard, cpu, ram, os, hba, driver, software

The file is read when the run starts and its contents are stored with the run (the option's value), so
`ssdlab report` and `ssdlab resume` never need it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ssdlab.errors import UsageError

FIELDS: dict[str, tuple[str, ...]] = {
    "report": ("sponsor", "auditor", "revision", "test_date", "report_date", "notes"),
    "device": ("manufacturer", "model", "serial", "firmware", "capacity", "nand_type", "form_factor", "interface"),
    "platform": ("reference", "motherboard", "cpu", "ram", "os", "hba", "driver", "software"),
}


@dataclass(frozen=True)
class Header:
    """The operator's header facts, by section (only what the file gave)."""

    file: str
    report: Mapping[str, str]
    device: Mapping[str, str]
    platform: Mapping[str, str]


def parse(value: Any) -> Header | None:
    """The stored option value ({"file", "table"}, see suites.base.load_toml_option) as a Header; None when the
    option was not given. Unknown sections or keys, and values that are not text or numbers, are a
    UsageError naming them."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):  # PtsSettings keeps option values hashable
        value = _thaw(value)
    if not isinstance(value, Mapping) or not isinstance(value.get("table"), Mapping):
        raise UsageError("--pts-header: give the path of a TOML file")
    name = str(value.get("file", "--pts-header"))
    table = value["table"]
    unknown = [str(k) for k in table if k not in FIELDS]
    if unknown:
        raise UsageError(f"{name}: unknown section [{unknown[0]}]; use {', '.join(f'[{s}]' for s in FIELDS)}")
    sections: dict[str, dict[str, str]] = {}
    for section, keys in FIELDS.items():
        given = table.get(section, {})
        if not isinstance(given, Mapping):
            raise UsageError(f"{name}: [{section}] must be a table of key = \"value\" lines")
        bad = [str(k) for k in given if k not in keys]
        if bad:
            raise UsageError(f"{name}: unknown key {bad[0]!r} in [{section}]; use {', '.join(keys)}")
        out: dict[str, str] = {}
        for k, v in given.items():
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                raise UsageError(f"{name}: [{section}] {k} must be text or a number")
            text = str(v).strip()
            if text:
                out[str(k)] = text
        sections[section] = out
    return Header(file=name, report=sections["report"], device=sections["device"], platform=sections["platform"])


def _thaw(value: Any) -> Any:
    """Undo common._frozen: pairs back into a dict (a hashable option value as stored in PtsSettings)."""
    if isinstance(value, tuple) and all(isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str)
                                        for x in value):
        return {k: _thaw(v) for k, v in value}
    return value
