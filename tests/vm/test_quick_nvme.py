"""`quick` on an NVMe namespace with `--write-cache off`: the write cache as Get Features reads it during and after
the run, the health snapshots against the controller's own SMART log, the bytes fio wrote against the data-unit
counter, and the report's drive and link panels against nvme-cli and sysfs."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import machine
import pytest
from vmlab import GUEST_ENV, SSDLAB, Lab, Run

DATA_UNIT = 512_000  # NVMe SMART data unit: 1000 x 512 bytes, rounded up by the controller
GTS_GENERATION = {"2.5": 1, "5.0": 2, "8.0": 3, "16.0": 4, "32.0": 5}  # PCIe generation by transfer rate


def feature(lab: Lab, fid: int) -> int:
    """The current value of an NVMe feature as nvme-cli prints it ('... Current value:0x00000001')."""
    text = lab.tool("nvme", "get-feature", lab.ctrl_a, "-f", str(fid))
    m = re.search(r"Current value:(?:0x)?([0-9a-fA-F]+)", text)
    assert m, text
    return int(m.group(1), 16)


def smart(lab: Lab, nsid: int | None = None) -> dict[str, Any]:
    argv = ["nvme", "smart-log", lab.ctrl_a, "--output-format=json"]
    return lab.json(*argv, *([f"--namespace-id={nsid}"] if nsid else []))


def fio_bytes(run_dir: Path, direction: str, filename: str | None = None) -> int:
    """Bytes fio itself reports having moved (`io_bytes` in every point's fio.json), optionally only the job
    sections whose filename is `filename`."""
    total = 0
    for doc_path in sorted(run_dir.glob("points/*/fio.json")):
        text = doc_path.read_text(encoding="utf-8")
        doc = json.loads(text[text.index("{"):])
        for job in doc.get("jobs", []):
            opts = job.get("job options", {})
            if filename is None or opts.get("filename") == filename:
                total += int(job[direction]["io_bytes"])
    return total


@dataclass(frozen=True)
class QuickRun:
    run: Run
    cache_before: int
    cache_after: int
    samples: list[tuple[float, int]]  # (epoch seconds, get-feature 6 value) while ssdlab ran
    smart_before: dict[str, Any]
    smart_after: dict[str, Any]


SAMPLER = """
{ssdlab} run quick --target {dev} --runtime 1 --write-cache off --yes --no-report --out {out} \
    >{out}.stdout 2>{out}.stderr &
pid=$!
while kill -0 $pid 2>/dev/null; do
    echo "$(date +%s.%N) $(nvme get-feature {ctrl} -f 6)" >>{out}.cache
    sleep 2
done
wait $pid
"""


@pytest.fixture(scope="module")
def quick(lab: Lab) -> QuickRun:
    dev = lab.ns(1)
    cache_before = feature(lab, 6)
    smart_before = smart(lab, 1)
    out = "/run/ssdlab-runs/quick-nvme"
    script = SAMPLER.format(ssdlab=SSDLAB, dev=dev, out=out, ctrl=lab.ctrl_a)
    res = lab.vm.run(["sh", "-c", script], timeout=900, env=GUEST_ENV)
    smart_after = smart(lab, 1)
    cache_after = feature(lab, 6)
    samples = []
    for line in lab.tool("cat", f"{out}.cache").splitlines():
        m = re.match(r"([\d.]+) .*Current value:(?:0x)?([0-9a-fA-F]+)", line)
        if m:
            samples.append((float(m.group(1)), int(m.group(2), 16)))
    stdout, stderr = lab.tool("cat", f"{out}.stdout"), lab.tool("cat", f"{out}.stderr")
    lab.tool("cp", "-a", out, str(lab.vm.shared))
    result = machine.Result(res.argv, res.rc, stdout, stderr, res.seconds, res.timed_out)
    return QuickRun(Run(result, lab.vm.shared / "quick-nvme"), cache_before, cache_after, samples,
                    smart_before, smart_after)


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def test_the_run_completes_with_exit_0(quick: QuickRun) -> None:
    assert quick.run.rc == 0, quick.run.res.describe()
    assert "verdict: complete (exit code 0)" in quick.run.res.stderr


def test_write_cache_is_off_while_fio_runs_and_restored_after(quick: QuickRun) -> None:
    doc = quick.run.run_json()
    measured = [p for p in doc["points"] if p["status"] == "ok" and p.get("measurement")]
    start, end = _epoch(measured[0]["started"]), _epoch(measured[-1]["finished"])
    during = [v for t, v in quick.samples if start <= t <= end]
    assert during, f"no Get Features sample while the points ran ({len(quick.samples)} in all)"
    assert all(v & 1 == 0 for v in during), during  # the drive's own answer: volatile write cache disabled
    assert quick.cache_before & 1 == 1  # QEMU's default with a writeback backend: enabled
    assert quick.cache_after == quick.cache_before  # put back when the run ended
    change = next(c for c in doc["health"]["settings"] if c["setting"] == "write_cache")
    assert change["original"] == quick.cache_before
    assert change["applied"] & 1 == 0
    assert change["restored"]


def test_health_snapshots_agree_with_the_smart_log(quick: QuickRun) -> None:
    doc = quick.run.run_json()
    entry = doc["health"]["devices"][0]
    before = next(s for s in entry["snapshots"] if s["when"] == "before")
    after = next(s for s in entry["snapshots"] if s["when"] == "after")
    assert before["counter_scope"] == after["counter_scope"] == "namespace 1"  # id-ctrl LPA bit 0: per namespace
    for key in ("data_units_written", "host_write_commands"):
        dev_before, dev_after = int(quick.smart_before[key]), int(quick.smart_after[key])
        ours_before, ours_after = before["health"][key], after["health"][key]
        assert dev_before <= ours_before <= ours_after <= dev_after, key
        # nothing but the run wrote to the namespace between the tool's reads and ssdlab's
        assert ours_after - ours_before == dev_after - dev_before, key
    assert after["health"]["temperature_c"] == quick.smart_after["temperature"] - 273


def test_data_units_written_match_what_fio_wrote(quick: QuickRun) -> None:
    assert quick.run.out is not None
    written = fio_bytes(quick.run.out, "write")
    units = int(quick.smart_after["data_units_written"]) - int(quick.smart_before["data_units_written"])
    assert written > 0
    assert abs(units * DATA_UNIT - written) < DATA_UNIT  # the controller rounds its count up to whole units
    line = next(ln for ln in quick.run.res.stderr.splitlines() if ln.strip().startswith("bytes written:"))
    assert f"by the test {written:,}, by the drive's own counter {units * DATA_UNIT:,}" in line


def _panel(page: str, title: str) -> str:
    """The text of the table captioned `title` in the report, tags dropped."""
    start = page.index(title)
    end = page.index("</table>", start)
    return html.unescape(re.sub(r"<[^>]+>", " ", page[start:end]))


def test_report_drive_panel_names_the_real_controller(lab: Lab, quick: QuickRun) -> None:
    assert quick.run.out is not None
    page = lab.report(quick.run)
    ctrl = lab.json("nvme", "id-ctrl", lab.ctrl_a, "--output-format=json")
    ns = lab.json("nvme", "id-ns", lab.ns(1), "--output-format=json")
    panel = " ".join(_panel(page, "Drive identity").split())
    for value in (ctrl["mn"].strip(), ctrl["sn"].strip(), ctrl["fr"].strip()):
        assert value in panel
    fmt = ns["lbafs"][ns["flbas"] & 0xF]
    assert f"{1 << fmt['ds']} B data + {fmt['ms']} B metadata (LBA format {ns['flbas'] & 0xF}" in panel
    assert f"{ns['nsze'] << fmt['ds']:,} bytes" in panel
    assert "write cache enabled; set to off for the run, restored afterwards" in panel


def test_report_link_panel_shows_what_sysfs_reports(lab: Lab, quick: QuickRun) -> None:
    assert quick.run.out is not None
    pci = lab.tool("readlink", "-f", f"/sys/class/nvme/{lab.ctrl_a.rsplit('/', 1)[-1]}/device").strip()
    speed = lab.sysfs(f"{pci}/current_link_speed").split()[0]  # "2.5 GT/s PCIe"
    width = lab.sysfs(f"{pci}/current_link_width")
    port_speed = lab.sysfs(f"{pci}/../max_link_speed").split()[0]
    port_width = lab.sysfs(f"{pci}/../max_link_width")
    vendor, device = lab.sysfs(f"{pci}/vendor"), lab.sysfs(f"{pci}/device")
    assert port_speed == "8.0"
    assert port_width == machine.ROOT_PORT_WIDTH
    page = lab.report(quick.run)
    panel = " ".join(_panel(page, "Interface limit").split())
    assert f"trained at PCIe {GTS_GENERATION[speed]}.0 x{width}" in panel
    assert f"port above it, maximum PCIe {GTS_GENERATION[port_speed]}.0 x{port_width}" in panel
    assert f"PCI {vendor}:{device}" in panel
    assert "QEMU emulates this device" in panel
