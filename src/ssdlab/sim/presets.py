"""Model parameters of the simulated SSD, the named presets, and `sim:PRESET?key=value` parsing.

Every parameter has a short key usable in the target string. Cell type (`cell`) selects default NAND
timings and energies; explicit `tr`/`tprog`/`tbers`/`e_*` keys override them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ssdlab.errors import UsageError
from ssdlab.units import format_bytes, parse_size

DEFAULT_PRESET = "p5430"


@dataclass(frozen=True)
class Param:
    """One model parameter: key, unit/kind, meaning, allowed range."""

    key: str
    kind: str  # "size" | "float" | "int" | "choice" | "times" (µs per page type: one value, or a/b/c...)
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
    Param("read_planes", "int", "planes of a die that read independently (1: one read at a time per die)", 1, 8),
    Param("pages", "int", "pages per erase block (scaled down: a superblock spans all dies)", 1, 4096),
    Param("channels", "int", "channels", 1, 64),
    Param("dies", "int", "dies per channel", 1, 64),
    Param("cell", "choice", "cell type: sets the page types and default timings and energies",
          choices=("slc", "mlc", "tlc", "qlc")),
    Param("tr", "times", "page read time tR per page type (LSB/CSB/MSB/TSB), µs", 1.0, 10000.0),
    Param("tprog", "times", "program time tPROG of a (multi-plane) page per page type, µs", 10.0, 100000.0),
    Param("tvar", "float", "variation of every NAND op time: standard deviation, % of its time", 0.0, 30.0),
    Param("drift", "float", "slow drift of the drive's speed (temperature, supply, link conditions): NAND ops, "
                            "channel and link transfers and command times scaled by one factor per 67 ms, "
                            "standard deviation %",
          0.0, 10.0),
    Param("tbers", "float", "block erase time tBERS, µs", 100.0, 1000000.0),
    Param("block_pages", "int", "pages per real NAND block: erase time/energy are charged pro rata per "
                                "model block (pages/block_pages)", 1, 65536),
    Param("ch_mbps", "float", "channel transfer rate, MB/s", 50.0, 100000.0),
    Param("host_mbps", "float", "host interface (PCIe) rate, MB/s", 50.0, 100000.0),
    Param("fw_us", "float", "firmware latency per command (mean), µs", 0.0, 10000.0),
    Param("fw_cv", "float", "firmware latency's coefficient of variation (log-normal), %", 0.0, 300.0),
    Param("ctrl_cores", "int", "controller cores: a command holds one for cores / ceiling of its firmware time "
                               "(so the ceiling holds on average)", 1, 64),
    Param("ctrl_be", "float", "share of a read command's controller time spent on its NAND back end (mapping "
                              "lookup, NAND command, ECC), skipped by a read the read-ahead fetched, %", 0.0, 100.0),
    Param("hk_hz", "float", "firmware housekeeping tasks per second (each takes a core; 0: none)", 0.0, 10000.0),
    Param("hk_us", "float", "mean length of a housekeeping task (exponential), µs", 0.0, 1000000.0),
    Param("cmd_us", "float", "per-command protocol latency (submission, completion, interrupt), µs", 0.0, 1000.0),
    Param("cmd_cv", "float", "completion path's coefficient of variation (log-normal), %", 0.0, 300.0),
    Param("link_cv", "float", "variation of every host-link transfer: standard deviation, % of its time", 0.0, 30.0),
    Param("cmd_bytes", "int", "host-link bytes per command besides its data (queue entries, packet headers)",
          0, 65536),
    Param("retry", "float", "reads that need read retry on a fresh drive, %", 0.0, 100.0),
    Param("retry_steps", "float", "extra sensing steps (each one more tR) of a retried read, mean", 1.0, 32.0),
    Param("rber_sd", "float", "spread of page reads' raw bit error rate: standard deviation of its logarithm",
          0.05, 3.0),
    Param("ecc_us", "float", "ECC decode time of a page at the hard-decision limit (it grows as the 4th power of "
                             "the error rate below it), µs", 0.0, 1000.0),
    Param("wear", "float", "P/E cycles used, fraction of the rated endurance (read retry grows with it)", 0.0, 1.0),
    Param("age", "float", "retention age of the data, days (read retry grows with it)", 0.0, 3650.0),
    Param("suspend", "int", "1: a read suspends the program/erase in progress on its die; 0: it waits for it", 0, 1),
    Param("susp_us", "float", "program/erase suspend latency: the longest a read waits for P/E work, µs",
          0.0, 10000.0),
    Param("resume_us", "float", "time a suspended program/erase loses when it resumes, µs", 0.0, 10000.0),
    Param("susp_max", "int", "suspensions of one program/erase at most (then reads wait for it; 0: no limit)",
          0, 1000),
    Param("susp_slice_us", "float", "the least time a resumed program/erase runs before a read may suspend it "
                                    "again, µs", 0.0, 100000.0),
    Param("ra_kib", "float", "read-ahead: how far the firmware reads ahead of a sequential stream of small reads, "
                             "KiB (0: none)", 0.0, 65536.0),
    Param("ctrl_kiops", "float", "controller command ceiling, thousand commands/s (0: none)", 0.0, 100000.0),
    Param("ctrl_w_kiops", "float", "controller ceiling for writes, thousand commands/s (0: ctrl_kiops)", 0.0, 100000.0),
    Param("slowpath_us", "float", "firmware slow path per IU-unaligned write: its latency, µs (S3500-style)",
          0.0, 100000.0),
    Param("slowpath_kiops", "float", "IU-unaligned writes the slow path handles at most, thousand/s (0: it holds "
                                     "the controller for its whole latency)", 0.0, 100000.0),
    Param("gc", "choice", "GC victim policy", choices=("greedy", "fifo")),
    Param("gc_free", "int", "GC runs whole victims before host writes while at most this many superblocks are free",
          1, 64),
    Param("gc_band", "int", "GC runs in steps between host writes while fewer than gc_free + 1 + gc_band "
                            "superblocks are free", 0, 64),
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
    Param("full_size", "size", "user capacity of the full-size drive the model stands for (0: none given)",
          0, 2**60),
    Param("time_scale", "float", "the drive's state moves this many times more slowly per second of host writes "
                                 "(time-based points) and of idle GC than the model's capacity makes it: 1 = the "
                                 "scaled drive's own pace; 0 = full_size / capacity, the full-size drive's pace",
          0.0, 1e7),
)
PARAM_KEYS: tuple[str, ...] = tuple(p.key for p in PARAMS)
_BY_KEY: dict[str, Param] = {p.key: p for p in PARAMS}

BITS: dict[str, int] = {"slc": 1, "mlc": 2, "tlc": 3, "qlc": 4}  # page types per word line

# per cell type: tR per page type, tPROG (one value: every page type alike), tBERS (µs) and energies (µJ per page
# read / page program / plane-block erase); docs/sim.md gives the sources
CELL_DEFAULTS: dict[str, dict[str, Any]] = {
    "slc": {"tr": (25.0,), "tprog": (200.0,), "tbers": 2000.0, "e_read_uj": 5.0, "e_prog_uj": 20.0,
            "e_erase_uj": 300.0},
    "mlc": {"tr": (48.0, 64.0), "tprog": (850.0, 2300.0), "tbers": 3000.0, "e_read_uj": 8.0, "e_prog_uj": 40.0,
            "e_erase_uj": 600.0},
    "tlc": {"tr": (42.0, 58.0, 80.0), "tprog": (600.0,), "tbers": 3500.0, "e_read_uj": 8.0, "e_prog_uj": 40.0,
            "e_erase_uj": 1000.0},
    "qlc": {"tr": (84.0, 108.0, 132.0, 156.0), "tprog": (2000.0,), "tbers": 12000.0, "e_read_uj": 10.0,
            "e_prog_uj": 108.0, "e_erase_uj": 2500.0},
}

# Form factors and their power envelopes (W): what a drive of that form draws at most, averaged over any load. U.2
# data-centre drives are 25 W class (the D5-P5316's 25 W maximum average active power); a 2.5-inch SATA drive's label
# rating (the DC S3500's 5 V x 1.44 A = 12 V x 0.6 A = 7.2 W, seed 002).
ENVELOPES: dict[str, float] = {"U.2": 25.0, "SATA 2.5-inch": 7.2}

_COMMON: dict[str, Any] = {
    "page": 16384, "planes": 4, "ch_mbps": 1200.0, "host_mbps": 7000.0, "fw_us": 8.0, "ctrl_kiops": 1500.0,
    "slowpath_us": 0.0, "slowpath_kiops": 0.0, "ctrl_w_kiops": 0.0, "block_pages": 1024, "gc": "greedy",
    "gc_free": 2, "gc_band": 4, "idle_gc": 50.0,
    "tvar": 5.0, "fw_cv": 50.0, "cmd_us": 2.0, "cmd_bytes": 120, "retry": 0.01, "retry_steps": 1.2, "wear": 0.0,
    "age": 0.0, "suspend": 1, "susp_us": 40.0, "resume_us": 10.0, "susp_max": 0, "read_planes": 4,
    "ctrl_cores": 4, "ctrl_be": 20.0, "hk_hz": 20.0, "hk_us": 2000.0, "cmd_cv": 50.0, "link_cv": 5.0,
    "rber_sd": 0.6, "ecc_us": 20.0, "drift": 1.0, "susp_slice_us": 100.0, "ra_kib": 256.0,
    "idle_gc_ms": 100.0, "idle_free": 100.0, "buffer": 16 * 1024**2,
    "map_cache": 1.0, "power": 0.0, "idle_w": 5.0, "window_s": 10.0, "e_io_uj": 2.0, "layout": 1, "seed": 1,
    "full_size": 0, "time_scale": 1.0,
}


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str
    values: Mapping[str, Any]


class Review(NamedTuple):
    """A calibrated preset's review and its `ssdlab sim validate` result as last measured (docs/sim.md gives the
    command and the date): the evidence rows (figures no parameter was set from, measured under the review's
    conditions), how many fail and the worst ratio of model to review among them."""

    source: str
    worst: float
    evidence: int
    failed: int


# what a sim: report and `ssdlab info` name (tests/unit/test_sim_reviews.py checks the evidence counts against the
# tables and re-measures the S3500's)
REVIEWS: dict[str, Review] = {
    "p5430": Review("seed 000: PCEVA's review of the Solidigm D5-P5430 15.36 TB (fio, ezFIO, VDBench; Chinese)",
                    0.90, 4, 0),
    "p5430-op": Review("seed 000: PCEVA's review of the Solidigm D5-P5430, re-provisioned to 12.75 TB", 1.12, 3, 0),
    "pe321": Review("seed 003: the YMTC PE321 6.4 TB review (fio 3.35, four corners, 7:3 vs queue depth; Chinese)",
                    0.10, 14, 4),
    "p5316": Review("seed 001: StorageReview's 24 x Solidigm D5-P5316 30.72 TB in a 2U server (Japanese)",
                    5.26, 3, 3),
    "s3500": Review("seed 002: CBSi's review of the Intel DC S3500 480 GB (Iometer; Chinese)", 2.61, 7, 5),
    "cm5-r": Review("seed 004: the Toshiba CD5 and CM5-R review (modified SNIA PTS with fio; Russian)", 0.13, 51, 35),
    "cd5": Review("seed 004: the Toshiba CD5 and CM5-R review (modified SNIA PTS with fio; Russian)", 0.13, 52, 39),
}


FORMS: dict[str, str] = {"s3500": "SATA 2.5-inch"}  # every other preset is a U.2 drive


def form_factor(name: str) -> tuple[str, float]:
    """The preset's form factor and its power envelope, W (ENVELOPES)."""
    form = FORMS.get(name, "U.2")
    return form, ENVELOPES[form]


