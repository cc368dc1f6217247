"""Comparisons of stored runs: matching points, ratios, significance per data kind, points in some runs only."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from ssdlab.compare import matching as comparison
from ssdlab.compare.matching import compare, run_data
from ssdlab.results.store import load_run
from stored_runs import SCHEMA1, SCHEMA2, copy_run


def _data(path: Path, label: str) -> comparison.RunData:
    return run_data(load_run(path), label, path)


def test_pts_window_averages_and_ratios_match_the_raw_run_json() -> None:
    """op28 / op7 from compare equals the ratio of window averages computed here from run.json directly."""
    a, b = SCHEMA1 / "pts-iops-op7", SCHEMA1 / "pts-iops-op28"
    cmp = compare([_data(a, "op7"), _data(b, "op28")])

    def window_iops(path: Path) -> dict[str, list[float]]:
        doc = json.loads((path / "run.json").read_text(encoding="utf-8"))
        window = next(e["window"] for e in doc["events"] if e.get("kind") == "pts-steady-state")
        out: dict[str, list[float]] = {}
        for p in doc["points"]:
            tags = p["point"]["tags"]
            if tags.get("round") in window and p["measurement"]["directions"]:
                out.setdefault(tags["key"], []).append(sum(d["iops"] for d in p["measurement"]["directions"].values()))
        return {k: v for k, v in out.items() if len(v) == len(window)}

    wa, wb = window_iops(a), window_iops(b)
    checked = 0
    for key in set(wa) & set(wb):
        row = next(r for r in cmp.rows if r.key == f"iops/{key}")
        base, cell = row.cells["iops"]
        assert base.value is not None
        assert cell.value is not None
        assert base.value.value == pytest.approx(statistics.fmean(wa[key]))
        assert cell.ratio == pytest.approx(statistics.fmean(wb[key]) / statistics.fmean(wa[key]))
        assert sorted(cell.value.samples) == pytest.approx(sorted(wb[key]))  # the window rounds are the samples
        assert row.points[1] is not None
        assert row.points[1].sample_kind == "window rounds"
        checked += 1
    assert checked >= 6
    # the 28 % OP drive writes 4K randomly far faster at steady state, and the data says so
    cell = next(r for r in cmp.rows if r.key == "iops/rnd4k-0-100").cells["iops"][1]
    assert cell.ratio is not None
    assert cell.ratio > 3
    assert cell.judgement is not None
    assert cell.judgement.verdict == "significant"


def test_scaled_copy_has_the_known_ratio_everywhere(tmp_path: Path) -> None:
    b = copy_run("series-sim", tmp_path / "b", scale=1.25)
    cmp = compare([_data(SCHEMA1 / "series-sim", "a"), _data(b, "b")])
    assert len(cmp.common_rows()) == 4
    assert not cmp.partial_rows()
    for row in cmp.rows:
        for metric in ("iops", "bw_MBps"):
            assert row.cells[metric][1].ratio == pytest.approx(1.25)
        assert row.cells["lat_mean_us"][1].ratio == pytest.approx(1.0)  # latency was not scaled
        iops = row.cells["iops"][1]
        assert iops.value is not None
        assert len(iops.value.samples) == 9
        assert iops.judgement is not None
        assert iops.judgement.verdict == "significant"
        # no change, no verdict of change; the same samples give p = 1
        lat = row.cells["lat_mean_us"][1].judgement
        assert lat is not None
        assert lat.verdict == "not significant"
        # a percentile has no per-interval samples: it cannot be judged, never "significant"
        p99 = row.cells["p99_us"][1].judgement
        assert p99 is not None
        assert p99.verdict == "cannot judge"
    assert cmp.geomean("iops", 1) == (pytest.approx(1.25), 4)


def test_a_run_against_itself_changes_nothing() -> None:
    d = _data(SCHEMA1 / "pts-iops-op7", "a")
    cmp = compare([d, d])
    for row in cmp.common_rows():
        for cells in row.cells.values():
            if cells[1].ratio is not None:
                assert cells[1].ratio == pytest.approx(1.0)
                assert cells[1].judgement is not None
                assert not cells[1].judgement.significant


def test_points_in_some_runs_only_are_listed_not_dropped(tmp_path: Path) -> None:
    b = copy_run("quick-file", tmp_path / "b", drop={"03-rnd4k-q32t1-read"})
    cmp = compare([_data(SCHEMA1 / "quick-file", "a"), _data(b, "b")])
    partial = cmp.partial_rows()
    assert [r.key for r in partial] == ["03-rnd4k-q32t1-read"]
    assert partial[0].present == (True, False)
    assert len(cmp.common_rows()) == 7
    # a quick run logs no per-interval values: every difference is "cannot judge"
    for row in cmp.common_rows():
        j = row.cells["iops"][1].judgement
        assert j is not None
        assert j.verdict == "cannot judge"


def test_disjoint_runs_have_no_common_point() -> None:
    cmp = compare([_data(SCHEMA1 / "quick-file", "quick"), _data(SCHEMA1 / "pts-iops-op7", "pts")])
    assert cmp.common_rows() == []
    assert {r.present for r in cmp.partial_rows()} == {(True, False), (False, True)}
    assert len(cmp.rows) == 8 + 9


def test_pts_curves_and_facts() -> None:
    d = _data(SCHEMA1 / "pts-iops-op28", "op28")
    names = [c.name for c in d.curves]
    assert names == ["IOPS RND 4 KiB 0/100", "IOPS RND 64 KiB 65/35", "IOPS RND 1024 KiB 100/0"]
    assert all(len(c.x) == 5 for c in d.curves)
    facts = comparison.run_facts(d)
    assert facts["over-provisioning"].startswith("28% (simulator preset)")
    assert facts["threads x queue depth"] == "T4Q32 (TOIO 128)"
    assert facts["scaled"].startswith("yes: test points run 0.1 s instead of 60 s")


def test_interval_samples_leave_out_the_partial_last_interval() -> None:
    from ssdlab.results.model import Measurement

    m = Measurement(engine="fio", engine_version="3.33", directions={},
                    series={"time_s": [1.0, 2.0, 3.0, 3.4], "read_iops": [10.0, 12.0, 11.0, 2.0],
                            "write_iops": [5.0, 5.0, 6.0, 1.0], "read_lat_mean_us": [100.0, 90.0, 95.0, 80.0],
                            "write_lat_mean_us": [200.0, 200.0, 210.0, 300.0]})
    s = comparison.interval_samples(m)
    assert s["iops"] == [15.0, 17.0, 17.0]
    assert s["lat_mean_us"][0] == pytest.approx((100 * 10 + 200 * 5) / 15)


def test_metric_names_accept_both_spellings() -> None:
    assert comparison.metric_name("write_p99.99_us") == comparison.metric_name("write_p99_99_us") == \
        "write_p99_99_us"
    with pytest.raises(KeyError):
        comparison.metric_name("speed")


# ---------------------------------------------------------------- results schema 2 (points log, PTS demand tests)


def test_dirth_window_averages_and_captures_match_the_raw_run_json() -> None:
    """DIRTH op28 / op7 (schema 2): each TC x QD point is the mean over the steady-state window rounds (its
    samples), each capture is compared by role, as computed here from run.json directly."""
    a, b = SCHEMA2 / "pts-dirth-op7", SCHEMA2 / "pts-dirth-op28"
    cmp = compare([_data(a, "op7"), _data(b, "op28")])

    def raw(path: Path) -> tuple[dict[str, list[float]], dict[str, float]]:
        doc = json.loads((path / "run.json").read_text(encoding="utf-8"))
        window = next(e["window"] for e in doc["events"] if e.get("kind") == "pts-steady-state")
        sweep: dict[str, list[float]] = {}
        captures: dict[str, float] = {}
        for p in doc["points"]:
            tags, m = p["point"]["tags"], p["measurement"]
            iops = sum(d["iops"] for d in m["directions"].values()) if m else 0.0
            if tags.get("stage") == "sweep" and tags["round"] in window:
                sweep.setdefault(f"t{tags['tc']:02d}q{tags['qd']:02d}", []).append(iops)
            elif tags.get("stage") == "hist":
                for role in tags["roles"]:
                    captures[role] = iops
        return sweep, captures

    (sa, ca), (sb, cb) = raw(a), raw(b)
    assert len(sa) == 4
    for key in sa:
        row = next(r for r in cmp.rows if r.key == f"dirth/{key}")
        assert row.family == "pts-dirth"
        base, cell = row.cells["iops"]
        assert base.value is not None
        assert cell.value is not None
        assert base.value.value == pytest.approx(statistics.fmean(sa[key]))
        assert cell.ratio == pytest.approx(statistics.fmean(sb[key]) / statistics.fmean(sa[key]))
        assert sorted(cell.value.samples) == pytest.approx(sorted(sb[key]))
        assert row.points[1] is not None
        assert row.points[1].sample_kind == "window rounds"
    for role in ("max", "mid", "min"):
        row = next(r for r in cmp.rows if r.key == f"dirth/h-{role}")
        assert row.family == comparison.CAPTURES
        assert row.cells["iops"][1].ratio == pytest.approx(cb[role] / ca[role])
    # no sweep round is compared a second time by its point id
    assert not [r.key for r in cmp.rows if r.key.startswith("dirth-")]
    # the drive with more spare area sustains more IOPS at the top load, and the data says so
    top = next(r for r in cmp.rows if r.key == "dirth/t04q04").cells["iops"][1]
    assert top.ratio is not None
    assert top.ratio > 1.2
    assert top.judgement is not None
    assert top.judgement.verdict == "significant"
    curves = _data(b, "op28").curves
    assert [c.name for c in curves] == ["DIRTH IOPS at T4Q4"]
    assert len(curves[0].x) == 5
    assert comparison.run_facts(_data(a, "op7"))["threads x queue depth"].startswith("TC 4,1 x QD 4,1 sweep")
    assert "TC x QD sweep was reduced" in comparison.run_facts(_data(a, "op7"))["scaled"]


def test_points_in_the_log_of_a_killed_schema2_run_are_compared(tmp_path: Path) -> None:
    """The killed run's finished points live only in points.jsonl; a scaled copy compares at the known ratio,
    judged on their per-interval samples."""
    src = SCHEMA2 / "series-sim-killed"
    assert json.loads((src / "run.json").read_text(encoding="utf-8"))["points"] == []
    b = copy_run("series-sim-killed", tmp_path / "b", scale=0.8, source=SCHEMA2)
    cmp = compare([_data(src, "a"), _data(b, "b")])
    assert len(cmp.common_rows()) == 2
    for row in cmp.common_rows():
        cell = row.cells["iops"][1]
        assert cell.ratio == pytest.approx(0.8)
        assert cell.value is not None
        assert len(cell.value.samples) >= 50
        assert cell.judgement is not None
        assert cell.judgement.verdict == "significant"


def test_runs_of_both_schema_versions_compare(tmp_path: Path) -> None:
    """A schema-1 run against a schema-2 run of the same suite: the points both finished are compared, the rest
    listed, and the header shows the schema versions differ."""
    cmp = compare([_data(SCHEMA1 / "series-sim", "v1"), _data(SCHEMA2 / "series-sim-killed", "v2")])
    assert len(cmp.common_rows()) == 2
    assert {r.present for r in cmp.partial_rows()} == {(True, False)}
    assert len(cmp.partial_rows()) == 2
    assert [comparison.run_facts(rd)["results schema"] for rd in cmp.runs] == ["1", "2"]
