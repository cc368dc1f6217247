"""`ssdlab serve` without a browser: the token on every request, loopback by default, stored files served only
from inside their run directory, tag edits only when allowed, the comparison page, /metrics, and many
browsers following one run at once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, ClientTimeout
from aiohttp.test_utils import TestClient, TestServer

from ssdlab.results.catalog import catalog_id
from ssdlab.results.store import load_run
from ssdlab.run.liverecord import LIVE_FILE
from ssdlab.serve import auth, live
from ssdlab.serve.app import make_app
from ssdlab.serve.command import add_commands

DATA = Path(__file__).parent.parent / "data" / "runs"
TOKEN = "t0ken-for-the-tests-0123456789"  # noqa: S105 - the server under test is given it
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A results root with three stored runs: two quick runs and a PTS run."""
    out = tmp_path / "results"
    out.mkdir()
    for name, src in (("quick-a", "schema2/quick-file"), ("quick-b", "schema1/quick-file"),
                      ("pts", "schema1/pts-iops-op28")):
        shutil.copytree(DATA / src, out / name)
    (out / "quick-a" / "report.html").write_text("<html><body>the stored report</body></html>", encoding="utf-8")
    return out


def ids(root: Path) -> dict[str, str]:
    return {d.name: catalog_id(load_run(d)) for d in root.iterdir() if d.is_dir()}


def serve(root: Path, test: Callable[[TestClient[Any, Any]], Awaitable[None]], *, allow_tags: bool = False) -> None:
    async def go() -> None:
        async with TestClient(TestServer(make_app(root, TOKEN, allow_tags=allow_tags))) as client:
            await test(client)

    asyncio.run(go())


# ------------------------------------------------------------------ the token


def test_every_request_needs_the_token(root: Path) -> None:
    async def test(c: TestClient[Any, Any]) -> None:
        for path in ("/api/runs", "/metrics", "/api/live", "/compare?run=a&run=b", "/vendor/plotly.min.js"):
            assert (await c.get(path)).status == 401, path
            assert (await c.get(path, headers={"Authorization": "Bearer wrong"})).status == 401, path
        page = await c.get("/", headers={"Accept": "text/html"}, allow_redirects=False)
        assert page.status == 303
        assert page.headers["Location"] == "/login"
        assert (await c.get("/api/runs", headers=BEARER)).status == 200
        assert (await c.get("/login")).status == 200  # the login page itself is open

    serve(root, test)


def test_logging_in_sets_a_cookie_that_opens_everything(root: Path) -> None:
    async def test(c: TestClient[Any, Any]) -> None:
        origin = {"Origin": str(c.make_url("")).rstrip("/")}
        bad = await c.post("/login", data={"token": "nope"}, headers=origin, allow_redirects=False)
        assert bad.status == 401
        ok = await c.post("/login", data={"token": TOKEN}, headers=origin, allow_redirects=False)
        assert ok.status == 303
        cookie = ok.cookies[auth.COOKIE]
        assert cookie["httponly"]
        assert cookie["samesite"] == "Lax"
        runs = await c.get("/api/runs")  # the client keeps the cookie
        assert runs.status == 200
        assert (await c.get("/vendor/plotly.min.js")).status == 200
        page = await c.get("/")
        assert page.status == 200
        assert page.headers["X-Frame-Options"] == "DENY"
        assert "default-src 'self'" in page.headers["Content-Security-Policy"]

    serve(root, test)


def test_the_server_listens_on_loopback_by_default_and_says_so_elsewhere() -> None:
    import argparse

    sub = argparse.ArgumentParser().add_subparsers(dest="command")
    add_commands(sub)
    args = sub.choices["serve"].parse_args([])
    assert args.bind == "127.0.0.1"
    assert not args.allow_tag_edits
    assert auth.check_bind("127.0.0.1", 8680) == ""
    assert auth.check_bind("::1", 0) == ""
    assert "plain HTTP" in auth.check_bind("0.0.0.0", 8680)  # noqa: S104 - the address under test
    assert "10.1.2.3" in auth.check_bind("10.1.2.3", 8680)


