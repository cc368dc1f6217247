"""The host-group executor: one point on every device of every agent host at once, one fio client per point.

Each host gets one job file with a section per device (fio/job.build_device_job, devices numbered across the
whole group), every job passes the run's write gate, and one fio client starts them all. The point's
Measurement is the exact aggregate over every device that returned a result (IOPS and bandwidth summed,
latency bins added, from fio's per-host job results, never from fio's "All clients" summary), with each
device's own result in Measurement.parts. Suites see an ordinary Measurement, so every suite runs unchanged.

A host that cannot be reached or drops out, or a device that reports an error, is recorded with the point
(what finished is kept). The run option --on-error decides what happens next: `stop` (default) fails the
point and stops the run (`ssdlab resume` retries it with every host), `continue` leaves the host or device out
of every later point and goes on; the devices that left are listed with each point and in the report.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ssdlab.errors import FioFailedError
from ssdlab.fio.client import ClientRun, Endpoint, client_hosts, missing_hosts, run_clients
from ssdlab.fio.job import OptionValue
from ssdlab.fio.parts import device_parts
from ssdlab.fio.runner import JobGate
from ssdlab.results.model import Measurement, TestPoint
from ssdlab.targets.base import Target

if TYPE_CHECKING:
    from ssdlab.results.live import LiveCallback, SampleCallback


# What the executor needs of a host group (targets/hosts.HostGroupTarget, which imports this module: the
# dependency runs one way, hosts -> hostgroup)

class _Spec(Protocol):
    @property
    def endpoint(self) -> Endpoint: ...


class GroupHost(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def spec(self) -> _Spec: ...


class GroupDevice(Protocol):
    @property
    def kind(self) -> str: ...

    def fio_options(self) -> dict[str, OptionValue]: ...


class DeviceGroup(Protocol):
    """A group of devices on agent hosts: its active hosts with their devices, names, error policy, write gate."""

    on_error: str
    local_fio: str
    gate: JobGate | None

    def host_devices(self) -> Sequence[tuple[GroupHost, Sequence[GroupDevice]]]: ...

    def device_names(self) -> list[tuple[str, str]]: ...

    def drop(self, name: str, reason: str) -> None: ...

    def logical_block_size(self) -> int: ...


def _replay_logs(point: TestPoint, group: DeviceGroup, point_dir: Path, gate: JobGate,
                 binary: str) -> dict[str, Any] | None:
    """A replay point's iologs and agent-side files made ready (fio/replay.prepare_hosts); None otherwise."""
    if not point.tags.replay:
        return None
    from ssdlab.fio.replay import prepare_hosts

    pairs = [(h.spec.endpoint, [(d.kind, d.fio_options()) for d in devs]) for h, devs in group.host_devices()]
    return prepare_hosts(point, pairs, point_dir, group, gate=gate, binary=binary, local_version=group.local_fio)


class HostGroupExecutor:
    """Runs points on a host group (targets/hosts.HostGroupTarget) through fio's client/server mode."""

    name = "fio"
    series = False  # fio's client mode reports no status stream to cut samples from: points run one by one

    def __init__(self, group: DeviceGroup, gate: JobGate) -> None:
        from ssdlab.fio.runner import fio_binary

        self.group = group
        self.gate = gate
        group.gate = gate  # purge jobs on the agents pass the same gate
        self.binary = fio_binary()

    def version(self) -> str:
        """This host's fio (the client), as the group learnt it when it probed its agents."""
        if not self.group.local_fio:
            from ssdlab.fio.runner import fio_version

            self.group.local_fio = fio_version(self.binary)
        return self.group.local_fio

    def run_series(self, points: Sequence[TestPoint], target: Target, point_dir: Path,
                   on_live: LiveCallback | None, on_sample: SampleCallback) -> None:
        raise NotImplementedError("a host group runs the samples of a continuous stimulus one by one (series)")

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        from ssdlab.fio.job import build_device_job
        from ssdlab.fio.logs import with_logs
        from ssdlab.fio.parse import measurement_from_document

        group = self.group
        pairs = group.host_devices()
        names = group.device_names()
        assignments = []
        first = 0
        replay = _replay_logs(point, group, point_dir, self.gate, self.binary)  # a trace replay's iologs
        every = [d.fio_options() for _, devs in pairs for d in devs]
        for host, devs in pairs:
            if replay is not None:
                from ssdlab.fio.replay import replay_job

                job = replay_job(point, every, str(point_dir.resolve()), (first, first + len(devs)))
            else:
                job = build_device_job(point, [d.fio_options() for d in devs], first)
            assignments.append((host.spec.endpoint, job))
            first += len(devs)
        res = run_clients(assignments, point_dir, gate=self.gate, binary=self.binary, local_version=self.version())
        doc: dict[str, Any] | None = json.loads(res.text) if res.text else None
        present = client_hosts(doc) if doc is not None else set()
        gone = missing_hosts(res, present, [host.spec.endpoint for host, _ in pairs])
        missing = {host.name: gone[host.spec.endpoint.label] for host, _ in pairs if host.spec.endpoint.label in gone}
        if doc is None or not present:
            why = "; ".join(f"host {h}: {r}" for h, r in missing.items()) or f"fio exit status {res.returncode}"
            raise FioFailedError(f"no host returned a result for point {point.id}: {why}", cmd=list(res.argv),
                                 returncode=res.returncode, stderr=res.stderr)
        m = measurement_from_document(doc)  # every job of every host that answered: the exact aggregate
        parts = device_parts(doc, names, point_id=point.id, point_dir=point_dir,
                             log_interval_ms=point.workload.log_interval_ms, missing=missing)
        m = with_logs(m, point, point_dir)
        m = dataclasses.replace(m, parts=parts,
                                extra=m.extra.replace(hosts={h.name: h.spec.endpoint.label for h, _ in pairs}))
        if replay is not None:
            from ssdlab.fio.replay import with_replay

            m = with_replay(m, point, replay)
        self._after_failures(point, m, missing, res)
        return m

    def _after_failures(self, point: TestPoint, m: Measurement, missing: dict[str, str], res: ClientRun) -> None:
        """Hosts that did not answer and devices that failed: under --on-error continue they leave the group
        for every later point; otherwise the point fails, keeping what the others measured."""
        failed = [p for p in m.parts if p.status != "ok"]
        if not failed:
            return
        summary = "; ".join(f"host {h}: {r}" for h, r in missing.items())
        others = [p for p in failed if p.host not in missing]
        if others:
            summary = "; ".join(x for x in (summary, *(f"{p.key}: {p.reason}" for p in others)) if x)
        if self.group.on_error == "continue":
            for h, r in missing.items():
                self.group.drop(h, r)
            for p in others:
                self.group.drop(p.key, p.reason)
            return
        raise FioFailedError(f"point {point.id}: {summary}; the devices that finished are kept with the point "
                             "(--on-error continue would go on without the failed ones)",
                             cmd=list(res.argv), returncode=res.returncode, stderr=res.stderr, partial=m)
