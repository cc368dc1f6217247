"""`ssdlab run replay` with real fio on file, null and nbdkit targets, several files at once, and the simulator:
a replay's I/O count and bytes per direction equal the trace's in every mode on every target kind; a timed replay
of a low-rate trace lasts the trace's duration (never shorter: fio waits for each I/O's time; a generous bound
above for a loaded host); the write gate, the refusals, compare and the catalog."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import CliResult, LoopFactory, MiB, run_cli
from ssdlab.errors import ExitCode
from ssdlab.trace.formats import load

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"


def low_rate_trace(path: Path, n: int = 120, gap_us: int = 15_000, reads: float = 0.7, span: int = 48 * MiB,
                   seed: int = 2) -> Path:
    """An Alibaba-format trace: n I/Os gap_us apart (120 x 15 ms: 1.785 s), 4K-64K, inside `span`."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        op = "R" if rng.random() < reads else "W"
        size = int(rng.choice([4096, 16384, 65536]))
        off = int(rng.integers(0, (span - size) // 4096)) * 4096
        rows.append(f"5,{op},{off},{size},{1577836800000000 + i * gap_us}")
    path.write_text("\n".join(rows) + "\n")
    return path


def replay(tmp_path: Path, trace: Path, target: str, *args: str, out: str = "out") -> tuple[CliResult, dict]:
    res = run_cli("run", "replay", "--trace", trace, "--target", target, "--out", tmp_path / out, "--no-report",
                  "-q", "-y", *args)
    run = json.loads((tmp_path / out / "run.json").read_text()) if (tmp_path / out / "run.json").exists() else {}
    return res, run


def replay_point(run: dict) -> dict:
    """The replay's point (several devices run a brief host-ceiling point first, run/ceiling.py)."""
    (p,) = [p for p in run["points"] if p["point"]["id"] == "replay"]
    return p  # type: ignore[no-any-return]


def replayed(run: dict) -> dict[str, tuple[int, int]]:
    p = replay_point(run)
    return {d: (v["total_ios"], v["io_bytes"]) for d, v in p["measurement"]["directions"].items()}


def expected(trace: Path, devices: int = 1) -> dict[str, tuple[int, int]]:
    return {d: (n * devices, b * devices) for d, (n, b) in load(trace).counts().items() if n}


def record(run: dict) -> dict:
    rec: dict = replay_point(run)["measurement"]["extra"]["replay"]
    return rec


@pytest.mark.parametrize("mode", [[], ["--speed", "2x"], ["--speed", "max", "--depth", "8"],
                                  ["--depth", "1"]])
def test_every_io_on_a_file_in_every_mode(tmp_path: Path, mode: list[str]) -> None:
    trace = low_rate_trace(tmp_path / "t.csv")
    res, run = replay(tmp_path, trace, f"file:{tmp_path}/t.dat?size=64MiB", *mode)
    assert res.code == 0, res.err
    assert replayed(run) == expected(trace)
    assert record(run)["missing"] == []
    assert run["events"][-1]["verdict"] == "complete"


def test_original_timing_lasts_the_traces_duration(tmp_path: Path) -> None:
    """fio sleeps until each I/O's time (never earlier), so a target that keeps up finishes with the trace:
    1.785 s of trace; the bounds allow a loaded CI host to be late, not early. At 2x it takes half."""
    trace = low_rate_trace(tmp_path / "t.csv")
    for speed, target in (("1", "null"), ("1", f"file:{tmp_path}/t.dat?size=64MiB"), ("2x", "null")):
        res, run = replay(tmp_path, trace, target, "--speed", speed, out=f"o-{speed}-{target[:4]}")
        assert res.code == 0, res.err
        rec = record(run)
        want = 1.785 / float(speed.rstrip("x"))
        assert rec["scaled_trace_s"] == pytest.approx(want)
        assert want * 0.97 <= rec["replay_s"] <= want * 1.25 + 0.3, rec
        assert rec["slowdown"] == pytest.approx(rec["replay_s"] / want)
    res, run = replay(tmp_path, trace, "null", "--speed", "max", out="max")
    assert record(run)["replay_s"] < 0.5  # as fast as possible: no waiting for the trace's times


def test_every_golden_format_replays_on_the_null_engine(tmp_path: Path) -> None:
    cases = [("alibaba.csv", ["--volume", "3"]), ("tencent.csv", ["--volume", "1063"]), ("msr.csv", ["--volume",
             "hm_0"]), ("iolog3.log", ["--no-trims"]), ("iolog2.log", ["--no-trims"]),
             ("blkparse.txt", ["--volume", "8,16"]), ("sample-merged.bin", ["--volume", "8,16"])]
    for i, (name, args) in enumerate(cases):
        res, run = replay(tmp_path, DATA / name, "null", *args, out=f"o{i}")
        assert res.code == 0, (name, res.err)
        want = {d: v for d, v in load(DATA / name, volume=args[1] if args[0] == "--volume" else None)
                .counts().items() if v[0] and d != "trim"}
        assert replayed(run) == want, name


def test_several_devices_each_or_split(tmp_path: Path) -> None:
    trace = low_rate_trace(tmp_path / "t.csv", n=80, gap_us=2000)
    targets = ["--target", f"file:{tmp_path}/a.dat?size=64MiB", "--target", f"file:{tmp_path}/b.dat?size=64MiB"]
    res, run = replay(tmp_path, trace, f"file:{tmp_path}/c.dat?size=64MiB", *targets[2:], *targets[:2], out="each")
    assert res.code == 0, res.err
    assert replayed(run) == expected(trace, devices=3)
    parts = replay_point(run)["measurement"]["parts"]
    assert len(parts["devices"]) == 3
    res, run = replay(tmp_path, trace, f"file:{tmp_path}/c.dat?size=64MiB", *targets, "--split", "--stripe", "64KiB",
                      out="split")
    assert res.code == 0, res.err
    assert replayed(run) == expected(trace)  # each I/O on one device
    assert record(run)["split"] is True
    assert record(run)["devices"] == 3


def test_nbd_target(tmp_path: Path) -> None:
    if shutil.which("nbdkit") is None:
        pytest.skip("nbdkit is not installed")
    trace = low_rate_trace(tmp_path / "t.csv", n=60, gap_us=1000)
    res, run = replay(tmp_path, trace, "nbdkit:memory?size=64MiB", "--speed", "max")
    assert res.code == 0, res.err
    assert replayed(run) == expected(trace)


@pytest.mark.parametrize("op", [7, 28])
def test_the_simulator_at_two_op_settings(tmp_path: Path, op: int) -> None:
    trace = low_rate_trace(tmp_path / "t.csv", n=2000, gap_us=500, reads=0.3)
    res, run = replay(tmp_path, trace, f"sim:tlc-4k?capacity=256MiB&op={op}")
    assert res.code == 0, res.err
    assert replayed(run) == expected(trace)
    m = replay_point(run)["measurement"]
    assert len(m["series"]["wa"]) == len(m["series"]["time_s"])
    assert m["extra"]["sim"]["simulated_ios"] == 2000


def test_compare_two_replays_and_the_catalog_lists_them(tmp_path: Path) -> None:
    trace = low_rate_trace(tmp_path / "t.csv", n=2000, gap_us=200, reads=0.3)
    root = tmp_path / "results"
    for op in (7, 28):
        res = run_cli("run", "replay", "--trace", trace, "--target", f"sim:tlc-4k?capacity=256MiB&op={op}", "--out",
                      root / f"op{op}", "-q", "--no-report")
        assert res.code == 0, res.err
    res = run_cli("compare", root / "op7", root / "op28", "--out", tmp_path / "cmp")
    assert res.code == 0, res.err
    assert (tmp_path / "cmp" / "compare.html").is_file()
    res = run_cli("runs", "--root", root, "--suite", "replay", "--json")
    assert res.code == 0, res.err
    listed = json.loads(res.out)
    assert len(listed) == 2


def test_refusals_are_one_line_and_leave_nothing_behind(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("5,R,0,4096,1577836800000000\n5,Q,0,4096,1577836800000001\n")
    big = low_rate_trace(tmp_path / "big.csv", span=512 * MiB)
    for trace, args, code, text in (
            (bad, [], ExitCode.USAGE, f"{bad}:2: opcode: not R or W"),
            (big, [], ExitCode.USAGE, "--map wrap"),
            (DATA / "iolog3.log", [], ExitCode.USAGE, "cannot replay trims"),
            (DATA / "alibaba.csv", [], ExitCode.USAGE, "holds 2 volumes"),
            (tmp_path / "absent.csv", [], ExitCode.USAGE, "does not exist")):
        res, _ = replay(tmp_path, trace, f"file:{tmp_path}/t.dat?size=64MiB", *args, out="refused")
        assert res.code == ExitCode(code), res.err
        errors = [ln for ln in res.err_lines if ln.startswith("ssdlab: error:")]
        assert len(errors) == 1, res.err
        assert text in errors[0], res.err
        assert not (tmp_path / "refused").exists()
        assert not (tmp_path / "t.dat").exists()
    res, run = replay(tmp_path, big, f"file:{tmp_path}/t.dat?size=64MiB", "--map", "wrap", "--speed", "max")
    assert res.code == 0, res.err
    assert replayed(run) == expected(big)


def test_writes_need_consent_on_someone_elses_file(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs.dat"
    theirs.write_bytes(b"x" * (64 * MiB))
    trace = low_rate_trace(tmp_path / "t.csv", n=20, gap_us=100, reads=0.5)
    res = run_cli("run", "replay", "--trace", trace, "--target", theirs, "--out", tmp_path / "o", "-q",
                  traceback=False)
    assert res.code == ExitCode.UNSAFE, res.err
    assert "needs confirmation" in res.err_lines[-1]
    assert not (tmp_path / "o").exists()
    reads = low_rate_trace(tmp_path / "r.csv", n=20, gap_us=100, reads=1.0)
    res = run_cli("run", "replay", "--trace", reads, "--target", theirs, "--out", tmp_path / "r", "-q", "--no-report")
    assert res.code == 0, res.err  # a read-only trace needs no consent
    assert (theirs.read_bytes()[:16]) == b"x" * 16


@pytest.mark.root
def test_a_device_with_a_filesystem(loops: LoopFactory, tmp_path: Path) -> None:
    """A trace with writes is refused on a device holding a filesystem (exit 4, nothing written); a read-only
    trace replays there, as read-only suites do (fio runs --readonly)."""
    dev = loops.create("fs", 64 * MiB, ext4=True)
    before = dev.digest()
    writes = low_rate_trace(tmp_path / "w.csv", n=30, gap_us=100, reads=0.5)
    res = run_cli("run", "replay", "--trace", writes, "--target", dev.dev, "--out", tmp_path / "w", "-y", "-q",
                  traceback=False)
    assert res.code == ExitCode.UNSAFE, res.err
    assert not (tmp_path / "w").exists()
    reads = low_rate_trace(tmp_path / "r.csv", n=30, gap_us=100, reads=1.0)
    res = run_cli("run", "replay", "--trace", reads, "--target", dev.dev, "--out", tmp_path / "r", "-q",
                  "--no-report", "--speed", "max")
    assert res.code == 0, res.err
    assert "--readonly" in (tmp_path / "r" / "points" / "replay" / "cmd.txt").read_text()
    assert dev.digest() == before


def test_trace_fit_check_with_fio(tmp_path: Path) -> None:
    trace = low_rate_trace(tmp_path / "t.csv", n=3000, gap_us=300)
    res = run_cli("trace", "fit", trace, "--out", tmp_path / "fit.toml", "--check")
    assert res.code == 0, res.err
    assert "every metric within its tolerance" in res.err
    res = run_cli("run", tmp_path / "fit.toml", "--target", "null", "--runtime", "0.5", "--footprint", "16MiB",
                  "--out", tmp_path / "run", "-q", "--no-report")
    assert res.code == 0, res.err


def test_a_host_group_each_device_or_split(tmp_path: Path) -> None:
    """Two agents (local fio servers on private sockets): the trace on each of three devices, or striped across
    them; the agents read the iologs from the run's directory (a filesystem they share with the controller)."""
    from test_hostgroup_fio import agents, inventory

    trace = low_rate_trace(tmp_path / "t.csv", n=90, gap_us=1000)
    with agents(tmp_path, 2) as (a, b):
        inv = inventory(tmp_path / "lab.toml", [("a", a, [f"file:{tmp_path}/a1.dat?size=64MiB",
                                                          f"file:{tmp_path}/a2.dat?size=64MiB"]),
                                                ("b", b, [f"file:{tmp_path}/b1.dat?size=64MiB"])])
        for args, devices in (([], 3), (["--split", "--speed", "max"], 1)):
            out = tmp_path / f"hosts{devices}"
            res = run_cli("run", "replay", "--trace", trace, "--hosts", inv, "--out", out, "--yes", "-q",
                          "--no-report", *args)
            assert res.code == 0, res.err
            run = json.loads((out / "run.json").read_text())
            assert replayed(run) == expected(trace, devices=devices)
            assert record(run)["devices"] == 3
            parts = replay_point(run)["measurement"]["parts"]
            assert len(parts["devices"]) == 3
