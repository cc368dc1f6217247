"""Write cache and power state on the user's request (`--write-cache on|off`, `--power-state N`): checked before
anything is created, set before the first point, and put back afterwards, even on failure or Ctrl-C.

NVMe: Set Features 6 (Volatile Write Cache) and 2 (Power Management, bits 4:0; the workload hint in bits 7:5
is kept) through nvme-cli, without --save, so a power cycle also restores the drive's default. SATA and SAS:
the sd driver's cache_type in sysfs, which sends MODE SELECT to the drive (libata translates it for SATA).
Every change is read back; the original is recorded in run.json before the change is made, so a run killed
with -9 is put right by `ssdlab resume`. Changing either is a write-class action on the device: run/setup.authorize asks
the same consent as for writing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ssdlab.errors import TargetError, UsageError
from ssdlab.results.request import DeviceSettings
from ssdlab.targets import drivecli
from ssdlab.targets.drivecli import ToolError, Tools
from ssdlab.targets.health import Device, devices_of, not_available_reason, scsi_cache_file

CACHE_TYPES = {"on": "write back", "off": "write through"}


Requested = DeviceSettings  # the settings a run asked for (RunRequest.device_settings)


def check(target: Any, req: Requested, tools: Tools | None = None) -> None:
    """Refuse, with one line, a setting the target cannot take (called before the results directory exists)."""
    if not req:
        return
    tools = tools or drivecli.TOOLS
    flags = " and ".join(f for f, on in (("--write-cache", req.write_cache is not None),
                                         ("--power-state", req.power_state is not None)) if on)
    reason = not_available_reason(target)
    if reason:
        raise UsageError(f"{flags} needs an NVMe or SATA/SAS block device: {reason}")
    for dev in devices_of(target):
        if dev.kind in ("loop", "other"):
            raise UsageError(f"{flags}: {dev.path} is not an NVMe or SATA/SAS drive (nothing to set on it)")
        if req.power_state is not None and dev.kind != "nvme":
            raise UsageError(f"--power-state: {dev.path} is a {dev.kind.upper()} drive; NVMe power states "
                             "(Set Features 2) exist only on NVMe drives")
        if dev.kind == "nvme":
            _check_nvme(dev, req, tools)
        elif req.write_cache is not None and scsi_cache_file(dev) is None:
            raise TargetError(f"--write-cache: {dev.path} has no cache_type attribute in sysfs (scsi_disk), so "
                              "its write cache cannot be set")


def _check_nvme(dev: Device, req: Requested, tools: Tools) -> None:
    if not tools.has("nvme"):
        raise TargetError(f"setting the write cache or power state of {dev.path} needs "
                          f"{drivecli.missing_reason('nvme')}")
    ctrl = dev.controller or dev.node
    try:
        ident = drivecli.parse_nvme_id_ctrl(tools.json(drivecli.nvme_id_ctrl(ctrl), "nvme id-ctrl"))
    except ToolError as exc:
        raise TargetError(f"cannot identify {ctrl}: {exc}") from exc
    if req.write_cache is not None and ident.get("volatile_write_cache_present") is False:
        raise TargetError(f"--write-cache {req.write_cache}: {ident.get('model', dev.path)} has no volatile write "
                          "cache (Identify Controller VWC bit 0 is 0): there is nothing to switch")
    if req.power_state is not None:
        states = ident.get("power_states") or []
        if not 0 <= req.power_state < len(states):
            raise UsageError(f"--power-state {req.power_state}: {dev.path} has power states 0 to {len(states) - 1}"
                             if states else f"--power-state: {dev.path} lists no power states")
        if not states[req.power_state].get("operational", True):
            ops = [str(s["ps"]) for s in states if s.get("operational", True)]
            raise UsageError(f"--power-state {req.power_state} is a non-operational (idle) state of {dev.path}: "
                             f"I/O would leave it at once; choose an operational one ({', '.join(ops)})")


# ------------------------------------------------------------------ apply and restore

def groups(devices: Sequence[Device]) -> list[list[Device]]:
    """The run's devices as the settings apply to them: the namespaces of one NVMe controller together (Set
    Features 6 and 2 act on the controller, so they are set once, read once and restored once for all of them),
    every other device alone. Order kept."""
    out: list[list[Device]] = []
    by_ctrl: dict[str, list[Device]] = {}
    for dev in devices:
        ctrl = dev.controller if dev.kind == "nvme" else None
        if ctrl and ctrl in by_ctrl:
            by_ctrl[ctrl].append(dev)
            continue
        group = [dev]
        out.append(group)
        if ctrl:
            by_ctrl[ctrl] = group
    return out


def apply(dev: Device, req: Requested, tools: Tools, recorded: Sequence[Mapping[str, Any]] = (),
          record: Any = None, also: Sequence[Device] = ()) -> list[dict[str, Any]]:
    """Set what `req` asks on `dev`; returns one change record per setting: {device, setting, requested,
    original, applied, restored}, plus `devices` (every path the change acts on) when `also` names other
    namespaces of the same controller. `recorded` holds records of an earlier, unfinished session (a resumed
    run): their original value is the one to put back, not what the drive holds now. `record(changes)` is
    called with each record before the device is touched, so run.json knows the original first."""
    changes: list[dict[str, Any]] = []
    earlier = {(r.get("device"), r.get("setting")): r for r in recorded}
    shared = {"devices": [dev.path, *(d.path for d in also)]} if also else {}
    if req.write_cache is not None:
        changes.append(_set_write_cache(dev, req.write_cache, tools, earlier.get((dev.path, "write_cache")),
                                        changes, record, shared))
    if req.power_state is not None:
        changes.append(_set_power_state(dev, req.power_state, tools, earlier.get((dev.path, "power_state")),
                                        changes, record, shared))
    return changes


def _announce(change: dict[str, Any], changes: list[dict[str, Any]], record: Any) -> None:
    if record is not None:
        record([*changes, change])


def _set_write_cache(dev: Device, want: str, tools: Tools, earlier: Mapping[str, Any] | None,
                     changes: list[dict[str, Any]], record: Any, shared: Mapping[str, Any]) -> dict[str, Any]:
    change: dict[str, Any] = {"device": dev.path, **shared, "setting": "write_cache", "requested": want,
                              "restored": False}
    if dev.kind == "nvme":
        ctrl = dev.controller or dev.node
        change["node"] = ctrl
        original = _nvme_feature(tools, ctrl, drivecli.FEATURE_VOLATILE_WRITE_CACHE)
        change["original"] = earlier["original"] if earlier and "original" in earlier else original
        _announce(change, changes, record)
        got = _nvme_set(tools, ctrl, drivecli.FEATURE_VOLATILE_WRITE_CACHE, 1 if want == "on" else 0)
        change["applied"] = got
        if (got & 1) != (1 if want == "on" else 0):
            raise TargetError(f"{ctrl}: the write cache reads back {got:#x} after setting it {want}")
        return change
    path = scsi_cache_file(dev)
    if path is None:
        raise TargetError(f"{dev.path}: no cache_type attribute to set the write cache with")
    original_text = _read_text(path)
    change["original"] = earlier["original"] if earlier and "original" in earlier else original_text
    _announce(change, changes, record)
    got_text = _write_cache_type(path, CACHE_TYPES[want])
    change["applied"] = got_text
    if not got_text.startswith(CACHE_TYPES[want]):
        raise TargetError(f"{dev.path}: cache_type reads {got_text!r} after writing {CACHE_TYPES[want]!r}")
    return change


def _set_power_state(dev: Device, ps: int, tools: Tools, earlier: Mapping[str, Any] | None,
                     changes: list[dict[str, Any]], record: Any, shared: Mapping[str, Any]) -> dict[str, Any]:
    ctrl = dev.controller or dev.node
    original = _nvme_feature(tools, ctrl, drivecli.FEATURE_POWER_MANAGEMENT)
    change: dict[str, Any] = {"device": dev.path, **shared, "node": ctrl, "setting": "power_state",
                              "requested": ps, "restored": False,
                              "original": earlier["original"] if earlier and "original" in earlier else original}
    _announce(change, changes, record)
    got = _nvme_set(tools, ctrl, drivecli.FEATURE_POWER_MANAGEMENT, (original & ~0x1F) | ps)
    change["applied"] = got
    if got & 0x1F != ps:
        raise TargetError(f"{ctrl}: the power state reads back PS{got & 0x1F} after setting PS{ps}")
    return change


def restore(change: Mapping[str, Any], tools: Tools) -> str:
    """Put one setting back to its recorded original; returns the line for the run's events (raises
    TargetError when the device refuses)."""
    dev, setting, original = changed_devices(change), change["setting"], change.get("original")
    if original is None:
        return f"{setting} of {dev}: nothing to restore (the original was never read)"
    ctrl = str(change["node"]) if change.get("node") else drivecli.nvme_controller(str(change["device"]))
    if ctrl is not None:
        fid = drivecli.FEATURE_VOLATILE_WRITE_CACHE if setting == "write_cache" else drivecli.FEATURE_POWER_MANAGEMENT
        got = _nvme_set(tools, ctrl, fid, int(original))
        if got != int(original):
            raise TargetError(f"{ctrl}: {setting} reads back {got:#x} after restoring {int(original):#x}")
        shown = ("enabled" if got & 1 else "disabled") if setting == "write_cache" else f"PS{got & 0x1F}"
        return f"{setting.replace('_', ' ')} of {dev} restored to {shown} (value {got:#x})"
    path = _cache_file_of(str(change["device"]))
    if path is None:
        raise TargetError(f"{dev}: cache_type is gone; cannot restore the write cache to {original!r}")
    got_text = _write_cache_type(path, str(original))
    return f"write cache of {dev} restored to {got_text!r}"


def changed_devices(change: Mapping[str, Any]) -> str:
    """The devices a change record acts on, as a sentence names them: '/dev/sda', or '/dev/nvme0n1 and
    /dev/nvme0n2 (one controller, /dev/nvme0)'."""
    paths = [str(p) for p in change.get("devices") or [change["device"]]]
    if len(paths) == 1:
        return paths[0]
    ctrl = f", {change['node']}" if change.get("node") else ""
    return f"{', '.join(paths[:-1])} and {paths[-1]} (one controller{ctrl})"


