"""The write gate: whether a run writes, whether it may, and the last check before fio starts.

1. `decide` expands the run the way it will execute (every point of the plan after --axis, phases, suite-file
   options, --footprint/--misalign; purge steps; the target's file layout) and builds each point's real fio
   job: the run writes if any of them writes, trims or changes the target. What a suite declares plays no
   part.
2. `assess` / `authorize` turn the target's hazards into a refusal (exit 4) or a consent step (typed-back name
   or --yes) and return a `WriteGrant`. `ssdlab plan` shows the same assessment and exits 4 when the run
   would be refused.
3. The grant goes with the run: the fio boundary (`fio.runner.run_job`) calls `WriteGrant.check_job` on every
   job before writing it out and starting fio, and the orchestrator calls `WriteGrant.require` before a purge
   or a file layout. A job that writes in a run that was not authorized to write, a job that opens anything
   but the target (a relative filename, a path that no longer names the device number or inode the run was
   set up for: targets/identity.py), an engine that is not a plain read/write one, I/O past the span consent
   named (fio's offset + size, or the highest byte an iolog replay addresses), or a write to a device that
   became busy since the run started is refused with exit 4.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from ssdlab.errors import UnsafeTargetError
from ssdlab.fio.job import FioJob, OptionValue
from ssdlab.fio.options import (
    LOCAL_ENGINES,
    PATH_OR_COMMAND_OPTIONS,
    READ_ENGINES,
    SSDLAB_LOG_OPTIONS,
    replay_input_ok,
)
from ssdlab.suites.base import PlanContext, Suite, apply_common
from ssdlab.targets.base import Hazard, Target
from ssdlab.targets.identity import Identity


class Console(Protocol):
    """Where consent is asked (cli.Env)."""

    stdin: IO[str]
    stderr: IO[str]

    def err(self, text: str) -> None: ...

    def interactive(self) -> bool: ...


@dataclass(frozen=True)
class WriteDecision:
    """Whether a run writes, from its fully expanded points: the first thing found that writes ('' when the
    run only reads)."""

    reason: str = ""
    destroys: bool = True  # False: a write-class change that destroys no data (drive settings for the run)

    @property
    def writes(self) -> bool:
        return bool(self.reason)

    def summary(self) -> str:
        return self.reason or "no point writes"


def decide(suite: Suite, ctx: PlanContext, target: Target) -> WriteDecision:
    """Whether the run of `suite` on `target` writes: the target's own layout, then every planned point (the
    worst case of adaptive suites) as it will run, purge steps included. Stops at the first write."""
    layout = target.layout_writes()
    if layout:
        return WriteDecision(f"layout {layout}")
    for planned in suite.plan(ctx):
        point = apply_common(ctx, planned)
        if point.phase == "purge":
            return WriteDecision(f"point {point.id}: purges {target.name}")
        why = target.point_writes(point)  # fio targets: from the job it becomes (a host group's, per host)
        if why:
            return WriteDecision(f"point {point.id}: {why}")
    return WriteDecision()


@dataclass(frozen=True)
class Assessment:
    """The target's hazards and, when a write run must be refused, the one-line reason."""

    hazards: tuple[Hazard, ...]
    refusal: str = ""
    needs_consent: bool = False

    @property
    def blocking(self) -> list[Hazard]:
        return [h for h in self.hazards if h.blocking]


def assess(target: Target, *, destructive: bool) -> Assessment:
    """Blocking hazards refuse always; the others (partitions, signatures) unless --destructive."""
    hazards = tuple(target.hazards())
    blocking = [h for h in hazards if h.blocking]
    if blocking:
        return Assessment(hazards, f"refusing to write to {target.name}: {blocking[0].text}; no flag overrides "
                                   "this (ssdlab never writes to a device in use or read-only)")
    if hazards and not destructive:
        return Assessment(hazards, f"refusing to write to {target.name}: {hazards[0].text}; pass --destructive "
                                   "if its contents may be destroyed")
    return Assessment(hazards, needs_consent=target.needs_write_consent())


