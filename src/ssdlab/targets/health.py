"""Drive health snapshots: identity, health counters, write cache, power state and link, taken before and after
every run on NVMe and SATA/SAS devices, temperature samples during it, and the deltas a report shows.

Sources: nvme-cli (id-ctrl, id-ns, smart-log, get-feature 2 and 6) for NVMe, smartctl for SATA and SAS (and
for NVMe when nvme-cli is missing), sysfs for the link and the SCSI cache mode. Every command and parser lives
in drivecli.py. Whatever cannot be read becomes one "not available: why" line, never a zero: files, loop
devices, the null engine and the simulator have no drive to ask. The tools' raw outputs are kept next to
run.json (DIR/health/<when>-<device>-<what>.json) like fio's.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab.results import atomic
from ssdlab.results.store import now_iso
from ssdlab.targets import drivecli, link, sysfs
from ssdlab.targets.base import Target
from ssdlab.targets.drivecli import ToolError, Tools
from ssdlab.units import format_bytes

HEALTH_DIR = "health"
MAX_SAMPLES = 2000  # per device; beyond it every other sample is dropped and the interval doubles
DEFAULT_SAMPLE_INTERVAL_S = 30.0
CEILING_PHASE = "ceiling"  # run/ceiling.py's points: the null engine, no drive

# counters whose change over a run the report shows (key, label, unit)
DELTA_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("temperature_c", "temperature", "°C"),
    ("critical_warning", "critical warning", ""),
    ("media_errors", "media errors", ""),
    ("percentage_used", "percentage used", "%"),
    ("available_spare_pct", "available spare", "%"),
    ("data_units_read", "data units read", "× 512,000 B"),
    ("data_units_written", "data units written", "× 512,000 B"),
    ("bytes_read", "bytes read (drive counter)", "B"),
    ("bytes_written", "bytes written (drive counter)", "B"),
    ("unsafe_shutdowns", "unsafe shutdowns", ""),
    ("power_on_hours", "power-on hours", "h"),
    ("power_cycles", "power cycles", ""),
    ("error_log_entries", "error log entries", ""),
    ("warning_temp_minutes", "time above warning temperature", "min"),
    ("critical_temp_minutes", "time above critical temperature", "min"),
    ("reallocated_sectors", "reallocated sectors", ""),
    ("reported_uncorrectable", "reported uncorrectable errors", ""),
    ("grown_defects", "grown defects", ""),
    ("logical_sectors_written", "logical sectors written", ""),
    ("attr241_total_lbas_written_raw", "attribute 241 raw (vendor units)", ""),
)
THERMAL_FIELDS = (("tmt1_transitions", "thermal throttle (TMT1) transitions"),
                  ("tmt1_seconds", "time throttled at TMT1 (s)"),
                  ("tmt2_transitions", "heavy throttle (TMT2) transitions"),
                  ("tmt2_seconds", "time throttled at TMT2 (s)"))


@dataclass(frozen=True)
class Device:
    """One block device the run touches, as health collection sees it."""

    path: str  # the node ssdlab writes to (/dev/nvme0n1, /dev/sda)
    sysdir: Path | None
    kind: str  # "nvme" | "ata" | "scsi" | "loop" | "other"
    name: str = ""
    given: str = ""  # the target's name as the run's per-device results (Measurement.parts) name it

    @property
    def node(self) -> str:
        """The whole drive's node: tools ask the disk, not a partition of it."""
        return f"/dev/{self.name}" if self.name and self.kind in ("nvme", "ata", "scsi") else self.path

    @property
    def controller(self) -> str | None:
        """The NVMe controller node (/dev/nvme0) that answers for this namespace: from sysfs when it is known
        (a multipath namespace is named after its subsystem, whose controllers may be numbered otherwise),
        else from the node's name."""
        found = drivecli.nvme_controller_of(self.sysdir) if self.kind == "nvme" and self.sysdir is not None else None
        return found or drivecli.nvme_controller(self.node)

    @property
    def nsid(self) -> int | None:
        """The NVMe namespace id (sysfs `nsid` of the namespace's disk), None when unknown."""
        if self.kind != "nvme" or self.sysdir is None:
            return None
        text = _read(sysfs.whole_disk(self.sysdir) / "nsid")
        return int(text) if text.isdigit() else None

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "-", self.name or Path(self.path).name).strip("-") or "device"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def classify(path: str, sysdir: Path | None) -> str:
    """nvme | ata | scsi | loop | other, from the node name and sysfs (libata disks report vendor 'ATA')."""
    name = Path(path).name
    disk = sysfs.whole_disk(sysdir) if sysdir is not None else None
    if re.fullmatch(r"nvme\d+n\d+", disk.name if disk else name):
        return "nvme"
    if name.startswith("loop") or (disk is not None and (disk / "loop").exists()):
        return "loop"
    if disk is not None and (disk / "device" / "scsi_disk").exists():
        return "ata" if _read(disk / "device" / "vendor") == "ATA" else "scsi"
    return "other"