def calibration(name: str) -> str:
    """One sentence on what the preset was calibrated against and how it measures (for reports and `ssdlab info`)."""
    if name not in REVIEWS:
        return (f"Preset {name} is a generic drive, not calibrated against a published review "
                "(the calibrated presets: " + ", ".join(REVIEWS) + ").")
    r = REVIEWS[name]
    return (f"Preset {name} is calibrated against {r.source}. `ssdlab sim validate` measures {r.evidence} of that "
            f"review's figures as evidence, under the review's conditions (its other figures set parameters): "
            f"{r.failed} fail; worst ratio of model to review {r.worst:.2f}.")


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
     {"cell": "qlc", "capacity": 4 * 1024**3, "op": 14.0, "channels": 4}),
    ("qlc-64k", "qlc-4k", "QLC, 64 KiB IU, 14% OP (P5316-like), 4 GiB", {"iu": 65536}),
    ("slc-4k", "tlc-4k", "SLC, 4 KiB IU, 28% OP (write-intensive), 1 GiB",
     {"cell": "slc", "capacity": 1024**3, "op": 28.0, "pages": 8, "dies": 2, "tvar": 10.0, "fw_cv": 80.0}),
    ("p5430", None, "Solidigm D5-P5430 15.36 TB (QLC, PCIe 4.0 x4, 4 KiB IU), scaled to 3 GiB (seed 000)",
     {"cell": "qlc", "capacity": 3 * 1024**3, "op": 14.5, "iu": 4096, "pages": 2, "channels": 16, "dies": 6,
      "read_planes": 2, "tr": (66.0, 80.0, 94.0, 108.0), "tprog": (2300.0,), "tbers": 12000.0, "power": 25.0,
      "idle_w": 6.1, "e_read_uj": 10.0, "e_prog_uj": 108.0, "e_io_uj": 2.6, "ctrl_kiops": 1100.0, "retry": 0.005,
      "susp_us": 60.0, "resume_us": 400.0, "gc_band": 2, "window_s": 1.0, "fw_cv": 80.0, "idle_gc": 10.0,
      "full_size": 15_360_000_000_000}),
    ("p5430-op", "p5430",
     "the D5-P5430 re-provisioned to 12.75 TB (the same NAND, 38% OP), scaled to 2.55 GiB (seed 000)",
     {"capacity": 2612 * 1024**2, "op": 37.9, "gc_band": 4, "full_size": 12_750_000_000_000}),
    ("pe321", None, "YMTC PE321 6.4 TB (TLC, 3 DWPD, PCIe 4.0 x4), scaled to 2 GiB (seed 003)",
     {"cell": "tlc", "capacity": 2 * 1024**3, "op": 28.0, "iu": 4096, "pages": 2, "channels": 8, "dies": 8,
      "read_planes": 4, "ch_mbps": 1600.0, "host_mbps": 7470.0, "ctrl_kiops": 2500.0, "page": 32768,
      "tprog": (1120.0,), "resume_us": 80.0, "idle_w": 5.0, "full_size": 6_400_000_000_000}),
    ("p5316", None, "Solidigm D5-P5316 30.72 TB (QLC, 64 KiB IU, PCIe 4.0 x4), scaled to 4 GiB (seed 001)",
     {"cell": "qlc", "capacity": 4 * 1024**3, "op": 12.0, "iu": 65536, "pages": 2, "channels": 16, "dies": 8,
      "read_planes": 2, "host_mbps": 7400.0, "ctrl_kiops": 900.0, "tprog": (2900.0,), "tbers": 15000.0,
      "buffer": 32 * 1024**2, "idle_w": 5.0, "power": 25.0, "full_size": 30_720_000_000_000}),
    ("s3500", None, "Intel DC S3500 480 GB (MLC, SATA 6 Gb/s, flat map in DRAM), scaled to 1 GiB (seed 002)",
     {"cell": "mlc", "capacity": 1024**3, "op": 15.0, "iu": 4096, "pages": 4, "planes": 2, "read_planes": 1,
      "channels": 8, "dies": 4, "ch_mbps": 400.0, "host_mbps": 572.0, "cmd_us": 10.0, "cmd_bytes": 64,
      "fw_us": 20.0, "ctrl_kiops": 93.0, "ctrl_w_kiops": 64.0, "slowpath_us": 100.0, "slowpath_kiops": 14.7,
      "suspend": 0, "buffer": 4 * 1024**2, "tvar": 10.0, "fw_cv": 60.0, "ctrl_cores": 1, "hk_hz": 300.0,
      "hk_us": 60.0, "idle_w": 0.6, "full_size": 480_000_000_000}),
    ("cm5-r", None, "Toshiba CM5-R 7.68 TB (TLC, 1 DWPD, PCIe 3.0 x4), scaled to 2 GiB (seed 004)",
     {"cell": "tlc", "capacity": 2 * 1024**3, "op": 7.0, "iu": 4096, "pages": 2, "channels": 8, "dies": 8,
      "read_planes": 2, "ch_mbps": 800.0, "host_mbps": 3500.0, "ctrl_kiops": 780.0, "tprog": (1380.0,),
      "idle_w": 5.0, "full_size": 7_680_000_000_000}),
    ("cd5", "cm5-r", "Toshiba CD5 7.68 TB (TLC, < 1 DWPD, PCIe 3.0 x4), scaled to 2 GiB (seed 004)",
     {"dies": 5, "op": 5.5, "ctrl_kiops": 560.0, "read_planes": 1}),
)


