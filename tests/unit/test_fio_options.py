"""The suite-file allow-list, checked against the option names the installed fio (3.33) really knows, and the
write detection of finished job files."""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

import pytest

from conftest import fio_available, fio_path
from ssdlab.errors import ExitCode, UsageError
from ssdlab.fio.job import FioJob, FioSection, OptionValue, build_job
from ssdlab.fio.options import PATH_OR_COMMAND_OPTIONS, SUITE_FILE_OPTIONS, section_writes, suite_option_refusal
from ssdlab.results.model import TestPoint, Workload
from ssdlab.suites.toml_suite import load_file

# Every fio 3.33 job option that names a file, directory or device, runs a command, picks the engine, or
# writes a file of its own (logs, iologs, verify state), plus the command-line trigger options and the
# engine-specific path/command options (exec, e4defrag, net): none may come from a suite file.
NAMES_A_PATH_OR_RUNS_A_COMMAND = (
    "filename", "directory", "filename_format", "unique_filename", "opendir", "lockfile", "nrfiles", "openfiles",
    "ioengine", "exec_prerun", "exec_postrun", "write_iolog", "read_iolog", "read_iolog_chunked",
    "replay_redirect", "merge_blktrace_file", "write_bw_log", "write_lat_log", "write_iops_log",
    "write_hist_log", "log_avg_msec", "log_hist_msec", "per_job_logs", "log_compression",
    "log_store_compressed", "verify_state_load", "verify_state_save", "verify", "do_verify", "verify_only",
    "verify_pattern", "buffer_pattern", "trim_percentage", "cgroup", "cgroup_weight", "cgroup_nodelete",
    "uid", "gid", "ioscheduler", "unlink", "unlink_each_loop", "create_serialize", "create_fsync",
    "create_on_open", "create_only", "allow_file_create", "allow_mounted_write", "fallocate", "file_append",
    "pre_read", "invalidate", "size", "filesize", "io_size", "offset", "offset_increment", "fill_device",
    "zonemode", "zone_reset_threshold", "rw", "readwrite", "direct", "buffered", "profile", "mem",
    "hugepage-size", "exitall", "stonewall", "wait_for", "new_group", "group_reporting", "thread",
    "percentile_list", "unified_rw_reporting", "kb_base", "unit_base",
    # engine options: exec (program, arguments, std_redirect), e4defrag (donorname), net
    "program", "arguments", "std_redirect", "donorname", "hostname", "port", "interface",
)
# fio command-line options, not job options: listed so a suite file can never carry them either
COMMAND_LINE_ONLY = ("trigger", "trigger-file", "trigger-timeout", "trigger-remote")


def _fio(*args: str) -> str:
    exe = fio_path()
    assert exe is not None
    res = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60, check=False)
    return res.stdout + res.stderr


@functools.cache
def fio_options() -> dict[str, str]:
    """Every job option fio knows, with its help line: `--cmdhelp=all` plus each engine's `--enghelp`."""
    out: dict[str, str] = {}
    line = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*:\s*(.*)$")
    texts = [_fio("--cmdhelp=all")]
    engines = [ln.strip() for ln in _fio("--enghelp").splitlines()[1:] if ln.startswith("\t")]
    texts += [_fio(f"--enghelp={e}") for e in engines]
    for text in texts:
        for ln in text.splitlines():
            m = line.match(ln)
            if m and "has no options" not in ln and "not loadable" not in ln and "not found" not in ln:
                out.setdefault(m.group(1), m.group(2))
    return out


def fio_knows(name: str) -> bool:
    """Whether fio accepts `name` as an option (a canonical name, an alias, or an engine option)."""
    if name in fio_options():
        return True
    return "No such command" not in _fio(f"--cmdhelp={name}")


