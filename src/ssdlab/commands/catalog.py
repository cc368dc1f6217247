"""`ssdlab runs` (list and filter the results catalog) and `ssdlab tag RUN k=v` (notes stored in DIR/tags.json).

The results root is `--results DIR` here as in `ssdlab serve` and `ssdlab compare` (add_results_option); `--root`,
its old name, still works and says so once."""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path
from typing import Any

from ssdlab.errors import ExitCode, UsageError
from ssdlab.termtext import printable


def _day(text: str) -> str:
    try:
        return date.fromisoformat(text[:10]).isoformat() + text[10:]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date: use YYYY-MM-DD") from None


def add_results_option(p: Any, help_text: str) -> None:
    """`--results DIR`, and `--root DIR`, its old name (deprecated: hidden from --help, a note when used)."""
    p.add_argument("--results", type=Path, metavar="DIR", help=help_text)
    p.add_argument("--root", dest="old_root", type=Path, metavar="DIR", help=argparse.SUPPRESS)


def results_option(args: argparse.Namespace, env: Any) -> Path | None:
    """The results root the user named (None: the default), and a note when it was named by --root."""
    if args.old_root is None:
        return args.results  # type: ignore[no-any-return]
    if args.results is not None and args.results != args.old_root:
        raise UsageError(f"--results {args.results} and --root {args.old_root} disagree: give --results only "
                         "(--root is its old name)")
    env.err("ssdlab: note: --root is now --results (as `ssdlab serve` and `ssdlab compare` name it); --root "
            "still works, for now")
    return args.old_root  # type: ignore[no-any-return]


def add_commands(sub: Any) -> dict[str, Any]:
    """Register `runs` and `tag`."""
    p = sub.add_parser("runs", help="list the runs of a results root (an SQLite catalog, rebuilt from the run "
                                    "directories), filtered by device, model, firmware, suite, verdict, date, tag")
    add_results_option(p, "results root (default $SSDLAB_RESULTS or ./results)")
    p.add_argument("--device", metavar="TEXT",
                   help="target name contains TEXT (e.g. nvme0n1, tlc-4k) or matches a glob")
    p.add_argument("--model", metavar="TEXT", help="device model contains TEXT or matches a glob (*qlc*)")
    p.add_argument("--serial", metavar="TEXT", help="device serial contains TEXT or matches a glob")
    p.add_argument("--firmware", metavar="TEXT", help="firmware contains TEXT or matches a glob")
    p.add_argument("--suite", metavar="NAME", help="suite name or glob (pts-*)")
    p.add_argument("--verdict", metavar="WORD",
                   help="the run's verdict: steady, not-steady, incomplete, pass, fail, complete")
    p.add_argument("--since", type=_day, metavar="YYYY-MM-DD", help="created on or after this day (UTC)")
    p.add_argument("--until", type=_day, metavar="YYYY-MM-DD", help="created on or before this day (UTC)")
    p.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE", help="has this tag (repeatable)")
    p.add_argument("--rebuild", action="store_true", help="recreate the catalog from the run directories first")
    p.add_argument("--json", action="store_true", help="machine-readable list")

    p = sub.add_parser("tag", help="add or remove notes on a stored run (DIR/tags.json; run.json is not changed)")
    p.add_argument("run", metavar="RUN", help="run directory or catalog id")
    p.add_argument("tags", nargs="*", metavar="KEY=VALUE", help="tags to set (an empty value is allowed)")
    p.add_argument("--remove", action="append", default=[], metavar="KEY", help="remove this tag (repeatable)")
    add_results_option(p, "results root whose catalog resolves ids (default $SSDLAB_RESULTS or ./results)")
    return {"runs": cmd_runs, "tag": cmd_tag}


def cmd_runs(args: argparse.Namespace, env: Any) -> int:
    """One line per run (or JSON), oldest first; unreadable run directories are named on stderr, one line each,
    and make the exit status 8 (a stored result is malformed) once the others are listed."""
    from ssdlab.results.catalog import Catalog, Filters, default_root, parse_tag

    root = results_option(args, env) or default_root()
    filters = Filters(device=args.device, model=args.model, serial=args.serial, firmware=args.firmware,
                      suite=args.suite, verdict=args.verdict, since=args.since, until=args.until,
                      tags=tuple(parse_tag(t) for t in args.tag))
    with Catalog(root) as cat:
        stats = cat.rebuild() if args.rebuild else cat.refresh()
        entries = cat.entries(filters)
    for bad in stats.unreadable:
        env.err(f"ssdlab: skipped unreadable run: {bad}")
    status = int(ExitCode.STORED) if stats.unreadable else 0
    if args.json:
        env.out(json.dumps([e.as_dict() for e in entries], indent=1))
        return status
    if not entries:
        if not stats.unreadable:  # (an unreadable one was named already)
            env.err(f"no run in {root} matches" if any(vars(filters).values()) else f"no runs in {root}")
        return status
    rows = [tuple(printable(c) for c in (e.id, e.created[:16].replace("T", " "), e.suite.rsplit("/", 1)[-1], e.target,
                                         e.model or "-", e.firmware or "-", e.verdict, str(e.points),
                                         " ".join(f"{k}={v}" for k, v in e.tags.items()), str(e.path)))
            for e in entries]
    header = ("id", "created (UTC)", "suite", "target", "model", "firmware", "verdict", "points", "tags", "path")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    widths = [min(w, 40) for w in widths]
    env.out("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for r in rows:
        env.out("  ".join(_fit(c, w) for c, w in zip(r, widths, strict=True)).rstrip())
    return status


def _fit(text: str, width: int) -> str:
    return text.ljust(width) if len(text) <= width else text[: width - 1] + "…"


def cmd_tag(args: argparse.Namespace, env: Any) -> int:
    """Set/remove tags; print the run's tags afterwards."""
    from ssdlab.results.catalog import parse_tag, read_tags, resolve, write_tags
    from ssdlab.results.store import load_run

    if not args.tags and not args.remove:
        raise UsageError("tag needs KEY=VALUE to set or --remove KEY (e.g. `ssdlab tag RUN label=fw-2.1`)")
    for text in [*args.tags, *args.remove]:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # raw bytes the command line could not decode: never stored, never echoed
            raise UsageError(f"tag {printable(text)} is not valid UTF-8 text: write tags in UTF-8") from None
    run_dir = resolve(args.run, results_option(args, env))
    load_run(run_dir)  # a run directory, readable: never tag something that is not a run
    tags = read_tags(run_dir)
    for key in args.remove:
        if key not in tags:
            raise UsageError(f"--remove {key}: the run has no tag {key!r} (tags: {', '.join(tags) or 'none'})")
        del tags[key]
    for text in args.tags:
        k, v = parse_tag(text)
        tags[k] = v
    write_tags(run_dir, tags)
    env.out(printable(" ".join(f"{k}={v}" for k, v in sorted(tags.items()))) or "(no tags)")
    return 0
