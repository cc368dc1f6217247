"""/metrics as Prometheus users expect it: counters of I/Os and bytes per run, device and direction that never go
down, a latency histogram whose buckets are exact sums of fio's bins, series only while a run lives, PTS series
only for PTS runs, the exposition format's Content-Type, and text `promtool check metrics` accepts."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from bisect import bisect_left
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from ssdlab.results import hist
from ssdlab.results.store import load_run
from ssdlab.serve import lab, live, metrics
from ssdlab.serve.app import make_app

DATA = Path(__file__).parent.parent / "data" / "runs"
LINE = re.compile(r'^(\w+)\{(.*)\} (\S+)$')


def _samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    out = []
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = LINE.match(line)
        assert m, line
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m[2]))
        out.append((m[1], labels, float(m[3])))
    return out


def _value(text: str, name: str, **labels: str) -> float:
    found = [v for n, lb, v in _samples(text) if n == name and all(lb.get(k) == x for k, x in labels.items())]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def _live(run_dir: Path | None = None, **kw: Any) -> live.LiveRun:
    r = live.LiveRun("r1", run_dir or Path("/nonexistent"))
    r.active, r.status = True, "running"
    r.stored = {"suite": "quick", "target": "file"}
    for k, v in kw.items():
        setattr(r, k, v)
    return r


def test_every_fio_bucket_lies_within_one_histogram_bucket() -> None:
    """The le bounds are fio bucket edges, so each Prometheus bucket is an exact sum of fio's bins."""
    for idx in range(hist.PLAT_NR):
        lower, upper = hist.idx_bounds(idx)
        assert bisect_left(lab.LE_NS, lower) == bisect_left(lab.LE_NS, upper - 1), idx
    assert len(lab.LE_NS) == len(set(lab.LE_NS)) == 52


def test_counters_and_histogram_come_exactly_from_the_stored_points() -> None:
    run = load_run(DATA / "schema2" / "quick-file")
    text = metrics.render([_live(totals=lab.tally(run))])
    for direction in ("read", "write"):
        dirs = [d for pr in run.points if pr.measurement is not None
                and (d := pr.measurement.directions.get(direction)) is not None and d.total_ios > 0]
        assert dirs
        assert _value(text, "ssdlab_io_total", device="all", direction=direction) == sum(d.total_ios for d in dirs)
        assert _value(text, "ssdlab_bytes_total", device="all", direction=direction) == sum(d.io_bytes for d in dirs)
        # every le bucket: the I/Os whose fio bucket ends at or below it, counted here from the bins themselves
        uppers: list[tuple[int, int]] = []
        for d in dirs:
            assert d.clat is not None
            counts = hist.counts_from_sparse(d.clat.bins)
            uppers += [(hist.idx_bounds(i)[1] - 1, int(n)) for i, n in enumerate(counts) if n]
        buckets = {lb["le"]: v for n, lb, v in _samples(text)
                   if n == "ssdlab_latency_seconds_bucket" and lb["direction"] == direction}
        for ns in lab.LE_NS:
            assert buckets[repr(ns / 1e9)] == sum(n for u, n in uppers if u <= ns)
        total = sum(n for _, n in uppers)
        assert buckets["+Inf"] == total == _value(text, "ssdlab_latency_seconds_count", direction=direction)
        mean_s = sum(d.clat.mean_ns * d.clat.n for d in dirs if d.clat) / total / 1e9
        assert _value(text, "ssdlab_latency_seconds_sum", direction=direction) / total == pytest.approx(mean_s)
    assert "# TYPE ssdlab_io_total counter" in text
    assert "# TYPE ssdlab_latency_seconds histogram" in text


def _sample(t: float, e: float, iops: float) -> dict[str, Any]:
    return {"k": "s", "t": t, "e": e, "a": {"r": [iops, iops * 4096 / 1e6, 50.0, 90.0, 120.0, 300.0]}}


