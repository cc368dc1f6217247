"""SimExecutor: Workload translation, fio-shaped Measurement, artefacts and drive-state persistence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ssdlab.errors import TargetError, UsageError
from ssdlab.fio.job import PERCENTILE_LIST
from ssdlab.results import hist, store
from ssdlab.results.bins import EMPTY
from ssdlab.results.model import SCHEMA_VERSION, PointResult, Run, TestPoint, Workload, percentile_key
from ssdlab.run.target import parse_target
from ssdlab.sim.executor import SimExecutor, _latency, core_bins, parse_bssplit, translate
from ssdlab.sim.target import STATE_FILE, STATE_META, SimTarget
from ssdlab.targets.base import TargetOptions

SPEC = "sim:tlc-4k?capacity=256MiB"
SERIES_KEYS = {"time_s", "write_iops", "write_bw_MBps", "write_lat_mean_us"}


def target(spec: str = SPEC) -> SimTarget:
    t = parse_target(spec)
    assert isinstance(t, SimTarget)
    return t


def point(pid: str = "p1", **kw: object) -> TestPoint:
    defaults: dict[str, object] = {"rw": "randwrite", "bs": 4096, "iodepth": 8, "runtime_s": 0.2}
    defaults.update(kw)
    return TestPoint(id=pid, label=pid, workload=Workload(**defaults))  # type: ignore[arg-type]


def run(t: SimTarget, p: TestPoint, run_dir: Path):  # type: ignore[no-untyped-def]
    return SimExecutor().run_point(p, t, run_dir / "points" / p.id)


def test_translate_rw_mix_and_range() -> None:
    sw = translate(point(rw="randrw", rwmixread=70, offset=4096, size=1 << 20), 1 << 28, 1)
    assert sw.core["rmix"] == 70
    assert sw.core["random"] == 1
    assert sw.core["range_start"] == 4096
    assert sw.core["range_len"] == 1 << 20
    assert sw.directions == ("read", "write")
    sw = translate(point(rw="write", runtime_s=None, io_bytes=1 << 20), 1 << 28, 1)
    assert sw.core["time_based"] == 0
    assert sw.core["io_bytes"] == 1 << 20


def test_translate_rejects_unknown_rw() -> None:
    with pytest.raises(TargetError, match="trimwrite"):
        translate(point(rw="trimwrite"), 1 << 28, 1)


def test_parse_bssplit() -> None:
    assert parse_bssplit("4k/50:64k/50", False) == [(4096, 500000), (65536, 500000)]
    assert parse_bssplit("4k/20:8k", False) == [(4096, 200000), (8192, 800000)]
    assert parse_bssplit("4k/100,64k/100", True) == [(65536, 1000000)]
    with pytest.raises(UsageError):
        parse_bssplit("4x/50", False)


def test_measurement_has_fio_shape(tmp_path: Path) -> None:
    t = target()
    t.prepare(True)
    m = run(t, point(log_interval_ms=50), tmp_path)
    assert m.engine == "sim"
    w = m.directions["write"]
    assert w.total_ios > 0
    # fio's drain: I/Os in flight at 0.2 s still complete and count, and the runtime runs until the last one
    assert w.clat is not None
    assert 200 <= w.runtime_ms <= 200 + w.clat.max_ns / 1e6 + 1
    assert w.iops == pytest.approx(w.total_ios / (w.runtime_ms / 1000), rel=0.01)
    assert w.io_bytes == w.total_ios * 4096
    assert w.clat is not None
    assert sum(c for _, c in w.clat.bins) == w.total_ios
    p99 = w.clat.percentile(99)
    assert p99 is not None
    assert p99 == hist.percentiles(hist.counts_from_sparse(w.clat.bins), [99])[99]
    assert set(m.series) == SERIES_KEYS
    assert len(m.series["time_s"]) == 4
    assert m.extra["sim"]["wa_gc"] is not None


def test_artefacts_written(tmp_path: Path) -> None:
    t = target()
    run(t, point(), tmp_path)
    pdir = tmp_path / "points" / "p1"
    doc = json.loads((pdir / "sim.json").read_text())
    assert doc["params"]["capacity"] == 256 * 1024**2
    assert doc["counters"]["host_write_bytes"] > 0
    assert "rw=randwrite" in (pdir / "cmd.txt").read_text()
    assert (tmp_path / STATE_FILE).exists()


def _stored(results: list[PointResult]) -> Run:
    return Run(schema_version=SCHEMA_VERSION, ssdlab_version="t", run_id="r", suite="s", status="running",
               created="", options={}, target={}, host={}, points=tuple(results))


@pytest.mark.parametrize("checkpoint_every_point", [False, True])
def test_a_resumed_run_gets_the_drive_state_of_its_last_finished_point(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checkpoint_every_point: bool) -> None:
    if checkpoint_every_point:
        monkeypatch.setattr("ssdlab.sim.target.CHECKPOINT_S", 0.0)
        monkeypatch.setattr("ssdlab.sim.target.CHECKPOINT_SHARE", 0.0)
    first = target()
    first.prepare(True)
    results = []
    for p in (point("a", runtime_s=None, io_bytes=32 << 20), point("b"), point("c", rw="randrw")):
        m = run(first, p, tmp_path)
        results.append(PointResult(point=p, status="ok", started="", finished="", measurement=m))
        store.save_run(tmp_path, _stored(results))  # what the orchestrator records after each point
    expected = first.device().counters()
    saved_after = json.loads((tmp_path / STATE_META).read_text())["point"]
    assert saved_after == ("b" if checkpoint_every_point else "")  # saved before a point, when due
    resumed = target()  # a fresh target object, as after `ssdlab resume`
    resumed.prepare(True)
    note = resumed.begin_session(tmp_path, replay=lambda p: SimExecutor().replay(p, resumed))
    assert "reloaded" in note
    assert f"replayed the {1 if checkpoint_every_point else 3} finished point(s)" in note
    assert resumed.device().counters() == expected  # exactly where point c left it
    d = run(resumed, point("d"), tmp_path)
    again = target()
    again.prepare(True)
    for p in ("a", "b", "c"):
        run(again, point(p, runtime_s=None, io_bytes=32 << 20) if p == "a" else point(p, rw="randrw" if p == "c"
                                                                                      else "randwrite"), tmp_path / "x")
    assert run(again, point("d"), tmp_path / "x").directions == d.directions  # as if never interrupted


def test_a_checkpoint_the_run_does_not_hold_is_refused(tmp_path: Path) -> None:
    t = target()
    t.save_state(tmp_path, "zz")
    store.save_run(tmp_path, _stored([]))
    with pytest.raises(TargetError, match="does not hold"):
        target().begin_session(tmp_path)


def test_same_point_same_result(tmp_path: Path) -> None:
    a = run(target(), point(rw="randrw"), tmp_path / "a")
    b = run(target(), point(rw="randrw"), tmp_path / "b")
    assert a.directions == b.directions


def test_purge_resets_and_capacity_option(tmp_path: Path) -> None:
    t = SimTarget.from_spec("tlc-4k", {"capacity": "256MiB"}, TargetOptions(capacity=64 << 20))
    assert t.capacity() == 64 << 20
    assert t.purge_methods() == ["sim-reset"]
    t.prepare(True)
    assert t.device().counters()["mapped_slots"] > 0
    assert "fresh-out-of-box" in t.purge("sim-reset")
    assert t.device().counters()["mapped_slots"] == 0
    with pytest.raises(TargetError):
        t.purge("nvme-format")


def test_info_states_model() -> None:
    info = target().info()
    assert info["kind"] == "sim"
    assert "model" in info["note"]
    assert info["sim"]["params"]["iu"] == 4096
    assert target().hazards() == []


def test_histogram_log_matches_point_bins(tmp_path: Path) -> None:
    from ssdlab.fio import histlog

    t = target()
    t.prepare(True)
    m = run(t, point(rw="randrw", rwmixread=70, runtime_s=0.5, hist_log_ms=100), tmp_path)
    assert m.extra["hist_log_ms"] == 100
    files = m.extra["hist_logs"]
    assert files == ["hist_clat_hist.1.log"]
    times, ddirs, counts = histlog.read_log(tmp_path / "points" / "p1" / files[0])
    logged = sorted(set(times.tolist()))
    # one row per 100 ms interval; I/Os still in flight at 0.5 s complete (fio's drain) and land in the next one
    assert logged[:5] == [100, 200, 300, 400, 500]
    assert logged == list(range(100, 100 * len(logged) + 1, 100))
    assert logged[-1] <= -(-(m.runtime_ms + 1) // 100) * 100  # runtime_ms is rounded: the drain may end 0.4 ms later
    assert counts.shape[1] == hist.PLAT_NR
    for ddir, name in ((0, "read"), (1, "write")):
        stats = m.directions[name].clat
        assert stats is not None
        total = counts[ddirs == ddir].sum(axis=0)
        assert np.array_equal(total, hist.counts_from_sparse(stats.bins))


def test_streams_are_refused(tmp_path: Path) -> None:
    p = TestPoint(id="s", label="s", workload=Workload(rw="randread", bs=4096, runtime_s=0.1),
                  streams=(Workload(rw="randread", bs=4096), Workload(rw="randwrite", bs=4096)))
    with pytest.raises(TargetError, match="concurrent streams"):
        run(target(), p, tmp_path)


def test_write_cache_line() -> None:
    assert target().set_write_cache(False).startswith("write cache: ")


def test_rate_options_as_fio_applies_them(tmp_path: Path) -> None:
    # curves put the total in Workload.rate_iops but fio runs the per-job, per-direction option
    opts = {"rate_iops": "300,100", "rate_process": "poisson"}
    p = point(rw="randrw", rwmixread=75, numjobs=2, runtime_s=2.0, rate_iops=800, options=opts)
    t = target()
    t.prepare(True)
    m = run(t, p, tmp_path)
    assert m.total_iops == pytest.approx(800, rel=0.08)
    assert translate(p, 1 << 28, 1).notes == ()


def test_unmodelled_options_are_noted() -> None:
    sw = translate(point(random_distribution="zipf:1.2", options={"blockalign": "512",
                                                                  "buffer_compress_percentage": "50"}), 1 << 28, 1)
    assert any("zipf" in n for n in sw.notes)
    assert any("buffer_compress_percentage" in n for n in sw.notes)
    assert not any("blockalign" in n for n in sw.notes)  # modelled: offsets on 512-byte boundaries
    assert sw.core["align"] == 512


def test_a_mixed_point_gives_writes_their_own_sizes(tmp_path: Path) -> None:
    sw = translate(point(rw="randrw", rwmixread=70, bssplit="4k/50:8k/50,64k/100"), 256 * 1024**2, 1)
    assert sw.core["bssplit"] == [(4096, 500000), (8192, 500000)]
    assert sw.core["bssplit_w"] == [(65536, 1000000)]
    assert sw.core["align"] == 4096  # the smallest size of either direction
    assert "bssplit_w" not in translate(point(rw="randwrite", bssplit="4k/50:8k/50,64k/100"), 256 * 1024**2, 1).core
    t = target()
    t.prepare(True)
    m = run(t, point(rw="randrw", rwmixread=70, bssplit="4k/100,64k/100", runtime_s=0.2), tmp_path)
    assert m.directions["read"].bw_bytes / m.directions["read"].iops == pytest.approx(4096)
    assert m.directions["write"].bw_bytes / m.directions["write"].iops == pytest.approx(65536)


def test_sim_json_is_one_key_per_line(tmp_path: Path) -> None:
    t = target()
    t.prepare(True)
    run(t, point(runtime_s=0.05), tmp_path)
    text = (tmp_path / "points" / "p1" / "sim.json").read_text()
    doc = json.loads(text)
    assert len(text.splitlines()) == len(doc) + 2
    assert doc["params"]["tr"] == [42.0, 58.0, 80.0]


def test_executor_does_not_depend_on_the_target_module() -> None:
    """sim/target.py makes the executor; the executor knows the target only as the SimDrive protocol (issue 33: the
    two modules imported each other)."""
    import ast
    from pathlib import Path

    import ssdlab.sim.executor as executor

    tree = ast.parse(Path(executor.__file__).read_text(encoding="utf-8"))
    names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "ssdlab.sim.target" not in names
    assert "SimTarget" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def test_core_histogram_to_bins_and_percentiles_as_numpys() -> None:
    """The core's dense histogram read without numpy gives the bins and percentiles the dense arrays give."""
    rng = np.random.default_rng(7)
    for fill in (0.002, 0.05, 1.0):
        counts = np.where(rng.random(hist.PLAT_NR) < fill, rng.integers(1, 10**9, hist.PLAT_NR), 0).astype(np.int64)
        counts[0] = 0 if fill < 1 else counts[0]
        bins = core_bins(counts.tobytes())
        assert bins == hist.sparse_bins(counts)
        lat = _latency("clat", int(counts.sum()), 1.0, 1.0, 1, 10**12, bins)
        want = hist.percentiles(counts, list(PERCENTILE_LIST))
        assert lat.percentiles_ns == {percentile_key(p): float(v) for p, v in want.items()}
    assert core_bins(bytes(8 * hist.PLAT_NR)) == EMPTY
    with pytest.raises(ValueError, match="int64"):
        core_bins(bytes(12))


def test_a_simulated_point_loads_no_numpy(tmp_path: Path) -> None:
    """A run on the simulator (its executor, trace replay included in the class) stores a point without numpy,
    which costs each command about 0.1 CPU-s to load (benchmarks/sim_end_to_end.py)."""
    code = (
        "import sys; from pathlib import Path\n"
        "from ssdlab.results.model import TestPoint, Workload\n"
        "from ssdlab.run.target import parse_target\n"
        f"t = parse_target({SPEC!r})\n"
        "w = Workload(rw='randrw', bs=4096, iodepth=8, runtime_s=0.05, log_interval_ms=10, hist_log_ms=10)\n"
        "p = TestPoint(id='p', label='p', workload=w)\n"
        "m = t.executor(None).run_point(p, t, Path(sys.argv[1]) / 'points' / 'p')\n"
        "assert m.directions['read'].clat.percentile(99) > 0 and m.series['time_s']\n"
        "print('numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
