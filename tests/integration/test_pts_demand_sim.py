"""PTS CBW and DIRTH end to end, scaled, on the simulated drive (virtual time: seconds of wall time), and CBW with
real fio on a small file: what the report's plots rest on is checked against the stored points."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ssdlab.analysis import steady
from ssdlab.report import latency
from ssdlab.results import hist
from ssdlab.results.store import load_run
from ssdlab.results.verdict import run_verdicts
from ssdlab.suites.pts import common, demand

pytestmark = pytest.mark.integration

CliRunner = Callable[..., Any]
TINY = ("--runtime", "0.1", "--max-rounds", "5", "--di-tc", "4,1", "--di-qd", "4,1", "--di-pc-round-minutes", "2",
        "--di-hist-minutes", "4", "--di-hist-prewrite-minutes", "2", "-q")


def _run(cli: CliRunner, tmp_path: Path, suite: str, target: str, *extra: str) -> Path:
    out = tmp_path / "run"
    r = cli("run", suite, "--target", target, "--out", str(out), *TINY, *extra)
    # not reaching steady state in 5 scaled rounds exits 1: the exit code is the stored verdict's
    assert r.code in (0, 1), r.err
    assert r.code == run_verdicts(load_run(out)).exit_code
    return out


def test_cbw_on_the_simulator(cli: CliRunner, tmp_path: Path) -> None:
    out = _run(cli, tmp_path, "pts-cbw", "sim:tlc-4k?capacity=64MiB")
    run = load_run(out)
    assert run.status == "complete"
    ids = [p.point.id for p in run.points]
    assert ids[0] == "cbw-0-purge"
    assert ids[1] == "cbw-pc01"
    s = common.settings_from_run(run)
    state = demand.analyse(demand.CBW, s, run)
    assert state.finished
    assert state.rounds_done == 5
    first_round = ids.index("cbw-r01-pw")
    assert ids[first_round:first_round + 5] == ["cbw-r01-pw", "cbw-r01-t04q04", "cbw-r01-t04q01", "cbw-r01-t01q04",
                                                "cbw-r01-t01q01"]
    # the recorded verdict is the spec's rule applied to the stored tracking values (IOPS at T4Q4)
    res = run.finished_by_id()
    tracking = [common.metric_value("iops", res[f"cbw-r{r:02d}-t04q04"]) for r in range(1, 6)]
    ev = next(e for e in run.events if e.get("kind") == "pts-steady-state" and e.get("test") == "cbw")
    assert ev["steady"] is steady.check_last([v for v in tracking if v is not None]).steady
    verdict = next(v for v in run_verdicts(run).tests if v.test == "cbw")
    assert verdict.kind == ("steady" if ev["steady"] else "not-steady")
    # the simulator ran the CBW stimulus as fio would: zones, the block-size mix, 40/60, 4 KiB alignment
    sim = json.loads((out / "points" / "cbw-r01-t04q01" / "sim.json").read_text())
    assert sim["workload"]["rmix"] == 40
    assert sim["workload"]["align"] == 4096
    assert [len(z) for z in sim["workload"]["zones"]] == [3, 3, 3]
    assert len(sim["workload"]["bssplit"]) == 12
    assert not sim["notes"]
    assert sim["workload"]["numjobs"] == 4
    assert sim["workload"]["iodepth"] == 1
    job = (out / "points" / "cbw-r01-t01q04" / "cmd.txt").read_text()
    assert re.search(r"^numjobs=1$", job, re.M)
    assert re.search(r"^iodepth=4$", job, re.M)
    # demand variation / intensity rest on more load giving more IOPS and longer response times
    values = {(v.tc, v.qd): v for v in demand.sweep_values(demand.CBW, state.window, run, state.settings)}
    top, bottom = values[(4, 4)], values[(1, 1)]
    assert top.iops
    assert bottom.iops
    assert top.iops > 1.5 * bottom.iops
    assert top.art_us
    assert bottom.art_us
    assert top.art_us > bottom.art_us
    # MaxIOPS/MidIOPS/MinIOPS: recorded choice = the rule applied to the window averages
    sel = demand.select_points(list(values.values()), "write", 5.0, (1, 1))
    assert ev["selection"] == {r: (list(v) if v else None) for r, v in sel.points.items()}
    assert sel.points["min"] == (1, 1)
    # one pre-write and one capture per distinct point, with histogram bins behind the levels
    for role, (tc, qd), _roles in sel.distinct():
        pr = res[f"cbw-h-{role}"]
        assert (pr.point.workload.numjobs, pr.point.workload.iodepth) == (tc, qd)
        assert pr.point.workload.runtime_s == pytest.approx(0.4)  # 4 spec minutes of 0.1 s
        d = latency.point_distribution(pr)
        assert d is not None
        m = pr.measurement
        assert m is not None
        assert d.n == sum(x.total_ios for x in m.directions.values())
        for lv in latency.confidence_levels(d, latency.NINES):
            assert lv.value_ns == min(hist.percentiles(d.counts, [lv.pct])[lv.pct], int(d.max_ns or 0))
    assert any("is scaled, NOT SNIA PTS compliant" in w for w in run.warnings)
    html = (out / "report.html").read_text()
    for title in ("PTS CBW (composite block-size workload): set-up", "Demand variation", "Demand intensity",
                  "IOPS vs total outstanding I/O", "response-time histograms at MaxIOPS, MidIOPS and MinIOPS",
                  "Exceedance (1 - CDF)", "5 nines", "Confidence levels", "zoned:50/5:30/15:20/80",
                  "Allowed maximum slope excursion", "CPU utilisation: not applicable"):
        assert title in html, title
    rows = (out / "pts" / "cbw.csv").read_text().splitlines()
    assert rows[0].startswith("test,tc,qd,toio,iops")
    assert len(rows) == 1 + 4
    r = cli("latency", str(out), "cbw-h-min", "--direction", "split", "--out", str(tmp_path / "min.svg"))
    assert r.code == 0, r.err
    assert "cbw-h-min writes" in r.out
    assert "5 nines (99.999 %)" in r.out
    assert (tmp_path / "min.svg").read_text().startswith("<svg")
    summary = json.loads((out / "pts" / "summary.json").read_text())["tests"]["cbw"]
    assert summary["selection"] == ev["selection"]
    assert summary["window"] == state.window
    assert set(summary["captures"]) == {r for r, _, _ in sel.distinct()}


def test_dirth_on_the_simulator_and_what_a_resume_runs(cli: CliRunner, tmp_path: Path) -> None:
    out = _run(cli, tmp_path, "pts-dirth", "sim:tlc-4k?capacity=64MiB", "--di-pc", "3", "--no-report")
    run = load_run(out)
    assert run.status == "complete"
    pc = [p for p in run.points if p.point.tags.get("stage") == "pc"]
    assert len(pc) == 1
    assert pc[0].point.workload.runtime_s == pytest.approx(0.3)
    sweep = [p for p in run.points if p.point.tags.get("stage") == "sweep"]
    assert {(p.point.workload.bs, p.point.workload.rwmixread, p.point.workload.bssplit) for p in sweep} == \
        {(8192, 65, None)}
    # what a resumed run would be asked to run, from the stored points alone
    s = common.settings_from_run(run)
    assert demand.remaining(demand.DIRTH, s, run) == []
    ids = [p.point.id for p in run.points]
    cut = dataclasses.replace(run, points=run.points[:ids.index("dirth-r03-t01q01")])
    assert [p.id for p in demand.remaining(demand.DIRTH, s, cut)][:3] == ["dirth-r03-t01q01", "dirth-r04-pw",
                                                                        "dirth-r04-t04q04"]
    before_captures = dataclasses.replace(run, points=run.points[:ids.index("dirth-r05-t01q01") + 1])
    rest = demand.remaining(demand.DIRTH, s, before_captures)
    assert [p.id for p in rest] == [i for i in ids if "-h-" in i]  # the captures, pre-write first
    assert rest[0].id.endswith("-pw")
    # a point that measured too little (verdict.py: invalid) ends the test there, incomplete, never steady
    bad = dataclasses.replace(run, points=tuple(
        dataclasses.replace(p, status="invalid", reason="invalid: it completed 3 I/Os")
        if p.point.id == "dirth-r02-t01q01" else p for p in run.points))
    state = demand.analyse(demand.DIRTH, s, bad)
    assert state.invalid == ("dirth-r02-t01q01",)
    assert state.rounds_done == 2
    assert not state.steady
    assert state.selection is None
    assert demand.remaining(demand.DIRTH, s, bad) == []
    event = demand.verdict_event(demand.DIRTH, s, state, bad)
    assert event["verdict"] == "incomplete"
    assert "3 I/Os" in event["reason"]


def test_cbw_with_fio_on_a_file(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = cli("run", "pts-cbw", "--target", f"file:{tmp_path / 'dut.dat'}?size=32MiB", "--out", str(out), "--runtime",
            "0.2", "--max-rounds", "5", "--di-tc", "2", "--di-qd", "2,1", "--di-pc", "1", "--di-prewrite-minutes", "1",
            "--di-hist-minutes", "1", "--di-hist-prewrite-minutes", "1", "--purge", "recreate", "-q", "--no-report")
    assert r.code in (0, 1), r.err  # steady state on a real file depends on the host; the verdict decides
    assert r.code == run_verdicts(load_run(out)).exit_code
    run = load_run(out)
    assert run.status == "complete"
    job = (out / "points" / "cbw-r01-t02q01" / "job.fio").read_text()
    for line in ("numjobs=2", "iodepth=1", "rw=randrw", "rwmixread=40", "blockalign=4k",
                 "random_distribution=zoned:50/5:30/15:20/80", f"bssplit={demand.CBW_BSSPLIT}"):
        assert re.search(rf"^{re.escape(line)}$", job, re.M), line
    # fio ran the mix: reads are about 40 % of the I/Os and the mean I/O size is the bssplit's mean
    sizes = {"512": 512, "1k": 1024, "1536": 1536, "2k": 2048, "2560": 2560, "3k": 3072, "3584": 3584, "4k": 4096,
             "8k": 8192, "16k": 16384, "32k": 32768, "64k": 65536}
    mean_size = sum(sizes[b] * int(w) for b, w in (x.split("/") for x in demand.CBW_BSSPLIT.split(":"))) / 100
    reads = ios = nbytes = 0
    for p in run.points:
        if p.point.tags.get("stage") == "sweep" and p.measurement is not None:
            rd = p.measurement.get("read")
            reads += rd.total_ios if rd is not None else 0
            ios += sum(d.total_ios for d in p.measurement.directions.values())
            nbytes += sum(d.io_bytes for d in p.measurement.directions.values())
    assert ios > 1000
    assert 0.33 < reads / ios < 0.47
    assert nbytes / ios == pytest.approx(mean_size, rel=0.2)
    state = demand.analyse(demand.CBW, common.settings_from_run(run), run)
    assert state.finished
    assert state.selection is not None
    assert all(f"cbw-h-{role}" in run.finished_by_id() for role, _, _ in state.selection.distinct())
