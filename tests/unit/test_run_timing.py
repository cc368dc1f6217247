"""What a stored run took (results/timing.py), kept in the catalog, read back as the next run's history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ssdlab.results import catalog, store
from ssdlab.results.events import RunEvent
from ssdlab.results.model import SCHEMA_VERSION, DirectionStats, Measurement, PointResult, Run, TestPoint, Workload
from ssdlab.results.timing import run_timing
from ssdlab.run.eta import History


def _point(pid: str, *, wall_s: float, sim: dict[str, Any] | None = None, runtime_s: float | None = 1.0,
           started: str = "2026-01-01T00:00:02+00:00") -> PointResult:
    d = DirectionStats(iops=1000.0, bw_bytes=4.096e6, io_bytes=4_096_000, total_ios=1000, runtime_ms=1000)
    extra: dict[str, Any] = {"wall_s": wall_s, **({"sim": sim} if sim else {})}
    m = Measurement(engine="sim" if sim else "fio", engine_version="0", directions={"read": d}, extra=extra)
    w = Workload(rw="randread", bs=8192, runtime_s=runtime_s)
    return PointResult(point=TestPoint(id=pid, label=pid, workload=w), status="ok", started=started,
                       finished=started, measurement=m)


def _run(*points: PointResult, kind: str = "sim", status: str = "complete", laid_out: bool = True) -> Run:
    run = Run(schema_version=SCHEMA_VERSION, ssdlab_version="t", run_id="r", suite="pts-iops", status=status,
              created="2026-01-01T00:00:00+00:00", finished="2026-01-01T00:00:10+00:00",
              options={"suite": "pts-iops"}, target={"kind": kind, "name": "sim:x", "capacity_bytes": 4 << 30},
              host={"cpu_count": 2, "cpu_share_at_start": 0.5})
    if laid_out:
        run = run.with_event(RunEvent.of(time=run.created, kind="prepare", text="simulated drive laid out: 4 GiB"))
    for p in points:
        run = run.with_point(p)
    return run


def test_a_simulated_run_s_timing() -> None:
    sim = {"simulated_ios": 2e6, "simulated_ios_per_wall_s": 4e6}
    t = run_timing(_run(_point("a", wall_s=0.6, sim=sim), _point("b", wall_s=0.7, sim=sim)))
    assert t["results"] == 2
    assert t["wall_s"] == 10.0
    assert t["setup_s"] == 2.0
    assert (t["layout_s"], t["layout_bytes"]) == (2.0, 4 << 30)
    assert t["exec_s"] == pytest.approx(1.3)
    assert t["bookkeeping_s"] == pytest.approx((10.0 - 2.0 - 1.3) / 2)
    assert t["overhead_s"] == pytest.approx(0.15)  # 0.6 and 0.7 s beyond 0.5 s of the core
    assert t["sim_units"] == 2 * 2e6 * 2  # an 8 KiB I/O weighs 2 units
    assert t["sim_core_s"] == pytest.approx(1.0)
    assert t["share"] == 0.5  # what the host left it as it started


def test_fio_points_give_their_overhead_beyond_the_run_time() -> None:
    t = run_timing(_run(_point("a", wall_s=1.4), _point("b", wall_s=1.2), kind="file", laid_out=False))
    assert t["overhead_s"] == pytest.approx(0.3)
    assert "layout_s" not in t
    assert "sim_units" not in t


def test_an_unfinished_run_teaches_nothing() -> None:
    assert run_timing(_run(_point("a", wall_s=1.0), status="interrupted")) == {}


def test_a_finished_run_is_remembered_and_read_back_as_history(tmp_path: Path) -> None:
    sim = {"simulated_ios": 2e6, "simulated_ios_per_wall_s": 4e6}
    assert catalog.history(tmp_path, "pts-iops", "sim") == []  # no catalog yet: nothing, and none created
    assert not (tmp_path / catalog.CATALOG_FILE).exists()
    for i in range(2):
        run_dir = tmp_path / f"r{i}"
        run_dir.mkdir()
        run = _run(_point("a", wall_s=0.6, sim=sim))
        store.save_run(run_dir, run)
        catalog.remember(tmp_path, run, run_dir)
    found = catalog.history(tmp_path, "pts-iops", "sim")
    assert len(found) == 2
    assert catalog.history(tmp_path, "pts-iops", "file") == []  # another kind of target
    h = History.of(found)
    assert h.sim_rate == pytest.approx(2e6 * 2 / 0.5 / 0.5)  # as on an idle host: they ran with half a CPU
    with catalog.Catalog(tmp_path) as cat:  # the runs' own records: a refresh re-reads nothing
        assert cat.refresh().updated == 0


def test_a_resumed_run_gives_its_points_figures_only() -> None:
    sim = {"simulated_ios": 2e6, "simulated_ios_per_wall_s": 4e6}
    run = _run(_point("a", wall_s=0.6, sim=sim)).with_event(RunEvent.of(time="", kind="resume"))
    t = run_timing(run)
    assert "wall_s" not in t
    assert "share" not in t
    assert "layout_s" not in t
    assert t["sim_core_s"] == pytest.approx(0.5)
