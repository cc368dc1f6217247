"""The PTS family: which tests `pts` runs (--pts-tests), in which order, and which options apply to what."""

from __future__ import annotations

from typing import Any

import pytest
from tests.unit.test_pts_rounds import ctx, flat, simulate

from ssdlab.errors import UsageError
from ssdlab.suites import get_suite
from ssdlab.suites.pts import family


def test_default_selection_is_the_readme_main_job() -> None:
    assert family.parse_selection(None) == ("iops", "tp", "lat", "wsat")
    assert family.parse_selection("") == ("iops", "tp", "lat", "wsat")


def test_selection_runs_in_the_spec_order_whatever_the_order_given() -> None:
    assert family.parse_selection("wsat, LAT,iops") == ("iops", "lat", "wsat")
    assert family.parse_selection("all") == tuple(family.family())
    order = list(family.family())
    ranks = [family.FAMILY_ORDER.index(k) for k in order]
    assert ranks == sorted(ranks)


@pytest.mark.parametrize("text", ["foo", "iops,foo", ",", "all,iops"])
def test_unknown_tests_are_one_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--pts-tests"):
        family.parse_selection(text)


def test_pts_plans_only_the_selected_tests_in_order() -> None:
    pts = get_suite("pts")
    ids = [p.id for p in pts.plan(ctx(pts_tests="wsat,lat", max_rounds=5))]
    assert ids[0] == "lat-0-purge"
    assert "wsat-0-purge" in ids
    assert ids.index("wsat-0-purge") > max(i for i, x in enumerate(ids) if x.startswith("lat-"))
    assert not any(x.startswith(("iops-", "tp128-", "tp1024-")) for x in ids)


def test_options_of_tests_not_in_the_run_are_refused() -> None:
    with pytest.raises(UsageError, match=r"--wsat-fills applies to the WSAT test.*--pts-tests"):
        get_suite("pts").plan(ctx(pts_tests="lat", wsat_fills=2.0))
    with pytest.raises(UsageError, match="--pts-block-sizes applies to the IOPS test"):
        get_suite("pts").plan(ctx(pts_tests="tp", pts_block_sizes="1024,64,4"))
    get_suite("pts").plan(ctx(pts_tests="lat", wsat_fills=4.0))  # the default value is not a choice


def test_single_test_suites_declare_only_their_options() -> None:
    def names(suite: str) -> set[str]:
        return {o.name for o in get_suite(suite).suite_options()}

    assert "wsat-fills" in names("pts-wsat")
    assert "wsat-fills" not in names("pts-iops")
    assert "pts-block-sizes" in names("pts-iops")
    assert "pts-tests" not in names("pts-iops")
    assert {"pts-tests", "wsat-fills", "pts-block-sizes"} <= names("pts")


def test_a_selected_run_concludes_every_selected_test() -> None:
    options: dict[str, Any] = {"pts_tests": "lat,wsat", "max_rounds": 5, "wsat_hours": 3 / 60}
    run = simulate(get_suite("pts"), ctx(**options), flat)
    kinds = [e["kind"] for e in run.events]
    assert kinds.count("pts-steady-state") == 1  # LAT only
    assert "pts-wsat" in kinds
    assert [p.point.id for p in run.points][-2:] == ["wsat-s0003", "wsat-hist"]  # the samples, then the capture
