"""Presets and `sim:PRESET?key=value` parsing of the simulated SSD."""

from __future__ import annotations

import pytest

from ssdlab.errors import UsageError
from ssdlab.run.target import parse_target
from ssdlab.sim.presets import CELL_DEFAULTS, PARAM_KEYS, PRESETS, core_params, resolve


def test_required_presets_exist_and_resolve() -> None:
    for name in ("tlc-4k", "qlc-4k", "qlc-64k", "slc-4k"):
        values = resolve(name, {})
        assert set(values) == set(PARAM_KEYS)
        assert values == resolve(name, {})  # pure


def test_default_preset_is_tlc_4k() -> None:
    target = parse_target("sim")
    assert target.kind == "sim"
    assert target.name == "sim:tlc-4k"
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
    assert resolve("tlc-4k", {"cell": "qlc", "tprog": "1500"})["tprog"] == 1500.0
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
