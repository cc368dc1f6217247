"""Several stored runs side by side: the same test points matched across runs, their values, the ratio of each
run to the first (the baseline) and whether each difference is significant (ssdlab.analysis.significance).

What a "point" is depends on the suite, so that like is compared with like:
  SNIA PTS round tests  one point per test and stimulus (key `iops/rnd4k-0-100`): the average over the
                        steady-state measurement window, with the window rounds as samples. Round numbers
                        differ between runs (one drive settles at round 6, the other at 9); the windows do not.
  SNIA PTS WSAT         `wsat/steady`: the last five samples (the steady tail), plus the curves.
  SNIA PTS CBW, DIRTH   one point per TC x QD of the sweep (`dirth/t04q08`): the average over the steady-state
                        window, the window rounds as samples; the tracking curve (IOPS at the top load per round).
  PTS histogram captures  LAT's captures by stimulus (`lat/h-rnd4k-0-100`) and CBW/DIRTH's by role
                        (`dirth/h-max`: MaxIOPS, wherever each drive's MaxIOPS point lies); per-interval samples.
  everything else       one point per measured point id (`03-rnd4k-q32t1-read`, `rand-randread-q8`); samples
                        are its per-interval values when the suite logged them.
Points present in only some runs are kept (their row says where they are missing), never dropped.

Pure: reads stored runs only. Renderers (report.compare) and the regression gate (ssdlab.compare.gate) use it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab import metrics
from ssdlab.analysis import significance
from ssdlab.analysis.significance import Judgement
from ssdlab.errors import SsdlabError
from ssdlab.results import aggregate
from ssdlab.results.model import Measurement, PointResult, Run, TestPoint, engine_text
from ssdlab.results.naming import target_name

# ---------------------------------------------------------------- metrics


def metric_name(text: str) -> str:
    """Canonical name of a metric compare judges (ssdlab.metrics.COMPARED): `read_p99.99_us` and `read_p99_99_us`
    are the same; unknown names (and metrics compare does not judge) raise KeyError."""
    name = metrics.get(text.strip()).name
    if name not in metrics.COMPARED:
        raise KeyError(text)
    return name


def point_metrics(r: PointResult) -> dict[str, float]:
    """Every compared metric of one measured point (latencies in µs from fio's clat, percentiles from the bins)."""
    return metrics.values(metrics.COMPARED, r)


def interval_samples(m: Measurement) -> dict[str, list[float]]:
    """Per-interval samples of a point that logged them: IOPS, MB/s and mean latency, per direction and in
    total. The final interval is left out (fio closes it early, so it covers less than an interval)."""
    s = {k: [float(x) for x in v] for k, v in m.series.items()}
    n = max((len(v) for k, v in s.items() if k != "time_s"), default=0)
    keep = n - 1 if n > 2 else n
    if keep < 1:
        return {}
    out: dict[str, list[float]] = {}
    for d in ("read", "write"):
        out.update(_direction_samples(s, d, keep))
    dirs = [d for d in ("read", "write") if f"{d}_iops" in out]
    if dirs:
        out.update(_total_samples(s, out, dirs, keep))
    return out


def _direction_samples(s: Mapping[str, list[float]], d: str, keep: int) -> dict[str, list[float]]:
    """One direction's samples ({} when it did no I/O); mean latency of the intervals with I/O only."""
    iops = s.get(f"{d}_iops", [0.0] * keep)[:keep]
    if f"{d}_iops" not in s or not any(iops):
        return {}
    out = {f"{d}_iops": iops}
    if f"{d}_bw_MBps" in s:
        out[f"{d}_bw_MBps"] = s[f"{d}_bw_MBps"][:keep]
    lat = s.get(f"{d}_lat_mean_us")
    if lat is not None:
        out[f"{d}_lat_mean_us"] = [v for v, k in zip(lat[:keep], iops, strict=False) if k > 0]
    return out


def _total_samples(s: Mapping[str, list[float]], out: Mapping[str, list[float]], dirs: list[str],
                   keep: int) -> dict[str, list[float]]:
    """Both directions together: IOPS and MB/s summed, latency weighted by each direction's IOPS."""
    total = {"iops": [sum(out[f"{d}_iops"][i] for d in dirs) for i in range(keep)]}
    if all(f"{d}_bw_MBps" in out for d in dirs):
        total["bw_MBps"] = [sum(out[f"{d}_bw_MBps"][i] for d in dirs) for i in range(keep)]
    if all(f"{d}_lat_mean_us" in s for d in dirs):
        lat_all = []
        for i in range(keep):
            w = sum(s[f"{d}_iops"][i] for d in dirs)
            if w > 0:
                lat_all.append(sum(s[f"{d}_lat_mean_us"][i] * s[f"{d}_iops"][i] for d in dirs) / w)
        total["lat_mean_us"] = lat_all
    return total


# ---------------------------------------------------------------- per-run points


@dataclass(frozen=True)
class Value:
    """One metric of one point in one run: the value reported, and the samples its variation is judged on."""

    value: float
    samples: tuple[float, ...] = ()


@dataclass(frozen=True)
class PointData:
    key: str
    label: str
    family: str  # pts-iops | pts-tp128 | pts-tp1024 | pts-lat | pts-wsat | a characterization view | points
    point: TestPoint  # a representative stored point (axes for charts)
    status: str  # ok | failed | skipped | ...
    reason: str = ""
    metrics: Mapping[str, Value] = field(default_factory=dict)
    sample_kind: str = ""  # "per-interval samples" | "window rounds" | "rounds so far" | "WSAT samples" | ""
    percentiles: Mapping[str, Mapping[float, float]] = field(default_factory=dict)  # direction -> {p: µs}


@dataclass(frozen=True)
class Curve:
    """A curve of one run drawn in an overlay chart (PTS convergence, WSAT IOPS vs data written)."""

    family: str
    name: str
    xlabel: str
    ylabel: str
    x: tuple[float, ...]
    y: tuple[float | None, ...]


@dataclass(frozen=True)
class RunData:
    run: Run
    label: str
    path: Path
    points: Mapping[str, PointData]  # in run order
    curves: tuple[Curve, ...] = ()
    notes: tuple[str, ...] = ()  # what could not be analysed (one line each)


def is_pts(run: Run) -> bool:
    return run.suite == "pts" or run.suite.startswith("pts-")


def _family(r: PointResult) -> str:
    tags = r.point.tags
    if tags.family == "characterization":
        return str(tags.view or "matrix")
    return "points"


PLOT_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


def _percentile_curves(results: Sequence[PointResult]) -> dict[str, dict[float, float]]:
    """direction -> {p: µs} over all I/Os of the given points (bins added; the PTS window's rounds together)."""
    out: dict[str, dict[float, float]] = {}
    for d in ("read", "write"):
        merged = aggregate.merge_latency([st.clat for r in results if r.measurement is not None
                                          and (st := r.measurement.get(d)) is not None])
        if merged is None:
            continue
        found = merged.percentiles(PLOT_PERCENTILES)
        vals = {p: v / 1000.0 for p, v in found.items() if v is not None and v > 0}
        if vals:
            out[d] = vals
    return out


def _single_point(r: PointResult, key: str, family: str, label: str = "") -> PointData:
    """One measured point as it stands: its metrics, its per-interval values (when it logged them) as samples."""
    found = point_metrics(r)
    samples = interval_samples(r.measurement) if r.measurement is not None and r.measurement.series else {}
    values = {k: Value(v, tuple(samples.get(k, ()))) for k, v in found.items()}
    return PointData(key=key, label=label or r.point.label, family=family, point=r.point, status=r.status,
                     reason=r.reason, metrics=values, sample_kind="per-interval samples" if samples else "",
                     percentiles=_percentile_curves([r]) if r.status == "ok" else {})


def _generic_points(run: Run, skip_tests: frozenset[str]) -> dict[str, PointData]:
    latest: dict[str, PointResult] = {}
    for r in run.points:
        if r.point.phase != "measure" or r.point.tags.test in skip_tests:
            continue
        latest[r.point.id] = r  # a later attempt of an id replaces the earlier one
    return {pid: _single_point(r, pid, _family(r)) for pid, r in latest.items()}


def _aggregate(results: Sequence[PointResult]) -> dict[str, Value]:
    """Mean of each metric over several points (PTS window rounds, WSAT samples), the points as samples."""
    per = [point_metrics(r) for r in results]
    names = sorted({k for m in per for k in m})
    out = {}
    for name in names:
        vals = [m[name] for m in per if name in m and math.isfinite(m[name])]
        if vals and len(vals) == len(per):  # a round that lacks the metric makes the average meaningless
            out[name] = Value(statistics.fmean(vals), tuple(vals))
    return out


CAPTURES = "pts-captures"  # the family of PTS response-time histogram captures (LAT, CBW, DIRTH)


def _pts_points(run: Run) -> tuple[dict[str, PointData], list[Curve], list[str]]:
    from ssdlab.suites import load_builtin
    from ssdlab.suites.pts import wsat as wsat_mod
    from ssdlab.suites.pts.common import settings_from_run
    from ssdlab.suites.pts.family import tests_for

    load_builtin()
    try:
        s = settings_from_run(run)
    except SsdlabError as exc:
        return {}, [], [f"cannot read the PTS settings of {run.run_id}: {exc}"]
    points: dict[str, PointData] = {}
    curves: list[Curve] = []
    notes: list[str] = []
    for test in [rt for ft in tests_for(run) for rt in ft.round_tests]:  # the round tests the run selected
        _round_test_points(run, s, test, points, curves, notes)
    for dtest in _demand_tests(run):
        demand_points, demand_curves, demand_notes = _demand_points(run, s, dtest)
        points.update(demand_points)
        curves.extend(demand_curves)
        notes.extend(demand_notes)
    if any(p.point.tags.test == wsat_mod.TEST for p in run.points):
        _wsat_points(run, s, points, curves)
    return points, curves, notes


def _round_test_points(run: Run, s: Any, test: Any, points: dict[str, PointData], curves: list[Curve],
                       notes: list[str]) -> None:
    """A round test's stimuli averaged over its window (or the rounds so far), its tracking curves and its
    histogram captures."""
    from ssdlab.suites.pts.common import analyse, capture_points

    res = run.finished_by_id()
    state = analyse(test, s, run)
    rounds = state.window or list(range(1, state.rounds_done + 1))
    kind = "window rounds" if state.window else "rounds so far"
    if not state.window:
        notes.append(f"{run.run_id} {test.title}: no measurement window ({state.rounds_done} complete "
                     "rounds); its points average the rounds run so far")
    family = f"pts-{test.name}"
    for st in test.stimuli(s):
        prs = [res.get(f"{test.name}-r{r:02d}-{st.key}") for r in rounds]
        ok = [p for p in prs if p is not None and p.status == "ok"]
        if not ok:
            continue
        points[f"{test.name}/{st.key}"] = PointData(
            key=f"{test.name}/{st.key}", label=f"{test.title} {st.label}", family=family, point=ok[-1].point,
            status="ok", metrics=_aggregate(ok), sample_kind=kind, percentiles=_percentile_curves(ok))
    xs = tuple(float(r) for r in range(1, state.rounds_done + 1))
    for tr in test.trackers(s):
        curves.append(Curve(family, tr.name, "round", tr.unit, xs, tuple(state.tracking.get(tr.name, ()))))
    for cap in capture_points(test, s):  # LAT's histogram captures, after the rounds
        pr = res.get(cap.id)
        if pr is not None:
            key = f"{test.name}/{cap.id.removeprefix(test.name + '-')}"
            points[key] = _single_point(pr, key, CAPTURES)


def _wsat_points(run: Run, s: Any, points: dict[str, PointData], curves: list[Curve]) -> None:
    """WSAT's last five samples as one point, and its IOPS against data written and drive fills."""
    from ssdlab.suites.pts import wsat as wsat_mod

    ws = wsat_mod.analyse(s, run)
    if not ws.samples:
        return
    tail = ws.samples[-5:]
    points["wsat/steady"] = PointData(
        key="wsat/steady", label="WSAT RND 4 KiB 0/100, last 5 samples", family="pts-wsat",
        point=tail[-1].point, status="ok", metrics=_aggregate(tail), sample_kind="WSAT samples",
        percentiles=_percentile_curves(tail))
    iops = tuple(pr.measurement.total_iops if pr.measurement is not None else None for pr in ws.samples)
    curves.append(Curve("pts-wsat", "IOPS vs TGBW", "total GB written (10^9 bytes)", "IOPS",
                        tuple(w / 1e9 for w in ws.written), iops))
    curves.append(Curve("pts-wsat", "IOPS vs drive fills", "drive fills (written / capacity)", "IOPS",
                        tuple(w / s.capacity for w in ws.written), iops))


def _demand_tests(run: Run) -> list[Any]:
    """The CBW/DIRTH tests (suites.pts.demand.DemandTest) a PTS run selected, in run order."""
    from ssdlab.suites.pts import demand
    from ssdlab.suites.pts.family import tests_for

    by_key = {t.key: t for t in (demand.CBW, demand.DIRTH)}
    return [by_key[ft.key] for ft in tests_for(run) if ft.key in by_key]


def _demand_points(run: Run, s: Any, test: Any) -> tuple[dict[str, PointData], list[Curve], list[str]]:
    """CBW/ECW and DIRTH: the sweep's TC x QD points averaged over the steady-state window (the window rounds as
    samples), the tracking curve, and the MaxIOPS/MidIOPS/MinIOPS captures by role."""
    from ssdlab.suites.pts import demand

    state = demand.analyse(test, s, run)
    res = run.finished_by_id()
    family = f"pts-{test.key}"
    rounds = state.window or list(range(1, state.rounds_done + 1))
    kind = "window rounds" if state.window else "rounds so far"
    notes = [] if state.window or not state.rounds_done else [
        f"{run.run_id} {test.key.upper()}: no measurement window ({state.rounds_done} complete rounds); its sweep "
        "points average the rounds run so far"]
    points: dict[str, PointData] = {}
    for tc, qd in state.settings.sweep_points():
        ok = [p for r in rounds if (p := res.get(demand.round_id(test, r, tc, qd))) is not None and p.status == "ok"]
        if not ok:
            continue
        key = f"{test.key}/{demand.sweep_key(tc, qd)}"
        points[key] = PointData(key=key, label=f"{test.key.upper()} T{tc}Q{qd} (TOIO {tc * qd})", family=family,
                                point=ok[-1].point, status="ok", metrics=_aggregate(ok), sample_kind=kind,
                                percentiles=_percentile_curves(ok))
    for role in demand.ROLES:
        first = state.selection.capture_role(role) if state.selection is not None else None
        pr = res.get(demand.hist_id(test, first)) if first is not None else None
        if pr is None:
            continue
        w = pr.point.workload
        key = f"{test.key}/h-{role}"
        points[key] = _single_point(pr, key, CAPTURES, f"{test.key.upper()} {demand.ROLE_TITLES[role]} capture "
                                                        f"(T{w.numjobs}Q{w.iodepth})")
    tc, qd = state.settings.top
    xs = tuple(float(r) for r in range(1, len(state.tracking) + 1))
    curves = [Curve(family, f"{test.key.upper()} IOPS at T{tc}Q{qd}", "round", "IOPS", xs, tuple(state.tracking))]
    return points, curves, notes


DEMAND_TESTS = frozenset({"cbw", "dirth"})


def run_data(run: Run, label: str, path: Path) -> RunData:
    """The comparable points of one stored run."""
    if is_pts(run):
        points, curves, notes = _pts_points(run)
        rest = _generic_points(run, skip_tests=frozenset({"iops", "tp128", "tp1024", "lat", "wsat", *DEMAND_TESTS}))
        return RunData(run, label, path, {**points, **rest}, tuple(curves), tuple(notes))
    return RunData(run, label, path, _generic_points(run, frozenset()))


# ---------------------------------------------------------------- comparison


@dataclass(frozen=True)
class Cell:
    """One metric of one row in one run."""

    value: Value | None
    ratio: float | None = None  # value / baseline value
    judgement: Judgement | None = None  # None for the baseline itself

    @property
    def change(self) -> float | None:
        return None if self.ratio is None else self.ratio - 1.0


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    family: str
    points: tuple[PointData | None, ...]  # per run; None: the run has no such point
    cells: Mapping[str, tuple[Cell, ...]]  # metric -> per run

    @property
    def present(self) -> tuple[bool, ...]:
        return tuple(p is not None and p.status == "ok" for p in self.points)

    @property
    def common(self) -> bool:
        return all(self.present)


@dataclass(frozen=True)
class Comparison:
    runs: tuple[RunData, ...]
    rows: tuple[Row, ...]
    alpha: float
    min_effect: float

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.runs]

    def common_rows(self) -> list[Row]:
        return [r for r in self.rows if r.common]

    def partial_rows(self) -> list[Row]:
        return [r for r in self.rows if not r.common]

    def geomean(self, metric: str, i: int) -> tuple[float | None, int]:
        """Geometric mean of run i's ratios to the baseline over the common points having the metric."""
        ratios = [c.ratio for r in self.common_rows() if (cells := r.cells.get(metric)) is not None
                  and (c := cells[i]).ratio is not None]
        return significance.geometric_mean(ratios), len(ratios)


