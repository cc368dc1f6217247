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
    s = sub.add_parser("presets", help="list the presets, or every parameter of one preset")
    s.add_argument("preset", nargs="?", help="show this preset's parameters (sim:PRESET?key=value overrides them)")
    return {"sim": cmd_sim}


def cmd_sim(args: argparse.Namespace, env: Any) -> int:
    """Dispatch `ssdlab sim ...`."""
    if args.sim_command == "validate":
        return cmd_validate(args, env)
    return cmd_presets(args, env)


def cmd_validate(args: argparse.Namespace, env: Any) -> int:
    """Print the validation table; 0 when every line is within tolerance, 1 otherwise."""
    from ssdlab.sim.validate import format_table, run_validation

    t0 = time.monotonic()
    lines = run_validation()
    bad = [ln for ln in lines if not ln.ok]
    if args.json:
        env.out(json.dumps([ln.__dict__ for ln in lines], indent=1))
    else:
        for text in format_table(lines):
            env.out(text)
        env.out(f"{len(lines) - len(bad)}/{len(lines)} within tolerance ({time.monotonic() - t0:.1f} s)")
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
