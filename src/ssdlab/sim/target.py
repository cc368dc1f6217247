"""SimTarget: the simulated drive as a Target. It owns the model's state for the length of a run.

State persistence: the drive state lives in the native Device object for the run. Now and then (before a
point, at most every CHECKPOINT_S seconds) the executor writes it to <run_dir>/sim-state.bin (+ sim-state.json
naming the last point it includes). A fresh SimTarget (after `ssdlab resume`) reloads that checkpoint and
replays the run's finished points after it: the model is deterministic, so the drive ends up exactly where
the last finished point left it, while a point costs no state write of its own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssdlab.errors import TargetError
from ssdlab.results import atomic
from ssdlab.results.model import PointResult
from ssdlab.sim import core
from ssdlab.sim.executor import translate
from ssdlab.sim.presets import DEFAULT_PRESET, PRESETS, REVIEWS, calibration, core_params, resolve
from ssdlab.targets.base import Target, TargetOptions
from ssdlab.units import format_bytes

if TYPE_CHECKING:
    from ssdlab.fio.runner import JobGate
    from ssdlab.results.model import TestPoint
    from ssdlab.targets.base import Executor

STATE_FILE = "sim-state.bin"
STATE_META = "sim-state.json"
PURGE_METHOD = "sim-reset"
CHECKPOINT_S = 10.0  # at most this much simulation is replayed on resume (more when a save itself is slow)
CHECKPOINT_SHARE = 0.05  # checkpoints take at most this share of the time
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
    _resumed_from: Path | None = field(default=None, repr=False)  # the saved state a resumed run reloads
    _after: str = field(default="", repr=False)  # the last point whose effect the device holds ("" none yet)
    _saved_at: float | None = field(default=None, repr=False)  # monotonic time of the last checkpoint
    _save_cost: float = field(default=0.0, repr=False)  # seconds the last checkpoint took

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

    fio_here = False  # a model: no host CPU submits its I/O, and it does not join a run on several devices

    def executor(self, gate: JobGate) -> Executor:
        """The model runs the points (no fio job, so no write gate to pass); trace replays natively."""
        from ssdlab.sim.replay import ReplayingExecutor

        return ReplayingExecutor()

    def point_writes(self, point: TestPoint) -> str:
        writes = point.workload.writes or any(s.writes for s in point.streams)
        return f"rw={point.workload.rw} writes" if writes else ""

    def check_point(self, point: TestPoint) -> None:
        """The point translated for the model once (a workload it cannot take fails here, in one line)."""
        if not point.streams:
            translate(point, self.capacity(), 0)

    def health_unavailable(self) -> str:
        return "a simulated drive has no health log or link (its wear is in the simulator's own results)"

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

    def resuming(self, run_dir: Path) -> None:
        self._resumed_from = saved_state(run_dir, self.spec)

    def prepare(self, writes: bool) -> list[str]:
        if self._resumed_from is not None:  # begin_session reloads it: a layout now would be overwritten
            return [f"simulated drive: not laid out again, its state is reloaded from {self._resumed_from.name} "
                    "before the first point"]
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
        review = REVIEWS.get(self.preset)
        source = {"source_review": review[0], "validate_worst_ratio": f"{review[1]:.2f}"} if review else {}
        return {
            "spec": self.spec, "kind": "sim", "name": f"simulated SSD ({self.preset})",
            "capacity_bytes": self.capacity(), "logical_block_size": 512, "physical_block_size": iu,
            "identity": {"model": f"ssdlab sim {self.preset}", "preset": PRESETS[self.preset].summary,
                         "raw_capacity": format_bytes(raw),
                         "implied_op": f"{100.0 * (raw / self.user_capacity() - 1):.1f}%", **source},
            "write_safe": True, "safety": [], "note": f"{MODEL_NOTE}. {calibration(self.preset)}",
            "sim": {"preset": self.preset, "overrides": dict(self.overrides), "params": params,
                    "geometry": g, "raw_capacity_bytes": raw, "calibration": calibration(self.preset)},
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

    def begin_session(self, run_dir: Path, replay: Callable[[PointResult], None] | None = None) -> str:
        """Before the first point of this process: put the drive where the run's last finished point left it.

        Reloads the run's checkpoint (unless it belongs to another target), then replays the finished points
        recorded after it: a purge resets the drive, a measured point runs again through `replay` (the
        executor's simulation, recording nothing). Returns a note for the point's record ("" when there was
        nothing to restore)."""
        if self._session:
            return ""
        self._session = True
        state, meta = run_dir / STATE_FILE, run_dir / STATE_META
        notes = []
        after = ""
        if state.exists():
            try:
                info = json.loads(meta.read_text(encoding="utf-8")) if meta.exists() else {}
                if info.get("spec") not in (None, self.spec):
                    return f"saved drive state belongs to {info.get('spec')}; starting from this target's state"
                self.device().load(state.read_bytes())
            except (OSError, ValueError) as exc:
                raise TargetError(f"cannot reload the simulated drive state {state}: {exc}; "
                                  "delete it to restart the drive from its initial state") from exc
            after = str(info.get("point") or "")
            notes.append(f"simulated drive state reloaded from {state.name} (saved after {after or 'no point'})")
        later = _finished_after(run_dir, after)
        if later is None:
            raise TargetError(f"the simulated drive state {state} was saved after point {after}, which this run "
                              "does not hold: delete it to replay the run from the drive's initial state")
        resets = simulated = 0
        for pr in later:
            if pr.point.phase == "purge":
                self.device().reset()
                resets += 1
            elif pr.measurement is not None and replay is not None:
                replay(pr)
                simulated += 1
            self._after = pr.point.id
        if resets or simulated:
            notes.append(f"replayed the {resets + simulated} finished point(s) after it ({simulated} simulated, "
                         f"{resets} purge(s) to fresh-out-of-box): the model is deterministic, so the drive is "
                         "where the last finished point left it")
        self._after = self._after or after
        return "; ".join(notes)

    def note_point(self, point_id: str) -> None:
        """The device now holds the effect of `point_id` (the executor calls this after each simulated point)."""
        self._after = point_id

    def checkpoint(self, run_dir: Path, *, force: bool = False) -> bool:
        """Write the drive state (atomically) when one is due: the first time in this process, then at most
        every CHECKPOINT_S seconds and at most CHECKPOINT_SHARE of the time. Returns whether it wrote."""
        now = time.monotonic()
        gap = max(CHECKPOINT_S, self._save_cost / CHECKPOINT_SHARE if CHECKPOINT_SHARE else 0.0)
        if not force and self._saved_at is not None and now - self._saved_at < gap:
            return False
        self.save_state(run_dir, self._after)
        self._saved_at = time.monotonic()
        self._save_cost = self._saved_at - now
        return True

    def save_state(self, run_dir: Path, point_id: str) -> None:
        """Write the drive state, which holds the effect of every point up to `point_id`, atomically."""
        atomic.write_bytes(run_dir / STATE_FILE, self.device().save())
        atomic.write_text(run_dir / STATE_META, json.dumps({"spec": self.spec, "point": point_id}) + "\n")


def _finished_after(run_dir: Path, after: str) -> list[PointResult] | None:
    """The finished points the run recorded after point `after` (all of them for ""), in run order; None
    when the run does not hold `after`. No stored run (the executor used directly): none."""
    from ssdlab.results.store import load_run

    try:
        run = load_run(run_dir)
    except Exception:  # no run.json: nothing to honour
        return []
    ids = [p.point.id for p in run.points]
    if after and after not in ids:
        return None
    start = ids.index(after) + 1 if after else 0
    return [p for p in run.points[start:] if p.status == "ok"]


def saved_state(run_dir: Path, spec: str) -> Path | None:
    """The drive state a run in `run_dir` saved for this target (None: none, or another target's)."""
    state, meta = run_dir / STATE_FILE, run_dir / STATE_META
    if not state.exists():
        return None
    try:
        info = json.loads(meta.read_text(encoding="utf-8")) if meta.exists() else {}
    except (OSError, ValueError):
        return state  # begin_session reports what is wrong with it
    return state if info.get("spec") in (None, spec) else None