def devices_of(target: Target) -> list[Device]:
    """The block devices behind a target (a multi-device target lists each member); [] for the rest."""
    from ssdlab.targets.blockdev import BlockTarget

    out = []
    for t in target.each_device():
        if isinstance(t, BlockTarget):
            sysdir = t.sysdir
            disk = sysfs.whole_disk(sysdir) if sysdir is not None else None
            out.append(Device(path=t.real_path or t.path, sysdir=sysdir, kind=classify(t.real_path, sysdir),
                              name=disk.name if disk else Path(t.path).name, given=t.name))
    return out


def not_available_reason(target: Target) -> str:
    """Why a target has no drive health at all ('' when it has block devices to ask): the kind says."""
    return target.health_unavailable()


def device_reason(dev: Device) -> str:
    """Why this device has no health log ('' when it may have one)."""
    if dev.kind == "loop":
        backing = _read(dev.sysdir / "loop" / "backing_file") if dev.sysdir else ""
        return f"{dev.path} is a loop device" + (f" backed by {backing}" if backing else "") + \
            " (no health log; the drive under its file is shared with everything else)"
    if dev.kind == "other":
        return f"{dev.path} is neither NVMe nor SATA/SAS (virtio, dm, md, mmc ...): no health log to read"
    return ""


# ------------------------------------------------------------------ snapshots

