"""A composite target: several devices driven together (ACT over all drives of a host).

Suites that accept it (Suite.multi_target) issue multi-stream points; fio/job.build_job then writes one
section per stream and per device from `device_fio_options()`. Capacity is the smallest member's (each
device still uses its own full size in its sections), the logical block size the largest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab.errors import TargetError, UsageError
from ssdlab.fio.job import OptionValue
from ssdlab.results.model import TestPoint
from ssdlab.targets import numa, sysfs
from ssdlab.targets.base import Hazard, Target, TargetOptions
from ssdlab.targets.identity import Identity
from ssdlab.targets.numa import Placement


@dataclass
class MultiTarget(Target):
    members: list[Target] = field(default_factory=list)
    _placements: list[Placement] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_targets(cls, targets: Sequence[Target], opts: TargetOptions) -> MultiTarget:
        """Combine targets; refuses duplicates, fewer than two, and simulated members."""
        members = list(targets)
        if len(members) < 2:
            raise UsageError("a multi-device run needs at least two --target options")
        same = same_device(members)
        if same:
            raise UsageError(f"{same}: two writers on one device would each count its work; give it once")
        names = [t.name for t in members]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise UsageError(f"--target {dup[0]} is given more than once: each device may appear once")
        if not all(t.fio_here for t in members):
            raise UsageError("several --target options work only with fio targets (files, block devices, null), "
                             "not with simulated ones")
        kinds = {t.kind for t in members}
        if "null" in kinds and len(kinds) > 1:
            raise UsageError("--target null cannot be combined with devices or files in one run")
        kind = kinds.pop() if len(kinds) == 1 else "multi"
        spec = " ".join(t.spec for t in members)
        return cls(spec=spec, kind=kind, options=opts, members=members)

    @property
    def name(self) -> str:
        return "+".join(t.name for t in self.members)

    def identities(self) -> list[Identity]:
        return [i for t in self.members for i in t.identities()]

    def capacity(self) -> int:
        return min(t.capacity() for t in self.members)

    def logical_block_size(self) -> int:
        return max(t.logical_block_size() for t in self.members)

    def info(self) -> dict[str, Any]:
        infos = [t.info() for t in self.members]
        return {
            "spec": self.spec, "kind": self.kind, "name": self.name, "devices": infos,
            "capacity_bytes": self.capacity(), "logical_block_size": self.logical_block_size(),
            "physical_block_size": max(int(i.get("physical_block_size", 512)) for i in infos),
            "identity": {"devices": ", ".join(str(i.get("name")) for i in infos)},
            "write_safe": all(i.get("write_safe", True) for i in infos),
            "safety": [s for i in infos for s in i.get("safety", [])],
        }

    def fio_options(self) -> dict[str, OptionValue]:
        """The first device's options; multi-device points use device_fio_options() instead."""
        return self.members[0].fio_options()

    def device_fio_options(self) -> list[dict[str, OptionValue]]:
        """fio options of every device, in --target order, each pinned to its NUMA node's CPUs when the host
        has several nodes and the device reports one (targets/numa.py)."""
        return [{**t.fio_options(), **p.options} for t, p in zip(self.members, self.placements(), strict=True)]

    def placements(self) -> list[Placement]:
        """Where each member's jobs run (computed once: sysfs does not change during a run)."""
        if self._placements is None:
            nodes = numa.cpu_nodes()
            self._placements = [numa.placement(t.name, numa.device_node(t.numa_sysdir()), nodes)
                                for t in self.members]
        return self._placements

    def hazards(self) -> list[Hazard]:
        return [h for t in self.members for h in t.hazards()]

    def blocking_hazards(self) -> list[Hazard]:
        return [h for t in self.members for h in t.blocking_hazards()]

    def layout_writes(self) -> str:
        return "; ".join(w for w in (t.layout_writes() for t in self.members) if w)

    def destroys(self) -> str:
        return "; ".join(t.destroys() for t in self.members)

    def needs_write_consent(self) -> bool:
        return any(t.needs_write_consent() for t in self.members)

    def resuming(self, run_dir: Path) -> None:
        for t in self.members:
            t.resuming(run_dir)

    def prepare(self, writes: bool) -> list[str]:
        notes = [note for t in self.members for note in t.prepare(writes)]
        return [*notes, "NUMA placement: " + "; ".join(p.note for p in self.placements())]

    def check_space(self) -> None:
        for t in self.members:
            t.check_space()

    def close(self) -> None:
        for t in self.members:
            t.close()

    @contextlib.contextmanager
    def during_point(self, point: TestPoint) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for t in self.members:
                stack.enter_context(t.during_point(point))
            yield

    def purge_methods(self) -> list[str]:
        """Methods every member offers, in the first member's order (each member is probed once: probing a
        block device runs nvme-cli)."""
        offered = [set(t.purge_methods()) for t in self.members[1:]]
        return [m for m in self.members[0].purge_methods() if all(m in o for o in offered)]

    def purge(self, method: str) -> str:
        return "; ".join(t.purge(method) for t in self.members)

    def device_names(self) -> list[tuple[str, str]]:
        return [("", t.name) for t in self.members]

    def each_device(self) -> list[Target]:
        return list(self.members)

    def ceiling_twin(self) -> Target | None:
        """Every member replaced by fio's null engine on the same CPUs (none when the members are null already)."""
        from ssdlab.targets.null import NullTarget, NullTwin, null_options

        if isinstance(self.members[0], NullTarget):
            return None
        size = min(self.capacity(), 1024**3)
        return NullTwin(spec="null", kind="null", devices=null_options(self.device_fio_options(), size),
                        names=self.device_names(), size=size)

    def health_unavailable(self) -> str:
        return "" if any(t.is_device for t in self.members) else self.members[0].health_unavailable()

    def drop(self, key: str, reason: str) -> None:
        """Go on without one member (--on-error continue after it failed); the last one cannot leave."""
        keep = [i for i, t in enumerate(self.members) if t.name != key]
        if len(keep) == len(self.members):
            return
        if not keep:
            raise TargetError(f"no device of {self.name} is left ({key}: {reason})")
        places = self.placements()
        self.members = [self.members[i] for i in keep]
        self._placements = [places[i] for i in keep]


def same_device(members: Sequence[Target]) -> str:
    """'' when no two targets are one device or file (by identity: a symlink, a by-id name or a second device
    node of the same device is the same device), and no target is a partition of another; else which two."""
    seen: dict[tuple[object, ...], Target] = {}
    for t in members:
        for key in t.identity_keys():
            first = seen.get(key)
            if first is not None:
                a, b = _given(first), _given(t)
                return (f"--target {a} is given more than once" if a == b else
                        f"--target {a} and --target {b} are the same {_what(key)}")
            seen[key] = t
    disks = {str(d): t for t in members for d in _sysdirs(t)}
    for t in members:
        for d in _sysdirs(t):
            whole = disks.get(str(sysfs.whole_disk(d)))
            if whole is not None and whole is not t:
                return f"--target {t.spec} is a partition of --target {whole.spec}"
    return ""


def _given(t: Target) -> str:
    """The target as the user named it."""
    ids = t.identities()
    return ids[0].given if len(ids) == 1 else t.spec


def _what(key: tuple[object, ...]) -> str:
    return {"block": "device", "file": "file", "path": "file"}.get(str(key[0]), "target")


def _sysdirs(t: Target) -> list[Path]:
    sysdir = t.numa_sysdir() if t.is_device else None
    return [sysdir] if sysdir is not None else []
