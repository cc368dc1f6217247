"""`pts`: the whole SNIA PTS 2.0 set in one run and one report: IOPS, Throughput (128 KiB and 1024 KiB),
Latency and WSAT, each with its own purge (and preconditioning where the spec asks for it)."""

from __future__ import annotations

from ssdlab.eta import Outlook
from ssdlab.model import Run, TestPoint
from ssdlab.suites.base import PlanContext, register
from ssdlab.suites.pts.common import RoundSuite, analyse, per_round, stimulus, window_average
from ssdlab.suites.pts.tests import IOPS, LAT, TP128, TP1024
from ssdlab.suites.pts.wsat import WSAT_BS, wsat_conclude, wsat_notes, wsat_outlook, wsat_plan, wsat_remaining


class FullPtsSuite(RoundSuite):
    name = "pts"
    summary = "SNIA PTS 2.0, all tests in one run and report: IOPS, Throughput 128K/1M, Latency, then WSAT"
    tests = (IOPS, TP128, TP1024, LAT)

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        return [*super().plan(ctx), *wsat_plan(self.settings(ctx))]

    def next_points(self, ctx: PlanContext, run: Run) -> list[TestPoint]:
        rounds = super().next_points(ctx, run)
        s = self.settings(ctx)
        return [*rounds, *wsat_plan(s)] if rounds else wsat_remaining(s, run)

    def outlook(self, ctx: PlanContext, run: Run) -> Outlook:
        rounds = super().outlook(ctx, run)
        s = self.settings(ctx)
        # RND 4 KiB writes at T x Q as the IOPS test measured them (the window average once it is done, else
        # the latest round): where WSAT ends up after its write cliff
        iops = analyse(IOPS, s, run)
        key = stimulus("RND", WSAT_BS, 0).key
        writes = window_average(IOPS, iops, run, key, "iops") if iops.finished else \
            next((v for v in reversed(per_round(IOPS, run, key, "iops", iops.rounds_done)) if v is not None), None)
        wsat = wsat_outlook(s, run, writes)
        expected = wsat.expected if wsat.expected is not None else wsat.worst
        return Outlook(rounds.worst + wsat.worst, (rounds.expected or rounds.worst) + expected)

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        return wsat_conclude(self.settings(ctx), super().conclude(ctx, run))  # super() adds the scaled warning

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        notes = super().plan_notes(ctx)
        return [*notes[:-1], *wsat_notes(self.settings(ctx)), notes[-1]] if notes else notes


register(FullPtsSuite())
