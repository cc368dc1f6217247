"""`ssdlab trace info|fit|convert` and `plan replay` as a user runs them: their output, the files they write,
one-line errors with exit 2; and `ssdlab serve` lists a replay with its facts, as any run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from conftest import run_cli
from ssdlab.results import outputs
from ssdlab.trace.formats import load

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"


def test_info_prints_the_characterization() -> None:
    res = run_cli("trace", "info", DATA / "msr.csv")
    assert res.code == 0, res.err
    out = res.out
    assert f"trace:      {DATA / 'msr.csv'} (msr): 6 I/Os over 5 ms" in out
    assert "volumes:    hm_0 (4), hm_1 (2)" in out
    assert "mix:        reads 50.0 % of I/Os" in out
    assert "queue depth: implied by the trace's response times (100.0 % of I/Os)" in out
    assert "skew:       the hottest 1 % of the 6 touched 4 KiB blocks" in out


def test_info_json_and_plot(tmp_path: Path) -> None:
    res = run_cli("trace", "info", DATA / "blkparse.txt", "--json", "--plot", tmp_path / "t.svg")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["ios"] == 5
    assert doc["format"] == "blkparse"
    assert doc["directions"]["trim"]["bytes"] == 1048576
    svg = tmp_path / "t.svg"
    assert svg.read_text().startswith("<svg")
    assert outputs.written_by_ssdlab(svg)
    theirs = tmp_path / "theirs.svg"
    theirs.write_text("<svg>someone's</svg>")
    res = run_cli("trace", "info", DATA / "msr.csv", "--plot", theirs, traceback=False)
    assert res.code == 2
    assert "was not written by ssdlab" in res.err


def test_a_malformed_trace_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("1538352000,0,8,0,1063\n1538352000,x,8,0,1063\n")
    res = run_cli("trace", "info", bad, "--format", "tencent", traceback=False)
    assert res.code == 2
    assert res.err_lines == [f"ssdlab: error: {bad}:2: Offset: not a whole number (found 'x'); fix or remove "
                             "that line (or pick the format with --format)"]


def test_fit_to_stdout_and_convert(tmp_path: Path) -> None:
    res = run_cli("trace", "fit", DATA / "alibaba.csv", "--volume", "3")
    assert res.code == 0, res.err
    assert res.out.startswith("# fitted by `ssdlab trace fit`")
    assert 'name = "fit-alibaba-3"' in res.out
    out = tmp_path / "t.iolog"
    res = run_cli("trace", "convert", DATA / "alibaba.csv", "--volume", "3", "--out", out)
    assert res.code == 0, res.err
    back = load(out)
    src = load(DATA / "alibaba.csv", volume="3")
    assert back.format == "iolog3"
    assert back.time_ns.tolist() == src.time_ns.tolist()
    assert back.offset.tolist() == src.offset.tolist()
    assert back.op.tolist() == src.op.tolist()
    res = run_cli("trace", "convert", DATA / "alibaba.csv", "--volume", "3", "--out", out, traceback=False)
    assert res.code == 2
    assert "exists" in res.err


def test_plan_replay_names_the_trace_and_the_mode() -> None:
    res = run_cli("plan", "replay", "--trace", DATA / "alibaba.csv", "--volume", "3", "--target", "null",
                  "--speed", "2x", "--depth", "4")
    assert res.code == 0, res.err
    assert f"trace: {DATA / 'alibaba.csv'} (alibaba): 4 I/Os over 3 ms: 2 reads (8 KiB), 2 writes (12 KiB)" in res.out
    assert "replay: 2x the original rate, up to 4 I/Os in flight; offsets: refuse" in res.out
    assert "writes: point replay: [replay-s0] rw=randrw writes" in res.out
    res = run_cli("plan", "replay", "--target", "null", traceback=False)
    assert res.code == 2
    assert "replay needs --trace FILE" in res.err


def test_serve_lists_a_replay(tmp_path: Path) -> None:
    from ssdlab.serve.app import make_app

    root = tmp_path / "results"
    res = run_cli("run", "replay", "--trace", DATA / "alibaba.csv", "--volume", "3", "--target",
                  "sim:tlc-4k?capacity=256MiB", "--out", root / "r", "-q")
    assert res.code == 0, res.err

    async def go() -> None:
        async with TestClient(TestServer(make_app(root, "t" * 32))) as c:
            body: Any = await (await c.get("/api/runs", headers={"Authorization": "Bearer " + "t" * 32})).json()
            (run,) = body["runs"]
            assert run["suite"] == "replay"
            assert run["verdict"] == "complete"
            assert run["has_report"]

    asyncio.run(go())
