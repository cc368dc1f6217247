"""Write cache and power state: refused before anything exists when the drive cannot take them, set before the
first point, recorded before the drive is touched, and restored afterwards on completion, failure and Ctrl-C.

A fake command runner (tests/fakedrive.py) plays an NVMe drive from captured nvme-cli outputs, holding its
feature values as state, on a fake sysfs tree; the run loop is the real orchestrate.drive.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fakedrive import FakeDrive, nvme_tree, sata_tree
from ssdlab.errors import FioFailedError, RunInterrupted, TargetError, UsageError
from ssdlab.fio.executor import LiveCallback
from ssdlab.results import store
from ssdlab.results.model import DirectionStats, Measurement, Run, TestPoint, Workload
from ssdlab.run import orchestrate
from ssdlab.run.progress import QuietProgress
from ssdlab.safety import WriteGrant
from ssdlab.suites.base import PlanContext, Suite
from ssdlab.targets import NullTarget, TargetOptions, devsettings, drivecli
from ssdlab.targets.base import Hazard, Target
from ssdlab.targets.blockdev import BlockTarget

SN730 = "nvme-cli/id-ctrl-1.x-sn730-ironic.json"  # volatile write cache, PS0-2 operational, PS3-4 idle
PM983 = "nvme-cli/id-ctrl-1.x-pm983-autoval.json"  # no volatile write cache


def nvme_target(sysdir: Path) -> BlockTarget:
    """A BlockTarget for /dev/nvme0n1 whose sysfs entry is the fake tree (nothing opens the node)."""
    return BlockTarget(spec="/dev/nvme0n1", kind="block", options=TargetOptions(), path="/dev/nvme0n1",
                       real_path="/dev/nvme0n1", sysdir=sysdir, full_size=1 << 30)


def drive_with(id_ctrl: str = SN730, **kw: object) -> FakeDrive:
    answers: dict[str, object] = {"id-ctrl": id_ctrl, "smart-log": "nvme-cli/smart-log-2.11-netdata.json"}
    return FakeDrive(answers=answers, **kw)  # type: ignore[arg-type]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeDrive:
    """The drive every drivecli call in this test talks to."""
    drive = drive_with()
    monkeypatch.setattr(drivecli, "TOOLS", drive.tools())
    return drive


# ------------------------------------------------------------------ checks before the run

def test_settings_need_a_drive(tmp_path: Path) -> None:
    null = NullTarget(spec="null", kind="null", options=TargetOptions())
    with pytest.raises(UsageError, match="--write-cache needs an NVMe or SATA/SAS block device: the null engine"):
        devsettings.check(null, devsettings.Requested(write_cache="off"))
    devsettings.check(null, devsettings.Requested())  # nothing asked: nothing to check


def test_nvme_checks(tmp_path: Path, fake: FakeDrive) -> None:
    target = nvme_target(nvme_tree(tmp_path))
    devsettings.check(target, devsettings.Requested(write_cache="off", power_state=2))
    with pytest.raises(UsageError, match=r"--power-state 3 is a non-operational \(idle\) state .*\(0, 1, 2\)"):
        devsettings.check(target, devsettings.Requested(power_state=3))
    with pytest.raises(UsageError, match="has power states 0 to 4"):
        devsettings.check(target, devsettings.Requested(power_state=5))
    assert fake.set_calls(6) == []  # checking never sets anything


def test_a_drive_without_volatile_cache_refuses_write_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drivecli, "TOOLS", drive_with(PM983).tools())
    with pytest.raises(TargetError, match="MZ1LB960HAJQ-000FB has no volatile write cache"):
        devsettings.check(nvme_target(nvme_tree(tmp_path)), devsettings.Requested(write_cache="on"))


def test_without_nvme_cli_the_check_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drivecli, "TOOLS", FakeDrive(installed=()).tools())
    with pytest.raises(TargetError, match=r"nvme \(nvme-cli\) is not installed \(sudo apt-get install nvme-cli\)"):
        devsettings.check(nvme_target(nvme_tree(tmp_path)), devsettings.Requested(write_cache="off"))


def test_power_state_is_nvme_only(tmp_path: Path) -> None:
    disk = sata_tree(tmp_path)
    sata = BlockTarget(spec="/dev/sdb", kind="block", options=TargetOptions(), path="/dev/sdb",
                       real_path="/dev/sdb", sysdir=disk, full_size=1 << 30)
    with pytest.raises(UsageError, match=r"NVMe power states .* exist only on NVMe drives"):
        devsettings.check(sata, devsettings.Requested(power_state=1))
    devsettings.check(sata, devsettings.Requested(write_cache="off"))


# ------------------------------------------------------------------ around a run

class TwoPoints(Suite):
    """Two read points (never registered)."""

    name = "two"
    writes = False

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        """p1, p2."""
        return [TestPoint(id=f"p{i}", label=f"P{i}", workload=Workload(rw="read", bs=4096, runtime_s=1))
                for i in (1, 2)]


@dataclass
class Executor:
    """Measures instantly; raises `fail[point id]` there; records the drive's features at each point."""

    drive: FakeDrive
    fail: dict[str, BaseException] = field(default_factory=dict)
    seen: list[dict[int, int]] = field(default_factory=list)
    name: str = "fake"
    before: Callable[[str], None] | None = None  # called with each point's id as it starts

    def version(self) -> str:
        """A made-up version."""
        return "0"

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        """Record the feature state, then fail or measure."""
        if self.before is not None:
            self.before(point.id)
        self.seen.append(dict(self.drive.features))
        if point.id in self.fail:
            raise self.fail[point.id]
        d = DirectionStats(iops=1000.0, bw_bytes=4096e3, io_bytes=4096 * 1000, total_ios=1000, runtime_ms=1000)
        return Measurement(engine="fake", engine_version="0", directions={"read": d})