def _times(param: Param, text: str) -> tuple[float, ...]:
    """'60' or '42/58/80': µs per page type, each within the parameter's range."""
    try:
        values = tuple(float(v) for v in text.split("/"))
    except ValueError:
        raise UsageError(f"sim parameter {param.key}={text!r}: give µs per page type, e.g. 60 or 42/58/80") from None
    if not 1 <= len(values) <= 4 or not all(param.lo <= v <= param.hi for v in values):
        raise UsageError(f"sim parameter {param.key}={text!r}: 1 to 4 values (one per page type), each within "
                         f"{param.lo:g}..{param.hi:g} µs")
    return values


def _convert(param: Param, text: str) -> Any:
    key = param.key
    if param.kind == "times":
        return _times(param, text)
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


def _shown(param: Param, value: Any) -> str:
    if param.kind == "times":
        return "/".join(f"{v:g}" for v in value)
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
    own = PRESETS[name].values
    values: dict[str, Any] = {**_COMMON, **CELL_DEFAULTS[str(own["cell"])], **own}  # a preset's timings win
    given = {k: _convert(_BY_KEY[k], v) for k, v in overrides.items()}
    if given.get("cell", values["cell"]) != values["cell"]:  # another cell type: its default timings
        values.update(CELL_DEFAULTS[str(given["cell"])])
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
    if int(values["read_planes"]) > planes:
        raise UsageError(f"sim read_planes ({values['read_planes']}) cannot exceed planes ({planes})")
    if float(values["time_scale"]) == 0 and not int(values["full_size"]):
        raise UsageError("sim time_scale=0 (the full-size drive's pace) needs full_size (the full drive's capacity)")
    if 0 < float(values["time_scale"]) < 1:
        raise UsageError(f"sim time_scale {values['time_scale']:g}: give 1 or more (or 0: full_size / capacity)")
    bits = BITS[str(values["cell"])]
    for key in ("tr", "tprog"):
        if len(values[key]) not in (1, bits):
            raise UsageError(f"sim {key} gives {len(values[key])} page types; {values['cell']} has {bits}: give one "
                             f"value or {bits}")


