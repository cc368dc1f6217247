"""Run options and events as readable text for the report: option names as the command line spells them,
values in units, events as sentences (never Python reprs or raw key=value pairs)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ssdlab.results.model import Run
from ssdlab.results.model import engine_text as engine_text  # (moved to the result model; report modules call it here)
from ssdlab.units import format_bytes

if TYPE_CHECKING:
    from ssdlab.results.request import RunRequest

# run.options keys -> the command-line option that sets them
COMMON_FLAGS = {"target_specs": "--target", "size": "--size", "capacity": "--capacity", "ioengine": "--ioengine",
                "runtime_s": "--runtime", "ramp_s": "--ramp", "footprint": "--footprint", "misalign": "--misalign"}
_OTHER_FLAGS = {"straggler_margin_pct": "--straggler-margin"}  # run.options keys named unlike their flag
DEVICE_SETTING_FLAGS = {"write_cache": "--write-cache", "power_state": "--power-state"}
_SIZE_KEYS = ("size", "capacity", "misalign")
_HIDDEN_EVENT_KEYS = {"time", "kind", "text"}


def humanize(key: str) -> str:
    """'written_bytes' -> 'written bytes'."""
    return str(key).replace("_", " ").replace("-", " ")


def value_text(v: Any, key: str = "") -> str:
    """A value as a reader wants it: None -> 'default', booleans yes/no, sizes in binary units, lists joined."""
    if v is None:
        return "default"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int) and (key in _SIZE_KEYS or key.endswith("_bytes")):
        return format_bytes(v) if v >= 1024 else f"{v} B"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, Mapping):
        return "; ".join(f"{humanize(str(k))} {value_text(x, str(k))}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ", ".join(value_text(x, key) for x in v) if v else "none"
    return str(v)


def _suite_defaults(suite: str) -> dict[str, Any]:
    """Defaults of a registered suite's options (empty for a suite file or an unknown suite)."""
    from ssdlab.suites import all_suites

    found = all_suites().get(suite)
    return {o.key: o.default for o in found.suite_options()} if found is not None else {}


def _target_args(o: RunRequest) -> list[str]:
    """--hosts (a host group: its inventory names every host and device) or each --target, and what to do when
    one fails."""
    args: list[str] = []
    if o.hosts:
        args += ["--hosts", str(o.hosts)]
    else:
        for spec in o.target_specs:
            args += ["--target", str(spec)]
    if o.on_error not in (None, "stop"):
        args += ["--on-error", str(o.on_error)]
    if o.straggler_margin_pct not in (None, 10, 10.0):
        args += ["--straggler-margin", f"{float(o.straggler_margin_pct or 0):g}"]
    return args


def _common_args(o: RunRequest) -> list[str]:
    """The common options that differ from their defaults, then --write-cache / --power-state
    (targets/devsettings.py)."""
    args: list[str] = []
    for key, flag in COMMON_FLAGS.items():
        v = getattr(o, key)
        if key == "target_specs" or v is None or (key == "ioengine" and v == "libaio"):
            continue
        args += [flag, f"{v:g}" if isinstance(v, float) else str(v)]
    for key, flag in DEVICE_SETTING_FLAGS.items():
        v = getattr(o.device_settings, key)
        if v is not None:
            args += [flag, str(v)]
    return args


def _suite_args(run: Run) -> list[str]:
    """The suite's options that differ from its defaults."""
    args: list[str] = []
    defaults = _suite_defaults(run.suite)
    for key, v in run.options.suite_options.items():
        if v is None or v is False or (key in defaults and defaults[key] == v):
            continue
        flag = "--" + key.replace("_", "-")
        if v is True:
            args.append(flag)
        elif isinstance(v, (list, tuple)):
            for item in v:
                args += [flag, str(item)]
        else:
            args += [flag, f"{v:g}" if isinstance(v, float) else str(v)]
    return args


def command_line(run: Run) -> str:
    """The `ssdlab run` command that reproduces the run's options (defaults left out)."""
    o = run.options
    return shlex.join(["ssdlab", "run", run.suite, *_target_args(o), *_common_args(o), *_suite_args(run)])


def unselected_test_options(run: Run) -> set[str]:
    """Suite-option keys that belong only to PTS tests a `pts` run did not select (--pts-tests): they are stored
    with their defaults (giving one is refused), so listing them would only bury the options that applied."""
    if not run.suite.startswith("pts"):
        return set()
    try:
        from ssdlab.suites import get_suite
        from ssdlab.suites.pts import family

        get_suite(run.suite)  # registers the PTS family
        chosen = family.tests_for(run)
    except Exception:  # an unknown or old suite: list everything
        return set()
    used = {o.key for t in chosen for o in t.options}
    return {o.key for t in family.family().values() if t not in chosen for o in t.options} - used


