"""One naming rule for runs, hosts and devices (results/naming.py), and the console and metadata fixes of the
first-hour review: CPU % on the simulator, the host-ceiling check outside the suite's count, the hint for an
unreachable agent."""

from __future__ import annotations

from ssdlab import metrics
from ssdlab.fio.client import Endpoint
from ssdlab.report.characterization import _perf_table
from ssdlab.report.export import rows
from ssdlab.results import naming
from ssdlab.results.model import DirectionStats, Measurement, PointResult, Run, TestPoint, Workload
from ssdlab.run import ceiling, orchestrate, progress

GROUP = {"kind": "multi", "name": "inv", "spec": "/lab/inv.toml", "inventory": "/lab/inv.toml",
         "hosts": [{"name": "node0"}, {"name": "node1"}]}


def _run(target: dict[str, object], points: tuple[PointResult, ...] = ()) -> Run:
    return Run(schema_version=2, ssdlab_version="t", run_id="r", suite="quick", status="complete", created="",
               options={"suite": "quick"}, target=target, host={}, points=points)


def _done(pid: str, engine: str = "fio", phase: str = "measure") -> PointResult:
    d = DirectionStats(iops=1000.0, bw_bytes=4.096e6, io_bytes=1, total_ios=1000, runtime_ms=1000)
    m = Measurement(engine=engine, engine_version="0", directions={"read": d}, usr_cpu=0.0, sys_cpu=0.0)
    p = TestPoint(id=pid, label=pid, workload=Workload(rw="randread", bs=4096, runtime_s=1.0), phase=phase)
    return PointResult(point=p, status="ok", started="", finished="", measurement=m)


def test_a_host_group_is_named_by_its_hosts_not_its_inventory_file() -> None:
    assert naming.target_name(GROUP) == "hosts node0, node1"
    assert naming.run_title("quick", GROUP) == "quick on hosts node0, node1"
    many = {**GROUP, "hosts": [{"name": f"n{i}"} for i in range(5)]}
    assert naming.target_name(many) == "hosts n0, n1, n2 +2 more"
    assert naming.target_name({"name": "/dev/nvme0n1", "spec": "/dev/nvme0n1"}) == "/dev/nvme0n1"
    assert naming.target_name({"spec": "sim:p5430"}) == "sim:p5430"
    assert naming.target_name({}) == "unknown target"
    assert naming.device_name("node0", "/dev/nvme0n1") == "node0:/dev/nvme0n1"


def test_every_place_names_a_stored_host_group_run_the_same() -> None:
    """Terminal, HTML, JUnit, CSV export and catalog all read the rule, also for runs stored before it."""
    import io
    from pathlib import Path

    from ssdlab.report import html, junit, terminal
    from ssdlab.results.catalog import entry_for

    run = _run(GROUP, (_done("01-a"),))
    assert "<title>ssdlab quick on hosts node0, node1</title>" in html.render_html(run, Path())
    assert junit.run_suite(run).name == "quick on hosts node0, node1"
    assert rows(run)[0]["target"] == "hosts node0, node1"
    out = io.StringIO()
    terminal.print_results(run, out)
    assert "quick on hosts node0, node1" in out.getvalue()
    assert entry_for(run, Path("r"), {}).target == "hosts node0, node1"


def test_cpu_is_not_measured_on_the_simulator_in_every_table() -> None:
    """sweep-qd showed CPU % '0.0' for the simulator where quick showed 'n/a'."""
    sim, fio = _done("s", engine="sim"), _done("f")
    assert metrics.value("cpu", sim) is None
    assert metrics.value("usr_cpu", sim) is None
    assert metrics.value("cpu", fio) == 0.0
    table = _perf_table([sim, fio], [])
    cpu = list(table.header).index("CPU %")
    assert [row[cpu] for row in table.rows] == ["n/a", "0.0"]


def test_the_ceiling_check_is_not_one_of_the_suites_points() -> None:
    """A multi-host run announced 8 points, counted from [2/9] and ended '9 points measured'."""
    check = ceiling.ceiling_point(_done("01-a").point)
    assert check.label == "Host ceiling: null engine, randread 4K QD1×1 per device"
    first = _done(ceiling.POINT_ID, phase=ceiling.PHASE)
    run = _run({"name": "a+b"}, (first,))
    assert orchestrate.point_index(run) == 1
    run = run.with_point(_done("01-a"))
    assert orchestrate.point_index(run) == 2
    assert progress.run_end_text(run) == "run complete: 1 measured point; host-ceiling check"


def test_the_hint_for_an_unreachable_agent_is_the_command_that_listens_there() -> None:
    assert Endpoint(address="127.0.0.1", port=8765).agent_command() == \
        "ssdlab agent --insecure-tcp --bind 127.0.0.1 --port 8765"
    assert Endpoint(address="10.0.0.2", port=9000).agent_command() == \
        "ssdlab agent --insecure-tcp --bind 10.0.0.2 --port 9000 --insecure-bind"  # not loopback: needs consent
    assert Endpoint(address="localhost").agent_command().endswith("--port 8765")
    assert Endpoint(socket="/run/ssdlab/a.sock").agent_command() == "ssdlab agent --socket /run/ssdlab/a.sock"