def per_type(values: Mapping[str, Any], key: str) -> tuple[float, ...]:
    """tr or tprog per page type of the cell (one given value stands for every type)."""
    given = tuple(float(v) for v in values[key]) if isinstance(values[key], (tuple, list)) else (float(values[key]),)
    bits = BITS.get(str(values.get("cell", "tlc")), 1)
    return given * bits if len(given) == 1 else given


def mean_time(values: Mapping[str, Any], key: str) -> float:
    """The mean of tr or tprog over the page types, µs (old stored runs hold one number)."""
    v = values.get(key, 60.0 if key == "tr" else 600.0)
    return sum(v) / len(v) if isinstance(v, (tuple, list)) and v else float(v)


def retry_share(values: Mapping[str, Any]) -> float:
    """The share of reads that need read retry (0..1): `retry` on a fresh drive, x (1 + 9 wear) (ten times at the
    end of the rated endurance), x (1 + age / 30 days) (data written long ago drifts)."""
    share = float(values["retry"]) / 100.0 * (1.0 + 9.0 * float(values["wear"])) * (1.0 + float(values["age"]) / 30.0)
    return min(1.0, share)


def core_params(values: Mapping[str, Any]) -> dict[str, float]:
    """Numeric dict the native core reads (choices mapped to codes, times per page type spread out)."""
    out = {k: float(v) for k, v in values.items() if k not in ("cell", "gc", "tr", "tprog")}
    out["gc_policy"] = 0.0 if values["gc"] == "greedy" else 1.0
    out["bits"] = float(BITS[str(values["cell"])])
    for key in ("tr", "tprog"):
        for k, v in enumerate(per_type(values, key)):
            out[f"{key}{k}"] = v
    out["time_scale"] = time_scale(values)
    out["retry_p"] = share = retry_share(values)
    out["rber_m"], out["retry_lnr"] = rber_scale(share, float(values["rber_sd"]), float(values["retry_steps"]))
    return out


