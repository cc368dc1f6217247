"""The regression gate: --fail-on rules, their evaluation, and exit codes through a CI shell script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ssdlab.compare import gate
from ssdlab.compare.matching import compare, run_data
from ssdlab.errors import UsageError
from ssdlab.results.store import load_run
from stored_runs import SCHEMA1, copy_run

SCRIPT = Path(__file__).parents[2] / "scripts" / "gate-firmware.sh"


@pytest.mark.parametrize(("text", "metric", "threshold", "scope"), [
    ("read_iops:-5%", "read_iops", -0.05, None),
    ("iops:5%", "iops", -0.05, None),  # no sign: the regression direction (IOPS fall)
    ("write_p99_99_us:+20%", "write_p99_99_us", 0.2, None),
    ("write_p99.99_us:20%", "write_p99_99_us", 0.2, None),  # latency regresses upwards
    ("iops:-5%:pts-iops", "iops", -0.05, "pts-iops"),
    ("lat_mean_us:+10%:iops/rnd4k-*", "lat_mean_us", 0.1, "iops/rnd4k-*"),
])
def test_parse_rule(text: str, metric: str, threshold: float, scope: str | None) -> None:
    rule = gate.parse_rule(text)
    assert (rule.metric, rule.scope) == (metric, scope)
    assert rule.threshold == pytest.approx(threshold)


@pytest.mark.parametrize(("text", "msg"), [
    ("speed:-5%", "unknown metric 'speed'"),
    ("iops:-5", "in percent"),
    ("iops:+5%", "would fail on an improvement"),
    ("lat_mean_us:-5%", "would fail on an improvement"),
    ("iops:0%", "non-zero"),
    ("iops", "METRIC:THRESHOLD"),
    ("iops:abc%", "not a percentage"),
])
def test_bad_rules_say_what_is_wrong(text: str, msg: str) -> None:
    with pytest.raises(UsageError, match=msg):
        gate.parse_rule(text)


def test_a_significant_regression_fails(tmp_path: Path) -> None:
    slower = copy_run("series-sim", tmp_path / "slow", scale=0.9)
    cmp = compare([run_data(load_run(SCHEMA1 / "series-sim"), "base", SCHEMA1 / "series-sim"),
                   run_data(load_run(slower), "new", slower)])
    result = gate.evaluate(cmp, [gate.parse_rule("iops:-5%")])
    assert not result.passed
    assert {f.key for f in result.failures} == {"001-rand-randread-q1", "002-rand-randread-q8",
                                                "003-rand-randwrite-q1", "004-rand-randwrite-q8"}
    assert all(f.change == pytest.approx(-0.1) for f in result.failures)
    assert "-10.0% vs base" in result.failures[0].text("base")
    # a threshold the change does not reach passes; so does a scope that leaves the points out
    assert gate.evaluate(cmp, [gate.parse_rule("iops:-20%")]).passed
    scoped = gate.evaluate(cmp, [gate.parse_rule("iops:-5%:*randread*")])
    assert {f.key for f in scoped.failures} == {"001-rand-randread-q1", "002-rand-randread-q8"}


def test_an_unjudgeable_change_fails_only_when_strict(tmp_path: Path) -> None:
    """Quick runs carry one value per point: a 10 % drop is listed but cannot fail the gate without --strict."""
    slower = copy_run("quick-file", tmp_path / "slow", scale=0.9)
    cmp = compare([run_data(load_run(SCHEMA1 / "quick-file"), "base", SCHEMA1 / "quick-file"),
                   run_data(load_run(slower), "new", slower)])
    lax = gate.evaluate(cmp, [gate.parse_rule("iops:-5%")])
    assert lax.passed
    assert len(lax.held) == 8
    assert all(f.judgement is not None and f.judgement.verdict == "cannot judge" for f in lax.held)
    strict = gate.evaluate(cmp, [gate.parse_rule("iops:-5%")], strict=True)
    assert len(strict.failures) == 8


def test_missing_points_fail_only_when_strict(tmp_path: Path) -> None:
    fewer = copy_run("series-sim", tmp_path / "fewer", drop={"002-rand-randread-q8"})
    cmp = compare([run_data(load_run(SCHEMA1 / "series-sim"), "base", SCHEMA1 / "series-sim"),
                   run_data(load_run(fewer), "new", fewer)])
    assert gate.evaluate(cmp, [gate.parse_rule("iops:-5%")]).passed
    strict = gate.evaluate(cmp, [gate.parse_rule("iops:-5%")], strict=True)
    assert [f.key for f in strict.failures] == ["002-rand-randread-q8"]
    assert "not measured in both runs" in strict.failures[0].text("base")


def test_a_rule_that_reaches_nothing_is_an_error() -> None:
    cmp = compare([run_data(load_run(SCHEMA1 / "series-sim"), "a", SCHEMA1),
                   run_data(load_run(SCHEMA1 / "series-sim"), "b", SCHEMA1)])
    with pytest.raises(UsageError, match="reaches no compared point"):
        gate.evaluate(cmp, [gate.parse_rule("iops:-5%:pts-*")])


# ---------------------------------------------------------------- the CI script


def _script(*args: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=300, check=False)


def test_gate_script_exit_codes(tmp_path: Path) -> None:
    base = SCHEMA1 / "series-sim"
    same = copy_run("series-sim", tmp_path / "same", scale=1.01)  # +1 %: no regression
    slower = copy_run("series-sim", tmp_path / "slower", scale=0.9)  # -10 % IOPS at every point
    ok = _script(base, same, tmp_path / "ok")
    assert ok.returncode == 0, ok.stderr
    assert "gate: candidate accepted" in ok.stdout
    assert (tmp_path / "ok" / "compare.html").is_file()
    assert (tmp_path / "ok" / "junit.xml").is_file()
    bad = _script(base, slower, tmp_path / "bad")
    assert bad.returncode == 1, bad.stderr
    assert "REJECTED" in bad.stdout
    assert "gate: FAILED: 4 regression(s)" in bad.stderr
    assert "FAIL candidate 002-rand-randread-q8 iops -10.0% vs baseline" in bad.stderr
    wrong = _script(base, slower, tmp_path / "x", "--fail-on", "iops:+5%")
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines()[-1].startswith("ssdlab: error: --fail-on 'iops:+5%' would fail")
    unreadable = _script(base, tmp_path / "nowhere", tmp_path / "y")
    assert unreadable.returncode == 2
    assert "could not compare (exit 2)" in unreadable.stdout


def test_the_gate_view_marks_failures_and_changes_past_a_threshold(tmp_path: Path) -> None:
    from ssdlab.report import compare as compare_report

    slower = copy_run("quick-file", tmp_path / "slow", scale=0.9)
    cmp = compare([run_data(load_run(SCHEMA1 / "quick-file"), "base", SCHEMA1 / "quick-file"),
                   run_data(load_run(slower), "new", slower)])
    lax = str(compare_report.build_view(cmp, gate.evaluate(cmp, [gate.parse_rule("iops:-5%")])).gate_tables)
    assert lax.count("class='num over'") == 8  # past -5 %, not failing: marked, with the reason
    assert "-10.0% against the -5% threshold of iops: past it, but not failing (cannot judge)" in lax
    assert "fail'" not in lax
    strict = gate.evaluate(cmp, [gate.parse_rule("iops:-5%")], strict=True)
    failed = str(compare_report.build_view(cmp, strict).gate_tables)
    assert failed.count("class='num worse fail'") == 8
    assert "over'" not in failed
