"""Drive health on a real loop device: every piece says "not available: why", settings are refused up front.

Needs root and util-linux; the loop device is detached in the fixture's teardown whatever happens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import LoopFactory, run_cli
from ssdlab.errors import ExitCode
from ssdlab.results.store import load_run

pytestmark = [pytest.mark.integration, pytest.mark.root]
MiB = 1024**2

SUITE = """name = "one-read"
summary = "one short read point"
runtime_s = 0.2

[[matrix]]
name = "read"
rw = ["randread"]
bs = ["4k"]
iodepth = [4]
"""


def test_loop_device_health_is_not_available_and_settings_are_refused(loops: LoopFactory,
                                                                       tmp_path: Path) -> None:
    loop = loops.create("health", 32 * MiB)
    suite = tmp_path / "one.toml"
    suite.write_text(SUITE, encoding="utf-8")

    refused = tmp_path / "refused"
    res = run_cli("run", suite, "--target", loop.dev, "--write-cache", "off", "--out", refused, traceback=False)
    assert res.code == ExitCode.USAGE, res.err
    assert res.err_lines == [f"ssdlab: error: --write-cache: {loop.dev} is not an NVMe or SATA/SAS drive "
                             "(nothing to set on it)"]
    assert not refused.exists()  # refused before anything was created

    out = tmp_path / "run"
    res = run_cli("run", suite, "--target", loop.dev, "--out", out)
    assert res.code == 0, res.err
    run = load_run(out)
    snaps = run.health["devices"][0]["snapshots"]
    assert [s["when"] for s in snaps] == ["before", "after"]
    for s in snaps:
        assert s["available"] is False
        assert s["reason"].startswith(f"{loop.dev} is a loop device backed by {loop.backing}")
        assert s["link"]["available"] is False
        assert "virtual block device" in s["link"]["reason"]
    assert run.health["available"] is False
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"not available: {loop.dev} is a loop device" in html
    assert "% of PCIe" not in html

    info = run_cli("info", loop.dev)
    assert f"health:    not available: {loop.dev} is a loop device" in info.out
