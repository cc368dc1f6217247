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
    v.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="measure presets in N worker processes (a family of presets that share experiments in one); "
                        "default 1")
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
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give 1 or more worker processes")
    t0, c0 = time.monotonic(), _cpu()

    def progress(text: str) -> None:
        if not args.quiet:
            env.err(f"[{time.monotonic() - t0:6.1f} s] {text}")

    progress.t0 = t0  # type: ignore[attr-defined]  # what worker processes count from

    lines, results = _measure(args, env, progress, list(args.preset or PRESETS))
    failed = sum(not ln.ok for ln in lines) + sum(r.failed for r in results)
    cpu, wall = _cpu() - c0, time.monotonic() - t0
    if args.json:
        env.out(json.dumps({"lines": [ln.__dict__ for ln in lines], "presets": [r.data for r in results],
                            "cpu_s": round(cpu, 1)}, indent=1))
    else:
        _summary(env, lines, results)
        env.out(f"({cpu:.0f} CPU-s, {wall:.0f} s)")
    return 1 if failed else 0


def _cpu() -> float:
    """CPU seconds of this process and of its finished worker processes."""
    import resource

    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def _measure(args: argparse.Namespace, env: Any, progress: Any, presets: list[str]) -> tuple[list[Any], list[Any]]:
    """The analytic lines (unless presets were named) and each preset's results (tables.Summary), printed in the
    presets' order as they come (text); with --jobs above 1, families of presets in parallel processes."""
    from ssdlab.sim.tables import families, run_family
    from ssdlab.sim.validate import format_table, run_validation

    lines = []
    if not args.preset:
        progress("the model's analytic lines")
        lines = run_validation()
        if not args.json:
            for text in format_table(lines):
                env.out(text)
    groups = [] if args.lines_only else families(presets)
    done: dict[str, Any] = {}
    shown = 0

    def show() -> None:
        nonlocal shown
        while shown < len(presets) and presets[shown] in done:
            if not args.json:
                env.out("")
                for text in done[presets[shown]].text:
                    env.out(text)
            shown += 1

    if args.jobs <= 1 or len(groups) <= 1:
        for group in groups:
            for res in run_family(group, not args.no_shapes, progress):
                done[res.preset] = res
                show()
    else:
        for res in _parallel(groups, args, progress):
            done[res.preset] = res
            show()
    return lines, [done[p] for p in presets if p in done]


def _parallel(groups: list[list[str]], args: argparse.Namespace, progress: Any) -> Any:
    """Each family in a forked worker process (progress lines go straight to stderr); results as they finish."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from ssdlab.sim.tables import run_family

    ctx = multiprocessing.get_context("fork")
    say = None if args.quiet else WorkerProgress(progress.t0)
    with ProcessPoolExecutor(args.jobs, mp_context=ctx) as pool:
        jobs = [pool.submit(run_family, group, not args.no_shapes, say) for group in groups]
        for job in as_completed(jobs):
            yield from job.result()


class WorkerProgress:
    """Progress lines of a worker process, straight to stderr (a picklable callable: the parent's writes through
    its environment)."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0

    def __call__(self, text: str) -> None:
        import sys

        sys.stderr.write(f"[{time.monotonic() - self.t0:6.1f} s] {text}\n")
        sys.stderr.flush()


def _summary(env: Any, lines: list[Any], results: list[Any]) -> None:
    """One line per part: how many pass of how many."""
    env.out("")
    if lines:
        env.out(f"analytic lines: {sum(ln.ok for ln in lines)}/{len(lines)} pass")
    evidence = sum(r.evidence for r in results)
    if evidence:
        env.out(f"evidence rows: {evidence - sum(r.failed_evidence for r in results)}/{evidence} pass")
    shapes = sum(r.shapes for r in results)
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
        if rec is None or not r.has_rows:
            continue
        got = (r.evidence, r.failed_evidence, round(r.worst or 0.0, 2))
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
