"""fio json/json+ -> Measurement, on golden outputs captured from real fio 3.33 runs."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ssdlab.errors import FioFailedError
from ssdlab.fio import parse
from ssdlab.results import hist
from ssdlab.results.model import percentile_key

Golden = Callable[[str], Path]

JSON_PLUS = ["null-randrw-2jobs.json", "file-randread-2jobs-group.json", "file-randwrite-2jobs-group.json",
             "file-seqread-128k.json", "file-randread-status.json"]
SINGLE_ENTRY = ["file-randread-2jobs-group.json", "file-randwrite-2jobs-group.json", "file-seqread-128k.json",
                "file-randread-status.json", "file-randrw-plain.json"]


def load_docs(path: Path) -> list[dict[str, Any]]:
    """Every JSON document in a golden file."""
    return list(parse.iter_documents(path.read_text(encoding="utf-8")))


def last_job(path: Path) -> dict[str, Any]:
    """The single job entry of the final document."""
    jobs = load_docs(path)[-1]["jobs"]
    assert len(jobs) == 1
    return dict(jobs[0])


def fio_percentiles(block: Mapping[str, Any]) -> dict[float, int]:
    """fio's own reported percentiles of a latency block, keyed by float p."""
    return {float(k): int(v) for k, v in block["percentile"].items()}


@pytest.mark.parametrize("name", JSON_PLUS)
def test_percentiles_from_bins_equal_fios_for_every_job_direction_and_document(golden: Golden,
                                                                             name: str) -> None:
    checked = 0
    docs = load_docs(golden(name))
    for doc in docs:
        final = doc is docs[-1]
        for job in doc["jobs"]:
            for ddir in ("read", "write"):
                block = job[ddir]["clat_ns"]
                if not block.get("N"):
                    continue
                counts = hist.counts_from_bins(block["bins"])
                # fio snapshots bins and N separately in status reports: they may differ by a sample there
                assert int(counts.sum()) == block["N"] if final else abs(int(counts.sum()) - block["N"]) <= 1
                expected = fio_percentiles(block)
                assert hist.percentiles(counts, list(expected), total=block["N"]) == expected
                if final:
                    assert hist.percentiles(counts, list(expected)) == expected
                checked += len(expected)
    assert checked >= 13


def test_status_documents_parse_to_fios_percentiles(golden: Golden) -> None:
    """Intermediate documents too: the percentile rule counts against N, not the sum of the bins."""
    for doc in load_docs(golden("file-randread-status.json")):
        block = doc["jobs"][0]["read"]["clat_ns"]
        clat = parse.measurement_from_document(doc).directions["read"].clat
        assert clat is not None
        for p, value in fio_percentiles(block).items():
            assert clat.percentiles_ns[percentile_key(p)] == value


@pytest.mark.parametrize("name", [n for n in SINGLE_ENTRY if n != "file-randrw-plain.json"])
def test_measurement_percentiles_equal_fios_reported_values(golden: Golden, name: str) -> None:
    m = parse.parse_measurement(golden(name).read_text(encoding="utf-8"))
    job = last_job(golden(name))
    directions = [d for d in ("read", "write") if job[d]["total_ios"]]
    assert sorted(m.directions) == sorted(directions)
    for ddir in directions:
        clat = m.directions[ddir].clat
        assert clat is not None
        assert clat.bins, "json+ bins must be kept"
        clamped = 0
        for p, value in fio_percentiles(job[ddir]["clat_ns"]).items():
            assert clat.percentiles_ns[percentile_key(p)] == value  # fio's printed value, kept verbatim
            # read from the bins: fio's value, except that a bin midpoint above the observed maximum is the maximum
            assert clat.percentile(p) == min(max(value, clat.min_ns), clat.max_ns)
            clamped += value > clat.max_ns
        assert clamped <= 2  # only the top percentiles can lie in the maximum's bin above the maximum


def test_percentiles_never_exceed_the_observed_maximum(golden: Golden) -> None:
    m = parse.parse_measurement(golden("file-randread-2jobs-group.json").read_text(encoding="utf-8"))
    clat = m.directions["read"].clat
    assert clat is not None
    assert clat.percentiles_ns["99.999"] > clat.max_ns  # fio prints the bin midpoint (4423680 > 4413845)
    assert clat.percentile(99.999) == clat.max_ns
    p9999 = clat.percentile(99.99)
    assert p9999 is not None
    assert p9999 <= clat.max_ns


def test_requested_percentile_list_is_honoured(golden: Golden) -> None:
    m = parse.parse_measurement(golden("file-randread-2jobs-group.json").read_text(encoding="utf-8"))
    clat = m.directions["read"].clat
    assert clat is not None
    assert "99.999" in clat.percentiles_ns
    assert list(clat.percentiles_ns)[:3] == ["1", "5", "10"]