def run_with(tmp_path: Path, fake: FakeDrive, settings: dict[str, object],
             fail: dict[str, BaseException] | None = None) -> tuple[Path, Executor, Run]:
    """Drive TwoPoints on the fake NVMe drive with `settings`; returns the run dir, executor, new run."""
    run_dir = store.create_run_dir(tmp_path / "run")
    target = nvme_target(nvme_tree(tmp_path / "sys"))
    executor = Executor(fake, dict(fail or {}))
    run = orchestrate.new_run(TwoPoints(), target, executor, {"device_settings": settings}, run_dir)
    return run_dir, executor, run


def drive(run_dir: Path, run: Run, executor: Executor) -> Run:
    """orchestrate.drive of TwoPoints on the fake drive."""
    target = nvme_target(nvme_tree(run_dir.parent / "sys"))
    return orchestrate.drive(run_dir, run, TwoPoints(), PlanContext(capacity=1 << 30), target, executor,
                             QuietProgress(), grant=WriteGrant(target, writes=False))


def stored(run_dir: Path) -> Run:
    """run.json as saved."""
    return store.load_run(run_dir)


def test_settings_apply_for_the_run_and_are_restored_after(tmp_path: Path, fake: FakeDrive) -> None:
    fake.features = {2: 0x40, 6: 1}  # PS0 with a workload hint in bits 7:5, write cache on
    run_dir, executor, run = run_with(tmp_path, fake, {"write_cache": "off", "power_state": 2})
    done = drive(run_dir, run, executor)
    assert executor.seen == [{2: 0x42, 6: 0}, {2: 0x42, 6: 0}]  # both points ran with the settings (hint kept)
    assert fake.features == {2: 0x40, 6: 1}  # and the drive is back as it was
    assert fake.set_calls(6) == [0, 1]
    assert fake.set_calls(2) == [0x42, 0x40]
    saved = stored(run_dir)
    assert saved.status == "complete"
    settings = saved.health["settings"]
    assert [(s["setting"], s["original"], s["applied"], s["restored"]) for s in settings] == [
        ("write_cache", 1, 0, True), ("power_state", 0x40, 0x42, True)]
    texts = [e["text"] for e in saved.events if e["kind"] == "device-setting"]
    assert "write cache of /dev/nvme0n1 set to disabled for this run (was enabled); restored when the run ends" in texts
    assert "write cache of /dev/nvme0n1 restored to enabled (value 0x1)" in texts
    assert "power state of /dev/nvme0n1 restored to PS0 (value 0x40)" in texts
    assert done.health == saved.health


