"""`ssdlab trace fit`: a trace -> a suite file (rw mix, bssplit, queue depth, arrival rate, random share, offset
distribution and the span to run it on) that reproduces the trace's characterization within TOLERANCES.

The skew and footprint a random workload shows depend on how many I/Os land on how many blocks, so they are
fitted by simulating the offsets fio would generate (fio's zipf generator is Gray et al.'s, lib/zipf.c; its
sequential I/O continues from the last I/O of the same direction) and characterizing them with the very
functions `trace info` uses: a zipf theta for the hot-block shares, a span for the footprint. `compare` sets a
characterization of what the fitted suite generated (recorded from fio, fio/replay.record_workload) against the
trace's, metric by metric."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ssdlab.trace.characterize import Characterization, block_counts, footprint, hot_shares, sequentiality
from ssdlab.trace.model import READ, WRITE, Trace
from ssdlab.units import format_bs, format_bytes

FIT_IOS = 2_000_000  # a longer trace is fitted (and checked) on its first FIT_IOS I/Os
SIM_IOS = 400_000  # I/Os per simulation; a longer fit scales the span to keep I/Os per block
MAX_SIZES = 16  # bssplit entries per direction
ZIPF_MAX_GEN = 10_000_000  # fio sums zeta over at most this many ranges
DEFAULT_QD = 32  # without response times the trace implies no queue depth

# (metric, tolerance, kind): kind "abs" is in percentage points of a share, "rel" a fraction of the trace's value
TOLERANCES: dict[str, tuple[float, str]] = {
    "read share": (2.0, "abs"),
    "mean size": (0.05, "rel"),
    "size share": (3.0, "abs"),
    "sequential share": (3.0, "abs"),
    "hot 1% share": (6.0, "abs"),
    "hot 10% share": (6.0, "abs"),
    "footprint": (0.12, "rel"),
}


@dataclass(frozen=True)
class Model:
    """A workload as fio would generate it (what the fitted suite asks for)."""

    read_frac: float
    sizes: dict[int, tuple[list[int], list[float]]]  # direction -> (sizes, probabilities)
    random_frac: float
    theta: float  # 0: uniform
    span: int  # bytes
    min_bs: int


@dataclass(frozen=True)
class Fit:
    model: Model
    ios: int
    runtime_s: float
    rate_iops: int | None
    poisson: bool
    iodepth: int
    rwmixread: int
    bssplit: str
    percentage_random: int
    distribution: str
    fitted_on: int  # I/Os of the trace the skew/footprint were fitted on
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- simulating fio's offsets

def zeta(n: int, theta: float) -> float:
    """sum_{i=1..min(n, ZIPF_MAX_GEN)} i^-theta, as fio's zipf_update sums it."""
    upto = min(n, ZIPF_MAX_GEN)
    exact = min(upto, 1_000_000)
    s = float(np.sum(np.arange(1, exact + 1, dtype=np.float64) ** -theta))
    if upto > exact:  # Euler-Maclaurin for the rest of the sum
        a, b = float(exact), float(upto)
        integral = math.log(b / a) if abs(theta - 1.0) < 1e-12 else (b ** (1 - theta) - a ** (1 - theta)) / (1 - theta)
        s += integral + 0.5 * (b ** -theta - a ** -theta)
    return s


