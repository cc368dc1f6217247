"""The reviewed drives' published figures and how the model reproduces each: `ssdlab sim validate`'s table per
preset (docs/sim.md; the figures and their conditions: the project's reviewed-drives reference and the seed
reviews).

A figure is checked one of three ways: `ratio` (the model's value over the published one within 0.75..1.33),
`below` or `above` (the review states a bound, e.g. "p99 under 1 ms until QD128"). A figure the model cannot
measure (a drive's endurance rating) is listed with the reason and is not a check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ssdlab.sim.lab import Drive, Lab, Point, cov_pct, low_share

RATIO_LO, RATIO_HI = 0.75, 1.33
KiB, MiB = 1024, 1024 * 1024
Measure = Callable[[Lab], float]


@dataclass(frozen=True)
class Figure:
    """A published figure: what, its value and unit, where it was published, how the model measures it."""

    name: str
    value: float
    unit: str
    source: str
    measure: Measure | None
    check: str = "ratio"  # "ratio" | "below" | "above" | "info" (shown, not checked) | "none" (not measurable)
    note: str = ""


@dataclass(frozen=True)
class Row:
    """A figure against the model: the simulator's value, the ratio, and whether it passes (why not)."""

    figure: Figure
    measured: float | None
    ratio: float | None
    ok: bool
    why: str = ""


def judge(f: Figure, lab: Lab) -> Row:
    """Measure one figure and check it."""
    if f.measure is None or f.check == "none":
        return Row(f, None, None, True, f.note or "not measured by the model")
    got = f.measure(lab)
    ratio = got / f.value if f.value else None
    if f.check == "info":
        return Row(f, got, ratio, True, f.note)
    if f.check == "below":
        ok = got < f.value
        return Row(f, got, ratio, ok, "" if ok else f"the model's {got:,.3g} is not below {f.value:,.3g}")
    if f.check == "above":
        ok = got > f.value
        return Row(f, got, ratio, ok, "" if ok else f"the model's {got:,.3g} is not above {f.value:,.3g}")
    ok = ratio is not None and RATIO_LO <= ratio <= RATIO_HI
    why = "" if ok else (f"the model's value is {'lower' if (ratio or 0) < 1 else 'higher'}: {got:,.4g} against "
                         f"{f.value:,.4g} ({ratio:.2f}x, outside {RATIO_LO}..{RATIO_HI})"
                         if ratio is not None else "no published value to compare with")
    return Row(f, got, ratio, ok, why)


# ------------------------------------------------------------------ experiments (memoized per preset and state)

def drive(lab: Lab, preset: str, state: str, **overrides: str) -> Drive:
    """A preset's drive new (`fob`), laid out (`laid`) or at random-write steady state (`steady`: 4K, `steady64k`)."""
    key = ("drive", preset, state, tuple(sorted(overrides.items())))

    def make() -> Drive:
        d = Drive(preset, dict(overrides))
        if state == "fob":
            return d
        if state == "laid":
            return d.fill()
        return d.steady(bs=64 * KiB if state == "steady64k" else 4096)

    got: Drive = lab.get(key, make)
    return got


def point(lab: Lab, preset: str, state: str, name: str, run: Callable[[Drive], Point], **overrides: str) -> Point:
    """A workload `name` run once on the preset's drive in `state` (points of one state run in the order asked)."""
    got: Point = lab.get(("point", preset, state, name, tuple(sorted(overrides.items()))),
                         lambda: run(drive(lab, preset, state, **overrides)))
    return got


def qd1_read(lab: Lab, preset: str) -> Point:
    """4K random reads at T1Q1 over the whole span of a drive at steady state (after a pause)."""
    def run(d: Drive) -> Point:
        d.idle(2.0)
        return d.run(rmix=100, qd=1, runtime_s=8.0, ramp_s=0.2)
    return point(lab, preset, "steady", "qd1-read", run)


def closed(lab: Lab, preset: str, state: str, name: str, *, rmix: int, bs: int = 4096, qd: int = 32, jobs: int = 1,
           random: bool = True, runtime_s: float = 1.0, ramp_s: float = 0.3, interval_ms: int = 0,
           span: float = 1.0, overrides: dict[str, str] | None = None) -> Point:
    """A closed-loop point after the previous ones of its state (a ramp lets the drive settle)."""
    def run(d: Drive) -> Point:
        d.idle(0.5)  # a pause between tests: the NAND work the previous one left completes
        return d.run(rmix=rmix, bs=bs, qd=qd, jobs=jobs, random=random, runtime_s=runtime_s, ramp_s=ramp_s,
                     interval_ms=interval_ms, span=span)
    return point(lab, preset, state, name, run, **(overrides or {}))


