"""Command line: argument parsing and the single error boundary (exit codes live in errors.ExitCode)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import signal
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from ssdlab import __version__
from ssdlab.errors import ExitCode, SsdlabError, UnsafeTargetError, UsageError
from ssdlab.termtext import printable
from ssdlab.units import format_bytes, format_duration, parse_size

if TYPE_CHECKING:
    from pathlib import Path


class Env:
    """Streams and terminal facts, injectable so tests can call main() in-process."""

    def __init__(self, stdout: IO[str] | None = None, stderr: IO[str] | None = None,
                 stdin: IO[str] | None = None) -> None:
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.stdin = stdin or sys.stdin

    def out(self, text: str = "") -> None:
        """One or more lines for stdout; control characters from stored data are shown escaped (termtext)."""
        self.stdout.write(printable(text, newlines=True) + "\n")
        self.stdout.flush()

    def err(self, text: str) -> None:
        self.stderr.write(printable(text, newlines=True) + "\n")
        self.stderr.flush()

    def interactive(self) -> bool:
        try:
            return self.stdin.isatty() and self.stderr.isatty()
        except (AttributeError, ValueError):
            return False


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# Subcommands contributed by modules under ssdlab/commands/: command name -> (module, one-line help). A module
# defines add_commands(subparsers) -> {name: handler(args, env) -> int}; it is imported only when one of its
# commands is invoked, so `ssdlab --help` and every other command list it without loading it.
EXTENSIONS: dict[str, tuple[str, str]] = {
    "sim": ("ssdlab.commands.sim", "the simulated SSD: validation table, presets and parameters"),
    "ss-check": ("ssdlab.commands.sscheck",
                 "check a series of per-round values against the SNIA PTS steady-state rule"),
    "hist-log": ("ssdlab.commands.histlog", "per-interval latency percentiles (CSV) from fio histogram logs"),
    "plot": ("ssdlab.commands.plot", "chart any metric against any swept parameter of stored runs (SVG/PNG)"),
    "verify": ("ssdlab.commands.verify", "check again what an integrity run wrote (read-only); exit 1 on any mismatch"),
    "latency": ("ssdlab.commands.latency",
                "latency histogram, CDF, exceedance and confidence levels of any stored point (from fio's bins)"),
    "agent": ("ssdlab.commands.agent",
              "serve this host's devices to an ssdlab controller (fio --server, loopback only by default)"),
    "compare": ("ssdlab.commands.compare",
                "compare stored runs side by side (HTML + CSV); gate on regressions with --fail-on"),
    "runs": ("ssdlab.commands.catalog",
             "list the runs of a results root (SQLite catalog), filtered by device, model, suite, verdict, tag"),
    "tag": ("ssdlab.commands.catalog", "add or remove notes on a stored run (DIR/tags.json)"),
}


DEFAULT_TARGET = "sim:tlc-4k"  # the built-in default: a simulated drive, so nothing real is ever written


def _add_target_args(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    p.add_argument("--target", "-t", required=required, action="append",
                   help="null | file:PATH?size=4GiB | PATH | /dev/DEVICE | sim:PRESET "
                        "(repeat for suites that drive several devices; default: " + DEFAULT_TARGET + ")")
    p.add_argument("--size", type=parse_size, help="size of a file target to create (default 1GiB)")
    p.add_argument("--capacity", type=parse_size, help="use only this many bytes of the target")
    p.add_argument("--ioengine", default="libaio", choices=["libaio", "io_uring", "psync", "sync", "posixaio"],
                   help="fio I/O engine for file and block targets (default libaio)")
    p.add_argument("--hosts", metavar="INVENTORY",
                   help="run on every device of every agent host listed in this TOML inventory at once "
                        "(`ssdlab agent` on each host; docs/hosts.md); instead of --target")


def _add_plan_args(p: argparse.ArgumentParser, suite: str | None) -> None:
    p.add_argument("suite", help="suite name (see `ssdlab suites`)")
    _add_target_args(p)
    p.add_argument("--runtime", type=float, metavar="SECONDS", help="measured time per point")
    p.add_argument("--ramp", type=float, metavar="SECONDS", help="ramp time before measuring each point")
    p.add_argument("--footprint", metavar="N|N%",
                   help="I/O only in the first N bytes or N%% of the target (active range, e.g. 5%%)")
    p.add_argument("--misalign", type=parse_size, metavar="BYTES",
                   help="add BYTES to every I/O offset (e.g. 512: 4K writes no longer 4K-aligned)")
    p.add_argument("--write-cache", choices=["on", "off"],
                   help="set the drive's volatile write cache for the run (NVMe feature 6, SATA/SAS cache_type); "
                        "restored afterwards; needs the same consent as writing")
    p.add_argument("--power-state", type=int, metavar="N",
                   help="hold an NVMe drive in operational power state N for the run (feature 2); restored "
                        "afterwards; needs the same consent as writing")
    if suite != "":
        _add_suite_options(p, suite)


def _add_suite_options(p: argparse.ArgumentParser, suite_name: str | None = None) -> None:
    """The named suite's options (only its family is loaded), or every option any suite declares (once; which
    ones apply is checked after parsing) when no suite, or no known suite, is named."""
    from ssdlab.errors import SsdlabError
    from ssdlab.suites import all_suites, get_suite
    from ssdlab.suites.base import load_toml_option

    try:
        suites = [get_suite(suite_name)] if suite_name else list(all_suites().values())
    except SsdlabError:  # not a suite (a typo, an option's value): every suite's options, the error comes later
        suites = list(all_suites().values())
    seen: set[str] = set()
    group = p.add_argument_group("suite options (each applies to the suites that declare it)")
    for suite in suites:
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
                kwargs["type"] = {"int": int, "float": float, "size": parse_size,
                                  "toml": load_toml_option}.get(opt.kind, str)
                kwargs["metavar"] = opt.name.upper().replace("-", "_")
                if opt.choices:
                    kwargs["choices"] = list(opt.choices)
                if opt.repeat:
                    kwargs["action"] = "append"
            group.add_argument(f"--{opt.name}", **kwargs)


def _run_args(p: argparse.ArgumentParser, suite: str | None) -> None:
    from pathlib import Path

    _add_plan_args(p, suite)
    p.add_argument("--out", "-o", type=Path, help="results directory (default results/<time>-<suite>-<target>)")
    p.add_argument("--force", action="store_true", help="reuse a non-empty --out directory")
    p.add_argument("--destructive", action="store_true",
                   help="consent to overwrite a device that carries a filesystem or partition table")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask to type the device name back")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    p.add_argument("--no-report", action="store_true", help="skip rendering report.html")
    p.add_argument("--on-error", choices=["stop", "continue"], default="stop",
                   help="on an I/O error or fio failure: stop the run (default), or record the failed point "
                        "with every error and its offset, and go on with the next point (exit code 6 at the end); "
                        "on several devices or hosts, later points go on without a device or host that failed")
    p.add_argument("--straggler-margin", type=float, default=10.0, metavar="PCT",
                   help="a device more than PCT%% below its group's median is reported as a straggler (10)")


def _plan_args(p: argparse.ArgumentParser, suite: str | None) -> None:
    _add_plan_args(p, suite)
    p.add_argument("--json", action="store_true", help="machine-readable plan")
    p.add_argument("--destructive", action="store_true", help="plan the run as `run --destructive` would do it")
    p.add_argument("--yes", "-y", action="store_true", help="accepted for symmetry with run (plan never asks)")


def _resume_args(p: argparse.ArgumentParser, suite: str | None) -> None:
    from pathlib import Path

    p.add_argument("dir", type=Path)
    p.add_argument("--yes", "-y", action="store_true")
    p.add_argument("--destructive", action="store_true")
    p.add_argument("--quiet", "-q", action="store_true")
    p.add_argument("--no-report", action="store_true")



def _report_args(p: argparse.ArgumentParser, suite: str | None) -> None:
    from pathlib import Path

    p.add_argument("dir", metavar="RUN", help="run directory or catalog id (see `ssdlab runs`)")
    p.add_argument("--junit", type=Path, metavar="FILE", help="also write the run's verdicts as JUnit XML")
    p.add_argument("--force", action="store_true", help="replace the --junit file even if ssdlab did not write it")


def _export_args(p: argparse.ArgumentParser, suite: str | None) -> None:
    p.add_argument("dirs", nargs="+", metavar="RUN", help="run directories or catalog ids")
    p.add_argument("--format", choices=["csv", "json"], default="csv")


def _no_args(p: argparse.ArgumentParser, suite: str | None) -> None:
    pass


def _info_args(p: argparse.ArgumentParser, suite: str | None) -> None:
    p.add_argument("target")
    p.add_argument("--json", action="store_true")


# The built-in subcommands: name -> (one-line help, function that adds its arguments given the suite named on the
# command line: None every suite's options, "" none).
SUBCOMMANDS: dict[str, tuple[str, Any]] = {
    "run": ("run a suite and write results into a directory", _run_args),
    "plan": ("print the test points, ETA and what would be overwritten; runs nothing "
             "(exits 4 when the run would be refused)", _plan_args),
    "resume": ("continue an interrupted run from its first unfinished point", _resume_args),
    "report": ("re-render report.html of a stored run (--junit: its verdicts as JUnit XML)", _report_args),
    "export": ("print stored runs' results to stdout (several runs: one CSV)", _export_args),
    "suites": ("list the suites", _no_args),
    "info": ("identity, capacity and write safety of a target", _info_args),
}


def build_parser(command: str | None = None, suite: str | None = None) -> argparse.ArgumentParser:
    """The argument parser. Only `command`'s parser gets its arguments (an extension's parser loads its module;
    run and plan get the options of `suite`, of every suite when None); the other subcommands are listed by name
    and help only."""
    parser = _Parser(prog="ssdlab", description="An open SSD characterization lab built on fio.",
                     epilog="Exit codes: 0 ok, 1 negative verdict (not steady, fail, incomplete), 2 usage, 3 target, "
                            "4 refused (unsafe), "
                            "5 fio missing, 6 fio failed, 7 results dir, 8 stored results, 130 interrupted.")
    parser.add_argument("--version", action="version", version=f"ssdlab {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show Python tracebacks (for developers)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    if command in EXTENSIONS:  # its module adds its own parser (with the module's other commands)
        EXTENSION_COMMANDS.update(importlib.import_module(EXTENSIONS[command][0]).add_commands(sub))
    for name, (help_text, add_args) in SUBCOMMANDS.items():
        if name == command:
            add_args(sub.add_parser(name, help=help_text), suite)
        else:  # listed only: no --help of its own (each one costs locale lookups at start-up)
            sub.add_parser(name, help=help_text, add_help=False)
    for name, (_module, help_text) in EXTENSIONS.items():
        if name not in sub.choices:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


EXTENSION_COMMANDS: dict[str, Any] = {}


# ------------------------------------------------------------------ commands

def target_options(size: int | None, capacity: int | None, ioengine: str | None) -> Any:
    from ssdlab.targets import TargetOptions

    return TargetOptions(size=size, capacity=capacity, ioengine=ioengine or "libaio")


def make_target(specs: Sequence[str], suite: Any, opts: Any) -> Any:
    """One Target from one or more --target strings (several only for suites that accept them)."""
    from ssdlab.targets import parse_target

    if len(specs) > 1:  # every suite runs on several devices at once: per-device results and their aggregate
        from ssdlab.targets.multi import MultiTarget

        return MultiTarget.from_targets([parse_target(s, opts) for s in specs], opts)
    return parse_target(specs[0], opts)


def _target(args: argparse.Namespace, suite: Any) -> Any:
    opts = target_options(getattr(args, "size", None), getattr(args, "capacity", None),
                          getattr(args, "ioengine", None))
    if getattr(args, "hosts", None):
        if args.target:
            raise UsageError("--hosts and --target exclude each other: list every device in the inventory")
        if suite.multi_target:  # ACT's service threads share one host's devices: certify each host on its own
            raise UsageError(f"suite {suite.name} runs on the devices of one host: run it on each host with "
                             "--target (repeat it for every device)")
        from ssdlab.targets.hosts import HostGroupTarget, inventory_path

        return HostGroupTarget.from_inventory(inventory_path(args.hosts), opts,
                                              on_error=getattr(args, "on_error", "stop"))
    if not args.target:
        args.target = [DEFAULT_TARGET]
    return make_target(args.target, suite, opts)


def suite_option_values(args: argparse.Namespace, suite: Any) -> dict[str, Any]:
    """Values of the chosen suite's options (defaults filled in); reject options of other suites."""
    mine = {o.key: o for o in suite.suite_options()}
    values: dict[str, Any] = {}
    for dest, given in vars(args).items():  # the parser holds other suites' options only when one was given
        if dest.startswith("sopt_") and given is not None and dest[5:] not in mine:
            raise UsageError(f"--{dest[5:].replace('_', '-')} does not apply to suite {suite.name}")
    for key, opt in mine.items():
        given = getattr(args, "sopt_" + key, None)
        if opt.kind == "float" and given is not None and not math.isfinite(given):
            raise UsageError(f"--{opt.name} {given} is not a finite number")
        values[key] = opt.default if given is None else given
    return values