@dataclass
class Snapshotter:
    """Takes snapshots and samples with one set of tools, keeping raw outputs under `raw_dir`."""

    tools: Tools
    raw_dir: Path | None = None

    def _save_raw(self, when: str, dev: Device, what: str, text: str) -> str:
        if self.raw_dir is None:
            return ""
        name = f"{when}-{dev.slug}-{what}.json"
        with contextlib.suppress(OSError):
            self.raw_dir.mkdir(parents=True, exist_ok=True)
            atomic.write_text(self.raw_dir / name, text if text.endswith("\n") else text + "\n")
            return f"{HEALTH_DIR}/{name}"
        return ""

    def _query(self, snap: dict[str, Any], when: str, dev: Device, what: str, argv: list[str],
               ok_codes: Sequence[int] = (0,)) -> dict[str, Any] | None:
        try:
            text = self.tools.text(argv, " ".join(argv[:2]), ok_codes)
            doc = drivecli.load_json(text, " ".join(argv[:2]))
        except ToolError as exc:
            snap.setdefault("errors", []).append(str(exc))
            return None
        saved = self._save_raw(when, dev, what, text)
        if saved:
            snap.setdefault("raw", {})[what] = saved
        return doc

    def snapshot(self, dev: Device, when: str) -> dict[str, Any]:
        """Identity, health, write cache, power state and link of one device (never raises for a tool)."""
        snap: dict[str, Any] = {"when": when, "time": now_iso(), "device": dev.path, "kind": dev.kind,
                                "link": link.probe(dev.sysdir)}
        reason = device_reason(dev)
        if reason:
            snap.update(available=False, reason=reason)
            return snap
        if dev.kind == "nvme" and self.tools.has("nvme"):
            self._nvme(snap, dev, when)
        elif self.tools.has("smartctl"):
            self._smartctl(snap, dev, when)
        else:
            tool = "nvme" if dev.kind == "nvme" else "smartctl"
            snap.update(available=False, reason=drivecli.missing_reason(tool)
                        + (" and smartctl (smartmontools) is not either" if tool == "nvme" else ""))
        if dev.kind in ("ata", "scsi"):
            snap["write_cache"] = scsi_cache_state(dev) or snap.get("write_cache", "unknown: no cache_type in sysfs")
        self._fill_link_from_smartctl(snap)
        if "available" not in snap:
            snap["available"] = bool(snap.get("health"))
            if not snap["available"]:
                snap["reason"] = "; ".join(snap.get("errors", [])) or "the tools returned no health data"
        return snap

    def _nvme(self, snap: dict[str, Any], dev: Device, when: str) -> None:
        ctrl = dev.controller or dev.node
        snap["tool"] = "nvme-cli"
        snap["controller"] = ctrl
        identity: dict[str, Any] = {}
        per_namespace = False
        doc = self._query(snap, when, dev, "id-ctrl", drivecli.nvme_id_ctrl(ctrl))
        if doc is not None:
            identity.update(drivecli.parse_nvme_id_ctrl(doc))
            per_namespace = drivecli.parse_nvme_capabilities(doc)["namespace_smart"]
        doc = self._query(snap, when, dev, "id-ns", drivecli.nvme_id_ns(dev.node))
        if doc is not None:
            identity.update(drivecli.parse_nvme_id_ns(doc))
        snap["identity"] = identity
        nsid = dev.nsid if per_namespace else None
        doc = self._query(snap, when, dev, "smart-log", drivecli.nvme_smart_log(ctrl, nsid))
        if doc is not None:
            snap["health"] = drivecli.parse_nvme_smart_log(doc)
            # whose I/O the data-unit and command counters count: this namespace's alone (LPA bit 0), or every
            # namespace's of the controller
            snap["counter_scope"] = f"namespace {nsid}" if nsid else "controller"
        snap["write_cache"] = nvme_write_cache(self.tools, ctrl, identity)
        ps = nvme_power_state(self.tools, ctrl)
        if isinstance(ps, int):
            snap["power_state"] = ps
        else:
            snap["power_state_note"] = ps

    def _smartctl(self, snap: dict[str, Any], dev: Device, when: str) -> None:
        argv = drivecli.smartctl_all(dev.controller or dev.node, ata=dev.kind == "ata")
        doc = self._query(snap, when, dev, "smartctl", argv, ok_codes=range(256))
        if doc is None:
            return
        failed = drivecli.smartctl_failed(doc)
        if failed:
            snap.setdefault("errors", []).append(failed)
            return
        parsed = drivecli.parse_smartctl(doc)
        snap["tool"] = parsed.get("tool_version", "smartctl")
        snap["identity"] = parsed["identity"]
        snap["health"] = parsed["health"]
        snap["protocol"] = parsed["protocol"]
        if "interface" in parsed:
            snap["interface"] = parsed["interface"]
        if "write_cache" in parsed:
            snap["write_cache"] = parsed["write_cache"]
        if dev.kind == "nvme":  # smartctl stood in for a missing nvme-cli: it reads neither feature
            snap["write_cache"] = "unknown: " + drivecli.missing_reason("nvme")
            snap["power_state_note"] = "not available: " + drivecli.missing_reason("nvme")

    def _fill_link_from_smartctl(self, snap: dict[str, Any]) -> None:
        """A SATA drive behind a SAS HBA has no ata_link in sysfs; smartctl still reports its interface speed."""
        iface = snap.get("interface")
        if snap["link"].get("available") or not iface or "current_gbps" not in iface:
            return
        gbps = float(iface["current_gbps"])
        if gbps in (1.5, 3.0, 6.0):
            found = link.sata_link(gbps, source="smartctl interface_speed")
            mx = iface.get("max_gbps")
            if mx:
                found["max"] = {"gbps": float(mx)}
                found["max_label"] = link.sata_label(float(mx))
                if float(mx) > gbps:
                    found["below_max"] = (f"the SATA link trained at {found['label']}, below its maximum "
                                          f"{found['max_label']}")
            snap["link"] = found

    def sample(self, dev: Device, started: float) -> dict[str, Any] | None:
        """Temperature (and NVMe thermal-management counters) now; None when the device cannot say."""
        out: dict[str, Any] = {"time": now_iso(), "elapsed_s": round(time.monotonic() - started, 1)}
        try:
            if dev.kind == "nvme" and self.tools.has("nvme"):
                doc = self.tools.json(drivecli.nvme_smart_log(dev.controller or dev.node), "nvme smart-log")
                health = drivecli.parse_nvme_smart_log(doc)
                out.update(health.get("thermal_management", {}))
            elif dev.kind in ("nvme", "ata", "scsi") and self.tools.has("smartctl"):
                doc = self.tools.json(drivecli.smartctl_attributes(dev.controller or dev.node), "smartctl",
                                      ok_codes=range(256))
                health = drivecli.parse_smartctl(doc)["health"]
            else:
                return None
        except ToolError:
            return None
        if "temperature_c" not in health:
            return None
        out["temperature_c"] = health["temperature_c"]
        return out


