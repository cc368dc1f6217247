"""`ssdlab sim validate`'s figures: each classified as a calibration input (naming the parameters set from it) or
as evidence (measured under its review's stated conditions), verdicts and worst ratios over evidence only, and the
input rows' parameters really setting what the row measures (on the S3500, the cheapest preset).

The whole validation takes minutes (docs/sim.md): here only the classification (no simulation), the judging on
made-up measurements, one preset's inputs perturbed, and one cheap preset's evidence measured against what
presets.REVIEWS records for reports.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from ssdlab.sim.lab import cov_pct, low_share
from ssdlab.sim.presets import PARAM_KEYS, PRESETS, REVIEWS, calibration, resolve
from ssdlab.sim.procedures import PTS_MIXES, PTS_SIZES, SEEDS, Procedure, Runs, Seeds, review_steady
from ssdlab.sim.reviews import (
    CHECKS,
    PTS_TABLES,
    RATIO_HI,
    RATIO_LO,
    ROLES,
    TABLES,
    Figure,
    Row,
    counted,
    evidence,
    given,
    judge,
    table,
    worst_ratio,
)
from ssdlab.sim.tables import PresetResult, families, format_preset, summarize

SOURCE = re.compile(r"^seed 00[0-4] l\.\d+")
ALL = {preset: make() for preset, make in TABLES.items()}
PROC = Procedure("p", "seed 000 l.1", "4K random read, T1 x Q1", "the whole drive", "laid out", "1 s")


def rows_of(role: str) -> list[tuple[str, Figure]]:
    return [(preset, f) for preset, figures in ALL.items() for f in figures if f.role == role]


# ------------------------------------------------------------------ classification (no simulation)

def test_every_figure_has_a_role_a_check_and_a_seed_line() -> None:
    for preset, figures in ALL.items():
        assert figures, preset
        for f in figures:
            assert f.role in ROLES, (preset, f.name)
            assert f.check in CHECKS, (preset, f.name)
            assert SOURCE.match(f.source), (preset, f.name, f.source)
        names = [f.name for f in figures]
        assert len(names) == len(set(names)), f"{preset}: a figure listed twice"


@pytest.mark.parametrize(("preset", "figure"), rows_of("input"), ids=lambda x: x if isinstance(x, str) else x.name)
def test_an_input_names_the_parameters_set_from_it(preset: str, figure: Figure) -> None:
    assert figure.params, "an input row names the parameters set from it"
    assert set(figure.params) <= set(PARAM_KEYS)
    assert len(figure.fit) > 20, "and says how they were set"
    assert figure.measure is not None


@pytest.mark.parametrize(("preset", "figure"), rows_of("evidence"),
                         ids=lambda x: x if isinstance(x, str) else x.name)
def test_evidence_states_the_reviews_conditions(preset: str, figure: Figure) -> None:
    p = figure.procedure
    assert p is not None, "evidence is measured under a stated procedure"
    assert not figure.params, "no parameter was set from evidence"
    for text in (p.name, p.shape, p.footprint, p.precondition, p.duration):
        assert text.strip()
    assert re.search(r"T\d+ x Q\d+", p.shape), "threads x queue depth"
    assert re.search(r"\d+(\.\d+)? (s|min|h)\b", p.duration), "a duration"
    assert p.seed.startswith(figure.source.split(" l.")[0] + " l."), "the seed lines of the figure's review"
    assert figure.measure is not None


def test_figures_the_model_cannot_measure_say_why() -> None:
    for _preset, f in rows_of("none"):
        assert f.measure is None
        assert len(f.note) > 20


# what the audit (issue 33) found: a figure compared with a parameter set from it is an input
INPUTS = {
    ("p5430", "4K random read T4 x Q64, mean"): "ctrl_kiops",
    ("p5430", "VDBench 4K random read Q32T8, max"): "ctrl_kiops",
    ("p5430-op", "VDBench 4K random read Q32T8, max (OP: unchanged)"): "ctrl_kiops",
    ("p5430", "4K random read T1 x Q1, p99"): "fw_cv",
    ("p5430", "4K random read T1 x Q1, p99.99"): "fw_cv",
    ("p5430", "4K random read T4 x Q64, p99.99"): "read_planes",
    ("p5430", "ezFIO 4K 70/30 steady state, CoV of 1-s IOPS"): "gc_band",
    ("p5430-op", "ezFIO 4K 70/30 steady state, CoV of 1-s IOPS (12.75 TB)"): "gc_band",
    ("p5430", "VDBench 4K random read Q32T8, 15 W mode"): "idle_w",
    ("p5430", "VDBench 4K random write Q32T8, 10 W mode"): "e_prog_uj",
    ("s3500", "4K sequential read"): "ctrl_kiops",
    ("s3500", "4K random read"): "ctrl_kiops",
    ("s3500", "4K random write, not 4K-aligned (new drive)"): "slowpath_kiops",
    ("s3500", "1M sequential read"): "host_mbps",
    ("pe321", "128K sequential read"): "host_mbps",
    ("p5316", "1M sequential read, per drive"): "host_mbps",
    ("p5430", "VDBench 4K 70/30 Q32T8, max"): "resume_us",  # fitted on the mechanisms' side of issue 33
}
EVIDENCE = {
    ("p5430", "4K random write steady state, IOPS 12.75 TB / 15.36 TB"),
    ("p5430", "ezFIO 4K 70/30 steady state, mean"),
    ("p5430", "VDBench 4K 70/30 Q32T8, 10 W mode"),
    ("p5430-op", "VDBench 4K random write Q32T8, max (12.75 TB)"),
    ("pe321", "4K 70/30 p99.99 at QD512"),
    ("pe321", "ACT 300x: reads over 1 ms, average (max 3.58 %)"),
    ("p5316", "64K random write, per drive"),
    ("s3500", "Iometer file server"),
    ("cd5", "PTS IOPS 4K 0/100"),
    ("cm5-r", "PTS IOPS 1024K 100/0"),
}


def test_the_audited_figures_are_classified_as_found() -> None:
    by_name = {(preset, f.name): f for preset, figures in ALL.items() for f in figures}
    for key, param in INPUTS.items():
        assert by_name[key].role == "input", key
        assert param in by_name[key].params, key
    for key in EVIDENCE:
        assert by_name[key].role == "evidence", key


def test_the_toshiba_iops_tables_are_evidence_with_the_reviews_caveat() -> None:
    for model in ("cd5", "cm5-r"):
        cells = {f.name: f for f in ALL[model] if f.name.startswith("PTS IOPS ")}
        assert len(cells) == len(PTS_MIXES) * len(PTS_SIZES) == 49
        first, published = PTS_TABLES[model]
        four_k = cells["PTS IOPS 4K 0/100"]
        assert four_k.value == published[4][0]
        assert four_k.source == f"seed 004 l.{first}"
        assert cells["PTS IOPS 1024K 100/0"].value == published[1024][-1]
        for f in cells.values():
            assert f.role == "evidence"
            assert f.procedure is not None
            assert "saturation" in f.procedure.caveat
            assert "CPU" in f.procedure.caveat
            assert "T16 x Q8" in f.procedure.shape


def test_tail_figures_are_percentiles() -> None:
    for _preset, f in rows_of("evidence") + rows_of("input"):
        if f.tail:
            assert re.search(r"p99(\.\d+)?", f.name), f.name


def test_the_evidence_count_reports_print_is_the_tables() -> None:
    assert set(REVIEWS) == set(TABLES)
    for preset, figures in ALL.items():
        assert REVIEWS[preset].evidence == sum(f.role == "evidence" for f in figures), preset


def test_calibration_states_the_count_and_the_worst_ratio_as_measured() -> None:
    text = calibration("p5430")
    review = REVIEWS["p5430"]
    assert "seed 000" in text
    assert f"{review.evidence} " in text
    assert f"{review.worst:.2f}" in text
    assert "0.75-1.33" not in text or "every figure" not in text
    assert "not calibrated" in calibration("tlc-4k")


# ------------------------------------------------------------------ judging (made-up measurements)

def const(value: float) -> Callable[[Runs], float]:
    return lambda _runs: value


def test_an_evidence_row_out_of_band_fails_and_says_why() -> None:
    seeds = Seeds()
    fast = judge(evidence("x", 100.0, "IOPS", "seed 000 l.1", PROC, const(140.0)), seeds)
    assert not fast.ok
    assert "1.40x too high" in fast.why
    slow = judge(evidence("x", 100.0, "IOPS", "seed 000 l.1", PROC, const(70.0)), seeds)
    assert not slow.ok
    assert "too low" in slow.why
    assert judge(evidence("x", 100.0, "IOPS", "seed 000 l.1", PROC, const(130.0)), seeds).ok
    assert not judge(evidence("x", 1.0, "ms", "seed 000 l.1", PROC, const(1.2), check="below"), seeds).ok
    assert judge(evidence("x", 1.0, "ms", "seed 000 l.1", PROC, const(1.2), check="above"), seeds).ok
    assert not judge(evidence("x", 1.0, "ms", "seed 000 l.1", PROC, const(1.0), check="above"), seeds).ok
    assert judge(evidence("x", 0.0, "%", "seed 000 l.1", PROC, const(0.0), check="atmost"), seeds).ok
    assert not judge(evidence("x", 0.0, "%", "seed 000 l.1", PROC, const(0.01), check="atmost"), seeds).ok


def test_an_input_is_shown_and_never_fails() -> None:
    row = judge(given("x", 100.0, "IOPS", "seed 000 l.1", ("ctrl_kiops",), "set from it, as a test says",
                      const(300.0)), Seeds())
    assert row.ok
    assert not row.counted
    assert row.ratio == pytest.approx(3.0)


def test_a_tail_figure_is_the_median_over_seeds_with_its_spread() -> None:
    seen = []

    def per_seed(runs: Runs) -> float:
        seen.append(runs.seed)
        return 100.0 + 10 * runs.seed

    row = judge(evidence("p99.99", 130.0, "µs", "seed 000 l.1", PROC, per_seed, tail=True), Seeds())
    assert seen == list(SEEDS)
    assert row.measured == pytest.approx(100.0 + 10 * sorted(SEEDS)[len(SEEDS) // 2])
    assert row.spread == (110.0, 100.0 + 10 * max(SEEDS))


def test_the_worst_ratio_and_the_verdict_cover_evidence_only() -> None:
    seeds = Seeds()
    rows = [judge(evidence("a", 1.0, "x", "seed 000 l.1", PROC, const(v)), seeds) for v in (1.2, 0.8, 1.1)]
    rows.append(judge(given("b", 1.0, "x", "seed 000 l.1", ("tprog",), "fitted to it in a test", const(3.0)), seeds))
    rows.append(judge(evidence("c", 1.0, "x", "seed 000 l.1", PROC, const(5.0), check="below"), seeds))
    assert worst_ratio(rows) == pytest.approx(0.8)  # not the input's 3.0, nor the bound's 5.0
    assert [r.figure.name for r in counted(rows)] == ["a", "a", "a", "c"]
    res = PresetResult("p5430", rows, [])
    assert res.failed_evidence == 1  # the bound; the input far off does not count
    text = "\n".join(format_preset(res))
    assert "evidence: 4 rows, 1 fail, worst ratio 0.80" in text
    assert "calibration inputs: 1 rows" in text
    assert "set from it: tprog=" in text
    assert max(len(line) for line in format_preset(res)) <= 110


def test_the_review_steady_state_criterion() -> None:
    assert review_steady([100.0, 101.0, 99.0, 100.0])
    assert not review_steady([100.0, 120.0, 140.0, 160.0])  # the fitted line spans 46 % of the mean


def test_consistency_figures() -> None:
    assert low_share([100.0] * 999 + [50.0]) == pytest.approx(50.0 / 99.95, rel=1e-3)
    assert cov_pct([1.0, 1.0, 1.0]) == 0.0


# ------------------------------------------------------------------ the model (S3500: the cheapest preset)

def perturbed(values: dict[str, object], key: str) -> str:
    v = values[key]
    if isinstance(v, tuple):
        return "/".join(f"{x * 1.25:g}" for x in v)
    return f"{float(v) * 1.25:g}"  # type: ignore[arg-type]


@pytest.mark.parametrize("figure", [f for f in ALL["s3500"] if f.role == "input"], ids=lambda f: f.name)
def test_an_input_moves_with_the_parameters_it_names(figure: Figure) -> None:
    """What an input row measures is set by its parameters: 25 % more of them moves it by at least 5 %."""
    assert figure.measure is not None
    base = figure.measure(Runs())
    values = resolve("s3500", {})
    changed = {k: perturbed(values, k) for k in figure.params}
    moved = figure.measure(Runs(overrides=changed))
    assert abs(moved / base - 1) >= 0.05, (figure.name, changed, base, moved)


def test_the_cheapest_preset_measures_as_reports_say() -> None:
    rows = table("s3500")
    assert [r.figure.name for r in rows] == [f.name for f in ALL["s3500"]]
    ev = counted(rows)
    assert len(ev) == REVIEWS["s3500"].evidence
    assert sum(not r.ok for r in ev) == REVIEWS["s3500"].failed
    worst = worst_ratio(rows)
    assert worst is not None
    assert round(worst, 2) == REVIEWS["s3500"].worst
    for r in ev:
        if r.figure.check == "ratio":
            assert r.ok == (RATIO_LO <= (r.ratio or 0) <= RATIO_HI)
    assert all(r.ok for r in rows if not r.counted)
    assert all(isinstance(r, Row) for r in rows)


def test_every_calibrated_preset_has_a_table_and_every_preset_exists() -> None:
    assert set(TABLES) <= set(PRESETS)


def test_validate_says_when_the_record_reports_print_is_stale() -> None:
    from ssdlab.commands.sim import _stale

    seeds = Seeds()
    rows = [judge(evidence("a", 1.0, "x", "seed 002 l.1", PROC, const(1.2)), seeds)]
    (line,) = _stale([summarize(PresetResult("s3500", rows, []))])
    r = REVIEWS["s3500"]
    assert line.startswith(f"s3500: 1 evidence rows, 0 fail, worst 1.20; presets.REVIEWS records {r.evidence}, "
                           f"{r.failed}, {r.worst:.2f}")
    assert _stale([summarize(PresetResult("tlc-4k", [], []))]) == []


def test_presets_that_share_experiments_are_measured_together() -> None:
    groups = families(["tlc-4k", "p5430", "pe321", "p5430-op", "cd5", "cm5-r"])
    assert groups == [["tlc-4k"], ["p5430", "p5430-op"], ["pe321"], ["cd5", "cm5-r"]]