def option_facts(run: Run) -> list[tuple[str, str]]:
    """(option, value) rows: the common options, then the suite's, named as on the command line. An option the
    run was not given and that has no value of its own (stored as None: its default applies, e.g. most of ACT's
    thirty) is no row of "default" but named in one closing row; an option with a value is listed, default or
    not (PTS's --spec E says what the run did)."""
    o = run.options
    rows: list[tuple[str, str]] = []
    unset: list[str] = []
    for key, v in o.to_dict().items():  # the options the run recorded, in order
        if key in ("suite", "suite_options", "runtime_s") or (key == "target_specs" and o.hosts):
            continue
        if key == "device_settings" and isinstance(v, Mapping):
            rows.extend((DEVICE_SETTING_FLAGS[k], value_text(x, k)) for k, x in v.items()
                        if k in DEVICE_SETTING_FLAGS and x is not None)
            continue
        flag = COMMON_FLAGS.get(key) or _OTHER_FLAGS.get(key) or "--" + key.replace("_", "-")
        if v is None:
            unset.append(flag)
        else:
            rows.append((flag, value_text(v, key)))
    suite_opts = o.suite_options
    if isinstance(suite_opts, Mapping):
        unused = unselected_test_options(run)
        for key, v in suite_opts.items():
            flag = "--" + str(key).replace("_", "-")
            if str(key) in unused:
                continue
            if v is None:
                unset.append(flag)
            else:
                rows.append((flag, value_text(v, str(key))))
    if unset:
        rows.append(("not given", f"{len(unset)} option{'' if len(unset) == 1 else 's'} at their defaults: "
                     f"{', '.join(unset)} (`ssdlab run {run.suite.rsplit('/', 1)[-1]} --help` says what each "
                     "does)"))
    rows.append(("command", command_line(run)))
    return rows


# ---------------------------------------------------------------- events

def _steady_state(e: Mapping[str, Any]) -> str:
    parts = [f"{e.get('test', '?')}: {e.get('note', '')}"]
    window = e.get("window") or []
    if window:
        parts.append(f"window rounds {window[0]}-{window[-1]}")
    for name, d in (e.get("determinations") or {}).items():
        if isinstance(d, Mapping):
            rng, slope = float(d.get("range_pct", 0)), float(d.get("excursion_pct", 0))
            parts.append(f"{name}: {'steady' if d.get('steady') else 'not steady'} (range {rng:.2f}%, slope "
                         f"excursion {slope:.2f}%, fit y = {d.get('fit', '?')})")
    devices = e.get("devices") or {}
    if isinstance(devices, Mapping) and devices:  # several devices in lockstep: each judged on its own
        steady_devs = [k for k, per in devices.items() if isinstance(per, Mapping) and per
                       and all(isinstance(d, Mapping) and d.get("steady") for d in per.values())]
        parts.append(f"per device: {len(steady_devs)} of {len(devices)} steady"
                     + (f" (not steady: {', '.join(k for k in devices if k not in steady_devs)})"
                        if len(steady_devs) < len(devices) else ""))
    return "; ".join(parts)


def _resume(e: Mapping[str, Any]) -> str:
    parts = []
    if e.get("previous_status"):
        parts.append(f"resumed a run that was {e['previous_status']}")
    if e.get("resumed_at"):
        parts.append(f"continued at {e['resumed_at']}")
    repeated = e.get("repeated") or []
    parts.append("repeated: " + ", ".join(str(x) for x in repeated) if repeated else "no point had to be repeated")
    if e.get("stopped_fio_pids"):
        parts.append(f"stopped {len(e['stopped_fio_pids'])} fio process(es) left by the killed run")
    return "; ".join(parts)


def event_text(e: Mapping[str, Any]) -> tuple[str, str]:
    """(label, sentence) of one run event."""
    kind = str(e.get("kind", "note"))
    if kind == "pts-steady-state":
        return "steady state", _steady_state(e)
    if kind == "pts-wsat":
        return "WSAT", (f"{e.get('note', '')} ({e.get('samples', 0)} samples, "
                        f"{format_bytes(int(e.get('written_bytes') or 0))} written)")
    parts = [str(e["text"])] if e.get("text") else []
    if kind == "resume":
        parts.append(_resume(e))
        skip = {"previous_status", "repeated", "resumed_at", "stopped_fio_pids"}
    else:
        skip = set()
    if "points_done" in e:
        parts.append(f"{e['points_done']} point(s) finished at that time")
    for key, v in e.items():
        if key in _HIDDEN_EVENT_KEYS or key in skip or key == "points_done":
            continue
        parts.append(f"{humanize(key)}: {value_text(v, key)}")
    return humanize(kind), "; ".join(parts)


def event_rows(events: Sequence[Mapping[str, Any]], fmt_time: Any) -> list[tuple[str, str, str]]:
    """(time, label, text) of every event except test verdicts (the verdict panel shows those)."""
    rows = []
    for e in events:
        if e.get("kind") == "verdict":
            continue
        label, text = event_text(e)
        rows.append((fmt_time(str(e.get("time", ""))) if e.get("time") else "", label, text))
    return rows
