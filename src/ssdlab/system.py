"""Host metadata: each collector tolerates a missing source."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path
from typing import Any

from ssdlab import __version__


def _first(path: str, key: str) -> str:
    try:
        for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(key):
                return line.split(":", 1)[-1].split("=", 1)[-1].strip().strip('"')
    except OSError:
        pass
    return ""


def host_info(engine: str = "", engine_version: str = "") -> dict[str, Any]:
    mem_kib = _first("/proc/meminfo", "MemTotal").split()
    governor = ""
    gov_path = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    if gov_path.exists():
        governor = gov_path.read_text(encoding="utf-8").strip()
    return {
        "hostname": socket.gethostname(),
        "os": _first("/etc/os-release", "PRETTY_NAME") or platform.system(),
        "kernel": platform.release(),
        "arch": platform.machine(),
        "cpu_model": _first("/proc/cpuinfo", "model name") or platform.processor(),
        "cpu_count": os.cpu_count() or 0,
        "memory_bytes": int(mem_kib[0]) * 1024 if mem_kib and mem_kib[0].isdigit() else 0,
        "cpu_governor": governor,
        "python": platform.python_version(),
        "ssdlab_version": __version__,
        "engine": engine,
        "engine_version": engine_version,
    }
