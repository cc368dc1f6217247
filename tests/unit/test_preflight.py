"""Pre-flight validation: non-finite and huge values, oversized plans and suite refusals are one line and exit 2,
before any results directory exists."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import run_cli
from ssdlab.errors import ExitCode, UsageError
from ssdlab.results.model import Workload
from ssdlab.run import preflight
from ssdlab.run.target import parse_target
from ssdlab.suites.base import PlanContext
from ssdlab.suites.quick import QuickSuite
from ssdlab.targets.base import Target

SIM = "sim:tlc-4k?capacity=64MiB"


def refused(tmp_path: Path, *args: str, match: str) -> None:
    """`ssdlab run ... --out DIR` exits 2 with one error line containing `match` and leaves no DIR."""
    out = tmp_path / "out"
    res = run_cli("run", *args, "--out", str(out), traceback=False)
    assert res.code == ExitCode.USAGE, res.err
    assert len(res.err_lines) == 1, res.err
    assert res.err_lines[0].startswith("ssdlab: error: ")
    assert match in res.err_lines[0]
    assert "Traceback" not in res.err
    assert not out.exists()


@pytest.mark.parametrize(("value", "match"), [("nan", "--runtime nan is not a finite number"),
                                              ("inf", "--runtime inf is not a finite number"),
                                              ("=-inf", "--runtime -inf is not a finite number"),
                                              ("1e9", "--runtime 1e+09 is out of range"),
                                              ("0.01", "--runtime 0.01 is out of range")])
def test_non_finite_and_huge_runtimes(tmp_path: Path, value: str, match: str) -> None:
    args = ["--runtime" + value] if value.startswith("=") else ["--runtime", value]
    refused(tmp_path, "quick", "--target", "null", *args, match=match)


def test_non_finite_ramp_and_suite_options(tmp_path: Path) -> None:
    refused(tmp_path, "quick", "--target", "null", "--ramp", "nan", match="--ramp nan is not a finite number")
    refused(tmp_path, "pts-wsat", "--target", SIM, "--wsat-hours", "inf", match="--wsat-hours inf is not a finite")
    refused(tmp_path, "pts-wsat", "--target", SIM, "--wsat-fills", "-1", match="must be positive and finite")


def test_huge_axis_values(tmp_path: Path) -> None:
    refused(tmp_path, "sweep-qd", "--target", "null", "--axis", "iodepth=100000",
            match="iodepth 100000 is out of range: use 1 to 4096")
    refused(tmp_path, "sweep-qd", "--target", "null", "--axis", "numjobs=1..4096",
            match="numjobs 2048 is out of range: use 1 to 1024")


@pytest.mark.parametrize(("body", "match"), [
    ('rw = "randread"\nbs = "4k"\nnumjobs = [100000]', "numjobs 100000 is out of range"),
    ('rw = "randread"\nbs = "512..1e21"', "bad size '1e21'"),
    ('rw = "randread"\nbs = "2g"', "block size 2 GiB is out of range: use 1 B to 1 GiB"),
    ('rw = "randread"\nbs = "1g"', "block size 1 GiB is larger than the span it runs on (64 MiB)"),
    ('rw = ["read", "write", "randread", "randwrite"]\nbs = "512..64m"\niodepth = [' + ", ".join(map(str, range(1, 65)))
     + ']\nnumjobs = "1..1024"', "a matrix has 50,688 points, more than 50,000"),
])
def test_suite_files_with_huge_values(tmp_path: Path, body: str, match: str) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(f'name = "s"\n[[matrix]]\n{body}\n', encoding="utf-8")
    refused(tmp_path, str(suite), "--target", SIM, "--runtime", "0.1", match=match)


def test_plans_of_tens_of_thousands_of_points(tmp_path: Path) -> None:
    refused(tmp_path, "pts", "--target", SIM, "--runtime", "0.5", "--max-rounds", "1000",
            match="pts on this target has 70,452 points, more than 50,000")
    res = run_cli("plan", "pts", "--target", SIM, "--max-rounds", "1000", traceback=False)
    assert res.code == ExitCode.USAGE
    assert "more than 50,000" in res.err
    # the whole PTS family at its defaults (~11,400 points, worst case) is a plan ssdlab runs
    res = run_cli("plan", "pts", "--target", SIM, "--pts-tests", "all", traceback=False)
    assert res.code == 0, res.err


def test_the_suite_validate_hook_runs_before_anything_is_created(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, str]] = []

    def validate(self: QuickSuite, ctx: PlanContext, target: Target) -> None:
        seen.append((ctx.capacity, target.kind))
        raise UsageError("quick cannot run here: use a file target")

    monkeypatch.setattr(QuickSuite, "validate", validate)
    refused(tmp_path, "quick", "--target", SIM, "--runtime", "0.1", match="quick cannot run here")
    assert seen == [(64 * 1024**2, "sim")]


def test_check_plan_renders_every_point_once() -> None:
    target = parse_target(SIM)
    ctx = PlanContext(capacity=target.capacity(), target_kind="sim", runtime_s=0.1)
    points = preflight.check_plan(QuickSuite(), ctx, target)
    assert [p.id for p in points] == [p.id for p in QuickSuite().plan(ctx)]
    with pytest.raises(UsageError, match="iodepth 0 is out of range"):
        preflight.check_workload(Workload(rw="read", bs=4096, iodepth=0), "w")
    with pytest.raises(UsageError, match="rate 0 is out of range"):
        preflight.check_workload(Workload(rw="read", bs=4096, rate_iops=0), "w")
    with pytest.raises(UsageError, match="runtime nan is not a finite number"):
        preflight.check_workload(Workload(rw="read", bs=4096, runtime_s=float("nan")), "w")



def test_check_plan_renders_each_distinct_workload_once_and_still_refuses_a_bad_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ssdlab.fio.job import FioJob
    from ssdlab.suites import get_suite

    target = parse_target(SIM)
    ctx = PlanContext(capacity=target.capacity(), target_kind="sim", runtime_s=0.1)
    suite = get_suite("pts-iops")
    rendered: list[str] = []
    real_render = FioJob.render

    def render(job: FioJob) -> str:
        rendered.append(real_render(job))
        return rendered[-1]

    monkeypatch.setattr(FioJob, "render", render)
    points = preflight.check_plan(suite, ctx, target)
    distinct = {repr(p.workload) for p in points if p.phase != "purge"}
    assert len(points) > 2 * len(distinct)  # the rounds repeat the workloads
    assert len(rendered) == len(distinct)

    real_plan = suite.plan
    last = real_plan(ctx)[-1]
    late = dataclasses.replace(last, id="late", workload=dataclasses.replace(last.workload, options={"rate_iops": "x"}))
    monkeypatch.setattr(suite, "plan", lambda c: [*real_plan(c), late])  # a workload seen only at the plan's end
    with pytest.raises(UsageError, match="bad rate_iops"):
        preflight.check_plan(suite, ctx, target)


def test_a_point_reaching_past_the_span_is_refused_before_anything_exists(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A point whose offset + size passes the target's span (what the write gate would refuse at the fio
    boundary, after earlier points ran) is refused by the pre-flight check, naming the point and the byte."""
    path = tmp_path / "t.dat"
    with path.open("wb") as fh:
        fh.truncate(8 * 1024**2)
    target = parse_target(f"file:{path}")
    ctx = PlanContext(capacity=target.capacity(), target_kind="file", runtime_s=0.1)
    suite = QuickSuite()
    real_plan = suite.plan
    first = real_plan(ctx)[0]
    shifted = dataclasses.replace(first, id="shifted", workload=dataclasses.replace(first.workload, offset=4096))
    preflight.check_plan(suite, ctx, target)  # as planned: inside
    monkeypatch.setattr(suite, "plan", lambda c: [*real_plan(c), shifted])
    with pytest.raises(UsageError, match=rf"point shifted: job \[.*\] reaches byte {8 * 1024**2 + 4096} "):
        preflight.check_plan(suite, ctx, target)
