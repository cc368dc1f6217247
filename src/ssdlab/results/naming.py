"""How runs, hosts and devices are named, one rule for the terminal, the HTML pages, exports and the catalog.

- a target: its stored name (a device path, `sim:p5430`, a file's path, `a+b` for several local devices); a
  host group by its hosts as the inventory names them (`hosts node0, node1`), never by the inventory's file name;
- a device on an agent host: `host:path`;
- a run: `SUITE on TARGET`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

HOSTS_NAMED = 3  # hosts a name lists before '+N more'


def hosts_name(hosts: Sequence[str]) -> str:
    """'hosts node0, node1', 'hosts a, b, c +2 more': a host group's name."""
    shown = ", ".join(hosts[:HOSTS_NAMED])
    more = len(hosts) - HOSTS_NAMED
    return f"hosts {shown}" + (f" +{more} more" if more > 0 else "")


def target_name(target: Mapping[str, Any]) -> str:
    """A stored target record's name (run.json `target`), by the rule above."""
    hosts = target.get("hosts")
    if isinstance(hosts, list) and hosts:
        return hosts_name([str(h.get("name") or "?") for h in hosts if isinstance(h, Mapping)])
    return str(target.get("name") or target.get("spec") or "unknown target")


def device_name(host: str, path: str) -> str:
    """'node0:/dev/nvme0n1': a device on an agent host."""
    return f"{host}:{path}"


def run_title(suite: str, target: Mapping[str, Any] | str) -> str:
    """'quick on sim:p5430', 'quick on hosts node0, node1': a run's title (a target record, or a name)."""
    return f"{suite} on {target if isinstance(target, str) else target_name(target)}"
