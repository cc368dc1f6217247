"""CrystalDiskMark/KDiskMark-style quick test and the four-corners test.

quick:        SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1 (KDiskMark "Standard" preset), read then write.
four-corners: SEQ128K and RND4K, read and write, at a high queue depth (as the PE321 review shows them).
"""

from __future__ import annotations

from dataclasses import dataclass

from ssdlab.model import TestPoint, Workload
from ssdlab.suites.base import PlanContext, Suite, register
from ssdlab.units import format_bs


@dataclass(frozen=True)
class Corner:
    seq: bool
    bs: int
    qd: int
    threads: int

    @property
    def group(self) -> str:
        return f"{'SEQ' if self.seq else 'RND'}{format_bs(self.bs)} Q{self.qd}T{self.threads}"


def corner_points(corners: tuple[Corner, ...], ctx: PlanContext, runtime: float) -> list[TestPoint]:
    """Read points first (on laid-out data), then write points, CrystalDiskMark's order."""
    points: list[TestPoint] = []
    for direction in ("read", "write"):
        for c in corners:
            rw = direction if c.seq else f"rand{direction}"
            slug = c.group.lower().replace(" ", "-")
            points.append(TestPoint(
                id=f"{len(points) + 1:02d}-{slug}-{direction}",
                label=f"{c.group} {direction.capitalize()}",
                workload=Workload(rw=rw, bs=c.bs, iodepth=c.qd, numjobs=c.threads, runtime_s=runtime,
                                  ramp_s=ctx.ramp_s or 0.0),
                group=c.group,
                tags={"direction": direction, "access": "seq" if c.seq else "rnd"},
            ))
    return points


class QuickSuite(Suite):
    name = "quick"
    summary = "CrystalDiskMark-style: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, read and write"
    writes = True
    default_runtime_s = 5.0
    corners: tuple[Corner, ...] = (Corner(True, 1024**2, 8, 1), Corner(True, 1024**2, 1, 1),
                                   Corner(False, 4096, 32, 1), Corner(False, 4096, 1, 1))

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        return corner_points(self.corners, ctx, self.runtime(ctx))


class FourCornersSuite(Suite):
    name = "four-corners"
    summary = "Four corners at high queue depth: SEQ128K Q64T1 and RND4K Q64T4, read and write"
    writes = True
    default_runtime_s = 10.0
    corners: tuple[Corner, ...] = (Corner(True, 128 * 1024, 64, 1), Corner(False, 4096, 64, 4))

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        return corner_points(self.corners, ctx, self.runtime(ctx))


class QuickReadSuite(QuickSuite):
    name = "quick-read"
    summary = "The quick suite's read points only (never writes; no consent needed on devices)"
    writes = False

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        return [p for p in super().plan(ctx) if p.tags.get("direction") == "read"]


register(QuickSuite())
register(FourCornersSuite())
register(QuickReadSuite())