def nvme_write_cache(tools: Tools, ctrl: str, identity: Mapping[str, Any]) -> str:
    """'enabled' | 'disabled' | 'not present' | 'unknown: why' (get-feature 6 when id-ctrl says VWC exists)."""
    if identity.get("volatile_write_cache_present") is False:
        return "not present"
    try:
        value = tools.feature(ctrl, drivecli.FEATURE_VOLATILE_WRITE_CACHE)
    except ToolError as exc:
        return f"unknown: {exc}"
    if value is None:
        return "unknown: nvme get-feature 6 printed no value"
    return "enabled" if value & 1 else "disabled"


def nvme_power_state(tools: Tools, ctrl: str) -> int | str:
    """The power state in force (Power Management feature bits 4:0), or why it is unknown."""
    try:
        value = tools.feature(ctrl, drivecli.FEATURE_POWER_MANAGEMENT)
    except ToolError as exc:
        return f"unknown: {exc}"
    return value & 0x1F if value is not None else "unknown: nvme get-feature 2 printed no value"


def scsi_cache_file(dev: Device) -> Path | None:
    """The sd driver's cache_type attribute (sysfs scsi_disk) of a SATA/SAS disk."""
    if dev.sysdir is None:
        return None
    disk = sysfs.whole_disk(dev.sysdir)
    found = sorted((disk / "device" / "scsi_disk").glob("*/cache_type"))
    return found[0] if found else None


def scsi_cache_state(dev: Device) -> str:
    """'enabled' | 'disabled' | 'not present' from cache_type ('write back', 'write through', 'none'), '' if unknown."""
    path = scsi_cache_file(dev)
    text = _read(path) if path else ""
    if text.startswith("write back"):
        return "enabled"
    if text.startswith("write through"):
        return "disabled"
    if text == "none":
        return "not present"
    return ""


# ------------------------------------------------------------------ samples during the run

SampleListener = Callable[[str, dict[str, Any]], None]  # (device path, sample) as each sample is taken