def _cell(base: Value | None, v: Value | None, kind: str, alpha: float, min_effect: float) -> Cell:
    if v is None or base is None or base.value == 0:
        return Cell(v)
    judgement = significance.judge(base.samples, v.samples, kind=kind, alpha=alpha, min_effect=min_effect)
    return Cell(v, v.value / base.value, judgement)


def compare(runs: Sequence[RunData], *, alpha: float = significance.ALPHA,
            min_effect: float = significance.MIN_EFFECT) -> Comparison:
    """Rows for every point of any run (baseline order first), each metric judged against the baseline."""
    keys: list[str] = []
    seen: set[str] = set()
    for rd in runs:
        for k in rd.points:
            if k not in seen:
                seen.add(k)
                keys.append(k)
    rows = []
    for key in keys:
        pts = tuple(rd.points.get(key) for rd in runs)
        first = next(p for p in pts if p is not None)
        names = [n for n in metrics.COMPARED if any(p is not None and n in p.metrics for p in pts)]
        cells: dict[str, tuple[Cell, ...]] = {}
        base_pt = pts[0]
        for name in names:
            base = base_pt.metrics.get(name) if base_pt is not None and base_pt.status == "ok" else None
            row_cells = [Cell(base)]
            for p in pts[1:]:
                v = p.metrics.get(name) if p is not None and p.status == "ok" else None
                kind = _kind(base_pt, p)
                row_cells.append(_cell(base, v, kind, alpha, min_effect))
            cells[name] = tuple(row_cells)
        rows.append(Row(key=key, label=first.label, family=first.family, points=pts, cells=cells))
    return Comparison(tuple(runs), tuple(rows), alpha, min_effect)