def authorize(target: Target, decision: WriteDecision, *, destructive: bool, yes: bool,
              console: Console) -> WriteGrant:
    """The one consent step: refuse (exit 4), ask, or grant. A read-only run gets a grant that writes nothing."""
    if not decision.writes:
        return WriteGrant(target, writes=False)
    a = assess(target, destructive=destructive)
    if a.refusal:
        relevant = a.blocking or list(a.hazards)
        for h in relevant[1:]:  # each hazard on its own line; the error line names the first
            console.err(f"  ! {h.text}")
        raise UnsafeTargetError(a.refusal)
    if not a.needs_consent:
        return WriteGrant(target, writes=True)
    if decision.destroys:
        console.err(f"WARNING: this run will destroy {target.destroys()}")
    for h in a.hazards:
        console.err(f"  ! {h.text}")
    if yes:
        return WriteGrant(target, writes=True)
    if not console.interactive():
        raise UnsafeTargetError(f"writing to {target.name} needs confirmation: run interactively, or pass --yes "
                                f"after checking the {'device' if target.is_device else 'target'}")
    expected = target.consent_name()
    console.stderr.write(f"Type the device name ({expected}) to confirm: " if target.is_device else
                         f"Type the file name ({expected}) to confirm: ")
    console.stderr.flush()
    answer = console.stdin.readline().strip()
    if answer not in (expected, target.name):
        raise UnsafeTargetError(f"confirmation {answer!r} does not match {expected!r}: nothing was written")
    return WriteGrant(target, writes=True)


