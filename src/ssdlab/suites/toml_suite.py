"""Suites described by a TOML file: optional long phases, then one or more measured matrices.

The built-in characterization suites are such files (src/ssdlab/suites/data/*.toml); `ssdlab run FILE.toml`
runs a user's file the same way. Format (docs/suites.md has the full reference):

    name = "my-suite"              # title shown in reports (a user file is identified by its path)
    summary = "one line"
    runtime_s = 60                 # per measured point (--runtime overrides); ramp_s likewise
    view = "matrix"                # report view: matrix | bs-sweep | qd-sweep | stability | lat-curve | iorate | app

    [app]                          # optional application model applied to every matrix (see suites/apps.py)

    [[phase]]                      # optional, run in order before the matrices; per-second IOPS/MB/s recorded
    name = "seq-fill"
    rw = "write"; bs = "128k"; iodepth = 256; numjobs = 1
    runtime_s = 7200               # or io = 2.0 (multiples of the active range, size-based)

    [[matrix]]                     # the cartesian product of every list-valued axis
    name = "rnd-read"
    rw = "randread"; bs = ["4k", "64k"]; iodepth = "1..32"; numjobs = [1, 4]
    rate = ["max", "50%", "100%"]  # optional iorate axis (max first, then % of the measured max)
    options = { percentage_random = "80" }
"""

from __future__ import annotations

import dataclasses
import math
import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from ssdlab.errors import UsageError
from ssdlab.fio.options import suite_option_refusal
from ssdlab.results.model import Run, TestPoint, Workload
from ssdlab.results.tags import PointTags
from ssdlab.suites import apps, curves, sweeps
from ssdlab.suites.base import PlanContext, Suite, SuiteOption
from ssdlab.units import format_bs, format_bytes

FAMILY = "characterization"
VIEWS = ("matrix", "bs-sweep", "qd-sweep", "stability", "lat-curve", "iorate", "app")
_TOP_KEYS = {"name", "summary", "runtime_s", "ramp_s", "view", "app", "phase", "matrix", "description",
             "p99_limit_us", "cov_limit_pct"}
_FIXED_KEYS = {"name", "view", "runtime_s", "ramp_s", "options", "log_interval_ms", "hist_log_ms", "label",
               "random_distribution"}
_PHASE_KEYS = {"name", "rw", "bs", "bssplit", "iodepth", "numjobs", "rwmixread", "runtime_s", "io", "options",
               "log_interval_ms", "hist_log_ms"}
DEFAULT_P99_LIMIT_US = 1000.0


