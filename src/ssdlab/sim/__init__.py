"""The simulated SSD: `sim:PRESET?key=value` targets run on a native model instead of fio.

ssdlab.run.target.parse_target builds a SimTarget (sim/target.py) for `sim:` target strings. The model itself
lives in the C extension `ssdlab.sim._core` (built by `pip install`); see docs/sim.md.
"""

from __future__ import annotations

from types import ModuleType

from ssdlab.errors import TargetError


def core() -> ModuleType:
    """The native core module, or a TargetError saying how to build it."""
    try:
        from ssdlab.sim import _core  # type: ignore[attr-defined]
    except ImportError as exc:
        raise TargetError(
            "the simulated SSD's native core (ssdlab.sim._core) is not built: reinstall ssdlab with "
            "`pip install -e .` (needs a C compiler and the Python headers)"
        ) from exc
    module: ModuleType = _core
    return module
