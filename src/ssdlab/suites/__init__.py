"""Built-in suites. Each module registers its suites on import (suites never import renderers: the report
modules register their own sections, see report/sections.py)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ssdlab.errors import UsageError

if TYPE_CHECKING:
    from ssdlab.suites.base import Suite

# one entry module per suite family; each registers its suites with suites.base.register()
BUILTIN_MODULES = (
    "ssdlab.suites.quick",
    "ssdlab.suites.pts",
    "ssdlab.suites.characterization",
    "ssdlab.suites.act",
    "ssdlab.suites.integrity",
    "ssdlab.suites.replay",
)
_loaded = False


def load_builtin() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in BUILTIN_MODULES:
        importlib.import_module(name)


def all_suites() -> dict[str, Suite]:
    """Every registered suite by name, the built-ins loaded."""
    from ssdlab.suites.base import REGISTRY

    load_builtin()
    return dict(REGISTRY)


def get_suite(name: str) -> Suite:
    """A suite by name, or a user's suite file (NAME.toml). Built-in families load in order until the name is
    found, so `run quick` does not load the PTS, ACT or characterization suites."""
    if name.endswith(".toml"):  # a user-defined suite file (docs/suites.md)
        from ssdlab.suites.toml_suite import load_file

        return load_file(name)
    from ssdlab.suites.base import REGISTRY

    for module in BUILTIN_MODULES:
        if name in REGISTRY:
            return REGISTRY[name]
        importlib.import_module(module)
    suites = all_suites()
    if name not in suites:
        raise UsageError(f"unknown suite {name!r}: run `ssdlab suites` to list them ({', '.join(sorted(suites))})")
    return suites[name]
