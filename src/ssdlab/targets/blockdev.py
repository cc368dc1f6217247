"""Block device targets (NVMe, SATA, SAS, loop). Writes are guarded by `hazards()`.

The device is named by its identity (targets/identity.py): the path given (relative, a symlink, a by-id name)
is resolved once to the device node's canonical absolute path and number; that path is what the checks, the
consent line and fio's job file name, and the number is what the write gate compares before every job."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import TargetError
from ssdlab.fio.job import OptionValue, escape_filename
from ssdlab.targets import identity, sysfs
from ssdlab.targets.base import Hazard, Target, TargetOptions
from ssdlab.targets.identity import Identity
from ssdlab.units import format_bytes


@dataclass
class BlockTarget(Target):
    path: str = ""
    real_path: str = ""
    sysdir: Path | None = None
    full_size: int = 0
    ident: Identity | None = None  # what `path` names: resolved once (from_path), checked before every job

    @staticmethod
    def is_block_device(path: str) -> bool:
        return identity.resolve(path).kind == "block"

    @classmethod
    def from_path(cls, path: str, params: dict[str, str], opts: TargetOptions) -> BlockTarget:
        ident = identity.resolve(path)
        if ident.kind == "absent":
            raise TargetError(f"{path} does not exist: name an existing block device (see `lsblk`)")
        if ident.kind != "block" or ident.rdev is None:
            raise TargetError(f"{path} is not a block device: use file:{path} for a regular file")
        if not os.access(ident.path, os.R_OK):
            raise TargetError(f"cannot open {path}: permission denied (run as root or add yourself to 'disk')")
        num = ident.rdev
        sysdir = sysfs.sys_dir(*num)
        if sysdir is None:
            raise TargetError(f"{path}: no sysfs entry for device {num[0]}:{num[1]}")
        size = sysfs.size_bytes(sysdir)
        if size <= 0:
            raise TargetError(f"{path} has zero capacity (an unbound loop device?): attach a backing file first")
        return cls(spec=identity.stable_spec(path, ident), kind="block", options=opts, path=ident.path,
                   real_path=ident.path, sysdir=sysdir, full_size=size, ident=ident)

    def identities(self) -> list[Identity]:
        return [self.ident] if self.ident is not None else []

    def resume_spec(self, given: str) -> str:
        """The device as given when that is an absolute, plain path (a by-id name survives renumbering), else
        its canonical path (a relative name depends on the directory ssdlab was started in)."""
        return identity.stable_spec(given, self.ident) if self.ident is not None else given

    @property
    def name(self) -> str:
        return self.path

    def capacity(self) -> int:
        cap = self.full_size
        if self.options.capacity:
            cap = min(cap, self.options.capacity)
        lbs = self.logical_block_size()
        return cap - cap % max(lbs, 4096)

    def purge_methods(self) -> list[str]:
        """nvme-sanitize, nvme-format (whole namespace only), blkdiscard; best first."""
        from ssdlab.targets.purge import block_methods

        return block_methods(self.real_path, self.sysdir, self.capacity() < self.full_size)

    def purge(self, method: str) -> str:
        """Purge the device (see targets/purge.py); returns the line recorded for the run."""
        from ssdlab.targets import purge

        chosen = purge.choose(method, self.purge_methods(), self.name)
        return purge.purge_block(self.real_path, chosen, self.capacity(), self.capacity() < self.full_size)

    def set_write_cache(self, enabled: bool) -> str:
        """NVMe feature 6 or hdparm -W, read back; unknown when neither applies."""
        from ssdlab.targets.purge import set_block_write_cache

        return set_block_write_cache(self.real_path, enabled)

    def logical_block_size(self) -> int:
        assert self.sysdir is not None
        return sysfs.block_sizes(self.sysdir)[0]

    def numa_sysdir(self) -> Path | None:
        return self.sysdir

    def fio_options(self) -> dict[str, OptionValue]:
        return {"filename": escape_filename(self.path), "ioengine": self.options.ioengine, "direct": 1,
                "size": self.capacity()}

    def _all_nodes(self) -> list[tuple[str, Path]]:
        """The device itself and, for a whole disk, each of its partitions."""
        assert self.sysdir is not None
        nodes = [(self.real_path, self.sysdir)]
        for part in sysfs.partitions(self.sysdir):
            nodes.append((f"/dev/{part.name}", part))
        return nodes

    def _written_by_others(self) -> list[Hazard]:
        """The device, a partition of it or (for a partition) its disk open for writing by another program: in use
        without any claim the kernel shows (a virtual machine's disk, a database on the raw device, another
        benchmark). Checked when consent is asked (it reads every process's open files)."""
        nodes = {}
        for node, sdir in self._all_nodes() + self._disk_of_partition():
            num = sysfs.devno_of(sdir)
            if num is not None:
                nodes[num] = node
        return [Hazard(f"{nodes[num]} is open for writing by process {', '.join(who)}: it is in use; stop that "
                       "program first", blocking=True)
                for num, who in sysfs.writers(set(nodes)).items()]

    def _disk_of_partition(self) -> list[tuple[str, Path]]:
        """For a partition: its disk, named as such. Whatever uses the whole disk (a mount of a filesystem that
        spans it, a loop device or dm/md device over it, swap on it) uses the partition's blocks too; the disk's
        other partitions do not count."""
        assert self.sysdir is not None
        disk = sysfs.whole_disk(self.sysdir)
        return [] if disk == self.sysdir else [(f"/dev/{disk.name} (the disk {self.path} is a partition of)", disk)]

    def hazards(self) -> list[Hazard]:
        """Every reason not to write, one per line: the blocking ones (in use, read-only) first, then what
        the device carries (partitions, signatures: --destructive)."""
        found = self.blocking_hazards()
        found.extend(self._written_by_others())
        parts = [n for n, _ in self._all_nodes()[1:]]
        if parts:
            found.append(Hazard(f"{self.path} has partitions: {', '.join(parts)}"))
        sig = sysfs.signature(self.real_path)
        if sig:
            found.append(Hazard(f"{self.path} is not blank: it carries an existing {sig}"))
        return found

    def blocking_hazards(self) -> list[Hazard]:
        """Why no flag may make ssdlab write here: mounted, swap, held, claimed (exclusive open refused),
        backing another loop device, sharing its backing file with another loop device, read-only; for a
        partition also its disk being mounted, swap, held or backing a loop device.
        Reads only kernel state (no blkid), so the fio boundary re-checks it before every writing job."""
        assert self.sysdir is not None
        found: list[Hazard] = []
        mounts = sysfs.mounted_devnos()
        swaps = sysfs.swap_devnos()
        backings = sysfs.loop_backings()
        in_use = False
        for node, sdir in self._all_nodes() + self._disk_of_partition():
            num = sysfs.devno_of(sdir)
            if num in mounts:
                found.append(Hazard(f"{node} is mounted on {mounts[num]}", blocking=True))
            if num in swaps:
                found.append(Hazard(f"{node} is in use as swap", blocking=True))
            held = sysfs.holders(sdir)
            if held:
                found.append(Hazard(f"{node} is held by {', '.join(held)} (dm/md/LVM)", blocking=True))
            in_use = in_use or bool(found)
            for lb in backings:
                if num is not None and lb.rdev == num:
                    found.append(Hazard(f"{node} is the backing device of {lb.loop} ({sysfs.in_use_text(lb)}); "
                                        f"detach it first (losetup -d {lb.loop})", blocking=True))
        if not in_use:  # the kernel's own view: claims that mountinfo, swaps and holders do not show
            for node, _ in self._all_nodes():
                busy = sysfs.exclusive_open_error(node)
                if busy:
                    found.append(Hazard(f"{node} is claimed by another user: {busy} (mounted in another "
                                        "namespace, or used by md/dm/btrfs or another program)", blocking=True))
        found.extend(self._shared_backing(backings))
        exposed = identity.others_can_change(self.path)
        if exposed:
            found.append(Hazard(f"another user can change what {self.path} names ({exposed}): fio opens it by "
                                "that path after the last check; name the device by a path only root can change "
                                "(e.g. under /dev)", blocking=True))
        if sysfs.read_only(self.sysdir):
            found.append(Hazard(f"{self.path} is read-only (sysfs ro=1: write-protected, or a loop device "
                                "attached with losetup -r)", blocking=True))
        return found

    def _shared_backing(self, backings: list[sysfs.LoopBacking]) -> list[Hazard]:
        """A loop target whose backing file is also attached as another loop device: writing one rewrites
        the other's data."""
        me = next((lb for lb in backings if lb.loop == self.real_path), None)
        if me is None or me.file_ino is None or me.file_dev is None:
            return []
        out = []
        for lb in backings:
            same = (lb.rdev is not None and lb.rdev == me.rdev) or (
                me.rdev is None and lb.rdev is None and (lb.file_dev, lb.file_ino) == (me.file_dev, me.file_ino))
            if lb.loop != me.loop and same:
                out.append(Hazard(f"{self.path} shares its backing file {me.backing_path} with {lb.loop} "
                                  f"({sysfs.in_use_text(lb)})", blocking=True))
        return out

    def needs_write_consent(self) -> bool:
        return True

    def destroys(self) -> str:
        ident = self.identity()
        model = ident.get("model", "unknown model")
        serial = ident.get("serial", "no serial")
        span = "the whole device" if self.capacity() >= self.full_size else f"the first {format_bytes(self.capacity())}"
        given = f"given as {self.ident.alias}; " if self.ident is not None and self.ident.alias else ""
        return f"ALL DATA on {self.path} ({given}{model}, {serial}, {format_bytes(self.full_size)}): {span}"

    def identity(self) -> dict[str, Any]:
        assert self.sysdir is not None
        return sysfs.identity(self.sysdir)

    def info(self) -> dict[str, Any]:
        assert self.sysdir is not None
        lbs, pbs = sysfs.block_sizes(self.sysdir)
        hz = self.hazards()
        info: dict[str, Any] = {
            "spec": self.spec, "kind": "block", "name": self.path, "path": self.real_path,
            "capacity_bytes": self.capacity(), "device_bytes": self.full_size,
            "logical_block_size": lbs, "physical_block_size": pbs, "identity": self.identity(),
            "write_safe": not hz, "safety": [h.text for h in hz],
        }
        if self.ident is not None and self.ident.rdev is not None:
            info["device_number"] = f"{self.ident.rdev[0]}:{self.ident.rdev[1]}"
            if self.ident.alias:
                info["given"] = self.ident.alias
        return info
