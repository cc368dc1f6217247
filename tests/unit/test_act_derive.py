"""ACT's derived rates (cfg_storage.c derive_configuration) against hand-computed cases, and the plan JSON."""

from __future__ import annotations

import json

import pytest

from ssdlab.errors import UsageError
from ssdlab.suites.act import (
    ActConfig,
    derive,
    parse_duration,
    parse_load,
    stream_plans,
)
from ssdlab.suites.act_config import record_sizes


def test_default_1x_one_device() -> None:
    d = derive(ActConfig())
    assert d.reads_per_s == 2000
    assert d.write_reqs_per_s == 1000
    assert d.records_per_large_block == 85  # floor(131072 / 1536)
    assert d.large_block_reads_per_s == pytest.approx(1000 / 85 * 2)  # 23.529...
    assert d.large_block_writes_per_s == pytest.approx(23.5294, abs=1e-4)
    assert d.commit_writes_per_s == 0


def test_integer_division_of_records_per_block_follows_the_code_not_the_readme() -> None:
    # 1500 B is stored as 1504 B; floor(131072/1504) = 87 -> 1000/87*2 = 22.99 (README's plain division: 22.949)
    d = derive(ActConfig(record_bytes=1500))
    assert d.stored_record_bytes == 1504
    assert d.records_per_large_block == 87
    assert d.large_block_writes_per_s == pytest.approx(22.98850, abs=1e-5)


def test_load_and_devices_scale_totals_and_split_evenly() -> None:
    d = derive(ActConfig.for_load(300, devices=2))
    assert d.read_reqs_per_s == 1_200_000
    assert d.reads_per_s == 1_200_000
    assert d.large_block_reads_per_s == pytest.approx(600_000 / 85 * 2)
    assert d.per_device(d.reads_per_s) == 600_000
    assert d.per_device(d.large_block_writes_per_s) == pytest.approx(300_000 / 85 * 2)


def test_defrag_lwm_sets_write_amplification() -> None:
    assert derive(ActConfig(defrag_lwm_pct=60)).large_block_writes_per_s == pytest.approx(1000 / 85 * 2.5)
    assert derive(ActConfig(defrag_lwm_pct=0)).large_block_writes_per_s == pytest.approx(1000 / 85)


def test_update_pct_adds_reads_with_integer_division() -> None:
    assert derive(ActConfig(update_pct=50)).reads_per_s == 2500
    # 1.5x: 1500 writes/s * 33 / 100 = 495 (integer), + 3000 reads
    assert derive(ActConfig.for_load(1.5, update_pct=33)).reads_per_s == 3495


def test_replication_multiplies_writes() -> None:
    d = derive(ActConfig(replication_factor=2))
    assert d.internal_writes_per_s == 2000
    assert d.large_block_writes_per_s == pytest.approx(2000 / 85 * 2)


def test_commit_to_device_writes_originals_one_at_a_time() -> None:
    d = derive(ActConfig(commit_to_device=True))
    assert d.large_block_reads_per_s == pytest.approx(1000 / 85 * 2)
    assert d.large_block_writes_per_s == pytest.approx(1000 / 85 * 1)  # WA - 1
    assert d.commit_writes_per_s == 1000


def test_no_defrag_reads() -> None:
    d = derive(ActConfig(no_defrag_reads=True))
    assert d.large_block_reads_per_s == 0
    assert d.large_block_writes_per_s == pytest.approx(1000 / 85 * 2)
    assert [p.name for p in stream_plans(ActConfig(no_defrag_reads=True), d, 512)] == [
        "service", "large-block-writes"]


def test_read_size_rounds_to_min_op() -> None:
    assert record_sizes(ActConfig(), 512) == [1536]
    assert record_sizes(ActConfig(), 4096) == [4096]
    assert record_sizes(ActConfig(record_bytes=1500), 512) == [1536]  # 1504 -> 3 sectors
    # a range: every multiple of the minimum I/O size from the smallest to the largest record
    assert record_sizes(ActConfig(record_bytes=1500, record_bytes_range_max=3000), 512) == [1536, 2048, 2560, 3072]


