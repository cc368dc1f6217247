"""SNIA Solid State Storage Performance Test Specification 2.0 (PTS-E and PTS-C) suites:
pts-iops, pts-tp, pts-lat, pts-wsat, pts-cbw, pts-dirth,
and pts (all of them in one run). Importing this package registers them (their report sections live in
ssdlab.report.pts and ssdlab.report.pts_demand)."""

from __future__ import annotations

from ssdlab.suites.pts import demand, full, tests, wsat  # noqa: F401  (registers the suites)
