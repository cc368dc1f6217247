"""Command line: argument parsing and the single error boundary (exit codes live in errors.ExitCode)."""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ssdlab import __version__
from ssdlab.errors import ExitCode, SsdlabError, UnsafeTargetError, UsageError
from ssdlab.fio import runner as fio_runner
from ssdlab.units import format_bytes, format_duration, parse_size


@dataclass
class Env:
    """Streams and terminal facts, injectable so tests can call main() in-process."""

    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    stdin: IO[str] = field(default_factory=lambda: sys.stdin)

    def out(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def err(self, text: str) -> None:
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def interactive(self) -> bool:
        try:
            return self.stdin.isatty() and self.stderr.isatty()
        except (AttributeError, ValueError):
            return False


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# Modules that add subcommands: each defines add_commands(subparsers) -> {name: handler(args, env) -> int}.
EXTENSIONS = ("ssdlab.commands.sim", "ssdlab.commands.sscheck", "ssdlab.commands.histlog",
              "ssdlab.commands.plot", "ssdlab.commands.verify", "ssdlab.commands.compare",
              "ssdlab.commands.catalog")


DEFAULT_TARGET = "sim:tlc-4k"  # the built-in default: a simulated drive, so nothing real is ever written


def _add_target_args(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    p.add_argument("--target", "-t", required=required, action="append",
                   help="null | file:PATH?size=4GiB | PATH | /dev/DEVICE | sim:PRESET "
                        "(repeat for suites that drive several devices; default: " + DEFAULT_TARGET + ")")
    p.add_argument("--size", type=parse_size, help="size of a file target to create (default 1GiB)")
    p.add_argument("--capacity", type=parse_size, help="use only this many bytes of the target")
    p.add_argument("--ioengine", default="libaio", choices=["libaio", "io_uring", "psync", "sync", "posixaio"],
                   help="fio I/O engine for file and block targets (default libaio)")


def _add_plan_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", help="suite name (see `ssdlab suites`)")
    _add_target_args(p)
    p.add_argument("--runtime", type=float, metavar="SECONDS", help="measured time per point")
    p.add_argument("--ramp", type=float, metavar="SECONDS", help="ramp time before measuring each point")
    p.add_argument("--footprint", metavar="N|N%",
                   help="I/O only in the first N bytes or N%% of the target (active range, e.g. 5%%)")
    p.add_argument("--misalign", type=parse_size, metavar="BYTES",
                   help="add BYTES to every I/O offset (e.g. 512: 4K writes no longer 4K-aligned)")
    _add_suite_options(p)


def _add_suite_options(p: argparse.ArgumentParser) -> None:
    """Every option any suite declares, once; which ones apply is checked after parsing."""
    from ssdlab.suites.base import all_suites

    seen: set[str] = set()
    group = p.add_argument_group("suite options (each applies to the suites that declare it)")
    for suite in all_suites().values():
        for opt in suite.suite_options():
            if opt.name in seen:
                continue
            seen.add(opt.name)
            kwargs: dict[str, Any] = {"dest": "sopt_" + opt.key, "default": None,
                                      "help": opt.help.replace("%", "%%")}  # argparse formats help with %
            if opt.kind == "flag":
                kwargs["action"] = "store_const"
                kwargs["const"] = True
            else:
                kwargs["type"] = {"int": int, "float": float, "size": parse_size}.get(opt.kind, str)
                kwargs["metavar"] = opt.name.upper().replace("-", "_")
                if opt.choices:
                    kwargs["choices"] = list(opt.choices)
                if opt.repeat:
                    kwargs["action"] = "append"
            group.add_argument(f"--{opt.name}", **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ssdlab", description="An open SSD characterization lab built on fio.",
                     epilog="Exit codes: 0 ok, 1 negative verdict (not steady, fail, incomplete), 2 usage, 3 target, "
                            "4 refused (unsafe), "
                            "5 fio missing, 6 fio failed, 7 results dir, 8 stored results, 130 interrupted.")
    parser.add_argument("--version", action="version", version=f"ssdlab {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show Python tracebacks (for developers)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("run", help="run a suite and write results into a directory")
    _add_plan_args(p)
    p.add_argument("--out", "-o", type=Path, help="results directory (default results/<time>-<suite>-<target>)")
    p.add_argument("--force", action="store_true", help="reuse a non-empty --out directory")
    p.add_argument("--destructive", action="store_true",
                   help="consent to overwrite a device that carries a filesystem or partition table")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask to type the device name back")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    p.add_argument("--no-report", action="store_true", help="skip rendering report.html")
    p.add_argument("--on-error", choices=["stop", "continue"], default="stop",
                   help="on an I/O error or fio failure: stop the run (default), or record the failed point "
                        "with every error and its offset, and go on with the next point (exit code 6 at the end)")

    p = sub.add_parser("plan", help="print the test points, ETA and what would be overwritten; runs nothing "
                                    "(exits 4 when the run would be refused)")
    _add_plan_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable plan")
    p.add_argument("--destructive", action="store_true", help="plan the run as `run --destructive` would do it")
    p.add_argument("--yes", "-y", action="store_true", help="accepted for symmetry with run (plan never asks)")

    p = sub.add_parser("resume", help="continue an interrupted run from its first unfinished point")
    p.add_argument("dir", type=Path)
    p.add_argument("--yes", "-y", action="store_true")
    p.add_argument("--destructive", action="store_true")
    p.add_argument("--quiet", "-q", action="store_true")
    p.add_argument("--no-report", action="store_true")

    p = sub.add_parser("report", help="re-render report.html of a stored run")
    p.add_argument("dir", metavar="RUN", help="run directory or catalog id (see `ssdlab runs`)")
    p.add_argument("--junit", type=Path, metavar="FILE", help="also write the run's verdicts as JUnit XML")

    p = sub.add_parser("export", help="print stored runs' results to stdout (several runs: one CSV)")
    p.add_argument("dirs", nargs="+", metavar="RUN", help="run directories or catalog ids")
    p.add_argument("--format", choices=["csv", "json"], default="csv")

    sub.add_parser("suites", help="list the suites")

    p = sub.add_parser("info", help="identity, capacity and write safety of a target")
    p.add_argument("target")
    p.add_argument("--json", action="store_true")
    for modname in EXTENSIONS:
        EXTENSION_COMMANDS.update(importlib.import_module(modname).add_commands(sub))
    return parser


EXTENSION_COMMANDS: dict[str, Any] = {}


# ------------------------------------------------------------------ commands

def target_options(size: int | None, capacity: int | None, ioengine: str | None) -> Any:
    from ssdlab.targets import TargetOptions

    return TargetOptions(size=size, capacity=capacity, ioengine=ioengine or "libaio")


def make_target(specs: Sequence[str], suite: Any, opts: Any) -> Any:
    """One Target from one or more --target strings (several only for suites that accept them)."""
    from ssdlab.targets import parse_target

    if len(specs) > 1:
        if not suite.multi_target:
            raise UsageError(f"suite {suite.name} runs on one target; {len(specs)} --target options given")
        from ssdlab.targets.multi import MultiTarget

        return MultiTarget.from_targets([parse_target(s, opts) for s in specs], opts)
    return parse_target(specs[0], opts)


def _target(args: argparse.Namespace, suite: Any) -> Any:
    opts = target_options(getattr(args, "size", None), getattr(args, "capacity", None),
                          getattr(args, "ioengine", None))
    if not args.target:
        args.target = [DEFAULT_TARGET]
    return make_target(args.target, suite, opts)


def suite_option_values(args: argparse.Namespace, suite: Any) -> dict[str, Any]:
    """Values of the chosen suite's options (defaults filled in); reject options of other suites."""
    from ssdlab.suites.base import all_suites

    mine = {o.key: o for o in suite.suite_options()}
    values: dict[str, Any] = {}
    for other in all_suites().values():
        for opt in other.suite_options():
            given = getattr(args, "sopt_" + opt.key, None)
            if given is not None and opt.key not in mine:
                raise UsageError(f"--{opt.name} does not apply to suite {suite.name}")
    for key, opt in mine.items():
        given = getattr(args, "sopt_" + key, None)
        if opt.kind == "float" and given is not None and not math.isfinite(given):
            raise UsageError(f"--{opt.name} {given} is not a finite number")
        values[key] = opt.default if given is None else given
    return values


def make_context(target: Any, runtime: float | None, ramp: float | None, options: dict[str, Any],
                 footprint: str | None = None, misalign: int | None = None) -> Any:
    from ssdlab.suites.base import PlanContext, common_limits

    lbs = target.logical_block_size()
    capacity, limit, shift = common_limits(target.capacity(), lbs, footprint, misalign)
    return PlanContext(capacity=capacity, logical_block_size=lbs,
                       target_kind=target.kind, runtime_s=runtime, ramp_s=ramp, options=options,
                       footprint=limit, misalign=shift, devices=len(getattr(target, "members", ())) or 1)


def _context(args: argparse.Namespace, target: Any, suite: Any) -> Any:
    return make_context(target, args.runtime, args.ramp, suite_option_values(args, suite),
                        getattr(args, "footprint", None), getattr(args, "misalign", None))


def _check_times(args: argparse.Namespace) -> None:
    from ssdlab.preflight import check_times

    check_times(getattr(args, "runtime", None), getattr(args, "ramp", None))


def cmd_suites(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.suites.base import all_suites

    suites = sorted(all_suites().items())
    width = max(len(name) for name, _ in suites)
    for name, suite in suites:
        mark = "writes" if suite.writes else "read-only"
        env.out(f"{name:<{width}}  {mark:<9}  {suite.summary}")
    return 0


def cmd_plan(args: argparse.Namespace, env: Env) -> int:
    from ssdlab import safety
    from ssdlab.preflight import check_plan
    from ssdlab.suites import get_suite

    _check_times(args)
    suite = get_suite(args.suite)
    target = _target(args, suite)
    ctx = _context(args, target, suite)
    points = check_plan(suite, ctx, target)
    eta = suite.eta_seconds(ctx)
    decision = safety.decide(suite, ctx, target)
    verdict = safety.assess(target, destructive=args.destructive) if decision.writes else safety.Assessment(())
    if not decision.writes:
        destroys = "nothing (no point writes)"
    elif verdict.refusal:
        destroys = "nothing: the run would be refused"
    else:
        destroys = target.destroys()
    if args.json:
        from ssdlab.model import to_dict

        env.out(json.dumps({
            "suite": suite.name, "target": target.info(), "eta_seconds": eta, "writes": decision.writes,
            "writes_because": decision.reason or None, "destroys": destroys,
            "hazards": [h.text for h in verdict.hazards], "refused": verdict.refusal or None,
            "needs_confirmation": verdict.needs_consent, "notes": suite.plan_notes(ctx),
            "points": [to_dict(p) for p in points],
            **suite.plan_extra(ctx),  # suite-specific keys (e.g. ACT's "derived" rates)
        }, indent=1))
    else:
        _print_plan(env, suite, target, ctx, points, eta)
        env.out(f"writes: {decision.summary()}")
        env.out(f"will overwrite: {destroys}")
        for h in verdict.hazards:
            env.out(f"  ! {h.text}" + (" (blocks any write)" if h.blocking else
                                       " (accepted: --destructive)" if args.destructive else " (needs --destructive)"))
        if verdict.needs_consent and not verdict.refusal:
            env.out("consent: `run` asks to type the name back, or takes --yes")
    if verdict.refusal:
        raise UnsafeTargetError(verdict.refusal)
    return 0


def _print_plan(env: Env, suite: Any, target: Any, ctx: Any, points: list[Any], eta: float) -> None:
    env.out(f"suite {suite.name}: {suite.summary}")
    env.out(f"target {target.name} ({target.kind}, {format_bytes(target.capacity())})")
    env.out(f"{'#':>3}  {'point':<34} {'rw':<10} {'bs':>8} {'QD':>4} {'T':>3} {'time':>8}")
    for i, p in enumerate(points, 1):
        w = p.workload
        t = format_duration(p.est_seconds) if w.runtime_s is not None else (
            f"{format_bytes(w.io_bytes or 0)}" if w.io_bytes else "-")
        env.out(f"{i:>3}  {p.id:<34} {w.rw:<10} {w.bssplit or format_bytes(w.bs):>8} {w.iodepth:>4} "
                f"{w.numjobs:>3} {t:>8}")
    env.out(f"{len(points)} points, estimated duration {format_duration(eta)}")
    for note in suite.plan_notes(ctx):
        env.out(note)


def _finish(run: Any, run_dir: Path, args: argparse.Namespace, env: Env) -> int:
    """End of run/resume: the console summary (results and the verdict panel), the report, and the exit code
    of the run's verdicts (verdict.run_verdicts: the one mapping from results to exit codes)."""
    from ssdlab.report.terminal import print_results
    from ssdlab.verdict import run_verdicts

    verdicts = run_verdicts(run)
    if not args.quiet:
        print_results(run, env.stderr, verdicts)
    if not args.no_report:
        report = _render(run_dir)
        env.out(str(report.resolve()))
    else:
        env.out(str(run_dir))
    if verdicts.exit_code == ExitCode.FIO_FAILED:  # --on-error continue finished the run, but points failed
        first = verdicts.failed_points[0]
        env.err(f"ssdlab: {len(verdicts.failed_points)} point(s) failed: {first.point.id}: {first.reason}")
    return verdicts.exit_code


def verdict_exit_code(run: Any) -> int:
    """The exit code of the verdicts a suite's conclude() recorded (verdict.run_verdicts). A run still being
    concluded (status running) is judged as the complete run it is about to become."""
    import dataclasses

    from ssdlab.verdict import run_verdicts

    if run.status == "running":
        run = dataclasses.replace(run, status="complete")
    return run_verdicts(run).exit_code


def _render(run_dir: Path) -> Path:
    from ssdlab.report.html import render_report
    from ssdlab.store import load_run

    return render_report(load_run(run_dir), run_dir)


def cmd_run(args: argparse.Namespace, env: Env) -> int:
    from ssdlab import orchestrate, safety, store
    from ssdlab.executor import executor_for
    from ssdlab.preflight import check_plan
    from ssdlab.progress import make_progress
    from ssdlab.suites import get_suite

    _check_times(args)
    suite = get_suite(args.suite)
    target = _target(args, suite)
    ctx = _context(args, target, suite)
    check_plan(suite, ctx, target)  # every option and the whole plan, before anything is created
    grant = safety.authorize(target, safety.decide(suite, ctx, target), destructive=args.destructive, yes=args.yes,
                             console=env)
    executor = executor_for(target, grant)
    run_dir = store.create_run_dir(args.out or store.default_run_dir(suite.name, target.name), force=args.force)
    options = {
        "suite": suite.name, "target_specs": _recorded_specs(args.target, target), "size": args.size,
        "capacity": args.capacity,
        "ioengine": args.ioengine, "runtime_s": args.runtime, "ramp_s": args.ramp, "suite_options": ctx.options,
        "footprint": args.footprint, "misalign": args.misalign, "on_error": args.on_error,
    }
    with store.locked(run_dir):
        run = orchestrate.new_run(suite, target, executor, options, run_dir)
        env.err(f"results: {run_dir}")
        run = orchestrate.drive(run_dir, run, suite, ctx, target, executor,
                                make_progress(env.stderr, args.quiet), grant=grant)
    return _finish(run, run_dir, args, env)


def _recorded_specs(specs: Sequence[str], target: Any) -> list[str]:
    """Target strings as `resume` will parse them: a file target's path made absolute (resume may run in
    another directory and must open the same file)."""
    if len(specs) == 1 and target.kind == "file":
        return [str(target.spec)]
    return list(specs)


def _stop_orphan_fio(run_dir: Path) -> list[int]:
    """Kill fio processes left running on this run's points by a killed ssdlab (fio's forked job processes
    survive it and can hang); only processes whose command line names a job file under run_dir/points/."""
    marker = str(run_dir.resolve() / "points").encode()
    stopped = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and Path(argv[0].decode(errors="replace")).name == "fio" and any(marker in a for a in argv[1:]):
            try:
                os.kill(int(proc.name), signal.SIGKILL)
                stopped.append(int(proc.name))
            except OSError:
                pass
    return stopped


def cmd_resume(args: argparse.Namespace, env: Env) -> int:
    from ssdlab import store

    run = store.load_run(args.dir)
    if run.status == "complete":
        env.err(f"{args.dir} is already complete; nothing to resume")
        return _finish(run, args.dir, args, env)
    with store.locked(args.dir):
        run = _resume_locked(args, env, store.load_run(args.dir))
    return _finish(run, args.dir, args, env)


def _resume_locked(args: argparse.Namespace, env: Env, run: Any) -> Any:
    """The resume proper, under the run directory's lock (so no other process owns its fio)."""
    from ssdlab import orchestrate, safety, store
    from ssdlab.executor import executor_for
    from ssdlab.progress import make_progress
    from ssdlab.suites import get_suite

    o = run.options
    suite = get_suite(run.suite)
    target = make_target(o["target_specs"], suite, target_options(o.get("size"), o.get("capacity"),
                                                                  o.get("ioengine")))
    ctx = make_context(target, o.get("runtime_s"), o.get("ramp_s"), dict(o.get("suite_options", {})),
                       o.get("footprint"), o.get("misalign"))
    # consent is asked again: the target may have changed since the run started (resume re-authorizes)
    grant = safety.authorize(target, safety.decide(suite, ctx, target), destructive=args.destructive, yes=args.yes,
                             console=env)
    executor = executor_for(target, grant)
    unfinished = [p.point.id for p in run.points if p.status == "failed"]
    pending = suite.next_points(ctx, run)
    resumed_at = pending[0].id if pending else ""
    # a point killed mid-run (Ctrl-C, kill -9, power loss) was never recorded but left its directory: it runs again
    if resumed_at and resumed_at not in unfinished and store.point_dir(args.dir, resumed_at).exists():
        unfinished.append(resumed_at)
    orphans = _stop_orphan_fio(args.dir)
    run = run.with_event({"time": store.now_iso(), "kind": "resume", "previous_status": run.status,
                          "points_done": len(run.ok_points()), "repeated": unfinished, "resumed_at": resumed_at,
                          "stopped_fio_pids": orphans})
    return orchestrate.drive(args.dir, run, suite, ctx, target, executor, make_progress(env.stderr, args.quiet),
                             grant=grant)


def cmd_report(args: argparse.Namespace, env: Env) -> int:
    """Re-render report.html (and JUnit XML with --junit); the exit code is the stored run's verdict (0 positive,
    1 negative/incomplete)."""
    from ssdlab.catalog import resolve
    from ssdlab.store import load_run
    from ssdlab.verdict import run_verdicts

    run_dir = resolve(args.dir)
    run = load_run(run_dir)
    if args.junit is not None:
        from ssdlab.report import junit

        if not args.junit.parent.is_dir():
            raise UsageError(f"--junit {args.junit}: directory {args.junit.parent} does not exist")
        junit.write(args.junit, "ssdlab report", [junit.run_suite(run)])
    env.out(str(_render(run_dir).resolve()))
    return run_verdicts(run).exit_code


def cmd_export(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.catalog import read_tags, resolve
    from ssdlab.report import export
    from ssdlab.store import load_run

    dirs = [resolve(d) for d in args.dirs]
    runs = [(load_run(d), read_tags(d).get("label", "")) for d in dirs]
    env.stdout.write(export.to_csv_many(runs) if args.format == "csv" else export.to_json_many([r for r, _ in runs]))
    return 0


def cmd_info(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.targets import parse_target

    target = parse_target(args.target)
    info = target.info()
    if args.json:
        env.out(json.dumps(info, indent=1))
        return 0
    env.out(f"target:    {info.get('name')} ({info.get('kind')})")
    env.out(f"capacity:  {format_bytes(info.get('capacity_bytes', 0))} ({info.get('capacity_bytes', 0)} bytes)")
    env.out(f"blocks:    logical {info.get('logical_block_size')} B, physical {info.get('physical_block_size')} B")
    for k, v in (info.get("identity") or {}).items():
        env.out(f"{k + ':':<10} {v}")
    hazards = target.hazards()
    if not hazards:
        env.out("writable:  yes" + (" (write suites still ask for confirmation)" if target.needs_write_consent()
                                     else ""))
    for h in hazards:
        env.out(f"writable:  NO: {h.text}" + ("" if h.blocking else " (override with --destructive)"))
    if info.get("note"):
        env.out(f"note:      {info['note']}")
    return 0


COMMANDS = {"run": cmd_run, "plan": cmd_plan, "resume": cmd_resume, "report": cmd_report,
            "export": cmd_export, "suites": cmd_suites, "info": cmd_info}


def main(argv: Sequence[str] | None = None, env: Env | None = None) -> int:
    """Entry point and the single error boundary: one line per error, a distinct exit code."""
    env = env or Env()
    args_list = list(sys.argv[1:] if argv is None else argv)
    show_tb = "--traceback" in args_list  # accepted anywhere on the line, before or after the subcommand
    args_list = [a for a in args_list if a != "--traceback"]
    fio_runner.clear_stop_request()
    previous_handlers = _install_interrupt_handlers()
    try:
        args = build_parser().parse_args(args_list)
        handler = COMMANDS.get(args.command) or EXTENSION_COMMANDS[args.command]
        return int(handler(args, env))
    except SsdlabError as exc:
        if show_tb:
            traceback.print_exc(file=env.stderr)
        env.err(f"ssdlab: error: {exc}")
        return int(exc.exit_code)
    except KeyboardInterrupt:
        env.err("ssdlab: interrupted")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the boundary: an unexpected error still gets one line
        if show_tb:
            traceback.print_exc(file=env.stderr)
        env.err(f"ssdlab: internal error: {type(exc).__name__}: {exc} (rerun with --traceback and report it)")
        return 70
    finally:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)


def _raise_interrupt(signum: int, frame: Any) -> None:
    fio_runner.request_stop()  # remembered too: a KeyboardInterrupt raised inside a finalizer would be lost
    raise KeyboardInterrupt


def _install_interrupt_handlers() -> dict[int, Any]:
    """Treat Ctrl-C and SIGTERM (service managers, CI timeouts) alike, so finished points are saved and the
    run is marked interrupted; returns the previous handlers (none when not on the main thread)."""
    previous: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, _raise_interrupt)
        except ValueError:  # signal handlers can only be set from the main thread
            break
    return previous


if __name__ == "__main__":
    raise SystemExit(main())