def _kind(a: PointData | None, b: PointData | None) -> str:
    kinds = {p.sample_kind for p in (a, b) if p is not None and p.sample_kind}
    return " / ".join(sorted(kinds)) if kinds else ""


# ---------------------------------------------------------------- run facts (the comparison header)


def run_facts(rd: RunData) -> dict[str, str]:
    """What distinguishes a run, one line each, in the order the header table shows them."""
    run = rd.run
    t, h, o = run.target, run.host, run.options
    ident = t.get("identity") or {}
    sim = t.get("sim") or {}
    params = sim.get("params") or {} if isinstance(sim, Mapping) else {}
    cap = t.get("capacity_bytes")
    facts = {
        "run id": run.run_id,
        "directory": str(rd.path),
        "suite": run.suite,
        "status": run.status,
        "verdict": _verdict(run),
        "created": run.created,
        "device": target_name(t),
        "target kind": str(t.get("kind") or "unknown"),
        "model": str(ident.get("model") or "not reported"),
        "serial": str(ident.get("serial") or "not reported"),
        "firmware": str(ident.get("firmware") or "not reported"),
        "capacity": _bytes(cap),
        "over-provisioning": _op(params, ident),
        "power": _power(params, ident),
        "engine": engine_text(run),
        "ssdlab": str(run.ssdlab_version),
        "results schema": str(run.schema_version),
        "threads x queue depth": _tq(run),
        "time per point": _runtime(run),
        "scaled": _scaled(run),
        "host": f"{h.get('hostname', '?')}: {h.get('cpu_model', '?')} x{h.get('cpu_count', '?')}, "
                f"kernel {h.get('kernel', '?')}",
    }
    if o.footprint:
        facts["footprint"] = str(o.footprint)
    return facts


