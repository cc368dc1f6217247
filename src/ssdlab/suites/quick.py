"""CrystalDiskMark/KDiskMark-style quick test and the four-corners test.

quick:        SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1 (KDiskMark "Standard" preset), read then write.
four-corners: SEQ128K and RND4K, read and write, at a high queue depth (as the PE321 review shows them).

`--passes N` measures each test N times in a row, as CrystalDiskMark's and KDiskMark's "number of tests" does
(they run 5 by default; ssdlab one, so a run keeps its length unless asked), and the report's grid gives each test's
best pass or the mean of its passes (`--pass-stat best|mean`; report/cdm.py), saying which.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssdlab.errors import UsageError
from ssdlab.results.model import Run, TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.suites.base import PlanContext, Suite, SuiteOption, register
from ssdlab.targets.base import Target
from ssdlab.units import format_bs, format_bytes, format_duration


@dataclass(frozen=True)
class Corner:
    seq: bool
    bs: int
    qd: int
    threads: int

    @property
    def group(self) -> str:
        return f"{'SEQ' if self.seq else 'RND'}{format_bs(self.bs)} Q{self.qd}T{self.threads}"


PREFILL_BS = 1024**2
PREFILL_QD = 32
PREFILL_MBPS = 1000.0  # assumed for the ETA only
NOT_PREFILLED = ("the reads were not prefilled: on a raw device, LBAs that were never written (or were trimmed) "
                 "are answered without reading NAND, so read results can be inflated; run `quick` (which "
                 "prefills the span with consent) or write the span first")


def prefill_point(ctx: PlanContext) -> TestPoint:
    """Sequential 1 MiB writes over the whole span the read points read (a raw device has no layout step)."""
    span = ctx.capacity
    return TestPoint(
        id="00-prefill", label=f"prefill: sequential 1M writes over the {format_bytes(span)} the reads touch",
        workload=Workload(rw="write", bs=PREFILL_BS, iodepth=PREFILL_QD, io_bytes=span, size=span),
        phase="precondition", group="prefill", tags=PointTags.of(amount_bytes=span))


def log_interval_ms(runtime_s: float) -> int:
    """Per-interval IOPS/MB/s/latency logging: about ten intervals per point (100 ms to 1 s each), so a point
    carries the variation `ssdlab compare` judges a difference against."""
    return int(min(1000, max(100, round(runtime_s * 100, -2))))


MAX_PASSES = 9  # as CrystalDiskMark and KDiskMark allow
PASS_STATS = ("best", "mean")


def passes(ctx: PlanContext) -> int:
    return int(ctx.options.get("passes") or 1)


def corner_points(corners: tuple[Corner, ...], ctx: PlanContext, runtime: float) -> list[TestPoint]:
    """Read points first (on laid-out data), then write points, CrystalDiskMark's order, each test's passes one
    after the other (`--passes`: ids and labels then name the pass). On a raw block device the span is prefilled
    first (files are laid out and simulated drives written when they are prepared)."""
    points: list[TestPoint] = [prefill_point(ctx)] if ctx.traits.device else []
    n = passes(ctx)
    for direction in ("read", "write"):
        for c in corners:
            rw = direction if c.seq else f"rand{direction}"
            slug = c.group.lower().replace(" ", "-")
            test = sum(p.phase == "measure" for p in points) // n + 1
            for k in range(1, n + 1):
                points.append(TestPoint(
                    id=f"{test:02d}-{slug}-{direction}" + (f"-p{k}" if n > 1 else ""),
                    label=f"{c.group} {direction.capitalize()}" + (f" (pass {k} of {n})" if n > 1 else ""),
                    workload=Workload(rw=rw, bs=c.bs, iodepth=c.qd, numjobs=c.threads, runtime_s=runtime,
                                      ramp_s=ctx.ramp_s or 0.0, log_interval_ms=log_interval_ms(runtime)),
                    group=c.group,
                    tags=PointTags.of(direction=direction, access="seq" if c.seq else "rnd"),
                ))
    return points


class CornerSuite(Suite):
    """Shared by quick, four-corners and quick-read: the prefill's time in the ETA and the plan notes."""

    corners: tuple[Corner, ...] = ()

    def suite_options(self) -> list[SuiteOption]:
        return [
            SuiteOption("passes", "int", 1, f"quick, four-corners, quick-read: measure each test N times in a row "
                                            f"(1-{MAX_PASSES}), as CrystalDiskMark and KDiskMark do (they run 5); "
                                            "the grid shows the best pass or the mean (--pass-stat)"),
            SuiteOption("pass-stat", "str", "best", "quick, four-corners, quick-read with --passes: each test's "
                                                    "best pass (highest MB/s) or the mean of its passes",
                        choices=PASS_STATS),
        ]

    def validate(self, ctx: PlanContext, target: Target) -> None:
        n = ctx.options.get("passes")
        if n is not None and not 1 <= int(n) <= MAX_PASSES:
            raise UsageError(f"--passes {n}: give 1 to {MAX_PASSES} passes per test (CrystalDiskMark's range)")

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        return corner_points(self.corners, ctx, self.runtime(ctx))

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        n = passes(ctx)
        notes = [f"passes: each test runs {n} times in a row; the report's grid gives "
                 + ("the mean of its passes" if ctx.options.get("pass_stat") == "mean" else "its best pass")]
        return (notes if n > 1 else []) + self._prefill_notes(ctx)

    def _prefill_notes(self, ctx: PlanContext) -> list[str]:
        if not ctx.traits.device:
            return []
        if self.writes:
            return [f"prefill: the {format_bytes(ctx.capacity)} the reads touch is written sequentially first "
                    f"(at {PREFILL_MBPS:g} MB/s that takes {format_duration(ctx.capacity / PREFILL_MBPS / 1e6)}; "
                    "limit it with --capacity or --footprint)"]
        return [f"note: {NOT_PREFILLED}"]

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        if ctx.traits.device and not self.writes:
            return run.with_warning(NOT_PREFILLED)
        return run


class QuickSuite(CornerSuite):
    name = "quick"
    summary = "CrystalDiskMark-style: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, read and write"
    writes = True
    default_runtime_s = 5.0
    corners: tuple[Corner, ...] = (Corner(True, 1024**2, 8, 1), Corner(True, 1024**2, 1, 1),
                                   Corner(False, 4096, 32, 1), Corner(False, 4096, 1, 1))


class FourCornersSuite(CornerSuite):
    name = "four-corners"
    summary = "Four corners at high queue depth: SEQ128K Q64T1 and RND4K Q64T4, read and write"
    writes = True
    default_runtime_s = 10.0
    corners: tuple[Corner, ...] = (Corner(True, 128 * 1024, 64, 1), Corner(False, 4096, 64, 4))


class QuickReadSuite(QuickSuite):
    name = "quick-read"
    summary = "The quick suite's read points only (never writes; no consent needed on devices)"
    writes = False

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        return [p for p in super().plan(ctx) if p.tags.direction == "read"]


register(QuickSuite())
register(FourCornersSuite())
register(QuickReadSuite())
