"""Setting a run up: a RunRequest becomes its suite, target, plan context and checked plan (`setup_run`), one path
for `run`, `plan` and `resume`; then consent gives the write grant (`authorize`) and the target its executor.

A new run's request is checked and completed here (times in range, the suite's options with their defaults,
target strings as `resume` will parse them, a suite file's digest) and its whole plan passes the pre-flight
check before anything exists. A resumed run's request is the stored one, and a stored run is input like any
other (`check_stored`): it passes the same checks (engine, times, suite options, the plan's limits), and its
suite must still be the one the run recorded (name; a suite file's sha256), or resume refuses with one line
naming the field (exit 8). Its target is opened again, leaving out the hosts and devices the run went on
without, and must still be the device or file the run started on (Target.changed_since: its recorded
fingerprint; else one line, exit 9); the plan keeps the capacity the run started with.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab import safety
from ssdlab.errors import SsdlabError, StoredResultsError, TargetChangedError, UsageError
from ssdlab.results.dropped import dropped_in
from ssdlab.results.model import Run, TestPoint
from ssdlab.results.request import IOENGINES, ON_ERROR, DeviceSettings, RunRequest
from ssdlab.results.shape import malformed
from ssdlab.run.preflight import check_plan
from ssdlab.run.target import parse_target
from ssdlab.suites import get_suite
from ssdlab.suites.base import PlanContext, Suite, SuiteOption, common_limits
from ssdlab.suites.limits import check_times
from ssdlab.targets import devsettings
from ssdlab.targets.base import Target, TargetOptions


@dataclass(frozen=True)
class RunSetup:
    """A request made ready: `request` as the run stores it, the suite, the target, the plan context and, for a
    new run, its checked worst-case plan (a resumed run's was checked when it started: empty)."""

    request: RunRequest
    suite: Suite
    target: Target
    ctx: PlanContext
    plan: tuple[TestPoint, ...] = ()

    def decision(self) -> safety.WriteDecision:
        """Whether the run writes, from its expanded jobs, purges and layout (safety.decide)."""
        return safety.decide(self.suite, self.ctx, self.target)

    def check_device_settings(self) -> None:
        """Refuse, before anything exists, drive settings out of range or the target cannot take."""
        check_power_state(self.request.device_settings)
        devsettings.check(self.target, self.request.device_settings)


def setup_run(request: RunRequest, *, resume: Run | None = None, source: str = "run.json") -> RunSetup:
    """The suite, target and plan context of `request` (a new run's, or the stored request of `resume`, read
    from `source`, which messages name)."""
    if resume is not None:
        return _setup_resumed(request, resume, source)
    check_request(request)
    suite = get_suite(request.suite)
    target = make_target(request, suite)
    request = resolved(request, suite, target)
    target.check_space()  # before any results directory exists (a file target's layout must fit)
    ctx = plan_context(target, request)
    return RunSetup(request, suite, target, ctx, tuple(check_plan(suite, ctx, target)))


def _setup_resumed(request: RunRequest, run: Run, source: str) -> RunSetup:
    """A stored run's request set up again through the checks a new run's passes (check_stored)."""
    suite = check_stored(request, run, source)
    target = make_target(request, suite, run)
    # several devices: the plan keeps the capacity the run started with, whoever left since
    gone = dropped_in(run)
    capacity = int(run.target["capacity_bytes"]) if gone and run.target.get("capacity_bytes") else None
    ctx = plan_context(target, request, capacity)
    with _stored_field(source, "options"):  # the plan's limits, as a new run's (its worst case is not kept)
        check_plan(suite, ctx, target)
    return RunSetup(request, suite, target, ctx)


@contextmanager
def _stored_field(source: str, field: str) -> Iterator[None]:
    """A check of a stored request's field: its refusal becomes one line naming the file and the field (exit 8)."""
    try:
        yield
    except StoredResultsError:
        raise
    except SsdlabError as exc:
        raise malformed(Path(source), field, str(exc)) from exc


def check_stored(request: RunRequest, run: Run, source: str = "run.json") -> Suite:
    """A stored request through the command line's checks (engine, times, error policy, sizes, suite options),
    and its suite: still the one the run recorded (its name; a suite file's digest). Returns the suite."""
    with _stored_field(source, "options.ioengine"):
        if request.ioengine not in IOENGINES:
            raise UsageError(f"{request.ioengine!r} is not an engine ssdlab runs ({', '.join(IOENGINES)})")
    with _stored_field(source, "options.on_error"):
        if request.on_error is not None and request.on_error not in ON_ERROR:
            raise UsageError(f"{request.on_error!r} is not stop or continue")
    for key in ("size", "capacity", "misalign"):
        with _stored_field(source, f"options.{key}"):
            value = getattr(request, key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0
                                      or (key != "misalign" and value == 0)):
                raise UsageError(f"{value!r} is not a size in bytes")
    with _stored_field(source, "options"):
        check_request(request)
        check_power_state(request.device_settings)
    with _stored_field(source, "options.suite"):
        suite = get_suite(_stored_suite_name(request.suite, run.suite))
        if suite.name != run.suite:
            raise UsageError(f"{request.suite!r} is suite {suite.name!r}, but the run recorded suite {run.suite!r}")
    if request.suite_digest is not None:
        with _stored_field(source, "options.suite_digest"):
            now = suite_digest(suite.name)
            if now != request.suite_digest:
                raise UsageError(f"the suite file {suite.name} is not the one the run started with (sha256 "
                                 f"{str(request.suite_digest)[:12]}... recorded, {str(now)[:12]}... now): put it back "
                                 "as it was")
    with _stored_field(source, "options.suite_options"):
        check_option_values(request.suite_options, suite)
    return suite


def _stored_suite_name(given: str, recorded: str) -> str:
    """The suite a stored request names: a suite file by its absolute path (the name the run recorded) when the
    request kept the relative one it was given (resume may run in another directory)."""
    if given.endswith(".toml") and not Path(given).is_absolute() and Path(recorded).name == Path(given).name:
        return recorded
    return given


def suite_digest(name: str) -> str | None:
    """sha256 of a suite file (its name is its absolute path), None for a built-in suite."""
    if not name.endswith(".toml") or not Path(name).is_absolute():
        return None
    try:
        return hashlib.sha256(Path(name).read_bytes()).hexdigest()
    except OSError as exc:
        raise UsageError(f"cannot read suite file {name}: {exc.strerror or exc}") from exc


def check_option_values(given: Mapping[str, Any], suite: Suite) -> None:
    """Stored suite option values: options of this suite, each of its kind and among its choices."""
    suite_option_values(given, suite)
    mine = {o.key: o for o in suite.suite_options()}
    for key, value in given.items():
        opt = mine[key]
        values = value if opt.repeat and isinstance(value, list) else [value]
        for v in values:
            if v is not None and not _of_kind(opt, v):
                raise UsageError(f"{key}: {v!r} is not a valid value of --{opt.name}"
                                 + (f" ({', '.join(opt.choices)})" if opt.choices else f" ({opt.kind})"))


def _of_kind(opt: SuiteOption, value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    checks = {"flag": isinstance(value, bool), "int": number and float(value).is_integer(),
              "size": isinstance(value, int) and not isinstance(value, bool) and value >= 0,
              "float": number and math.isfinite(value), "toml": isinstance(value, Mapping),
              "str": isinstance(value, str)}
    ok = checks.get(opt.kind, True)
    return ok and (not opt.choices or value in opt.choices)


def check_request(request: RunRequest) -> None:
    """The request's own numbers: --runtime and --ramp, --straggler-margin."""
    check_times(request.runtime_s, request.ramp_s)
    margin = request.straggler_margin_pct
    if margin is not None and not 0 < margin < 100:
        raise UsageError(f"--straggler-margin {margin:g} is out of range: use a percentage above 0 and below 100")


def check_power_state(settings: DeviceSettings) -> None:
    ps = settings.power_state
    if ps is not None and not 0 <= ps <= 31:
        raise UsageError(f"--power-state {ps} is out of range: NVMe power states are 0 to 31 (see `nvme id-ctrl`)")


def target_options(request: RunRequest) -> TargetOptions:
    return TargetOptions(size=request.size, capacity=request.capacity, ioengine=request.ioengine or "libaio")


def targets_from_specs(specs: tuple[str, ...] | list[str], opts: TargetOptions) -> Target:
    """One Target from one or more target strings (several: every device at once, per-device results)."""
    if len(specs) > 1:
        from ssdlab.targets.multi import MultiTarget

        return MultiTarget.from_targets([parse_target(s, opts) for s in specs], opts)
    return parse_target(specs[0], opts)


def make_target(request: RunRequest, suite: Suite, resume: Run | None = None) -> Target:
    """The request's target: a host group from its inventory (resume: the hosts and devices it recorded), else
    its target strings; a resumed run leaves out the hosts and devices it went on without."""
    opts = target_options(request)
    if resume is not None:
        gone = dropped_in(resume)  # devices/hosts --on-error continue left out: they stay out
        if request.hosts:
            from ssdlab.targets.hosts import HostGroupTarget

            return HostGroupTarget.from_stored(dict(resume.target), opts, on_error=str(request.on_error or "stop"),
                                               dropped=gone)
        target = targets_from_specs(request.target_specs, opts)
        stored = resume.target.get("fingerprint")
        changed = target.changed_since(stored) if isinstance(stored, list) else ""
        if changed:  # a by-id name now naming another drive, a loop device over another file, a file replaced
            raise TargetChangedError(changed)
        for key, why in gone.items():
            target.drop(key, why)
        return target
    if request.hosts:
        if request.target_specs:
            raise UsageError("--hosts and --target exclude each other: list every device in the inventory")
        if suite.multi_target:  # ACT's service threads share one host's devices: certify each host on its own
            raise UsageError(f"suite {suite.name} runs on the devices of one host: run it on each host with "
                             "--target (repeat it for every device)")
        from ssdlab.targets.hosts import HostGroupTarget, inventory_path

        return HostGroupTarget.from_inventory(inventory_path(request.hosts), opts,
                                              on_error=str(request.on_error or "stop"))
    return targets_from_specs(request.target_specs, opts)


def resolved(request: RunRequest, suite: Suite, target: Target) -> RunRequest:
    """A new run's request as it is stored: the suite's options with their defaults, and target strings as
    `resume` parses them (a file target's path absolute; a host group's inventory and devices)."""
    specs = request.target_specs
    if request.hosts:
        from ssdlab.targets.hosts import HostGroupTarget

        assert isinstance(target, HostGroupTarget)
        specs = tuple(f"{h}:{d}" for h, d in target.device_names())
        hosts: str | None = target.inventory
    else:
        hosts = None
        if len(specs) == 1:
            specs = (target.resume_spec(specs[0]),)
    return dataclasses.replace(request, target_specs=specs, hosts=hosts,
                               suite_options=suite_option_values(request.suite_options, suite),
                               suite_digest=suite_digest(suite.name))


def suite_option_values(given: Mapping[str, Any], suite: Suite) -> dict[str, Any]:
    """Values of the suite's options, defaults filled in; refuse options of other suites."""
    mine = {o.key: o for o in suite.suite_options()}
    for key in given:
        if key not in mine:
            raise UsageError(f"--{key.replace('_', '-')} does not apply to suite {suite.name}")
    values: dict[str, Any] = {}
    for key, opt in mine.items():
        value = given.get(key)
        if opt.kind == "float" and value is not None and not math.isfinite(value):
            raise UsageError(f"--{opt.name} {value} is not a finite number")
        values[key] = opt.default if value is None else value
    return values


def plan_context(target: Target, request: RunRequest, capacity: int | None = None) -> PlanContext:
    """What the suite plans from: the target's facts (`capacity` overrides its capacity) and the request."""
    lbs = target.logical_block_size()
    capacity, limit, shift = common_limits(capacity or target.capacity(), lbs, request.footprint, request.misalign)
    return PlanContext(capacity=capacity, logical_block_size=lbs,
                       target_kind=target.kind, runtime_s=request.runtime_s, ramp_s=request.ramp_s,
                       options=dict(request.suite_options), footprint=limit, misalign=shift,
                       devices=len(target.device_names()) or 1, target=target.info())


def authorize(target: Target, decision: safety.WriteDecision, settings: DeviceSettings, *, destructive: bool,
              yes: bool, console: safety.Console) -> safety.WriteGrant:
    """safety.authorize for the run; drive settings (--write-cache, --power-state) are a write-class action and
    pass the same consent, also when no point writes (the grant stays read-only for fio then)."""
    if settings:
        console.err(f"WARNING: this run will change {settings.describe()} of {target.name} (restored when it ends)")
        if not decision.writes:
            safety.authorize(target, safety.WriteDecision(f"changes {settings.describe()}", destroys=False),
                             destructive=destructive, yes=yes, console=console)
    return safety.authorize(target, decision, destructive=destructive, yes=yes, console=console)
