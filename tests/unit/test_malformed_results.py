"""Malformed stored results are one line naming the file and the field, and exit 8, for every command that reads
them: a fuzz of run.json, points.jsonl and the catalog (values of the wrong kind, missing keys, truncation,
damaged bytes), run through report, export, resume, verify, compare, latency and runs."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import CliResult, CliRunner
from ssdlab.results.catalog import CATALOG_FILE
from stored_runs import SCHEMA2

BASE = SCHEMA2 / "quick-file"  # points in run.json
LOGGED = SCHEMA2 / "series-sim-killed"  # points in its points log too
STORED = 8

# fields of the result model as run.json stores them, by object: a value of another kind in any of them, or a
# missing required one, makes the document malformed
FIELDS: dict[str, tuple[str, ...]] = {
    "run": ("ssdlab_version", "run_id", "suite", "status", "created", "points", "events", "warnings", "options",
            "target", "host", "health"),
    "result": ("point", "status", "started", "finished", "measurement", "reason", "warnings", "attempt"),
    "point": ("id", "label", "workload", "phase", "group", "tags", "streams"),
    "workload": ("rw", "bs", "iodepth", "numjobs", "runtime_s", "ramp_s", "offset", "options"),
    "measurement": ("engine", "engine_version", "directions", "usr_cpu", "sys_cpu", "jobs", "runtime_ms", "errors",
                    "series", "extra"),
    "direction": ("iops", "bw_bytes", "io_bytes", "total_ios", "runtime_ms", "clat"),
    "latency": ("kind", "n", "min_ns", "max_ns", "mean_ns", "stddev_ns", "percentiles_ns", "bins"),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "run": ("ssdlab_version", "run_id", "suite", "status", "created"),
    "result": ("point", "status", "started", "finished"),
    "point": ("id", "label", "workload"),
    "workload": ("rw", "bs"),
    "measurement": ("engine", "engine_version", "directions"),
    "direction": ("iops", "bw_bytes", "io_bytes", "total_ios", "runtime_ms"),
    "latency": ("kind", "n", "min_ns", "max_ns", "mean_ns", "stddev_ns"),
}


def _objects(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(kind, JSON path, object) of the model's objects in a run document (the first point's)."""
    yield "run", "", doc
    r = doc["points"][0]
    yield "result", "points[0]", r
    yield "point", "points[0].point", r["point"]
    yield "workload", "points[0].point.workload", r["point"]["workload"]
    m = r["measurement"]
    yield "measurement", "points[0].measurement", m
    name, d = next(iter(m["directions"].items()))
    yield "direction", f"points[0].measurement.directions.{name}", d
    yield "latency", f"points[0].measurement.directions.{name}.clat", d["clat"]


def _other_kind(value: Any) -> Any:
    """A JSON value of another kind than `value`."""
    if isinstance(value, str):
        return 12345
    if isinstance(value, bool | int | float):
        return "not a number"
    return "not an object or list" if isinstance(value, dict | list) else [1, 2]


def _mutations() -> Iterator[tuple[str, str, Callable[[dict[str, Any]], None]]]:
    """(id, the field the error must name, mutation of the document in place)."""
    doc = json.loads((BASE / "run.json").read_text())
    for kind, path, obj in _objects(doc):
        for key in FIELDS[kind]:
            if key not in obj:
                continue
            field = f"{path}.{key}" if path else key
            yield f"kind-{field}", field, _setter(kind, key, _other_kind(obj[key]))
        for key in REQUIRED[kind]:
            yield f"missing-{path or 'run'}.{key}", key, _setter(kind, key, None, delete=True)
    yield "kind-options.runtime_s", "options.runtime_s", _setter("options", "runtime_s", "1 s")


def _setter(kind: str, key: str, value: Any, *, delete: bool = False) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        objs = {k: o for k, _, o in _objects(doc)}
        objs["options"] = doc["options"]
        target = objs[kind]
        if delete:
            del target[key]
        else:
            target[key] = value

    return mutate


MUTATIONS = list(_mutations())


def _commands(run: Path, root: Path) -> list[tuple[str, ...]]:
    point = "01-seq1m-q8t1-read"
    return [("report", str(run)), ("export", str(run)), ("resume", str(run)), ("verify", str(run)),
            ("compare", str(BASE), str(run)), ("latency", str(run), point), ("runs", "--results", str(root))]


def _assert_one_line(res: CliResult, command: str, *needles: str) -> None:
    assert res.code == STORED, f"{command}: exit {res.code}: {res.err}"
    assert "Traceback" not in res.err
    assert "internal error" not in res.err
    lines = [ln for ln in res.err_lines if ln.strip()]
    assert len(lines) == 1, f"{command}: {res.err}"
    for needle in needles:
        assert needle in lines[0], f"{command}: {needle!r} not in {lines[0]!r}"