def suite_file(tmp_path: Path, key: str, where: str = "matrix") -> Path:
    """A suite file whose `where` (matrix or phase) sets options = { key = "x" }."""
    path = tmp_path / "evil.toml"
    body = {"matrix": f'[[matrix]]\nrw = "randread"\nbs = "4k"\noptions = {{ "{key}" = "/tmp/x" }}\n',
            "phase": f'[[phase]]\nrw = "read"\nbs = "4k"\nruntime_s = 1\noptions = {{ "{key}" = "/tmp/x" }}\n'
                     '[[matrix]]\nrw = "randread"\nbs = "4k"\n'}[where]
    path.write_text('name = "evil"\n' + body, encoding="utf-8")
    return path


@fio_available
def test_the_path_and_command_list_uses_names_fio_knows() -> None:
    unknown = [n for n in NAMES_A_PATH_OR_RUNS_A_COMMAND if not fio_knows(n)]
    assert unknown == []
    assert len(fio_options()) > 250  # the whole list was read, not an error message


@fio_available
def test_every_allowed_option_is_a_real_fio_option() -> None:
    assert [n for n in SUITE_FILE_OPTIONS if not fio_knows(n)] == []


@pytest.mark.parametrize("where", ["matrix", "phase"])
@pytest.mark.parametrize("key", NAMES_A_PATH_OR_RUNS_A_COMMAND + COMMAND_LINE_ONLY)
def test_every_path_or_command_option_is_refused_with_one_line(tmp_path: Path, key: str, where: str) -> None:
    path = suite_file(tmp_path, key, where)
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", key):
        with pytest.raises(UsageError, match="bad fio option name"):
            load_file(path)
        return
    with pytest.raises(UsageError) as err:
        load_file(path)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: fio option {key} in {where} 1 is not allowed")
    assert err.value.exit_code == ExitCode.USAGE


@fio_available
def test_every_fio_option_outside_the_allow_list_is_refused() -> None:
    names = set(fio_options())
    refused = {n for n in names if suite_option_refusal(n)}
    assert names - refused == set(SUITE_FILE_OPTIONS) & names
    assert not set(SUITE_FILE_OPTIONS) & PATH_OR_COMMAND_OPTIONS


# allowed options whose fio help line mentions files or devices, and why that is harmless
_HELP_MENTIONS_FILES = {
    "dedupe_working_set_percentage": "a percentage of the file or device size, not a path",
    "fsync_on_close": "an fsync of the target's own file",
}


@fio_available
def test_no_allowed_option_is_described_as_taking_a_path_or_command() -> None:
    words = re.compile(r"\b(file|files|filename|directory|path|execute|program|command|log|device|cgroup|user id|"
                       r"group id|scheduler|engine)\b", re.IGNORECASE)
    suspicious = {n for n in SUITE_FILE_OPTIONS if n in fio_options() and words.search(fio_options()[n])}
    assert suspicious == set(_HELP_MENTIONS_FILES)


def test_workload_options_pass(tmp_path: Path) -> None:
    path = tmp_path / "ok.toml"
    path.write_text('name = "ok"\n[[matrix]]\nrw = "randrw"\nbs = "4k"\nrwmixread = 70\n'
                    'options = { percentage_random = 80, dedupe_percentage = "30", refill_buffers = true }\n',
                    encoding="utf-8")
    suite = load_file(path)
    assert suite.matrices[0].fixed["options"] == {"percentage_random": "80", "dedupe_percentage": "30",
                                                  "refill_buffers": "true"}


# ------------------------------------------------------------------ what a job does

