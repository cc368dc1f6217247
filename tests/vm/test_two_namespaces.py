"""Two namespaces of one controller in one run: the consent names both, the write cache (a controller-wide
feature) is set once and put back as it was, and each namespace's health counters and bytes are its own, as the
controller's per-namespace SMART logs count them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from test_quick_nvme import DATA_UNIT, feature, fio_bytes, smart
from vmlab import Lab, Run


@dataclass(frozen=True)
class Pair:
    run: Run
    cache_before: int
    cache_after: int
    smart_before: dict[int, dict[str, Any]]
    smart_after: dict[int, dict[str, Any]]


@pytest.fixture(scope="module")
def pair(lab: Lab) -> Pair:
    cache_before = feature(lab, 6)
    before = {n: smart(lab, n) for n in (1, 2)}
    run = lab.ssdlab("run", "quick", "--target", lab.ns(1), "--target", lab.ns(2), "--capacity", "16MiB",
                     "--runtime", "1", "--write-cache", "off", "--yes", "--no-report", out="two-namespaces")
    after = {n: smart(lab, n) for n in (1, 2)}
    return Pair(run, cache_before, feature(lab, 6), before, after)


def test_both_namespaces_are_named_and_the_run_completes(lab: Lab, pair: Pair) -> None:
    assert pair.run.rc == 0, pair.run.res.describe()
    err = pair.run.res.stderr
    for nsid in (1, 2):
        assert f"ALL DATA on {lab.ns(nsid)} (QEMU NVMe Ctrl, SSDLAB-NVME-A, 256 MiB)" in err


def test_the_write_cache_is_set_once_for_the_controller_and_restored(lab: Lab, pair: Pair) -> None:
    assert pair.cache_before & 1 == 1
    assert pair.cache_after == pair.cache_before  # Get Features: back to what it was
    both = f"{lab.ns(1)} and {lab.ns(2)} (one controller, {lab.ctrl_a})"
    assert f"write cache of {both} set to disabled for this run (was enabled)" in pair.run.res.stderr
    settings = pair.run.run_json()["health"]["settings"]
    assert len(settings) == 1
    assert settings[0]["devices"] == [lab.ns(1), lab.ns(2)]
    assert settings[0]["restored"]


def test_each_namespace_counts_its_own_bytes(lab: Lab, pair: Pair) -> None:
    assert pair.run.out is not None
    entries = {e["path"]: e for e in pair.run.run_json()["health"]["devices"]}
    for nsid in (1, 2):
        dev = lab.ns(nsid)
        snaps = entries[dev]["snapshots"]
        before = next(s for s in snaps if s["when"] == "before")
        after = next(s for s in snaps if s["when"] == "after")
        assert after["counter_scope"] == f"namespace {nsid}"
        ours = after["health"]["data_units_written"] - before["health"]["data_units_written"]
        device = int(pair.smart_after[nsid]["data_units_written"]) - int(pair.smart_before[nsid]["data_units_written"])
        assert ours == device
        written = fio_bytes(pair.run.out, "write", filename=dev)
        assert written > 0
        assert abs(device * DATA_UNIT - written) < DATA_UNIT
        assert f"bytes written: by the test {written:,}, by the drive's own counter {ours * DATA_UNIT:,}" in \
            pair.run.res.stderr
