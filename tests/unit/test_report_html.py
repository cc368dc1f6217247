"""report.html from a Run built of model objects: header facts, every point, charts, commands, escaping."""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ssdlab import formatting
from ssdlab.report import html, sections
from ssdlab.results import hist
from ssdlab.results.model import (
    SCHEMA_VERSION,
    DirectionStats,
    LatencyStats,
    Measurement,
    PointResult,
    Run,
    TestPoint,
    Workload,
)

HOST = {
    "hostname": "benchbox-7", "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-18-amd64",
    "arch": "x86_64", "cpu_model": "AMD EPYC 7313P 16-Core Processor", "cpu_count": 32,
    "memory_bytes": 64 * 1024**3, "engine": "fio", "engine_version": "3.33", "ssdlab_version": "0.1.0",
}
TARGET = {
    "spec": "/dev/nvme0n1", "kind": "block", "name": "/dev/nvme0n1", "capacity_bytes": 960197124096,
    "logical_block_size": 512, "physical_block_size": 4096,
    "identity": {"model": "SAMSUNG MZQL2960HCJR-00A07", "serial": "S64FNE0R812345", "firmware": "GDC5602Q"},
}

_EXTERNAL = re.compile(r"""(?:https?:)?//[^\s"'<>)]+""", re.I)
_XMLNS = re.compile(r"""\sxmlns(?::\w+)?=["'][^"']*["']""")


def external_references(doc: str) -> list[str]:
    """Every URL-ish reference or external-loading construct, ignoring xmlns namespace declarations."""
    stripped = _XMLNS.sub("", doc)
    found = _EXTERNAL.findall(stripped)
    found += re.findall(r"<script\b|<link\b|<iframe\b|<img\b|@import|url\(\s*['\"]?(?!#)", stripped, re.I)
    found += re.findall(r"""\s(?:src|href)\s*=\s*["'](?!#)[^"']*["']""", stripped, re.I)
    return found


def latency(samples_ns: Sequence[int]) -> LatencyStats:
    """A LatencyStats with json+-style bins from a list of latency samples."""
    counts = hist.counts_from_sparse([])
    for v in samples_ns:
        counts[hist.value_to_idx(v)] += 1
    mean = sum(samples_ns) / len(samples_ns)
    return LatencyStats(kind="clat", n=len(samples_ns), min_ns=min(samples_ns), max_ns=max(samples_ns),
                        mean_ns=mean, stddev_ns=0.0, percentiles_ns={}, bins=tuple(hist.sparse(counts)))


def measurement(**dirs: tuple[float, float, Sequence[int]]) -> Measurement:
    """Measurement with direction -> (iops, bytes/s, latency samples)."""
    stats = {d: DirectionStats(iops=iops, bw_bytes=bw, io_bytes=int(bw), total_ios=int(iops), runtime_ms=1000,
                               clat=latency(samples)) for d, (iops, bw, samples) in dirs.items()}
    return Measurement(engine="fio", engine_version="fio-3.33", directions=stats, usr_cpu=12.5, sys_cpu=30.25)


def point(pid: str, label: str, rw: str, bs: int, qd: int, *, group: str = "", phase: str = "measure",
          tags: Mapping[str, Any] | None = None, io_bytes: int | None = None) -> TestPoint:
    """A TestPoint with a 5-second time-based workload (size-based when io_bytes is given)."""
    wl = Workload(rw=rw, bs=bs, iodepth=qd, runtime_s=None if io_bytes else 5.0, io_bytes=io_bytes)
    return TestPoint(id=pid, label=label, workload=wl, group=group, phase=phase, tags=dict(tags or {}))


def ok(p: TestPoint, m: Measurement | None, warnings: tuple[str, ...] = ()) -> PointResult:
    """A finished point."""
    return PointResult(point=p, status="ok", started="2026-01-02T10:00:00+00:00",
                       finished="2026-01-02T10:00:06+00:00", measurement=m, warnings=warnings)


def slow(n: int, base: int) -> list[int]:
    """n samples around `base` ns with a tail."""
    return [base + (i % 50) * 10 for i in range(n - 5)] + [base * 40] * 4 + [base * 400]


