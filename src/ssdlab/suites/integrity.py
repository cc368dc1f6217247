"""The `integrity` suite: write the span with fio's verify headers and strong checksums, read it all back,
report every block that does not match (offset, what was expected, what was read, when it was found).

Points:
  01-write   sequential write of the span, one verify header + checksum per block (fio `verify=`, data from
             a recorded seed), no read-back inside this job
  02-mixed   (--mixed) random writes that fio reads back and checks in batches while they run
             (`verify_backlog`), with random reads of the same span alongside, for --runtime
  NN-check   a read of the whole span that checks every block against its header (fio's --readonly)

Every check continues past a failure, so all mismatches are found, not just the first. A block can fail
its header check (a wrong offset means data landed in the wrong place; a bad magic means it was never
written or was overwritten) or its data checksum (fio prints both checksums). A read error during a check
is an unreadable block: it fails the verdict too.

The manifest (recorded as a run event, `integrity-manifest`) holds everything needed to check the same data
later: span, block size, checksum, seed and the target's identity. `ssdlab verify RUN` reads it and checks
the data again (after a power cycle or a firmware update) without writing anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ssdlab.errors import UsageError
from ssdlab.fio.verify import CHECKSUMS, DEFAULT_CHECKSUM, HEADER_BYTES, backlog_options, check_options, write_options
from ssdlab.results.events import ManifestEvent, VerdictEvent
from ssdlab.results.extra import IoErrors, MeasurementExtra, VerifyFailures
from ssdlab.results.model import PointResult, Run, TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.suites.base import PlanContext, Suite, SuiteOption, register
from ssdlab.units import format_bytes

DEFAULT_SEED = 0x55D1AB  # any fixed number: the seed is recorded, so the data can be regenerated
DEFAULT_BLOCK = 4096
DEFAULT_QD = 32
DEFAULT_BACKLOG = 64
MANIFEST_EVENT = "integrity-manifest"
MANIFEST_VERSION = 1


def check_point(point_id: str, label: str, *, block_size: int, iodepth: int, size: int | None, offset: int,
                checksum: str, role: str = "check") -> TestPoint:
    """A read of the span that checks every block against its header (never writes: fio --readonly)."""
    return TestPoint(
        id=point_id, label=label, group="integrity",
        workload=Workload(rw="read", bs=block_size, iodepth=iodepth, size=size, offset=offset,
                          options=check_options(checksum)),
        tags=PointTags.of(integrity=role, readonly=True, errors_are_results=True),
    )


class IntegritySuite(Suite):
    name = "integrity"
    summary = "Data integrity: write the span with verify headers and checksums, read it back, report every mismatch"
    writes = True
    default_runtime_s = 60.0  # the --mixed phase

    def suite_options(self) -> list[SuiteOption]:
        return [
            SuiteOption("checksum", "str", DEFAULT_CHECKSUM, "integrity: checksum in every block's verify header "
                        f"(default {DEFAULT_CHECKSUM})", choices=CHECKSUMS),
            SuiteOption("block-size", "size", DEFAULT_BLOCK, "integrity: block size written and checked; each "
                        "block has its own header, so mismatches are located to a block (default 4KiB)"),
            SuiteOption("iodepth", "int", DEFAULT_QD, "integrity: queue depth of the write and check passes "
                        f"(default {DEFAULT_QD})"),
            SuiteOption("seed", "int", DEFAULT_SEED, "integrity: seed of the random data written (recorded in the "
                        "manifest)"),
            SuiteOption("mixed", "flag", False, "integrity: also check data while a random workload runs: random "
                        "writes read back in batches (verify_backlog) with random reads alongside, for --runtime"),
            SuiteOption("verify-backlog", "int", DEFAULT_BACKLOG, "integrity --mixed: blocks written before fio "
                        f"reads them back and checks them (default {DEFAULT_BACKLOG})"),
        ]

    def _settings(self, ctx: PlanContext) -> tuple[str, int, int, int]:
        if ctx.traits.no_data:
            raise UsageError(f"integrity needs a target that stores data: {ctx.traits.no_data}; use a "
                             "file, a block device or an nbdkit target")
        o = ctx.options
        checksum = str(o.get("checksum") or DEFAULT_CHECKSUM)
        bs = int(o.get("block_size") or DEFAULT_BLOCK)
        if bs <= HEADER_BYTES + 64 or bs % 512:
            raise UsageError(f"--block-size {bs} is too small or not a multiple of 512 B: the verify header needs "
                             "room (use 4KiB or more)")
        if bs > ctx.capacity:
            raise UsageError(f"--block-size {format_bytes(bs)} is larger than the span ({format_bytes(ctx.capacity)})")
        qd = int(o.get("iodepth") or DEFAULT_QD)
        if qd < 1:
            raise UsageError(f"--iodepth {qd} must be at least 1")
        seed = o.get("seed")
        return checksum, bs, qd, DEFAULT_SEED if seed is None else int(seed)

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        checksum, bs, qd, seed = self._settings(ctx)
        span = ctx.capacity - ctx.capacity % bs
        points = [TestPoint(
            id="01-write", label=f"Write {format_bytes(span)} with {checksum} headers", group="integrity",
            workload=Workload(rw="write", bs=bs, iodepth=qd, size=span, options=write_options(checksum, seed)),
            tags=PointTags.of(integrity="write", checksum=checksum, seed=seed),
        )]
        if ctx.options.get("mixed"):
            runtime = self.runtime(ctx)
            backlog = int(ctx.options.get("verify_backlog") or DEFAULT_BACKLOG)
            # one writer at QD1: a block is never written twice at once, so a correct drive never fails
            writer = Workload(rw="randwrite", bs=bs, iodepth=1, size=span, runtime_s=runtime,
                              options=backlog_options(checksum, seed + 1, backlog))
            load = Workload(rw="randread", bs=bs, iodepth=qd, size=span, runtime_s=runtime)
            points.append(TestPoint(
                id="02-mixed", label="Random writes checked while random reads run", group="integrity",
                workload=writer, streams=(writer, load),
                tags=PointTags.of(integrity="mixed", stream_names=["verify", "load"], errors_are_results=True),
            ))
        n = len(points) + 1
        points.append(check_point(f"{n:02d}-check", f"Check {format_bytes(span)} ({checksum})", block_size=bs,
                                  iodepth=qd, size=span, offset=0, checksum=checksum))
        return points

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        checksum, bs, _, seed = self._settings(ctx)
        return [f"every {format_bytes(bs)} block gets a verify header with its offset and a {checksum} checksum "
                f"(data seed {seed}); `ssdlab verify RUN` re-checks the data later without writing"]

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        from ssdlab.results import store

        found = manifest(run)
        if found is not None:
            run = run.with_event(ManifestEvent.of(time=store.now_iso(), kind=MANIFEST_EVENT, **found))
        v = verdict(run)
        run = run.with_event(VerdictEvent.of(time=store.now_iso(), kind="verdict", suite="integrity", **v))
        return run if v["passed"] else run.with_warning(str(v["text"]))


# ---------------------------------------------------------------- manifest and verdict (pure, from the run)

def _write_result(run: Run) -> PointResult | None:
    return next((r for r in run.points if r.point.tags.integrity == "write" and r.status == "ok"), None)


def manifest(run: Run) -> dict[str, Any] | None:
    """What `ssdlab verify` needs to check the written data again; None when nothing was written."""
    stored = next((e for e in reversed(run.events) if isinstance(e, ManifestEvent)), None)
    if stored is not None:
        return stored.manifest()
    r = _write_result(run)
    if r is None:
        return None
    w = r.point.workload
    target = run.target
    return {
        "manifest_version": MANIFEST_VERSION, "write_point": r.point.id, "written": r.finished,
        "span_offset": w.offset, "span_bytes": w.size, "block_size": w.bs,
        "checksum": w.options.get("verify", DEFAULT_CHECKSUM), "seed": int(w.options.get("randseed", 0)),
        "data": "fio's random data per block, seeded from the seed above; each block's header holds its offset "
                "and checksum",
        "fio_version": r.measurement.engine_version if r.measurement else "",
        "ioengine": run.options.ioengine,
        "target": {"spec": (run.options.target_specs or (target.get("spec", ""),))[0],
                   "kind": target.get("kind", ""), "name": target.get("name", ""),
                   "capacity_bytes": target.get("capacity_bytes"), "identity": dict(target.get("identity") or {})},
    }


def check_results(run: Run) -> list[PointResult]:
    """Every point that checked data (check passes, the mixed pass, later `ssdlab verify` passes), in order."""
    return [r for r in run.points if r.point.tags.integrity in ("check", "mixed", "reverify")]


def summary(r: PointResult) -> dict[str, Any]:
    """bytes checked, mismatches and unreadable blocks of one checking point."""
    extra = r.measurement.extra if r.measurement else MeasurementExtra()
    v = extra.verify or VerifyFailures()
    errors = extra.io_errors or IoErrors()
    return {"point": r.point.id, "role": r.point.tags.integrity, "status": r.status,
            "checked_bytes": int(v.checked_bytes or 0), "mismatches": int(v.mismatches or 0),
            "header_mismatches": int(v.header_mismatches or 0),
            "unreadable": int(errors.count or 0), "checksum": v.checksum,
            "listed": list(v.listed or []), "errors": list(errors.listed or [])}


def describe(s: Mapping[str, Any]) -> str:
    """One line for one check: 'N bytes checked, no mismatch' or the counts and the first failure."""
    checked = f"{format_bytes(s['checked_bytes'])} ({s['checked_bytes']:,} bytes) checked"
    if s["status"] != "ok":
        return f"{s['point']}: did not finish ({s['status']})"
    if not s["mismatches"] and not s["unreadable"]:
        return f"{checked}, no mismatch"
    parts = []
    if s["mismatches"]:
        header = s["header_mismatches"]
        parts.append(f"{s['mismatches']:,} mismatching block(s) ({s['mismatches'] - header} data checksum, "
                     f"{header} header)")
    if s["unreadable"]:
        parts.append(f"{s['unreadable']:,} unreadable block(s)")
    first = (s["listed"] or s["errors"] or [{}])[0]
    where = f"; first at offset {first['offset']}" if first.get("offset") is not None else ""
    return f"{' and '.join(parts)} in {checked}{where}"


def verdict(run: Run, results: list[PointResult] | None = None) -> dict[str, Any]:
    """{"passed", "text", ...}: passed when every check finished with no mismatch and no unreadable block."""
    checks = check_results(run) if results is None else results
    if not checks:
        return {"passed": False, "text": "integrity: nothing was checked (the write or the check did not finish)",
                "checked_bytes": 0, "mismatches": 0, "unreadable": 0}
    sums = [summary(r) for r in checks]
    latest_check = next((s for s in reversed(sums) if s["role"] in ("check", "reverify")), None)
    bad = [s for s in sums if s["status"] != "ok" or s["mismatches"] or s["unreadable"]]
    passed = not bad and latest_check is not None
    mismatches = sum(s["mismatches"] for s in sums)
    unreadable = sum(s["unreadable"] for s in sums)
    checked = sum(s["checked_bytes"] for s in sums)
    return {"passed": passed, "text": _verdict_text(sums, bad, latest_check), "checked_bytes": checked,
            "mismatches": mismatches, "unreadable": unreadable}


def _verdict_text(sums: list[dict[str, Any]], bad: list[dict[str, Any]], latest_check: dict[str, Any] | None) -> str:
    """'integrity: PASS, ...' (with what was checked under load), or FAIL and the first bad check."""
    if not bad and latest_check is not None:
        text = f"integrity: PASS, {describe(latest_check)}"
        during = sum(s["checked_bytes"] for s in sums if s["role"] == "mixed")
        if during:
            text += f"; {format_bytes(during)} ({during:,} bytes) checked while a random workload ran"
        return text
    if latest_check is None:
        return "integrity: FAIL, the full check did not run" + (f"; {describe(bad[0])}" if bad else "")
    return f"integrity: FAIL, {describe(bad[0])}" + (f" (in {bad[0]['point']})" if len(sums) > 1 else "")


register(IntegritySuite())