@dataclasses.dataclass(frozen=True)
class Matrix:
    name: str
    view: str
    axes: dict[str, list[Any]]  # every axis (single values are one-element lists), in file order
    fixed: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Phase:
    name: str
    workload: dict[str, Any]
    runtime_s: float | None
    io: float | None
    options: dict[str, str]
    log_interval_ms: int
    hist_log_ms: int | None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _options_table(source: str, where: str, raw: Any) -> dict[str, str]:
    """A suite file's `options` table: only the workload-shaping fio options of the allow-list pass."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise UsageError(f"{source}: options in {where} must be a table, e.g. options = {{ percentage_random = "
                         "\"80\" }")
    out = {}
    for k, v in raw.items():
        if not re.match(r"^[a-z_][a-z0-9_]*$", str(k)):
            raise UsageError(f"{source}: bad fio option name {k!r} in {where}")
        refusal = suite_option_refusal(str(k))
        if refusal:
            raise UsageError(f"{source}: fio option {k} in {where} is not allowed: {refusal}")
        if isinstance(v, (Mapping, list)):
            raise UsageError(f"{source}: fio option {k} in {where} takes one value, not a table or list")
        out[str(k)] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


class TomlSuite(Suite):
    """A suite whose plan is data: phases, then matrices expanded into test points."""

    def __init__(self, doc: Mapping[str, Any], *, source: str, name: str | None = None) -> None:
        self.source = source
        unknown = sorted(set(doc) - _TOP_KEYS)
        if unknown:
            raise UsageError(f"{source}: unknown key(s) {', '.join(unknown)}; use {', '.join(sorted(_TOP_KEYS))}")
        title = doc.get("name")
        if not isinstance(title, str) or not title:
            raise UsageError(f"{source}: a suite needs name = \"...\"")
        self.title = title
        self.name = name or title
        self.summary = str(doc.get("summary", f"user-defined suite {title}"))
        self.description = str(doc.get("description", ""))
        self.default_runtime_s = float(doc.get("runtime_s", 60.0))
        self.default_ramp_s = float(doc.get("ramp_s", 0.0))
        self.p99_limit_us = _finite(doc.get("p99_limit_us", DEFAULT_P99_LIMIT_US), "p99_limit_us", source)
        # stability views are judged only on limits that are set (in the file or with --cov-limit/--p99-limit)
        self.p99_limit_given = "p99_limit_us" in doc
        self.cov_limit_pct = (_finite(doc["cov_limit_pct"], "cov_limit_pct", source) if "cov_limit_pct" in doc
                              else None)
        view = str(doc.get("view", "matrix"))
        self._check_view(view)
        self.app: apps.AppModel | None = None
        self.translation: apps.Translation | None = None
        if "app" in doc:
            if not isinstance(doc["app"], Mapping):
                raise UsageError(f"{source}: [app] must be a table")
            self.app = apps.model_from_dict(title, doc["app"])
            self.translation = apps.translate(self.app)
        self.phases = [self._phase(i, p) for i, p in enumerate(_tables(doc.get("phase", []), "phase", source))]
        matrices = _tables(doc.get("matrix", []), "matrix", source)
        if not matrices:
            raise UsageError(f"{source}: a suite needs at least one [[matrix]]")
        self.matrices = [self._matrix(i, m, view) for i, m in enumerate(matrices)]
        names = [m.name for m in self.matrices] + [p.name for p in self.phases]
        if len(set(names)) != len(names):
            raise UsageError(f"{source}: phase and matrix names must be unique ({', '.join(names)})")
        self.writes = any(self._workload(m.fixed, c, 1.0, 0.0).writes for m in self.matrices
                          for c in sweeps.expand(m.axes)) or any(
            Workload(rw=ph.workload["rw"], bs=4096, rwmixread=ph.workload.get("rwmixread")).writes
            for ph in self.phases)

    # ---------------------------------------------------------------- parsing

    def _check_view(self, view: str) -> None:
        if view not in VIEWS:
            raise UsageError(f"{self.source}: unknown view {view!r}: use {', '.join(VIEWS)}")

    def _phase(self, i: int, d: Mapping[str, Any]) -> Phase:
        unknown = sorted(set(d) - _PHASE_KEYS)
        if unknown:
            raise UsageError(f"{self.source}: unknown key(s) {', '.join(unknown)} in phase {i + 1}")
        wl: dict[str, Any] = {}
        for key in ("rw", "bs", "iodepth", "numjobs", "rwmixread", "bssplit"):
            if key in d:
                values = sweeps.axis_values(key, d[key])
                if len(values) != 1:
                    raise UsageError(f"{self.source}: phase {key} takes one value, not a list")
                wl[key] = values[0]
        if "rw" not in wl or ("bs" not in wl and "bssplit" not in wl):
            raise UsageError(f"{self.source}: phase {i + 1} needs rw and bs")
        runtime = d.get("runtime_s")
        io = d.get("io")
        if (runtime is None) == (io is None):
            raise UsageError(f"{self.source}: phase {i + 1} needs exactly one of runtime_s or io (capacity multiple)")
        return Phase(name=_slug(str(d.get("name", f"phase{i + 1}"))), workload=wl,
                     runtime_s=float(runtime) if runtime is not None else None,
                     io=float(io) if io is not None else None,
                     options=_options_table(self.source, f"phase {i + 1}", d.get("options")),
                     log_interval_ms=int(d.get("log_interval_ms", 1000)),
                     hist_log_ms=int(d["hist_log_ms"]) if "hist_log_ms" in d else None)

    def _matrix(self, i: int, d: Mapping[str, Any], default_view: str) -> Matrix:
        unknown = sorted(set(d) - _FIXED_KEYS - set(sweeps.AXES))
        if unknown:
            raise UsageError(f"{self.source}: unknown key(s) {', '.join(unknown)} in matrix {i + 1}; axes are "
                             f"{', '.join(sweeps.AXES)}")
        view = str(d.get("view", default_view))
        self._check_view(view)
        axes: dict[str, list[Any]] = {}
        for key, raw in d.items():
            if key in sweeps.AXES:
                axes[key] = sweeps.axis_values(key, raw)
        if self.translation is not None:
            t = self.translation
            axes.setdefault("rw", [t.rw])
            if t.bssplit:
                axes.setdefault("bssplit", [t.bssplit])
            axes.setdefault("bs", [t.bs])
            if t.rwmixread is not None:
                axes.setdefault("rwmixread", [t.rwmixread])
        for key in ("rw", "bs"):
            if key not in axes and not (key == "bs" and "bssplit" in axes):
                raise UsageError(f"{self.source}: matrix {i + 1} needs {key}")
        axes.setdefault("iodepth", [1])
        axes.setdefault("numjobs", [1])
        rates = axes.get("rate", [])
        if any(isinstance(r, str) and r.endswith("%") for r in rates) and "max" not in rates:
            raise UsageError(f"{self.source}: matrix {i + 1} has rate percentages but no \"max\" point to measure")
        fixed = {k: d[k] for k in _FIXED_KEYS if k in d}
        options = dict(self.translation.options) if self.translation else {}
        options.update(_options_table(self.source, f"matrix {i + 1}", d.get("options")))
        fixed["options"] = options
        return Matrix(name=_slug(str(d.get("name", f"m{i + 1}"))), view=view, axes=axes, fixed=fixed)

    # ---------------------------------------------------------------- options

    def suite_options(self) -> list[SuiteOption]:
        """--axis always; --curve when a matrix has a rate curve; --phase-time with phases; --p99-limit."""
        opts = [SuiteOption("axis", "str", None, "replace a sweep axis: NAME=V1,V2 (e.g. bs=4k,64k, iodepth=1..32, "
                                                 "numjobs=1,4); repeatable; thins or widens any matrix",
                            repeat=True)]
        if len(self.matrices) > 1:
            opts.append(SuiteOption("matrices", "str", None, "run only these matrices (comma-separated names, "
                                                             "e.g. rnd-read,rnd-write); phases still run"))
        if any(isinstance(r, str) and r.endswith("%") for m in self.matrices for r in m.axes.get("rate", [])):
            opts.append(SuiteOption("curve", "str", None, "iorate curve points in % of the uncapped max "
                                                          "(default 10,50,70,80,90,100)"))
        if self.phases:
            opts.append(SuiteOption("phase-time", "float", None, "seconds for each time-based long phase "
                                                                 "(default: the suite's, e.g. 2 h and 8 h)"))
        if any(m.view == "lat-curve" for m in self.matrices):
            opts.append(SuiteOption("p99-limit", "float", None, f"p99 latency limit in µs called out on the "
                                                                f"curves (default {self.p99_limit_us:g})"))
        elif any(m.view == "stability" for m in self.matrices):
            opts.append(SuiteOption("p99-limit", "float", None, "stability: fail when the p99 of the measured "
                                                                "window exceeds this many µs"))
        if any(m.view == "stability" for m in self.matrices):
            opts.append(SuiteOption("cov-limit", "float", None, "stability: fail when the CoV of per-second IOPS "
                                                                "exceeds this many percent"))
        return opts

    def _axes_for(self, m: Matrix, ctx: PlanContext) -> dict[str, list[Any]]:
        overrides = sweeps.parse_axis_overrides(ctx.options.get("axis"))
        known = {k for mm in self.matrices for k in mm.axes}
        for name in overrides:
            if name not in known:
                raise UsageError(f"--axis {name}: no matrix of {self.title} sweeps {name} "
                                 f"(its axes: {', '.join(sorted(known))})")
        axes = {k: (overrides.get(k, v)) for k, v in m.axes.items()}
        if "rate" in axes and ctx.options.get("curve"):
            pcts = curves.parse_curve(ctx.options["curve"])
            rest = [r for r in axes["rate"] if not (isinstance(r, str) and r.endswith("%"))]
            axes["rate"] = rest + [f"{p:g}%" for p in pcts]
        return axes

    # ---------------------------------------------------------------- plan

    def _workload(self, fixed: Mapping[str, Any], combo: Mapping[str, Any], runtime: float, ramp: float,
                  ) -> Workload:
        rw = combo["rw"]
        mix = combo.get("rwmixread")
        rate = combo.get("rate")
        return Workload(
            rw=rw, bs=int(combo.get("bs", 4096)), iodepth=int(combo["iodepth"]), numjobs=int(combo["numjobs"]),
            rwmixread=int(mix) if mix is not None and rw in ("rw", "readwrite", "randrw") else None,
            runtime_s=runtime, ramp_s=ramp, bssplit=combo.get("bssplit"),
            rate_iops=rate if isinstance(rate, int) else None,
            random_distribution=fixed.get("random_distribution"),
            options=dict(fixed.get("options", {})),
            log_interval_ms=int(fixed["log_interval_ms"]) if "log_interval_ms" in fixed else None,
            hist_log_ms=int(fixed["hist_log_ms"]) if "hist_log_ms" in fixed else None,
        )

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        """Phases in order, then every matrix's points (curve rates resolved later from the max runs)."""
        points: list[TestPoint] = []
        for ph in self.phases:
            points.append(self._phase_point(len(points) + 1, ph, ctx))
        for m in self._selected(ctx):
            runtime = ctx.runtime_s if ctx.runtime_s is not None else float(m.fixed.get("runtime_s",
                                                                                        self.default_runtime_s))
            ramp = ctx.ramp_s if ctx.ramp_s is not None else float(m.fixed.get("ramp_s", self.default_ramp_s))
            axes = self._axes_for(m, ctx)
            swept = [k for k, v in axes.items() if len(v) > 1]
            max_ids: dict[str, str] = {}
            p99_limit_us = None
            if m.view == "lat-curve":
                limit = ctx.options.get("p99_limit")
                p99_limit_us = float(limit) if limit is not None else self.p99_limit_us
            for combo in sweeps.expand(axes):
                w = self._workload(m.fixed, combo, runtime, ramp)
                points.append(self._matrix_point(len(points) + 1, m, combo, swept, w, max_ids, p99_limit_us))
        return points

    def _selected(self, ctx: PlanContext) -> list[Matrix]:
        wanted = ctx.options.get("matrices")
        if not wanted:
            return list(self.matrices)
        names = [_slug(n) for n in str(wanted).split(",") if n.strip()]
        known = [m.name for m in self.matrices]
        bad = [n for n in names if n not in known]
        if bad:
            raise UsageError(f"--matrices {', '.join(bad)}: {self.title} has matrices {', '.join(known)}")
        return [m for m in self.matrices if m.name in names]

    def _phase_point(self, n: int, ph: Phase, ctx: PlanContext) -> TestPoint:
        wl = ph.workload
        runtime = ph.runtime_s
        if runtime is not None and ctx.options.get("phase_time") is not None:
            runtime = float(ctx.options["phase_time"])
        numjobs = int(wl.get("numjobs", 1))
        bs = int(wl.get("bs", 4096))
        io_bytes = None
        if ph.io is not None:
            per_job = int(ctx.capacity * ph.io / numjobs)
            io_bytes = max(bs, per_job - per_job % bs)
        w = Workload(rw=wl["rw"], bs=bs, iodepth=int(wl.get("iodepth", 1)), numjobs=numjobs,
                     rwmixread=wl.get("rwmixread"), runtime_s=runtime, bssplit=wl.get("bssplit"),
                     io_bytes=io_bytes, options=dict(ph.options), log_interval_ms=ph.log_interval_ms,
                     hist_log_ms=ph.hist_log_ms)
        amount = format_bytes(io_bytes * numjobs) if io_bytes else ""
        label = (f"phase {ph.name}: {w.rw} {format_bs(w.bs)} Q{w.iodepth}T{w.numjobs} "
                 + (f"for {runtime:g} s" if runtime is not None else f"{amount} ({ph.io:g}x active range)"))
        return TestPoint(id=f"{n:03d}-phase-{ph.name}", label=label, workload=w, phase="precondition",
                         group=ph.name, tags=PointTags.of(family=FAMILY, view="long-phase", suite_title=self.title,
                                                          matrix=ph.name))

    def _matrix_point(self, n: int, m: Matrix, combo: Mapping[str, Any], swept: list[str], w: Workload,
                      max_ids: dict[str, str], p99_limit_us: float | None) -> TestPoint:
        display = {k: _display(k, v) for k, v in combo.items()}
        slug_parts = [f"{_short(k)}{_slug(str(display[k]))}" for k in swept]
        pid = f"{n:03d}-{m.name}" + ("-" + "-".join(slug_parts) if slug_parts else "")
        tags = PointTags.of(family=FAMILY, view=m.view, suite_title=self.title, matrix=m.name, axes=display,
                            swept=swept)
        if p99_limit_us is not None:  # a latency curve's limit
            tags = tags.replace(p99_limit_us=p99_limit_us)
        if self.translation is not None:
            tags = tags.replace(translation=dict(self.translation.record))
        label = _label(m.name, w, combo)
        rate = combo.get("rate")
        if rate is not None:
            curve_key = f"{m.name}|" + "|".join(f"{k}={display[k]}" for k in combo if k != "rate")
            tags = tags.replace(curve=curve_key)
            if rate == "max":
                max_ids[curve_key] = pid
                tags = tags.replace(rate="max")
            elif isinstance(rate, str):
                tags = tags.replace(rate=rate, rate_pct=float(rate[:-1]), max_point=max_ids.get(curve_key, ""))
            else:
                tags = tags.replace(rate=rate, target_iops=rate)
                opts, _reads, _writes = curves.rate_options(rate, (w.rwmixread if w.rwmixread is not None else
                                                                 (100 if not w.writes else 0)) / 100.0,
                                                          w.numjobs, w.rw)
                w = dataclasses.replace(w, options={**w.options, **opts})
        return TestPoint(id=pid[:80], label=label, workload=w, group=m.name, tags=tags)

    def next_points(self, ctx: PlanContext, run: Run) -> list[TestPoint]:
        """Static points as planned; curve points get their rate from the stored uncapped max run."""
        ready, _ = curves.adaptive_next(self.plan(ctx), run)
        return ready

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        """Record curve points that could not run (their max run was skipped) and the verdict of every
        stability point (pass/fail on its limits, complete without limits)."""
        _, notes = curves.adaptive_next(self.plan(ctx), run)
        for note in notes:
            run = run.with_warning(note)
        cov = ctx.options.get("cov_limit")
        cov = self.cov_limit_pct if cov is None else float(cov)
        p99 = ctx.options.get("p99_limit")
        p99 = (self.p99_limit_us if self.p99_limit_given else None) if p99 is None else float(p99)
        from ssdlab.suites.stability import point_verdict

        for r in run.points:
            if r.point.phase == "measure" and r.point.tags.view == "stability":
                run = run.with_event(point_verdict(r, cov, p99))
        return run

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        """Curve, translation and footprint notes printed by `ssdlab plan`."""
        notes = []
        if any("rate" in m.axes for m in self.matrices):
            notes.append("curve points run at a % of the max IOPS measured by their uncapped run "
                         "(rate_iops per job, rate_process=poisson; see docs/translations.md)")
        if self.translation is not None:
            notes.append(f"application model {self.translation.record.get('model')}: fio "
                         + " ".join(f"{k}={v}" for k, v in self.translation.record.get("fio", {}).items()))
            notes.extend(f"  note: {n}" for n in self.translation.record.get("notes", []))
        if ctx.footprint is not None:
            notes.append(f"footprint: I/O limited to the first {format_bytes(ctx.footprint)} of the target")
        if ctx.misalign:
            notes.append(f"misalignment: every offset shifted by {ctx.misalign} B")
        return notes