def iops(p: Point) -> float:
    return p.iops


def gbps(p: Point) -> float:
    return p.bw() / 1e9


# ------------------------------------------------------------------ the tables

def p5430_figures(op: bool) -> list[Figure]:
    """Solidigm D5-P5430 15.36 TB, seed 000 (and its 12.75 TB re-provisioning)."""
    pre = "p5430-op" if op else "p5430"
    src = "seed 000"

    def read(power: str = "") -> Measure:
        extra = {"power": power} if power else {}
        return lambda lab: closed(lab, pre, "laid", f"read-q32t8-{power}", rmix=100, qd=32, jobs=8,
                                  runtime_s=2.0, ramp_s=3.0 if power else 0.3, overrides=extra).iops

    def write(power: str = "") -> Measure:
        extra = {"power": power} if power else {}
        return lambda lab: closed(lab, pre, "steady", f"write-q32t8-{power}", rmix=0, qd=32, jobs=8,
                                  runtime_s=2.0, ramp_s=1.0, overrides=extra).iops

    def mix(power: str = "") -> Measure:
        extra = {"power": power} if power else {}
        return lambda lab: closed(lab, pre, "steady", f"mix-q32t8-{power}", rmix=70, qd=32, jobs=8,
                                  runtime_s=2.0, ramp_s=1.0, overrides=extra).iops

    def stability(lab: Lab) -> Point:
        return closed(lab, pre, "steady", "stability", rmix=70, qd=32, jobs=8, runtime_s=30.0, ramp_s=1.0,
                      interval_ms=1000)

    if op:
        return [
            Figure("VDBench 4K random read Q32T8, max (OP: unchanged)", 963e3, "IOPS", f"{src} l.61", read()),
            Figure("VDBench 4K random write Q32T8, max (12.75 TB)", 288e3, "IOPS", f"{src} l.62", write()),
            Figure("VDBench 4K 70/30 Q32T8, max (12.75 TB)", 395e3, "IOPS", f"{src} l.63", mix()),
            Figure("ezFIO 4K 70/30 steady state, mean (12.75 TB)", 395347, "IOPS", f"{src} l.47",
                   lambda lab: stability(lab).iops, note="T8Q32, 30 s"),
            Figure("ezFIO 4K 70/30 steady state, CoV of 1-s IOPS (12.75 TB)", 1.51, "%", f"{src} l.47",
                   lambda lab: cov_pct(stability(lab).per_second())),
        ]
    return [
        Figure("4K random read T1Q1, p99", 137, "µs", f"{src} l.37", lambda lab: qd1_read(lab, pre).pct_us(99, (0,))),
        Figure("4K random read T1Q1, p99.99", 178, "µs", f"{src} l.38",
               lambda lab: qd1_read(lab, pre).pct_us(99.99, (0,))),
        Figure("4K random read T4Q64, mean", 1.05e6, "IOPS", f"{src} l.39",
               lambda lab: closed(lab, pre, "steady", "read-t4q64", rmix=100, qd=64, jobs=4).iops),
        Figure("4K random read T4Q64, p99", 533, "µs", f"{src} l.40",
               lambda lab: closed(lab, pre, "steady", "read-t4q64", rmix=100, qd=64, jobs=4).pct_us(99, (0,))),
        Figure("4K random read T4Q64, p99.99", 906, "µs", f"{src} l.40",
               lambda lab: closed(lab, pre, "steady", "read-t4q64", rmix=100, qd=64, jobs=4).pct_us(99.99, (0,))),
        Figure("4K random write steady state, IOPS 12.75 TB / 15.36 TB", 1.98, "x", f"{src} l.46",
               lambda lab: closed(lab, "p5430-op", "steady", "write-q32t8-", rmix=0, qd=32, jobs=8,
                                  runtime_s=2.0, ramp_s=1.0).iops
               / closed(lab, pre, "steady", "write-q32t8-", rmix=0, qd=32, jobs=8, runtime_s=2.0,
                        ramp_s=1.0).iops),
        Figure("ezFIO 4K 70/30 steady state, mean", 280867, "IOPS", f"{src} l.47",
               lambda lab: stability(lab).iops, note="T8Q32, 30 s"),
        Figure("ezFIO 4K 70/30 steady state, CoV of 1-s IOPS", 1.05, "%", f"{src} l.47",
               lambda lab: cov_pct(stability(lab).per_second())),
        Figure("VDBench 4K random read Q32T8, max", 963e3, "IOPS", f"{src} l.61", read()),
        Figure("VDBench 4K random read Q32T8, 15 W mode", 694e3, "IOPS", f"{src} l.61", read("15")),
        Figure("VDBench 4K random read Q32T8, 10 W mode", 298e3, "IOPS", f"{src} l.61", read("10")),
        Figure("VDBench 4K random write Q32T8, max", 146e3, "IOPS", f"{src} l.62", write()),
        Figure("VDBench 4K random write Q32T8, 15 W mode", 77e3, "IOPS", f"{src} l.62", write("15")),
        Figure("VDBench 4K random write Q32T8, 10 W mode", 34e3, "IOPS", f"{src} l.62", write("10")),
        Figure("VDBench 4K 70/30 Q32T8, max", 285e3, "IOPS", f"{src} l.63", mix()),
        Figure("VDBench 4K 70/30 Q32T8, 15 W mode", 214e3, "IOPS", f"{src} l.63", mix("15")),
        Figure("VDBench 4K 70/30 Q32T8, 10 W mode", 93e3, "IOPS", f"{src} l.63", mix("10")),
    ]


