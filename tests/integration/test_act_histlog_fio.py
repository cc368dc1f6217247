"""hist-log against fio itself: whole-run percentiles from histogram logs agree with fio's json+ report."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ssdlab.fio import histlog
from ssdlab.fio.parse import parse_measurement
from ssdlab.results import hist

pytestmark = pytest.mark.integration


def test_whole_run_percentiles_match_fio(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "data.bin"
    with data.open("wb") as fh:
        fh.truncate(32 * 1024**2)
    job = tmp_path / "h.fio"
    # 1-ms histogram windows: fio 3.33 never writes the last, partial window, so keep it tiny
    job.write_text(
        "[h]\n"
        f"filename={data}\nsize=32m\nioengine=psync\ndirect=0\nrw=randread\nbs=4k\nnumjobs=2\n"
        "time_based=1\nruntime=1\nwrite_hist_log=h\nlog_hist_msec=1\nnorandommap=1\ngroup_reporting=1\n"
    )
    out = subprocess.run(["fio", "--output-format=json+", str(job)], cwd=tmp_path, capture_output=True,
                         text=True, check=True, timeout=60).stdout
    m = parse_measurement(out)
    read = m.get("read")
    assert read is not None
    assert read.clat is not None
    fio_counts = hist.counts_from_sparse(read.clat.bins)
    logs = sorted(tmp_path.glob("h_clat_hist.*.log"))
    assert len(logs) == 2
    log_counts, coarse = histlog.total_histogram(logs, "read")
    assert coarse == 0
    # the logs hold a subset of fio's samples (all but the last partial window of each job)
    assert np.all(log_counts <= fio_counts)
    assert log_counts.sum() >= 0.98 * fio_counts.sum()
    (whole,) = list(histlog.iter_intervals(logs, 10_000.0, log_ms=1))
    ps = [50.0, 90.0, 99.0]
    ours = whole.percentiles(ps)
    doc = json.loads(out[out.index("{"):])
    reported = {float(k): v for k, v in doc["jobs"][0]["read"]["clat_ns"]["percentile"].items()}
    for p in ps:
        # within one fio bucket of what fio reported
        assert abs(hist.value_to_idx(int(ours[p])) - hist.value_to_idx(int(reported[p]))) <= 1, p
    res = cli("hist-log", *map(str, logs), "--interval", "10", "--percentiles", "50,90,99")
    assert res.code == 0, res.err
    row = res.out.splitlines()[1].split(",")
    assert int(row[2]) == int(log_counts.sum())
