"""`ssdlab verify RUN`: check again, later, the data an integrity run wrote (after a power cycle, a firmware
update, a month on the shelf), from the manifest stored in the run.

It reads the span with fio's verify checks under fio's --readonly (nothing is written, so no write
consent is asked), adds the pass to the run as a `reverify-NN` point with a verdict event, and re-renders
the report. Exit 0 when every block matched, 1 on any mismatching or unreadable block, 3 when the target
is missing or is not the device that was written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ssdlab.errors import TargetError, UsageError
from ssdlab.results.events import VerdictEvent

MAX_PRINTED = 20
IDENTITY_KEYS = ("serial", "model", "loop_backing_file", "file", "nbd_uri")


def add_commands(subparsers: Any) -> dict[str, Any]:
    """Register `verify` on the CLI."""
    p = subparsers.add_parser(
        "verify", help="check again what an integrity run wrote (read-only); exit 1 on any mismatch",
        description="Re-check the data written by `ssdlab run integrity`, from the manifest in its run directory. "
                    "Reads only (fio --readonly). Exit 0 all blocks match, 1 a block mismatches or cannot be read, "
                    "3 the target is missing or not the device that was written.")
    p.add_argument("dir", type=Path, help="results directory of an integrity run")
    p.add_argument("--target", "-t", help="where the data is now, if its name changed (e.g. /dev/nvme1n1 after a "
                                          "reboot); its identity is still checked against the manifest")
    p.add_argument("--iodepth", type=int, default=32, help="queue depth of the check (default 32)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the verdict")
    p.add_argument("--no-report", action="store_true", help="do not re-render report.html")
    return {"verify": cmd_verify}


def identity_problems(manifest_target: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Why the target found now is not the one the manifest describes (empty: it is)."""
    then_id = manifest_target.get("identity") or {}
    now_id = now.get("identity") or {}
    out = []
    if manifest_target.get("kind") and now.get("kind") != manifest_target.get("kind"):
        out.append(f"it was a {manifest_target.get('kind')} target, now {now.get('kind')}")
    for key in IDENTITY_KEYS:
        if then_id.get(key) and now_id.get(key) and then_id[key] != now_id[key]:
            out.append(f"{key} was {then_id[key]!r}, now {now_id[key]!r}")
    return out


def cmd_verify(args: argparse.Namespace, env: Any) -> int:
    from ssdlab.results import store
    from ssdlab.suites.integrity import manifest

    if args.iodepth < 1:
        raise UsageError(f"--iodepth {args.iodepth} must be at least 1")
    run = store.load_run(args.dir)
    found = manifest(run)
    if found is None:
        raise UsageError(f"{args.dir} holds no data written by the integrity suite (suite {run.suite}, no finished "
                         "write point): run `ssdlab run integrity` first")
    with store.locked(args.dir):
        return _verify(args, env, store.load_run(args.dir), found)


def _verify(args: argparse.Namespace, env: Any, run: Any, found: dict[str, Any]) -> int:
    from ssdlab.fio.executor import FioExecutor
    from ssdlab.results import store
    from ssdlab.results.model import PointResult
    from ssdlab.safety import WriteGrant
    from ssdlab.suites.integrity import check_point, summary, verdict
    from ssdlab.units import format_bytes

    then = found.get("target") or {}
    target, now = _written_target(args, run, found)
    then_fw = (then.get("identity") or {}).get("firmware")
    now_fw = (now.get("identity") or {}).get("firmware")
    n = 1 + sum(1 for r in run.points if r.point.tags.integrity == "reverify")
    point = check_point(f"reverify-{n:02d}", f"Re-verify {n}", block_size=int(found["block_size"]),
                        iodepth=args.iodepth, size=int(found["span_bytes"]), offset=int(found.get("span_offset") or 0),
                        checksum=str(found["checksum"]), role="reverify")
    if not args.quiet:
        env.err(f"checking {format_bytes(int(found['span_bytes']))} of {target.name} written {found.get('written')} "
                f"({found['checksum']}, {format_bytes(int(found['block_size']))} blocks), read-only")
        if then_fw and now_fw and then_fw != now_fw:
            env.err(f"note: firmware was {then_fw} when the data was written, now {now_fw}")
    executor = FioExecutor(WriteGrant(target, writes=False))  # the fio boundary refuses any job that writes
    started = store.now_iso()
    try:
        target.prepare(False)
        m = executor.run_point(point, target, store.point_dir(args.dir, point.id))
    finally:
        target.close()
    result = PointResult(point=point, status="ok", started=started, finished=store.now_iso(), measurement=m)
    v = verdict(run, [result])
    run = run.with_point(result)
    run = run.with_event(VerdictEvent.of(
        time=store.now_iso(), kind="verdict", suite="integrity", source="ssdlab verify", point=point.id, **v,
    ))
    store.save_run(args.dir, run)
    if not args.quiet:
        _print_findings(env, summary(result), store.point_dir(args.dir, point.id) / "stderr.txt")
    env.err(f"verdict: {v['text']}")
    if not args.no_report:
        from ssdlab.report.html import render_report

        env.out(str(render_report(run, args.dir).resolve()))
    return 0 if v["passed"] else 1


def _written_target(args: argparse.Namespace, run: Any, found: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The target that holds the data now (--target, else the one written) and its info; refused when it is
    not the target that was written, or too short."""
    from ssdlab.run.target import parse_target
    from ssdlab.targets import FileTarget, TargetOptions

    then = found.get("target") or {}
    spec = args.target or str(then.get("spec") or "")
    if then.get("kind") == "nbdkit" and str(then.get("spec", "")).startswith("nbdkit:memory") and not args.target:
        raise TargetError("the data was written to an nbdkit memory disk, which ended with its run: nothing is "
                          "left to check (write to nbdkit:file:PATH to keep it)")
    o = run.options
    target = parse_target(spec, TargetOptions(capacity=o.capacity, ioengine=o.ioengine or "libaio"))
    span_end = int(found.get("span_offset") or 0) + int(found.get("span_bytes") or 0)
    if isinstance(target, FileTarget) and (not target.path.exists() or target.path.stat().st_size < span_end):
        raise TargetError(f"{target.path} is missing or shorter than the {span_end:,} bytes that were written")
    now = target.info()  # identity and hazards: sysfs, blkid, nvme-cli; read once
    problems = identity_problems(then, now)
    if problems:
        raise TargetError(f"{spec} is not the target that was written: {'; '.join(problems)} (name the right one "
                          "with --target)")
    if target.capacity() < span_end:
        raise TargetError(f"{spec} holds {target.capacity():,} bytes, fewer than the {span_end:,} that were written")
    return target, now


def _print_findings(env: Any, s: dict[str, Any], stderr_file: Path) -> None:
    """The first mismatches and unreadable blocks, and how many more there are."""
    for f in s["listed"][:MAX_PRINTED]:
        env.err(f"  offset {f['offset']}: {f['kind']} {f['check']}: expected {f['expected']}, found "
                f"{f['received']}" + (f" ({f['time']})" if f.get("time") else ""))
    for e in s["errors"][:MAX_PRINTED]:
        env.err(f"  offset {e.get('offset')}: unreadable ({e.get('error')})")
    shown = min(len(s["listed"]), MAX_PRINTED) + min(len(s["errors"]), MAX_PRINTED)
    if shown < s["mismatches"] + s["unreadable"]:
        env.err(f"  ... {s['mismatches'] + s['unreadable'] - shown:,} more in the report and {stderr_file}")
