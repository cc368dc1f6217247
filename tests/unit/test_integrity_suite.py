"""The integrity suite's plan, manifest and verdict (pure functions over a stored run), and `ssdlab verify`'s
identity check."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import CliRunner
from ssdlab.commands.verify import identity_problems
from ssdlab.errors import ExitCode, UsageError
from ssdlab.fio.job import build_job
from ssdlab.results.model import DirectionStats, Measurement, PointResult, Run, TestPoint
from ssdlab.suites import get_suite
from ssdlab.suites.base import PlanContext
from ssdlab.suites.integrity import MANIFEST_EVENT, IntegritySuite, manifest, verdict

MiB = 1024**2


def _ctx(**options: Any) -> PlanContext:
    return PlanContext(capacity=4 * MiB, target_kind="block", logical_block_size=512, runtime_s=1.0,
                       options={o.key: o.default for o in IntegritySuite().suite_options()} | options)


def test_plan_writes_then_checks_the_whole_span() -> None:
    write, check = IntegritySuite().plan(_ctx())
    assert (write.id, write.workload.rw, write.workload.size, write.workload.bs) == ("01-write", "write", 4 * MiB,
                                                                                    4096)
    assert write.workload.options["verify"] == "crc32c"
    assert write.workload.options["do_verify"] == "0"
    assert (check.id, check.workload.rw, check.workload.size) == ("02-check", "read", 4 * MiB)
    assert check.workload.options["continue_on_error"] == "all"  # every mismatch, not the first
    assert check.tags["readonly"] is True


def test_job_files_carry_the_verify_options() -> None:
    write, check = IntegritySuite().plan(_ctx(checksum="sha256", seed=99))
    text = build_job(write, {"filename": "/dev/loop9", "ioengine": "libaio", "direct": 1}).render()
    assert "verify=sha256\n" in text
    assert "randseed=99\n" in text
    assert "rw=write\n" in text
    assert "verify=sha256\n" in build_job(check, {"filename": "/dev/loop9"}).render()


def test_mixed_mode_checks_while_a_random_workload_runs() -> None:
    points = IntegritySuite().plan(_ctx(mixed=True, verify_backlog=16))
    assert [p.id for p in points] == ["01-write", "02-mixed", "03-check"]
    mixed = points[1]
    writer, load = mixed.streams
    assert (writer.rw, writer.iodepth, writer.options["verify_backlog"], writer.options["do_verify"]) == (
        "randwrite", 1, "16", "1")
    assert load.rw == "randread"
    assert "verify" not in load.options
    assert writer.runtime_s == load.runtime_s == 1.0


@pytest.mark.parametrize("kind", ["null", "sim"])
def test_targets_that_store_no_data_are_refused(kind: str) -> None:
    with pytest.raises(UsageError, match=r"stores no data|timing, not data"):
        IntegritySuite().plan(PlanContext(capacity=4 * MiB, target_kind=kind))


def test_bad_block_sizes_are_refused() -> None:
    with pytest.raises(UsageError, match="block-size"):
        IntegritySuite().plan(_ctx(block_size=64))
    with pytest.raises(UsageError, match="larger than the span"):
        IntegritySuite().plan(_ctx(block_size=8 * MiB))


def test_run_refuses_the_null_engine_before_creating_a_results_dir(cli: CliRunner, tmp_path: Any) -> None:
    out = tmp_path / "res"
    r = cli("run", "integrity", "--target", "null", "--out", out, traceback=False)
    assert r.code == ExitCode.USAGE
    assert "stores no data" in r.err
    assert not out.exists()


# ---------------------------------------------------------------- manifest and verdict

def _result(point: TestPoint, verify: dict[str, Any] | None = None, errors: dict[str, Any] | None = None,
            status: str = "ok") -> PointResult:
    extra: dict[str, Any] = {}
    if verify is not None:
        extra["verify"] = verify
    if errors is not None:
        extra["io_errors"] = errors
    d = DirectionStats(iops=1.0, bw_bytes=1.0, io_bytes=4 * MiB, total_ios=1024, runtime_ms=10)
    m = Measurement(engine="fio", engine_version="3.33", directions={"read": d}, extra=extra)
    return PointResult(point=point, status=status, started="t0", finished="t1", measurement=m)  # type: ignore[arg-type]


def _run(*results: PointResult) -> Run:
    return Run(schema_version=1, ssdlab_version="0", run_id="r", suite="integrity", status="complete",
               created="t", options={"target_specs": ["/dev/loop7"], "ioengine": "libaio"},
               target={"spec": "/dev/loop7", "kind": "block", "name": "/dev/loop7", "capacity_bytes": 8 * MiB,
                       "identity": {"model": "Linux loop device", "loop_backing_file": "/tmp/x.img"}},
               host={}, points=results)


def _clean(checked: int = 4 * MiB) -> dict[str, Any]:
    return {"checksum": "crc32c", "checked_bytes": checked, "mismatches": 0, "header_mismatches": 0, "listed": []}


def test_manifest_holds_what_a_later_check_needs() -> None:
    write, check = IntegritySuite().plan(_ctx(seed=7))
    m = manifest(_run(_result(write), _result(check, _clean())))
    assert m is not None
    assert (m["span_offset"], m["span_bytes"], m["block_size"], m["checksum"], m["seed"]) == (0, 4 * MiB, 4096,
                                                                                             "crc32c", 7)
    assert m["target"]["spec"] == "/dev/loop7"
    assert m["target"]["identity"]["loop_backing_file"] == "/tmp/x.img"
    assert m["write_point"] == "01-write"


def test_no_manifest_without_a_finished_write() -> None:
    write, _ = IntegritySuite().plan(_ctx())
    assert manifest(_run(_result(write, status="failed"))) is None


def test_the_stored_manifest_event_wins() -> None:
    write, check = IntegritySuite().plan(_ctx())
    run = IntegritySuite().conclude(_ctx(), _run(_result(write), _result(check, _clean())))
    event = next(e for e in run.events if e["kind"] == MANIFEST_EVENT)
    assert event["checksum"] == "crc32c"
    assert manifest(run) == {k: v for k, v in event.items() if k not in ("time", "kind")}


def test_clean_check_passes_and_says_how_many_bytes() -> None:
    write, check = IntegritySuite().plan(_ctx())
    run = IntegritySuite().conclude(_ctx(), _run(_result(write), _result(check, _clean())))
    v = run.events[-1]
    assert v["kind"] == "verdict"
    assert v["passed"] is True
    assert "(4,194,304 bytes) checked, no mismatch" in v["text"]
    assert not run.warnings


def test_a_mismatch_fails_the_verdict_with_the_first_offset() -> None:
    write, check = IntegritySuite().plan(_ctx())
    bad = {**_clean(), "mismatches": 2, "header_mismatches": 1,
           "listed": [{"offset": 12288, "kind": "checksum"}, {"offset": 204800, "kind": "header"}]}
    run = IntegritySuite().conclude(_ctx(), _run(_result(write), _result(check, bad)))
    v = run.events[-1]
    assert v["passed"] is False
    assert v["mismatches"] == 2
    assert "2 mismatching block(s) (1 data checksum, 1 header)" in v["text"]
    assert "first at offset 12288" in v["text"]
    assert v["text"] in run.warnings


def test_unreadable_blocks_fail_the_verdict() -> None:
    write, check = IntegritySuite().plan(_ctx())
    errors = {"count": 1, "listed": [{"direction": "read", "offset": 1048576, "length": 4096, "error": "EIO"}]}
    v = verdict(_run(_result(write), _result(check, _clean(), errors)))
    assert v["passed"] is False
    assert v["unreadable"] == 1
    assert "1 unreadable block(s)" in v["text"]


def test_a_run_whose_check_never_ran_fails() -> None:
    write, _ = IntegritySuite().plan(_ctx())
    v = verdict(_run(_result(write)))
    assert v["passed"] is False
    assert "nothing was checked" in v["text"]


def test_a_clean_mixed_run_counts_both_checks() -> None:
    write, mixed, check = IntegritySuite().plan(_ctx(mixed=True))
    v = verdict(_run(_result(write), _result(mixed, _clean(3 * MiB)), _result(check, _clean())))
    assert v["passed"] is True
    assert v["checked_bytes"] == 7 * MiB
    assert "3 MiB (3,145,728 bytes) checked while a random workload ran" in v["text"]


def test_a_mismatch_during_the_mixed_phase_fails_even_if_the_final_check_passes() -> None:
    write, mixed, check = IntegritySuite().plan(_ctx(mixed=True))
    bad = {**_clean(1 * MiB), "mismatches": 1, "listed": [{"offset": 8192, "kind": "checksum"}]}
    v = verdict(_run(_result(write), _result(mixed, bad), _result(check, _clean())))
    assert v["passed"] is False
    assert "02-mixed" in v["text"]


def test_integrity_is_listed_as_a_writing_suite() -> None:
    assert get_suite("integrity").writes is True


def test_identity_problems() -> None:
    then = {"kind": "block", "identity": {"serial": "S1", "model": "M"}}
    assert identity_problems(then, {"kind": "block", "identity": {"serial": "S1", "model": "M", "firmware": "2"}}) == []
    assert identity_problems(then, {"kind": "block", "identity": {"serial": "S2", "model": "M"}}) == [
        "serial was 'S1', now 'S2'"]
    assert identity_problems(then, {"kind": "file", "identity": {}}) == ["it was a block target, now file"]
