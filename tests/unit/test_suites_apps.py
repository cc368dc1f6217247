"""Application models -> fio: renormalisation, ratio mapping and the published tables of docs/translations.md."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssdlab.errors import UsageError
from ssdlab.suites import apps
from ssdlab.suites.base import PlanContext
from ssdlab.suites.characterization import builtin_suites

K = 1024


def _suite(name: str):  # type: ignore[no-untyped-def]
    return next(s for s in builtin_suites() if s.name == name)


@pytest.mark.parametrize(("name", "rwmixread", "bssplit", "dedupe", "comp"), [
    # workloads.md §2.1 table (Oracle writes: the source quotes the read shares for writes too)
    ("app-oracle", 83, "4k/28:8k/48:16k/24", "67", "67"),
    ("app-sql", 68, "8k/65:64k/35,4k/31:8k/39:64k/30", "50", "50"),
    ("app-vdi", 59, "4k/50:16k/21:32k/13:64k/16,4k/82:8k/18", "86", "88"),
    ("app-vsi", 57, "4k/41:8k/42:60k/17,4k/80:8k/20", "75", "75"),
])
def test_vdbench_models_translate_to_the_published_table(name: str, rwmixread: int, bssplit: str, dedupe: str,
                                                         comp: str) -> None:
    t = _suite(name).translation
    assert t is not None
    assert (t.rw, t.rwmixread, t.bssplit) == ("randrw", rwmixread, bssplit)
    assert t.options == {"percentage_random": "80", "dedupe_percentage": dedupe,
                         "buffer_compress_percentage": comp, "buffer_compress_chunk": "4k"}


def test_sql_record_lists_published_and_normalised_shares() -> None:
    t = _suite("app-sql").translation
    assert t is not None
    reads = t.record["directions"]["read"]
    assert reads["published"] == {"8K": 53.57, "64K": 28.75}
    assert reads["listed_sum"] == pytest.approx(82.32)
    assert reads["fio"] == {"8K": 65, "64K": 35}
    assert reads["mean_bs_kib"] == pytest.approx(27.6)
    assert any("17.68%" in n and "renormalised" in n for n in t.record["notes"])
    assert any("rwmixread=68" in n for n in t.record["notes"])


@pytest.mark.parametrize(("name", "rw", "mix", "bs", "bssplit", "options"), [
    ("iometer-fileserver", "randrw", 80, 512, "512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10", {}),
    ("iometer-webserver", "randread", None, 512,
     "512/22:1k/15:2k/8:4k/23:8k/15:16k/2:32k/6:64k/7:128k/1:512k/1", {}),
    ("iometer-database", "randrw", 67, 8 * K, None, {}),
    ("iometer-workstation", "randrw", 80, 8 * K, None, {"percentage_random": "80"}),
])
def test_iometer_specs(name: str, rw: str, mix: int | None, bs: int, bssplit: str | None,
                       options: dict[str, str]) -> None:
    t = _suite(name).translation
    assert t is not None
    assert (t.rw, t.rwmixread, t.bs, t.bssplit, dict(t.options)) == (rw, mix, bs, bssplit, options)
    assert not [n for n in t.record["notes"] if "renormalised" in n]  # these sum to 100 already


def test_app_suites_plan_an_iorate_curve_with_the_model_on_every_point() -> None:
    points = _suite("app-vsi").plan(PlanContext(capacity=1 << 30))
    assert [p.tags["rate"] for p in points] == ["max", "10%", "50%", "70%", "80%", "90%", "100%"]
    assert {p.workload.bssplit for p in points} == {"4k/41:8k/42:60k/17,4k/80:8k/20"}
    assert all(p.tags["translation"]["model"] == "VSI" for p in points)
    assert points[1].tags["max_point"] == points[0].id


def test_renormalise_largest_remainder() -> None:
    # Oracle reads: 22.1/37.3/19.12 of 78.52 -> 28.15/47.50/24.35 -> 28/48/24 (the .50 remainder wins)
    assert apps.renormalise({4 * K: 22.1, 8 * K: 37.3, 16 * K: 19.12}) == {4 * K: 28, 8 * K: 48, 16 * K: 24}
    assert apps.renormalise({4 * K: 1, 8 * K: 1, 16 * K: 1}) == {4 * K: 34, 8 * K: 33, 16 * K: 33}


@given(st.dictionaries(st.sampled_from([512 * i for i in range(1, 40)]), st.floats(0.01, 500), min_size=1,
                       max_size=12))
def test_renormalise_always_sums_to_100_and_stays_close(mix: dict[int, float]) -> None:
    out = apps.renormalise(mix)
    assert sum(out.values()) == 100
    total = sum(mix.values())
    for size, pct in out.items():
        assert abs(pct - mix[size] * 100 / total) < 1.0 + 1e-9


@pytest.mark.parametrize(("ratio", "pct"), [(1, 0), (2, 50), (3, 67), (4, 75), (7, 86), (8, 88)])
def test_ratio_mapping(ratio: float, pct: int) -> None:
    assert apps.ratio_to_pct(ratio) == pct


@pytest.mark.parametrize(("d", "message"), [
    ({"read_pct": 120, "mix": {"4k": 100}}, "outside 0..100"),
    ({"read_pct": 50, "mix": {"1000": 100}}, "multiple of 512"),
    ({"read_pct": 50, "read_mix": {"4k": 100}}, "write block-size mix is empty"),
    ({"read_pct": 50, "mix": {"4k": 100}, "dedupratio": 0.5}, "at least 1"),
    ({"read_pct": 50, "mix": {"4k": 100}, "colour": "red"}, "unknown key"),
    ({"mix": {"4k": 100}}, "needs read_pct"),
])
def test_bad_models_are_usage_errors(d: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        apps.model_from_dict("m", d)
