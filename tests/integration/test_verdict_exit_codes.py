"""`echo $?` tells the truth: every verdict kind through the CLI on the simulated SSD (deterministic: seeded
model, virtual time), the verdict panel in the console and the report, and invalid points on a simulated stall."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CliRunner
from ssdlab.errors import ExitCode
from ssdlab.results.store import load_run
from ssdlab.results.verdict import run_verdicts

pytestmark = pytest.mark.integration

SMALL = "sim:tlc-4k?capacity=64MiB"
UNSETTLED = "sim:qlc-4k?capacity=64MiB"  # its mixed points still move after 6 rounds of 0.1 s
# one die behind one channel, 100 ms programs and a 64 KiB buffer: a write stalls for seconds
STALL = "sim:tlc-4k?capacity=64MiB&tprog=100000&channels=1&dies=1&buffer=64KiB"
IOPS_3X3 = ("--pts-block-sizes", "1024,64,4", "--pts-mixes", "100/0,65/35,0/100")


def _pts(cli: CliRunner, out: Path, target: str, rounds: int, *extra: str) -> tuple[int, str]:
    res = cli("run", "pts-iops", "--target", target, "--runtime", "0.1", "--max-rounds", str(rounds), *IOPS_3X3,
              "--out", out, *extra)
    return res.code, res.err


def test_pts_steady_exits_0_and_says_at_which_round(cli: CliRunner, tmp_path: Path) -> None:
    # (the model's drive varies from second to second: its 64 KiB 65/35 point settles in rounds 3-7)
    code, err = _pts(cli, tmp_path / "r", SMALL, 8, "--no-report")
    assert code == ExitCode.OK, err
    v = run_verdicts(load_run(tmp_path / "r"))
    assert [(t.test, t.kind, t.round) for t in v.tests] == [("iops", "steady", 7)]
    assert "steady at round 7" in err
    assert "verdict: steady at round 7 (exit code 0)" in err


def test_pts_not_steady_exits_1_everywhere(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "r"
    code, err = _pts(cli, out, UNSETTLED, 5)
    assert code == ExitCode.NEGATIVE, err
    assert "not steady" in err
    assert "SS NOT ACHIEVED in 5 rounds" in err
    assert "WSAT sample" not in err  # the console summary is the verdict panel, not the last points
    html = (out / "report.html").read_text(encoding="utf-8")
    head = html[:html.index('id="results"')]
    assert '<span class="badge v-not-steady">not steady</span>' in head  # never "complete" in green
    assert "Verdict: not steady" in head
    assert 'class="badge st-complete"' not in head
    for repr_text in ("=True", "=False", "{'", "steady: False"):  # events and options are text, not reprs
        assert repr_text not in html
    assert cli("report", out).code == ExitCode.NEGATIVE  # the same mapping for `report` ...
    res = cli("resume", out, "-q", "--no-report")  # ... and for `resume` of a finished run
    assert res.code == ExitCode.NEGATIVE
    assert "already complete" in res.err


def test_a_stalled_point_is_invalid_and_its_test_incomplete(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "r"
    code, err = _pts(cli, out, STALL, 5)
    assert code == ExitCode.NEGATIVE, err
    assert "running it again for" in err
    run = load_run(out)
    invalid = [p for p in run.points if p.status == "invalid"]
    assert invalid
    first = invalid[0]
    assert first.measurement is not None  # kept, so the report can show what it did
    assert "fewer than the 256 a valid point needs" in first.reason
    assert "up to 16x its planned 0.1 s" in first.reason
    assert first.point.workload.runtime_s == pytest.approx(1.6)
    assert not any(p.point.id.startswith("iops-r02") for p in run.points)  # the test stopped: never steady
    v = run_verdicts(run)
    assert [(t.test, t.kind) for t in v.tests] == [("iops", "incomplete")]
    assert first.point.label in v.tests[0].reason
    ev = next(e for e in run.events if e.get("kind") == "pts-steady-state")
    assert ev["steady"] is False
    html = (out / "report.html").read_text(encoding="utf-8")
    assert '<span class="badge v-incomplete">incomplete</span>' in html
    assert '<span class="badge st-invalid">invalid</span>' in html
    assert "INCOMPLETE, not determined" in html


@pytest.mark.parametrize(("limits", "code", "kind"), [((), 0, "complete"), (("--cov-limit", "50"), 0, "pass"),
                                                      (("--cov-limit", "0.001"), 1, "fail"),
                                                      (("--p99-limit", "1"), 1, "fail")])
def test_stability_limits_are_verdicts(cli: CliRunner, tmp_path: Path, limits: tuple[str, ...], code: int,
                                       kind: str) -> None:
    res = cli("run", "stability", "--target", SMALL, "--runtime", "3", "--ramp", "0", "--axis", "numjobs=2",
              "--axis", "iodepth=4", *limits, "--out", tmp_path / "r", "--no-report")
    assert res.code == code, res.err
    v = run_verdicts(load_run(tmp_path / "r"))
    assert [t.kind for t in v.tests] == [kind]
    assert "CoV" in v.tests[0].reason
    assert ("(limit " in v.tests[0].reason) is bool(limits)