def make_run(*, target: Mapping[str, Any] = TARGET, suite: str = "quick", points: Sequence[PointResult] | None = None,
             status: str = "interrupted") -> Run:
    """A run with read/write pairs, a skipped and a failed point, a precondition and a purge step."""
    if points is None:
        points = [
            ok(point("00-purge", "format purge", "write", 4096, 1, phase="purge", tags={"method": "format"}), None),
            ok(point("00-fill", "SEQ 128K fill 2x", "write", 131072, 32, phase="precondition", io_bytes=2 << 30),
               measurement(write=(20000.0, 2.6e9, slow(200, 90_000)))),
            ok(point("01-seq1m-read", "SEQ1M Q8T1 Read", "read", 1 << 20, 8, group="SEQ1M Q8T1",
                     tags={"direction": "read"}), measurement(read=(6500.0, 6.8e9, slow(400, 1_200_000)))),
            ok(point("02-rnd4k-read", "RND4K Q32T1 Read", "randread", 4096, 32, group="RND4K Q32T1",
                     tags={"direction": "read"}), measurement(read=(950_000.0, 3.89e9, slow(1000, 30_000))),
               warnings=("host CPU was the limit: fio used 98 % CPU",)),
            ok(point("03-seq1m-write", "SEQ1M Q8T1 Write", "write", 1 << 20, 8, group="SEQ1M Q8T1",
                     tags={"direction": "write"}), measurement(write=(5000.0, 5.24e9, slow(300, 1_500_000)))),
            PointResult(point=point("04-rnd512-write", "RND512 Q32T1 Write", "randwrite", 512, 32,
                                    group="RND512 Q32T1", tags={"direction": "write"}),
                        status="skipped", started="", finished="",
                        reason="block size 512 B is below the physical block size 4096 B"),
            PointResult(point=point("05-rnd4k-write", "RND4K Q32T1 Write", "randwrite", 4096, 32,
                                    group="RND4K Q32T1", tags={"direction": "write"}),
                        status="failed", started="2026-01-02T10:01:00+00:00", finished="2026-01-02T10:01:01+00:00",
                        reason="fio exited with status 1: io_u error on file /dev/nvme0n1: Input/output error"),
        ]
    return Run(
        schema_version=SCHEMA_VERSION, ssdlab_version="0.1.0", run_id="r1", suite=suite, status=status,  # type: ignore[arg-type]
        created="2026-01-02T09:59:00+00:00", options={"suite": suite, "runtime_s": 5.0, "ioengine": "libaio",
                                                      "suite_options": {"loops": 3}},
        target=dict(target), host=HOST, points=tuple(points), finished="2026-01-02T10:02:00+00:00",
        warnings=("write cache is enabled on the target",),
        events=({"time": "2026-01-02T10:01:30+00:00", "kind": "interrupted", "text": "interrupted by the user",
                 "points_done": 4},
                {"time": "2026-01-02T10:05:00+00:00", "kind": "resume", "previous_status": "interrupted",
                 "points_done": 4, "repeated": ["05-rnd4k-write"]}),
    )


def write_artefacts(run_dir: Path, pid: str, cmd: str, job: str) -> None:
    """Store a point's cmd.txt and job.fio as the runner does."""
    d = run_dir / "points" / pid
    d.mkdir(parents=True, exist_ok=True)
    (d / "cmd.txt").write_text(cmd)
    (d / "job.fio").write_text(job)


@pytest.fixture
def rendered(tmp_path: Path) -> tuple[Run, str, Path]:
    """A rendered report of make_run() with artefacts for two points."""
    run = make_run()
    write_artefacts(tmp_path, "01-seq1m-read", "fio --output-format=json+ --status-interval=1 job.fio\n",
                    "[01-seq1m-read]\nrw=read\nbs=1M\niodepth=8\n")
    write_artefacts(tmp_path, "05-rnd4k-write", "fio --output-format=json+ 05.fio\n",
                    "[05-rnd4k-write]\nrw=randwrite\nbs=4k\n")
    (tmp_path / "points" / "05-rnd4k-write" / "stderr.txt").write_text("fio: io_u error on file\n")
    path = html.render_report(run, tmp_path)
    assert path == tmp_path / "report.html"
    return run, path.read_text(encoding="utf-8"), tmp_path


def point_block(doc: str, pid: str) -> str:
    """The results-table <tbody> of one point."""
    m = re.search(rf'<tbody class="point" id="pt-{re.escape(pid)}">(.*?)</tbody>', doc, re.S)
    assert m, f"no results row for {pid}"
    return m.group(1)