def test_the_original_is_on_disk_before_the_drive_is_touched(tmp_path: Path, fake: FakeDrive) -> None:
    run_dir, executor, run = run_with(tmp_path, fake, {"write_cache": "off"})
    recorded: list[object] = []

    def check(argv: list[str]) -> None:
        if argv[:2] == ["nvme", "set-feature"] and not recorded:
            doc = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
            recorded.append(doc["health"]["settings"][0]["original"])

    fake.on_call = check
    drive(run_dir, run, executor)
    assert recorded == [1]


@pytest.mark.parametrize(("error", "raised"), [(KeyboardInterrupt(), RunInterrupted),
                                               (FioFailedError("fio exited 1"), FioFailedError),
                                               (TargetError("device vanished"), TargetError)])
def test_restored_even_when_the_run_stops(tmp_path: Path, fake: FakeDrive, error: BaseException,
                                          raised: type[Exception]) -> None:
    run_dir, executor, run = run_with(tmp_path, fake, {"write_cache": "off"}, fail={"p2": error})
    with pytest.raises(raised):
        drive(run_dir, run, executor)
    assert executor.seen[0][6] == 0
    assert fake.features[6] == 1
    saved = stored(run_dir)
    assert saved.status in ("interrupted", "failed")
    assert [p.point.id for p in saved.ok_points()] == ["p1"]  # nothing finished is lost
    assert saved.health["settings"][0]["restored"] is True
    after = [s for s in saved.health["devices"][0]["snapshots"] if s["when"] == "after"]
    assert len(after) == 1
    assert after[0]["write_cache"] == "enabled"


