"""Command line: argument parsing and the single error boundary (exit codes live in errors.ExitCode)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from types import FrameType, ModuleType
from typing import IO, TYPE_CHECKING

from ssdlab import __version__
from ssdlab.errors import ExitCode, SsdlabError, UnsafeTargetError, UsageError
from ssdlab.termtext import encodable, printable
from ssdlab.units import format_bytes, format_duration, parse_size

if TYPE_CHECKING:
    from pathlib import Path

    from ssdlab.results.model import Run
    from ssdlab.results.request import DeviceSettings, RunRequest
    from ssdlab.run.eta import Eta
    from ssdlab.run.setup import RunSetup
    from ssdlab.safety import WriteDecision, WriteGrant
    from ssdlab.targets.base import Target

Handler = Callable[[argparse.Namespace, "Env"], int]  # a subcommand: parsed arguments and the console -> exit code
AddArgs = Callable[[argparse.ArgumentParser, "str | None"], None]  # a subcommand's arguments, given the suite named
SignalHandler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


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
    commands: Mapping[str, argparse.ArgumentParser]  # the top-level parser's: each command's parser, by name

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
    "trace": ("ssdlab.commands.trace", "block traces: characterize (info), fit a suite file (fit), convert to a "
                                       "fio iolog (convert); replay with `run replay --trace FILE`"),
    "serve": ("ssdlab.serve.command",
              "the results catalog and runs in progress in a browser (loopback, with a token); /metrics"),
}


DEFAULT_TARGET = "sim:p5430"  # the built-in default: a simulated drive, so nothing real is ever written


def _add_target_args(p: argparse.ArgumentParser, *, required: bool = False) -> None:
    p.add_argument("--target", "-t", required=required, action="append",
                   help="null | file:PATH?size=4GiB | PATH | /dev/DEVICE | sim:PRESET "
                        "(repeat for suites that drive several devices; default: " + DEFAULT_TARGET + ")")
    p.add_argument("--size", type=parse_size, help="size of a file target to create (default 1GiB)")
    p.add_argument("--capacity", type=parse_size, help="use only this many bytes of the target")
    from ssdlab.results.request import IOENGINES

    p.add_argument("--ioengine", default="libaio", choices=list(IOENGINES),
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
            flag, dest, text = f"--{opt.name}", "sopt_" + opt.key, opt.help.replace("%", "%%")  # argparse: %
            if opt.kind == "flag":
                group.add_argument(flag, dest=dest, default=None, help=text, action="store_const", const=True)
                continue
            converters: dict[str, Callable[[str], object]] = {"int": int, "float": float, "size": parse_size,
                                                              "toml": load_toml_option, "path": _absolute}
            convert = converters.get(opt.kind, str)
            group.add_argument(flag, dest=dest, default=None, help=text, type=convert,
                               metavar=opt.name.upper().replace("-", "_"),
                               choices=list(opt.choices) if opt.choices else None,
                               action="append" if opt.repeat else "store")


def _absolute(text: str) -> str:
    """A 'path' suite option: stored absolute, so `resume` finds the file from any directory."""
    from pathlib import Path

    return str(Path(text).expanduser().resolve())


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
SUBCOMMANDS: dict[str, tuple[str, AddArgs]] = {
    "run": ("run a suite and write results into a directory", _run_args),
    "plan": ("print the test points, ETA and what would be overwritten; runs nothing "
             "(exits 4 when the run would be refused)", _plan_args),
    "resume": ("continue an interrupted run from its first unfinished point", _resume_args),
    "report": ("re-render report.html of a stored run (--junit: its verdicts as JUnit XML)", _report_args),
    "export": ("print stored runs' results to stdout (several runs: one CSV)", _export_args),
    "suites": ("list the suites", _no_args),
    "info": ("identity, capacity and write safety of a target", _info_args),
}


def build_parser(command: str | None = None, suite: str | None = None) -> _Parser:
    """The argument parser. Only `command`'s parser gets its arguments (an extension's parser loads its module;
    run and plan get the options of `suite`, of every suite when None); the other subcommands are listed by name
    and help only."""
    parser = _Parser(prog="ssdlab", description="An open SSD characterization lab built on fio.",
                     epilog="Exit codes: 0 ok, 1 negative verdict (not steady, fail, incomplete), 2 usage, 3 target, "
                            "4 refused (unsafe), "
                            "5 fio missing, 6 fio failed, 7 results dir, 8 stored results, 9 resume on another "
                            "device, 130 interrupted.")
    parser.add_argument("--version", action="version", version=f"ssdlab {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show Python tracebacks (for developers)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    parser.commands = sub.choices
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


EXTENSION_COMMANDS: dict[str, Handler] = {}


# ------------------------------------------------------------------ commands

def run_request(args: argparse.Namespace) -> RunRequest:
    """The request of `run` or `plan` as the command line gives it (run/setup.py completes and checks it)."""
    from ssdlab.results.request import DeviceSettings, RunRequest

    hosts: str | None = getattr(args, "hosts", None)
    specs = args.target or ([] if hosts else [DEFAULT_TARGET])
    given = {dest[5:]: v for dest, v in vars(args).items() if dest.startswith("sopt_") and v is not None}
    return RunRequest(
        suite=args.suite, target_specs=tuple(specs), size=args.size, capacity=args.capacity, ioengine=args.ioengine,
        runtime_s=args.runtime, ramp_s=args.ramp, suite_options=given, footprint=args.footprint,
        misalign=args.misalign, on_error=getattr(args, "on_error", "stop"),
        straggler_margin_pct=getattr(args, "straggler_margin", None), hosts=hosts,
        device_settings=DeviceSettings(write_cache=args.write_cache, power_state=args.power_state))


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
    from ssdlab.results import catalog, store
    from ssdlab.run.eta import History, plan_eta
    from ssdlab.run.setup import check_power_state, setup_run

    setup = setup_run(run_request(args))
    suite, target, ctx = setup.suite, setup.target, setup.ctx
    root = args.out.parent if getattr(args, "out", None) else store.default_run_dir("", "").parent
    eta = plan_eta(suite, ctx, file_layout=target.layout_writes(),
                   history=History.of(catalog.history(root, suite.name, target.kind)))
    decision = setup.decision()
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
            "suite": suite.name, "target": dict(ctx.target), "eta_seconds": eta.worst_s,
            "eta_expected_seconds": eta.expected_s, "eta_spread": round(eta.spread, 3), "writes": decision.writes,
            "writes_because": decision.reason or None, "destroys": destroys,
            "hazards": [h.text for h in verdict.hazards], "refused": verdict.refusal or None,
            "needs_confirmation": verdict.needs_consent, "notes": suite.plan_notes(ctx),
            "points": [to_dict(p) for p in setup.plan],
            **suite.plan_extra(ctx),  # suite-specific keys (e.g. ACT's "derived" rates)
        }, indent=1))
    else:
        _print_plan(env, setup, eta)
        env.out(f"writes: {decision.summary()}")
        env.out(f"will overwrite: {destroys}")
        for h in verdict.hazards:
            env.out(f"  ! {h.text}" + (" (blocks any write)" if h.blocking else
                                       " (accepted: --destructive)" if args.destructive else " (needs --destructive)"))
        if verdict.needs_consent and not verdict.refusal:
            env.out("consent: `run` asks to type the name back, or takes --yes")
    settings = setup.request.device_settings
    check_power_state(settings)
    if settings:  # a write-class action: planned and refused like a write
        if not args.json:
            env.out(f"will change: {settings.describe()} for the run, restored afterwards")
        if not decision.writes:
            verdict = safety.assess(target, destructive=args.destructive)
    if verdict.refusal:
        raise UnsafeTargetError(verdict.refusal)
    return 0


def _print_plan(env: Env, setup: RunSetup, eta: Eta) -> None:
    suite, target = setup.suite, setup.target
    env.out(f"suite {suite.name}: {suite.summary}")
    env.out(f"target {target.name} ({target.kind}, {format_bytes(target.capacity())})")
    env.out(f"{'#':>3}  {'point':<34} {'rw':<10} {'bs':>8} {'QD':>4} {'T':>3} {'time':>8}")
    for i, p in enumerate(setup.plan, 1):
        w = p.workload
        t = format_duration(p.est_seconds) if w.runtime_s is not None else (
            f"{format_bytes(w.io_bytes or 0)}" if w.io_bytes else "-")
        env.out(f"{i:>3}  {p.id:<34} {w.rw:<10} {w.bssplit or format_bytes(w.bs):>8} {w.iodepth:>4} "
                f"{w.numjobs:>3} {t:>8}")
    env.out(plan_duration_line(len(setup.plan), eta))
    for note in suite.plan_notes(setup.ctx):
        env.out(note)
    if eta.worst_s > LONG_PLAN_S:
        env.out(long_plan_warning(eta))


LONG_PLAN_S = 3600.0  # `plan` warns about a run that may take longer


def plan_duration_line(points: int, eta: Eta) -> str:
    """'8 points, estimated duration 44s (±25 %)', or, for a suite that may stop early, 'at most 3176 points;
    expected about 452 points in 1m20s (±30 %); about 23h20m if all 3176 run' (the point count is the bound)."""
    if not eta.adaptive:
        return f"{points} points, estimated duration {eta.duration()}"
    return (f"at most {points} points; expected about {eta.expected_points} points in {eta.duration()}; "
            f"{eta.worst_text()}")