@dataclass
class Monitor:
    """Samples every device's temperature in a thread while the run goes on (start/stop; samples()); a
    `listener` hears of each sample as it is taken."""

    snapshotter: Snapshotter
    devices: Sequence[Device]
    interval_s: float = DEFAULT_SAMPLE_INTERVAL_S
    listener: SampleListener | None = None
    _samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _started: float = 0.0
    _interval: float = field(init=False)  # the sampling interval now (interval_s, doubled at every thinning)

    def __post_init__(self) -> None:
        self._interval = self.interval_s

    def start(self) -> None:
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="ssdlab-health-monitor", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.sample_round()

    def sample_round(self) -> None:
        """One sample of every device. A device past MAX_SAMPLES keeps every other sample, and the interval
        doubles once for the round, however many devices were thinned in it."""
        thinned = False
        for dev in self.devices:
            sample = self.snapshotter.sample(dev, self._started)
            if sample is None:
                continue
            with self._lock:
                kept = self._samples.setdefault(dev.path, [])
                kept.append(sample)
                if len(kept) > MAX_SAMPLES:
                    del kept[1::2]
                    thinned = True
            if self.listener is not None:
                self.listener(dev.path, sample)
        if thinned:
            self._interval *= 2

    def stop(self) -> None:
        """Stop sampling; a query still running finishes on its own (the thread is a daemon, its sample is
        dropped), so stopping never waits on a slow drive."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def samples(self) -> dict[str, list[dict[str, Any]]]:
        with self._lock:
            return {k: list(v) for k, v in self._samples.items()}


# ------------------------------------------------------------------ deltas and the cross-check (pure)

def first_last(snapshots: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """The first 'before' and the last 'after' snapshot of one device (resumed runs have several)."""
    before = next((s for s in snapshots if s.get("when") == "before"), None)
    after = next((s for s in reversed(snapshots) if s.get("when") == "after"), None)
    return before, after


def delta(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """[{key, label, unit, before, after, change}] for every field either snapshot carries."""
    hb = dict((before or {}).get("health") or {})
    ha = dict((after or {}).get("health") or {})
    for h in (hb, ha):
        h.update(h.pop("thermal_management", {}) or {})
    rows = []
    for key, label, unit in (*DELTA_FIELDS, *((k, lbl, "") for k, lbl in THERMAL_FIELDS)):
        b, a = hb.get(key), ha.get(key)
        if b is None and a is None:
            continue
        change = a - b if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None
        rows.append({"key": key, "label": label, "unit": unit, "before": b, "after": a, "change": change})
    return rows


def cross_check(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None,
                written_by_test: int, read_by_test: int) -> list[dict[str, Any]]:
    """Bytes the test moved vs the drive's own counters, with the counter's resolution, for each direction
    the drive reports."""
    hb = (before or {}).get("health") or {}
    ha = (after or {}).get("health") or {}
    out = []
    for direction, test_bytes in (("written", written_by_test), ("read", read_by_test)):
        key = f"bytes_{direction}"
        if key not in hb or key not in ha:
            continue
        drive = int(ha[key]) - int(hb[key])
        out_snap = after or before or {}
        kind = out_snap.get("kind")
        if kind == "nvme":
            resolution = drivecli.NVME_DATA_UNIT_BYTES  # counted in thousands of 512-byte units, rounded up
        elif kind == "scsi":
            resolution = 1_000_000  # gigabytes processed, printed with three decimals
        else:
            resolution = int((out_snap.get("identity") or {}).get("logical_block_size") or 512)
        out.append({"direction": direction, "test_bytes": test_bytes, "drive_bytes": drive,
                    "resolution_bytes": resolution,
                    "ratio": (drive / test_bytes) if test_bytes > 0 else None})
    return out


def bytes_moved(points: Iterable[Any], devices: Collection[str] | None = None) -> tuple[int, int]:
    """(written, read) bytes of every finished point of a run, from fio's io_bytes (trims not counted). With
    `devices`, only what went to those devices: a point on several devices counts the parts of those devices
    (each part is one device's own result). The host ceiling (fio's null engine, run/ceiling.py) moves no byte
    to any drive and is never counted."""
    written = read = 0
    for p in points:
        m = getattr(p, "measurement", None)
        if getattr(p, "status", "") != "ok" or m is None or getattr(p.point, "phase", "") == CEILING_PHASE:
            continue
        measured = [m]
        if devices is not None and m.parts:
            measured = [part.measurement for part in m.parts
                        if part.device in devices and part.status == "ok" and part.measurement is not None]
        for one in measured:
            w, r = one.directions.get("write"), one.directions.get("read")
            written += int(w.io_bytes) if w is not None else 0
            read += int(r.io_bytes) if r is not None else 0
    return written, read


def counted_devices(entry: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The run's devices (entries of Run.health["devices"]) whose I/O the drive counter of `entry` counts: the
    device alone, or, when its NVMe SMART log is the controller's (no per-namespace log), every namespace of the
    run on that controller."""
    _, after = first_last(entry.get("snapshots") or [])
    ctrl = (after or {}).get("controller")
    if (after or {}).get("counter_scope") != "controller" or not ctrl:
        return [entry]
    return [e for e in entries
            if e is entry or (first_last(e.get("snapshots") or [])[1] or {}).get("controller") == ctrl]


