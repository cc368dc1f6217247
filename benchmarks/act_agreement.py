"""`ssdlab act` against Aerospike's own act_storage on the same device: shares of slow small reads.

Both sides run the same load for the same time on the same block device, alternately (the side that goes
first alternates too, so drift on a shared host hits both alike), each with its own defaults unless told
otherwise. Per run the script takes the share of small reads ("reads") at or above 1, 2, 4, 8, 16, 32 and
64 ms over the whole run (one slice, as act_latency.py -t DURATION); at the end it prints, per threshold,
each side's median and spread (min..max) and the ratio of the medians.

    sudo .venv/bin/python benchmarks/act_agreement.py --act-storage /path/to/act_storage \\
        [--act-prep /path/to/act_prep] (--device /dev/loopN | --loop-size 2GiB [--loop-dir DIR]) \\
        [--load 1x] [--duration 60] [--repeats 3] [--also-service-threads 4]

--loop-size makes a file-backed loop device with direct I/O (losetup --direct-io=on) and removes it at the
end; --device uses a device you made (everything on it is destroyed). The device is prepared once, with
act_prep when given, else with ssdlab's own act_prep fills. --also-service-threads N adds a third arm:
ssdlab with N service threads (ssdlab before it matched ACT sized 1x at 4 QD1 threads). The script builds
and downloads nothing: ACT's binaries come from the paths given.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ssdlab.suites.act import parse_load
from ssdlab.suites.act_config import load_rates

THRESHOLDS = (1, 2, 4, 8, 16, 32, 64)
_VENV_SSDLAB = Path(sys.executable).parent / "ssdlab"  # the ssdlab next to this interpreter (the venv's)
SSDLAB = [str(_VENV_SSDLAB)] if _VENV_SSDLAB.exists() else ["ssdlab"]


def act_shares(output: str, histogram: str = "reads") -> tuple[list[float], int]:
    """(% of `histogram`'s ops at or above 2^i ms, ops) from act_storage's last (cumulative) report.

    ACT's bucket b holds [2^(b-1), 2^b) ms (bucket 0: under 1 ms), so ">= 2^i ms" is buckets above i."""
    blocks = output.split("after ")
    last = blocks[-1] if len(blocks) > 1 else ""
    m = re.search(rf"^{re.escape(histogram)} \((\d+) total\)\n((?: \(\d\d: \d+\).*\n)*)", last, re.MULTILINE)
    if not m:
        raise SystemExit(f"no '{histogram}' histogram in act_storage's output")
    total = int(m.group(1))
    buckets = {int(b): int(c) for b, c in re.findall(r"\((\d\d): (\d+)\)", m.group(2))}
    shares = [100.0 * sum(c for b, c in buckets.items() if b > i) / total if total else 0.0
              for i in range(len(THRESHOLDS))]
    return shares, total


def run_act(act_storage: str, device: str, reads: int, writes: int, duration: int, workdir: Path,
            threads: int | None) -> tuple[list[float], int]:
    conf = workdir / "act.conf"
    lines = [f"device-names: {device}", f"test-duration-sec: {duration}", f"read-reqs-per-sec: {reads}",
             f"write-reqs-per-sec: {writes}"]
    if threads:
        lines.append(f"service-threads: {threads}")
    conf.write_text("\n".join(lines) + "\n")
    out = subprocess.run([act_storage, str(conf)], capture_output=True, text=True, check=False)
    if out.returncode != 0 or "after " not in out.stdout:
        raise SystemExit(f"act_storage failed ({out.returncode}): {out.stdout[-500:]} {out.stderr[-500:]}")
    if "can't keep up" in out.stdout:
        print("  (act_storage stopped: a thread lagged more than max-lag-sec)")
    return act_shares(out.stdout)


def run_ssdlab(device: str, load: str, duration: int, workdir: Path, extra: list[str]) -> tuple[list[float], int]:
    out_dir = workdir / "ssdlab-run"
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [*SSDLAB, "run", "act", "--target", device, "--load", load, "--duration", str(duration), "--slice",
           str(duration), "--skip-prep", "--yes", "--out", str(out_dir), "--no-report", "--quiet", *extra]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode not in (0, 1):
        raise SystemExit(f"ssdlab failed ({res.returncode}): {res.stderr[-800:]}")
    from ssdlab.results.store import load_run
    from ssdlab.suites.act import S_READS, slice_streams

    run = load_run(out_dir)
    slices = [r for r in run.ok_points() if r.point.phase == "measure"]
    st = slice_streams(slices[0])[S_READS]
    ex = st.exceedance()
    return [ex[t] for t in THRESHOLDS], st.ops


def make_loop(size: str, where: Path) -> tuple[str, Path]:
    backing = where / "act-agreement.img"
    subprocess.run(["truncate", "-s", size, str(backing)], check=True)
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", str(backing)], capture_output=True,
                         text=True, check=True).stdout.strip()
    return dev, backing


