"""A stored run is input like any other (issue 31): `resume` sets a hand-edited run.json up through the command
line's checks and refuses, with one line naming the field and exit 8, an engine the command line refuses, a
suite that is not the one the run recorded, a suite file changed since the run started, and options out of
range; nothing runs and nothing is written. An unedited run resumes as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import WRITE_THEN_READ, run_cli
from ssdlab.errors import ExitCode

pytestmark = [pytest.mark.integration]



@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(run directory, suite file, file target) of a finished run made resumable again: its last point dropped
    and its status set to interrupted, as a killed run leaves it."""
    suite = tmp_path / "writer.toml"
    suite.write_text(WRITE_THEN_READ, encoding="utf-8")
    target = tmp_path / "t.dat"
    out = tmp_path / "run"
    res = run_cli("run", suite, "--target", f"file:{target}?size=8MiB", "--out", out, "--quiet", "--no-report")
    assert res.code == 0, res.err
    doc = _read(out)
    doc["status"] = "interrupted"
    doc["points"] = doc["points"][:1]
    _write(out, doc)
    return out, suite, target


def _read(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return doc


def _write(out: Path, doc: dict[str, Any]) -> None:
    (out / "run.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")


def _edited(out: Path, **options: Any) -> str:
    doc = _read(out)
    doc["options"].update(options)
    _write(out, doc)
    return (out / "run.json").read_text(encoding="utf-8")


def _refused(out: Path, field: str, *fragments: str) -> None:
    before = (out / "run.json").read_text(encoding="utf-8")
    points = sorted(p.name for p in (out / "points").iterdir())
    res = run_cli("resume", out, "--yes", "--no-report", "--quiet", traceback=False)
    assert res.code == ExitCode.STORED, res.err
    assert len(res.err_lines) == 1, res.err
    line = res.err_lines[0]
    assert line.startswith(f"ssdlab: error: {out / 'run.json'}: {field}: "), line
    assert line.endswith("the file was changed or damaged after ssdlab wrote it; restore it from a copy, or run the "
                         "test again"), line
    for fragment in fragments:
        assert fragment in line, line
    assert (out / "run.json").read_text(encoding="utf-8") == before  # nothing recorded
    assert sorted(p.name for p in (out / "points").iterdir()) == points  # nothing ran


def test_an_engine_the_command_line_refuses_never_reaches_fio(stored: tuple[Path, Path, Path]) -> None:
    out, _, _ = stored
    _edited(out, ioengine="exec")
    _refused(out, "options.ioengine", "'exec' is not an engine ssdlab runs (libaio, io_uring, psync, sync, posixaio)")


def test_a_swapped_suite_is_refused(stored: tuple[Path, Path, Path]) -> None:
    out, _, _ = stored
    _edited(out, suite="quick")
    _refused(out, "options.suite", "'quick' is suite 'quick', but the run recorded suite")


def test_a_suite_file_changed_since_the_run_started_is_refused(stored: tuple[Path, Path, Path]) -> None:
    out, suite, _ = stored
    assert len(_read(out)["options"]["suite_digest"]) == 64
    suite.write_text(WRITE_THEN_READ.replace('"randread"', '"randwrite"'), encoding="utf-8")
    _refused(out, "options.suite_digest", f"the suite file {suite} is not the one the run started with")


@pytest.mark.parametrize(("field", "value", "fragment"), [
    ("runtime_s", -5, "--runtime"), ("on_error", "explode", "'explode' is not stop or continue"),
    ("capacity", -1, "-1 is not a size in bytes"), ("size", 0, "0 is not a size in bytes"),
    ("capacity", "lots", "expected a whole number, found the text 'lots'"),
])
def test_options_out_of_range_are_refused(stored: tuple[Path, Path, Path], field: str, value: Any,
                                          fragment: str) -> None:
    out, _, _ = stored
    _edited(out, **{field: value})
    _refused(out, "options" if field == "runtime_s" else f"options.{field}", fragment)


def test_unknown_or_mistyped_suite_options_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = run_cli("run", "pts-iops", "--target", "sim:tlc-4k", "--runtime", "0.1", "--max-rounds", "5", "--out", out,
                  "--quiet", "--no-report")
    assert res.code in (0, 1), res.err
    doc = _read(out)
    doc["status"] = "interrupted"
    good = dict(doc["options"]["suite_options"])
    for options, fragment in (({**good, "colour": "red"}, "--colour does not apply to suite pts-iops"),
                              ({**good, "max_rounds": "many"},
                               "max_rounds: 'many' is not a valid value of --max-rounds (int)")):
        doc["options"]["suite_options"] = options
        _write(out, doc)
        _refused(out, "options.suite_options", fragment)


def test_an_unedited_stored_run_resumes(stored: tuple[Path, Path, Path]) -> None:
    out, _, _ = stored
    res = run_cli("resume", out, "--yes", "--no-report", "--quiet")
    assert res.code == 0, res.err
    assert _read(out)["status"] == "complete"
    assert len(_read(out)["points"]) == 2