def device_cross_check(points: Iterable[Any], entry: Mapping[str, Any],
                       entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """cross_check of one device of a run against the bytes that went to what its counter counts; each row
    names those devices (`covers`) when they are more than this one."""
    before, after = first_last(entry.get("snapshots") or [])
    counted = counted_devices(entry, entries)
    names = {str(n) for e in counted for n in (e.get("path"), e.get("given")) if n}
    written, read = bytes_moved(points, names if len(entries) > 1 else None)
    covers = [str(e.get("path")) for e in counted]
    rows = cross_check(before, after, written, read)
    if len(covers) > 1:
        for row in rows:
            row["covers"] = covers
    return rows


def summary_line(snap: Mapping[str, Any]) -> str:
    """One line for `ssdlab info` and progress notes: model, firmware, temperature, wear, cache, link."""
    if not snap.get("available"):
        return f"not available: {snap.get('reason', 'unknown reason')}"
    ident, health = snap.get("identity") or {}, snap.get("health") or {}
    bits = [str(ident.get("model", "unknown model")), f"firmware {ident.get('firmware', '?')}"]
    if "temperature_c" in health:
        bits.append(f"{health['temperature_c']} °C")
    if "percentage_used" in health:
        bits.append(f"{health['percentage_used']} % used")
    if health.get("critical_warning"):
        bits.append(f"CRITICAL WARNING {health['critical_warning']:#x}")
    if "write_cache" in snap:
        bits.append(f"write cache {snap['write_cache']}")
    if "power_state" in snap:
        bits.append(f"power state {snap['power_state']}")
    return ", ".join(bits)


def info_lines(target: Target, tools: Tools | None = None) -> list[tuple[str, str]]:
    """(label, text) lines for `ssdlab info`: each device's interface and health now (read-only queries)."""
    reason = not_available_reason(target)
    if reason:
        return [("health", f"not available: {reason}")]
    snapper = Snapshotter(tools or drivecli.TOOLS)
    out = []
    devices = devices_of(target)
    for dev in devices:
        snap = snapper.snapshot(dev, "now")
        prefix = f"{dev.path} " if len(devices) > 1 else ""
        out.append((f"{prefix}interface", interface_line(snap.get("link") or {})))
        if snap.get("available") and snap.get("identity"):
            out.append((f"{prefix}drive", identity_line(snap)))
        out.append((f"{prefix}health", summary_line(snap)))
    return out


def interface_line(lnk: Mapping[str, Any]) -> str:
    """The link as `ssdlab info` prints it."""
    if not lnk.get("available"):
        return f"not available: {lnk.get('reason', 'unknown')}"
    text = str(lnk["label"])
    if lnk.get("emulated"):
        return f"{text} (as sysfs reports it; {lnk['emulated']})"
    text += f", usable ≈ {float(lnk['usable_bytes_per_s']) / 1e6:,.0f} MB/s per direction"
    if lnk.get("below_max"):
        text += f" (WARNING: {lnk['below_max']})"
    return text


def identity_line(snap: Mapping[str, Any]) -> str:
    """What the drive says it is, as nvme-cli or smartctl read it: model, serial, firmware, capacity and the
    LBA format in use (NVMe) or the sector sizes (SATA/SAS)."""
    ident = snap.get("identity") or {}
    bits = [str(ident[k]) if k == "model" else f"{k} {ident[k]}" for k in ("model", "serial", "firmware")
            if ident.get(k)]
    cap = ident.get("capacity_bytes")
    if cap:
        bits.append(f"{int(cap):,} bytes ({format_bytes(int(cap))})")
    fmt = ident.get("lba_format")
    if isinstance(fmt, Mapping) and fmt.get("data_bytes"):
        bits.append(f"LBA format {fmt.get('index', '?')}: {fmt['data_bytes']} B data + "
                    f"{fmt.get('metadata_bytes', 0)} B metadata")
    elif ident.get("logical_block_size"):
        bits.append(f"sectors {ident['logical_block_size']} B logical, "
                    f"{ident.get('physical_block_size', ident['logical_block_size'])} B physical")
    return ", ".join(bits) + f" ({snap.get('tool', 'tool unknown')})"