@pytest.mark.parametrize("name", SINGLE_ENTRY)
def test_single_entry_fields_are_carried_over(golden: Golden, name: str) -> None:
    m = parse.parse_measurement(golden(name).read_text(encoding="utf-8"))
    job = last_job(golden(name))
    assert m.engine == "fio"
    assert m.engine_version == "fio-3.33"
    assert m.usr_cpu == pytest.approx(job["usr_cpu"])
    assert m.sys_cpu == pytest.approx(job["sys_cpu"])
    assert m.runtime_ms == job["job_runtime"]
    assert m.errors == 0
    for ddir, d in m.directions.items():
        raw = job[ddir]
        assert d.iops == pytest.approx(raw["iops"])
        assert d.bw_bytes == raw["bw_bytes"]
        assert d.io_bytes == raw["io_bytes"]
        assert d.total_ios == raw["total_ios"]
        assert d.runtime_ms == raw["runtime"]
        assert d.clat is not None
        assert d.lat is not None
        assert d.clat.n == raw["clat_ns"]["N"]
        assert d.clat.mean_ns == pytest.approx(raw["clat_ns"]["mean"])
        assert d.clat.stddev_ns == pytest.approx(raw["clat_ns"]["stddev"])
        assert (d.clat.min_ns, d.clat.max_ns) == (raw["clat_ns"]["min"], raw["clat_ns"]["max"])
        assert d.lat.mean_ns == pytest.approx(raw["lat_ns"]["mean"])
        assert d.lat.mean_ns >= d.clat.mean_ns


def test_sequential_128k_job(golden: Golden) -> None:
    m = parse.parse_measurement(golden("file-seqread-128k.json").read_text(encoding="utf-8"))
    read = m.directions["read"]
    assert list(m.directions) == ["read"]
    assert read.io_bytes == read.total_ios * 128 * 1024
    assert read.bw_mbps == pytest.approx(read.bw_bytes / 1e6)
    assert m.jobs == 1


def test_multi_job_output_is_merged_by_adding_bins(golden: Golden) -> None:
    path = golden("null-randrw-2jobs.json")
    jobs = load_docs(path)[-1]["jobs"]
    assert len(jobs) == 2
    m = parse.parse_measurement(path.read_text(encoding="utf-8"))
    assert m.jobs == 2
    for ddir in ("read", "write"):
        d = m.directions[ddir]
        blocks = [j[ddir]["clat_ns"] for j in jobs]
        merged = hist.merge(*(hist.counts_from_bins(b["bins"]) for b in blocks))
        assert d.clat is not None
        assert np.array_equal(hist.counts_from_sparse(d.clat.bins), merged)
        assert d.clat.n == sum(b["N"] for b in blocks) == int(merged.sum())
        assert d.total_ios == sum(j[ddir]["total_ios"] for j in jobs)
        assert d.iops == pytest.approx(sum(j[ddir]["iops"] for j in jobs))
        assert d.bw_bytes == sum(j[ddir]["bw_bytes"] for j in jobs)
        assert d.clat.min_ns == min(b["min"] for b in blocks)
        assert d.clat.max_ns == max(b["max"] for b in blocks)
        weighted = sum(b["mean"] * b["N"] for b in blocks) / sum(b["N"] for b in blocks)
        assert d.clat.mean_ns == pytest.approx(weighted)
        ps = [float(k) for k in blocks[0]["percentile"]]
        expected = hist.percentiles(merged, ps)
        for p in ps:
            assert d.clat.percentiles_ns[percentile_key(p)] == expected[p]
            # every aggregate percentile lies between the jobs' own values for that p
            own = [int(b["percentile"][f"{p:.6f}"]) for b in blocks]
            assert min(own) <= expected[p] <= max(own)
    assert m.usr_cpu == pytest.approx(sum(j["usr_cpu"] for j in jobs) / 2)


def test_group_reporting_entries_report_their_thread_count(golden: Golden) -> None:
    # numjobs in the job section (randread) and in [global] (randwrite): both stand for two threads
    for name in ("file-randread-2jobs-group.json", "file-randwrite-2jobs-group.json"):
        assert parse.parse_measurement(golden(name).read_text(encoding="utf-8")).jobs == 2