@pytest.mark.parametrize(("kwargs", "message"), [
    # cfg_storage.c check_configuration refuses each of these
    ({"defrag_lwm_pct": 100}, "defrag-lwm-pct"),
    ({"large_block_bytes": 100 * 1024}, "power of 2"),
    ({"large_block_bytes": 16 * 1024 * 1024}, "power of 2"),
    ({"record_bytes": 0}, "record-bytes"),
    ({"record_bytes": 8 * 1024 * 1024 + 1}, "record-bytes"),
    ({"record_bytes_range_max": 1536}, "range-max"),  # must be above record-bytes
    ({"record_bytes_range_max": 9 * 1024 * 1024}, "range-max"),
    ({"compress_pct": 101}, "compress-pct"),
    ({"update_pct": 101}, "update-pct"),
    ({"replication_factor": 0}, "replication-factor"),
    ({"disable_odsync": True, "commit_to_device": True}, "disable-odsync"),
    # derive_configuration refuses these
    ({"read_reqs_per_s": 0, "write_reqs_per_s": 0}, "both be zero"),
    ({"read_reqs_per_s": 9, "write_reqs_per_s": 0, "service_threads": 10}, "load config too small"),
    # ssdlab's own: ACT would divide by zero
    ({"record_bytes": 200 * 1024}, "do not fit"),
    ({"read_reqs_per_s": 2**32}, "out of range"),
])
def test_bad_configs_are_usage_errors(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        derive(ActConfig(**kwargs))  # type: ignore[arg-type]


def test_update_pct_at_100_and_write_only_loads_are_accepted() -> None:
    assert derive(ActConfig(update_pct=100)).reads_per_s == 3000
    d = derive(ActConfig(read_reqs_per_s=0, write_reqs_per_s=1000))
    assert d.reads_per_s == 0
    assert d.service_reqs_per_thread == 0  # no service threads at all: large blocks only (ACT: do_transactions)
    assert [p.name for p in stream_plans(ActConfig(read_reqs_per_s=0), d, 512)] == [
        "large-block-reads", "large-block-writes"]


def test_parse_load_and_duration() -> None:
    assert parse_load("300x") == 300
    assert parse_load("1.5") == 1.5
    assert parse_duration("24h", "duration") == 86400
    assert parse_duration("90m", "duration") == 5400
    assert parse_duration("6", "duration") == 6
    with pytest.raises(UsageError):
        parse_load("fast")
    with pytest.raises(UsageError):
        parse_duration("1.5s", "slice")


def test_plan_json_prints_derived_totals(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    a, b = tmp_path / "a.dat", tmp_path / "b.dat"
    res = cli("plan", "act", "--target", f"file:{a}?size=64MiB", "--target", f"file:{b}?size=64MiB",
              "--load", "30x", "--duration", "6", "--slice", "2", "--json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    derived = doc["derived"]
    assert derived["reads_per_s"] == 2000 * 30 * 2
    assert derived["large_block_reads_per_s"] == pytest.approx(60_000 / 85 * 2)
    assert derived["large_block_writes_per_s"] == pytest.approx(60_000 / 85 * 2)
    assert derived["per_device"]["reads_per_s"] == 60_000
    measure = [p for p in doc["points"] if p["phase"] == "measure"]
    assert len(measure) == 3
    assert [w["rw"] for w in measure[0]["streams"]] == ["randread", "randread", "randwrite"]
    assert measure[0]["tags"]["shared_streams"] == ["service"]


def test_plan_text_and_sim_refusal(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    res = cli("plan", "act", "--target", f"file:{tmp_path / 'x.dat'}?size=64MiB", "--duration", "1h",
              "--slice", "7m")
    assert res.code == 2
    assert "whole number of --slice" in res.err
    res = cli("plan", "act", "--target", f"file:{tmp_path / 'x.dat'}?size=64MiB", "--duration", "4",
              "--slice", "2", "--find-max", "--max-load", "3x")
    assert res.code == 0, res.err
    assert "act-3x-s002" in res.out
    assert "act-4x" not in res.out


def test_runtime_is_the_slice_and_scales_the_run(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`plan act --runtime 1 --load 3x` answered 24 h without a word: --runtime is the time of every point in
    every suite, and an ACT point is a slice; without --duration the run keeps ACT's 24 slices."""
    target = f"file:{tmp_path / 'x.dat'}?size=64MiB"
    res = cli("plan", "act", "--target", target, "--runtime", "1", "--load", "3x", "--json")
    assert res.code == 0, res.err
    measure = [p for p in json.loads(res.out)["points"] if p["phase"] == "measure"]
    assert len(measure) == 24
    assert {p["workload"]["runtime_s"] for p in measure} == {1.0}
    res = cli("plan", "act", "--target", target, "--runtime", "1.5", "--duration", "6")
    assert res.code == 0, res.err
    assert "3 slice(s) of 2 s (--runtime: the slice)" in res.out  # whole seconds, as ACT's slices
    assert "warning: this run may take more than an hour" not in res.out
    res = cli("plan", "act", "--target", target, "--runtime", "2", "--slice", "3", traceback=False)
    assert res.code == 2
    assert res.err.strip() == ("ssdlab: error: act: --runtime 2 and --slice 3 both set the slice length; give one "
                               "(--duration sets the whole run)")
    assert cli("plan", "act", "--target", target, "--runtime", "2", "--slice", "2", "--duration", "4").code == 0


def test_plan_warns_when_a_run_may_take_more_than_an_hour(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = f"file:{tmp_path / 'x.dat'}?size=64MiB"
    res = cli("plan", "act", "--target", target, "--load", "3x")
    assert res.code == 0, res.err
    warning = [line for line in res.out.splitlines() if line.startswith("warning: this run may take more than")]
    assert len(warning) == 1
    assert "--runtime" in warning[0]
    assert "24h" in res.out
    quick = cli("plan", "quick", "--target", "null", "--runtime", "1")
    assert quick.code == 0, quick.err
    assert "more than an hour" not in quick.out
    assert "8 points, estimated duration" in quick.out