def _verdict(run: Run) -> str:
    """The run's verdict (verdict.py), each test's when there are several."""
    from ssdlab.results.verdict import run_verdicts

    v = run_verdicts(run)
    if len(v.tests) == 1:
        return v.tests[0].text
    return f"{v.headline}: " + "; ".join(t.text for t in v.tests)


def _bytes(v: Any) -> str:
    from ssdlab.units import format_bytes

    return format_bytes(float(v)) if isinstance(v, (int, float)) else "unknown"


def _op(params: Mapping[str, Any], ident: Mapping[str, Any]) -> str:
    if "op" in params:
        implied = ident.get("implied_op")
        return f"{float(params['op']):g}% (simulator preset)" + (f", {implied} implied by raw capacity"
                                                                 if implied else "")
    for key in ("op", "over_provisioning"):
        if ident.get(key):
            return str(ident[key])
    return "not reported"


def _power(params: Mapping[str, Any], ident: Mapping[str, Any]) -> str:
    if "power" in params:
        p = float(params["power"])
        return f"capped at {p:g} W (simulator)" if p > 0 else "uncapped (simulator)"
    for key in ("power_state", "power"):
        if ident.get(key) not in (None, ""):
            return str(ident[key])
    return "not reported"


def _demand_settings(run: Run) -> Any:
    """The CBW/DIRTH settings of a run that selected a demand test (None for other runs)."""
    from ssdlab.suites import load_builtin
    from ssdlab.suites.pts import demand
    from ssdlab.suites.pts.common import settings_from_run

    load_builtin()
    if not _demand_tests(run):
        return None
    return demand.demand_settings(settings_from_run(run))


