"""`pts`: the SNIA PTS 2.0 family in one run and one report. `--pts-tests` selects the tests (default IOPS,
Throughput 128 KiB and 1024 KiB, Latency and WSAT); each test keeps its own purge (and preconditioning where
the spec asks for it). Imported last, so every test of the family is registered before it."""

from __future__ import annotations

from ssdlab.suites.pts.family import register_suite

register_suite("pts", "SNIA PTS 2.0 family in one run and report: IOPS, Throughput 128K/1M, Latency, WSAT "
               "(--pts-tests adds HIR, XSR, ... or picks any of them)")
