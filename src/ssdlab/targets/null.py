"""fio's null engine: no device at all; measures the harness and host ceiling (as ezFIO's null mode)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ssdlab.fio.job import OptionValue
from ssdlab.targets.base import Target, TargetOptions
from ssdlab.units import parse_size

DEFAULT_NULL_SIZE = 1024**3
NO_HEALTH = "the null engine touches no device"


@dataclass
class NullTarget(Target):
    size: int = DEFAULT_NULL_SIZE

    @classmethod
    def from_params(cls, params: dict[str, str], opts: TargetOptions) -> NullTarget:
        size = parse_size(params["size"]) if "size" in params else (opts.size or DEFAULT_NULL_SIZE)
        if opts.capacity:
            size = min(size, opts.capacity)
        spec = "null" + (f"?size={params['size']}" if "size" in params else "")
        return cls(spec=spec, kind="null", options=opts, size=size)

    @property
    def name(self) -> str:
        return "null"

    def health_unavailable(self) -> str:
        return NO_HEALTH

    def capacity(self) -> int:
        return self.size

    def info(self) -> dict[str, Any]:
        return {
            "spec": self.spec, "kind": "null", "name": "null (fio null engine)", "capacity_bytes": self.size,
            "logical_block_size": 512, "physical_block_size": 512, "identity": {},
            "write_safe": True, "safety": [], "note": "no device: results show the host and fio ceiling",
        }

    def fio_options(self) -> dict[str, OptionValue]:
        return {"ioengine": "null", "size": self.size}

    def destroys(self) -> str:
        return "nothing (null engine)"


@dataclass
class NullTwin(Target):
    """Every device of a multi-device target replaced by fio's null engine, on the same CPUs."""

    devices: list[dict[str, OptionValue]] = field(default_factory=list)
    names: list[tuple[str, str]] = field(default_factory=list)
    size: int = 0

    @property
    def name(self) -> str:
        return "null (host ceiling)"

    def capacity(self) -> int:
        return self.size

    def info(self) -> dict[str, Any]:
        return {"kind": "null", "name": self.name}

    def fio_options(self) -> dict[str, OptionValue]:
        return self.devices[0]

    def device_fio_options(self) -> list[dict[str, OptionValue]]:
        return list(self.devices)

    def device_names(self) -> list[tuple[str, str]]:
        return list(self.names)


PLACEMENT_KEYS = ("cpus_allowed", "cpus_allowed_policy", "numa_cpu_nodes")


def null_options(devices: list[dict[str, OptionValue]], size: int) -> list[dict[str, OptionValue]]:
    return [{"ioengine": "null", "size": size, **{k: v for k, v in d.items() if k in PLACEMENT_KEYS}}
            for d in devices]
