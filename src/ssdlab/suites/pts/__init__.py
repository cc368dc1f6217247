"""SNIA Solid State Storage Performance Test Specification 2.0 (PTS-E and PTS-C) suites:
pts-iops, pts-tp, pts-lat, pts-wsat,
and pts (any of them in one run, family.py). Importing this package registers them and their report sections;
the test modules are imported in the spec's order, which is the order `pts` runs them in."""

from __future__ import annotations

from ssdlab.report import pts as _report  # noqa: F401  (registers the PTS report sections)
from ssdlab.suites.pts import full, tests, wsat  # noqa: F401  (registers the suites)
