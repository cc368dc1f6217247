"""`ssdlab trace info|fit|convert FILE`: a block trace's characterization (with --plot, its charts), a suite file
fitted to it (with --check, what that suite generates on fio's null engine characterized against the trace), and
the trace as a fio version 3 iolog. Replaying a trace is `ssdlab run replay --trace FILE` (suites/replay.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ssdlab.errors import UsageError
from ssdlab.trace.model import duration_text
from ssdlab.units import format_bs, format_bytes


def _trace_args(p: argparse.ArgumentParser) -> None:
    from ssdlab.trace.formats import FORMATS

    p.add_argument("file", help="the trace (fio iolog, blkparse text, blktrace binary, MSR, Alibaba or Tencent CSV; "
                                ".gz read as it is)")
    p.add_argument("--format", default="auto", choices=["auto", *FORMATS], help="its format (default: from its "
                                                                                 "content)")
    p.add_argument("--volume", metavar="NAME", help="only this volume/device of a multi-volume trace")
    p.add_argument("--event", default="Q", choices=["Q", "D"],
                   help="blktrace/blkparse: queued (Q, default) or issued (D) I/Os")


def add_commands(sub: Any) -> dict[str, Any]:
    """Register `trace` and its subcommands."""
    p = sub.add_parser("trace", help="block traces: characterize (info), fit a suite file (fit), convert to a fio "
                                     "iolog (convert); replay one with `ssdlab run replay --trace FILE`")
    tsub = p.add_subparsers(dest="trace_command", required=True, parser_class=type(p))
    info = tsub.add_parser("info", help="I/O count, duration, mix, sizes, inter-arrival, implied queue depth, "
                                        "sequentiality, footprint, skew")
    _trace_args(info)
    info.add_argument("--json", action="store_true", help="the characterization as JSON")
    info.add_argument("--plot", type=Path, metavar="FILE.svg|.png", help="also draw it into this file")
    info.add_argument("--force", action="store_true", help="replace a --plot file ssdlab did not write")
    fit = tsub.add_parser("fit", help="write a suite file that reproduces the trace's characterization")
    _trace_args(fit)
    fit.add_argument("--out", "-o", type=Path, metavar="FILE.toml", help="the suite file (default: stdout)")
    fit.add_argument("--force", action="store_true", help="replace an existing --out file")
    fit.add_argument("--check", action="store_true",
                     help="run the fitted workload on fio's null engine (nothing is written), characterize what it "
                          "generated and compare with the trace; exit 1 when a metric is outside its tolerance")
    conv = tsub.add_parser("convert", help="the trace as a fio version 3 iolog (fio --read_iolog=OUT replays it)")
    _trace_args(conv)
    conv.add_argument("--out", "-o", type=Path, required=True, metavar="FILE.iolog")
    conv.add_argument("--force", action="store_true", help="replace an existing --out file")
    conv.add_argument("--file-name", default="replay", metavar="NAME",
                      help="the file the iolog names (fio's replay_redirect=PATH sends the I/O elsewhere)")
    return {"trace": cmd_trace}


def cmd_trace(args: argparse.Namespace, env: Any) -> int:
    return {"info": cmd_info, "fit": cmd_fit, "convert": cmd_convert}[args.trace_command](args, env)


def _load(args: argparse.Namespace) -> Any:
    from ssdlab.trace.formats import load

    return load(args.file, args.format, volume=args.volume, event=args.event)


def _new_file(path: Path, force: bool, option: str) -> None:
    if path.is_dir():
        raise UsageError(f"{option} {path} is a directory: name a file")
    if path.exists() and not force:
        raise UsageError(f"{option} {path} exists: choose another path, or pass --force to replace it")
    if not path.parent.is_dir():
        raise UsageError(f"{option} {path}: directory {path.parent} does not exist")


# ---------------------------------------------------------------- info

def cmd_info(args: argparse.Namespace, env: Any) -> int:
    from ssdlab.trace.characterize import characterize

    if args.plot is not None:
        from ssdlab.report.charts import check_figure_path

        check_figure_path(args.plot, force=args.force)
    trace = _load(args)
    char = characterize(trace)
    if args.json:
        env.out(json.dumps(char.as_dict(), indent=1))
    else:
        for line in info_lines(char):
            env.out(line)
    if args.plot is not None:
        from ssdlab.commands.trace_plot import plot_trace

        plot_trace(trace, char, args.plot)
        if not args.json:
            env.out(f"plot:       {args.plot}")
    return 0


def _pct(x: float) -> str:
    return f"{x * 100:.1f} %"


def _us(v: float | None) -> str:
    if v is None:
        return "-"
    if v >= 999_500:
        return f"{v / 1e6:.3g} s"
    if v >= 999.5:
        return f"{v / 1e3:.3g} ms"
    return f"{v:.3g} µs"


def info_lines(c: Any) -> list[str]:
    """The characterization as the lines `trace info` prints."""
    lines = [f"trace:      {c.path} ({c.format}): {c.ios:,} I/Os over {duration_text(c.duration_s)}"
             f" ({c.iops:,.1f} IOPS, {c.mbps:,.2f} MB/s)"]
    if c.volumes:
        lines.append("volumes:    " + ", ".join(f"{v} ({n:,})" for v, n in c.volumes[:8])
                     + (f" and {len(c.volumes) - 8} more" if len(c.volumes) > 8 else ""))
    mix = [f"{d}s {_pct(x.share_ios)} of I/Os, {_pct(x.share_bytes)} of bytes" for d, x in c.directions.items()
           if x.ios]
    lines.append("mix:        " + "; ".join(mix))
    total = max(1, c.ios)
    lines.append("sizes:      " + ", ".join(f"{format_bs(s)} {_pct(n / total)}" for s, n in c.sizes[:8])
                 + f" (mean {format_bytes(c.mean_size)}; {len(c.sizes)} sizes listed)")
    ia = c.interarrival_us
    if ia:
        burst = "bursty" if ia["cov"] > 1.5 else "Poisson-like" if ia["cov"] >= 0.5 else "regular"
        lines.append(f"arrivals:   gap mean {_us(ia['mean'])}, p50 {_us(ia['p50'])}, p90 {_us(ia['p90'])}, "
                     f"p99 {_us(ia['p99'])}, max {_us(ia['max'])}; CoV {ia['cov']:.2f} ({burst}); "
                     f"{_pct(ia['zero_share'])} arrive together")
    if c.qd:
        lines.append(f"queue depth: implied by the trace's response times ({_pct(c.latency_coverage)} of I/Os): "
                     f"mean {c.qd['mean']:.2f}, p50 {c.qd['p50']:g}, p99 {c.qd['p99']:g}, max {c.qd['max']:g}")
    else:
        lines.append("queue depth: the trace has no response times")
    for d, p in (c.latency_us or {}).items():
        lines.append(f"latency:    {d} p50 {_us(p['p50'])}, p99 {_us(p['p99'])}, p99.9 {_us(p['p99.9'])}, "
                     f"max {_us(p['max'])} (the trace's own response times)")
    s = c.sequential
    lines.append(f"sequential: {_pct(s['previous'])} start where the previous I/O ended, {_pct(s['same_direction'])}"
                 f" where the previous of their direction did, {_pct(s['window'])} where one of the last 8 did")
    lines.append(f"footprint:  {format_bytes(c.footprint_bytes)} touched (reads {format_bytes(c.footprint_read_bytes)}"
                 f", writes {format_bytes(c.footprint_write_bytes)}); highest byte {format_bytes(c.extent_bytes)}")
    lines.append(f"skew:       the hottest 1 % of the {c.touched_blocks:,} touched 4 KiB blocks take "
                 f"{_pct(c.skew['hot1'])} of the I/Os, the hottest 10 % {_pct(c.skew['hot10'])}")
    lines += [f"note:       {n}" for n in c.notes]
    return lines


# ---------------------------------------------------------------- fit

def cmd_fit(args: argparse.Namespace, env: Any) -> int:
    from ssdlab.results import atomic
    from ssdlab.trace.characterize import characterize
    from ssdlab.trace.fit import fit, suite_toml

    if args.out is not None:
        _new_file(args.out, args.force, "--out")
    trace = _load(args)
    if len(trace) < 2:
        raise UsageError(f"{args.file}: a fit needs at least 2 I/Os")
    char = characterize(trace)
    fitted = fit(trace, char)
    text = suite_toml(fitted, char, Path(args.file).stem + (f"-{args.volume}" if args.volume else ""))
    if args.out is None:
        env.stdout.write(text)
    else:
        atomic.write_text(args.out, text)
        env.err(f"suite file: {args.out} (run it with --footprint {fitted.model.span})")
    if not args.check:
        return 0
    return _check(trace, fitted, text, env)


def _check(trace: Any, fitted: Any, text: str, env: Any) -> int:
    """What the fitted suite generates (fio, null engine) against the trace, one line per metric."""
    import tempfile

    from ssdlab.fio.replay import record_workload
    from ssdlab.suites.base import PlanContext
    from ssdlab.suites.toml_suite import load_toml_text
    from ssdlab.trace.fit import compare
    from ssdlab.trace.formats import load

    suite = load_toml_text(text, "<fitted suite>")
    span = fitted.model.span
    point = suite.plan(PlanContext(capacity=span, target_kind="null"))[0]
    with tempfile.TemporaryDirectory(prefix="ssdlab-fit-") as tmp:
        log = record_workload(point, span, fitted.fitted_on, Path(tmp))
        generated = load(log, "iolog")
    checks = compare(trace, generated)
    env.err(f"check: {len(generated):,} I/Os generated by fio (null engine) against the trace's first "
            f"{min(len(trace), len(generated)):,}")
    env.err(f"  {'metric':<22} {'trace':>12} {'generated':>12}  tolerance     ")
    for c in checks:
        env.err(f"  {c.metric:<22} {_value(c.metric, c.trace):>12} {_value(c.metric, c.generated):>12}  "
                f"{c.tolerance:<12} {'ok' if c.ok else 'OUTSIDE'}")
    bad = [c.metric for c in checks if not c.ok]
    if bad:
        env.err(f"check: outside the tolerance: {', '.join(bad)}")
        return 1
    env.err("check: every metric within its tolerance")
    return 0


def _value(metric: str, v: float) -> str:
    return f"{v * 100:.2f} %" if "share" in metric else format_bytes(v)


# ---------------------------------------------------------------- convert

def cmd_convert(args: argparse.Namespace, env: Any) -> int:
    import re

    import numpy as np

    from ssdlab.fio.replay import iolog_bytes
    from ssdlab.results import atomic
    from ssdlab.trace.mapping import check_single_volume

    _new_file(args.out, args.force, "--out")
    if not re.fullmatch(r"[A-Za-z0-9_.\-/]{1,200}", args.file_name):
        raise UsageError(f"--file-name {args.file_name!r}: use letters, digits, '_', '.', '-' and '/' (no spaces)")
    trace = _load(args)
    check_single_volume(trace)
    data = iolog_bytes(trace.time_ns // 1000 + 1, trace.op, trace.offset, trace.size)
    if args.file_name != "replay":
        data = data.replace(b" replay ", f" {args.file_name} ".encode())
    atomic.write_bytes(args.out, data)
    env.out(f"{args.out}: {len(trace):,} I/Os ({int(np.sum(trace.size)):,} bytes) as a fio version 3 iolog")
    return 0