@pytest.mark.parametrize(("opts", "writes"), [
    ({"rw": "read"}, ""),
    ({"rw": "randread"}, ""),
    ({}, ""),  # fio's default is a sequential read
    ({"rw": "randread:8"}, ""),
    ({"rw": "write"}, "rw=write writes"),
    ({"rw": "randwrite"}, "rw=randwrite writes"),
    ({"readwrite": "randwrite"}, "rw=randwrite writes"),
    ({"rw": "RandWrite"}, "rw=randwrite writes"),
    ({"rw": "trim"}, "rw=trim trims"),
    ({"rw": "randtrim"}, "rw=randtrim trims"),
    ({"rw": "trimwrite"}, "rw=trimwrite writes"),
    ({"rw": "randrw"}, "rw=randrw writes"),
    ({"rw": "randrw", "rwmixread": 70}, "rw=randrw writes"),
    ({"rw": "randrw", "rwmixread": 100}, ""),
    ({"rw": "randrw", "rwmixread": 100, "rwmixwrite": 10}, "rw=randrw writes"),
    ({"rw": "rw", "rwmixread": "100"}, ""),
    ({"rw": "readwrite"}, "rw=readwrite writes"),
    ({"rw": "randread", "trim_percentage": 10}, "trim_percentage=10 trims"),
    ({"rw": "read", "unlink": 1}, "unlink=1 changes the target"),
    ({"rw": "read", "create_only": 1}, "create_only=1 changes the target"),
    ({"rw": "read", "ioengine": "filedelete"}, "ioengine=filedelete is not a plain read engine"),
    ({"rw": "read", "ioengine": "null"}, ""),
    ({"rw": "read", "ioengine": "psync"}, ""),
    ({"rw": "readmaybe"}, "rw=readmaybe is not a known read mode"),
])
def test_section_writes(opts: dict[str, object], writes: str) -> None:
    assert section_writes(opts) == writes


def test_a_job_names_the_section_that_writes_when_it_has_several() -> None:
    job = FioJob(jobs=(FioSection("reads-d0", {"rw": "randread"}), FioSection("writes-d0", {"rw": "randwrite"})))
    assert job.writes() == ["[writes-d0] rw=randwrite writes"]
    assert FioJob(jobs=(FioSection("a", {"rw": "write"}),)).writes() == ["rw=write writes"]
    assert FioJob(jobs=(FioSection("a", {"rw": "read"}),), global_options={"rw": "write"}).writes() == []


TARGET: dict[str, OptionValue] = {"filename": "/dev/loop7", "ioengine": "libaio", "direct": 1, "size": 1 << 30}


def _section(workload: Workload, target: dict[str, OptionValue] = TARGET) -> dict[str, OptionValue]:
    return dict(build_job(TestPoint(id="p", label="p", workload=workload), target).jobs[0].options)


def test_the_target_wins_over_workload_options() -> None:
    sneaky = Workload(rw="randread", bs=4096, options={"filename": "/dev/sda", "direct": "0", "ioengine": "sg",
                                                      "size": str(1 << 40)})
    opts = _section(sneaky)
    assert opts["filename"] == "/dev/loop7"
    assert opts["direct"] == 1
    assert opts["ioengine"] == "libaio"
    assert opts["size"] == 1 << 30
    assert list(opts)[3:7] == ["filename", "ioengine", "direct", "size"]  # after the common options, as before


def test_a_built_in_stream_may_pick_another_local_engine_but_never_leave_null() -> None:
    assert _section(Workload(rw="randread", bs=4096, options={"ioengine": "psync"}))["ioengine"] == "psync"
    null = {"ioengine": "null", "size": 1 << 30}
    assert _section(Workload(rw="randread", bs=4096, options={"ioengine": "psync"}), null)["ioengine"] == "null"


def test_a_smaller_workload_span_is_kept() -> None:
    assert _section(Workload(rw="randread", bs=4096, size=1 << 20))["size"] == 1 << 20
    assert _section(Workload(rw="randread", bs=4096, size=1 << 40))["size"] == 1 << 30


def test_docs_list_exactly_the_allow_list() -> None:
    text = (Path(__file__).parents[2] / "docs" / "suites.md").read_text(encoding="utf-8")
    table = text.split("### fio options a suite file may set", 1)[1].split("\n| option | what it shapes |", 1)[1]
    table = table.split("\n\n", 1)[0]
    listed = re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.MULTILINE)
    assert listed == list(SUITE_FILE_OPTIONS)