def long_plan_warning(eta: Eta) -> str:
    """The line `plan` adds when a run may take more than an hour, with what shortens it."""
    when = (f"expected {format_duration(eta.expected_s)}, {eta.worst_text()}" if eta.adaptive
            else format_duration(eta.expected_s))
    return (f"warning: this run may take more than an hour ({when}); --runtime SECONDS sets the time of every "
            "point in every suite (a scaled run: PTS samples and captures, ACT slices), e.g. --runtime 1")


def _authorize(target: Target, decision: WriteDecision, settings: DeviceSettings, args: argparse.Namespace,
               env: Env) -> WriteGrant:
    """run/setup.authorize with the command line's --destructive and --yes, asking on this console."""
    from ssdlab.run.setup import authorize

    return authorize(target, decision, settings, destructive=args.destructive, yes=args.yes, console=env)


def _finish(run: Run, run_dir: Path, args: argparse.Namespace, env: Env) -> int:
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


def verdict_exit_code(run: Run) -> int:
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


def cmd_run(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.results import store
    from ssdlab.run import orchestrate
    from ssdlab.run.progress import make_progress
    from ssdlab.run.setup import setup_run
    from ssdlab.run.target import executor_for

    setup = setup_run(run_request(args))  # every option and the whole plan, before anything is created
    setup.check_device_settings()  # before anything exists: one line when the device cannot take them
    target = setup.target
    grant = _authorize(target, setup.decision(), setup.request.device_settings, args, env)
    executor = executor_for(target, grant)
    run_dir = store.create_run_dir(args.out or store.default_run_dir(setup.suite.name, target.name), force=args.force)
    with store.locked(run_dir):
        run = orchestrate.new_run(setup.suite, target, executor, setup.request, run_dir, info=setup.ctx.target)
        env.err(f"results: {run_dir}")
        run = orchestrate.drive(run_dir, run, setup.suite, setup.ctx, target, executor,
                                make_progress(env.stderr, args.quiet), grant=grant)
    return _finish(run, run_dir, args, env)


def cmd_resume(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.results import store

    run = store.load_run(args.dir)
    if run.status == "complete":
        env.err(f"{args.dir} is already complete; nothing to resume")
        return _finish(run, args.dir, args, env)
    with store.locked(args.dir):
        run = _resume_locked(args, env, store.load_run(args.dir))
    return _finish(run, args.dir, args, env)


def _resume_locked(args: argparse.Namespace, env: Env, run: Run) -> Run:
    """The resume proper, under the run directory's lock (so no other process owns its fio)."""
    from ssdlab.run import orchestrate, resume
    from ssdlab.run.progress import make_progress
    from ssdlab.run.setup import setup_run
    from ssdlab.run.target import executor_for

    setup = setup_run(run.options, resume=run, source=str(args.dir / "run.json"))
    setup.check_device_settings()
    # consent is asked again: the target may have changed since the run started (resume re-authorizes)
    grant = _authorize(setup.target, setup.decision(), setup.request.device_settings, args, env)
    executor = executor_for(setup.target, grant)
    run = resume.mark_resumed(args.dir, run, setup.suite, setup.ctx)
    return orchestrate.drive(args.dir, run, setup.suite, setup.ctx, setup.target, executor,
                             make_progress(env.stderr, args.quiet), grant=grant)


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
        replacing = outputs.check_new_file(args.junit, force=args.force, option="--junit")
        if replacing:
            env.err(replacing)
        junit.write(args.junit, "ssdlab report", [junit.run_suite(run)])
    env.out(str(render_report(run, run_dir).resolve()))
    return run_verdicts(run).exit_code


def cmd_export(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.report import export
    from ssdlab.results.catalog import read_tags, resolve
    from ssdlab.results.store import load_run

    dirs = [resolve(d) for d in args.dirs]
    runs = [(load_run(d), read_tags(d).get("label", "")) for d in dirs]
    text = export.to_csv_many(runs) if args.format == "csv" else export.to_json_many([r for r, _ in runs])
    env.stdout.write(encodable(text))  # data as stored, but never a lone surrogate (bytes that were not UTF-8)
    return 0


def cmd_info(args: argparse.Namespace, env: Env) -> int:
    from ssdlab.run.target import parse_target
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
        for sig, previous in previous_handlers.items():
            signal.signal(sig, previous)


def _parse(command: str | None, args_list: list[str]) -> argparse.Namespace:
    """Parse the command line, loading only what the command needs: for run and plan, the suite named on it
    (found by a first pass without suite options) and its family; every suite when none is named, for --help,
    or to name the suite an option belongs to when it is not the one being run."""
    suite: str | None = None
    if command in ("run", "plan") and not {"-h", "--help"} & set(args_list):
        with contextlib.suppress(UsageError):
            suite = build_parser(command, "").parse_known_args(args_list)[0].suite
    try:
        return _parse_intermixed(build_parser(command, suite), command, args_list)
    except UsageError:
        if suite is None:
            raise
        return _parse_intermixed(build_parser(command, None), command, args_list)


def _parse_intermixed(parser: _Parser, command: str | None, args_list: list[str]) -> argparse.Namespace:
    """parse_args, with the command's options allowed between its positionals (`tag RUN --root DIR k=v`):
    what plain parsing leaves over is parsed again by the command's parser, intermixed (argparse)."""
    args, extra = parser.parse_known_args(args_list)
    if not extra or command is None:
        return parser.parse_args(args_list) if extra else args
    sub = parser.commands.get(command)
    if sub is None:
        return parser.parse_args(args_list)  # refuses the leftovers, one line
    try:
        found = sub.parse_intermixed_args(args_list[args_list.index(command) + 1:])
    except TypeError:  # a command whose positionals argparse cannot intermix
        return parser.parse_args(args_list)
    vars(args).update(vars(found))
    return args


def _print_traceback(env: Env) -> None:
    import traceback  # only for --traceback: it loads the tokenizer, a large share of start-up

    traceback.print_exc(file=env.stderr)


def _stop_requests() -> ModuleType | None:
    """fio's runner, which remembers stop requests and stops a running fio, once a command has loaded it
    (before that there is no fio to stop and no request to forget): None until then."""
    return sys.modules.get("ssdlab.fio.runner")


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    runner = _stop_requests()
    if runner is not None:
        runner.request_stop()  # remembered too: a KeyboardInterrupt raised inside a finalizer would be lost
    raise KeyboardInterrupt


def _install_interrupt_handlers() -> dict[int, SignalHandler]:
    """Treat Ctrl-C and SIGTERM (service managers, CI timeouts) alike, so finished points are saved and the
    run is marked interrupted; returns the previous handlers (none when not on the main thread)."""
    previous: dict[int, SignalHandler] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, _raise_interrupt)
        except ValueError:  # signal handlers can only be set from the main thread
            break
    return previous


if __name__ == "__main__":
    raise SystemExit(main())
