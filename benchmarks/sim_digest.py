"""Simulator results digest: every result of the native core over a broad set of workloads, for proving that a
change to the core (a speed-up) leaves its results bit-for-bit as they were.

Each case lays out a drive (several presets and variants: map cache misses, power cap, FIFO GC, a slow path),
then runs a sequence of points on it (random/sequential read/write/mix, bssplit with unaligned sizes, queue
depths 1/32/256 x numjobs 1/4, poisson rate_iops, zoned, trim, interval and histogram logs, idle-time GC,
sizes per direction, small sequential reads (read-ahead), save()/load())
on generic and calibrated presets (suspend on and off, a suspend limit, read
retry of a worn drive, a power cap, a slow path) and writes every finish(), counters(), hist_drain(), idle(),
valid_histogram() and state image
digest to one line of text. Write the digest of the reference build, change the core, rebuild, compare:

    .venv/bin/python benchmarks/sim_digest.py --out /tmp/before.txt
    .venv/bin/python benchmarks/sim_digest.py --compare /tmp/before.txt
"""

from __future__ import annotations

import argparse
import hashlib
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ssdlab.sim import core
from ssdlab.sim.presets import core_params, resolve

MIB = 1 << 20
HL_RING = 64


def _wl(user: int, seed: int, **kw: Any) -> dict[str, Any]:
    wl: dict[str, Any] = {"rmix": 0, "random": 1, "trim": 0, "range_start": 0, "range_len": user, "align": 4096,
                          "iodepth": 32, "numjobs": 1, "time_based": 0, "ramp_ns": 0, "runtime_ns": 0,
                          "io_bytes": 0, "rate_iops": 0, "poisson": 0, "interval_ns": 0, "hist_ns": 0,
                          "seed": seed, "bssplit": [(4096, 1)]}
    wl.update(kw)
    return wl


def _text(x: Any) -> str:
    """repr with bytes replaced by their digest (histograms are 14.8 KB each); floats keep every bit."""
    if isinstance(x, bytes):
        return "b:" + hashlib.sha256(x).hexdigest()[:16]
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_text(v)}" for k, v in sorted(x.items())) + "}"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in x) + "]"
    if isinstance(x, float):
        return x.hex()
    return repr(x)


def _image(dev: Any, image: bytes) -> str:
    """A state image as text: the digest of each part, with only the live entries of the FIFO victim ring (a
    greedy drive never writes that ring, so the rest of it is whatever memory held)."""
    g = dev.geometry()
    words = struct.unpack_from("<32Q", image)
    n_blk, nslot = int(g["blocks"]), int(g["blocks"]) * int(g["slots_per_block"])
    sizes = {"header": 256, "l2p": 4 * int(g["user_slots"]), "p2l": 4 * nslot, "valid": 4 * n_blk, "bstate": n_blk,
             "freeq": 4 * n_blk, "fifoq": 4 * n_blk}
    parts: dict[str, Any] = {}
    pos = 0
    for name, size in sizes.items():
        parts[name] = image[pos:pos + size]
        pos += size
    ring = struct.unpack(f"<{n_blk}I", parts["fifoq"])
    head, cnt = words[7], words[8]
    parts["fifoq"] = [ring[(head + k) % n_blk] for k in range(cnt)]
    parts["tail"] = image[pos:]
    return _text(parts)


