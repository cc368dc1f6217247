"""The host-CPU flag on real fio: null-engine points pinned to one CPU (cpus_allowed).

fio's null engine completes every I/O at once, so its job threads never wait: pinned to CPU 0, that CPU is
saturated whatever else the machine does. The assertions are on the flag's logic given the utilisation ssdlab
measured and stored, never on throughput, so a loaded CI machine changes the numbers, not the outcome. Each point
runs 1 s (about 20 sampling intervals): the sampled window also holds fio's start-up, the artefacts' fsyncs and
the teardown, and with 0.3 s points on a busy host those idle intervals once made up half of them (median 66.7 %).
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


def test_null_engine_pinned_to_one_cpu_is_flagged_host_limited(tmp_path: Path, cli: CliRunner) -> None:
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
        # the stored flag is exactly the rule applied to the stored numbers
        expected = hostload.assess(m.usr_cpu + m.sys_cpu, cpu["submitting_busy_pct"], numjobs=p.point.workload.numjobs,
                                   submitting_count=1, online_cpus=cpu["online_cpus"], null_target=True)
        assert orchestrate.host_limit(p.point, m, "null").saturated == expected.saturated
        assert bool(m.extra.get("host_limit", {}).get("saturated")) == expected.saturated
        # a pinned null engine leaves its CPU no idle time, on an idle or a loaded host alike
        assert cpu["submitting_busy_pct"] >= hostload.SATURATED_PCT, cpu
        assert expected.saturated
        assert any(w.startswith("host CPU limit:") and "cpus_allowed" in w for w in p.warnings)
    two = points[1].measurement
    assert two is not None
    if two.usr_cpu + two.sys_cpu < hostload.SATURATED_PCT:  # two jobs share CPU 0: only /proc/stat sees it
        assert "the 1 CPU(s) fio was allowed to use were" in points[1].warnings[0]
    assert "host CPU limit:" in res.err  # the console says it too
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "⚠ host-limited" in html
    assert "2 of 2 measured points ran with the submitting CPUs saturated" in html
