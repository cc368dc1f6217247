"""iorate targets, per-job rate split, p99 crossing, stability statistics and block-size skips."""

from __future__ import annotations

import pytest

from ssdlab.errors import UsageError
from ssdlab.results.model import TestPoint, Workload
from ssdlab.run.orchestrate import skip_reason
from ssdlab.suites import curves, stability
from ssdlab.suites.base import common_limits
from ssdlab.targets.null import NullTarget


@pytest.mark.parametrize(("max_iops", "pct", "target"), [
    (963000, 10, 96300), (963000, 50, 481500), (12345, 10, 1300), (12345, 5, 620), (900, 100, 900),
    (901, 100, 910), (0, 50, 5000), (1, 10, 10),
])
def test_target_rate_follows_vdbench_rounding(max_iops: float, pct: float, target: int) -> None:
    assert curves.target_rate(max_iops, pct) == target


def test_rate_options_per_job_and_direction() -> None:
    assert curves.rate_options(10000, 0.7, 4, "randrw") == (
        {"rate_iops": "1750,750", "rate_process": "poisson"}, 1750, 750)
    assert curves.rate_options(1001, 1.0, 2, "randread")[0]["rate_iops"] == "501"
    assert curves.rate_options(3000, 0.0, 1, "randwrite")[1:] == (0, 3000)


def test_parse_curve() -> None:
    assert curves.parse_curve(None) == (10, 50, 70, 80, 90, 100)
    assert curves.parse_curve("20%, 60,100") == (20, 60, 100)
    for bad in ("x", "0", ","):
        with pytest.raises(UsageError):
            curves.parse_curve(bad)


def test_p99_crossing_is_the_first_point_over_the_limit() -> None:
    pts = [(1000.0, 80.0, {}), (2000.0, 120.0, {}), (3000.0, 90.0, {}), (3500.0, 400.0, {})]
    assert curves.p99_crossing(pts, 100.0) == 1
    assert curves.p99_crossing(pts, 500.0) is None


def test_stability_stats_match_the_spreadsheet_formulas() -> None:
    st = stability.iops_stats([100.0, 102.0, 98.0, 101.0, 99.0])
    assert st is not None
    assert st.mean == 100.0
    assert st.stdev == pytest.approx(1.5811388)  # sample stdev, as STDEV()
    assert st.cov_pct == pytest.approx(1.5811388)
    assert (st.minimum, st.maximum, st.samples) == (98.0, 102.0, 5)
    assert stability.iops_stats([]) is None
    assert stability.total_iops_series({"read_iops": [1.0, 2.0], "write_iops": [3.0]}) == [4.0, 2.0]


class _Block4k(NullTarget):
    def logical_block_size(self) -> int:
        return 4096


def _point(bs: int, bssplit: str | None = None) -> TestPoint:
    return TestPoint(id="p", label="p", workload=Workload(rw="randread", bs=bs, bssplit=bssplit))


def test_block_sizes_below_the_logical_block_size_are_skipped_with_the_reason() -> None:
    target = _Block4k(spec="x", kind="block")
    assert "512 B is not a multiple" in skip_reason(_point(512), target)
    assert skip_reason(_point(8192), target) == ""
    reason = skip_reason(_point(512, "512/10:4k/90"), target)
    assert "512 B in bssplit" in reason
    assert skip_reason(_point(4096, "4k/50:64k/50,8k/100"), target) == ""


def test_common_limits() -> None:
    assert common_limits(1000 * 4096, 512, None, None) == (1000 * 4096, None, 0)
    assert common_limits(1 << 30, 512, "64MiB", None) == (64 << 20, 64 << 20, 0)
    assert common_limits(1 << 30, 512, None, 4096) == ((1 << 30) - 4096, None, 4096)
    for fp, mis, msg in (("0%", None, "out of range"), ("2GiB", None, "larger than"), (None, 100, "multiple"),
                         ("abc%", None, "bad --footprint")):
        with pytest.raises(UsageError, match=msg):
            common_limits(1 << 30, 512, fp, mis)


def test_complete_seconds_drops_the_partial_last_interval() -> None:
    assert stability.complete_seconds([10.0, 11.0, 12.0, 5.0], [1.0, 2.0, 3.0, 4.0]) == ([10.0, 11.0, 12.0],
                                                                                       [1.0, 2.0, 3.0])
    assert stability.complete_seconds([10.0, 11.0], [1.0, 2.0]) == ([10.0, 11.0], [1.0, 2.0])
    assert stability.complete_seconds([10.0, 11.0, 3.0], []) == ([10.0, 11.0], [1.0, 2.0])