def _tq(run: Run) -> str:
    if is_pts(run):
        try:
            from ssdlab.suites.pts.common import settings_from_run

            ds = _demand_settings(run)
            if ds is not None:  # CBW/DIRTH sweep threads x queue depth
                return (f"TC {','.join(map(str, ds.tcs))} x QD {','.join(map(str, ds.qds))} sweep "
                        f"({ds.sweep}; top T{ds.top[0]}Q{ds.top[1]})")
            s = settings_from_run(run)
            return f"{s.tq} (TOIO {s.toio})" + ("; PTS LAT at T1Q1" if run.suite in ("pts", "pts-lat") else "")
        except SsdlabError:
            return "unknown"
    combos = sorted({(r.point.workload.numjobs, r.point.workload.iodepth) for r in run.points
                     if r.point.phase == "measure"})
    if not combos:
        return "none"
    text = ", ".join(f"T{t}Q{q}" for t, q in combos[:6])
    return text + (f" … ({len(combos)} combinations)" if len(combos) > 6 else "")


def _runtime(run: Run) -> str:
    values = sorted({r.point.workload.runtime_s for r in run.points
                     if r.point.phase == "measure" and r.point.workload.runtime_s is not None})
    if not values:
        return "size-based"
    return ", ".join(f"{v:g} s" for v in values[:4]) + (" …" if len(values) > 4 else "")


def _scaled(run: Run) -> str:
    if is_pts(run):
        try:
            from ssdlab.suites.pts.common import settings_from_run

            reasons = settings_from_run(run).scaled_reasons(run.options, dict(run.target))
            ds = _demand_settings(run)
            reasons += ds.scaled_reasons() if ds is not None else []
        except SsdlabError:
            return "unknown"
        return "yes: " + "; ".join(reasons) if reasons else "no (spec-compliant set-up)"
    if str(run.target.get("kind")) == "sim":
        return "simulated drive"
    return "not applicable (not a PTS run)"
