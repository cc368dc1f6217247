"""Presets and `sim:PRESET?key=value` parsing of the simulated SSD."""

from __future__ import annotations

import pytest

from ssdlab.errors import UsageError
from ssdlab.run.target import parse_target
from ssdlab.sim.presets import CELL_DEFAULTS, PARAM_KEYS, PRESETS, core_params, resolve, retry_share


def test_required_presets_exist_and_resolve() -> None:
    for name in ("tlc-4k", "qlc-4k", "qlc-64k", "slc-4k"):
        values = resolve(name, {})
        assert set(values) == set(PARAM_KEYS)
        assert values == resolve(name, {})  # pure


def test_default_preset_is_the_p5430() -> None:  # the calibrated preset the README's main job runs on
    target = parse_target("sim")
    assert target.kind == "sim"
    assert target.name == "sim:p5430"
    assert target.engine() == "sim"


def test_overrides_apply_with_units() -> None:
    values = resolve("qlc-64k", {"op": "28", "power": "15", "buffer": "32MiB", "capacity": "1GiB"})
    assert values["op"] == 28.0
    assert values["power"] == 15.0
    assert values["buffer"] == 32 * 1024**2
    assert values["capacity"] == 1024**3
    assert values["iu"] == 65536


def test_cell_sets_timings_unless_given() -> None:
    assert resolve("tlc-4k", {"cell": "qlc"})["tprog"] == CELL_DEFAULTS["qlc"]["tprog"]
    assert resolve("tlc-4k", {"cell": "qlc", "tprog": "1500"})["tprog"] == (1500.0,)
    assert resolve("tlc-4k", {"tr": "40/60/80"})["tr"] == (40.0, 60.0, 80.0)
    assert resolve("slc-4k", {})["tr"] == CELL_DEFAULTS["slc"]["tr"]


def test_unknown_key_is_one_line_listing_valid_keys() -> None:
    with pytest.raises(UsageError) as err:
        parse_target("sim:qlc-64k?opp=28")
    text = str(err.value)
    assert "\n" not in text
    assert "opp" in text
    for key in ("op", "iu", "power", "capacity"):
        assert key in text


@pytest.mark.parametrize(("query", "fragment"), [
    ("iu=3k", "outside"), ("op=abc", "not a valid"), ("gc=lru", "greedy"), ("power=4", "idle"),
    ("iu=32k&planes=1", "divide"), ("capacity=100000000", "multiple"),
])
def test_bad_values_are_usage_errors(query: str, fragment: str) -> None:
    with pytest.raises(UsageError, match=fragment):
        parse_target(f"sim:tlc-4k?{query}")


def test_unknown_preset() -> None:
    with pytest.raises(UsageError, match="unknown sim preset"):
        parse_target("sim:mlc-8k")


def test_core_params_are_numeric() -> None:
    params = core_params(resolve("tlc-4k", {"gc": "fifo"}))
    assert params["gc_policy"] == 1.0
    assert all(isinstance(v, float) for v in params.values())
    assert "cell" not in params


def test_every_preset_summary_names_its_capacity() -> None:
    for preset in PRESETS.values():
        assert "GiB" in preset.summary


def test_missing_native_core_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    import ssdlab.sim
    from ssdlab.errors import TargetError
    from ssdlab.sim import core

    core()  # loaded once, so the test also covers an already-imported package
    monkeypatch.delattr(ssdlab.sim, "_core", raising=False)
    monkeypatch.setitem(sys.modules, "ssdlab.sim._core", None)  # import of the extension fails
    with pytest.raises(TargetError, match="pip install"):
        core()


def test_times_per_page_type_must_fit_the_cell() -> None:
    assert resolve("p5430", {"tr": "80"})["tr"] == (80.0,)
    with pytest.raises(UsageError, match="qlc has 4"):
        resolve("p5430", {"tr": "60/70"})
    with pytest.raises(UsageError, match="1 to 4 values"):
        resolve("tlc-4k", {"tr": "1/2/3/4/5"})
    with pytest.raises(UsageError, match=r"e\.g\. 60"):
        resolve("tlc-4k", {"tr": "fast"})


def test_new_parameters_have_ranges() -> None:
    for key, bad in (("tvar", "31"), ("susp_max", "-1"), ("suspend", "2"), ("wear", "1.5"), ("read_planes", "9"),
                     ("retry", "101"), ("cmd_bytes", "-5"), ("gc_band", "65")):
        with pytest.raises(UsageError, match=key):
            resolve("tlc-4k", {key: bad})


def test_retry_share_grows_with_wear_and_age() -> None:
    fresh = retry_share(resolve("tlc-4k", {}))
    worn = retry_share(resolve("tlc-4k", {"wear": "1"}))
    aged = retry_share(resolve("tlc-4k", {"age": "30"}))
    assert worn == pytest.approx(10 * fresh)
    assert aged == pytest.approx(2 * fresh)
    assert retry_share(resolve("tlc-4k", {"retry": "50", "wear": "1", "age": "365"})) == 1.0


def test_preset_timings_win_over_their_cells_defaults() -> None:
    assert resolve("p5430", {})["tr"] == (66.0, 80.0, 94.0, 108.0)
    assert resolve("p5430", {"cell": "tlc"})["tr"] == CELL_DEFAULTS["tlc"]["tr"]  # another cell: its defaults


def test_core_params_spread_the_page_types() -> None:
    c = core_params(resolve("tlc-4k", {"tprog": "500"}))
    assert (c["bits"], c["tr0"], c["tr2"], c["tprog0"], c["tprog2"]) == (3.0, 42.0, 80.0, 500.0, 500.0)