def time_scale(values: Mapping[str, Any]) -> float:
    """How many times more slowly the drive's state moves per second than the model's capacity makes it (>= 1):
    time_scale, or with 0 the full-size drive's capacity over the model's."""
    given = float(values.get("time_scale", 1.0))
    if given >= 1.0:
        return given
    full = int(values.get("full_size", 0))
    return max(1.0, full / int(values["capacity"])) if full else 1.0


def _upper(z: float) -> float:
    """P(Z >= z) of a standard normal."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _z_upper(p: float) -> float:
    """z with P(Z >= z) = p (0 < p < 1), by bisection."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _upper(mid) > p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def rber_scale(share: float, sd: float, steps: float) -> tuple[float, float]:
    """(m, L) of the read-retry model: a page read's raw bit error rate relative to the hard-decision limit is
    x = m · D, D log-normal of mean 1 whose logarithm has standard deviation sd, so that P(x >= 1) = share; a read
    with x >= 1 takes 1 + floor(ln x / L) extra sensing steps, L chosen so that their mean is `steps`. m = 0: no read
    needs retry (and none spends time decoding)."""
    if share <= 0:
        return 0.0, 1.0
    if share >= 1:
        share = 1 - 1e-12
    mu = -sd * _z_upper(share)  # mean of ln x
    m = math.exp(mu + sd * sd / 2)
    if steps <= 1.0:
        return m, 1e9

    def mean_steps(lnr: float) -> float:
        total, j = 1.0, 1
        while True:
            q = _upper((j * lnr - mu) / sd) / share
            total += q
            if q < 1e-12 or j > 10_000:
                return total
            j += 1

    lo, hi = 1e-6, 100.0  # mean_steps falls as L grows
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        if mean_steps(mid) > steps:
            lo = mid
        else:
            hi = mid
    return m, math.sqrt(lo * hi)