def prepare(device: str, act_prep: str | None, workdir: Path) -> None:
    if act_prep:
        subprocess.run([act_prep, device], capture_output=True, check=True)
        return
    cmd = [*SSDLAB, "run", "act", "--target", device, "--duration", "1", "--slice", "1", "--yes", "--out",
           str(workdir / "prep-run"), "--no-report", "--quiet"]
    subprocess.run(cmd, capture_output=True, check=False)


def _fmt(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} ({min(values):.2f}..{max(values):.2f})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--act-storage", required=True, help="path to an act_storage binary")
    ap.add_argument("--act-prep", help="path to act_prep (default: ssdlab's own prep fills)")
    ap.add_argument("--device", help="a block device to destroy (e.g. a loop device you created)")
    ap.add_argument("--loop-size", help="make a file-backed loop device of this size (e.g. 2G) instead")
    ap.add_argument("--loop-dir", default=".", help="directory for the loop device's backing file")
    ap.add_argument("--load", default="1x", help="ACT load (default 1x)")
    ap.add_argument("--duration", type=int, default=60, help="seconds per run (default 60)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per side (default 3)")
    ap.add_argument("--service-threads", type=int, help="both sides (default: each side's own default)")
    ap.add_argument("--also-service-threads", type=int, help="a third arm: ssdlab with this many threads")
    ap.add_argument("--json", help="also write every run's figures to this file")
    args = ap.parse_args(argv)
    if bool(args.device) == bool(args.loop_size):
        ap.error("give exactly one of --device and --loop-size")
    reads, writes = load_rates(parse_load(args.load))  # ACT's rates of the load on one device
    backing: Path | None = None
    device = args.device
    with tempfile.TemporaryDirectory(prefix="act-agreement-") as tmp:
        workdir = Path(tmp)
        try:
            if args.loop_size:
                device, backing = make_loop(args.loop_size, Path(args.loop_dir).resolve())
                print(f"loop device {device} ({args.loop_size}, direct I/O) on {backing}")
            prepare(device, args.act_prep, workdir)
            threads = ["--service-threads", str(args.service_threads)] if args.service_threads else []
            arms: dict[str, list[list[float]]] = {"act_storage": [], "ssdlab": []}
            if args.also_service_threads:
                arms[f"ssdlab T={args.also_service_threads}"] = []
            for i in range(args.repeats):
                order = list(arms) if i % 2 == 0 else list(reversed(arms))
                for arm in order:
                    if arm == "act_storage":
                        shares, ops = run_act(args.act_storage, device, reads, writes, args.duration, workdir,
                                              args.service_threads)
                    elif arm == "ssdlab":
                        shares, ops = run_ssdlab(device, args.load, args.duration, workdir, threads)
                    else:
                        shares, ops = run_ssdlab(device, args.load, args.duration, workdir,
                                                 ["--service-threads", str(args.also_service_threads)])
                    arms[arm].append(shares)
                    print(f"run {i + 1} {arm:>14}: {ops:8d} reads; % >= 1..64 ms: "
                          + " ".join(f"{v:6.2f}" for v in shares), flush=True)
        finally:
            if backing is not None and device:
                subprocess.run(["losetup", "-d", device], check=False)
                backing.unlink(missing_ok=True)
    print(f"\n{args.load}, {args.duration} s per run, {args.repeats} runs per side: median (min..max) % of reads")
    print(f"{'>= ms':>6}  " + "  ".join(f"{arm:>22}" for arm in arms) + "   ssdlab/act")
    for k, t in enumerate(THRESHOLDS):
        cols = [[run[k] for run in runs] for runs in arms.values()]
        act_med = statistics.median(cols[0])
        ratio = statistics.median(cols[1]) / act_med if act_med else float("nan")
        print(f"{t:>6}  " + "  ".join(f"{_fmt(c):>22}" for c in cols) + f"   {ratio:9.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"load": args.load, "duration_s": args.duration,
                                               "thresholds_ms": THRESHOLDS, "runs": arms}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
