"""The results catalog: built from the run directories, kept in step when runs are added, moved, deleted and
tagged, rebuilt without losing tags; catalog ids in compare/report/export."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from ssdlab.results import catalog
from stored_runs import SCHEMA2, copy_run


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "results"
    r.mkdir()
    copy_run("pts-iops-op7", r / "op7", run_id="op7")
    copy_run("pts-iops-op28", r / "op28", run_id="op28")
    copy_run("quick-file", r / "lab" / "quick", run_id="quick")
    return r


def _runs(root: Path, *args: str) -> list[dict[str, object]]:
    res = run_cli("runs", "--results", root, "--json", *args)
    assert res.code == 0, res.err
    data: list[dict[str, object]] = json.loads(res.out)
    return data


def test_lists_runs_and_filters(root: Path) -> None:
    runs = _runs(root)
    assert [r["run_id"] for r in runs] == ["op7", "op28", "quick"]  # oldest first
    assert (root / catalog.CATALOG_FILE).is_file()
    assert [r["run_id"] for r in _runs(root, "--suite", "pts-*")] == ["op7", "op28"]
    assert [r["run_id"] for r in _runs(root, "--model", "TLC-4K-28")] == ["op28"]
    assert [r["run_id"] for r in _runs(root, "--device", "quick.dat")] == ["quick"]
    assert [r["run_id"] for r in _runs(root, "--verdict", "not-steady")] == ["op7", "op28"]
    assert [r["run_id"] for r in _runs(root, "--verdict", "complete")] == ["quick"]
    assert _runs(root, "--since", "2100-01-01") == []
    assert len(_runs(root, "--until", "2100-01-01")) == 3
    text = run_cli("runs", "--results", root)
    assert text.code == 0
    assert text.out.splitlines()[0].startswith("id ")
    assert len(text.out.splitlines()) == 4


def test_text_filters_take_globs_as_suite_does(root: Path) -> None:
    """`--model '*28*'` matched nothing (a glob read as a substring); a glob now matches the whole value,
    case-insensitively, and plain text stays a substring."""
    assert [r["run_id"] for r in _runs(root, "--model", "*tlc-4k-28*")] == ["op28"]
    assert [r["run_id"] for r in _runs(root, "--model", "*TLC*")] == ["op7", "op28"]
    assert _runs(root, "--model", "tlc-4k-2?") == []  # a glob matches the whole model, not a part of it
    assert [r["run_id"] for r in _runs(root, "--device", "*quick.dat")] == ["quick"]
    assert catalog.is_glob("*qlc*")
    assert catalog.is_glob("pts-?")
    assert not catalog.is_glob("qlc")


def test_tag_takes_options_between_its_arguments(root: Path) -> None:
    """`tag RUN --results DIR k=v` (then --root) failed with 'unrecognized arguments' (intermixed parsing now)."""
    res = run_cli("tag", "op28", "--results", root, "label=fw-2.1", "note=x")
    assert res.code == 0, res.err
    assert json.loads((root / "op28" / "tags.json").read_text()) == {"label": "fw-2.1", "note": "x"}
    res = run_cli("tag", "op28", "--results", root, "--remove", "note", "label=fw-2.2")
    assert res.code == 0, res.err
    assert json.loads((root / "op28" / "tags.json").read_text()) == {"label": "fw-2.2"}
    bad = run_cli("tag", "op28", "--results", root, "--bogus", "k=v", traceback=False)
    assert bad.code == 2
    assert "unrecognized arguments: --bogus" in bad.err


def test_catalog_follows_added_moved_and_deleted_runs(root: Path) -> None:
    before = {r["run_id"]: r for r in _runs(root)}
    copy_run("series-sim", root / "new", run_id="series")
    shutil.move(root / "op7", root / "archive-op7")
    shutil.rmtree(root / "lab")
    after = {r["run_id"]: r for r in _runs(root)}
    assert sorted(after) == ["op28", "op7", "series"]
    assert after["op7"]["id"] == before["op7"]["id"]  # the id belongs to the run, not its path
    assert after["op7"]["path"] == str(root / "archive-op7")
    # a rebuild from scratch gives the same index
    rebuilt = {r["run_id"]: r for r in _runs(root, "--rebuild")}
    assert rebuilt == after
    (root / catalog.CATALOG_FILE).unlink()
    assert {r["run_id"]: r for r in _runs(root)} == after


def test_tags_live_in_the_run_directory_and_survive_a_rebuild(root: Path) -> None:
    run_json = (root / "op28" / "run.json").read_bytes()
    res = run_cli("tag", root / "op28", "label=fw-2.1", "note=after the update")
    assert res.code == 0, res.err
    assert res.out.strip() == "label=fw-2.1 note=after the update"
    assert (root / "op28" / "run.json").read_bytes() == run_json  # the results are never rewritten
    assert json.loads((root / "op28" / "tags.json").read_text()) == {"label": "fw-2.1", "note": "after the update"}
    assert [r["run_id"] for r in _runs(root, "--tag", "label=fw-2.1")] == ["op28"]
    assert [r["run_id"] for r in _runs(root, "--rebuild", "--tag", "note=after the update")] == ["op28"]
    res = run_cli("tag", root / "op28", "--remove", "note")
    assert res.out.strip() == "label=fw-2.1"
    assert _runs(root, "--tag", "note=after the update") == []
    assert hashlib.sha256((root / "op28" / "run.json").read_bytes()).digest() == hashlib.sha256(run_json).digest()


def test_catalog_ids_work_in_compare_report_export_and_plot(root: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    runs = {r["run_id"]: str(r["id"]) for r in _runs(root)}
    monkeypatch.setenv(catalog.ROOT_ENV, str(root))
    res = run_cli("compare", runs["op7"][:5], runs["op28"], "--out", tmp_path / "c")
    assert res.code == 0, res.err
    assert "ssdlab compare: op7 vs op28" in (tmp_path / "c" / "compare.html").read_text(encoding="utf-8")
    res = run_cli("export", runs["quick"], "op7")  # a catalog id and a run id
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert lines[0].split(",")[-4:] == ["run_id", "run_label", "target", "model"]
    assert {ln.split(",")[-4] for ln in lines[1:]} == {"quick", "op7"}
    run_cli("tag", "op28", "label=wide-op")
    res = run_cli("report", "wide-op")  # a label
    assert res.code == 1, res.err  # the run's verdict: not steady
    assert res.out.strip() == str((root / "op28" / "report.html").resolve())
    res = run_cli("report", "nothing-like-this", traceback=False)
    assert res.code == 2
    assert "no such run directory" in res.err


def test_ambiguous_and_unreadable(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(root / "op7", root / "op7-copy")  # the same run twice: one id, two paths
    (root / "broken").mkdir()
    (root / "broken" / "run.json").write_text("{not json", encoding="utf-8")
    res = run_cli("runs", "--results", root)
    assert res.code == 8  # the others are listed; a malformed stored result still shows in the exit status
    assert "skipped unreadable run" in res.err
    assert "broken" in res.err
    monkeypatch.setenv(catalog.ROOT_ENV, str(root))
    res = run_cli("export", "op7", traceback=False)
    assert res.code == 2
    assert "ambiguous" in res.err


def test_bad_input(root: Path, tmp_path: Path) -> None:
    res = run_cli("runs", "--results", tmp_path / "none", traceback=False)
    assert res.code == 2
    assert "does not exist" in res.err
    res = run_cli("tag", root / "op7", "no-equals-sign", traceback=False)
    assert res.code == 2
    assert "KEY=VALUE" in res.err
    res = run_cli("tag", root / "op7", "--remove", "absent", traceback=False)
    assert res.code == 2
    assert "has no tag 'absent'" in res.err
    res = run_cli("runs", "--results", root, "--since", "yesterday", traceback=False)
    assert res.code == 2


def test_schema2_runs_and_their_points_log_are_indexed(root: Path) -> None:
    """A run of results schema 2 keeps its latest points in points.jsonl: the catalog counts them, and sees the
    run change when only the log grows (a run going on, or killed, as this fixture was)."""
    run = copy_run("series-sim-killed", root / "killed", run_id="killed", source=SCHEMA2)
    copy_run("pts-dirth-op28", root / "dirth", run_id="dirth", source=SCHEMA2)
    log = run / "points.jsonl"
    records = log.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(records) == 2
    assert json.loads((run / "run.json").read_text(encoding="utf-8"))["points"] == []  # all in the log
    log.write_text(records[0], encoding="utf-8")
    by_id = {r["run_id"]: r for r in _runs(root)}
    assert by_id["killed"]["points"] == 1
    assert by_id["killed"]["status"] == "running"
    assert by_id["killed"]["schema_version"] == 2
    assert by_id["dirth"]["schema_version"] == 2
    assert by_id["dirth"]["verdict"] == "steady"
    assert by_id["op7"]["schema_version"] == 1
    log.write_text("".join(records), encoding="utf-8")  # the next point arrives: run.json is unchanged
    assert {r["run_id"]: r["points"] for r in _runs(root)}["killed"] == 2
    assert [r["run_id"] for r in _runs(root, "--suite", "pts-dirth")] == ["dirth"]


def test_the_results_root_is_results_as_in_serve_and_root_still_works(root: Path) -> None:
    """`runs` took --root where `serve` takes --results: --results now everywhere, --root its deprecated alias."""
    new = run_cli("runs", "--results", root, "--json")
    old = run_cli("runs", "--root", root, "--json")
    assert new.code == old.code == 0
    assert json.loads(new.out) == json.loads(old.out)
    assert new.err == ""
    assert old.err.strip() == ("ssdlab: note: --root is now --results (as `ssdlab serve` and `ssdlab compare` "
                               "name it); --root still works, for now")
    import argparse

    from ssdlab.commands.catalog import add_commands

    sub = argparse.ArgumentParser().add_subparsers()
    add_commands(sub)
    text = sub.choices["runs"].format_help()
    assert "--results DIR" in text
    assert "--root" not in text  # hidden: one name in the help
    tagged = run_cli("tag", "op28", "--root", root, "k=v")
    assert tagged.code == 0, tagged.err
    both = run_cli("runs", "--results", root, "--root", root / "op7", traceback=False)
    assert both.code == 2
    assert "disagree" in both.err


def test_reading_an_up_to_date_catalog_writes_nothing(root: Path) -> None:
    """A run's ETA reads earlier runs from the catalog as it starts: an index of the current format is opened
    without writing its schema again (a write transaction, and its syncs, on every open)."""
    assert len(_runs(root)) == 3  # the index made and filled
    path = root / catalog.CATALOG_FILE
    before = path.read_bytes()
    assert catalog.history(root, "pts-iops", "sim")  # earlier runs found
    with catalog.Catalog(root) as cat:
        assert cat.conn.total_changes == 0
    assert path.read_bytes() == before
    assert not (root / (catalog.CATALOG_FILE + "-journal")).exists()
