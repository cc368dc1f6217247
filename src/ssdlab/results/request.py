"""The run request: what the user asked a run to do (suite, targets, sizes, engine, times, suite options, device
settings, hosts), as one frozen object. `ssdlab run` builds it from the command line, run/setup.py turns it into
a suite, a target and a plan, and run.json stores it (key "options"), so `resume` sets the run up again from
the same request and the report can print the command that reproduces it.

Stored form: the keys below in this order. Runs made before an option existed lack its key (schema 1: no
on_error and no straggler_margin_pct); such a request keeps the keys it was stored with, so writing it again
(resume, export) gives the same document, and the defaults apply when it is read (`error_policy`,
`straggler_margin`). Keys this version does not know are kept as they were.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

OnError = Literal["stop", "continue"]
ON_ERROR: tuple[OnError, ...] = ("stop", "continue")
DEFAULT_STRAGGLER_MARGIN_PCT = 10.0

# keys every stored request has, in order; then the ones added later, written only when set
_CORE_KEYS = ("suite", "target_specs", "size", "capacity", "ioengine", "runtime_s", "ramp_s", "suite_options",
              "footprint", "misalign")
_LATER_KEYS = ("on_error", "straggler_margin_pct", "hosts", "device_settings", "suite_digest")
# the I/O engines a request may name (--ioengine; `resume` checks a stored request against the same list)
IOENGINES = ("libaio", "io_uring", "psync", "sync", "posixaio")


@dataclass(frozen=True)
class DeviceSettings:
    """Drive settings a run holds while it runs and restores afterwards (--write-cache, --power-state)."""

    write_cache: str | None = None  # "on" | "off"
    power_state: int | None = None

    def __bool__(self) -> bool:
        return self.write_cache is not None or self.power_state is not None

    def describe(self) -> str:
        parts = []
        if self.write_cache is not None:
            parts.append(f"the write cache ({self.write_cache})")
        if self.power_state is not None:
            parts.append(f"the power state (PS{self.power_state})")
        return " and ".join(parts)

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> DeviceSettings:
        wc, ps = d.get("write_cache"), d.get("power_state")
        return DeviceSettings(write_cache=str(wc) if wc in ("on", "off") else None,
                              power_state=int(ps) if isinstance(ps, int) and not isinstance(ps, bool) else None)


@dataclass(frozen=True)
class RunRequest:
    """One run as the user asked for it. `target_specs` are the target strings as `resume` parses them (a file
    target's path absolute; a host group's devices as 'host:device'); `hosts` is a host inventory's path (the
    group replaces --target); `suite_options` hold every option of the suite, defaults filled in, once the
    run is set up (run/setup.py)."""

    suite: str = ""
    target_specs: tuple[str, ...] = ()
    size: int | None = None  # --size: a file target's size
    capacity: int | None = None  # --capacity: bytes of the target the run may use
    ioengine: str = "libaio"
    runtime_s: float | None = None  # None: the suite's default
    ramp_s: float | None = None
    suite_options: Mapping[str, Any] = field(default_factory=dict)
    footprint: str | None = None  # --footprint N or N%
    misalign: int | None = None
    on_error: str | None = "stop"  # None: not recorded (runs before --on-error stopped on the first error)
    straggler_margin_pct: float | None = DEFAULT_STRAGGLER_MARGIN_PCT  # None: not recorded
    hosts: str | None = None  # --hosts INVENTORY
    device_settings: DeviceSettings = field(default_factory=DeviceSettings)
    suite_digest: str | None = None  # a suite file's sha256 when the run started (resume refuses a changed file)
    # the keys it was stored with, in order (empty: a request made now, written in the order above) and
    # keys this version does not know
    recorded: tuple[str, ...] = field(default=(), compare=False, repr=False)
    other: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def error_policy(self) -> OnError:
        """--on-error: 'stop' (also for runs that recorded none) or 'continue'."""
        return next((p for p in ON_ERROR if p == self.on_error), "stop")

    @property
    def straggler_margin(self) -> float:
        """--straggler-margin in percent (the default for runs that recorded none)."""
        v = self.straggler_margin_pct
        return DEFAULT_STRAGGLER_MARGIN_PCT if v is None else float(v)

    def with_suite_options(self, values: Mapping[str, Any]) -> RunRequest:
        return dataclasses.replace(self, suite_options=dict(values))

    # ------------------------------------------------------------ stored form

    def to_dict(self) -> dict[str, Any]:
        """The stored form (run.json's "options"): the keys it was loaded with, or every key that applies."""
        keys = self.recorded or (*_CORE_KEYS, *(k for k in _LATER_KEYS if self._set(k)), *self.other)
        return {k: self._stored_value(k) for k in keys}

    def _set(self, key: str) -> bool:
        return bool(self.device_settings) if key == "device_settings" else getattr(self, key) is not None

    def _stored_value(self, key: str) -> Any:
        if key in self.other:
            return self.other[key]
        if key == "target_specs":
            return list(self.target_specs)
        if key == "suite_options":
            return dict(self.suite_options)
        if key == "device_settings":
            ds = self.device_settings
            return {"write_cache": ds.write_cache, "power_state": ds.power_state}
        return getattr(self, key)

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> RunRequest:
        """A request from its stored form (any schema: keys missing in older runs read as 'not recorded')."""
        known = {f.name for f in dataclasses.fields(RunRequest)} - {"recorded", "other"}
        specs = d.get("target_specs") or ()
        return RunRequest(
            suite=str(d.get("suite") or ""), target_specs=tuple(str(s) for s in specs),
            size=d.get("size"), capacity=d.get("capacity"), ioengine=d.get("ioengine") or "libaio",
            runtime_s=d.get("runtime_s"), ramp_s=d.get("ramp_s"), suite_options=dict(d.get("suite_options") or {}),
            footprint=d.get("footprint"), misalign=d.get("misalign"), on_error=d.get("on_error"),
            straggler_margin_pct=d.get("straggler_margin_pct"), hosts=d.get("hosts"),
            device_settings=DeviceSettings.from_dict(d.get("device_settings") or {}),
            suite_digest=d.get("suite_digest"), recorded=tuple(d),
            other={k: v for k, v in d.items() if k not in known})
