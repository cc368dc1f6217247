"""SNIA Solid State Storage Performance Test Specification 2.0 (PTS-E and PTS-C) suites:
pts-iops, pts-tp, pts-lat, pts-wsat,
and pts (all of them in one run). Importing this package registers them (their report sections live in
ssdlab.report.pts)."""

from __future__ import annotations

from ssdlab.suites.pts import full, tests, wsat  # noqa: F401  (registers the suites)
