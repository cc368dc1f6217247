"""What a report on a real NVMe drive carries: identity, health before/after with deltas, the bytes cross-check,
temperature over the run, the link fraction of every result and the CPU flag.

There is no NVMe drive here, so the run's stored snapshots are taken by the real snapshot code from outputs
captured on real drives (tests/data/health/README.md): a Seagate FireCuda 530 read by smartctl 7.3 on
2024-04-30 and again, the same drive (same EUI-64), on 2024-07-13 - a true before/after pair - behind a fake
PCIe 4.0 x4 sysfs link (that drive's interface); and a WDC SN730 read by nvme-cli for power states, write
cache and throttling counters. Only the measured points are made up, and they say so.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fakedrive import HEALTH_DATA, FakeDrive, nvme_tree
from ssdlab import __version__
from ssdlab.report.html import render_html, render_report
from ssdlab.results.model import SCHEMA_VERSION, DirectionStats, Measurement, PointResult, Run, TestPoint, Workload
from ssdlab.targets import health

FIRECUDA = ("smartctl/7.3-nvme-firecuda530-netdata.json", "smartctl/7.3-nvme-firecuda530-later-netdata.json")
NS = "/dev/nvme0n1"


def captured_time(name: str) -> str:
    """When a smartctl capture was taken (its own local_time field), as ISO 8601."""
    t = json.loads((HEALTH_DATA / name).read_text(encoding="utf-8"))["local_time"]["time_t"]
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def smartctl_snapshot(sysdir: Path, run_dir: Path, capture: str, when: str) -> dict[str, Any]:
    """The real Snapshotter on a drive that only smartctl can read, answering with `capture`."""
    drive = FakeDrive(installed=("smartctl",), answers={"smartctl": capture})
    dev = health.Device(path=NS, sysdir=sysdir, kind="nvme", name="nvme0n1")
    snap = health.Snapshotter(drive.tools(), raw_dir=run_dir / health.HEALTH_DIR).snapshot(dev, when)
    snap["time"] = captured_time(capture)  # when the drive was really read
    return snap


def smartctl_sample(sysdir: Path, capture: str) -> dict[str, Any]:
    drive = FakeDrive(installed=("smartctl",), answers={"smartctl": capture})
    dev = health.Device(path=NS, sysdir=sysdir, kind="nvme", name="nvme0n1")
    sample = health.Snapshotter(drive.tools()).sample(dev, 0.0)
    assert sample is not None
    sample["time"] = captured_time(capture)
    return sample


def point(pid: str, rw: str, bw: float, io_bytes: int, *, flagged: bool = False) -> PointResult:
    """A measured point (made-up numbers: only the drive data in this run is captured)."""
    d = DirectionStats(iops=bw / 131072, bw_bytes=bw, io_bytes=io_bytes, total_ios=io_bytes // 131072,
                       runtime_ms=60_000)
    extra: dict[str, Any] = {"host_cpu": {"available": True, "submitting_busy_pct": 100.0 if flagged else 31.0,
                                          "submitting_cpus": "all", "submitting_count": 8, "online_cpus": 8}}
    if flagged:
        extra["host_limit"] = {"saturated": True, "reasons": ["fio's jobs kept their CPUs 97 % busy"],
                               "advice": ["more jobs"]}
    m = Measurement(engine="fio", engine_version="3.33", directions={"read" if rw == "read" else "write": d},
                    usr_cpu=60 if flagged else 20, sys_cpu=37 if flagged else 11, extra=extra)
    tp = TestPoint(id=pid, label=pid, workload=Workload(rw=rw, bs=131072, iodepth=32, runtime_s=60))
    return PointResult(point=tp, status="ok", started="2024-04-30T12:40:00+00:00",
                       finished="2024-04-30T12:41:00+00:00", measurement=m,
                       warnings=("host CPU limit: fio's jobs kept their CPUs 97 % busy",) if flagged else ())


def firecuda_run(tmp_path: Path) -> tuple[Run, Path]:
    sysdir = nvme_tree(tmp_path / "sys", mps=512)  # the FireCuda 530 is a PCIe 4.0 x4 drive
    run_dir = tmp_path / "run"
    before = smartctl_snapshot(sysdir, run_dir, FIRECUDA[0], "before")
    after = smartctl_snapshot(sysdir, run_dir, FIRECUDA[1], "after")
    samples = [smartctl_sample(sysdir, FIRECUDA[0]), smartctl_sample(sysdir, FIRECUDA[1])]
    run = Run(schema_version=SCHEMA_VERSION, ssdlab_version=__version__, run_id="firecuda", suite="quick",
              status="complete", created=before["time"], finished=after["time"], options={},
              target={"name": NS, "kind": "block", "capacity_bytes": 4000787030016},
              host={"engine": "fio", "engine_version": "3.33", "cpu_count": 8},
              points=(point("seq-read", "read", 7.0e9, 420_000_000_000),
                      point("seq-write", "write", 6.2e9, 64 * 1024**2, flagged=True)),
              health={"available": True, "devices": [{"path": NS, "kind": "nvme", "snapshots": [before, after],
                                                      "samples": samples}], "settings": []})
    return run, run_dir


def test_snapshots_from_the_captures(tmp_path: Path) -> None:
    run, _ = firecuda_run(tmp_path)
    before, after = run.health["devices"][0]["snapshots"]
    assert before["available"] is True
    assert before["tool"] == "smartctl 7.3"
    assert before["identity"]["model"] == "Seagate FireCuda 530 ZP4000GM30023"
    assert before["link"]["label"] == "PCIe 4.0 x4"
    assert before["raw"] == {"smartctl": "health/before-nvme0n1-smartctl.json"}
    rows = {r["key"]: r for r in health.delta(before, after)}
    assert rows["power_on_hours"]["change"] == 4733 - 3113
    assert rows["data_units_read"]["change"] == 150
    assert rows["unsafe_shutdowns"]["change"] == 1
    assert rows["temperature_c"]["before"] == 39
    assert rows["temperature_c"]["after"] == 36
    checks = {c["direction"]: c for c in health.cross_check(before, after, *health.bytes_moved(run.points))}
    assert checks["read"]["test_bytes"] == 420_000_000_000
    assert checks["read"]["drive_bytes"] == 150 * 512_000
    assert checks["read"]["resolution_bytes"] == 512_000
    assert checks["written"]["drive_bytes"] == 0


def test_report_on_an_nvme_drive_carries_identity_health_link_and_cpu_flag(tmp_path: Path) -> None:
    run, run_dir = firecuda_run(tmp_path)
    page = render_html(run, run_dir)
    assert "Drive health and interface" in page
    assert "Seagate FireCuda 530 ZP4000GM30023" in page
    for hours in ("3,113", "4,733", "+1,620"):  # power-on hours before, after, change
        assert hours in page
    assert "39 → 36 °C" in page
    assert "no critical warning" in page
    assert "PCIe 4.0 x4" in page
    assert "93 % of PCIe 4.0 x4" in page  # 7.0 GB/s of 7.52 GB/s usable (MPS 512)
    assert "82 % of PCIe 4.0 x4" in page
    assert "Cross-check, bytes read:" in page
    assert "the test read 420,000,000,000 bytes" in page
    assert "counter moved by 76,800,000 bytes (73.24 MiB), counted in steps of 512,000 bytes" in page
    assert "⚠ host-limited" in page
    assert "1 of 2 measured points ran with fio&#39;s submitting threads saturated" in page
    assert page.count("To lift it: more jobs") == 1  # the advice once per report
    assert "⚠ host CPU limit" not in page  # a run stored with the paragraph per point: not under its row
    assert "Drive temperature during the run" in page
    assert "health/before-nvme0n1-smartctl.json" in page
    assert "not available: nvme (nvme-cli) is not installed" in page  # power state: smartctl cannot read it
    path = render_report(run, run_dir)
    assert path.read_text(encoding="utf-8") == page


def test_report_with_nvme_cli_power_states_settings_and_throttling(tmp_path: Path) -> None:
    sysdir = nvme_tree(tmp_path / "sys", speed="8.0 GT/s PCIe", width=4, max_speed="8.0 GT/s PCIe",
                       port_speed="8.0 GT/s PCIe")  # the SN730 is a PCIe 3.0 x4 drive
    drive = FakeDrive(answers={"id-ctrl": "nvme-cli/id-ctrl-1.x-sn730-ironic.json",
                               "smart-log": "nvme-cli/smart-log-2.11-netdata.json"}, features={2: 0, 6: 1})
    dev = health.Device(path=NS, sysdir=sysdir, kind="nvme", name="nvme0n1")
    snapper = health.Snapshotter(drive.tools(), raw_dir=tmp_path / "run" / "health")
    before = snapper.snapshot(dev, "before")
    after = snapper.snapshot(dev, "after")
    assert before["write_cache"] == "enabled"
    assert before["power_state"] == 0
    assert before["identity"]["power_states"][3] == {"ps": 3, "operational": False, "max_power_w": 0.07,
                                                     "entry_latency_us": 4000, "exit_latency_us": 10000}
    assert any("nvme id-ns" in e for e in before["errors"])  # the fake answers no id-ns: said, not invented
    settings = [{"device": NS, "setting": "write_cache", "requested": "off", "original": 1, "applied": 0,
                 "restored": True}]
    run = Run(schema_version=SCHEMA_VERSION, ssdlab_version=__version__, run_id="sn730", suite="quick",
              status="complete", created=before["time"], options={}, target={"name": NS, "kind": "block"},
              host={}, points=(point("seq-read", "read", 3.4e9, 10**9),),
              health={"available": True, "devices": [{"path": NS, "kind": "nvme", "snapshots": [before, after],
                                                      "samples": []}], "settings": settings})
    page = render_html(run, tmp_path / "run")
    assert "WDC PC SN730 SDBQNTY-256G-1001" in page
    assert "PS0 5.0 W; PS1 3.5 W; PS2 3.0 W; PS3 0.07 W (idle); PS4 0.0035 W (idle)" in page
    assert "enabled; set to off for the run, restored afterwards" in page
    assert "thermal throttle (TMT1) transitions" in page
    assert "PCIe 3.0 x4" in page
    assert "90 % of PCIe 3.0 x4" in page  # 3.4 GB/s of 3.76 GB/s (3.94 GB/s after 128b/130b, x 512/536)
    assert "read with</td><td>nvme-cli" in page


@pytest.mark.parametrize(("target", "health_state", "line"), [
    ({"kind": "null"}, {"available": False, "reason": "the null engine touches no device"},
     "not available: the null engine touches no device"),
    ({"kind": "file"}, {"available": False, "reason": "a file target sits behind a filesystem"},
     "not available: a file target sits behind a filesystem"),
    ({"kind": "block"}, {}, "not available: this run was recorded before ssdlab took drive health snapshots"),
])
def test_every_piece_degrades_to_one_line(tmp_path: Path, target: dict[str, Any], health_state: dict[str, Any],
                                          line: str) -> None:
    run = Run(schema_version=SCHEMA_VERSION, ssdlab_version=__version__, run_id="x", suite="quick",
              status="complete", created="2026-01-01T00:00:00+00:00", options={}, target=target, host={},
              points=(point("p", "read", 1e9, 10**9),), health=health_state)
    page = render_html(run, tmp_path)
    assert page.count(line) >= 2  # the Target card and the section
    assert "% of PCIe" not in page


def test_throttling_during_the_run_is_charted(tmp_path: Path) -> None:
    """Samples as the session stores them (temperature plus the NVMe thermal-management counters)."""
    from ssdlab.report.health import _temperature_chart

    t0 = "2026-01-01T00:00:00+00:00"
    before = {"time": t0, "health": {"temperature_c": 40, "thermal_management": {"tmt1_transitions": 3}}}
    samples = [{"time": f"2026-01-01T00:{m:02d}:00+00:00", "temperature_c": 40 + m, "tmt1_transitions": 3 + m // 20,
                "tmt2_transitions": 0} for m in (10, 20, 30, 40)]
    after = {"time": "2026-01-01T00:50:00+00:00", "health": {"temperature_c": 70,
                                                               "thermal_management": {"tmt1_transitions": 5}}}
    html = _temperature_chart({"samples": samples}, before, after)
    assert "6 readings: before the run, 4 during it, after it" in html
    assert "Thermal throttling transitions since the start" in html
    flat = [{**s, "tmt1_transitions": 3} for s in samples]
    still = {**after, "health": {"temperature_c": 70, "thermal_management": {"tmt1_transitions": 3}}}
    html = _temperature_chart({"samples": flat}, before, still)
    assert "did not move during the run" in html
    assert _temperature_chart({"samples": []}, before, after) == ""  # two readings are not a chart
