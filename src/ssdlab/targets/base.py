"""The Target interface shared by every kind of target, and the Executor interface that runs points on one."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ssdlab.fio.job import OptionValue
from ssdlab.results.model import Measurement, TestPoint

if TYPE_CHECKING:
    from ssdlab.results.live import LiveCallback


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
    kind: str
    options: TargetOptions = field(default_factory=TargetOptions)

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
        """Which executor runs points on this target."""
        return "fio"

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
    sim/executor.py; a host group: targets/hostgroup.py)."""

    name: str

    def version(self) -> str:
        """Engine version recorded in run.json (e.g. fio '3.33')."""
        ...

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        """Run one point, keep its artefacts in point_dir, return the parsed measurement."""
        ...