def mean_read_us(values: Mapping[str, Any], bs: int = 4096) -> float:
    """The mean latency of a QD1 random read of `bs` bytes as the model's parts add up, µs: the firmware time (at
    least the command's core time, cores / ceiling), the NAND read (tR over the page types; a retried read senses
    1 + k times and decodes at the limit k times, E[k] = retry_steps; a read below the limit decodes in
    ecc_us x x^4), the channel and host-link transfers and the completion path (cmd_us). Housekeeping, map-cache
    misses and queueing are not in it (at QD1 they are rare)."""
    cores = max(1, int(values["ctrl_cores"]))
    kiops = float(values["ctrl_kiops"])
    fw = max(float(values["fw_us"]), cores * 1000.0 / kiops if kiops > 0 else 0.0)
    share, sd, steps = retry_share(values), float(values["rber_sd"]), float(values["retry_steps"])
    ecc = float(values["ecc_us"])
    tr = mean_time(values, "tr")
    k = max(1.0, steps) if share > 0 else 0.0
    nand = tr * (1.0 + share * k) + ecc * share * k
    if share > 0:  # E[x^4; x < 1] for ln x ~ N(mu, sd^2), mu = ln m - sd^2 / 2
        m, _ = rber_scale(share, sd, steps)
        mu = math.log(m) - sd * sd / 2.0
        below = 1.0 - _upper((-mu - 4.0 * sd * sd) / sd) if sd > 0 else float(mu < 0)
        nand += ecc * math.exp(4.0 * mu + 8.0 * sd * sd) * below
    return (fw + nand + bs / float(values["ch_mbps"]) + (bs + int(values["cmd_bytes"])) / float(values["host_mbps"])
            + float(values["cmd_us"]))


def describe(values: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(key, value, meaning) rows for `ssdlab sim presets` and the report."""
    rows = []
    for p in PARAMS:
        v = values[p.key]
        text = _shown(p, v) if p.kind in ("size", "times") else (f"{v:g}" if isinstance(v, float) else str(v))
        rows.append((p.key, text, p.help))
    return rows


def param_converter(key: str) -> Callable[[str], Any]:
    """Converter for one key (used by tests and the validator)."""
    return lambda text: _convert(_BY_KEY[key], text)
