"""`ssdlab sim validate` (the model's validation table) and `ssdlab sim presets` (presets and parameters)."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any


def add_commands(subparsers: Any) -> dict[str, Any]:
    """Register `sim` with its `validate` and `presets` subcommands."""
    p = subparsers.add_parser("sim", help="the simulated SSD: validation table, presets and parameters",
                              description="Tools for sim: targets (results come from a model, not a drive).")
    sub = p.add_subparsers(dest="sim_command", required=True)
    v = sub.add_parser("validate", help="run the model's validation experiments; exit 1 if any is out of tolerance")
    v.add_argument("--json", action="store_true", help="print the lines as JSON")
    v.add_argument("--preset", action="append", metavar="NAME",
                   help="only this preset's table of published figures and shape checks (repeatable; the model's "
                        "analytic lines are then left out); default: the analytic lines and every preset")
    s = sub.add_parser("presets", help="list the presets, or every parameter of one preset")
    s.add_argument("preset", nargs="?", help="show this preset's parameters (sim:PRESET?key=value overrides them)")
    return {"sim": cmd_sim}


def cmd_sim(args: argparse.Namespace, env: Any) -> int:
    """Dispatch `ssdlab sim ...`."""
    if args.sim_command == "validate":
        return cmd_validate(args, env)
    return cmd_presets(args, env)


def cmd_validate(args: argparse.Namespace, env: Any) -> int:
    """Print the validation tables; 0 when every line and check passes, 1 otherwise."""
    from ssdlab.errors import UsageError
    from ssdlab.sim.presets import PRESETS
    from ssdlab.sim.tables import as_json, format_preset, run_preset
    from ssdlab.sim.validate import format_table, run_validation

    unknown = [p for p in args.preset or [] if p not in PRESETS]
    if unknown:
        raise UsageError(f"unknown sim preset {', '.join(unknown)}: use one of {', '.join(PRESETS)}")
    t0 = time.monotonic()
    lines = [] if args.preset else run_validation()
    results = [run_preset(name) for name in (args.preset or PRESETS)]
    bad = sum(not ln.ok for ln in lines) + sum(r.failed for r in results)
    if args.json:
        env.out(json.dumps({"lines": [ln.__dict__ for ln in lines], "presets": [as_json(r) for r in results]},
                           indent=1))
    else:
        for text in format_table(lines) if lines else []:
            env.out(text)
        for res in results:
            env.out("")
            for text in format_preset(res):
                env.out(text)
        total = len(lines) + sum(len(r.rows) + len(r.shapes) for r in results)
        env.out(f"{total - bad}/{total} lines and checks pass ({time.monotonic() - t0:.1f} s)")
    return 1 if bad else 0


def cmd_presets(args: argparse.Namespace, env: Any) -> int:
    """List presets, or the full parameter table of one preset."""
    from ssdlab.sim.presets import DEFAULT_PRESET, PRESETS, describe, resolve

    if not args.preset:
        for name, preset in PRESETS.items():
            mark = " (default)" if name == DEFAULT_PRESET else ""
            env.out(f"{name:<10} {preset.summary}{mark}")
        env.out("show one with `ssdlab sim presets NAME`; override any parameter as sim:NAME?key=value&key=value")
        return 0
    for key, value, meaning in describe(resolve(args.preset, {})):
        env.out(f"{key:<12} {value:>12}  {meaning}")
    return 0
