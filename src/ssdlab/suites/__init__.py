"""Built-in suites. Each module registers its suites on import."""

from __future__ import annotations

from ssdlab.errors import UsageError


def load_builtin() -> None:
    from ssdlab.suites import quick  # noqa: F401


def get_suite(name: str) -> "Suite":
    from ssdlab.suites.base import all_suites

    suites = all_suites()
    if name not in suites:
        raise UsageError(f"unknown suite {name!r}: run `ssdlab suites` to list them ({', '.join(sorted(suites))})")
    return suites[name]


from ssdlab.suites.base import Suite  # noqa: E402
