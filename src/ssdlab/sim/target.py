"""SimTarget: the simulated drive as a Target. It owns the model's state for the length of a run.

State persistence: the drive state lives in the native Device object for the run; after every point the
executor also writes it to <run_dir>/sim-state.bin (+ sim-state.json), and a fresh SimTarget (after
`ssdlab resume`) reloads it before its first point, unless the run purged the drive after that save.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab import atomic
from ssdlab.errors import TargetError
from ssdlab.sim import core
from ssdlab.sim.presets import DEFAULT_PRESET, PRESETS, core_params, resolve
from ssdlab.targets.base import Target, TargetOptions
from ssdlab.units import format_bytes

STATE_FILE = "sim-state.bin"
STATE_META = "sim-state.json"
PURGE_METHOD = "sim-reset"
MODEL_NOTE = ("simulated SSD: results come from ssdlab's model and show mechanisms and ratios "
              "(write amplification, GC, OP, IU, power cap), not a real drive's absolute numbers")


@dataclass
class SimTarget(Target):
    preset: str = DEFAULT_PRESET
    overrides: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    _device: Any = field(default=None, repr=False)
    _session: bool = field(default=False, repr=False)  # True once this process ran, loaded or purged
    _laid_out: bool = field(default=False, repr=False)

    @classmethod
    def from_spec(cls, rest: str, params: dict[str, str], opts: TargetOptions) -> SimTarget:
        """Build from `sim:PRESET?k=v` (UsageError on unknown presets/keys/values)."""
        preset = rest or DEFAULT_PRESET
        values = resolve(preset, params)
        query = "&".join(f"{k}={v}" for k, v in params.items())
        spec = f"sim:{preset}" + (f"?{query}" if query else "")
        return cls(spec=spec, kind="sim", options=opts, preset=preset, overrides=dict(params), values=values)

    # ------------------------------------------------------------------ Target interface

    @property
    def name(self) -> str:
        return self.spec

    def user_capacity(self) -> int:
        """Host-visible capacity of the modelled drive."""
        return int(self.values["capacity"])

    def capacity(self) -> int:
        cap = self.user_capacity()
        if self.options.capacity:
            cap = min(cap, self.options.capacity)
        return cap - cap % 4096

    def engine(self) -> str:
        return "sim"

    def logical_block_size(self) -> int:
        return 512

    def destroys(self) -> str:
        return "nothing real (the simulated drive's state only)"

    def purge_methods(self) -> list[str]:
        return [PURGE_METHOD]

    def purge(self, method: str) -> str:
        if method not in ("", PURGE_METHOD):
            raise TargetError(f"{self.name} cannot be purged with {method!r}: use {PURGE_METHOD}")
        self.device().reset()
        self._session = True
        return "simulated drive reset to fresh-out-of-box (every LBA unmapped, all blocks erased and free)"

    def set_write_cache(self, enabled: bool) -> str:
        want = "enabled" if enabled else "disabled"
        return (f"write cache: not applicable (requested {want}; the model's write buffer is power-loss "
                "protected, so nothing volatile is cached)")

    def prepare(self, writes: bool) -> list[str]:
        dev = self.device()
        if int(self.values["layout"]) and not self._session and not self._laid_out:
            dev.fill(0, self.user_capacity() // int(self.values["iu"]))
            self._laid_out = True
            return [f"simulated drive laid out: {format_bytes(self.user_capacity())} written once sequentially "
                    "(like a file target's layout; purge returns it to fresh-out-of-box)"]
        return []

    def info(self) -> dict[str, Any]:
        g = self.geometry()
        iu = int(self.values["iu"])
        raw = g["blocks"] * g["slots_per_block"] * iu
        params = dict(self.values)
        return {
            "spec": self.spec, "kind": "sim", "name": f"simulated SSD ({self.preset})",
            "capacity_bytes": self.capacity(), "logical_block_size": 512, "physical_block_size": iu,
            "identity": {"model": f"ssdlab sim {self.preset}", "preset": PRESETS[self.preset].summary,
                         "raw_capacity": format_bytes(raw),
                         "implied_op": f"{100.0 * (raw / self.user_capacity() - 1):.1f}%"},
            "write_safe": True, "safety": [], "note": MODEL_NOTE,
            "sim": {"preset": self.preset, "overrides": dict(self.overrides), "params": params,
                    "geometry": g, "raw_capacity_bytes": raw},
        }

    # ------------------------------------------------------------------ model state

    def device(self) -> Any:
        """The native Device (created on first use)."""
        if self._device is None:
            try:
                self._device = core().Device(core_params(self.values))
            except (ValueError, MemoryError) as exc:
                raise TargetError(f"cannot build the simulated drive {self.spec}: {exc}") from exc
        return self._device

    def geometry(self) -> dict[str, int]:
        """Derived geometry (blocks, slots per block, dies, ...)."""
        g: dict[str, int] = self.device().geometry()
        return g

    def begin_session(self, run_dir: Path) -> str:
        """Before the first point of this process: reload the run's saved drive state when it applies."""
        if self._session:
            return ""
        self._session = True
        state, meta = run_dir / STATE_FILE, run_dir / STATE_META
        purged_after = _purged_after(run_dir, _saved_point(meta))
        if state.exists() and not purged_after:
            try:
                info = json.loads(meta.read_text(encoding="utf-8")) if meta.exists() else {}
                if info.get("spec") not in (None, self.spec):
                    return f"saved drive state belongs to {info.get('spec')}; starting from this target's state"
                self.device().load(state.read_bytes())
            except (OSError, ValueError) as exc:
                raise TargetError(f"cannot reload the simulated drive state {state}: {exc}; "
                                  "delete it to restart the drive from its initial state") from exc
            return f"simulated drive state reloaded from {state.name} (saved after {info.get('point', '?')})"
        if purged_after:
            self.device().reset()
            return "simulated drive purged earlier in this run: continuing from fresh-out-of-box"
        return ""

    def save_state(self, run_dir: Path, point_id: str) -> None:
        """Write the drive state after `point_id` (atomically) so a resumed run continues from it."""
        atomic.write_bytes(run_dir / STATE_FILE, self.device().save())
        atomic.write_text(run_dir / STATE_META, json.dumps({"spec": self.spec, "point": point_id}) + "\n")


def _saved_point(meta: Path) -> str | None:
    try:
        point = json.loads(meta.read_text(encoding="utf-8")).get("point")
    except (OSError, ValueError):
        return None
    return str(point) if point else None


def _purged_after(run_dir: Path, saved_point: str | None) -> bool:
    """Whether run.json records a finished purge after the point the state was saved after."""
    from ssdlab.store import load_run

    try:
        run = load_run(run_dir)
    except Exception:  # no run.json (direct executor use): nothing to honour
        return False
    ids = [p.point.id for p in run.points]
    start = ids.index(saved_point) + 1 if saved_point in ids else 0
    return any(p.point.phase == "purge" and p.status == "ok" for p in run.points[start:])
