"""The simulated SSD: `sim:PRESET?key=value` targets run on a native model instead of fio.

Importing this package registers the `sim` target scheme. The model itself lives in the C extension
`ssdlab.sim._core` (built by `pip install`); see docs/sim.md.
"""

from __future__ import annotations

from types import ModuleType

from ssdlab.errors import TargetError
from ssdlab.targets import register_scheme
from ssdlab.targets.base import Target, TargetOptions


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


def _factory(rest: str, params: dict[str, str], opts: TargetOptions) -> Target:
    from ssdlab.sim.target import SimTarget

    return SimTarget.from_spec(rest, params, opts)


register_scheme("sim", _factory)