def test_header_shows_host_engine_target_and_options(rendered: tuple[Run, str, Path]) -> None:
    _, doc, _ = rendered
    for fact in ("benchbox-7", "Debian GNU/Linux 12 (bookworm)", "6.1.0-18-amd64", "AMD EPYC 7313P 16-Core Processor",
                 "32 CPUs", "64 GiB", "fio 3.33", "SAMSUNG MZQL2960HCJR-00A07", "S64FNE0R812345", "GDC5602Q",
                 "/dev/nvme0n1", "894.25 GiB", "512 B logical, 4096 B physical", "2026-01-02 09:59:00 UTC",
                 "3m00s", "ssdlab", "0.1.0", "libaio", "<dt>--loops</dt><dd>3</dd>"):
        assert fact in doc, fact
    assert re.search(r"<dt>runtime per point</dt><dd>5 s</dd>", doc)


def test_every_measure_point_has_a_row_and_steps_go_to_procedure(rendered: tuple[Run, str, Path]) -> None:
    run, doc, _ = rendered
    results = doc[doc.index('id="results"'):doc.index('id="charts"')]
    for r in run.points:
        if r.point.phase == "measure":
            assert f'id="pt-{r.point.id}"' in results
        else:
            assert f'id="pt-{r.point.id}"' not in results
    procedure = doc[doc.index('id="procedure"'):doc.index('id="commands"')]
    assert "format purge" in procedure
    assert "method format" in procedure  # tags as text, not key=value
    assert "SEQ 128K fill 2x" in procedure
    assert "2 GiB per job" in procedure


def test_skipped_and_failed_points_show_reason_not_zeros(rendered: tuple[Run, str, Path]) -> None:
    _, doc, _ = rendered
    skipped = point_block(doc, "04-rnd512-write")
    assert "block size 512 B is below the physical block size 4096 B" in skipped
    assert "skipped" in skipped
    assert 'class="num"' not in skipped  # no numeric cells: never a zero for a point that did not run
    failed = point_block(doc, "05-rnd4k-write")
    assert "Input/output error" in failed
    assert 'class="num"' not in failed


def test_table_percentiles_come_from_bins(rendered: tuple[Run, str, Path]) -> None:
    run, doc, _ = rendered
    r = run.result("02-rnd4k-read")
    assert r is not None
    assert r.measurement is not None
    clat = r.measurement.directions["read"].clat
    assert clat is not None
    block = point_block(doc, "02-rnd4k-read")
    cells = re.findall(r'<td class="num">([^<]*)</td>', block)
    expected = [formatting.latency_ns(clat.percentile(p)) for p in html.TABLE_PERCENTILES]
    assert expected[-1] != expected[0]  # the fixture has a tail: p99.99 differs from p50
    assert cells[3:3 + len(expected)] == expected
    assert cells[0] == "950,000"
    assert cells[1] == "3,890.0"
    assert "43 (12+30)" in block  # CPU usr+sys
    assert "host CPU was the limit" in block  # per-point warning under its row


def test_fio_io_errors_become_a_point_warning(tmp_path: Path) -> None:
    m = dataclasses.replace(measurement(read=(10.0, 1e6, slow(100, 5000))), errors=3)
    doc = html.render_report(make_run(points=[ok(point("01-e", "E", "read", 4096, 1), m)]), tmp_path).read_text()
    assert "fio reported 3 I/O error(s) for this point" in point_block(doc, "01-e")


def test_batched_percentiles_equal_latencystats_percentile() -> None:
    lat = latency(slow(997, 12_345))
    batch = html.latency_percentiles(lat, html.PERCENTILES)
    assert batch == {p: lat.percentile(p) for p in html.PERCENTILES}


def test_charts_are_inline_svg(rendered: tuple[Run, str, Path]) -> None:
    _, doc, _ = rendered
    charts = doc[doc.index('<section id="charts">'):doc.index('<section id="latency">')]
    assert charts.count("<svg") == 2
    assert 'aria-label="Throughput"' in charts
    assert 'aria-label="IOPS"' in charts
    assert "SEQ1M Q8T1" in charts
    assert "RND4K Q32T1" in charts
    assert charts.count(">skipped<") == 2  # RND512 write, in the throughput and the IOPS chart
    assert charts.count(">failed<") == 2
    latency_part = doc[doc.index('<section id="latency">'):doc.index('<section id="procedure">')]
    assert "Read completion latency percentiles" in latency_part
    assert "Write completion latency percentiles" in latency_part
    assert latency_part.count("<svg") == 2
    assert "p99.99" in latency_part


