"""The live record a run keeps for `ssdlab serve` (DIR/live.jsonl, run/liverecord.py) and what it records: fio's
status documents as per-interval rates with percentiles from the bins' differences, per device; drive
temperatures from the health monitor; and what a run writes there from start to verdict."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ssdlab.fio.status import StatusRates, documents
from ssdlab.results import hist
from ssdlab.results.live import LIVE_PERCENTILES, LiveSample
from ssdlab.results.model import PointResult, TestPoint, Workload
from ssdlab.run.eta import Eta
from ssdlab.run.liverecord import LIVE_FILE, LiveRecorder, sample_record
from ssdlab.run.progress import QuietProgress
from ssdlab.targets import health


def _docs(golden: Callable[[str], Path]) -> list[dict[str, Any]]:
    lines = golden("file-randread-status.json").read_text(encoding="utf-8").splitlines(keepends=True)
    return [doc for _, doc in documents(lines)]


def _counts(doc: dict[str, Any]) -> Any:
    return hist.counts_from_bins(doc["jobs"][0]["read"]["clat_ns"]["bins"])


def test_the_first_interval_has_the_percentiles_of_the_bins_so_far(golden: Callable[[str], Path]) -> None:
    """The first interval is all the point has done: its percentiles are those of the document's bins, by fio's
    rule, clamped to the observed range (fio's printed ones can differ: a status document's bins may hold an
    I/O more than its N)."""
    docs = _docs(golden)
    sample = StatusRates().feed(docs[0])
    assert sample is not None
    assert sample.read_pcts_us is not None
    clat = docs[0]["jobs"][0]["read"]["clat_ns"]
    expected = hist.percentiles(_counts(docs[0]), LIVE_PERCENTILES)
    for p, got in zip(LIVE_PERCENTILES, sample.read_pcts_us, strict=True):
        assert got == pytest.approx(min(max(expected[p], clat["min"]), clat["max"]) / 1000)
    assert sample.read_pcts_us[0] == pytest.approx(clat["percentile"]["99.000000"] / 1000)
    assert sample.read_lat_us == pytest.approx(clat["mean"] / 1000)
    assert sample.write_pcts_us is None  # no writes in this run


def test_a_later_interval_takes_the_percentiles_of_its_own_ios(golden: Callable[[str], Path]) -> None:
    docs = _docs(golden)
    rates = StatusRates()
    rates.feed(docs[0])
    second = rates.feed(docs[1])
    assert second is not None
    assert second.read_pcts_us is not None
    ms = [d["jobs"][0].get("job_runtime") for d in docs[:2]]  # the run time the interval's rates cover
    if all(isinstance(m, (int, float)) for m in ms):
        assert second.interval_s == pytest.approx((ms[1] - ms[0]) / 1000)
    assert second.read_iops * second.interval_s == pytest.approx(
        docs[1]["jobs"][0]["read"]["total_ios"] - docs[0]["jobs"][0]["read"]["total_ios"])
    own = _counts(docs[1]) - _counts(docs[0])  # the I/Os of the second interval alone
    expected = hist.percentiles(own, LIVE_PERCENTILES)
    clat = docs[1]["jobs"][0]["read"]["clat_ns"]
    for p, got in zip(LIVE_PERCENTILES, second.read_pcts_us, strict=True):
        assert got == pytest.approx(min(max(expected[p], clat["min"]), clat["max"]) / 1000)
    cumulative = hist.percentiles(_counts(docs[1]), LIVE_PERCENTILES)
    assert any(expected[p] != cumulative[p] for p in LIVE_PERCENTILES)  # not the whole point's so far


def test_a_point_on_two_devices_gives_one_sample_per_device(golden: Callable[[str], Path]) -> None:
    docs = _docs(golden)
    two = []
    for doc in docs[:2]:
        job = doc["jobs"][0]
        slow = copy.deepcopy(job)
        slow["jobname"] = "p-d1"
        slow["read"]["total_ios"] = job["read"]["total_ios"] // 2
        slow["read"]["io_bytes"] = job["read"]["io_bytes"] // 2
        two.append({**doc, "jobs": [{**job, "jobname": "p-d0"}, slow]})
    rates = StatusRates()
    first = rates.feed(two[0])
    assert first is not None
    assert len(first.parts) == 2
    d0, d1 = first.parts
    assert d0 is not None
    assert d1 is not None
    assert d1.read_iops == pytest.approx(d0.read_iops / 2, rel=1e-3)
    assert first.read_iops == pytest.approx(d0.read_iops + d1.read_iops)
    second = rates.feed(two[1])
    assert second is not None
    assert second.parts[0] is not None
    assert second.parts[0].read_iops == pytest.approx(second.read_iops - second.parts[1].read_iops)  # type: ignore[union-attr]


# ------------------------------------------------------------------ the recorder


class Events(QuietProgress):
    def __init__(self) -> None:
        self.seen: list[str] = []
        self.notes: list[str] = []

    def live(self, sample: LiveSample) -> None:
        self.seen.append("live")

    def note(self, text: str) -> None:
        self.notes.append(text)


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / LIVE_FILE).read_text(encoding="utf-8").splitlines()]


ETA = Eta(expected_s=10.0, worst_s=10.0, expected_points=2, worst_points=2, next_s=5.0)
POINT = TestPoint(id="p1", label="RND4K", workload=Workload(rw="randread", bs=4096, runtime_s=10.0),
                  group="g", tags={"test": "iops", "round": 3})


def test_the_recorder_writes_each_event_and_passes_it_on(tmp_path: Path) -> None:
    inner = Events()
    rec = LiveRecorder(tmp_path, inner, devices=[("", "/dev/a"), ("", "/dev/b")], engine="fio")
    rec.run_start("quick on a", ETA)
    rec.point_start(POINT, 1, ETA)
    part = LiveSample(elapsed_s=5.0, read_iops=10.0, read_mbps=0.04, read_lat_us=100.0,
                      read_pcts_us=(200.0, 300.0, 400.0))
    rec.live(LiveSample(elapsed_s=5.0, read_iops=20.0, read_mbps=0.08, read_lat_us=100.0,
                        read_pcts_us=(210.0, 310.0, 410.123456), parts=(part, None), interval_s=0.1024))
    rec.health("/dev/a", {"time": "x", "elapsed_s": 30.0, "temperature_c": 41, "tmt1_seconds": 2})
    rec.point_end(PointResult(point=POINT, status="ok", started="s", finished="f"))
    rec.note("a note")
    rec.close()
    kinds = [r["k"] for r in _records(tmp_path)]
    assert kinds == ["run", "point", "s", "health", "end", "note"]
    run, point, sample, temp, end, _ = _records(tmp_path)
    assert run["devices"] == ["/dev/a", "/dev/b"]
    assert run["host_group"] is False
    assert point["test"] == "iops"
    assert point["round"] == 3
    assert point["index"] == 1
    assert sample["a"] == {"r": [20.0, 0.08, 100.0, 210.0, 310.0, 410.1]}  # four significant digits
    assert sample["d"] == [{"r": [10.0, 0.04, 100.0, 200.0, 300.0, 400.0]}, None]
    assert sample["f"] == 0.5
    assert sample["dt"] == 0.102  # the time the rates cover (`e` may count whole seconds)
    assert sample["left_s"] >= 5.0
    assert temp["device"] == "/dev/a"
    assert temp["temperature_c"] == 41
    assert temp["tmt1_seconds"] == 2
    assert end["id"] == "p1"
    assert end["status"] == "ok"
    assert inner.seen == ["live"]
    assert inner.notes == ["a note"]


def test_a_value_that_is_not_finite_is_left_empty(tmp_path: Path) -> None:
    assert sample_record(LiveSample(elapsed_s=1.0, write_iops=math.inf, write_mbps=1.0)) == {
        "w": [None, 1.0, 0.0, None, None, None]}


def test_a_resumed_run_appends_after_a_torn_line(tmp_path: Path) -> None:
    (tmp_path / LIVE_FILE).write_text('{"k":"run"}\n{"k":"s","t":1', encoding="utf-8")  # killed mid-line
    rec = LiveRecorder(tmp_path, Events())
    rec.note("resumed")
    rec.close()
    lines = (tmp_path / LIVE_FILE).read_text(encoding="utf-8").splitlines()
    assert lines[-2] == '{"k":"s","t":1'
    assert json.loads(lines[-1])["text"] == "resumed"


def test_a_record_that_cannot_be_written_stops_the_recording_not_the_run(tmp_path: Path) -> None:
    inner = Events()
    rec = LiveRecorder(tmp_path / "gone", inner)  # no such directory
    rec.note("first")
    rec.note("second")
    assert inner.notes[0].startswith("live record ")
    assert "the run goes on" in inner.notes[0]
    assert inner.notes[1:] == ["first", "second"]  # said once; every event still reaches the display


def test_the_health_monitor_tells_its_listener_of_each_sample(tmp_path: Path) -> None:
    heard: list[tuple[str, dict[str, Any]]] = []

    class Snap:
        def sample(self, dev: health.Device, started: float) -> dict[str, Any] | None:
            return {"time": "t", "elapsed_s": 1.0, "temperature_c": 40}

    dev = health.Device(path="/dev/x", sysdir=None, kind="nvme")
    monitor = health.Monitor(Snap(), [dev], listener=lambda path, s: heard.append((path, s)))  # type: ignore[arg-type]
    monitor.sample_round()
    assert heard == [("/dev/x", {"time": "t", "elapsed_s": 1.0, "temperature_c": 40})]
    assert monitor.samples()["/dev/x"] == [heard[0][1]]


def test_a_run_records_its_whole_course(tmp_path: Path, cli: Any) -> None:
    out = tmp_path / "run"
    res = cli("run", "quick", "--target", "sim:tlc-4k?capacity=1GiB", "--runtime", "0.2", "--out", str(out),
              "--yes", "-q")
    assert res.code == 0, res.err
    records = _records(out)
    kinds = [r["k"] for r in records]
    assert kinds[0] == "run"
    assert kinds[-1] == "done"
    assert records[-1]["status"] == "complete"
    assert kinds.count("point") == kinds.count("end") == 8
    assert records[0]["engine"] == "sim"
