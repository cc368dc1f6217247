"""`ssdlab sim validate` (the model's validation tables) and `ssdlab sim presets` (presets and parameters)."""

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
    v = sub.add_parser("validate", help="the model's validation: analytic lines, each reviewed drive's evidence "
                                        "(measured as its review measured it) and every preset's shape rules; "
                                        "exit 1 if any fails",
                       description="Runs for minutes (docs/sim.md gives the time); progress goes to stderr.")
    v.add_argument("--json", action="store_true", help="print the results as JSON")
    v.add_argument("--preset", action="append", metavar="NAME",
                   help="only this preset's figures and shape rules (repeatable; the model's analytic lines are "
                        "then left out); default: the analytic lines and every preset")
    v.add_argument("--no-shapes", action="store_true", help="leave the shape rules out (figures only)")
    v.add_argument("--lines-only", action="store_true", help="only the model's analytic lines (seconds)")
    v.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    s = sub.add_parser("presets", help="list the presets, or every parameter of one preset")
    s.add_argument("preset", nargs="?", help="show this preset's parameters (sim:PRESET?key=value overrides them)")
    return {"sim": cmd_sim}


def cmd_sim(args: argparse.Namespace, env: Any) -> int:
    """Dispatch `ssdlab sim ...`."""
    if args.sim_command == "validate":
        return cmd_validate(args, env)
    return cmd_presets(args, env)


def cmd_validate(args: argparse.Namespace, env: Any) -> int:
    """Print the validation tables, preset after preset as each is measured; 0 when every analytic line, every
    evidence row and every shape rule passes, 1 otherwise."""
    from ssdlab.errors import UsageError
    from ssdlab.sim.presets import PRESETS

    unknown = [p for p in args.preset or [] if p not in PRESETS]
    if unknown:
        raise UsageError(f"unknown sim preset {', '.join(unknown)}: use one of {', '.join(PRESETS)}")
    if args.lines_only and args.preset:
        raise UsageError("--lines-only runs the model's analytic lines, which --preset leaves out: give one of them")
    t0, c0 = time.monotonic(), time.process_time()

    def progress(text: str) -> None:
        if not args.quiet:
            env.err(f"[{time.monotonic() - t0:6.1f} s] {text}")

    lines, results = _measure(args, env, progress, list(args.preset or PRESETS))
    failed = sum(not ln.ok for ln in lines) + sum(r.failed for r in results)
    cpu, wall = time.process_time() - c0, time.monotonic() - t0
    if args.json:
        from ssdlab.sim.tables import as_json

        env.out(json.dumps({"lines": [ln.__dict__ for ln in lines], "presets": [as_json(r) for r in results],
                            "cpu_s": round(cpu, 1)}, indent=1))
    else:
        _summary(env, lines, results)
        env.out(f"({cpu:.0f} CPU-s, {wall:.0f} s)")
    return 1 if failed else 0


def _measure(args: argparse.Namespace, env: Any, progress: Any, presets: list[str]) -> tuple[list[Any], list[Any]]:
    """The analytic lines (unless presets were named) and each preset's results, printed as they come (text)."""
    from ssdlab.sim.procedures import Seeds
    from ssdlab.sim.tables import format_preset, run_preset
    from ssdlab.sim.validate import format_table, run_validation

    lines = []
    if not args.preset:
        progress("the model's analytic lines")
        lines = run_validation()
        if not args.json:
            for text in format_table(lines):
                env.out(text)
    results = []
    seeds = Seeds(progress)  # one set of experiments: a table may read another preset's (the P5430's OP ratio)
    for name in [] if args.lines_only else presets:
        res = run_preset(name, progress, seeds, shapes=not args.no_shapes)
        results.append(res)
        if not args.json:
            env.out("")
            for text in format_preset(res):
                env.out(text)
    return lines, results


def _summary(env: Any, lines: list[Any], results: list[Any]) -> None:
    """One line per part: how many pass of how many."""
    env.out("")
    if lines:
        env.out(f"analytic lines: {sum(ln.ok for ln in lines)}/{len(lines)} pass")
    evidence = sum(len(r.evidence) for r in results)
    if evidence:
        env.out(f"evidence rows: {evidence - sum(r.failed_evidence for r in results)}/{evidence} pass")
    shapes = sum(len(r.shapes) for r in results)
    if shapes:
        env.out(f"shape rules: {shapes - sum(r.failed_shapes for r in results)}/{shapes} pass")
    for text in _stale(results):
        env.out(text)


def _stale(results: list[Any]) -> list[str]:
    """A line for each preset whose measured evidence differs from what presets.REVIEWS records for reports."""
    from ssdlab.sim.presets import REVIEWS

    out = []
    for r in results:
        rec = REVIEWS.get(r.preset)
        if rec is None or not r.rows:
            continue
        got = (len(r.evidence), r.failed_evidence, round(r.worst or 0.0, 2))
        if got != (rec.evidence, rec.failed, rec.worst):
            out.append(f"{r.preset}: {got[0]} evidence rows, {got[1]} fail, worst {got[2]:.2f}; presets.REVIEWS "
                       f"records {rec.evidence}, {rec.failed}, {rec.worst:.2f} for reports: update it")
    return out


def cmd_presets(args: argparse.Namespace, env: Any) -> int:
    """List presets (with each calibrated one's `sim validate` result as last measured), or the full parameter
    table of one preset."""
    import textwrap

    from ssdlab.sim.presets import DEFAULT_PRESET, PRESETS, REVIEWS, calibration, describe, resolve

    if not args.preset:
        for name, preset in PRESETS.items():
            mark = " (default)" if name == DEFAULT_PRESET else ""
            env.out(f"{name:<10} {preset.summary}{mark}")
            if name in REVIEWS:
                r = REVIEWS[name]
                env.out(f"{'':<10} sim validate: {r.evidence} of its review's figures are evidence, {r.failed} fail, "
                        f"worst ratio {r.worst:.2f}")
        env.out("show one with `ssdlab sim presets NAME`; override any parameter as sim:NAME?key=value&key=value")
        return 0
    values = resolve(args.preset, {})
    for text in textwrap.wrap(calibration(args.preset), 110):
        env.out(text)
    for key, value, meaning in describe(values):
        env.out(f"{key:<12} {value:>12}  {meaning}")
    return 0
