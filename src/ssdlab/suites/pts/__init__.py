"""SNIA Solid State Storage Performance Test Specification 2.0 (PTS-E and PTS-C) suites:
pts-iops, pts-tp, pts-lat, pts-wsat, pts-hir, pts-xsr, pts-cbw, pts-dirth,
and pts (any of them in one run, family.py). Importing this package registers them (their report sections live
in ssdlab.report.pts and the modules it loads); family.FAMILY_ORDER is the order `pts` runs them in."""

from __future__ import annotations

from ssdlab.suites.pts import demand, full, hir, tests, wsat, xsr  # noqa: F401  (registers the suites)
