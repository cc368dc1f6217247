"""What ssdlab reads from and does to the drive around a run: a health snapshot before the first point and
after the last, temperature samples in between, and the write cache and power state the user asked for,
set at the start and restored at the end, whatever ends the run (completion, failure, Ctrl-C, SIGTERM).

The orchestrator calls start() before preparing the target, update() before each save and finish() in a
`finally`; finish() never raises (a restore the drive refuses becomes a run warning). Everything lands in
Run.health:
  {"available": bool, "reason": str,                       (reason: why there is no drive to ask)
   "devices": [{"path", "kind", "snapshots": [{when: before|resume|after, ...}], "samples": [...]}],
   "settings": [{"device", "setting", "requested", "original", "applied", "restored"}]}
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ssdlab.results.events import RunEvent
from ssdlab.results.model import Run
from ssdlab.results.store import now_iso
from ssdlab.targets import devsettings, drivecli, health
from ssdlab.targets.base import Target
from ssdlab.targets.drivecli import Tools

Save = Callable[[Run], None]
Note = Callable[[str], None]


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back while settings are put back (delivered right after)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    except (ValueError, OSError, AttributeError):
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _shown(change: Mapping[str, Any], key: str) -> str:
    """A setting value as people read it: NVMe feature values decoded, sysfs cache_type text as is."""
    value = change.get(key)
    if isinstance(value, int) and change.get("setting") == "write_cache":
        return "enabled" if value & 1 else "disabled"
    if isinstance(value, int):
        return f"PS{value & 0x1F}"
    return repr(value)


class DeviceSession:
    """One run's session with its drives (one object per `drive()` call: a resume starts a new one)."""

    def __init__(self, run_dir: Path, target: Target, *, tools: Tools | None = None, note: Note | None = None,
                 sample_interval_s: float = health.DEFAULT_SAMPLE_INTERVAL_S,
                 on_sample: health.SampleListener | None = None) -> None:
        self.tools = tools or drivecli.TOOLS
        self.reason = health.not_available_reason(target)
        self.devices = [] if self.reason else health.devices_of(target)
        self.snapshotter = health.Snapshotter(self.tools, raw_dir=run_dir / health.HEALTH_DIR)
        self.note = note or (lambda text: None)
        self.sample_interval_s = sample_interval_s
        self.on_sample = on_sample  # each temperature sample as it is taken (the run's live record)
        self.monitor: health.Monitor | None = None
        self.changes: list[dict[str, Any]] = []
        self.kept_settings: list[dict[str, Any]] = []  # records of earlier sessions that need no action
        self.base_samples: dict[str, list[dict[str, Any]]] = {}
        self.started = False
        self.finished = False

    # -------------------------------------------------------------- start

    def start(self, run: Run, save: Save) -> Run:
        """Snapshot every device, apply the requested settings (recording each original first), start sampling."""
        self.started = True
        state: dict[str, Any] = dict(run.health)
        if self.reason:
            state.update(available=False, reason=self.reason)
            return dataclasses.replace(run, health=state)
        entries = {str(e.get("path")): dict(e) for e in state.get("devices", []) if isinstance(e, Mapping)}
        for dev in self.devices:
            entry = entries.setdefault(dev.path, {"path": dev.path, "kind": dev.kind, "snapshots": [],
                                                  "samples": [],
                                                  **({"given": dev.given} if dev.given not in ("", dev.path) else {})})
            when = "resume" if entry["snapshots"] else "before"
            snap = self.snapshotter.snapshot(dev, when)
            entry["snapshots"] = [*entry["snapshots"], snap]
            self.base_samples[dev.path] = list(entry.get("samples", []))
            self.note(f"drive health ({when}) {dev.path}: {health.summary_line(snap)}")
            below = (snap.get("link") or {}).get("below_max")
            if below:
                run = run.with_warning(f"{dev.path}: {below}. Throughput is capped by this link, not by the drive's "
                                       "own maximum (reseat the drive, check the slot's lanes and the BIOS link "
                                       "settings)")
        state.update(available=any(s.get("available") for e in entries.values() for s in e["snapshots"]),
                     devices=list(entries.values()))
        if not state["available"]:
            reasons = {str(s.get("reason")) for e in entries.values() for s in e["snapshots"] if s.get("reason")}
            state["reason"] = "; ".join(sorted(reasons))
        run = dataclasses.replace(run, health=state)
        run = self._apply_settings(run, save)
        if any(s.get("available") for e in entries.values() for s in e["snapshots"][-1:]):
            self.monitor = health.Monitor(self.snapshotter, self.devices, self.sample_interval_s,
                                          listener=self.on_sample)
            self.monitor.start()
        return run

    def _apply_settings(self, run: Run, save: Save) -> Run:
        req = run.options.device_settings
        previous = [dict(r) for r in run.health.get("settings", []) if isinstance(r, Mapping)]
        pending = [r for r in previous if not r.get("restored")]  # left changed by a killed earlier session
        self.kept_settings = [r for r in previous if r.get("restored")]
        holder = {"run": run}

        def record(changes: list[dict[str, Any]]) -> None:
            self.changes = [*done, *changes]
            holder["run"] = self._with_settings(holder["run"])
            save(holder["run"])

        done: list[dict[str, Any]] = []
        if req:
            for lead, *also in devsettings.groups(self.devices):  # namespaces of one controller: set once
                done.extend(devsettings.apply(lead, req, self.tools, pending, record, also))
                self.changes = list(done)
            for c in done:
                text = (f"{c['setting'].replace('_', ' ')} of {devsettings.changed_devices(c)} set to "
                        f"{_shown(c, 'applied')} for this run (was {_shown(c, 'original')}); restored when the run "
                        "ends")
                self.note(text)
                holder["run"] = holder["run"].with_event(RunEvent.of(time=now_iso(), kind="device-setting", text=text))
        else:
            self.changes = pending  # nothing asked now, but an earlier session's change is still to undo
        return self._with_settings(holder["run"])

    def _with_settings(self, run: Run) -> Run:
        state = dict(run.health)
        state["settings"] = [*self.kept_settings, *self.changes]
        return dataclasses.replace(run, health=state)

    # -------------------------------------------------------------- during

    def update(self, run: Run) -> Run:
        """The run with every temperature sample taken so far."""
        if self.monitor is None:
            return run
        samples = self.monitor.samples()
        state = dict(run.health)
        devices = []
        for e in state.get("devices", []):
            entry = dict(e)
            path = str(entry.get("path"))
            if path in samples:
                entry["samples"] = [*self.base_samples.get(path, []), *samples[path]]
            devices.append(entry)
        state["devices"] = devices
        return dataclasses.replace(run, health=state)

    # -------------------------------------------------------------- finish

    def finish(self, run: Run, save: Save) -> Run:
        """Stop sampling, put settings back, take the after snapshot, save. Never raises."""
        if not self.started or self.finished:
            return run
        self.finished = True
        try:
            if self.monitor is not None:
                self.monitor.stop()
            run = self.update(run)
        except Exception as exc:  # a bug here must not cost the run its results
            run = run.with_warning(f"drive temperature samples could not be kept: {type(exc).__name__}: {exc}")
        with shielded():  # Ctrl-C waits until the drive's settings are back
            try:
                run = self._restore(run)
                run = self._restore_suite_cache(run)
            except Exception as exc:
                run = run.with_warning(f"drive settings wrap-up failed: {type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                save(run)
        try:
            run = self._after(run)
        except Exception as exc:
            run = run.with_warning(f"the after-run health snapshot failed: {type(exc).__name__}: {exc}")
        except KeyboardInterrupt:  # a second Ctrl-C during the snapshot: keep what is known and stop
            with contextlib.suppress(Exception):
                save(run.with_warning("the after-run health snapshot was interrupted"))
            raise
        with contextlib.suppress(Exception):
            save(run)
        return run

    def _restore(self, run: Run) -> Run:
        for change in self.changes:
            if change.get("restored"):
                continue
            try:
                text = devsettings.restore(change, self.tools)
                change["restored"] = True
                run = run.with_event(RunEvent.of(time=now_iso(), kind="device-setting", text=text))
                self.note(text)
            except Exception as exc:
                run = run.with_warning(f"could not restore the {change['setting'].replace('_', ' ')} of "
                                       f"{devsettings.changed_devices(change)} to {change.get('original')!r}: {exc}; "
                                       "`ssdlab resume` of this run tries again, a power cycle restores the drive's "
                                       "default")
        return self._with_settings(run)

    def _restore_suite_cache(self, run: Run) -> Run:
        """A suite that sets the write cache itself (SNIA PTS WCE/WCD at purge) leaves it as it found it too,
        unless the user asked for a setting of their own."""
        if run.options.device_settings.write_cache is not None:
            return run
        if not any(p.point.phase == "purge" and p.point.tags.write_cache in ("enabled", "disabled")
                   for p in run.points):
            return run
        for entry in run.health.get("devices", []):
            before, _ = health.first_last(entry.get("snapshots", []))
            dev = next((d for d in self.devices if d.path == entry.get("path")), None)
            if before is None or dev is None or before.get("write_cache") not in ("enabled", "disabled"):
                continue
            want_on = before["write_cache"] == "enabled"
            original: int | str = int(want_on) if dev.kind == "nvme" else devsettings.CACHE_TYPES["on" if want_on
                                                                                                    else "off"]
            change = {"device": dev.path, "node": dev.controller, "setting": "write_cache", "requested": "by the suite",
                      "original": original, "restored": False}
            try:
                text = devsettings.restore(change, self.tools)
                change["restored"] = True
                run = run.with_event(RunEvent.of(
                    time=now_iso(), kind="device-setting", text=text + " (the suite had set it for its test)",
                ))
            except Exception as exc:
                run = run.with_warning(f"could not put the write cache of {dev.path} back to {before['write_cache']} "
                                       f"after the suite changed it: {exc}")
        return run

    def _note_after(self, run: Run, entry: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> None:
        """The console's closing lines per drive: health now, and the bytes cross-check with both numbers."""
        _, after = health.first_last(entry.get("snapshots", []))
        if after is None or not after.get("available"):
            return
        self.note(f"drive health (after) {entry.get('path')}: {health.summary_line(after)}")
        for c in health.device_cross_check(run.points, entry, entries):
            test = "by the test" + (f" on {' and '.join(c['covers'])} (one controller, one counter)"
                                    if c.get("covers") else "")
            self.note(f"  bytes {c['direction']}: {test} {c['test_bytes']:,}, by the drive's own counter "
                      f"{c['drive_bytes']:,} (counted in steps of {c['resolution_bytes']:,} B)")

    def _after(self, run: Run) -> Run:
        if self.reason:
            return run
        state = dict(run.health)
        devices = []
        for e in state.get("devices", []):
            entry = dict(e)
            dev = next((d for d in self.devices if d.path == entry.get("path")), None)
            if dev is not None:
                entry["snapshots"] = [*entry.get("snapshots", []), self.snapshotter.snapshot(dev, "after")]
            devices.append(entry)
        for entry in devices:
            self._note_after(run, entry, devices)
        state["devices"] = devices
        return dataclasses.replace(run, health=state)
