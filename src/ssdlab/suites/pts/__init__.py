"""SNIA Solid State Storage Performance Test Specification 2.0 (PTS-E and PTS-C) suites:
pts-iops, pts-tp, pts-lat, pts-wsat,
and pts (all of them in one run). Importing this package registers them and their report sections."""

from __future__ import annotations

import importlib

from ssdlab.suites.pts import full, tests, wsat  # noqa: F401  (registers the suites)

try:
    importlib.import_module("ssdlab.report.pts")  # registers the PTS report sections
except ModuleNotFoundError as exc:
    if exc.name != "ssdlab.report.pts":
        raise
