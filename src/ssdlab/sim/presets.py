"""Model parameters of the simulated SSD, the named presets, and `sim:PRESET?key=value` parsing.

Every parameter has a short key usable in the target string. Cell type (`cell`) selects default NAND
timings and energies; explicit `tr`/`tprog`/`tbers`/`e_*` keys override them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ssdlab.errors import UsageError
from ssdlab.units import format_bytes, parse_size

DEFAULT_PRESET = "tlc-4k"


@dataclass(frozen=True)
class Param:
    """One model parameter: key, unit/kind, meaning, allowed range."""

    key: str
    kind: str  # "size" | "float" | "int" | "choice"
    help: str
    lo: float = 0.0
    hi: float = float("inf")
    choices: tuple[str, ...] = ()


PARAMS: tuple[Param, ...] = (
    Param("capacity", "size", "user (host-visible) capacity", 64 * 1024**2, 64 * 1024**3),
    Param("op", "float", "over-provisioning in % of user capacity (spare usable by GC)", 1.0, 400.0),
    Param("iu", "size", "indirection (mapping) unit, 4-64 KiB", 4096, 65536),
    Param("page", "size", "NAND page size", 4096, 65536),
    Param("planes", "int", "planes per die (one multi-plane program writes planes x page)", 1, 8),
    Param("pages", "int", "pages per erase block (scaled down: a superblock spans all dies)", 1, 4096),
    Param("channels", "int", "channels", 1, 64),
    Param("dies", "int", "dies per channel", 1, 64),
    Param("cell", "choice", "cell type: sets default timings and energies", choices=("slc", "tlc", "qlc")),
    Param("tr", "float", "page read time tR, µs", 1.0, 10000.0),
    Param("tprog", "float", "page program time tPROG (multi-plane), µs", 10.0, 100000.0),
    Param("tbers", "float", "block erase time tBERS, µs", 100.0, 1000000.0),
    Param("block_pages", "int", "pages per real NAND block: erase time/energy are charged pro rata per "
                                "model block (pages/block_pages)", 1, 65536),
    Param("ch_mbps", "float", "channel transfer rate, MB/s", 50.0, 100000.0),
    Param("host_mbps", "float", "host interface (PCIe) rate, MB/s", 50.0, 100000.0),
    Param("fw_us", "float", "firmware latency per command, µs", 0.0, 10000.0),
    Param("ctrl_kiops", "float", "controller command ceiling, thousand commands/s (0: none)", 0.0, 100000.0),
    Param("slowpath_us", "float", "firmware slow path per IU-unaligned write, µs (S3500-style)", 0.0, 100000.0),
    Param("gc", "choice", "GC victim policy", choices=("greedy", "fifo")),
    Param("gc_free", "int", "GC runs while at most this many superblocks are free", 1, 64),
    Param("idle_gc", "float", "background GC while the host is idle: data relocated per second, MB/s (0: none)",
          0.0, 100000.0),
    Param("idle_gc_ms", "float", "host idle time before background GC starts, ms", 0.0, 600000.0),
    Param("idle_free", "float", "background GC refills the free pool up to this % of the spare superblocks",
          0.0, 100.0),
    Param("buffer", "size", "DRAM write buffer (power-loss protected)", 64 * 1024, 4 * 1024**3),
    Param("map_cache", "float", "fraction of the mapping table held in DRAM (1 = full map)", 0.0001, 1.0),
    Param("power", "float", "power cap in W averaged over window_s (0: uncapped)", 0.0, 1000.0),
    Param("idle_w", "float", "idle power, W", 0.0, 100.0),
    Param("window_s", "float", "power averaging window, s", 0.01, 600.0),
    Param("e_read_uj", "float", "energy per page read, µJ", 0.0, 100000.0),
    Param("e_prog_uj", "float", "energy per page programmed, µJ", 0.0, 100000.0),
    Param("e_erase_uj", "float", "energy per block erase (per plane), µJ", 0.0, 1000000.0),
    Param("e_io_uj", "float", "controller energy per command, µJ", 0.0, 100000.0),
    Param("layout", "int", "1: a new drive is written once sequentially before the first point "
                           "(as file targets are laid out); 0: start fresh-out-of-box", 0, 1),
    Param("seed", "int", "random seed (same seed, same results)", 0, 2**62),
)
PARAM_KEYS: tuple[str, ...] = tuple(p.key for p in PARAMS)
_BY_KEY: dict[str, Param] = {p.key: p for p in PARAMS}

# per cell type: tR, tPROG, tBERS (µs) and energies (µJ per page read / page program / plane-block erase)
CELL_DEFAULTS: dict[str, dict[str, float]] = {
    "slc": {"tr": 25.0, "tprog": 200.0, "tbers": 2000.0, "e_read_uj": 20.0, "e_prog_uj": 60.0,
            "e_erase_uj": 400.0},
    "tlc": {"tr": 60.0, "tprog": 600.0, "tbers": 3500.0, "e_read_uj": 40.0, "e_prog_uj": 200.0,
            "e_erase_uj": 1500.0},
    "qlc": {"tr": 120.0, "tprog": 2000.0, "tbers": 12000.0, "e_read_uj": 55.0, "e_prog_uj": 320.0,
            "e_erase_uj": 2500.0},
}

_COMMON: dict[str, Any] = {
    "page": 16384, "planes": 4, "ch_mbps": 1200.0, "host_mbps": 7000.0, "fw_us": 8.0, "ctrl_kiops": 1500.0,
    "slowpath_us": 0.0, "block_pages": 1024, "gc": "greedy", "gc_free": 2, "idle_gc": 50.0,
    "idle_gc_ms": 100.0, "idle_free": 100.0, "buffer": 16 * 1024**2,
    "map_cache": 1.0, "power": 0.0, "idle_w": 5.0, "window_s": 10.0, "e_io_uj": 2.0, "layout": 1, "seed": 1,
}


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str
    values: Mapping[str, Any]


def _presets(*rows: tuple[str, str | None, str, dict[str, Any]]) -> dict[str, Preset]:
    """Presets as (name, base preset or None, summary, values that differ from the base)."""
    out: dict[str, Preset] = {}
    for name, base, summary, changes in rows:
        out[name] = Preset(name, summary, {**(out[base].values if base else {}), **changes})
    return out


PRESETS: dict[str, Preset] = _presets(
    ("tlc-4k", None, "TLC, 4 KiB IU, 7% OP (read-intensive data-centre drive), 2 GiB",
     {"cell": "tlc", "capacity": 2 * 1024**3, "op": 7.0, "iu": 4096, "pages": 4, "channels": 4, "dies": 4}),
    ("tlc-4k-28", "tlc-4k", "TLC, 4 KiB IU, 28% OP (mixed-use drive), 2 GiB", {"op": 28.0}),
    ("qlc-4k", "tlc-4k", "QLC, 4 KiB IU, 14% OP (P5430-like), 4 GiB",
     {"cell": "qlc", "capacity": 4 * 1024**3, "op": 14.0, "channels": 8}),
    ("qlc-64k", "qlc-4k", "QLC, 64 KiB IU, 14% OP (P5316-like), 4 GiB", {"iu": 65536}),
    ("slc-4k", "tlc-4k", "SLC, 4 KiB IU, 28% OP (write-intensive), 1 GiB",
     {"cell": "slc", "capacity": 1024**3, "op": 28.0, "pages": 8, "dies": 2}),
)


def _convert(param: Param, text: str) -> Any:
    key = param.key
    if param.kind == "choice":
        value = text.strip().lower()
        if value not in param.choices:
            raise UsageError(f"sim parameter {key}={text!r}: use one of {', '.join(param.choices)}")
        return value
    try:
        if param.kind == "size":
            number: float = parse_size(text)
        elif param.kind == "int":
            number = int(text)
        else:
            number = float(text)
    except (ValueError, UsageError):
        raise UsageError(f"sim parameter {key}={text!r} is not a valid {param.kind}") from None
    if not param.lo <= number <= param.hi and not (key in ("ctrl_kiops", "power") and number == 0):
        raise UsageError(f"sim parameter {key}={text!r} outside {_shown(param, param.lo)}..{_shown(param, param.hi)}")
    return number


def _shown(param: Param, value: float) -> str:
    return format_bytes(value) if param.kind == "size" else f"{value:g}"


def resolve(preset: str, overrides: Mapping[str, str]) -> dict[str, Any]:
    """Full parameter set for `preset` with string `overrides` applied (UsageError on bad keys/values)."""
    name = preset or DEFAULT_PRESET
    if name not in PRESETS:
        raise UsageError(f"unknown sim preset {name!r}: use one of {', '.join(PRESETS)}")
    unknown = [k for k in overrides if k not in _BY_KEY]
    if unknown:
        raise UsageError(f"unknown sim parameter {', '.join(sorted(unknown))}: valid keys are "
                         f"{', '.join(PARAM_KEYS)}")
    values: dict[str, Any] = dict(_COMMON)
    values.update(PRESETS[name].values)
    given = {k: _convert(_BY_KEY[k], v) for k, v in overrides.items()}
    cell = str(given.get("cell", values["cell"]))
    values.update(CELL_DEFAULTS[cell])
    values.update(given)
    check(values)
    return values


def check(values: Mapping[str, Any]) -> None:
    """Cross-parameter rules the core relies on."""
    iu, page, planes = int(values["iu"]), int(values["page"]), int(values["planes"])
    if iu & (iu - 1) or page & (page - 1):
        raise UsageError(f"sim iu ({iu}) and page ({page}) must be powers of two")
    if (planes * page) % iu:
        raise UsageError(f"sim iu ({format_bytes(iu)}) must divide planes x page "
                         f"({planes} x {format_bytes(page)}); raise planes or page, or lower iu")
    if int(values["capacity"]) % iu:
        raise UsageError("sim capacity must be a multiple of the indirection unit")
    if float(values["power"]) and float(values["power"]) <= float(values["idle_w"]):
        raise UsageError(f"sim power cap {values['power']} W must exceed idle power {values['idle_w']} W")


def core_params(values: Mapping[str, Any]) -> dict[str, float]:
    """Numeric dict the native core reads (choices mapped to codes)."""
    out = {k: float(v) for k, v in values.items() if k not in ("cell", "gc")}
    out["gc_policy"] = 0.0 if values["gc"] == "greedy" else 1.0
    return out


def describe(values: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(key, value, meaning) rows for `ssdlab sim presets` and the report."""
    rows = []
    for p in PARAMS:
        v = values[p.key]
        text = format_bytes(v) if p.kind == "size" else (f"{v:g}" if isinstance(v, float) else str(v))
        rows.append((p.key, text, p.help))
    return rows


def param_converter(key: str) -> Callable[[str], Any]:
    """Converter for one key (used by tests and the validator)."""
    return lambda text: _convert(_BY_KEY[key], text)
