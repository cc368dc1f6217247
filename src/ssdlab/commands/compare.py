"""`ssdlab compare RUN RUN [...]`: stored runs side by side (compare.html + compare.csv), with an optional
regression gate (`--fail-on`, exit 1 on a regression) and JUnit XML for CI (`--junit`)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from ssdlab.commands.catalog import add_results_option, results_option
from ssdlab.errors import ExitCode, UsageError


def _pct(text: str) -> float:
    raw = text.strip().removesuffix("%")
    try:
        v = float(raw) / 100.0
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (e.g. 2%)") from None
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0% and 100%")
    return v


def _alpha(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (e.g. 0.05)") from None
    if not 0 < v < 0.5:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 0.5")
    return v


def add_commands(sub: Any) -> dict[str, Any]:
    """Register `compare`."""
    p = sub.add_parser(
        "compare", help="compare stored runs side by side (HTML + CSV); gate on regressions with --fail-on",
        description="Compare runs point by point against the first (the baseline): values, ratios and whether "
                    "each difference is significant (Welch's t-test on the samples each point carries: PTS "
                    "window rounds, per-interval values; 'cannot judge' without samples). Exit 1 when a "
                    "--fail-on rule fails, 2 on bad input, 8 when a run cannot be read.")
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="run directories or catalog ids (see `ssdlab runs`); the first is the baseline")
    p.add_argument("--labels", metavar="A,B,...", help="names of the runs in the report (default: each run's "
                                                       "`label` tag, else its run id)")
    p.add_argument("--out", "-o", type=Path, metavar="DIR",
                   help="directory for compare.html and compare.csv (default compare-<labels> beside the baseline "
                        "run, in its results root; never the current directory unless it is that)")
    p.add_argument("--fail-on", action="append", default=[], metavar="METRIC:THRESHOLD[:SCOPE]",
                   help="fail (exit 1) when a run regresses past THRESHOLD against the baseline, e.g. "
                        "read_iops:-5%%, write_p99_99_us:+20%%, iops:-5%%:pts-iops (repeatable; SCOPE is a suite, "
                        "family, point key or label glob)")
    p.add_argument("--strict", action="store_true",
                   help="a change past a --fail-on threshold fails even when it is not significant or cannot "
                        "be judged, and so does a point missing from a run")
    p.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML (one test case per point)")
    p.add_argument("--force", action="store_true",
                   help="replace compare.html/compare.csv in --out and the --junit file even if ssdlab did not "
                        "write them")
    p.add_argument("--alpha", type=_alpha, default=None, metavar="P",
                   help="significance level of the two-sided Welch t-test (default 0.05)")
    p.add_argument("--min-effect", type=_pct, default=None, metavar="PCT",
                   help="smallest change called significant (default 2%%)")
    add_results_option(p, "results root whose catalog resolves ids (default $SSDLAB_RESULTS or ./results)")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")
    return {"compare": cmd_compare}


def _labels(args: argparse.Namespace, dirs: list[Path], runs: list[Any]) -> list[str]:
    from ssdlab.results.catalog import read_tags

    if args.labels:
        labels = [x.strip() for x in args.labels.split(",")]
        if len(labels) != len(dirs) or not all(labels):
            raise UsageError(f"--labels gives {len(labels)} name(s) for {len(dirs)} runs: give one per run, "
                             "comma-separated")
    else:
        labels = []
        for d, run in zip(dirs, runs, strict=True):
            labels.append(read_tags(d).get("label") or run.run_id or d.name)
    seen: dict[str, int] = {}
    out = []
    for label in labels:  # duplicate names would make the report ambiguous
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}#{seen[label]}")
    return out


def default_out(baseline: Path, labels: list[str]) -> Path:
    """Where a comparison goes unless --out says: compare-<labels> beside the baseline run (results/op7 and
    results/op28 -> results/compare-op7-vs-op28), with the runs it compares, whatever the current directory."""
    return baseline.absolute().parent / ("compare-" + re.sub(r"[^A-Za-z0-9._-]+", "-", "-vs-".join(labels))[:80])


def _check_out(path: Path, what: str, force: bool, out: Path | None = None) -> str:
    """--out (what "dir") or --junit ("file", possibly inside `out`, which is made after the checks); returns
    what --force will replace ('' when nothing)."""
    from ssdlab.results import outputs

    parent = path if what == "dir" else path.parent
    if parent.exists() and not parent.is_dir():
        raise UsageError(f"{parent} is not a directory: choose another {'--out' if what == 'dir' else '--junit'}")
    if what == "file" and not parent.is_dir() and (out is None or parent.absolute() != out.absolute()):
        raise UsageError(f"--junit {path}: directory {parent} does not exist")
    if what == "dir":
        return outputs.check_output_dir(path, "compare.html", ["compare.csv"], force=force, option="--out")
    return outputs.check_new_file(path, force=force, option="--junit")


def cmd_compare(args: argparse.Namespace, env: Any) -> int:
    """Write the comparison; print its path; exit 1 when the gate fails."""
    from ssdlab.analysis import significance
    from ssdlab.compare import gate
    from ssdlab.compare import matching as comparison
    from ssdlab.report import compare as report
    from ssdlab.report import junit
    from ssdlab.results import catalog
    from ssdlab.results.store import load_run

    if len(args.runs) < 2:
        raise UsageError("compare needs at least two runs: the baseline first, then the runs to compare with it")
    rules = [gate.parse_rule(t) for t in args.fail_on]
    root = results_option(args, env)
    dirs = [catalog.resolve(r, root) for r in args.runs]
    stored = [load_run(d) for d in dirs]
    labels = _labels(args, dirs, stored)
    out: Path = args.out or default_out(dirs[0], labels)
    replacing = [_check_out(out, "dir", args.force)]
    if args.junit is not None:
        replacing.append(_check_out(args.junit, "file", args.force, out))
    for line in filter(None, replacing):
        env.err(line)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create it ({exc.strerror or exc})") from exc
    runs = [comparison.run_data(run, label, d) for run, d, label in zip(stored, dirs, labels, strict=True)]
    cmp = comparison.compare(runs, alpha=args.alpha if args.alpha is not None else significance.ALPHA,
                             min_effect=args.min_effect if args.min_effect is not None else significance.MIN_EFFECT)
    result = gate.evaluate(cmp, rules, strict=args.strict) if rules else None
    path = report.write(cmp, out, result)
    if args.junit is not None:
        junit.write(args.junit, "ssdlab compare", junit.comparison_suites(cmp, result))
    if not args.quiet:
        _summary(cmp, result, env)
    env.out(str(path.resolve()))
    if result is not None and not result.passed:
        return int(ExitCode.NEGATIVE)
    return 0


def _summary(cmp: Any, result: Any, env: Any) -> None:
    common = len(cmp.common_rows())
    partial = len(cmp.partial_rows())
    env.err(f"compared {len(cmp.runs)} runs against {cmp.labels[0]}: {common} common point(s)"
            + (f", {partial} not in every run" if partial else ""))
    for i in range(1, len(cmp.runs)):
        parts = []
        for m in ("iops", "bw_MBps", "lat_mean_us"):
            g, _ = cmp.geomean(m, i)
            if g is not None:
                parts.append(f"{m} ×{g:.3f}")
        env.err(f"  {cmp.labels[i]}: " + (", ".join(parts) + " (geometric mean of per-point ratios)" if parts
                                          else "no common point with a value"))
    if result is None:
        return
    base = cmp.labels[0]
    if result.passed:
        env.err(f"gate: PASSED ({result.checked} checks" + (", --strict" if result.strict else "") + ")")
    else:
        env.err(f"gate: FAILED: {len(result.failures)} regression(s)")
        for f in result.failures:
            env.err(f"  FAIL {f.text(base)}")
    held = result.held
    if held:
        env.err(f"  {len(held)} change(s) past a threshold did not fail (not significant, cannot judge, or not "
                "measured in both runs; --strict fails them):")
        for f in held[:10]:
            env.err(f"  held {f.text(base)}")
        if len(held) > 10:
            env.err(f"  … {len(held) - 10} more in compare.html")
