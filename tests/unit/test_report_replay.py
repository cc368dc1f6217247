"""The trace-replay report section of a stored run: expected against replayed I/Os, the timing verdict, latency
percentiles from the bins, and the charts over time (the simulator's write amplification and GC included)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli


def test_a_simulated_replay_renders_its_section(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("".join(f"1,{'W' if i % 3 else 'R'},{(i * 7919 % 30000) * 4096},4096,"
                             f"{1577836800000000 + i * 400}\n" for i in range(8000)))
    res = run_cli("run", "replay", "--trace", trace, "--target", "sim:tlc-4k?capacity=256MiB", "--out",
                  tmp_path / "r", "-q")
    assert res.code == 0, res.err
    html = (tmp_path / "r" / "report.html").read_text()
    section = html[html.index('id="sec-replay"'):]
    for needle in ("Trace replay: complete (every I/O of the trace replayed (8,000 I/Os))", "original timing",
                   "slowdown", "kept up", "equal", "p99.9 µs", "IOPS per second: offered by the trace",
                   "Completion latency per second", "write amplification per second", "garbage-collection runs"):
        assert needle in section, needle
    assert "DIFFERENT" not in section
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    rec = run["points"][0]["measurement"]["extra"]["replay"]
    assert rec["expected"] == rec["replayed"]
