"""`ssdlab hist-log FILE...`: per-interval latency percentiles of fio histogram logs, as CSV on stdout.

Also runnable without the rest of the CLI: `python -m ssdlab.commands.histlog FILE... [options]`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from ssdlab.errors import SsdlabError, UsageError

DEFAULT_PERCENTILES = "50,90,99,99.9,99.99"
_DIRECTIONS = {"all": ("all",), "read": ("read",), "write": ("write",), "trim": ("trim",),
               "split": ("read", "write", "trim")}


class _Out(Protocol):
    def out(self, text: str = "") -> None: ...


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", type=Path, metavar="FILE",
                   help="fio histogram logs (X_clat_hist.N.log from write_hist_log); jobs and hosts are merged")
    p.add_argument("--interval", type=float, metavar="S",
                   help="output interval in seconds (default: the logs' own interval, log_hist_msec)")
    p.add_argument("--percentiles", default=DEFAULT_PERCENTILES, metavar="LIST",
                   help=f"comma-separated percentiles (default {DEFAULT_PERCENTILES})")
    p.add_argument("--mode", choices=["fio", "weighted"], default="fio",
                   help="fio: fio's own percentile rule on the summed bins (default); weighted: the semantics "
                        "of fio's tools/hist/fiologparser_hist.py (interval weighting, interpolation)")
    p.add_argument("--directions", choices=sorted(_DIRECTIONS), default="all",
                   help="all directions merged (default), one direction, or split into read/write/trim rows")
    p.add_argument("--log-ms", type=float, metavar="MS",
                   help="the logs' log_hist_msec (default: detected from the timestamps)")


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """numpy loaded (if it is loaded here) with one OpenBLAS thread, the environment left as it was.

    hist-log does no linear algebra, yet loading numpy starts OpenBLAS's pool of worker threads, whose spinning
    cost about 50 ms of CPU per run on a 2-core machine (a sixth of the whole command on 27 MB of logs).
    OpenBLAS reads the variable once, when numpy loads it; a value the user set is kept.
    """
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        yield
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        os.environ.pop("OPENBLAS_NUM_THREADS", None)


def run(args: argparse.Namespace, out: _Out) -> int:
    """Print the CSV for parsed arguments; returns the exit code."""
    with _one_blas_thread():
        from ssdlab.fio import histlog

    for f in args.files:
        if not f.is_file():
            raise UsageError(f"{f}: no such file (give fio histogram logs, e.g. h_clat_hist.1.log)")
    ps = histlog.parse_percentiles(args.percentiles)
    if args.interval is not None and args.interval <= 0:
        raise UsageError(f"--interval {args.interval:g} must be a positive number of seconds")
    log_ms = args.log_ms or histlog.detect_log_ms(args.files)
    interval_ms = args.interval * 1000.0 if args.interval is not None else float(log_ms)
    for line in histlog.summarize(args.files, interval_ms, ps, mode=args.mode,
                                  directions=_DIRECTIONS[args.directions], log_ms=log_ms):
        out.out(line)
    return 0


def add_commands(subparsers: Any) -> dict[str, Any]:
    """Register `hist-log` on the ssdlab CLI."""
    p = subparsers.add_parser("hist-log", help="per-interval latency percentiles (CSV) from fio histogram logs")
    _configure(p)
    return {"hist-log": run}


class _StreamOut:
    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def out(self, text: str = "") -> None:
        self.stream.write(text + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point (light imports: numpy and the histogram module only)."""
    parser = argparse.ArgumentParser(prog="python -m ssdlab.commands.histlog", description=__doc__)
    _configure(parser)
    args = parser.parse_args(argv)
    try:
        return run(args, _StreamOut(sys.stdout))
    except SsdlabError as exc:
        sys.stderr.write(f"ssdlab hist-log: error: {exc}\n")
        return int(exc.exit_code)
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
