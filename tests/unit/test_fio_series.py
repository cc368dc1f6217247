"""One fio run cut into samples (fio/series.py), on a real fio 3.33 status stream: samples are exact differences
of fio's cumulative counters and bins, and together they are the whole run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ssdlab.fio import parse, series
from ssdlab.results import hist

Golden = Callable[[str], Path]
SERIES = "file-randwrite-series.json"  # 2 s, status documents every 500 ms, 2 threads in one reporting group


def docs(golden: Golden) -> list[dict[str, Any]]:
    return list(parse.iter_documents(golden(SERIES).read_text(encoding="utf-8")))


@pytest.mark.parametrize(("sample_s", "period"), [(60.0, 1.0), (0.5, 0.5), (1.5, 0.75), (2.0, 1.0), (5.0, 1.0),
                                                  (0.3, 0.3)])
def test_status_period_divides_the_sample(sample_s: float, period: float) -> None:
    assert series.status_period(sample_s) == pytest.approx(period)


def test_intervals_add_up_to_the_whole_run(golden: Golden) -> None:
    ds = docs(golden)
    assert len(ds) >= 4
    cumulative = [parse.measurement_from_document(d) for d in ds]
    parts = [series.interval(prev, cur) for prev, cur in zip([None, *cumulative[:-1]], cumulative, strict=True)]
    final = cumulative[-1].directions["write"]
    assert sum(p.directions["write"].total_ios for p in parts if "write" in p.directions) == final.total_ios
    assert sum(p.directions["write"].io_bytes for p in parts if "write" in p.directions) == final.io_bytes
    assert sum(p.directions["write"].runtime_ms for p in parts if "write" in p.directions) == final.runtime_ms
    counts = np.zeros(hist.PLAT_NR, dtype=np.int64)
    for p in parts:
        d = p.directions["write"]
        assert d.clat is not None
        c = hist.counts_from_sparse(d.clat.bins)
        assert int(c.sum()) == d.clat.n  # each interval's histogram is exactly its completions ...
        assert abs(d.clat.n - d.total_ios) <= 2 * 4  # ... which trail fio's I/O count by at most the I/Os in flight
        assert d.iops == pytest.approx(d.total_ios * 1000 / d.runtime_ms)
        assert d.clat.min_ns <= d.clat.mean_ns <= d.clat.max_ns
        counts += c
    assert final.clat is not None
    assert np.array_equal(counts, hist.counts_from_sparse(final.clat.bins))
    # the mean latency of the whole run is the I/O-weighted mean of the intervals'
    total_ns = sum(p.directions["write"].clat.mean_ns * p.directions["write"].clat.n for p in parts)  # type: ignore[union-attr]
    assert total_ns / final.clat.n == pytest.approx(final.clat.mean_ns, rel=1e-9)


def test_the_cutter_closes_samples_on_time_and_the_final_document_closes_the_last(golden: Golden) -> None:
    ds = docs(golden)
    cutter = series.SampleCutter(sample_s=1.0, count=2)
    samples = [s for s in (cutter.feed(d) for d in ds[:-1]) if s is not None]
    assert len(samples) == 1  # the status documents close sample 1 only: the last one is the final document's
    last = cutter.close(ds[-1])
    assert last is not None
    samples.append(last)
    assert cutter.close(ds[-1]) is None  # nothing is closed twice
    ms = [s.directions["write"].runtime_ms for s in samples]
    assert all(500 <= t <= 1500 for t in ms), ms  # one second give or take half a status period
    final = parse.measurement_from_document(ds[-1]).directions["write"]
    assert sum(s.directions["write"].total_ios for s in samples) == final.total_ios


def test_runtime_is_a_threads_clock_not_the_groups_sum(golden: Golden) -> None:
    final = docs(golden)[-1]
    job = final["jobs"][0]
    assert int(job["job_runtime"]) > 1.5 * parse.io_runtime_ms(final)  # summed over the two threads
    assert 1900 <= parse.io_runtime_ms(final) <= 2100  # a 2-s run
    start, end = parse.io_window(final)  # type: ignore[misc]
    assert end - start == pytest.approx(parse.io_runtime_ms(final) / 1000)