@pytest.mark.parametrize(("argv", "words"), [
    (["--bind", "lab-host"], "not an IP address"),
    (["--port", "70000"], "--port 70000"),
    (["--results", "/nonexistent/dir"], "is not a directory"),
])
def test_bad_options_are_one_line_and_exit_2(cli: Any, tmp_path: Path, argv: list[str], words: str) -> None:
    res = cli("serve", "--results", str(tmp_path), *argv, traceback=False)
    assert res.code == 2
    assert words in res.err
    assert res.err.count("\n") == 1


def test_a_token_file_is_private_and_kept(tmp_path: Path, cli: Any) -> None:
    from ssdlab.serve.command import _token

    path = tmp_path / "token"
    first = _token(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert _token(path) == first
    path.chmod(0o644)
    res = cli("serve", "--results", str(tmp_path), "--token-file", str(path), traceback=False)
    assert res.code == 2
    assert "chmod 600" in res.err


def test_the_command_prints_the_login_url_once_and_stops_on_ctrl_c(root: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "ssdlab", "serve", "--results", str(root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert "/login#token=" in url
        base, token = url.split("/login#token=")

        async def check() -> None:
            async with ClientSession(timeout=ClientTimeout(total=30)) as s:
                async with s.get(f"{base}/api/runs") as r:
                    assert r.status == 401
                async with s.get(f"{base}/api/runs", headers={"Authorization": f"Bearer {token}"}) as r:
                    assert r.status == 200
                    assert len((await r.json())["runs"]) == 3

        asyncio.run(check())
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert token not in err
    assert out == ""


# ------------------------------------------------------------------ the catalog and stored files


def test_the_catalog_lists_every_run_with_its_facts(root: Path) -> None:
    async def test(c: TestClient[Any, Any]) -> None:
        body = await (await c.get("/api/runs", headers=BEARER)).json()
        by_id = {r["id"]: r for r in body["runs"]}
        known = ids(root)
        assert set(by_id) == set(known.values())
        a = by_id[known["quick-a"]]
        assert a["has_report"]
        assert not a["has_live"]
        assert a["verdict"]
        assert {"model", "firmware", "suite", "target", "created", "tags"} <= set(a)

    serve(root, test)


@pytest.mark.parametrize("tail", ["../quick-b/run.json", "..%2Fquick-b%2Frun.json", "%2e%2e/quick-b/run.json",
                                  "%2Fetc%2Fpasswd", ".lock", "points/../../quick-b/run.json", "escape/passwd",
                                  "nothing-here.html"])
def test_files_outside_the_run_directory_are_never_served(root: Path, tail: str) -> None:
    (root / "quick-a" / ".lock").write_text("", encoding="utf-8")
    (root / "quick-a" / "escape").symlink_to("/etc")

    async def test(c: TestClient[Any, Any]) -> None:
        run = ids(root)["quick-a"]
        r = await c.get(f"/runs/{run}/files/{tail}", headers=BEARER)
        assert r.status == 404, (tail, r.status)

    serve(root, test)


def test_a_report_is_served_as_it_is_on_disk_and_shown_sandboxed(root: Path) -> None:
    async def test(c: TestClient[Any, Any]) -> None:
        run = ids(root)["quick-a"]
        r = await c.get(f"/runs/{run}/report", headers=BEARER)
        assert r.status == 200
        assert r.url.path == f"/runs/{run}/files/report.html"
        assert await r.read() == (root / "quick-a" / "report.html").read_bytes()
        assert r.headers["Content-Security-Policy"].startswith("sandbox")
        other = await c.get(f"/runs/{ids(root)['quick-b']}/report", headers=BEARER)
        assert other.status == 404
        assert "ssdlab report" in await other.text()
        assert (await c.get("/runs/../files/run.json", headers=BEARER)).status == 404
        assert (await c.get("/runs/zzzz/report", headers=BEARER)).status == 404

    serve(root, test)


def test_ticked_runs_get_compares_page(root: Path) -> None:
    async def test(c: TestClient[Any, Any]) -> None:
        known = ids(root)
        r = await c.get(f"/compare?run={known['quick-a']}&run={known['quick-b']}", headers=BEARER)
        assert r.status == 200
        text = await r.text()
        assert "<html" in text.lower()
        assert "baseline" in text.lower()
        one = await c.get(f"/compare?run={known['quick-a']}", headers=BEARER)
        assert one.status == 400
        assert "2 to" in await one.text()

    serve(root, test)


def test_tags_are_read_only_unless_allowed(root: Path) -> None:
    async def test(c: TestClient[Any, Any]) -> None:
        run = ids(root)["quick-a"]
        r = await c.post(f"/api/runs/{run}/tags", json={"set": {"label": "x"}}, headers=BEARER)
        assert r.status == 403
        assert "--allow-tag-edits" in await r.text()

    serve(root, test)
    assert not (root / "quick-a" / "tags.json").exists()


def test_allowed_tag_edits_write_tags_json_from_the_servers_own_pages(root: Path) -> None:
    async def test(c: TestClient[Any, Any]) -> None:
        run = ids(root)["quick-a"]
        r = await c.post(f"/api/runs/{run}/tags", json={"set": {"label": "fw-2.1", "rack": "r12"}}, headers=BEARER)
        assert r.status == 200
        assert (await r.json())["tags"] == {"label": "fw-2.1", "rack": "r12"}
        r = await c.post(f"/api/runs/{run}/tags", json={"remove": ["rack"]}, headers=BEARER)
        assert (await r.json())["tags"] == {"label": "fw-2.1"}
        bad = await c.post(f"/api/runs/{run}/tags", json={"set": {"no spaces": "x"}}, headers=BEARER)
        assert bad.status == 400
        assert "KEY=VALUE" in await bad.text()
        # a page on another site cannot change anything, even with the browser's cookie
        c.session.cookie_jar.update_cookies({auth.COOKIE: TOKEN})
        cross = await c.post(f"/api/runs/{run}/tags", json={"set": {"label": "evil"}},
                             headers={"Origin": "http://evil.example"})
        assert cross.status == 403

    serve(root, test, allow_tags=True)
    assert json.loads((root / "quick-a" / "tags.json").read_text(encoding="utf-8")) == {"label": "fw-2.1"}


# ------------------------------------------------------------------ runs in progress


def _live_run(root: Path, devices: int = 2) -> Path:
    """A stored run made to look as if it were going on: status running, a live record with samples."""
    run_dir = root / "quick-a"
    doc = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    doc["status"] = "running"
    (run_dir / "run.json").write_text(json.dumps(doc), encoding="utf-8")
    names = [f"/dev/nvme{i}n1" for i in range(devices)]
    start = time.time() - 5
    lines = [{"k": "run", "t": start, "v": 1, "title": "quick on two", "devices": names, "engine": "fio",
              "host_group": False},
             {"k": "point", "t": start, "id": "p1", "label": "RND4K Q32T1 Read", "index": 1, "round": None,
              "eta": {"expected_s": 60, "worst_s": 60, "expected_points": 8, "worst_points": 8}}]
    (run_dir / LIVE_FILE).write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    append_samples(run_dir, 0, 3, devices)
    return run_dir


def append_samples(run_dir: Path, first: int, count: int, devices: int) -> None:
    with (run_dir / LIVE_FILE).open("a", encoding="utf-8") as fh:
        for i in range(first, first + count):
            fig = {"r": [1000.0 + i, 4.0, 50.0, 90.0, 120.0, 300.0]}
            fh.write(json.dumps({"k": "s", "t": time.time() - 3 + i, "e": i + 1.0, "a": fig, "left_s": 50 - i,
                                 "d": [fig] * devices}) + "\n")


async def _events(c: TestClient[Any, Any], run: str, wanted: int) -> list[tuple[str, Any]]:
    """Read server-sent events until `wanted` samples arrived (snapshot included)."""
    r = await c.get(f"/api/live/{run}/events", headers=BEARER)
    assert r.status == 200
    assert r.headers["Content-Type"] == "text/event-stream"
    got: list[tuple[str, Any]] = []
    samples = 0
    event = ""
    while samples < wanted:
        line = (await r.content.readline()).decode()
        if line.startswith("event: "):
            event = line[7:].strip()
        elif line.startswith("data: "):
            data = json.loads(line[6:])
            got.append((event, data))
            if event == "snapshot":
                samples += len(data["samples"])
            elif event == "records":
                samples += sum(1 for x in data if x["k"] == "s")
    r.close()
    return got


@contextlib.contextmanager
def driven(run_dir: Path) -> Iterator[None]:
    """The run's lock held, as the ssdlab process driving a run holds it."""
    import fcntl

    with (run_dir / ".lock").open("w", encoding="utf-8") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        yield


def test_many_browsers_follow_one_run_and_each_gets_the_whole_history(root: Path) -> None:
    run_dir = _live_run(root)
    browsers = 40

    async def test(c: TestClient[Any, Any]) -> None:
        run = ids(root)["quick-a"]
        readers = [asyncio.create_task(_events(c, run, 6)) for _ in range(browsers)]
        await asyncio.sleep(0.5)
        append_samples(run_dir, 3, 3, 2)  # three more samples while they watch
        results = await asyncio.wait_for(asyncio.gather(*readers), 60)
        for got in results:  # a browser that connected late has more in its snapshot and fewer records after
            assert got[0][0] == "snapshot"
            snap = got[0][1]
            assert len(snap["samples"]) >= 3
            assert snap["state"]["devices"] == ["/dev/nvme0n1", "/dev/nvme1n1"]
            later = [x for event, data in got[1:] if event == "records" for x in data if x["k"] == "s"]
            seen = [x["e"] for x in snap["samples"]] + [x["e"] for x in later]
            assert seen == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # the whole history, once each, in order
        assert (await c.get("/api/runs", headers=BEARER)).status == 200  # still answering
        metrics = await (await c.get("/metrics", headers=BEARER)).text()
        assert f'ssdlab_iops{{run="{run}",device="all",direction="read"}} 1005' in metrics
        assert f'ssdlab_iops{{run="{run}",device="/dev/nvme1n1",direction="read"}} 1005' in metrics
        assert f'ssdlab_sample_latency_seconds{{run="{run}",device="all",direction="read",percentile="99.99"}} ' \
            '0.0003' in metrics
        assert f'ssdlab_run_phase{{run="{run}",phase="measure"}} 1' in metrics
        assert "# TYPE ssdlab_iops gauge" in metrics

    with driven(run_dir):
        serve(root, test)


def test_a_late_browser_of_a_long_run_gets_a_thinned_history(tmp_path: Path) -> None:
    run = live.LiveRun("x", tmp_path)
    lines = "".join(json.dumps({"k": "s", "t": float(i), "a": {}}) + "\n" for i in range(live.MAX_SAMPLES + 10))
    (tmp_path / LIVE_FILE).write_text(lines + '{"k":"s","t":', encoding="utf-8")  # the last line not complete
    run.read_new()
    assert len(run.samples) <= live.MAX_SAMPLES
    assert run.samples[0]["t"] == 0.0
    assert run.samples[-1]["t"] == float(live.MAX_SAMPLES + 9)
    with (tmp_path / LIVE_FILE).open("a", encoding="utf-8") as fh:
        fh.write('99999.0,"a":{}}\n')
    run.read_new()
    assert run.samples[-1]["t"] == 99999.0  # the torn line, once complete, counts


def test_a_run_is_in_progress_while_a_process_holds_its_lock(tmp_path: Path) -> None:
    import fcntl

    (tmp_path / ".lock").write_text("", encoding="utf-8")
    assert live.is_locked(tmp_path, live.locked_inodes()) is False
    with (tmp_path / ".lock").open("w", encoding="utf-8") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        held = live.locked_inodes()
        if held is None:
            pytest.skip("/proc/locks cannot be read here")
        assert live.is_locked(tmp_path, held) is True
    assert live.is_locked(tmp_path, live.locked_inodes()) is False


def test_pts_tracking_comes_with_the_stored_points(root: Path) -> None:
    stored, _ = live.read_stored(root / "pts")
    (test,) = [t for t in stored["pts"] if t["test"] == "iops"]
    assert test["rounds"] >= 5
    assert test["trackers"]
    tracker = test["trackers"][0]
    assert len(tracker["values"]) == test["rounds"]
    assert tracker["unit"] == "IOPS"
    window = tracker["window"]
    assert window is not None
    assert len(window["rounds"]) == 5
    assert window["low"] == pytest.approx(0.9 * window["average"])
    assert stored["verdict"]["kind"] in ("steady", "not-steady", "incomplete")