def _point(dev: Any, wl: dict[str, Any], step: int) -> str:
    """Run one point as the executor does (advance in steps, drain the histogram log); its results as text."""
    dev.begin(wl)
    rows: list[Any] = []
    progress: list[Any] = []
    until = 0
    hist_ns = int(wl["hist_ns"])
    while True:
        until += step
        finished = dev.advance(until)
        if hist_ns:
            rows += dev.hist_drain(max(0, (until - int(wl["ramp_ns"])) // hist_ns))
        progress.append(dev.progress())
        if finished:
            break
    result = dev.finish()
    if hist_ns:
        span = int(result["t_end_ns"]) - int(result["t_meas_ns"])
        rows += dev.hist_drain(-(-span // hist_ns))
    return _text({"finish": result, "hist": rows, "progress": progress[-3:], "steps": len(progress),
                  "counters": dev.counters()})


def _points(user: int) -> Iterator[tuple[str, dict[str, Any], int]]:
    """(name, workload, advance step ns) of the sequence run on every drive."""
    ms = 1_000_000
    yield "randwrite-steady", _wl(user, 2, io_bytes=2 * user), 100 * ms
    yield "randread-qd1", _wl(user, 3, rmix=100, iodepth=1, time_based=1, runtime_ns=20 * ms), 5 * ms
    yield "mix70-qd32x4-logs", _wl(user, 4, rmix=70, numjobs=4, time_based=1, ramp_ns=5 * ms, runtime_ns=40 * ms,
                                   interval_ns=5 * ms, hist_ns=2 * ms), 3 * ms
    yield "seqwrite-qd256", _wl(user, 5, random=0, iodepth=256, io_bytes=user // 4, bssplit=[(131072, 1)],
                                align=131072), 100 * ms
    yield "randread-1m-qd32x4", _wl(user, 15, rmix=100, numjobs=4, time_based=1, runtime_ns=30 * ms,
                                   bssplit=[(1 << 20, 1)], align=1 << 20), 10 * ms  # books the links far ahead
    yield "seqread-qd32x4", _wl(user, 6, random=0, rmix=100, numjobs=4, time_based=1, runtime_ns=30 * ms,
                                bssplit=[(131072, 1)], align=131072, keep_pos=1), 7 * ms
    yield "seqmix-keep", _wl(user, 7, random=0, rmix=50, numjobs=4, time_based=1, runtime_ns=20 * ms,
                             keep_pos=1), 7 * ms
    yield "seqread-4k-qd4x2", _wl(user, 17, random=0, rmix=100, iodepth=4, numjobs=2, time_based=1,
                                  runtime_ns=20 * ms), 5 * ms  # read-ahead streams and page registers
    yield "bssplit-unaligned", _wl(user, 8, rmix=30, align=512, time_based=1, runtime_ns=40 * ms,
                                   bssplit=[(512, 4), (4096, 60), (8192, 20), (12800, 6), (65536, 10)]), 10 * ms
    yield "rate-poisson", _wl(user, 9, rmix=50, numjobs=4, rate_iops=5000, poisson=1, time_based=1,
                              runtime_ns=50 * ms, interval_ns=10 * ms), 10 * ms
    yield "rate-fixed-qd1", _wl(user, 10, iodepth=1, rate_iops=20000, time_based=1, runtime_ns=30 * ms), 10 * ms
    q = user // 8 // 4096 * 4096
    zones = [[(60, 0, q), (40, q, user - q)], [(90, 0, q), (10, q, user - q)], []]
    yield "zoned-mix", _wl(user, 11, rmix=50, zones=zones, time_based=1, runtime_ns=40 * ms,
                           bssplit=[(4096, 70), (8192, 30)]), 10 * ms
    yield "trim-random", _wl(user, 12, trim=1, iodepth=4, io_bytes=user // 16, bssplit=[(65536, 1)],
                             align=65536), 100 * ms
    yield "write-after-trim-qd256", _wl(user, 13, iodepth=256, io_bytes=user // 2), 100 * ms
    yield "randwrite-qd1x4-ramp", _wl(user, 14, iodepth=1, numjobs=4, time_based=1, ramp_ns=10 * ms,
                                      runtime_ns=40 * ms, hist_ns=5 * ms), 4 * ms
    yield "mix-own-write-sizes", _wl(user, 16, rmix=90, iodepth=16, numjobs=4, time_based=1, runtime_ns=30 * ms,
                                     align=512, bssplit=[(1536, 98), (131072, 2)], bssplit_w=[(131072, 1)],
                                     rate_iops=20000, poisson=1), 10 * ms  # ACT-like: paced, sizes per direction


CASES: tuple[tuple[str, dict[str, str]], ...] = (
    ("tlc-4k", {"capacity": str(256 * MIB)}),
    ("tlc-4k", {}),  # the benchmark's drive, full size
    ("qlc-64k", {"capacity": str(512 * MIB)}),
    ("slc-4k", {"capacity": str(128 * MIB)}),
    ("tlc-4k", {"capacity": str(256 * MIB), "map_cache": "0.05"}),  # the map does not fit: misses, dirty evictions
    ("tlc-4k", {"capacity": str(128 * MIB), "power": "9", "window_s": "0.02"}),  # power cap
    ("tlc-4k", {"capacity": str(128 * MIB), "gc": "fifo", "slowpath_us": "20"}),
    ("qlc-4k", {"capacity": str(256 * MIB), "op": "28", "ctrl_kiops": "0"}),
    # the calibrated presets' mechanisms: 96 dies and two read planes, a power cap that binds on reads; no suspend,
    # an MLC's page types, a write ceiling and a slow path; a suspend limit; retries of a worn, aged drive
    ("p5430", {"capacity": str(384 * MIB), "power": "10"}),
    ("s3500", {"capacity": str(128 * MIB)}),
    ("pe321", {"capacity": str(256 * MIB)}),
    ("tlc-4k", {"capacity": str(256 * MIB), "wear": "1", "age": "90", "susp_max": "1", "read_planes": "1"}),
    ("p5316", {"capacity": str(512 * MIB)}),  # a 64 KiB IU under its 25 W cap
)


def run_case(preset: str, overrides: dict[str, str]) -> Iterator[str]:
    """Lines of text: everything the core returned for this drive."""
    values = resolve(preset, overrides)
    dev = core().Device(core_params(values))
    user = int(values["capacity"])
    dev.fill(0, user // int(values["iu"]))
    yield _text({"geometry": dev.geometry(), "counters": dev.counters()})
    image = b""
    for name, wl, step in _points(user):
        yield f"{name}: {_point(dev, wl, step)}"
        if name == "seqwrite-qd256":
            yield "idle: " + _text(dev.idle(300_000_000))
            yield "valid: " + _text(dev.valid_histogram())
        if name == "zoned-mix":
            image = dev.save()
            yield "save: " + _image(dev, image)
    yield "valid-end: " + _text(dev.valid_histogram())
    yield "save-end: " + _image(dev, dev.save())
    # a drive restored from the mid-sequence image runs the same next point as the live one did
    again = core().Device(core_params(values))
    again.load(image)
    yield "load: " + _text(again.counters())
    name, wl, step = next((n, w, s) for n, w, s in _points(user) if n == "trim-random")
    yield f"loaded-{name}: {_point(again, wl, step)}"
    yield "loaded-save: " + _image(again, again.save())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", help="write the digest here")
    ap.add_argument("--compare", help="compare with a digest written earlier; exit 1 on any difference")
    args = ap.parse_args()
    lines = []
    for preset, overrides in CASES:
        label = preset + "".join(f"?{k}={v}" for k, v in overrides.items())
        lines += [f"[{label}] {line}" for line in run_case(preset, overrides)]
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    print(f"{len(lines)} result lines, digest {digest[:16]}")
    if args.compare:
        ref = Path(args.compare).read_text(encoding="utf-8").splitlines()
        diff = [(i, a, b) for i, (a, b) in enumerate(zip(ref, lines, strict=False)) if a != b]
        if len(ref) != len(lines):
            print(f"DIFFERENT: {len(lines)} lines vs {len(ref)} in {args.compare}")
            return 1
        for i, a, b in diff[:5]:
            print(f"line {i + 1} differs:\n  ref: {a[:300]}\n  now: {b[:300]}")
        if diff:
            print(f"DIFFERENT: {len(diff)} of {len(lines)} lines")
            return 1
        print(f"identical to {args.compare}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