def pe321_figures() -> list[Figure]:
    """YMTC PE321 6.4 TB, seed 003 (fio 3.35)."""
    pre, src = "pe321", "seed 003"

    def sweep(qd: int) -> Callable[[Lab], Point]:
        return lambda lab: closed(lab, pre, "steady", f"mix-qd{qd}", rmix=70, qd=qd, runtime_s=0.5, ramp_s=0.2)

    return [
        Figure("128K sequential read", 7.46, "GB/s", f"{src} l.35",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-read", rmix=100, bs=128 * KiB, qd=32, random=False))),
        Figure("128K sequential write", 7.36, "GB/s", f"{src} l.35",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-write", rmix=0, bs=128 * KiB, qd=32, random=False))),
        Figure("4K random read QD512", 1.77e6, "IOPS", f"{src} l.39",
               lambda lab: closed(lab, pre, "laid", "read-qd512", rmix=100, qd=512, runtime_s=0.5).iops),
        Figure("4K random write (steady state, QD128)", 689e3, "IOPS", f"{src} l.41",
               lambda lab: closed(lab, pre, "steady", "write-qd128", rmix=0, qd=128).iops),
        Figure("4K 70/30 at QD512: reads", 747e3, "IOPS", f"{src} l.45", lambda lab: sweep(512)(lab).dir_iops(0)),
        Figure("4K 70/30 at QD512: writes", 320e3, "IOPS", f"{src} l.45", lambda lab: sweep(512)(lab).dir_iops(1)),
        Figure("4K 70/30 mean read latency at QD64 (over 200 µs only from QD128)", 200, "µs", f"{src} l.45",
               lambda lab: sweep(64)(lab).mean_us(0), check="below"),
        Figure("4K 70/30 mean read latency at QD128", 200, "µs", f"{src} l.45",
               lambda lab: sweep(128)(lab).mean_us(0), check="above"),
        Figure("4K 70/30 p99 at QD64 (under 1 ms until QD128)", 1000, "µs", f"{src} l.49",
               lambda lab: sweep(64)(lab).pct_us(99), check="below"),
        Figure("4K 70/30 p99 at QD512 (at most 2 ms)", 2000, "µs", f"{src} l.49",
               lambda lab: sweep(512)(lab).pct_us(99), check="below"),
        Figure("4K 70/30 p99.99 at QD512", 2600, "µs", f"{src} l.49", lambda lab: sweep(512)(lab).pct_us(99.99)),
        Figure("4K 70/30 p99 at QD128 (over 1 ms from QD128)", 1000, "µs", f"{src} l.49",
               lambda lab: sweep(128)(lab).pct_us(99), check="above"),
        Figure("4K 70/30 p99.99 QD64 / QD32 (rises from QD64)", 1.0, "x", f"{src} l.47",
               lambda lab: sweep(64)(lab).pct_us(99.99) / sweep(32)(lab).pct_us(99.99), check="above"),
        Figure("ACT 300x, 24 h: reads over 1 ms, average (max 3.58 %)", 3.03, "%", f"{src} l.57",
               lambda lab: act(lab, pre).share_over_us(1000), check="info", note=ACT_NOTE),
        Figure("ACT 300x, 24 h: reads over 2 ms", 0.1, "%", f"{src} l.57",
               lambda lab: act(lab, pre).share_over_us(2000), check="info", note=ACT_NOTE),
        Figure("ACT 300x, 24 h: reads over 4 ms (none)", 0.0, "%", f"{src} l.57",
               lambda lab: act(lab, pre).share_over_us(4000), check="info", note=ACT_NOTE),
    ]


ACT_NOTE = ("shown, not checked: ACT's latency includes the wait in its own service-thread queues (reads run "
            "synchronously on a thread pool); the model runs ACT's device load as one open-loop point without them, "
            "and the act suite does not run on sim targets")


def act(lab: Lab, preset: str) -> Point:
    """Aerospike ACT at 300x on one device, as one open-loop point: 600,000 reads/s of 1536 B and 7,059 large-block
    reads and writes/s of 128 KiB (ACT's derived rates at the default defrag), Poisson arrivals, 512 B aligned."""
    small, large = 600_000, 7_059
    reads = small + large
    total = reads + large

    def run(d: Drive) -> Point:
        jobs = 64  # 64 paced jobs of 16 slots each (the rate is per job, as in fio)
        return d.run(rmix=round(100 * reads / total), qd=16, jobs=jobs, runtime_s=3.0, ramp_s=1.0,
                     rate_iops=total // jobs, poisson=True, bssplit=[(1536, small), (128 * KiB, large)],
                     bssplit_w=[(128 * KiB, 1)], align=512)
    return point(lab, preset, "steady", "act-300x", run)


def p5316_figures() -> list[Figure]:
    """Solidigm D5-P5316 30.72 TB (64K IU), seed 001: 24 drives in one server, per-drive figures (the aggregate over
    24). The review wrote 5 % of each drive after a full sequential fill; its 64K random write equals the spec's
    full-span steady state, so writes and mixes run at 64K random-write steady state."""
    pre, src = "p5316", "seed 001"
    return [
        Figure("spec: 128K sequential read", 7.0, "GB/s", f"{src} l.12",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-read-128k", rmix=100, bs=128 * KiB, random=False))),
        Figure("spec: 128K sequential write", 3.6, "GB/s", f"{src} l.12",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-write-128k", rmix=0, bs=128 * KiB, random=False))),
        Figure("spec: 4K random read", 800e3, "IOPS", f"{src} l.12",
               lambda lab: closed(lab, pre, "laid", "read-4k", rmix=100, qd=256).iops),
        Figure("1M sequential read, per drive", 7.3, "GB/s", f"{src} l.22",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-read-1m", rmix=100, bs=MiB, random=False, span=0.05))),
        Figure("1M sequential write, per drive", 2.34, "GB/s", f"{src} l.22",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-write-1m", rmix=0, bs=MiB, random=False, span=0.05))),
        Figure("64K sequential read, per drive", 6.62, "GB/s", f"{src} l.23",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-read-64k", rmix=100, bs=64 * KiB, random=False,
                                       span=0.05))),
        Figure("64K sequential write, per drive", 2.40, "GB/s", f"{src} l.23",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-write-64k", rmix=0, bs=64 * KiB, random=False,
                                       span=0.05))),
        Figure("64K random read, per drive", 176.3 / 24, "GB/s", f"{src} l.24",
               lambda lab: gbps(closed(lab, pre, "laid", "read-64k", rmix=100, bs=64 * KiB, span=0.05))),
        Figure("64K random write, per drive (= spec, full-span steady state)", 0.55, "GB/s", f"{src} l.24",
               lambda lab: gbps(closed(lab, pre, "steady64k", "write-64k", rmix=0, bs=64 * KiB))),
        Figure("64K 70/30, per drive", 44 / 24, "GB/s", f"{src} l.25",
               lambda lab: gbps(closed(lab, pre, "steady64k", "mix70-64k", rmix=70, bs=64 * KiB))),
        Figure("64K 90/10, per drive", 130.7 / 24, "GB/s", f"{src} l.25",
               lambda lab: gbps(closed(lab, pre, "steady64k", "mix90-64k", rmix=90, bs=64 * KiB))),
        Figure("4K random read, per drive", 21.2e6 / 24, "IOPS", f"{src} l.26",
               lambda lab: closed(lab, pre, "laid", "read-4k-5pct", rmix=100, qd=256, span=0.05).iops),
        Figure("4K random write", 0, "IOPS", f"{src} l.26", None, check="none",
               note="not measured by the reviewers (the 64K IU makes it a poor fit)"),
    ]


def s3500_figures() -> list[Figure]:
    """Intel DC S3500 480 GB (SATA, MLC), seed 002 (Iometer 1.1.0, queue depth 32 assumed: SATA NCQ's)."""
    pre, src = "s3500", "seed 002"

    def run(name: str, state: str, **kw: object) -> Measure:
        return lambda lab: closed(lab, pre, state, name, **kw).iops  # type: ignore[arg-type]

    def consistency(lab: Lab, rmix: int) -> float:
        p = closed(lab, pre, "steady", f"consistency-{rmix}", rmix=rmix, qd=32, runtime_s=60.0, ramp_s=2.0,
                   interval_ms=1000)
        return low_share(p.per_second())

    return [
        Figure("4K sequential read", 92.8e3, "IOPS", f"{src} l.155",
               run("seq-read-4k", "laid", rmix=100, random=False)),
        Figure("4K random read", 84.3e3, "IOPS", f"{src} l.155", run("read-4k", "laid", rmix=100)),
        Figure("4K sequential write (new drive)", 62.8e3, "IOPS", f"{src} l.157",
               run("seq-write-4k", "fob", rmix=0, random=False)),
        Figure("4K random write, 4K-aligned (new drive)", 63.7e3, "IOPS", f"{src} l.166",
               run("write-4k", "fob", rmix=0)),
        Figure("4K random write, not 4K-aligned (new drive)", 14.7e3, "IOPS", f"{src} l.166",
               lambda lab: unaligned(lab, pre, 32).iops),
        Figure("4K random write latency at QD1, unaligned / aligned", 5.9, "x", f"{src} l.164",
               lambda lab: unaligned(lab, pre, 1).mean_us(1)
               / closed(lab, pre, "fob", "write-4k-qd1", rmix=0, qd=1).mean_us(1)),
        Figure("1M sequential read", 546 * MiB / 1e9, "GB/s", f"{src} l.159",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-read-1m", rmix=100, bs=MiB, random=False))),
        Figure("1M sequential write", 410 * MiB / 1e9, "GB/s", f"{src} l.159",
               lambda lab: gbps(closed(lab, pre, "fob", "seq-write-1m", rmix=0, bs=MiB, random=False))),
        Figure("Iometer file server", 17.4e3, "IOPS", f"{src} l.173", lambda lab: iometer(lab, pre, "fileserver"),
               check="info", note=IOMETER_NOTE),
        Figure("Iometer web server", 25.6e3, "IOPS", f"{src} l.175", lambda lab: iometer(lab, pre, "webserver"),
               check="info", note=IOMETER_NOTE),
        Figure("Iometer database", 23.6e3, "IOPS", f"{src} l.177", lambda lab: iometer(lab, pre, "database"),
               check="info", note=IOMETER_NOTE),
        Figure("Iometer workstation", 29.4e3, "IOPS", f"{src} l.179", lambda lab: iometer(lab, pre, "workstation"),
               check="info", note=IOMETER_NOTE),
        Figure("consistency: 0.1st percentile of 1-s read IOPS / mean (spec: >= 90 %)", 0.90, "x", f"{src} l.70",
               lambda lab: consistency(lab, 100), check="above"),
        Figure("consistency: 0.1st percentile of 1-s write IOPS / mean (spec: >= 75 %)", 0.75, "x", f"{src} l.70",
               lambda lab: consistency(lab, 0), check="above"),
    ]


def unaligned(lab: Lab, preset: str, qd: int) -> Point:
    """4K random writes on a new drive shifted by 512 B (each straddles two 4 KiB IUs)."""
    return point(lab, preset, "fob", f"write-4k-unaligned-qd{qd}",
                 lambda d: d.run(rmix=0, qd=qd, runtime_s=1.0, ramp_s=0.3, offset=512, align=4096))


IOMETER_NOTE = ("shown, not checked: the review gives neither the queue depth nor the alignment; at QD32 and 512 B "
                "alignment the model is 1.2-2.4x faster, at QD4 0.5-1.0x, and no one depth fits the four profiles")

IOMETER: dict[str, tuple[int, list[tuple[int, int]]]] = {  # read %, transfer sizes (% of I/Os): Tom's 2009 specs
    "fileserver": (80, [(512, 10), (1024, 5), (2048, 5), (4096, 60), (8192, 2), (16384, 4), (32768, 4), (65536, 10)]),
    "webserver": (100, [(512, 22), (1024, 15), (2048, 8), (4096, 23), (8192, 15), (16384, 2), (32768, 6),
                        (65536, 7), (131072, 1), (524288, 1)]),
    "database": (67, [(8192, 100)]),
    "workstation": (80, [(8192, 100)]),  # 80 % random: run fully random here
}


def iometer(lab: Lab, preset: str, spec: str) -> float:
    """An Iometer access specification at QD32, random, 512 B aligned, on the laid-out drive."""
    rmix, sizes = IOMETER[spec]
    return point(lab, preset, "laid", f"iometer-{spec}",
                 lambda d: d.run(rmix=rmix, qd=32, runtime_s=1.0, ramp_s=0.3, bssplit=sizes, align=512)).iops


def toshiba_figures(model: str) -> list[Figure]:
    """Toshiba CD5 and CM5-R 7.68 TB (TLC, PCIe 3.0 x4), seed 004: the specifications the review quotes, and its
    latency-vs-IOPS findings (T4Q32)."""
    pre, src = model, "seed 004"
    spec = {"cd5": (3140, 1980, 550e3, 50e3, "l.27-28", "< 1"), "cm5-r": (3350, 3040, 770e3, 80e3, "l.37-38", "1")}
    seq_r, seq_w, rr, rw, lines, dwpd = spec[model]

    def mix_ratio(lab: Lab, which: str) -> float:
        rd = closed(lab, which, "steady", "read-t4q32", rmix=100, qd=32, jobs=4).iops
        return closed(lab, which, "steady", "mix-t4q32", rmix=70, qd=32, jobs=4).iops / rd

    rows = [
        Figure("spec: 128K sequential read", seq_r / 1000, "GB/s", f"{src} {lines}",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-read", rmix=100, bs=128 * KiB, random=False))),
        Figure("spec: 128K sequential write", seq_w / 1000, "GB/s", f"{src} {lines}",
               lambda lab: gbps(closed(lab, pre, "laid", "seq-write", rmix=0, bs=128 * KiB, random=False))),
        Figure("spec: 4K random read (QD256)", rr, "IOPS", f"{src} {lines}",
               lambda lab: closed(lab, pre, "steady", "read-qd256", rmix=100, qd=64, jobs=4).iops),
        Figure("spec: 4K random write (steady state, QD256)", rw, "IOPS", f"{src} {lines}",
               lambda lab: closed(lab, pre, "steady", "write-qd256", rmix=0, qd=64, jobs=4).iops),
        Figure(f"spec: endurance {dwpd} DWPD", 0, "DWPD", f"{src} l.29, l.39", None, check="none",
               note="an endurance rating: the model has no wear-out"),
    ]
    if model == "cm5-r":
        rows.append(Figure("4K random read T4Q32, mean latency (under 200 µs)", 200, "µs", f"{src} l.87",
                           lambda lab: closed(lab, pre, "steady", "read-t4q32", rmix=100, qd=32, jobs=4).mean_us(0),
                           check="below"))
    else:
        rows.append(Figure("4K 70/30 / 100/0 IOPS at T4Q32, CD5 over CM5-R (degrades sharply with 30 % writes)",
                           1.0, "x", f"{src} l.88",
                           lambda lab: mix_ratio(lab, "cd5") / mix_ratio(lab, "cm5-r"), check="below"))
    return rows


TABLES: dict[str, Callable[[], list[Figure]]] = {
    "p5430": lambda: p5430_figures(op=False),
    "p5430-op": lambda: p5430_figures(op=True),
    "pe321": pe321_figures,
    "p5316": p5316_figures,
    "s3500": s3500_figures,
    "cd5": lambda: toshiba_figures("cd5"),
    "cm5-r": lambda: toshiba_figures("cm5-r"),
}


def table(preset: str, lab: Lab | None = None) -> list[Row]:
    """Every published figure of the preset's drive against the model ([] for the generic presets)."""
    make = TABLES.get(preset)
    if make is None:
        return []
    lab = lab or Lab()
    return [judge(f, lab) for f in make()]


def worst_ratio(rows: list[Row]) -> float | None:
    """The ratio farthest from 1 (as max(r, 1/r)) among the rows that compare ratios."""
    ratios = [r.ratio for r in rows if r.figure.check == "ratio" and r.ratio]
    return max(ratios, key=lambda r: max(r, 1 / r)) if ratios else None