def test_read_and_write_points_of_one_group_share_a_chart_row() -> None:
    run = make_run()
    rows, replaced = html.charted_points([r for r in run.points if r.point.phase == "measure"])
    assert replaced == 0
    assert [c.category for c in rows] == ["SEQ1M Q8T1", "RND4K Q32T1", "RND512 Q32T1"]
    assert set(rows[0].stats) == {"read", "write"}
    assert set(rows[1].stats) == {"read"}
    assert rows[1].notes == {"write": "failed"}  # the failed write is marked, not drawn as zero
    assert rows[2].stats == {}
    assert rows[2].notes == {"write": "skipped"}


def test_a_later_round_replaces_an_earlier_one_in_the_charts() -> None:
    def rnd(n: int, status: str) -> PointResult:
        p = TestPoint(id=f"r{n}", label=f"Round {n}", workload=Workload(rw="randwrite", bs=4096, runtime_s=1.0),
                      group="wsat", tags={"round": n})
        m = measurement(write=(1000.0 * n, 4.096e6 * n, [1000, 2000]))
        return ok(p, m) if status == "ok" else PointResult(point=p, status="failed", started="", finished="",
                                                           reason="fio died")
    rows, replaced = html.charted_points([rnd(1, "ok"), rnd(2, "ok")])
    assert replaced == 1
    assert rows[0].stats["write"].iops == 2000.0
    assert rows[0].category == "wsat"
    rows, _ = html.charted_points([rnd(1, "ok"), rnd(2, "failed")])
    assert rows[0].stats == {}
    assert rows[0].notes == {"write": "failed"}


def test_commands_and_job_files_are_included(rendered: tuple[Run, str, Path]) -> None:
    run, doc, _ = rendered
    commands = doc[doc.index('<section id="commands">'):]
    assert "fio --output-format=json+ --status-interval=1 job.fio" in commands
    assert "[01-seq1m-read]\nrw=read\nbs=1M\niodepth=8" in commands
    assert "fio: io_u error on file" in commands  # stderr of the failed point
    assert commands.count("<details>") == len(run.points)
    assert "purge step run by ssdlab itself" in commands


def test_notices_and_events(rendered: tuple[Run, str, Path]) -> None:
    _, doc, _ = rendered
    notices = doc[doc.index('<section id="notices">'):doc.index('<section id="results">')]
    assert "write cache is enabled on the target" in notices
    assert "Run interrupted" in notices
    assert "repeated: 05-rnd4k-write" in notices
    assert "resumed a run that was interrupted" in notices
    assert "2 point(s) not measured" in notices
    assert "Simulated target" not in doc


def test_report_is_self_contained(rendered: tuple[Run, str, Path]) -> None:
    _, doc, _ = rendered
    assert 'xmlns="http://www.w3.org/2000/svg"' in doc  # inline SVG namespaces are allowed...
    assert external_references(doc) == []  # ...and nothing else refers outside the file
    assert "<style>" in doc
    assert "@media print" in doc


def test_external_reference_check_tells_namespaces_from_urls() -> None:
    assert external_references('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://x/y"><use '
                               'xlink:href="#m1"/></svg>') == []
    assert external_references('<img src="https://cdn.example/x.png">')
    assert external_references('<link href="style.css" rel="stylesheet">')
    assert external_references('<script src="app.js"></script>')
    assert external_references("<p>see //cdn.example/x</p>")
    assert external_references("<style>@import 'x.css';</style>")


def test_hostile_run_data_is_escaped(tmp_path: Path) -> None:
    evil = '<script>alert("pwn")</script>&<b>'
    target = {**TARGET, "name": evil, "identity": {"model": evil, "serial": "s", "firmware": "f"}}
    p = point("01-x", f"SEQ {evil}", "read", 4096, 1, group=f"G {evil}")
    run = make_run(target=target, points=[ok(p, measurement(read=(10.0, 1e6, slow(100, 5000))),
                                             warnings=(evil,))])
    write_artefacts(tmp_path, "01-x", f"fio --name='{evil}'\n", f"[{evil}]\n</pre><script>x()</script>\n")
    doc = html.render_report(run, tmp_path).read_text()
    assert "<script" not in doc
    assert "<b>" not in doc
    assert "&lt;script&gt;alert(&#34;pwn&#34;)&lt;/script&gt;&amp;&lt;b&gt;" in doc
    assert "&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;" in doc