@pytest.mark.parametrize(("field", "mutate"), [(f, m) for _, f, m in MUTATIONS], ids=[i for i, _, _ in MUTATIONS])
def test_a_malformed_run_json_is_one_line_and_exit_8(cli: CliRunner, tmp_path: Path, field: str,
                                                     mutate: Callable[[dict[str, Any]], None]) -> None:
    root = tmp_path / "results"
    run = Path(shutil.copytree(BASE, root / "bad"))
    doc = json.loads((run / "run.json").read_text())
    mutate(doc)
    (run / "run.json").write_text(json.dumps(doc))
    for argv in _commands(run, root):
        res = cli(*argv, traceback=False)
        _assert_one_line(res, argv[0], "run.json", field.rsplit(".", 1)[-1])


@pytest.mark.parametrize("share", [0.1, 0.5, 0.97])
def test_a_truncated_run_json_is_one_line_and_exit_8(cli: CliRunner, tmp_path: Path, share: float) -> None:
    root = tmp_path / "results"
    run = Path(shutil.copytree(BASE, root / "cut"))
    data = (run / "run.json").read_bytes()
    (run / "run.json").write_bytes(data[: int(len(data) * share)])
    for argv in _commands(run, root):
        _assert_one_line(cli(*argv, traceback=False), argv[0], "run.json")


@pytest.mark.parametrize("damage", ["kind", "missing", "middle-line"])
def test_a_malformed_points_log_is_one_line_and_exit_8(cli: CliRunner, tmp_path: Path, damage: str) -> None:
    root = tmp_path / "results"
    run = Path(shutil.copytree(LOGGED, root / "log"))
    lines = (run / "points.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    if damage == "kind":
        record["measurement"]["directions"] = ["not", "an", "object"]
        lines[0] = json.dumps(record)
    elif damage == "missing":
        del record["point"]["workload"]
        lines[0] = json.dumps(record)
    else:
        lines[0] = lines[0][: len(lines[0]) // 2]  # damaged, and a complete record follows it
    (run / "points.jsonl").write_text("\n".join(lines) + "\n")
    for argv in _commands(run, root):
        if argv[0] in ("compare", "latency"):
            argv = tuple(a if a != str(BASE) else str(LOGGED) for a in argv)[:3]
        _assert_one_line(cli(*argv, traceback=False), argv[0], "points.jsonl")


def test_a_torn_last_record_is_ignored_not_an_error(cli: CliRunner, tmp_path: Path) -> None:
    run = Path(shutil.copytree(LOGGED, tmp_path / "torn"))
    with (run / "points.jsonl").open("a") as fh:
        fh.write('{"point": {"id": "half')  # the machine died while writing it: the run keeps what is complete
    assert cli("export", run).code == 0


@pytest.mark.parametrize("damage", ["garbage", "truncated", "bad-row"])
def test_a_damaged_catalog_is_one_line_and_exit_8(cli: CliRunner, tmp_path: Path, damage: str) -> None:
    root = tmp_path / "results"
    shutil.copytree(BASE, root / "a")
    assert cli("runs", "--results", root).code == 0
    cat = root / CATALOG_FILE
    if damage == "garbage":
        cat.write_bytes(b"this is not a database\n" * 100)
    elif damage == "truncated":
        cat.write_bytes(cat.read_bytes()[:1500])
    else:
        with sqlite3.connect(cat) as conn:
            conn.execute("UPDATE runs SET capacity = 'lots'")
    # runs lists the catalog; tag resolves its RUN (a catalog id or label) through it
    for argv in (("runs", "--results", str(root)), ("tag", "no-such-label", "x=y", "--results", str(root))):
        _assert_one_line(cli(*argv, traceback=False), argv[0], str(cat))


def test_one_malformed_run_under_a_root_is_named_and_the_others_listed(cli: CliRunner, tmp_path: Path) -> None:
    root = tmp_path / "results"
    shutil.copytree(BASE, root / "good")
    bad = Path(shutil.copytree(BASE, root / "bad"))
    doc = json.loads((bad / "run.json").read_text())
    doc["points"] = "x"
    (bad / "run.json").write_text(json.dumps(doc))
    res = cli("runs", "--results", root, traceback=False)
    assert res.code == STORED
    assert len(res.out.splitlines()) == 2  # the header and the readable run
    assert res.err_lines == [f"ssdlab: skipped unreadable run: {bad / 'run.json'}: points: expected a list, found "
                             "the text 'x': the file was changed or damaged after ssdlab wrote it; restore it from "
                             "a copy, or run the test again"]