def test_the_point_in_progress_counts_from_its_samples_and_a_counter_never_goes_down() -> None:
    import time

    now = time.time()
    r = _live()
    for rec in [{"k": "run", "t": now - 10, "devices": ["/dev/x"]},
                {"k": "point", "t": now - 5, "id": "p1", "index": 1, "phase": "measure"},
                _sample(now - 4, 1.0, 1000.0), _sample(now - 3, 2.0, 1000.0), _sample(now - 2, 3.0, 1000.0)]:
        r._take(rec)
    text = metrics.render([r])
    assert _value(text, "ssdlab_io_total", direction="read") == 3000  # 1000 I/Os per second for 3 s
    assert _value(text, "ssdlab_bytes_total", direction="read") == pytest.approx(3000 * 4096, rel=1e-3)
    # the point ends and is stored with fewer I/Os than its samples said (fio's exact count): no step back
    r._take({"k": "end", "t": now - 1, "id": "p1", "status": "ok"})
    r.take_stored((), r.stored, lab.Totals({("all", "read"): lab.Tally(2990, 2990 * 4096)}, ids=frozenset({"p1"})))
    assert r.in_progress() == {}
    assert _value(metrics.render([r]), "ssdlab_io_total", direction="read") == 3000
    # the next point: its samples (a new fio run, its clock from 0) add to the stored count; where a sample says
    # the time its rates cover (`dt`: fio's last status document of a point counts a whole second in `e`), that
    r._take({"k": "point", "t": now - 1, "id": "p2", "index": 2})
    r._take(_sample(now, 1.0, 500.0))
    r._take({**_sample(now, 2.0, 400.0), "dt": 0.1})
    assert _value(metrics.render([r]), "ssdlab_io_total", direction="read") == 2990 + 500 + 40


def test_a_run_has_series_only_while_it_lives() -> None:
    import time

    r = _live()
    r._take({"k": "point", "t": time.time() - 2, "id": "p1", "index": 1})
    r._take(_sample(time.time() - 1, 1.0, 1000.0))
    text = metrics.render([r])
    assert _value(text, "ssdlab_iops", direction="read") == 1000
    assert _value(text, "ssdlab_run_info") == 1
    r.status = "complete"  # the run ended: every series of it ends (no flat line of its last figures)
    assert metrics.render([r]) == "\n"
    r.status, r.active = "running", False  # its process is gone (killed): nothing drives it
    assert metrics.render([r]) == "\n"


def test_the_last_sample_figures_show_only_while_fresh() -> None:
    import time

    r = _live()
    r._take({"k": "point", "t": time.time() - 60, "id": "p1", "index": 1})
    r._take(_sample(time.time() - metrics.SAMPLE_FRESH_S - 5, 1.0, 1000.0))
    text = metrics.render([r])
    assert "ssdlab_iops" not in text
    assert _value(text, "ssdlab_sample_age_seconds") > metrics.SAMPLE_FRESH_S
    assert _value(text, "ssdlab_io_total", direction="read") == 1000  # the counter stays


def test_pts_series_only_for_pts_runs(tmp_path: Path) -> None:
    quick = load_run(DATA / "schema2" / "quick-file")
    assert lab.pts_tracking(quick) == []  # (gave iops, tp128, tp1024 and lat at round 0)
    pts = load_run(DATA / "schema1" / "pts-iops-op28")
    tracking = lab.pts_tracking(pts)
    assert [t["test"] for t in tracking] == ["iops"]
    text = metrics.render([_live(stored={"suite": "pts-iops", "pts": tracking})])
    assert _value(text, "ssdlab_pts_round", test="iops") == tracking[0]["rounds"]
    assert "ssdlab_pts" not in metrics.render([_live(stored={"suite": "quick", "pts": lab.pts_tracking(quick)})])