def make_context(target: Any, runtime: float | None, ramp: float | None, options: dict[str, Any],
                 footprint: str | None = None, misalign: int | None = None, capacity: int | None = None) -> Any:
    from ssdlab.suites.base import PlanContext, common_limits

    lbs = target.logical_block_size()
    capacity, limit, shift = common_limits(capacity or target.capacity(), lbs, footprint, misalign)
    return PlanContext(capacity=capacity, logical_block_size=lbs,
                       target_kind=target.kind, runtime_s=runtime, ramp_s=ramp, options=options,
                       footprint=limit, misalign=shift, devices=len(target.device_names()) or 1,
                       target=target.info())


def _context(args: argparse.Namespace, target: Any, suite: Any) -> Any:
    return make_context(target, args.runtime, args.ramp, suite_option_values(args, suite),
                        getattr(args, "footprint", None), getattr(args, "misalign", None))


def _check_times(args: argparse.Namespace) -> None:
    from ssdlab.run.preflight import check_times

    check_times(getattr(args, "runtime", None), getattr(args, "ramp", None))
    margin = getattr(args, "straggler_margin", None)
    if margin is not None and not 0 < margin < 100:
        raise UsageError(f"--straggler-margin {margin:g} is out of range: use a percentage above 0 and below 100")


def cmd_suites(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.suites import all_suites

    suites = sorted(all_suites().items())
    width = max(len(name) for name, _ in suites)
    for name, suite in suites:
        mark = "writes" if suite.writes else "read-only"
        env.out(f"{name:<{width}}  {mark:<9}  {suite.summary}")
    return 0


def cmd_plan(args: argparse.Namespace, env: Env) -> int:
    from ssdlab import safety
    from ssdlab.run.preflight import check_plan
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
        from ssdlab.results.model import to_dict

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
    settings = _device_settings(args)
    if settings:  # a write-class action: planned and refused like a write
        if not args.json:
            env.out(f"will change: {settings.describe()} for the run, restored afterwards")
        if not decision.writes:
            verdict = safety.assess(target, destructive=args.destructive)
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


def _authorize(target: Any, decision: Any, settings: Any, args: argparse.Namespace, env: Env) -> Any:
    """safety.authorize for the run; drive settings (--write-cache, --power-state) are a write-class action and
    pass the same consent, also when no point writes (the grant stays read-only for fio then)."""
    from ssdlab import safety

    if settings:
        env.err(f"WARNING: this run will change {settings.describe()} of {target.name} (restored when it ends)")
        if not decision.writes:
            safety.authorize(target, safety.WriteDecision(f"changes {settings.describe()}", destroys=False),
                             destructive=args.destructive, yes=args.yes, console=env)
    return safety.authorize(target, decision, destructive=args.destructive, yes=args.yes, console=env)


def _finish(run: Any, run_dir: Path, args: argparse.Namespace, env: Env) -> int:
    """End of run/resume: the console summary (results and the verdict panel), the report, and the exit code
    of the run's verdicts (verdict.run_verdicts: the one mapping from results to exit codes)."""
    from ssdlab.results.verdict import run_verdicts

    verdicts = run_verdicts(run)
    if not args.quiet:
        from ssdlab.report.terminal import print_results

        print_results(run, env.stderr, verdicts)
    if not args.no_report:
        report = _render(run_dir)
        env.out(str(report.resolve()))
    else:
        env.out(str(run_dir))
    if verdicts.exit_code == ExitCode.FIO_FAILED:  # --on-error continue finished the run, but points failed
        first = verdicts.failed_points[0]
        why = first.reason or "; ".join(first.warnings)  # a point that went on without a failed host/device
        env.err(f"ssdlab: {len(verdicts.failed_points)} point(s) failed: {first.point.id}: {why}")
    return verdicts.exit_code


def verdict_exit_code(run: Any) -> int:
    """The exit code of the verdicts a suite's conclude() recorded (verdict.run_verdicts). A run still being
    concluded (status running) is judged as the complete run it is about to become."""
    import dataclasses

    from ssdlab.results.verdict import run_verdicts

    if run.status == "running":
        run = dataclasses.replace(run, status="complete")
    return run_verdicts(run).exit_code


def _render(run_dir: Path) -> Path:
    from ssdlab.report.html import render_report
    from ssdlab.results.store import load_run

    return render_report(load_run(run_dir), run_dir)


def _device_settings(args: argparse.Namespace) -> Any:
    from ssdlab.targets.devsettings import Requested

    ps = getattr(args, "power_state", None)
    if ps is not None and not 0 <= ps <= 31:
        raise UsageError(f"--power-state {ps} is out of range: NVMe power states are 0 to 31 (see `nvme id-ctrl`)")
    return Requested(write_cache=getattr(args, "write_cache", None), power_state=ps)


def cmd_run(args: argparse.Namespace, env: Env) -> int:
    from ssdlab import safety
    from ssdlab.results import store
    from ssdlab.run import orchestrate
    from ssdlab.run.executor import executor_for
    from ssdlab.run.preflight import check_plan
    from ssdlab.run.progress import make_progress
    from ssdlab.suites import get_suite
    from ssdlab.targets import devsettings

    _check_times(args)
    suite = get_suite(args.suite)
    target = _target(args, suite)
    ctx = _context(args, target, suite)
    check_plan(suite, ctx, target)  # every option and the whole plan, before anything is created
    settings = _device_settings(args)
    devsettings.check(target, settings)  # before anything exists: one line when the device cannot take them
    grant = _authorize(target, safety.decide(suite, ctx, target), settings, args, env)
    executor = executor_for(target, grant)
    run_dir = store.create_run_dir(args.out or store.default_run_dir(suite.name, target.name), force=args.force)
    options = {
        "suite": suite.name, "target_specs": _recorded_specs(args.target or [], target), "size": args.size,
        "capacity": args.capacity,
        "ioengine": args.ioengine, "runtime_s": args.runtime, "ramp_s": args.ramp, "suite_options": ctx.options,
        "footprint": args.footprint, "misalign": args.misalign, "on_error": args.on_error,
        "straggler_margin_pct": args.straggler_margin,
    }
    if args.hosts:  # the hosts and their devices are in run.json's target (resume rebuilds the group from it)
        options["hosts"] = target.inventory
        options["target_specs"] = [f"{h}:{d}" for h, d in target.device_names()]
    if settings:
        options["device_settings"] = {"write_cache": settings.write_cache, "power_state": settings.power_state}
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
    from pathlib import Path

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
    from ssdlab.results import store

    run = store.load_run(args.dir)
    if run.status == "complete":
        env.err(f"{args.dir} is already complete; nothing to resume")
        return _finish(run, args.dir, args, env)
    with store.locked(args.dir):
        run = _resume_locked(args, env, store.load_run(args.dir))
    return _finish(run, args.dir, args, env)


def _resume_locked(args: argparse.Namespace, env: Env, run: Any) -> Any:
    """The resume proper, under the run directory's lock (so no other process owns its fio)."""
    from ssdlab import safety
    from ssdlab.results import store
    from ssdlab.run import orchestrate
    from ssdlab.run.executor import executor_for
    from ssdlab.run.progress import make_progress
    from ssdlab.suites import get_suite
    from ssdlab.targets import devsettings

    o = run.options
    suite = get_suite(run.suite)
    opts = target_options(o.get("size"), o.get("capacity"), o.get("ioengine"))
    from ssdlab.devices.parts import dropped_in

    gone = dropped_in(run)  # devices/hosts --on-error continue left out: they stay out
    if o.get("hosts"):  # a host group: the hosts and devices the run recorded
        from ssdlab.targets.hosts import HostGroupTarget

        target = HostGroupTarget.from_stored(dict(run.target), opts, on_error=str(o.get("on_error") or "stop"),
                                             dropped=gone)
    else:
        target = make_target(o["target_specs"], suite, opts)
        for key, why in gone.items():
            target.drop(key, why)
    # several devices: the plan keeps the capacity the run started with, whoever left since
    capacity = int(run.target["capacity_bytes"]) if gone and run.target.get("capacity_bytes") else None
    ctx = make_context(target, o.get("runtime_s"), o.get("ramp_s"), dict(o.get("suite_options", {})),
                       o.get("footprint"), o.get("misalign"), capacity=capacity)
    settings = devsettings.requested(o)
    devsettings.check(target, settings)
    # consent is asked again: the target may have changed since the run started (resume re-authorizes)
    grant = _authorize(target, safety.decide(suite, ctx, target), settings, args, env)
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
    from ssdlab.report.html import render_report
    from ssdlab.results.catalog import resolve
    from ssdlab.results.store import load_run
    from ssdlab.results.verdict import run_verdicts

    run_dir = resolve(args.dir)
    run = load_run(run_dir)
    if args.junit is not None:
        from ssdlab.report import junit
        from ssdlab.results import outputs

        if not args.junit.parent.is_dir():
            raise UsageError(f"--junit {args.junit}: directory {args.junit.parent} does not exist")
        outputs.check_new_file(args.junit, force=args.force, option="--junit")
        junit.write(args.junit, "ssdlab report", [junit.run_suite(run)])
    env.out(str(render_report(run, run_dir).resolve()))
    return run_verdicts(run).exit_code


def cmd_export(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.report import export
    from ssdlab.results.catalog import read_tags, resolve
    from ssdlab.results.store import load_run

    dirs = [resolve(d) for d in args.dirs]
    runs = [(load_run(d), read_tags(d).get("label", "")) for d in dirs]
    env.stdout.write(export.to_csv_many(runs) if args.format == "csv" else export.to_json_many([r for r, _ in runs]))
    return 0


def cmd_info(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.targets import parse_target
    from ssdlab.targets.health import info_lines

    target = parse_target(args.target)
    info = target.info()
    drive = info_lines(target)
    if args.json:
        env.out(json.dumps({**info, "drive": dict(drive)}, indent=1))
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
    for label, text in drive:
        env.out(f"{label + ':':<10} {text}")
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
    runner = _stop_requests()
    if runner is not None:
        runner.clear_stop_request()
    previous_handlers = _install_interrupt_handlers()
    try:
        command = next((a for a in args_list if not a.startswith("-")), None)  # top-level options take no value
        args = _parse(command, args_list)
        handler = COMMANDS.get(args.command) or EXTENSION_COMMANDS[args.command]
        return int(handler(args, env))
    except SsdlabError as exc:
        if show_tb:
            _print_traceback(env)
        env.err(f"ssdlab: error: {exc}")
        return int(exc.exit_code)
    except KeyboardInterrupt:
        env.err("ssdlab: interrupted")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the boundary: an unexpected error still gets one line
        if show_tb:
            _print_traceback(env)
        env.err(f"ssdlab: internal error: {type(exc).__name__}: {exc} (rerun with --traceback and report it)")
        return 70
    finally:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)


def _parse(command: str | None, args_list: list[str]) -> argparse.Namespace:
    """Parse the command line, loading only what the command needs: for run and plan, the suite named on it
    (found by a first pass without suite options) and its family; every suite when none is named, for --help,
    or to name the suite an option belongs to when it is not the one being run."""
    suite: str | None = None
    if command in ("run", "plan") and not {"-h", "--help"} & set(args_list):
        with contextlib.suppress(UsageError):
            suite = build_parser(command, "").parse_known_args(args_list)[0].suite
    try:
        return build_parser(command, suite).parse_args(args_list)
    except UsageError:
        if suite is None:
            raise
        return build_parser(command, None).parse_args(args_list)


def _print_traceback(env: Env) -> None:
    import traceback  # only for --traceback: it loads the tokenizer, a large share of start-up

    traceback.print_exc(file=env.stderr)


def _stop_requests() -> Any:
    """fio's runner, which remembers stop requests and stops a running fio, once a command has loaded it
    (before that there is no fio to stop and no request to forget): None until then."""
    return sys.modules.get("ssdlab.fio.runner")


def _raise_interrupt(signum: int, frame: Any) -> None:
    runner = _stop_requests()
    if runner is not None:
        runner.request_stop()  # remembered too: a KeyboardInterrupt raised inside a finalizer would be lost
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