@dataclass(frozen=True)
class WriteGrant:
    """What a run was authorized to do on its target; checked at the fio boundary and before purge/layout."""

    target: Target
    writes: bool

    def require(self, what: str) -> None:
        """Before a write that is not a fio job (purge, file layout)."""
        if not self.writes:
            raise UnsafeTargetError(f"refusing to {what}: this run was not authorized to write to "
                                    f"{self.target.name}")
        for ident in self.target.identities():  # a purge or layout writes by the same path fio opens
            why = ident.mismatch(ident.path)
            if why:
                raise UnsafeTargetError(f"refusing to {what} on {self.target.name}: {why}")
        self._still_safe(what)

    def check_job(self, job: FioJob, where: Path | None = None) -> None:
        """The last check before fio starts: the job opens only the target, as the target set it up, and writes
        only when the run was authorized to write (and the target is still not in use). `where`: the directory
        fio runs in, where an iolog replay's bare-named iologs are (fio/replay.py)."""
        devices = self.target.device_fio_options()
        for section in job.jobs:
            self._check_section(section.name, {**job.global_options, **section.options}, devices, where)
        for ident in self.target.identities():  # what a job reaches by other means than a filename (a socket)
            why = ident.mismatch(ident.path) if ident.kind == "socket" else ""
            if why:
                raise UnsafeTargetError(f"refusing to start fio: it would not reach what the run was set up for: "
                                        f"{why}")
        reasons = job.writes()
        if reasons and not self.writes:
            raise UnsafeTargetError(f"refusing to start fio: its job {reasons[0]}, but this run was not "
                                    f"authorized to write to {self.target.name}")
        if reasons:
            self._still_safe("start a writing fio job")
        elif not self.writes and self.target.layout_writes():
            raise UnsafeTargetError(f"refusing to start fio: {self.target.name} changed since the run started "
                                    "and fio would write to lay it out")

    def _check_section(self, name: str, opts: dict[str, OptionValue], devices: list[dict[str, OptionValue]],
                       where: Path | None) -> None:
        """One section of a job: no option that names files or runs commands, logs in the point's directory,
        placed on the target's devices as they set it up, within their span (an iolog replay's I/Os too: fio
        replays the log's offsets whatever `size` says), opening only the target."""
        spans_all = _placed_on_all(opts, devices)  # one section over every device (ACT's service threads)
        for key, value in opts.items():
            text = str(value)
            if key in SSDLAB_LOG_OPTIONS:
                if "/" in text or text.startswith("."):
                    raise UnsafeTargetError(f"refusing to start fio: job [{name}] writes its {key} outside the "
                                            f"point's directory ({text})")
            elif key in PATH_OR_COMMAND_OPTIONS and key not in ("filename", "ioengine") and not (
                    spans_all and key == "file_service_type" and text == "random") and not (
                    replay_input_ok(key, text, opts)):  # an iolog replay's, as fio/replay.py sets them
                raise UnsafeTargetError(f"refusing to start fio: job [{name}] sets {key}={text}, which names files, "
                                        "runs commands or changes the host")
        if not spans_all and not any(_placed_on(opts, dev) for dev in devices):
            raise UnsafeTargetError(f"refusing to start fio: job [{name}] does not run on {self.target.name} as the "
                                    f"target set it up (filename {opts.get('filename', '-')}, ioengine "
                                    f"{opts.get('ioengine', '-')})")
        beyond = _beyond_span(opts, devices, spans_all) or _replay_beyond(opts, devices, where)
        if beyond:
            raise UnsafeTargetError(f"refusing to start fio: job [{name}] {beyond} of {self.target.name}")
        self._check_opens(name, opts)

    @contextlib.contextmanager
    def holding(self, job: FioJob, where: Path | None = None) -> Iterator[None]:
        """`check_job`, then every block device the job opens held open (read-only) until the block ends, fio's
        whole run: each is checked again through the open file (its number and the disk behind it, sysfs
        `diskseq`), and while it stays open the kernel neither detaches a loop device (a detach waits for the
        last close, so no other file can be attached under the same name) nor gives its number to another disk.
        fio opens it by its canonical path, which only root can change (/dev, or a directory `hazards()`
        found no other user can change), so fio opens exactly the device checked here. `where` as for
        `check_job`."""
        self.check_job(job, where)
        held: list[int] = []
        try:
            for ident in _named_devices(job, self.target.identities()):
                try:
                    fd = os.open(ident.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
                except OSError as exc:
                    raise UnsafeTargetError(f"refusing to start fio: {ident.path} cannot be opened to check it "
                                            f"({exc.strerror or exc})") from exc
                held.append(fd)
                why = ident.opened_differs(fd)
                if why:
                    raise UnsafeTargetError(f"refusing to start fio: it would not open what the run was set up "
                                            f"for: {why}")
            yield
        finally:
            for fd in held:
                os.close(fd)

    def _check_opens(self, name: str, opts: dict[str, OptionValue]) -> None:
        """What the section opens is what the run was set up for: a plain engine, absolute filenames (fio runs in
        the point's directory), each still the device number or inode the target resolved (identity.py)."""
        engine = opts.get("ioengine")
        if engine is not None and str(engine) not in LOCAL_ENGINES | READ_ENGINES:
            raise UnsafeTargetError(f"refusing to start fio: job [{name}] uses ioengine={engine}, which is not a "
                                    "plain read/write engine")
        if "filename" not in opts:
            return
        idents = {i.path: i for i in self.target.identities()}
        for path in fio_filenames(opts["filename"]):
            if not path.startswith("/"):
                raise UnsafeTargetError(f"refusing to start fio: job [{name}] names the relative path {path}, "
                                        "which fio would open inside the point's directory")
            ident = idents.get(path)
            if ident is None:
                if idents:
                    raise UnsafeTargetError(f"refusing to start fio: job [{name}] opens {path}, which is not "
                                            f"{self.target.name}")
                continue
            why = ident.mismatch(path)
            if why:
                raise UnsafeTargetError(f"refusing to start fio: job [{name}] would not open what the run was "
                                        f"set up for: {why}")

    def _still_safe(self, what: str) -> None:
        hazards = self.target.blocking_hazards()
        if hazards:
            raise UnsafeTargetError(f"refusing to {what} on {self.target.name}: {hazards[0].text} "
                                    "(found just before writing)")


def _named_devices(job: FioJob, idents: list[Identity]) -> list[Identity]:
    """The block-device identities among the files `job` names (each once, in the order named)."""
    devices = {i.path: i for i in idents if i.kind == "block"}
    out: dict[str, Identity] = {}
    for section in job.jobs:
        value = {**job.global_options, **section.options}.get("filename")
        for path in fio_filenames(value) if value is not None else []:
            if path in devices:
                out.setdefault(path, devices[path])
    return list(out.values())


def fio_filenames(value: OptionValue) -> list[str]:
    """The paths a fio `filename` value names: split at unescaped ':' (fio/job.escape_filename), unescaped."""
    return [part.replace("\\:", ":") for part in re.split(r"(?<!\\):", str(value))]


def _placed_on(opts: dict[str, OptionValue], device: dict[str, OptionValue]) -> bool:
    """Whether a job section runs on `device` exactly as the target's options place it."""
    if "filename" not in device and "filename" in opts:
        return False
    for key, want in device.items():
        have = opts.get(key)
        if key == "size":
            if have is None or int(have) > int(want):
                return False
        elif key == "ioengine":
            if have != want and not (have in LOCAL_ENGINES and want in LOCAL_ENGINES):
                return False
        elif have != want:
            return False
    return True


def _placed_on_all(opts: dict[str, OptionValue], devices: list[dict[str, OptionValue]]) -> bool:
    """Whether a job section runs on every device of the target at once, as fio/job.py builds ACT's service
    threads: the devices' filenames joined by ':' in target order, each device's other options, and a span
    no larger than the smallest device's on each (fio splits `size` evenly over the files)."""
    if len(devices) < 2 or any("filename" not in d for d in devices):
        return False
    if opts.get("filename") != ":".join(str(d["filename"]) for d in devices):
        return False
    sizes = [int(d["size"]) for d in devices if "size" in d]
    if sizes and (opts.get("size") is None or int(opts["size"]) > min(sizes) * len(devices)):
        return False
    single = {k: v for k, v in opts.items() if k not in ("filename", "size")}
    return all(_placed_on({**single, "filename": d["filename"], **({"size": min(sizes)} if sizes else {})}, d)
               for d in devices)


def span_problems(job: FioJob, devices: list[dict[str, OptionValue]]) -> list[str]:
    """Why sections of `job` would reach past the span their device was set up with (offset + size beyond the
    device's `size`: past --capacity on a device, or extending a file target), one line per section; the
    pre-flight check refuses such a plan before anything exists, `WriteGrant.check_job` refuses such a job."""
    out = []
    for section in job.jobs:
        opts = {**job.global_options, **section.options}
        why = _beyond_span(opts, devices, _placed_on_all(opts, devices))
        if why:
            out.append(f"job [{section.name}] {why}")
    return out


def _replay_beyond(opts: dict[str, OptionValue], devices: list[dict[str, OptionValue]], where: Path | None) -> str:
    """'' unless the section replays an iolog that addresses bytes past the span of the device it runs on: fio
    3.33 issues a log's I/Os at the log's offsets (replay_redirect changes the file, not the offsets; `size`
    bounds nothing), so the log itself is read (bare names in `where`, fio's working directory) and its
    highest byte, plus any `offset`, must stay within the device's `size`."""
    log = opts.get("read_iolog")
    if log is None:
        return ""
    placed = next((d for d in devices if _placed_on(opts, d)), None)
    if placed is None:  # a section over several devices: fio/replay.py gives each device its own
        return f"replays {log} over several devices at once, which the write gate cannot bound"
    if "size" not in placed:
        return ""  # a device without a span (fio's null engine)
    limit = _whole(placed["size"])
    path = Path(str(log))
    if not path.is_absolute():
        if where is None:
            return f"replays {log}, an iolog the write gate was not shown"
        path = where / path
    from ssdlab.errors import UsageError
    from ssdlab.trace.formats import read_iolog

    try:
        end = read_iolog(str(path), path.read_bytes()).max_end
    except (OSError, UsageError) as exc:
        return f"replays {log}, which the write gate cannot read ({exc})"
    offset = _whole(opts.get("offset", 0))
    if limit is None or offset is None:
        return "replays an iolog on a device whose span cannot be bounded"
    if offset + end > limit:
        return (f"replays I/O up to byte {offset + end} ({log}), past the first {limit} bytes the run may "
                "use")
    return ""


def _whole(value: OptionValue | None) -> int | None:
    """A byte count or offset as ssdlab writes them (a plain integer); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    return int(text) if text.isdigit() else None


def _beyond_span(opts: dict[str, OptionValue], devices: list[dict[str, OptionValue]], spans_all: bool) -> str:
    """'' when the section's I/O stays inside the span of the device it runs on (fio's offset + size, per file
    for a section over every device, at most the device's `size`); else what it reaches."""
    if spans_all:
        limits = [_whole(d.get("size")) for d in devices]
        files = len(devices)
    else:
        placed = next((d for d in devices if _placed_on(opts, d)), None)
        limits = [_whole(placed.get("size"))] if placed is not None and "size" in placed else []
        files = 1
    if not limits:
        return ""
    if any(limit is None for limit in limits):
        return "runs on a device whose span cannot be bounded"
    limit = min(int(lim) for lim in limits if lim is not None)
    offset = _whole(opts.get("offset", 0))
    size = _whole(opts.get("size", limit * files))
    if offset is None or size is None:
        return (f"sets offset={opts.get('offset', 0)} size={opts.get('size', '-')}, which the write gate cannot "
                "bound")
    end = offset + size // files
    if end > limit:
        return (f"reaches byte {end} (offset {offset} + size {size // files}), past the first {limit} bytes the "
                "run may use")
    return ""