def test_the_content_type_names_the_exposition_version(tmp_path: Path) -> None:
    token = "t0ken-for-the-tests-0123456789"  # noqa: S105 - the server under test is given it

    async def go() -> None:
        async with TestClient(TestServer(make_app(tmp_path, token))) as c:
            r = await c.get("/metrics", headers={"Authorization": f"Bearer {token}"})
            assert r.status == 200
            assert r.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"

    asyncio.run(go())


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (apt-get install prometheus)")
def test_promtool_accepts_the_exposition() -> None:
    import time

    run = load_run(DATA / "schema2" / "quick-file")
    r = _live(totals=lab.tally(run), stored={"suite": "pts-iops", "target": 'a "quoted"\nname',
                                             "pts": lab.pts_tracking(load_run(DATA / "schema1" / "pts-iops-op28"))})
    r._take({"k": "run", "t": time.time(), "title": "t", "devices": ["/dev/a", "/dev/b"]})
    r._take({"k": "point", "t": time.time(), "id": "p1", "index": 1, "eta": {"expected_s": 30}})
    r._take({**_sample(time.time(), 1.0, 100.0), "d": [{"w": [5.0, 1.0, 2.0, 3.0, 4.0, 5.0]}, None]})
    r._take({"k": "health", "t": time.time(), "device": "/dev/a", "temperature_c": 41})
    text = metrics.render([r])
    for family in ("ssdlab_io_total", "ssdlab_latency_seconds", "ssdlab_iops", "ssdlab_pts_round",
                   "ssdlab_temperature_celsius", "ssdlab_eta_seconds"):
        assert f"# TYPE {family} " in text
    res = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60,
                         check=False)
    assert res.returncode == 0, res.stdout + res.stderr


DOCS = Path(__file__).parent.parent.parent / "docs"


def _exprs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["expr"]] if isinstance(node.get("expr"), str) else []
        return found + [e for v in node.values() for e in _exprs(v)]
    if isinstance(node, list):
        return [e for v in node for e in _exprs(v)]
    return []


def test_the_grafana_dashboard_parses_and_queries_what_the_server_exposes(tmp_path: Path) -> None:
    import json

    board = json.loads((DOCS / "grafana" / "ssdlab.json").read_text(encoding="utf-8"))
    assert board["panels"]
    assert board["templating"]["list"][0]["name"] == "run"
    exprs = _exprs(board["panels"])
    assert len(exprs) >= 9
    for expr in exprs:  # every metric a query names is one the server exposes
        for name in re.findall(r"\bssdlab_\w+", expr):
            assert name in metrics._HELP or name.removesuffix("_bucket") in metrics._HELP, (name, expr)
    panel = re.search(r"```json\n(.*?)```", (DOCS / "serve.md").read_text(encoding="utf-8"), re.S)
    assert panel is not None
    assert json.loads(panel[1])["targets"][0]["expr"] in exprs  # the panel docs/serve.md shows is the dashboard's
    if shutil.which("promtool") is None:
        return
    rules = tmp_path / "rules.yml"  # promtool parses each query as a recording rule's expression
    concrete = [e.replace("$__rate_interval", "1m").replace("$run", ".*") for e in exprs]
    rules.write_text("groups:\n  - name: dashboard\n    rules:\n" + "".join(
        f"      - record: dashboard:q{i}\n        expr: {json.dumps(e)}\n" for i, e in enumerate(concrete)),
        encoding="utf-8")
    res = subprocess.run(["promtool", "check", "rules", str(rules)], capture_output=True, text=True, timeout=60,
                         check=False)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (apt-get install prometheus)")
def test_the_documented_scrape_configuration_is_valid(tmp_path: Path) -> None:
    block = re.search(r"```yaml\n(scrape_configs:.*?)```", (DOCS / "serve.md").read_text(encoding="utf-8"), re.S)
    assert block is not None
    token = tmp_path / "token"
    token.write_text("x" * 32, encoding="utf-8")
    config = tmp_path / "prometheus.yml"
    config.write_text(block[1].replace("/etc/prometheus/ssdlab-token", str(token)), encoding="utf-8")
    res = subprocess.run(["promtool", "check", "config", str(config)], capture_output=True, text=True, timeout=60,
                         check=False)
    assert res.returncode == 0, res.stdout + res.stderr
