"""The host-CPU flag on real fio: null-engine points pinned to one CPU (cpus_allowed).

fio's null engine completes every I/O at once, so its job threads never wait: pinned to CPU 0, that CPU is saturated
whatever else the machine does. The null engine measures exactly that host ceiling, so none of it is flagged (issue
34: it was, with an "expected" note under every point); the sampling is still stored. The assertions are on the
flag's logic given the utilisation ssdlab measured and stored, never on throughput, so a loaded CI machine changes
the numbers, not the outcome. Each point runs 1 s (about 20 sampling intervals): the sampled window also holds fio's
start-up, the artefacts' fsyncs and the teardown, and with 0.3 s points on a busy host those idle intervals once
made up half of them (median 66.7 %).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CliRunner
from ssdlab.results.store import load_run
from ssdlab.run import hostload, orchestrate

pytestmark = pytest.mark.integration

SUITE = """name = "pinned-null"
summary = "null engine pinned to CPU 0, one and two jobs"
runtime_s = 1.0

[[matrix]]
name = "pinned"
rw = ["randread"]
bs = ["4k"]
iodepth = [1]
numjobs = [1, 2]
options = { cpus_allowed = "0" }
"""


def test_null_engine_pinned_to_one_cpu_is_sampled_but_not_flagged(tmp_path: Path, cli: CliRunner) -> None:
    suite = tmp_path / "pinned.toml"
    suite.write_text(SUITE, encoding="utf-8")
    out = tmp_path / "run"
    res = cli("run", str(suite), "--target", "null", "--out", str(out))
    assert res.code == 0, res.err
    run = load_run(out)
    points = run.ok_points()
    assert [p.point.workload.numjobs for p in points] == [1, 2]
    for p in points:
        m = p.measurement
        assert m is not None
        cpu = m.extra["host_cpu"]
        assert cpu["available"] is True
        assert cpu["submitting_cpus"] == "0"  # sampled on the pinned CPU only
        assert cpu["submitting_count"] == 1
        assert cpu["intervals"] >= 3
        # a pinned null engine leaves its CPU no idle time, on an idle or a loaded host alike
        assert cpu["submitting_busy_pct"] >= hostload.SATURATED_PCT, cpu
        # ... and still nothing is flagged on null: the stored outcome is the rule applied to the stored numbers
        assert not orchestrate.host_limit(p.point, m, "null").saturated
        assert "host_limit" not in m.extra
        assert not hostload.saturated(m)
        assert not any("host CPU" in w for w in p.warnings)
    assert "host CPU limit" not in res.err
    assert "expected" not in res.err
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "⚠ host-limited" not in html
    assert "0 of 2 measured points were made with fio's submitting threads saturated" in html
