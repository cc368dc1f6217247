"""The Target interface shared by every kind of target, and the Executor interface that runs points on one.

What differs between kinds is behaviour of the kind, never a test of its `kind` string elsewhere: which
executor runs its points (`executor`), whether a point writes (`point_writes`), what a plan may ask of it
(`check_point`, `aligned_io`), how it takes part in several-device runs (`fio_here`, `ceiling_twin`), why it has no
drive health (`health_unavailable`), and what `resume` parses to open it again (`resume_spec`).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ssdlab.fio.job import OptionValue
from ssdlab.results.model import Measurement, TestPoint

if TYPE_CHECKING:
    from ssdlab.fio.runner import JobGate
    from ssdlab.results.live import LiveCallback, SampleCallback
    from ssdlab.targets.identity import Identity


@dataclass(frozen=True)
class TargetOptions:
    """User choices that shape a target: file size, capacity limit, I/O engine."""

    size: int | None = None  # size of a file target to create (file:PATH?size= wins)
    capacity: int | None = None  # use only this many bytes of the target (scaled runs, footprint)
    ioengine: str = "libaio"


@dataclass(frozen=True)
class Hazard:
    """A reason writing to the target would destroy something. `blocking` ones no flag overrides."""

    text: str
    blocking: bool = False


@dataclass
class Target(ABC):
    spec: str
    kind: str  # recorded in run.json and shown; behaviour belongs to the kind's class, not to tests of this
    options: TargetOptions = field(default_factory=TargetOptions)

    # its points run through fio on this host: this host's CPUs submit their I/O (the orchestrator samples
    # them), and it can be one of several devices run at once (targets/multi.py)
    fio_here: ClassVar[bool] = True

    @property
    @abstractmethod
    def name(self) -> str:
        """Short name for messages and report headers."""

    @abstractmethod
    def capacity(self) -> int:
        """Bytes the tests may address (after any --capacity limit)."""

    @abstractmethod
    def info(self) -> dict[str, Any]:
        """Identity, capacity, block sizes and safety, as recorded in run.json."""

    def fio_options(self) -> dict[str, OptionValue]:
        """Options that point fio at this target (filename, engine, direct, size)."""
        return {}

    def device_fio_options(self) -> list[dict[str, OptionValue]]:
        """fio options of each device behind the target (one; a multi-device target lists each member)."""
        return [self.fio_options()]

    def identities(self) -> list[Identity]:
        """What each local path behind the target names (targets/identity.py), resolved once when the target was
        made: the write gate compares every job's filename with them before fio starts. Empty: the target opens
        no local path (null, NBD, the simulator, a host group's remote devices)."""
        return []

    def fingerprint(self) -> list[dict[str, Any]]:
        """What the run stores (run.json target.fingerprint) to recognise each local device or file behind the
        target when it is resumed: per device, its target string (`spec`) and its identity's record
        (identity.Identity.record). Empty: nothing local to recognise (null, NBD, the simulator, host groups)."""
        return [{"spec": t.spec, **i.record()} for t in self.each_device() for i in t.identities()]

    def changed_since(self, stored: Sequence[Any]) -> str:
        """'' when every device or file behind the target is the one the run recorded (`fingerprint`, matched
        by target string; devices the run went on without and runs stored before fingerprints are not
        compared); else one line naming the first that is not."""
        recorded = {str(r.get("spec")): r for r in stored if isinstance(r, Mapping)}
        for t in self.each_device():
            for ident in t.identities():
                was = recorded.get(t.spec)
                if was is None:
                    continue
                why = ident.changed_since(was)
                if why:
                    what = "device" if "block" in (ident.kind, was.get("kind")) else "file"
                    return (f"{t.spec} is not the {what} the run started on ({why}): resume the run on that "
                            f"{what}, or start a new run")
        return ""

    def identity_keys(self) -> list[tuple[object, ...]]:
        """What makes two targets one (a device's number, a file's inode, an export's address): several targets
        of one run must all differ (targets/multi.py)."""
        return [i.key for i in self.identities()]

    def hazards(self) -> list[Hazard]:
        """Why writing would destroy data someone may want (empty: nothing beyond the target itself)."""
        return []

    def blocking_hazards(self) -> list[Hazard]:
        """The hazards no flag overrides, from kernel state only (cheap: re-checked before every writing job)."""
        return [h for h in self.hazards() if h.blocking]

    def layout_writes(self) -> str:
        """What prepare() would write before the first point ('' when nothing), e.g. creating a file."""
        return ""

    def destroys(self) -> str:
        """One line saying what a write suite will overwrite."""
        return f"all data in {self.name}"

    def needs_write_consent(self) -> bool:
        """Whether a write suite must be confirmed (typed-back name or --yes)."""
        return False

    def prepare(self, writes: bool) -> list[str]:
        """Make the target ready (e.g. lay out a file); returns notes for the run record."""
        return []

    def resuming(self, run_dir: Path) -> None:
        """Before prepare(): the run in `run_dir` is being resumed (a target whose state the run saved, the
        simulator's, restores it instead of preparing afresh); default nothing."""
        return None

    def check_space(self) -> None:
        """Refuse (TargetError) what prepare() would run out of room for, before any results directory exists."""
        return None

    def close(self) -> None:
        """Release what prepare() started (e.g. an nbdkit server); called once when the run stops, however."""
        return None

    def during_point(self, point: TestPoint) -> AbstractContextManager[None]:
        """Context held while one point's I/O runs (e.g. an nbdkit target's scheduled stalls); default none."""
        return contextlib.nullcontext()

    def purge_methods(self) -> list[str]:
        """Purge methods this target supports, best first (e.g. 'nvme-format', 'blkdiscard', 'recreate')."""
        return []

    def purge(self, method: str) -> str:
        """Return the target to a fresh-out-of-box-like state; returns a line describing what was done."""
        from ssdlab.errors import TargetError

        raise TargetError(f"{self.name} cannot be purged (method {method!r} unsupported)")

    def set_write_cache(self, enabled: bool) -> str:
        """Set the device's volatile write cache, read it back; one line 'write cache: <state> (...)'."""
        want = "enabled" if enabled else "disabled"
        return f"write cache: unknown (requested {want}; {self.kind} targets cannot set it)"

    def logical_block_size(self) -> int:
        return 512

    def resume_spec(self, given: str) -> str:
        """The target string `resume` parses to open this target again, for the one the user gave."""
        return given

    def engine(self) -> str:
        """The name of the engine that runs points on this target ('fio', 'fio-client', 'sim')."""
        return "fio"

    def executor(self, gate: JobGate) -> Executor:
        """The executor that runs points on this target; fio jobs pass `gate` (the run's write grant) first."""
        from ssdlab.fio.executor import FioExecutor

        return FioExecutor(gate)

    def point_writes(self, point: TestPoint) -> str:
        """Why running `point` here writes ('' when it does not), from the fio job it becomes."""
        from ssdlab.fio.executor import point_job

        why = point_job(point, self).writes()
        return why[0] if why else ""

    def check_point(self, point: TestPoint) -> None:
        """Refuse, with one line, a point this target cannot run (the pre-flight check: preflight.check_plan).
        fio targets: nothing beyond the job file, which the check renders for every target."""
        return None

    @property
    def aligned_io(self) -> bool:
        """I/O reaches the storage with O_DIRECT: block sizes must be multiples of the logical block size. Block
        devices and files (a group of several: when all are of one of those kinds)."""
        return self.kind in ("block", "file")

    def consent_name(self) -> str:
        """The name a user types back to allow writing (the device's or file's base name)."""
        return Path(self.name).name

    @property
    def is_device(self) -> bool:
        """A block device, or a group of block devices (consent asks to type the device's name back)."""
        return self.kind == "block"

    def ceiling_twin(self) -> Target | None:
        """The same hosts and CPUs with fio's null engine in place of every device, for the host-ceiling check
        of a run on several devices (run/ceiling.py); None: the check does not apply."""
        return None

    def each_device(self) -> list[Target]:
        """The target of each device behind this one: itself (a multi-device target: its members)."""
        return [self]

    def health_unavailable(self) -> str:
        """Why the target has no drive health at all ('' when it has block devices to ask)."""
        return "" if any(t.is_device for t in self.each_device()) else f"{self.kind} targets have no drive to query"

    def drop(self, key: str, reason: str) -> None:
        """Leave one device ('host:device', or the device alone on this host) or a whole host out of every later
        point (--on-error continue); only targets of several devices can."""
        from ssdlab.errors import TargetError

        raise TargetError(f"{self.name} cannot go on without {key} ({reason})")

    def numa_sysdir(self) -> Path | None:
        """The sysfs directory of the block device behind the target, for NUMA placement (None: none)."""
        return None

    def device_names(self) -> list[tuple[str, str]]:
        """(host, device) of each device behind the target, in device_fio_options() order; host '' is this
        host. A point on more than one device stores a result per device (Measurement.parts)."""
        return [("", self.name)]


class Executor(Protocol):
    """Runs points on a target: a TestPoint in, a Measurement out (fio: fio/executor.py; the simulator:
    sim/executor.py; a host group: targets/hostgroup.py). Target.executor() gives a target's executor.

    `series`: it can run a continuous stimulus (consecutive points with one `continuous` key) as one run of its
    engine, sample by sample (run_series); otherwise the orchestrator runs those points one by one."""

    name: str
    series: bool

    def version(self) -> str:
        """Engine version recorded in run.json (e.g. fio '3.33')."""
        ...

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        """Run one point, keep its artefacts in point_dir, return the parsed measurement."""
        ...

    def run_series(self, points: Sequence[TestPoint], target: Target, point_dir: Path,
                   on_live: LiveCallback | None, on_sample: SampleCallback) -> None:
        """Run `points` as one continuous stimulus, handing each sample to on_sample as it ends (its answer is
        the next sample's directory, or None to stop there). Only called when `series` is true."""
        ...
