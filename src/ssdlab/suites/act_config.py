"""Aerospike ACT's storage configuration: its config-file keys, defaults, checks and derived rates.

The reference is aerospike/act (ACT 6.6): src/storage/cfg_storage.c (storage_configure parses the file,
check_configuration and derive_configuration check it and derive the rates), src/common/cfg.c (value
parsing) and src/common/hardware.c (num_cpus). The code here is ssdlab's own; the rules are ACT's, each
named where it is applied. Where ssdlab is stricter than ACT (it reads garbage numbers as 0 and any value
not starting with 'y' as "no"), the line that is refused says why.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import UsageError

READS_PER_DEVICE_1X = 2000
WRITES_PER_DEVICE_1X = 1000
SERVICE_THREADS_PER_CPU = 5  # cfg_storage.c check_configuration: service-threads 0 -> 5 * num_cpus()
MAX_LAG_S = 10  # cfg_storage.c g_scfg.max_lag_usec = 10 s; 0 means "never stop because of lag"
RBLOCK_SIZE = 16  # cfg_storage.c round_up_to_rblock: records are stored in 16-byte units
WBLOCK_SIZE = 8 * 1024 * 1024  # cfg_storage.c: largest record and largest large block
MAX_DEVICES = 128  # cfg_storage.h MAX_NUM_STORAGE_DEVICES
UINT32_MAX = 2**32 - 1  # cfg.c parse_uint32 refuses larger values
SPLIT_RESOLUTION = 1 << 20  # act_storage.c run_service: read-or-commit choice resolution

# ACT config-file key -> (ssdlab option key, value kind). Every key ACT's storage_configure accepts.
CONFIG_KEYS: dict[str, tuple[str, str]] = {
    "device-names": ("device_names", "names"),
    "file-size-mbytes": ("file_size_mbytes", "uint"),
    "service-threads": ("service_threads", "uint"),
    "test-duration-sec": ("duration", "uint"),
    "report-interval-sec": ("report_interval", "uint"),
    "microsecond-histograms": ("microsecond_histograms", "yesno"),
    "read-reqs-per-sec": ("read_reqs_per_sec", "uint"),
    "write-reqs-per-sec": ("write_reqs_per_sec", "uint"),
    "record-bytes": ("record_bytes", "uint"),
    "record-bytes-range-max": ("record_bytes_range_max", "uint"),
    "large-block-op-kbytes": ("large_block_kib", "uint"),
    "replication-factor": ("replication_factor", "uint"),
    "update-pct": ("update_pct", "uint"),
    "defrag-lwm-pct": ("defrag_lwm_pct", "uint"),
    "no-defrag-reads": ("no_defrag_reads", "yesno"),
    "compress-pct": ("compress_pct", "uint"),
    "disable-odsync": ("disable_odsync", "yesno"),
    "commit-to-device": ("commit_to_device", "yesno"),
    "tomb-raider": ("tomb_raider", "yesno"),
    "tomb-raider-sleep-usec": ("tomb_raider_sleep_usec", "uint"),
    "max-lag-sec": ("max_lag", "uint"),
}

_TOKEN_SPLIT = re.compile(r"[:\s]")
_NAME_SPLIT = re.compile(r"[,;\s]+")


def online_cpus(path: Path = Path("/sys/devices/system/cpu/online")) -> int:
    """CPUs the kernel has online, as ACT counts them (hardware.c num_cpus reads this list); os.cpu_count()
    when the list cannot be read."""
    try:
        text = path.read_text(encoding="ascii").strip()
        count = 0
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            count += (int(hi) - int(lo) + 1) if hi else 1
        if count > 0:
            return count
    except (OSError, ValueError):
        pass
    return os.cpu_count() or 1


def parse_config(text: str, where: str = "ACT config") -> dict[str, Any]:
    """An ACT storage config file (`name: value` per line, `#` starts a comment) as ssdlab option values.

    Like ACT, an unknown key is an error. Unlike ACT, an unreadable number or a yes/no value other than
    yes/no is an error too (ACT would read it as 0 or "no" without a word).
    """
    out: dict[str, Any] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = _TOKEN_SPLIT.split(line, maxsplit=1)
        key = parts[0]
        rest = parts[1].strip().lstrip(":").strip() if len(parts) > 1 else ""
        if key not in CONFIG_KEYS:
            raise UsageError(f"{where} line {no}: unknown ACT config item {key!r} (ACT refuses it too); "
                             f"known items: {', '.join(CONFIG_KEYS)}")
        option, kind = CONFIG_KEYS[key]
        if kind == "names":
            names = [n for n in _NAME_SPLIT.split(rest) if n]
            if not names:
                raise UsageError(f"{where} line {no}: {key} names no device")
            out[option] = out.get(option, []) + names
            continue
        value = rest.split()[0] if rest.split() else ""
        if kind == "yesno":
            if value not in ("yes", "no"):
                raise UsageError(f"{where} line {no}: {key} must be yes or no, not {value!r}")
            out[option] = value == "yes"
        else:
            if not value.isdigit():
                raise UsageError(f"{where} line {no}: {key} must be a whole number >= 0, not {value!r}")
            number = int(value)
            if number > UINT32_MAX:
                raise UsageError(f"{where} line {no}: {key} {number} overflows ACT's 32-bit value")
            out[option] = number
    if len(out.get("device_names", [])) > MAX_DEVICES:
        raise UsageError(f"{where}: more than {MAX_DEVICES} device names (ACT's limit)")
    return out


def read_config(path: str | Path) -> dict[str, Any]:
    """parse_config of a file, with one clear line when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read --act-config {path}: {exc.strerror or exc}") from None
    return parse_config(text, str(path))