def _finite(raw: Any, key: str, source: str) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise UsageError(f"{source}: {key} = {raw!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{source}: {key} = {raw!r} must be a positive finite number")
    return value


def _tables(raw: Any, key: str, source: str) -> list[Mapping[str, Any]]:
    if isinstance(raw, Mapping):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(x, Mapping) for x in raw):
        raise UsageError(f"{source}: [[{key}]] entries must be tables")
    return list(raw)


def _short(axis: str) -> str:
    return {"rw": "", "bs": "bs", "bssplit": "split", "iodepth": "q", "numjobs": "t", "rwmixread": "r",
            "rate": "rate"}.get(axis, axis)


def _display(axis: str, value: Any) -> Any:
    if axis == "bs":
        return format_bs(int(value))
    return value


def _label(matrix: str, w: Workload, combo: Mapping[str, Any]) -> str:
    size = w.bssplit if w.bssplit else format_bs(w.bs)
    if len(size) > 24:
        size = "mix"
    text = f"{matrix} {w.rw} {size} Q{w.iodepth}T{w.numjobs}"
    if w.rwmixread is not None:
        text += f" R{w.rwmixread}"
    rate = combo.get("rate")
    if rate == "max":
        text += " max"
    elif isinstance(rate, str):
        text += f" @{rate}"
    elif rate is not None:
        text += f" @{rate} IOPS"
    return text


def load_toml_text(text: str, source: str, name: str | None = None) -> TomlSuite:
    """A TomlSuite from TOML text (bad TOML or content -> UsageError naming the source)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{source} is not valid TOML: {exc}") from None
    return TomlSuite(doc, source=source, name=name)


def load_file(path: str | Path) -> TomlSuite:
    """A user suite file; its name is its absolute path so `ssdlab resume` can load it again."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise UsageError(f"suite file {p} does not exist (a name ending in .toml is read as a file)")
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read suite file {p}: {exc.strerror or exc}") from None
    return load_toml_text(text, str(p), name=str(p.resolve()))


def builtin_files() -> list[tuple[str, str]]:
    """(file name, text) of every built-in suite file under ssdlab/suites/data/."""
    assert __package__  # ssdlab.suites, whose data/ directory holds the files
    root = resources.files(__package__).joinpath("data")
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            out.append((entry.name, entry.read_text(encoding="utf-8")))
    return out
