"""Target strings -> Target objects (`parse_target`), every kind including the simulator's, which sits above
targets/ (it loads only for `sim:` targets); and the executor that runs points on a target (`executor_for`).

  null[?size=1GiB]              fio's null engine (measures the host's ceiling, no device)
  file:PATH[?size=4GiB]         a regular file, created and laid out at that size if absent
  PATH                          a plain path: a block device if it is one, else a file
  /dev/...                      a block device (including loop devices)
  sim:PRESET[?k=v&...]          the simulated SSD (ssdlab.sim, loaded only for sim: targets)
  nbd://HOST[:PORT][/EXPORT]    an NBD server's export (fio's nbd engine); nbd+unix:///EXPORT?socket=PATH
  nbdkit:memory?size=64MiB      an nbdkit server ssdlab starts for the run, with optional injected faults
  nbdkit:file:PATH[?...]        (targets/nbdkit.py lists the faults: read-error, write-error, stall, ...)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssdlab.errors import UsageError
from ssdlab.targets.base import Target, TargetOptions
from ssdlab.targets.blockdev import BlockTarget
from ssdlab.targets.file import FileTarget
from ssdlab.targets.identity import check_text
from ssdlab.targets.null import NullTarget
from ssdlab.targets.spec import is_nbd_uri, split_spec

if TYPE_CHECKING:
    from ssdlab.fio.runner import JobGate
    from ssdlab.targets.base import Executor


def parse_target(text: str, options: TargetOptions | None = None) -> Target:
    opts = options or TargetOptions()
    if not text or not text.strip():
        raise UsageError("empty target: pass --target null, --target file:PATH?size=4GiB or --target /dev/...")
    check_text(text, "target")  # fio's job file names it: UTF-8, one line
    if is_nbd_uri(text.strip()):  # NBD URIs carry their own query (?socket=): parsed whole
        from ssdlab.targets.nbd import NbdTarget

        return NbdTarget.from_uri(text.strip(), opts)
    scheme, rest, params = split_spec(text.strip())
    if scheme == "nbdkit":
        from ssdlab.targets.nbdkit import NbdkitTarget

        return NbdkitTarget.from_spec(rest, params, opts)
    if scheme == "null":
        return NullTarget.from_params(params, opts)
    if scheme == "file":
        return FileTarget.from_path(rest, params, opts)
    if scheme == "dev" or (scheme == "" and rest.startswith("/dev/")):
        return BlockTarget.from_path(rest, params, opts)
    if scheme == "sim":  # the simulated SSD: its module (and native model) loads only when one is named
        from ssdlab.sim.target import SimTarget

        return SimTarget.from_spec(rest, params, opts)
    if scheme:
        known = ", ".join(sorted({"null", "file", "sim", "nbdkit", "nbd://", "nbd+unix://"}))
        raise UsageError(f"unknown target scheme {scheme!r}: use one of {known}, or a plain path")
    if BlockTarget.is_block_device(rest):
        return BlockTarget.from_path(rest, params, opts)
    return FileTarget.from_path(rest, params, opts)


def executor_for(target: Target, gate: JobGate) -> Executor:
    """The executor that runs points on `target` (Target.executor: fio for devices, files and null, one fio
    client for a host group, the model for sim:); fio jobs pass `gate` (the run's write grant) first."""
    return target.executor(gate)