def test_a_complete_run_is_written_once_as_it_ends(tmp_path: Path, fake: FakeDrive,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """After its last point, a run that ran to its end writes run.json once, complete, with the session's
    record in it (settings restored, health after), not first as the session left it and then again."""
    run_dir, executor, run = run_with(tmp_path, fake, {"write_cache": "off"})
    writes: list[tuple[str, bool]] = []
    save_run = store.save_run

    def counted(where: Path, saved: Run) -> Run:
        writes.append((saved.status, bool(saved.health.get("settings", [{}])[0].get("restored"))))
        return save_run(where, saved)

    monkeypatch.setattr(store, "save_run", counted)
    executor.before = lambda point_id: writes.clear()  # counted from the last point on
    drive(run_dir, run, executor)
    assert writes == [("complete", True)]
    assert stored(run_dir).health["settings"][0]["restored"] is True


def test_a_run_whose_conclusion_fails_keeps_the_session_record(tmp_path: Path, fake: FakeDrive,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's record is held for the complete run.json; when concluding fails, it is written anyway."""
    run_dir, executor, run = run_with(tmp_path, fake, {"write_cache": "off"})

    def broken(self: TwoPoints, ctx: PlanContext, done: Run) -> Run:
        raise RuntimeError("a bug in a suite")

    monkeypatch.setattr(TwoPoints, "conclude", broken)
    with pytest.raises(RuntimeError, match="a bug in a suite"):
        drive(run_dir, run, executor)
    saved = stored(run_dir)
    assert [p.point.id for p in saved.ok_points()] == ["p1", "p2"]
    assert saved.health["settings"][0]["restored"] is True
    assert [s["when"] for s in saved.health["devices"][0]["snapshots"]] == ["before", "after"]


def test_a_refused_restore_is_a_warning_and_the_run_keeps_its_error(tmp_path: Path, fake: FakeDrive) -> None:
    run_dir, executor, run = run_with(tmp_path, fake, {"write_cache": "off"}, fail={"p2": KeyboardInterrupt()})
    executor.fail["p2"] = KeyboardInterrupt()
    original_call = fake._answer

    def refuse_after_first_point(argv: list[str]) -> tuple[int, str, str]:
        if argv[:2] == ["nvme", "set-feature"] and len(executor.seen) >= 2:
            return 1, "", "NVMe status: Internal Error"
        return original_call(argv)

    fake._answer = refuse_after_first_point  # type: ignore[method-assign]
    with pytest.raises(RunInterrupted):
        drive(run_dir, run, executor)
    saved = stored(run_dir)
    assert saved.health["settings"][0]["restored"] is False
    assert any("could not restore the write cache of /dev/nvme0n1 to 1" in w and "Internal Error" in w
               for w in saved.warnings)


def test_resume_restores_what_a_killed_run_left_changed(tmp_path: Path, fake: FakeDrive) -> None:
    """kill -9 after the cache was switched off: run.json knows the original, the drive still says 0. A resume
    re-applies the setting and, at its end, restores the recorded original, not the 0 it found."""
    run_dir, executor, run = run_with(tmp_path, fake, {"write_cache": "off"})
    killed = run.__class__(**{**run.__dict__, "health": {"settings": [
        {"device": "/dev/nvme0n1", "setting": "write_cache", "requested": "off", "original": 1, "applied": 0,
         "restored": False}]}})
    fake.features[6] = 0
    drive(run_dir, killed, executor)
    assert fake.features[6] == 1
    assert stored(run_dir).health["settings"][0]["restored"] is True


def test_scsi_cache_type_is_set_and_restored(tmp_path: Path, fake: FakeDrive) -> None:
    disk = sata_tree(tmp_path, cache_type="write back")
    dev = devsettings.devices_of(BlockTarget(spec="/dev/sdb", kind="block", options=TargetOptions(),
                                             path="/dev/sdb", real_path="/dev/sdb", sysdir=disk, full_size=1))[0]
    assert dev.kind == "ata"
    changes = devsettings.apply(dev, devsettings.Requested(write_cache="off"), fake.tools())
    cache = disk / "device" / "scsi_disk" / "2:0:0:0" / "cache_type"
    assert cache.read_text(encoding="utf-8").strip() == "write through"
    assert changes[0]["original"] == "write back"
    change = dict(changes[0])
    path = devsettings.scsi_cache_file(dev)
    assert path is not None
    devsettings._write_cache_type(path, str(change["original"]))
    assert cache.read_text(encoding="utf-8").strip() == "write back"


def test_a_suite_that_sets_the_cache_itself_leaves_it_as_found(tmp_path: Path, fake: FakeDrive) -> None:
    """SNIA PTS sets WCD at its purge step; the session puts the drive's cache back at the end."""
    from ssdlab.results.model import PointResult

    run_dir, executor, run = run_with(tmp_path, fake, {})
    purge = TestPoint(id="purge", label="purge", workload=Workload(rw="write", bs=4096), phase="purge",
                      tags={"write_cache": "disabled"})
    run = run.with_point(PointResult(point=purge, status="ok", started="", finished=""))
    fake.on_call = lambda argv: None
    original = executor.run_point

    def pts_like(point: TestPoint, target: Target, point_dir: Path, on_live: LiveCallback | None = None) -> Measurement:
        fake.features[6] = 0  # what the PTS purge step does to the drive
        return original(point, target, point_dir, on_live)

    executor.run_point = pts_like  # type: ignore[method-assign]
    drive(run_dir, run, executor)
    assert fake.features[6] == 1
    assert any("(the suite had set it for its test)" in e.get("text", "") for e in stored(run_dir).events)


# ------------------------------------------------------------------ the command line

def test_cli_refuses_settings_on_a_target_without_a_drive(tmp_path: Path) -> None:
    from conftest import run_cli

    out = tmp_path / "out"
    res = run_cli("run", "quick", "--target", "null", "--write-cache", "off", "--out", out, traceback=False)
    assert res.code == 2
    assert res.err_lines == ["ssdlab: error: --write-cache needs an NVMe or SATA/SAS block device: the null engine "
                             "touches no device"]
    assert not out.exists()
    res = run_cli("run", "quick", "--target", "null", "--power-state", "40", "--out", out, traceback=False)
    assert res.code == 2
    assert "--power-state 40 is out of range: NVMe power states are 0 to 31" in res.err


def test_plan_says_what_will_change() -> None:
    from conftest import run_cli

    res = run_cli("plan", "quick-read", "--target", "null", "--write-cache", "off", "--power-state", "1")
    assert res.code == 0, res.err
    assert "will change: the write cache (off) and the power state (PS1) for the run, restored afterwards" in res.out


def test_consent_for_settings_on_a_read_only_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings are a write-class action: a run that only reads asks the same consent, worded as a change, and
    its grant stays read-only for fio."""
    import argparse
    import io

    from ssdlab import safety
    from ssdlab.cli import Env, _authorize
    from ssdlab.errors import UnsafeTargetError

    target = nvme_target(nvme_tree(tmp_path))
    monkeypatch.setattr(target, "hazards", lambda: [])  # the fake node is not a real device
    err = io.StringIO()
    env = Env(stdout=io.StringIO(), stderr=err, stdin=io.StringIO())
    settings = devsettings.Requested(write_cache="off")
    reads = safety.WriteDecision()
    with pytest.raises(UnsafeTargetError, match="needs confirmation"):
        _authorize(target, reads, settings, argparse.Namespace(destructive=False, yes=False), env)
    grant = _authorize(target, reads, settings, argparse.Namespace(destructive=False, yes=True), env)
    assert grant.writes is False
    assert "WARNING: this run will change the write cache (off) of /dev/nvme0n1 (restored when it ends)" in \
        err.getvalue()
    assert "destroy" not in err.getvalue()
    monkeypatch.setattr(target, "hazards", lambda: [Hazard("/dev/nvme0n1 is mounted on /data", blocking=True)])
    with pytest.raises(UnsafeTargetError, match="is mounted on /data"):
        _authorize(target, reads, settings, argparse.Namespace(destructive=True, yes=True), env)


class NotingProgress(QuietProgress):
    """Keeps the notes a run prints."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        """Remember `text`."""
        self.notes.append(text)


def test_the_console_gets_health_and_the_bytes_cross_check(tmp_path: Path, fake: FakeDrive) -> None:
    run_dir, executor, run = run_with(tmp_path, fake, {})
    progress = NotingProgress()
    target = nvme_target(nvme_tree(run_dir.parent / "sys"))
    orchestrate.drive(run_dir, run, TwoPoints(), PlanContext(capacity=1 << 30), target, executor, progress,
                      grant=WriteGrant(target, writes=False))
    assert progress.notes[0].startswith("drive health (before) /dev/nvme0n1: WDC PC SN730 SDBQNTY-256G-1001, "
                                        "firmware 11170101, 51 °C, 30 % used, write cache enabled, power state 0")
    assert "  bytes read: by the test 8,192,000, by the drive's own counter 0 (counted in steps of 512,000 B)" in \
        progress.notes


def test_the_reproducing_command_carries_the_settings() -> None:
    from ssdlab.report import readable
    from ssdlab.results.model import SCHEMA_VERSION

    run = Run(schema_version=SCHEMA_VERSION, ssdlab_version="0", run_id="x", suite="quick-read", status="complete",
              created="", options={"suite": "quick-read", "target_specs": ["/dev/nvme0n1"],
                                   "device_settings": {"write_cache": "off", "power_state": 2}}, target={}, host={})
    assert readable.command_line(run) == ("ssdlab run quick-read --target /dev/nvme0n1 --write-cache off "
                                          "--power-state 2")
    assert ("--power-state", "2") in readable.option_facts(run)