def _cache_file_of(dev: str) -> Path | None:
    from ssdlab.targets import sysfs

    num = sysfs.devno(dev)
    sysdir = sysfs.sys_dir(*num) if num else None
    return scsi_cache_file(Device(path=dev, sysdir=sysdir, kind="scsi")) if sysdir else None


def _nvme_feature(tools: Tools, ctrl: str, fid: int) -> int:
    try:
        value = tools.feature(ctrl, fid)
    except ToolError as exc:
        raise TargetError(str(exc)) from exc
    if value is None:
        raise TargetError(f"nvme get-feature {fid} on {ctrl} printed no value")
    return value


def _nvme_set(tools: Tools, ctrl: str, fid: int, value: int) -> int:
    """Set a feature and return what it reads back."""
    try:
        tools.text(drivecli.nvme_set_feature(ctrl, fid, value), f"nvme set-feature {fid}")
    except ToolError as exc:
        raise TargetError(str(exc)) from exc
    return _nvme_feature(tools, ctrl, fid)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise TargetError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _write_cache_type(path: Path, value: str) -> str:
    try:
        path.write_text(value + "\n", encoding="utf-8")
    except OSError as exc:
        raise TargetError(f"cannot write {value!r} to {path}: {exc.strerror or exc} (needs root)") from exc
    return _read_text(path)
