"""Targets: what a suite runs against (files, block devices, the null engine, NBD exports, nbdkit servers,
several devices at once, host groups). Each kind knows its identity, capacity, hazards, fio options and purge;
run/target.parse_target turns a target string into one (the simulator's `sim:` included).
"""

from __future__ import annotations

from ssdlab.targets.base import Target, TargetOptions
from ssdlab.targets.blockdev import BlockTarget
from ssdlab.targets.file import FileTarget
from ssdlab.targets.null import NullTarget

__all__ = ["BlockTarget", "FileTarget", "NullTarget", "Target", "TargetOptions"]
