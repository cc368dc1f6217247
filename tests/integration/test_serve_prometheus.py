"""A real Prometheus server (Debian's `prometheus` package) scrapes `ssdlab serve` with the bearer token, every
second, while a paced run on fio's null engine goes on; `rate()` of the I/O counter and `histogram_quantile()` of
the latency histogram are asked through its HTTP API, and the run's series end when the run ends. The exposition
is also checked by `promtool check metrics`.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("prometheus") is None or shutil.which("promtool") is None,
                                 reason="prometheus is not installed (apt-get install prometheus)")]

RATE = 1000  # I/Os per second the run is paced at (fio's rate_iops), per direction
PACED = f"""\
name = "paced-null"
summary = "rate-limited points on fio's null engine, for a scrape to watch"
runtime_s = 3

[[matrix]]
name = "paced"
rw = ["randread", "randrw"]
bs = ["4k", "8k"]
iodepth = 1
numjobs = 1
options = {{ rate_iops = "{RATE}" }}
"""
TIMEOUT_S = 90.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, headers: dict[str, str] | None = None) -> bytes:
    req = urllib.request.Request(url, headers=headers or {})  # noqa: S310 - a loopback URL made here
    with urllib.request.urlopen(req, timeout=10) as r:  # noqa: S310
        return bytes(r.read())


def _query(prom: str, expr: str) -> list[dict[str, Any]]:
    doc = json.loads(_get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})))
    assert doc["status"] == "success", doc
    return list(doc["data"]["result"])


def _until(what: str, check: Any, timeout: float = TIMEOUT_S) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """`ssdlab serve` with a token file, and Prometheus scraping it every second with that token."""
    root = tmp_path / "results"
    root.mkdir()
    token_file = tmp_path / "token"
    procs: list[subprocess.Popen[str]] = []
    try:
        serve = subprocess.Popen([sys.executable, "-m", "ssdlab", "serve", "--results", str(root), "--port", "0",
                                  "--token-file", str(token_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        procs.append(serve)
        assert serve.stdout is not None
        base = serve.stdout.readline().strip().split("/login")[0]
        port = _free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(f"""\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ssdlab
    authorization:
      type: Bearer
      credentials_file: {token_file}
    static_configs:
      - targets: ["{base.split("://")[1]}"]
""", encoding="utf-8")
        check = subprocess.run(["promtool", "check", "config", str(config)], capture_output=True, text=True,
                               timeout=60, check=False)
        assert check.returncode == 0, check.stdout + check.stderr
        prom = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        procs.append(prom)
        url = f"http://127.0.0.1:{port}"
        _until("prometheus to be ready", lambda: _ready(url))
        yield {"root": root, "serve": base, "prometheus": url, "token": token_file.read_text().strip(),
               "tmp": tmp_path}
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGINT if p is procs[0] else signal.SIGTERM)
            try:
                p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()


def _ready(url: str) -> bool:
    try:
        return b"Ready" in _get(f"{url}/-/ready")
    except OSError:
        return False


def test_prometheus_scrapes_a_paced_run_and_its_series_end_with_it(stack: dict[str, Any]) -> None:
    suite = stack["tmp"] / "paced.toml"
    suite.write_text(PACED, encoding="utf-8")
    run = subprocess.Popen([sys.executable, "-m", "ssdlab", "run", str(suite), "--target", "null", "--out",
                            str(stack["root"] / "paced")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    prom = stack["prometheus"]
    try:
        # the scrape target is up, with the token (a scrape without it would be 401: up 0)
        up = _until("the scrape target up", lambda: [r for r in _query(prom, "up{job='ssdlab'}")
                                                     if r["value"][1] == "1"])
        assert up
        # rate() of the I/O counter: the paced run's reads, as Prometheus computes them from its scrapes
        expr = 'sum(rate(ssdlab_io_total{device="all",direction="read"}[5s]))'
        found = _until("a read rate near the pace", lambda: [r for r in _query(prom, expr)
                                                            if float(r["value"][1]) >= RATE / 2])
        rate = float(found[0]["value"][1])
        assert rate <= 1.5 * RATE, rate  # paced at RATE: near it, never far above
        text = _get(f"{stack['serve']}/metrics", {"Authorization": f"Bearer {stack['token']}"}).decode()
        res = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                             timeout=60, check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        info = _query(prom, "ssdlab_run_info")
        assert info
        assert info[0]["metric"]["suite"].endswith("paced.toml")
        # the latency histogram, once a point is stored: a p99 from its buckets
        p99 = 'histogram_quantile(0.99, sum by (le) (rate(ssdlab_latency_seconds_bucket{device="all"}[30s])))'
        found = _until("a p99 from the histogram", lambda: [r for r in _query(prom, p99)
                                                           if r["value"][1] not in ("NaN", "+Inf", "-Inf")])
        assert 0 < float(found[0]["value"][1]) < 1.0  # seconds: the null engine answers in far less than 1 s
    finally:
        out, err = run.communicate(timeout=300)
    assert run.returncode == 0, out + err
    # the run ended: its series end (Prometheus marks them stale at the next scrape; no flat line)
    _until("the run's series to end", lambda: not _query(prom, "ssdlab_run_info"), timeout=30)
    assert not _query(prom, "ssdlab_iops")
    assert not _query(prom, "ssdlab_io_total")
