"""Built-in suites. Each module registers its suites (and its report sections) on import."""

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
)
_loaded = False


def load_builtin() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in BUILTIN_MODULES:
        importlib.import_module(name)


def get_suite(name: str) -> Suite:
    from ssdlab.suites.base import all_suites

    if name.endswith(".toml"):  # a user-defined suite file (docs/suites.md)
        from ssdlab.suites.toml_suite import load_file

        return load_file(name)
    suites = all_suites()
    if name not in suites:
        raise UsageError(f"unknown suite {name!r}: run `ssdlab suites` to list them ({', '.join(sorted(suites))})")
    return suites[name]