def test_registered_section_appears_with_toc_entry(tmp_path: Path) -> None:
    seen: list[Path] = []

    def builder(run: Run, run_dir: Path) -> list[sections.Section]:
        seen.append(run_dir)
        return [sections.Section(title="Dummy steady state", html="<p class='dummy'>dummy body 42</p>"),
                sections.Section(title="Dummy steady state", html="<p>second</p>")]

    sections.register(lambda run: run.suite == "report-test-dummy", builder)
    doc = html.render_report(make_run(suite="report-test-dummy"), tmp_path).read_text()
    assert seen == [tmp_path]
    assert "<p class='dummy'>dummy body 42</p>" in doc
    assert '<section class="suite" id="sec-dummy-steady-state">' in doc
    assert '<section class="suite" id="sec-dummy-steady-state-2">' in doc  # anchors stay unique
    assert '<a href="#sec-dummy-steady-state">Dummy steady state</a>' in doc
    # other suites do not get it
    assert "dummy body 42" not in html.render_report(make_run(), tmp_path).read_text()


def test_failing_section_builder_becomes_a_notice(tmp_path: Path) -> None:
    def broken(run: Run, run_dir: Path) -> list[sections.Section]:
        raise KeyError("steady_state")

    sections.register(lambda run: run.suite == "report-test-broken", broken)
    doc = html.render_report(make_run(suite="report-test-broken"), tmp_path).read_text()
    assert "Suite section failed" in doc
    assert "KeyError" in doc
    assert 'id="pt-01-seq1m-read"' in doc  # the rest of the report is still there


def test_sim_and_null_targets_get_prominent_notes(tmp_path: Path) -> None:
    sim = make_run(target={**TARGET, "kind": "sim", "name": "sim:tlc-1tb", "note": "simulated SSD: model"})
    doc = html.render_report(sim, tmp_path).read_text()
    assert '<div class="notice sim"><strong>Simulated target: not a real drive</strong>' in doc
    assert "not a measurement of any device" in doc
    assert "simulated SSD: model" not in doc  # the target's own note would only repeat it


def test_sim_measurements_name_the_model_and_show_no_cpu(tmp_path: Path) -> None:
    m = Measurement(engine="sim", engine_version="ssdlab-sim 0.1.0", directions={
        "read": DirectionStats(iops=5.0, bw_bytes=2e4, io_bytes=1, total_ios=5, runtime_ms=1000,
                               clat=latency([1000, 2000]))})
    run = make_run(points=[ok(point("01-s", "S", "read", 4096, 1), m)])
    run = dataclasses.replace(run, host={**HOST, "engine": "sim", "engine_version": "ssdlab-sim 0.1.0"},
                              target={**TARGET, "kind": "sim"})
    doc = html.render_report(run, tmp_path).read_text()
    assert "<dt>engine</dt><dd>ssdlab-sim 0.1.0</dd>" in doc
    assert "Simulated target: not a real drive" in doc
    cells = re.findall(r'<td class="num[^"]*"[^>]*>([^<]*)</td>', point_block(doc, "01-s"))
    assert cells[-1] == "n/a"  # no CPU figure for the model, not a 0
    null = make_run(target={"kind": "null", "name": "null (fio null engine)", "capacity_bytes": 1 << 30})
    doc = html.render_report(null, tmp_path).read_text()
    assert "null target: host ceiling, no device" in doc
    assert "Simulated target" not in doc
    assert "<dt>model</dt><dd>not reported</dd>" in doc


def test_run_without_points_renders(tmp_path: Path) -> None:
    run = make_run(points=[], status="failed")
    doc = html.render_report(run, tmp_path).read_text()
    assert "No measured points are recorded in this run." in doc
    assert "Run failed" in doc
    assert "<svg" not in doc


