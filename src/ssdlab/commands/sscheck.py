"""`ssdlab ss-check V1 V2 V3 V4 V5 [...]`: the SNIA PTS steady-state test on any series of round values.

The last 5 values are the measurement window (rounds x-4 ... x, numbered from 1 over the whole series).
Exit 0 when steady, 1 when not, 2 on bad input (one line).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ssdlab.analysis import steady
from ssdlab.errors import UsageError


def add_commands(subparsers: Any) -> dict[str, Any]:
    """Register `ss-check` on the CLI."""
    p = subparsers.add_parser(
        "ss-check", help="check a series of per-round values against the SNIA PTS steady-state rule",
        description="SNIA PTS 2.0 steady state over the last 5 values: (a) max-min <= 20%% of the mean and "
                    "(b) the least-squares line's excursion (|slope| x 4) <= 10%% of the mean. "
                    "Exit 0 steady, 1 not steady, 2 bad input.")
    p.add_argument("values", nargs="+", metavar="V", help="per-round values, oldest first (at least 5)")
    p.add_argument("--first-round", type=int, default=1, metavar="N",
                   help="round number of the first value (default 1); the fit is m·R + b over these numbers")
    p.add_argument("--json", action="store_true", help="print the determination as JSON")
    return {"ss-check": cmd_ss_check}


def _pct(v: float) -> str:
    return f"{v:.2f}%"


def cmd_ss_check(args: argparse.Namespace, env: Any) -> int:
    """Print the verdict, range and fit excursion as % of the mean and the fit formula; 0 steady, 1 not."""
    values = [steady.exact(v) for v in args.values]
    if any(v <= 0 for v in values):
        raise UsageError("steady-state values must be positive (IOPS, MB/s or latency per round)")
    if args.first_round < 0:
        raise UsageError(f"--first-round {args.first_round} must be >= 0")
    det = steady.check_last(values)
    if args.first_round != 1:
        shift = args.first_round - 1
        det = steady.determine(det.values, [r + shift for r in det.rounds])
    if args.json:
        env.out(json.dumps(det.as_dict(), indent=1))
        return 0 if det.steady else 1
    first, last = det.rounds[0], det.rounds[-1]
    env.out(f"{'STEADY' if det.steady else 'NOT STEADY'} over rounds {first}-{last} "
            f"(SNIA PTS 2.0: range <= 20% and fit excursion <= 10% of the average)")
    env.out(f"  average         {float(det.average):.6g}")
    env.out(f"  range           {float(det.range):.6g} = {_pct(det.range_pct)} of average "
            f"(allowed {float(det.allowed_range):.6g} = 20%) {'ok' if det.range_ok else 'FAIL'}")
    env.out(f"  fit excursion   {float(det.fit_excursion):.6g} = {_pct(det.excursion_pct)} of average "
            f"(allowed {float(det.allowed_excursion):.6g} = 10%) {'ok' if det.excursion_ok else 'FAIL'}")
    env.out(f"  fit             y = {det.formula()}  (R = round number)")
    return 0 if det.steady else 1