def test_leading_text_and_several_documents_parse_the_last(golden: Golden) -> None:
    text = golden("file-randread-status.json").read_text(encoding="utf-8")
    assert text.startswith("note: ")
    docs = load_docs(golden("file-randread-status.json"))
    assert len(docs) == 3
    ios = [d["jobs"][0]["read"]["total_ios"] for d in docs]
    assert ios == sorted(ios)
    assert ios[0] < ios[-1]
    m = parse.parse_measurement(text)
    assert m.directions["read"].total_ios == ios[-1]
    assert parse.last_document(text) == docs[-1]
    totals = [parse.status_totals(d) for d in docs]
    assert [t["read_ios"] for t in totals] == ios
    assert totals[0]["elapsed_s"] <= totals[-1]["elapsed_s"]
    assert totals[-1]["lat_sum_ns"] > 0


def test_plain_json_without_bins_keeps_fios_percentiles(golden: Golden) -> None:
    path = golden("file-randrw-plain.json")
    job = last_job(path)
    assert "bins" not in job["read"]["clat_ns"]
    m = parse.parse_measurement(path.read_text(encoding="utf-8"))
    assert sorted(m.directions) == ["read", "write"]
    for ddir in ("read", "write"):
        clat = m.directions[ddir].clat
        assert clat is not None
        assert clat.bins == ()
        for p, value in fio_percentiles(job[ddir]["clat_ns"]).items():
            assert clat.percentiles_ns[percentile_key(p)] == value
            assert clat.percentile(p) == min(max(value, clat.min_ns), clat.max_ns)  # clamped to the observed range
        assert clat.percentile(12.5) is None  # not reported and no bins to compute it from


def _fio2_direction(iops: float, mean_us: float, n: int) -> dict[str, Any]:
    return {
        "io_kbytes": n * 4, "bw": iops * 4, "iops": iops, "runtime": 1000, "total_ios": n,
        "clat": {"min": 10, "max": 900, "mean": mean_us, "stddev": 2.0, "N": n,
                 "percentile": {"50.000000": 20, "99.000000": 120, "99.990000": 800}},
        "lat": {"min": 11, "max": 901, "mean": mean_us + 1, "stddev": 2.0, "N": n},
    }


def test_fio2_style_latency_keys_in_microseconds_are_converted() -> None:
    doc = {"fio version": "fio-2.2.10", "jobs": [{
        "jobname": "old", "groupid": 0, "error": 0, "usr_cpu": 3.0, "sys_cpu": 7.0,
        "read": _fio2_direction(1000.0, 25.5, 1000),
        "write": {"io_kbytes": 0, "bw": 0, "iops": 0, "runtime": 0, "total_ios": 0},
    }]}
    m = parse.parse_measurement("fio: some banner\n" + json.dumps(doc))
    assert list(m.directions) == ["read"]
    read = m.directions["read"]
    assert read.bw_bytes == 4000 * 1024
    assert read.io_bytes == 4000 * 1024
    assert read.clat is not None
    assert read.lat is not None
    assert read.clat.mean_ns == pytest.approx(25_500)
    assert (read.clat.min_ns, read.clat.max_ns) == (10_000, 900_000)
    assert read.clat.percentiles_ns == {"50": 20_000, "99": 120_000, "99.99": 800_000}
    assert read.clat.bins == ()
    assert read.lat.mean_ns == pytest.approx(26_500)
    assert m.engine_version == "fio-2.2.10"


def test_client_stats_drop_the_all_clients_summary() -> None:
    entry = {"jobname": "j", "groupid": 0, "usr_cpu": 1.0, "sys_cpu": 1.0, "job_runtime": 1000,
             "read": _fio2_direction(100.0, 10.0, 100)}
    summary = {**entry, "jobname": "All clients", "read": _fio2_direction(200.0, 10.0, 200)}
    m = parse.measurement_from_document({"client_stats": [entry, {**entry, "hostname": "b"}, summary]})
    assert m.directions["read"].total_ios == 200
    assert m.directions["read"].iops == pytest.approx(200.0)


@pytest.mark.parametrize("text", ["", "fio: failed to open file\n", '{"fio version": "fio-3.33"}',
                                  '{"jobs": [', "not json {at all}"])
def test_output_without_a_result_is_an_fio_failure(text: str) -> None:
    with pytest.raises(FioFailedError, match="no JSON result"):
        parse.parse_measurement(text)


def test_result_without_jobs_is_an_fio_failure() -> None:
    with pytest.raises(FioFailedError, match="no jobs"):
        parse.parse_measurement('{"fio version": "fio-3.33", "jobs": []}')


def test_iter_documents_skips_text_between_documents() -> None:
    text = 'warn {\n{"a": 1}\nnoise } {\n{"b": [1, {"c": 2}]}\ntrailer'
    assert list(parse.iter_documents(text)) == [{"a": 1}, {"b": [1, {"c": 2}]}]