def test_repeated_rounds_are_charted_once_and_big_runs_are_capped(tmp_path: Path) -> None:
    # PTS-like: 56 stimuli x 25 rounds in one group, mixed read/write points
    pts = []
    for rnd in range(1, 26):
        for k in range(56):
            p = TestPoint(id=f"iops-r{rnd:02d}-s{k:02d}", label=f"IOPS R{rnd} S{k}",
                          workload=Workload(rw="randrw", bs=512 << (k % 8), iodepth=32, rwmixread=k // 8 * 15,
                                            runtime_s=60.0),
                          group="iops", tags={"round": rnd, "key": f"s{k}"})
            pts.append(ok(p, measurement(read=(1000.0 + k, 1e8, [20_000 + rnd, 40_000]),
                                         write=(500.0 + k, 5e7, [30_000, 90_000 + k]))))
    run = make_run(suite="pts-iops-like", points=pts, status="complete")
    started = time.perf_counter()
    doc = html.render_report(run, tmp_path).read_text()
    took = time.perf_counter() - started
    assert took < 60, f"rendering 1400 points took {took:.1f} s"
    assert doc.count('<tbody class="point"') == 1400
    assert "1344 earlier repetition(s) of a test (rounds, samples) are not charted" in doc
    # read+write bars each: every test is charted, 32 a pair of charts
    assert f"the 56 tests are charted in 2 pairs of charts, at most {html.MAX_CHART_BARS} bars each" in doc
    bars_part = doc[doc.index('<section id="charts">'):doc.index('<section id="latency">')]
    assert bars_part.count("<svg") == 4
    assert 'aria-label="IOPS, tests 33-56 of 56"' in bars_part
    assert "IOPS R25 S55" in bars_part
    latency_part = doc[doc.index('<section id="latency">'):doc.index('<section id="commands">')]
    assert latency_part.count("<svg") == html.MAX_LATENCY_LINES // html.LINES_PER_CHART
    assert f"{112 - html.MAX_LATENCY_LINES} of 112 point/direction lines are not drawn" in latency_part
    assert "IOPS R25 S0" in doc  # the last round is the one charted
    assert "Results table: 1400 measured points" in doc  # a long table starts collapsed
    assert '<details class="group"><summary>iops (1400 points)</summary>' in doc  # commands grouped per test


def test_small_runs_show_the_table_open_and_commands_flat(rendered: tuple[Run, str, Path]) -> None:
    _, doc, _ = rendered
    assert '<details class="results-wrap">' not in doc
    assert '<details class="group">' not in doc


def test_device_columns_are_named_short_and_apart() -> None:
    from ssdlab.report.groups import device_labels

    assert device_labels([("", "/work/files/a.dat"), ("", "/work/files/b.dat")], False) == ["a.dat", "b.dat"]
    # the same file name in two directories: as many more path components as tell them apart
    assert device_labels([("", "/mnt/x/t.dat"), ("", "/mnt/y/t.dat")], False) == ["x/t.dat", "y/t.dat"]
    assert device_labels([("node0", "/dev/nvme0n1"), ("node1", "/dev/nvme0n1")], True) == \
        ["node0:nvme0n1", "node1:nvme0n1"]


def test_quick_opens_with_a_crystaldiskmark_grid(tmp_path: Path) -> None:
    import shutil

    from ssdlab.results.store import load_run
    from stored_runs import SCHEMA1, SCHEMA2

    run = load_run(SCHEMA2 / "quick-file")
    doc = html.render_html(run, SCHEMA2 / "quick-file")
    assert doc.index("id='cdm'") < doc.index('<section id="results">')  # at the top
    grid = doc[doc.index("id='cdm'"):doc.index('<nav class="toc"')]
    rows = re.findall(r"<tr><th>(\w+)<span class='load'>(\w+)</span></th>(.*?)</tr>", grid)
    assert [(t, q) for t, q, _ in rows] == [("SEQ1M", "Q8T1"), ("SEQ1M", "Q1T1"), ("RND4K", "Q32T1"),
                                            ("RND4K", "Q1T1")]
    by_id = {r.point.id: r for r in run.points}
    for _, _, cells in rows:  # read, then write: each the MB/s of its point, linked to its row
        links = re.findall(r"<a href='#pt-([^']+)'><span class='mbps'>([^<]+)</span>", cells)
        assert [by_id[pid].point.tags.direction for pid, _ in links] == ["read", "write"]
        for pid, mbps in links:
            m = by_id[pid].measurement
            assert m is not None
            assert float(mbps.replace(",", "")) == pytest.approx(m.directions[str(by_id[pid].point.tags.direction)]
                                                                 .bw_mbps, rel=1e-3, abs=0.05)
    pts = shutil.copytree(SCHEMA1 / "pts-iops-op28", tmp_path / "pts")  # (its report writes pts/*.csv)
    assert "id='cdm'" not in html.render_html(load_run(pts), pts)