def load_rates(load: float, devices: int = 1) -> tuple[int, int]:
    """(read-reqs-per-sec, write-reqs-per-sec) of an `Nx` load on `devices` devices: totals, ACT's 1x rates
    per device times N."""
    return round(READS_PER_DEVICE_1X * load * devices), round(WRITES_PER_DEVICE_1X * load * devices)


def round_up(value: int, unit: int) -> int:
    """`value` rounded up to a multiple of `unit`."""
    return -(-value // unit) * unit


@dataclass(frozen=True)
class ActConfig:
    """ACT's storage settings, resolved (config-file names in the comments; rates are totals over devices)."""

    read_reqs_per_s: int = READS_PER_DEVICE_1X  # read-reqs-per-sec
    write_reqs_per_s: int = WRITES_PER_DEVICE_1X  # write-reqs-per-sec
    devices: int = 1  # device-names (ssdlab: the --target devices)
    service_threads: int = 10  # service-threads (resolved: 5 x online CPUs when 0 / not given)
    record_bytes: int = 1536  # record-bytes
    record_bytes_range_max: int = 0  # record-bytes-range-max (0: every record is record-bytes)
    large_block_bytes: int = 128 * 1024  # large-block-op-kbytes
    replication_factor: int = 1  # replication-factor
    update_pct: int = 0  # update-pct
    defrag_lwm_pct: int = 50  # defrag-lwm-pct
    compress_pct: int = 100  # compress-pct
    no_defrag_reads: bool = False  # no-defrag-reads
    disable_odsync: bool = False  # disable-odsync
    commit_to_device: bool = False  # commit-to-device
    tomb_raider: bool = False  # tomb-raider
    tomb_raider_sleep_us: int = 0  # tomb-raider-sleep-usec (ACT's code default: 0)
    max_lag_s: int = MAX_LAG_S  # max-lag-sec (0: never stop)

    @classmethod
    def for_load(cls, load: float, devices: int = 1, **kwargs: Any) -> ActConfig:
        """The configuration of an `Nx` load on `devices` devices (rates are totals, as in ACT's file)."""
        reads, writes = load_rates(load, devices)
        return cls(read_reqs_per_s=reads, write_reqs_per_s=writes, devices=devices, **kwargs)

    def check(self) -> None:
        """ACT's check_configuration (cfg_storage.c), as usage errors, plus the cases ACT would divide by 0."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= UINT32_MAX:
                raise UsageError(f"--{_flag(f.name)} {value} is out of range: ACT takes 0 .. {UINT32_MAX}")
        if not 1 <= self.devices <= MAX_DEVICES:
            raise UsageError(f"ACT drives 1 to {MAX_DEVICES} devices, not {self.devices}")
        if self.service_threads < 1:
            raise UsageError("--service-threads must be at least 1")
        if not 1 <= self.record_bytes <= WBLOCK_SIZE:
            raise UsageError(f"--record-bytes {self.record_bytes} must be 1 .. {WBLOCK_SIZE} (ACT's limit)")
        rmx = self.record_bytes_range_max
        if rmx and (rmx <= self.record_bytes or rmx > WBLOCK_SIZE):
            raise UsageError(f"--record-bytes-range-max {rmx} must be above --record-bytes "
                             f"{self.record_bytes} and at most {WBLOCK_SIZE} (or 0 for fixed-size records)")
        lb = self.large_block_bytes
        if lb < 1024 or lb > WBLOCK_SIZE or lb & (lb - 1):
            raise UsageError(f"--large-block-kib {lb / 1024:g} must be a power of 2, 1 .. 8192")
        if round_up(max(self.record_bytes, rmx), RBLOCK_SIZE) > lb:
            raise UsageError(f"records of up to {max(self.record_bytes, rmx)} B do not fit in a {lb // 1024} KiB "
                             "large block (ACT would divide by zero)")
        if self.replication_factor == 0:
            raise UsageError("--replication-factor must be at least 1")
        if self.update_pct > 100:
            raise UsageError(f"--update-pct {self.update_pct} must be 0 .. 100 (ACT refuses more)")
        if self.defrag_lwm_pct >= 100:
            raise UsageError(f"--defrag-lwm-pct {self.defrag_lwm_pct} must be 0 .. 99")
        if self.compress_pct > 100:
            raise UsageError(f"--compress-pct {self.compress_pct} must be 0 .. 100")
        if self.disable_odsync and self.commit_to_device:
            raise UsageError("--disable-odsync cannot be combined with --commit-to-device (ACT refuses it)")


def _flag(field_name: str) -> str:
    return {"read_reqs_per_s": "read-reqs-per-sec", "write_reqs_per_s": "write-reqs-per-sec",
            "large_block_bytes": "large-block-kib", "tomb_raider_sleep_us": "tomb-raider-sleep-usec",
            "max_lag_s": "max-lag"}.get(field_name, field_name.replace("_", "-"))


@dataclass(frozen=True)
class Derived:
    """Rates ACT derives from its configuration; totals over all devices (per_device() divides them)."""

    read_reqs_per_s: int  # read-reqs-per-sec (config total)
    write_reqs_per_s: int  # write-reqs-per-sec (config total)
    reads_per_s: int  # internal-read-reqs-per-sec: client reads + update reads
    internal_writes_per_s: int  # replication x writes (they fill the large blocks)
    commit_writes_per_s: int  # internal-write-reqs-per-sec: records written one at a time (commit-to-device)
    stored_record_bytes: int
    stored_record_bytes_max: int
    records_per_large_block: int
    large_block_reads_per_s: float
    large_block_writes_per_s: float
    devices: int
    service_threads: int
    service_reqs_per_thread: int  # each service thread's rate: (reads + commits) // threads
    read_split: int  # of SPLIT_RESOLUTION: the chance that a service-thread op is a read

    def per_device(self, total: float) -> float:
        """ACT splits every rate evenly over the devices."""
        return total / self.devices

    @property
    def service_reads_per_s(self) -> float:
        """Reads the service threads actually issue per second (ACT's integer per-thread rate x threads)."""
        return self.service_threads * self.service_reqs_per_thread * self.read_split / SPLIT_RESOLUTION

    @property
    def service_commits_per_s(self) -> float:
        """Commit writes the service threads actually issue per second."""
        return self.service_threads * self.service_reqs_per_thread - self.service_reads_per_s

    def as_dict(self) -> dict[str, Any]:
        """JSON form: totals plus the per-device share of each stream."""
        d = dataclasses.asdict(self)
        d["per_device"] = {
            "reads_per_s": self.per_device(self.reads_per_s),
            "large_block_reads_per_s": self.per_device(self.large_block_reads_per_s),
            "large_block_writes_per_s": self.per_device(self.large_block_writes_per_s),
            "commit_writes_per_s": self.per_device(self.commit_writes_per_s),
        }
        return d


def derive(cfg: ActConfig) -> Derived:
    """ACT's derive_configuration (cfg_storage.c), integer arithmetic where ACT's is integer.

    internal reads  = reads + writes * update_pct / 100                     (integer)
    internal writes = replication_factor * writes
    stored          = roundup16(record_bytes); avg = (stored + stored_max) / 2   (integer)
    original lb/s   = internal writes / (large_block_bytes / avg)           (integer division inside)
    WA              = 100 / (100 - defrag_lwm_pct)
    lb reads/s      = original * WA (0 with no-defrag-reads)
    lb writes/s     = original * WA, or original * (WA - 1) with commit-to-device
    per thread      = (internal reads + commits) / service_threads           (integer; 0 -> "too small")
    """
    cfg.check()
    if cfg.read_reqs_per_s + cfg.write_reqs_per_s == 0:
        raise UsageError("read-reqs-per-sec and write-reqs-per-sec can't both be zero (ACT refuses it)")
    internal_read = cfg.read_reqs_per_s + (cfg.write_reqs_per_s * cfg.update_pct) // 100
    internal_write = cfg.replication_factor * cfg.write_reqs_per_s
    stored = round_up(cfg.record_bytes, RBLOCK_SIZE)
    stored_max = round_up(cfg.record_bytes_range_max, RBLOCK_SIZE) if cfg.record_bytes_range_max else stored
    avg_stored = (stored + stored_max) // 2
    per_block = cfg.large_block_bytes // avg_stored
    original = internal_write / per_block
    amplification = 100.0 / (100 - cfg.defrag_lwm_pct)
    lb_reads = original * amplification
    if cfg.commit_to_device:
        lb_writes = original * (amplification - 1.0)
        commits = internal_write
    else:
        lb_writes = lb_reads
        commits = 0
    if cfg.no_defrag_reads:
        lb_reads = 0.0
    total = internal_read + commits
    if total != 0 and total // cfg.service_threads == 0:
        raise UsageError(f"load config too small (ACT's words): {total} requests/s over {cfg.service_threads} "
                         "service threads is under 1 per thread; raise the rates or lower --service-threads")
    per_thread = total // cfg.service_threads
    split = SPLIT_RESOLUTION * internal_read // total if total else 0
    return Derived(read_reqs_per_s=cfg.read_reqs_per_s, write_reqs_per_s=cfg.write_reqs_per_s,
                   reads_per_s=internal_read, internal_writes_per_s=internal_write, commit_writes_per_s=commits,
                   stored_record_bytes=stored, stored_record_bytes_max=stored_max, records_per_large_block=per_block,
                   large_block_reads_per_s=lb_reads, large_block_writes_per_s=lb_writes, devices=cfg.devices,
                   service_threads=cfg.service_threads, service_reqs_per_thread=per_thread, read_split=split)


def record_sizes(cfg: ActConfig, min_op: int) -> list[int]:
    """Sizes of the service threads' I/Os (act_storage.c discover_read_pattern): the stored record rounded
    up to the device's minimum direct-I/O size, and with a range every multiple of it up to the largest."""
    lo = round_up(round_up(cfg.record_bytes, RBLOCK_SIZE), min_op)
    top = cfg.record_bytes_range_max or cfg.record_bytes
    hi = round_up(round_up(top, RBLOCK_SIZE), min_op)
    return list(range(lo, hi + 1, min_op))


def settings_from(options: Mapping[str, Any], file_values: Mapping[str, Any]) -> dict[str, Any]:
    """Option values in ACT's order of precedence for ssdlab: an explicit option, else the config file."""
    merged = dict(file_values)
    for key, value in options.items():
        if value is not None and value is not False:
            merged[key] = value
    return merged
