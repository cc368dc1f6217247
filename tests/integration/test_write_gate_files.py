"""Issue 10's attacks that need no device: suite-file options that would redirect fio or run commands, and
existing regular files that ssdlab did not create (consent, reuse of its own scratch files, resume)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from test_write_gate_loop import one_error, suite_file

from conftest import MiB, run_cli
from ssdlab.errors import ExitCode

pytestmark = [pytest.mark.integration]


@pytest.mark.parametrize("key", ["exec_prerun", "exec_postrun"])
def test_options_exec_never_runs_a_command(tmp_path: Path, key: str) -> None:
    marker = tmp_path / "ran"
    path = suite_file(tmp_path, f'options = {{ {key} = "touch {marker}" }}\n')
    res = run_cli("run", path, "--target", "null", "--out", tmp_path / "out", traceback=False)
    one_error(res, ExitCode.USAGE, str(path), f"fio option {key} in matrix 1 is not allowed")
    assert not marker.exists()
    res = run_cli("plan", path, "--target", "null", traceback=False)
    one_error(res, ExitCode.USAGE, f"fio option {key}")


@pytest.mark.parametrize(("key", "value"), [("rw", "randwrite"), ("size", "1TiB"), ("offset", "1GiB"),
                                            ("ioengine", "sg"), ("directory", "/"), ("write_bw_log", "/tmp/x")])
def test_options_that_change_what_or_where_are_refused(tmp_path: Path, key: str, value: str) -> None:
    path = suite_file(tmp_path, f'options = {{ {key} = "{value}" }}\n')
    res = run_cli("run", path, "--target", "null", "--out", tmp_path / "out", traceback=False)
    one_error(res, ExitCode.USAGE, str(path), f"fio option {key} in matrix 1 is not allowed")
    assert not (tmp_path / "out").exists()


# --- 5. an existing regular file that ssdlab did not create ---------------------------------------------

def test_an_existing_file_needs_consent_even_quiet(tmp_path: Path) -> None:
    data = tmp_path / "precious.dat"
    data.write_bytes(random.Random(8).randbytes(8 * MiB))  # fixed: random bytes may carry a signature
    before = data.read_bytes()
    writer = suite_file(tmp_path, name="writer.toml")
    out = tmp_path / "out"
    res = run_cli("run", writer, "--axis", "rw=randwrite", "--target", f"file:{data}", "--quiet", "--out", out,
                  traceback=False)
    one_error(res, ExitCode.UNSAFE, f"writing to {data} needs confirmation")
    assert f"WARNING: this run will destroy the contents of the existing file {data}" in res.err
    assert "not created by ssdlab" in res.err
    assert not out.exists()
    assert data.read_bytes() == before
    plan = run_cli("plan", writer, "--axis", "rw=randwrite", "--target", f"file:{data}")
    assert plan.code == 0
    assert f"will overwrite: the contents of the existing file {data}" in plan.out
    assert "consent: `run` asks to type the name back, or takes --yes" in plan.out
    res = run_cli("run", writer, "--axis", "rw=randwrite", "--target", f"file:{data}", "--yes", "--quiet",
                  "--out", out, "--no-report")
    assert res.code == 0, res.err
    assert data.read_bytes() != before  # consented: written


def test_ssdlabs_own_scratch_file_is_reused_without_consent(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch.dat"
    writer = suite_file(tmp_path, name="writer.toml")
    for n in (1, 2):
        res = run_cli("run", writer, "--axis", "rw=randwrite", "--target", f"file:{scratch}?size=8MiB",
                      "--quiet", "--out", tmp_path / f"out{n}", "--no-report", traceback=False)
        assert res.code == 0, res.err
        assert "WARNING" not in res.err
    info = json.loads(run_cli("info", f"file:{scratch}", "--json").out)
    assert info["created_by_ssdlab"] is True


def test_resume_asks_for_consent_again(tmp_path: Path) -> None:
    data = tmp_path / "precious.dat"
    data.write_bytes(random.Random(8).randbytes(8 * MiB))  # fixed: random bytes may carry a signature
    out = tmp_path / "out"
    path = suite_file(tmp_path, 'iodepth = [1, 2]\n', name="writer.toml")
    res = run_cli("run", path, "--axis", "rw=randwrite", "--target", f"file:{data}", "--yes", "--quiet",
                  "--out", out, "--no-report")
    assert res.code == 0, res.err
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))  # as if killed after the first point
    run["points"] = run["points"][:1]
    run["status"] = "interrupted"
    (out / "run.json").write_text(json.dumps(run), encoding="utf-8")
    before = data.read_bytes()
    res = run_cli("resume", out, "--quiet", "--no-report", traceback=False)
    one_error(res, ExitCode.UNSAFE, f"writing to {data} needs confirmation")
    assert data.read_bytes() == before
    res = run_cli("resume", out, "--yes", "--quiet", "--no-report")
    assert res.code == 0, res.err


