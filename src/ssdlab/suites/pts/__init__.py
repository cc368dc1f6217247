"""SNIA Solid State Storage Performance Test Specification 2.0 (PTS-E and PTS-C) suites:
pts-iops, pts-tp, pts-lat, pts-wsat, pts-hir, pts-xsr,
and pts (any of them in one run, family.py). Importing this package registers them and their report sections;
family.FAMILY_ORDER is the order `pts` runs them in."""

from __future__ import annotations

from ssdlab.report import pts as _report  # noqa: F401  (registers the PTS report sections)
from ssdlab.suites.pts import full, hir, tests, wsat, xsr  # noqa: F401  (registers the suites)
