"""SNIA Solid State Storage Performance Test Specification 2.0 (PTS-E and PTS-C) suites:
pts-iops, pts-tp, pts-lat, pts-wsat, pts-cbw, pts-dirth,
and pts (all of them in one run). Importing this package registers them and their report sections."""

from __future__ import annotations

from ssdlab.report import pts as _report  # noqa: F401  (registers the PTS report sections)
from ssdlab.report import pts_demand as _demand_report  # noqa: F401  (CBW and DIRTH sections)
from ssdlab.suites.pts import demand, full, tests, wsat  # noqa: F401  (registers the suites)