def zipf_ranks(n: int, theta: float, u: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """fio's zipf_next for uniform draws `u` in [0, 1): ranks 0..n-1, 0 the hottest (fio then scatters ranks
    over the span with a hash, which moves blocks but not how often each is hit)."""
    zetan = zeta(n, theta)
    zeta2 = 1.0 + 0.5 ** theta
    alpha = 1.0 / (1.0 - theta)
    eta = (1.0 - (2.0 / n) ** (1.0 - theta)) / (1.0 - zeta2 / zetan)
    rz = u * zetan
    with np.errstate(invalid="ignore", over="ignore"):
        big = 1.0 + np.floor(n * np.power(eta * u - eta + 1.0, alpha))
    val = np.where(rz < 1.0, 1.0, np.where(rz < 1.0 + 0.5 ** theta, 2.0, big))
    val = np.nan_to_num(val, nan=1.0, posinf=float(n), neginf=1.0)
    return np.clip(val.astype(np.int64) - 1, 0, n - 1)


GOLDEN_RATIO_64 = np.uint64(0x61C8864680B583EB)


def scatter(ranks: npt.NDArray[np.int64], n: int, rand_off: int = 0) -> npt.NDArray[np.int64]:
    """Where fio puts a zipf rank: (rank x 2^64's golden ratio, mod 2^64, plus an offset) mod the ranges (fio's
    __hash_u64), so the hot blocks are scattered over the span, not side by side."""
    with np.errstate(over="ignore"):
        h = ranks.astype(np.uint64) * GOLDEN_RATIO_64 + np.uint64(rand_off)
    return (h % np.uint64(n)).astype(np.int64)


def simulate(model: Model, m: int, seed: int = 1) -> Trace:
    """The first `m` I/Os fio would issue for `model` (one job): direction, size, random or sequential, and
    offsets (zipf or uniform blocks of min_bs for random I/O; a sequential I/O starts where the last I/O of its
    direction ended, at 0 before any, wrapping at the span's end)."""
    rng = np.random.default_rng(seed)
    op = np.where(rng.random(m) < model.read_frac, READ, WRITE).astype(np.uint8)
    size = np.zeros(m, dtype=np.int64)
    for d, (values, probs) in model.sizes.items():
        sel = op == d
        if bool(sel.any()):
            size[sel] = rng.choice(np.asarray(values, dtype=np.int64), size=int(sel.sum()), p=np.asarray(probs))
    nblocks = max(1, model.span // model.min_bs)
    u = rng.random(m)
    if model.theta > 0:
        blocks = scatter(zipf_ranks(nblocks, model.theta, u), nblocks)
    else:
        blocks = (u * nblocks).astype(np.int64)
    rand_off = blocks * model.min_bs
    is_rand = rng.random(m) < model.random_frac
    offset = np.zeros(m, dtype=np.int64)
    for d in (READ, WRITE):
        idx = np.flatnonzero(op == d)
        if not idx.size:
            continue
        r = is_rand[idx]
        sz = size[idx]
        run = np.cumsum(r)  # the random I/O each sequential run follows (0: none yet)
        base = np.where(r, rand_off[idx], 0)
        first = np.zeros(int(run[-1]) + 1, dtype=np.int64)
        first[run[r]] = np.flatnonzero(r)
        start_of_run = first[run]  # index (in idx) of the run's first I/O; 0 for the leading run
        csum = np.cumsum(sz) - sz  # bytes before each I/O of the direction
        run_base = np.where(run > 0, base[start_of_run], 0)
        off = run_base + np.where(run > 0, csum - csum[start_of_run], csum)
        offset[idx] = off % max(1, model.span)
    offset = np.minimum(offset, np.maximum(0, model.span - size))
    time = np.arange(m, dtype=np.int64)
    return Trace(path="<fit>", format="sim", time_ns=time, offset=offset, size=size, op=op)


@dataclass(frozen=True)
class Shape:
    """The characterization a fit reproduces (from a trace, or from a simulated workload)."""

    hot: float  # hot1 + hot10
    hot1: float
    hot10: float
    footprint: int
    sequential: float


def shape_of(trace: Trace) -> Shape:
    h = hot_shares(block_counts(trace))
    return Shape(h["hot1"] + h["hot10"], h["hot1"], h["hot10"], footprint(trace),
                 sequentiality(trace)["same_direction"])


# ---------------------------------------------------------------- the fit

def _bisect(f: Any, lo: float, hi: float, target: float, steps: int = 12) -> float:
    """x in [lo, hi] where the increasing f(x) meets target (an end when it never does)."""
    if f(lo) >= target:
        return lo
    if f(hi) <= target:
        return hi
    for _ in range(steps):
        mid = (lo + hi) / 2
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _size_table(trace: Trace, d: int) -> tuple[list[int], list[float]]:
    sel = trace.size[trace.op == d]
    if not sel.size:
        return [4096], [1.0]
    values, counts = np.unique(sel, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    keep = sorted(int(values[i]) for i in order[:MAX_SIZES])
    kept = np.asarray(keep, dtype=np.int64)
    # a size outside the table counts for the nearest kept size (log scale)
    near = np.abs(np.log2(values[:, None] / kept[None, :])).argmin(axis=1)
    merged = np.bincount(near, weights=counts, minlength=len(keep))
    probs = (merged / merged.sum()).tolist()
    return keep, probs


def _percent_split(sizes: list[int], probs: list[float]) -> str:
    """fio bssplit text with whole percentages adding up to 100 (largest remainders), 0 % entries dropped."""
    raw = [p * 100 for p in probs]
    whole = [math.floor(x) for x in raw]
    rest = 100 - sum(whole)
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - whole[i], reverse=True)[:rest]:
        whole[i] += 1
    return ":".join(f"{format_bs(s).lower()}/{w}" for s, w in zip(sizes, whole, strict=True) if w > 0)


def fit(trace: Trace, char: Characterization) -> Fit:
    """The suite parameters that reproduce `trace` (characterized as `char`)."""
    notes: list[str] = []
    sample = trace.take(np.arange(min(len(trace), FIT_IOS))) if len(trace) > FIT_IOS else trace
    if len(sample) < len(trace):
        notes.append(f"skew, footprint and sequentiality fitted on the first {len(sample)} of {len(trace)} I/Os")
    reads = float(np.mean(sample.op == READ)) if len(sample) else 1.0
    sizes = {d: _size_table(sample, d) for d in (READ, WRITE)}
    if sample.has_trims:
        notes.append("trims are fitted as writes (a suite mixes reads and writes)")
    min_bs = min(min(sizes[READ][0]), min(sizes[WRITE][0]))
    target = shape_of(sample)
    random_frac = max(0.0, min(1.0, 1.0 - target.sequential))
    model = _fit_offsets(sample, target, Model(reads, sizes, random_frac, 0.0, max(target.footprint, min_bs),
                                                 min_bs))
    dur = char.duration_s
    rate = round(len(trace) / dur) if dur > 0 else None
    if rate is None:
        notes.append("the trace has no times: the suite runs as fast as the target allows")
    cov = char.interarrival_us.get("cov", 1.0)
    poisson = cov >= 0.5
    if cov > 1.5:
        notes.append(f"arrivals are burstier than Poisson (inter-arrival CoV {cov:.2f}): the rate reproduces "
                     "their mean only")
    qd = char.qd
    iodepth = max(1, math.ceil(qd["p99"])) if qd else DEFAULT_QD
    if not qd:
        notes.append(f"no response times in the trace: queue depth {DEFAULT_QD} (a cap; the rate paces the I/O)")
    r_split = _percent_split(*sizes[READ])
    w_split = _percent_split(*sizes[WRITE])
    if reads >= 1.0:
        bssplit = r_split
    elif reads <= 0.0:
        bssplit = w_split
    else:
        bssplit = r_split if r_split == w_split else f"{r_split},{w_split}"
    dist = f"zipf:{model.theta:.3f}" if model.theta > 0 else "random"
    return Fit(model=model, ios=len(trace), runtime_s=max(1.0, dur), rate_iops=rate, poisson=poisson,
               iodepth=iodepth, rwmixread=round(reads * 100), bssplit=bssplit,
               percentage_random=round(random_frac * 100), distribution=dist, fitted_on=len(sample), notes=notes)


def _fit_offsets(sample: Trace, target: Shape, model: Model) -> Model:
    """The zipf theta (0: uniform) that gives the sample's hot-block shares and the span that gives its
    footprint, with as many I/Os per block as the sample has (a longer sample is simulated with fewer I/Os on
    a proportionally smaller span)."""
    import dataclasses

    m = min(len(sample), SIM_IOS)
    scale = m / max(1, len(sample))

    def shape(theta: float, span: float) -> Shape:
        span_sim = max(model.min_bs * 2, int(span * scale) // model.min_bs * model.min_bs)
        return shape_of(simulate(dataclasses.replace(model, theta=theta, span=span_sim), m))

    theta, span = 0.0, float(max(target.footprint, model.min_bs * 2))
    hi_span = max(span * 4, float(sample.max_end) * 2, span * 64)
    for _ in range(2):
        span = _bisect(lambda s, th=theta: shape(th, s).footprint / scale, span / 2, hi_span, target.footprint)
        theta = _bisect(lambda t, sp=span: shape(t, sp).hot, 0.0, 2.5, target.hot, steps=12)
        if abs(theta - 1.0) < 1e-3:  # fio refuses exactly 1.0
            theta = 1.001
        if theta < 0.02:
            theta = 0.0
    span = _bisect(lambda s: shape(theta, s).footprint / scale, span / 2, hi_span, target.footprint)
    span_bytes = max(model.min_bs * 2, round(span) // 4096 * 4096)
    return dataclasses.replace(model, theta=theta, span=span_bytes)


# ---------------------------------------------------------------- the suite file

def suite_toml(f: Fit, char: Characterization, name: str) -> str:
    """The fitted suite as a TOML suite file (docs/suites.md), its provenance and tolerances in comments."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "trace"
    rw = "randread" if f.rwmixread >= 100 else "randwrite" if f.rwmixread <= 0 else "randrw"
    options: dict[str, str] = {"percentage_random": str(f.percentage_random)}
    if f.rate_iops is not None:
        options["rate_process"] = "poisson" if f.poisson else "linear"
    tol = ", ".join(f"{k} ±{v:g} points" if kind == "abs" else f"{k} ±{v:.0%}" for k, (v, kind) in TOLERANCES.items())
    lines = [
        f"# fitted by `ssdlab trace fit` to {char.path} ({char.format}, {char.ios} I/Os over {char.duration_s:.3f} s)",
        f"# run it on the span the fit assumes: ssdlab run THIS.toml --target T --footprint {f.model.span}",
        f"#   ({format_bytes(f.model.span)}; the trace touched {format_bytes(char.footprint_bytes)})",
        f"# reproduces within: {tol}",
        f"#   (or 3 standard errors of a sample of {f.fitted_on} I/Os when wider; `ssdlab trace fit --check`",
        "#   measures it with fio)",
        *[f"# note: {n}" for n in f.notes],
        f'name = "fit-{slug}"',
        f'summary = "workload fitted to {slug}: {f.rwmixread}% reads, {f.distribution}, '
        f'{f.percentage_random}% random"',
        f"runtime_s = {f.runtime_s:.3f}",
        'view = "matrix"',
        "",
        "[[matrix]]",
        'name = "fit"',
        f'rw = "{rw}"',
    ]
    if rw == "randrw":
        lines.append(f"rwmixread = {f.rwmixread}")
    lines += [f'bssplit = "{f.bssplit}"', f"iodepth = {f.iodepth}", "numjobs = 1"]
    if f.rate_iops is not None:
        lines.append(f"rate = [{f.rate_iops}]")
    if f.distribution != "random":
        lines.append(f'random_distribution = "{f.distribution}"')
    lines.append("options = { " + ", ".join(f'{k} = "{v}"' for k, v in options.items()) + " }")
    lines.append("log_interval_ms = 1000")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- checking a fit

@dataclass(frozen=True)
class Check:
    metric: str
    trace: float
    generated: float
    tolerance: str
    ok: bool


def _check(metric: str, trace: float, generated: float, n: int, key: str | None = None,
           spread: float | None = None) -> Check:
    """One metric within its tolerance: the fixed one of TOLERANCES, or three standard errors of a sample of `n`
    I/Os when that is wider (a share p: sqrt(p(1-p)/n); a mean: `spread`/sqrt(n); a footprint: 1/sqrt(n))."""
    tol, kind = TOLERANCES[key or metric]
    if kind == "abs":
        sampling = 3 * math.sqrt(max(trace * (1 - trace), 1e-12) / max(n, 1)) * 100
        allowed = max(tol, sampling)
        ok = abs(generated - trace) * 100 <= allowed + 1e-9
        return Check(metric, trace, generated, f"±{allowed:.3g} points", ok)
    sampling = 3 * (spread / abs(trace) if spread is not None and trace else 1.0) / math.sqrt(max(n, 1))
    allowed = max(tol, sampling)
    ok = abs(generated - trace) <= allowed * abs(trace) + 1e-9
    return Check(metric, trace, generated, f"±{allowed:.0%}", ok)


def compare(trace: Trace, generated: Trace) -> list[Check]:
    """The fitted metrics of `trace` against those of what the fitted suite generated (as many I/Os of each:
    the trace's first ones when fio made fewer)."""
    n = min(len(trace), len(generated))
    a = trace.take(np.arange(n)) if len(trace) > n else trace
    b = generated.take(np.arange(n)) if len(generated) > n else generated
    sa, sb = shape_of(a), shape_of(b)
    checks = [
        _check("read share", float(np.mean(a.op == READ)), float(np.mean(b.op == READ)), n),
        _check("mean size", float(a.size.mean()), float(b.size.mean()), n, spread=float(a.size.std())),
        _check("sequential share", sa.sequential, sb.sequential, n),
        _check("hot 1% share", sa.hot1, sb.hot1, n),
        _check("hot 10% share", sa.hot10, sb.hot10, n),
        _check("footprint", float(sa.footprint), float(sb.footprint), n),
    ]
    values, counts = np.unique(a.size, return_counts=True)
    for i in np.argsort(-counts, kind="stable")[:4]:
        size = int(values[i])
        checks.append(_check(f"share of {format_bs(size)} I/Os", counts[i] / n,
                             float(np.mean(b.size == size)), n, "size share"))
    return checks
