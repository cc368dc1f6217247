"""Every shell example of README.md and docs/*.md, run as a reader would (after the substitutions below) in a
temporary directory against null, file or simulated targets: an example fails the test when it exits with a code
its docs do not give for it.

An example is a command line of a fenced code block marked sh/bash (or unmarked and starting with `ssdlab`,
`python`, `bash` or `.venv/bin/`), comments removed, backslash continuations joined. What cannot exist here (a
real NVMe drive, other hosts, hours of runtime) is substituted by the explicit table below; what cannot run here
at all is listed in NOT_HERE with the reason. Both tables must stay in use (test_tables_are_current), so a
changed example is looked at again. Runs that later examples read (results/op7, a run for `results/<run>` ...)
are made once per module by the examples that make them in the docs, or by PREPARED commands where no example
does.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import CliResult, run_cli

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SHELL = ("sh", "bash", "shell", "console")
STARTS = ("ssdlab ", "python ", "bash ", ".venv/bin/")  # a command in an unmarked block

# ---------------------------------------------------------------------------------------------- what cannot run here

# example (as written, comment removed) -> why it cannot run in this test
NOT_HERE: dict[str, str] = {
    "bash scripts/demo.sh": "the main job: a minute of CPU and an apt install; benchmarks/pts_demo.py times it, and "
                            "README's what-if runs below run the same suite on the simulator",
    "bash scripts/test.sh": "the full test suite, which runs this test",
    "bash scripts/test.sh --vm": "the VM tier: boots a QEMU guest with emulated NVMe and SATA devices for minutes "
                                 "(.ci/run runs it)",
    "ssdlab agent": "serves until stopped, on a root-only socket under /run (tests/integration/test_agent_ssh.py)",
    "mkdir -m 700 -p ~/.ssdlab": "sets up SSH forwarding to other hosts (writes to the home directory)",
    "ssh -N -L ~/.ssdlab/node-a.sock:/run/ssdlab/agent.sock root@node-a &": "needs the host node-a",
    "ssh -N -L ~/.ssdlab/node-b.sock:/run/ssdlab/agent.sock root@node-b &": "needs the host node-b",
    "ssh -N -L /root/.ssdlab/node-a.sock:/run/ssdlab/agent.sock root@node-a": "needs the host node-a",
    "for h in node-a node-b node-c; do ssh -f -N -L ~/.ssdlab/$h.sock:/run/ssdlab/agent.sock $h; done":
        "needs the hosts node-a, node-b, node-c",
    "ssdlab run quick-read --target /dev/nvme0n1 --write-cache off --power-state 0 --yes":
        "sets an NVMe drive's volatile write cache and power state: needs a real NVMe drive and root "
        "(tests/unit/test_devsettings.py)",
    "ssdlab serve --results results": "serves until interrupted (tests/integration/test_serve_browser.py)",
    ".venv/bin/python benchmarks/scale_clients.py --sizes 1,2,4,8,16,32 --repeats 3": "a benchmark: minutes",
    ".venv/bin/python benchmarks/serve_overhead.py --repeats 5": "a benchmark: minutes",
    ".venv/bin/python benchmarks/serve_overhead.py --repeats 3 --browser": "a benchmark: minutes",
    ".venv/bin/python benchmarks/memory.py": "a benchmark: minutes",
    ".venv/bin/python benchmarks/memory.py --points '' --devices 32 --device-points 96": "a benchmark: minutes",
    ".venv/bin/python benchmarks/memory.py --points '' --devices 128 --runtime 0.5": "a benchmark: minutes",
    ".venv/bin/python benchmarks/memory.py --points '' --devices '' --pts": "a benchmark: minutes",
    ".venv/bin/python benchmarks/memory.py --points '' --devices '' --files 1,24": "a benchmark: minutes",
    "ssdlab hist-log h_clat_hist.*.log [--interval S] [--percentiles 50,90,99,99.9,99.99] "
    "[--mode fio|weighted] [--directions all|read|write|trim|split] [--log-ms MS]": "a synopsis, not a command",
    "ssdlab plot DIR [DIR...] --x AXIS --y METRIC [--series AXIS] [--where AXIS=V,...] [--out FILE.svg|.png] "
    "[--logx] [--logy] [--phase all]": "a synopsis, not a command",
}

# ------------------------------------------------------------------------------------------------- substitutions

# Literal replacements, applied in this order to every example. {cwd} is the example's own temporary directory.
SUBSTITUTIONS: tuple[tuple[str, str], ...] = (
    # a drive's span: what a 32 MiB stand-in file holds
    ("--footprint 64GiB", "--footprint 16MiB"),
    # files the docs put under /mnt and /tmp: in the example's directory, small
    ("file:/mnt/ssd/test.dat?size=4GiB", "file:{cwd}/test.dat?size=64MiB"),
    ("file:/mnt/t.dat?size=8GiB", "file:{cwd}/t.dat?size=64MiB"),
    ("file:/tmp/x?size=256MiB", "file:{cwd}/x?size=64MiB"),
    ("file:/tmp/p.dat?size=256MiB", "file:{cwd}/p.dat?size=64MiB"),
    # long runtimes (hours, minutes, seconds per point) as short ones
    ("--runtime 3600", "--runtime 0.5"),
    ("--runtime 10", "--runtime 0.5"),
    ("--runtime 5", "--runtime 0.1"),
    ("--runtime 2", "--runtime 0.2"),
    ("--runtime 1 ", "--runtime 0.1 "),
    ("--runtime 0.5 ", "--runtime 0.1 "),
    ("--duration 6h", "--duration 2 --slice 2"),
    ("--duration 6 ", "--duration 2 "),
    # the simulated drives of README's what-if: smaller, so a PTS round is short
    ("sim:tlc-4k    ", "sim:tlc-4k?capacity=256MiB "),
    ("sim:tlc-4k-28 ", "sim:tlc-4k-28?capacity=256MiB "),
    # placeholders for runs: the run each command needs (see PREPARED and the runs the examples make)
    ("ssdlab verify results/<run>", "ssdlab verify {integrity}"),
    ("ssdlab plot results/<run>", "ssdlab plot {sweep-qd}"),
    ("ssdlab plot RESULTS_DIR", "ssdlab plot {sweep-qd}"),
    ("ssdlab latency results/<run> <point-id>", "ssdlab latency {quick} {quick-point}"),
    ("ssdlab resume results/<run>", "ssdlab resume {stopped}"),
    ("ssdlab resume results/…", "ssdlab resume {stopped}"),
    ("results/<run> [<run> ...]", "{quick} {op7}"),
    ("results/<run>", "{quick}"),
    ("results/<base> results/<new>", "{op7} {op28}"),
    ("<base> <new>", "{op7} {op28}"),
    ("BASE NEW1 NEW2", "{op7} {op28} {op28b}"),
    ("BASE NEW", "{op7} {op28}"),
    ("results/op7", "{op7}"),
    ("results/op28", "{op28}"),
    ("results/replay-a", "{replay-a}"),
    ("results/replay-b", "{replay-b}"),
    ("results/replay-op7", "{replay-op7}"),
    ("results/replay-op28", "{replay-op28}"),
    ("3fa9c1d2", "{op28-id}"),
    # files named by the docs: made by the test (ACT's config for the stand-in file, the ACT run's histogram logs)
    ("h_clat_hist.*.log", "hist_service_clat_hist.*.log"),
    ("job_clat_hist.*.log", "hist_service_clat_hist.*.log"),
    ("ssdlab.commands.histlog ...", "ssdlab.commands.histlog hist_service_clat_hist.1.log"),
    ("[NAME]", "p5430"),
    ("[--preset NAME]", "--preset p5316 --no-shapes -q"),
)
# Whole commands that stand for another here.
WHOLE: dict[str, str] = {
    # every preset: minutes of CPU; one preset's figures (the cheapest)
    "ssdlab sim validate": "ssdlab sim validate --preset p5316 --no-shapes -q",
}

# Drives: the simulator, except where the suite needs fio's own features (ACT's paced streams, integrity's verify)
# or several devices at once (fio targets only): there a 64 MiB file per device.
DEVICES = ("/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1", "/dev/loop3", "/dev/loop4")
SIM_DRIVE = "sim:tlc-4k?capacity=256MiB"
FIO_SUITES = ("act", "integrity", "replay")

# Commands that would take minutes to run here even scaled down: `plan` checks the same options, target and plan
# (every point rendered, the write gate decided) without running the points.
AS_PLAN: dict[str, str] = {
    "ssdlab run  act --target /dev/nvme0n1 --load 30x": "ACT on the stand-in file: a slice per load",
    "ssdlab run  act --target /dev/nvme0n1 --read-reqs-per-sec 50000 --write-reqs-per-sec 5000":
        "50,000 reads/s on a file: a plan, ACT runs for real in docs/act.md:17",
    "ssdlab run  act --target /dev/nvme0n1 --target /dev/nvme1n1 --load 30x": "two stand-in files at 30x",
    "ssdlab run  act --target /dev/nvme0n1 --load 10x --find-max --max-load 100x --duration 6h":
        "--find-max runs one ACT test per load it tries",
    "ssdlab run pts-iops --target /dev/loop3 --target /dev/loop4 --yes":
        "PTS rounds of 56 fio points on two files: minutes (pts-iops runs on the simulator in README.md)",
    "ssdlab run  pts-iops --target file:/tmp/p.dat?size=256MiB --runtime 1 --max-rounds 5":
        "five rounds of 56 fio points: minutes, as its comment says",
    "ssdlab run my-suite.toml --target file:/mnt/t.dat?size=8GiB": "48 fio points and two phases",
    "ssdlab run pts-iops --hosts lab.toml --yes": "PTS rounds of 56 points on three devices of two agents",
    "ssdlab run quick --hosts lab.toml --yes": "8 points on three devices of two agents: 20 s on a busy host "
                                               "(tests/integration/test_hostgroup_fio.py runs host groups)",
}

# docs/hosts.md's lab.toml: its two hosts are two local agents (on sockets in the lab, started and stopped by the
# test; SSH's part is test_agent_ssh.py's), its devices 64 MiB files.
LAB_TOML: tuple[tuple[str, str], ...] = (
    ("/root/.ssdlab/node-a.sock", "{agent-a}"),
    ("/root/.ssdlab/node-b.sock", "{agent-b}"),
    ("/dev/nvme0n1", "file:{cwd}/a-nvme0n1.dat?size=64MiB"),
    ("/dev/nvme1n1", "file:{cwd}/a-nvme1n1.dat?size=64MiB"),
    ("/dev/disk/by-id/nvme-SAMSUNG_MZQL23T8HCLS-00A07_S64HNE0T123456", "file:{cwd}/b-nvme0n1.dat?size=64MiB"),
)

# Runs the examples read, made once per module where no example makes them (the run `resume` continues is a copy
# of `quick` with its last points taken out, as a Ctrl-C leaves it: _stopped).
PREPARED: dict[str, tuple[str, ...]] = {
    "sweep-qd": ("run", "sweep-qd", "--target", "sim", "--runtime", "0.1", "--axis", "numjobs=1,2",
                 "--axis", "iodepth=1,4", "--out", "results/sweep-qd", "--quiet", "--no-report"),
    "quick": ("run", "quick", "--target", "sim", "--runtime", "0.1", "--out", "results/quick", "--quiet",
              "--no-report"),
}
# examples whose runs later examples read: name -> the example (the run is found by its `results:` line)
MAKERS: dict[str, str] = {
    "op7": "ssdlab run pts-iops --target sim:tlc-4k    --runtime 0.5 --out results/op7",
    "op28": "ssdlab run pts-iops --target sim:tlc-4k-28 --runtime 0.5 --out results/op28",
    "integrity": "ssdlab run integrity --target /dev/nvme0n1 --footprint 64GiB --yes",
    "act": "ssdlab run  act --target file:/tmp/x?size=256MiB --load 1x --duration 6 --slice 2",
    **{f"replay-{k}": f"ssdlab run replay --trace my-trace.csv --volume prxy_0 --map scale --target {t} "
                      f"--out results/replay-{k}" for k, t in (("op7", "sim:tlc-4k"), ("op28", "sim:tlc-4k-28"))},
    **{f"replay-{k}": f"ssdlab run replay --trace my-trace.csv --volume prxy_0 --map scale --target {t} --yes "
                      f"--out results/replay-{k}" for k, t in (("a", "/dev/nvme2n1"), ("b", "/dev/nvme3n1"))},
}

# Exit codes the docs give besides 0, and where they say so: by suite (its prefix) and by option.
SUITE_CODES: dict[str, tuple[int, str]] = {
    "act": (1, "README exit codes: a failed certification exits 1"),
    "pts": (1, "README exit codes: a PTS test not steady exits 1"),
}
COMMAND_CODES: dict[str, tuple[int, str]] = {
    "sim validate": (1, "README exit codes: a sim validate line, evidence row or shape rule failed"),
}
OPTION_CODES: dict[str, tuple[int, str]] = {
    "--fail-on": (1, "README: exit 1 on a significant regression"),
    "--on-error continue": (6, "README: a run that went on past failed points exits 6"),
}

# ------------------------------------------------------------------------------------------------------ examples


@dataclass(frozen=True)
class Example:
    """One command of the docs: where it is (file:line) and its text (comment removed)."""

    where: str
    text: str


def _command(line: str) -> str:
    """The line without its trailing comment (a # outside quotes, after a blank)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] == " "):
            return line[:i].rstrip()
    return line.rstrip()


def _block_examples(doc: Path, lang: str, body: str, first: int) -> Iterator[Example]:
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line, at = lines[i], i
        i += 1
        if not lang and not line.startswith(STARTS):
            continue
        while line.rstrip().endswith("\\") and i < len(lines):
            line = line.rstrip()[:-1].rstrip() + " " + lines[i].strip()
            i += 1
        while not lang and i < len(lines) and lines[i].startswith(" ") and lines[i].strip():  # a synopsis' rest
            line = line.rstrip() + " " + lines[i].strip()
            i += 1
        text = _command(line)
        if text:
            yield Example(f"{doc.relative_to(ROOT)}:{first + at}", text)


def examples() -> list[Example]:
    """Every shell example of the docs, in order."""
    out: list[Example] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m.group(1) in ("", *SHELL):
                out.extend(_block_examples(doc, m.group(1), m.group(2), text.count("\n", 0, m.start(2)) + 1))
    return out


ALL = examples()

# ----------------------------------------------------------------------------------------------- running one


def _suite(argv: list[str]) -> str:
    words = [a for a in argv if not a.startswith("-")]
    return words[2] if len(words) > 2 and words[1] in ("run", "plan") else ""


def _replaced(text: str) -> str:
    for old, new in SUBSTITUTIONS:
        text = text.replace(old, new)
    return text


def substitute(example: str, values: dict[str, str]) -> str:
    """The example as it runs here: WHOLE or SUBSTITUTIONS, AS_PLAN, drives replaced, a short runtime, the
    placeholders ({cwd}, {op7} ...) filled from `values`."""
    text = WHOLE.get(example) or _replaced(example)
    if example in AS_PLAN:
        text = text.replace("ssdlab run ", "ssdlab plan ", 1)
    argv = shlex.split(text)
    several = sum(a == "--target" for a in argv) > 1
    fio = several or _suite(argv) in FIO_SUITES
    for dev in DEVICES:
        text = text.replace(dev, f"file:{{cwd}}/{Path(dev).name}.dat?size=64MiB" if fio else SIM_DRIVE)
    if argv[:2] == ["ssdlab", "run"] and "--runtime" not in argv and _suite(argv) != "act":
        text += " --runtime 0.1"  # the suites' own point lengths are a minute or more
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def _unique(found: list[Example]) -> list[Example]:
    """One example per command as it runs here (README and docs/ show some twice, some with other
    placeholders): the first place names it."""
    seen: dict[str, Example] = {}
    for e in found:
        seen.setdefault(substitute(e.text, {}) if e.text not in MAKERS.values() else e.text, e)
    return list(seen.values())


RUNNABLE = [e for e in _unique(ALL) if e.text not in NOT_HERE]


def allowed(text: str) -> tuple[set[int], str]:
    """The exit codes the docs give for this command, and where (a suite's verdicts: `run` and `resume`)."""
    codes, why = {0}, ["exit 0"]
    argv = shlex.split(text)
    suite = _suite(argv) if argv[1] == "run" else ""
    for key, (code, reason) in [*((k, v) for k, v in SUITE_CODES.items() if suite.startswith(k)),
                                *((k, v) for k, v in COMMAND_CODES.items() if " ".join(argv[1:]).startswith(k)),
                                *((k, v) for k, v in OPTION_CODES.items() if f" {k}" in text)]:
        codes.add(code)
        why.append(f"{key}: {reason}")
    return codes, "; ".join(why)


def run(text: str, cwd: Path) -> CliResult:
    """One substituted example in `cwd`: ssdlab in-process, anything else as a process; `> FILE` is honoured."""
    argv = shlex.split(text)
    target = None
    if ">" in argv:
        at = argv.index(">")
        argv, target = argv[:at], argv[at + 1]
    words = set(text.split())  # (a quoted pattern, such as --suite 'pts-*', is passed as it is)
    argv = [argv[0], *(x for a in argv[1:] for x in (_glob(a, cwd) if a in words else [a]))]
    if argv[0] == "ssdlab":
        res = run_cli(*argv[1:], traceback=False)
    else:
        exe = sys.executable if argv[0] in ("python", ".venv/bin/python") else argv[0]
        proc = subprocess.run([exe, *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
        res = CliResult(code=proc.returncode, out=proc.stdout, err=proc.stderr)
    if target is not None:
        (cwd / target).write_text(res.out, encoding="utf-8")
    return res


def _glob(arg: str, cwd: Path) -> list[str]:
    """A shell word as the shell passes it: a pattern matching files in cwd becomes their names."""
    if "*" not in arg or arg.startswith("-") or "=" in arg:
        return [arg]
    found = sorted(str(p.relative_to(cwd)) for p in cwd.glob(arg))
    return found or [arg]


# ------------------------------------------------------------------------------------------------ the lab


@dataclass
class Lab:
    """The module's directory of runs the examples read, what the examples that made them returned, and the
    sockets of the two agents docs/hosts.md's lab.toml names."""

    root: Path
    runs: dict[str, Path]
    made: dict[str, CliResult]
    agents: dict[str, Path]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    from test_hostgroup_fio import start_agent

    root = tmp_path_factory.mktemp("doc-lab")
    runs: dict[str, Path] = {}
    made: dict[str, CliResult] = {}
    started = []
    with pytest.MonkeyPatch.context() as mp, contextlib.ExitStack() as stack:
        for name in ("a", "b"):
            started.append(start_agent(name, root))
            stack.callback(started[-1].stop)
        mp.chdir(root)
        mp.delenv("SSDLAB_RESULTS", raising=False)
        doc_trace(root / "my-trace.csv")
        for name, argv in PREPARED.items():
            res = run_cli(*argv)
            assert res.code == 0, res.err
            runs[name] = root / "results" / name
        values = {"cwd": str(root)}
        for name, text in MAKERS.items():
            made[text] = res = run(substitute(text, values), root)
            m = re.search(r"^results: (.+)$", res.err, re.M)
            if m:  # (else the example's own test says why)
                runs[name] = root / m.group(1).strip()
        yield Lab(root, runs, made, {a.address: a.socket for a in started if a.socket})


def _prepare(lab: Lab, cwd: Path, text: str) -> dict[str, str]:
    """Copy the runs the example names into cwd/results and make the files it reads; placeholder values."""
    from ssdlab.results.catalog import catalog_id
    from ssdlab.results.store import load_run

    values = {"cwd": str(cwd)}
    wanted = set(re.findall(r"\{([\w-]+)\}", _replaced(text)))
    if text.startswith("ssdlab runs "):
        wanted |= {"op7", "op28"}  # a catalog with runs in it
    for name in sorted(wanted - {"cwd", "quick-point", "op28-id", "op28b", "stopped"}):
        values[name] = str(shutil.copytree(lab.runs[name], cwd / "results" / name, symlinks=True))
    if "op28b" in wanted:
        values["op28b"] = str(_another(lab.runs["op28"], cwd / "results" / "op28b"))
    if "op28-id" in wanted:
        values["op28-id"] = catalog_id(load_run(Path(values["op28"]) if "op28" in values else _copy_op28(lab, cwd)))
    if "quick-point" in wanted:
        values["quick-point"] = load_run(lab.runs["quick"]).points[0].point.id
    if "stopped" in wanted:
        values["stopped"] = str(_stopped(lab.runs["quick"], cwd / "results" / "stopped"))
    if "hist_service_clat_hist" in _replaced(text):
        for log in sorted((lab.runs["act"] / "points").glob("*/hist_service_clat_hist.*.log"))[:2]:
            shutil.copy(log, cwd / log.name)
    if "--act-config" in text:
        dev = cwd / "nvme0n1.dat"
        (cwd / "act_storage.conf").write_text(f"device-names: {dev}\nread-reqs-per-sec: 2000\n"
                                              "write-reqs-per-sec: 1000\ntest-duration-sec: 2\n", encoding="utf-8")
    if "lab.toml" in text:
        toml = _doc_block("hosts.md", "# lab.toml")
        for old, new in LAB_TOML:
            toml = toml.replace(old, new)
        values |= {f"agent-{k}": str(v) for k, v in lab.agents.items()}
        for key, value in values.items():
            toml = toml.replace("{" + key + "}", value)
        (cwd / "lab.toml").write_text(toml, encoding="utf-8")
    if "my-suite.toml" in text:
        (cwd / "my-suite.toml").write_text(_doc_suite(), encoding="utf-8")
    if "my-trace.csv" in text:
        doc_trace(cwd / "my-trace.csv")
    return values


def _copy_op28(lab: Lab, cwd: Path) -> Path:
    return Path(shutil.copytree(lab.runs["op28"], cwd / "results" / "op28"))


def _another(src: Path, dst: Path) -> Path:
    """A copy of a run under another run id (a third firmware to compare)."""
    import json

    shutil.copytree(src, dst)
    doc = json.loads((dst / "run.json").read_text(encoding="utf-8"))
    doc["run_id"] = f"{doc['run_id']}-b"
    (dst / "run.json").write_text(json.dumps(doc), encoding="utf-8")
    return dst


def _stopped(src: Path, dst: Path) -> Path:
    """A copy of a finished run with its last two points removed, interrupted: what Ctrl-C leaves to resume."""
    import json

    shutil.copytree(src, dst)
    doc = json.loads((dst / "run.json").read_text(encoding="utf-8"))
    doc["points"] = doc["points"][:-2]
    doc["status"] = "interrupted"
    (dst / "run.json").write_text(json.dumps(doc), encoding="utf-8")
    return dst


def doc_trace(path: Path) -> None:
    """docs/replay.md's my-trace.csv: an MSR-Cambridge trace of two volumes, prxy_0 (2,400 I/Os over 3 s, 65 %
    reads, 4K-64K, anywhere in 40 GiB, with response times) and prxy_1 (300 I/Os)."""
    import numpy as np

    rng = np.random.default_rng(35)
    rows = []
    for disk, n in ((0, 2400), (1, 300)):
        t = np.sort(rng.integers(0, 30_000_000, n))  # 100 ns ticks: 3 s
        for tick in t.tolist():
            size = int(rng.choice([4096, 8192, 16384, 65536]))
            off = int(rng.integers(0, (40 << 30) // 4096)) * 4096
            kind = "Read" if rng.random() < 0.65 else "Write"
            rows.append((128166372000000000 + tick, f"{128166372000000000 + tick},prxy,{disk},{kind},{off},{size},"
                                                   f"{int(rng.integers(500, 20000))}"))
    path.write_text("".join(r + "\n" for _, r in sorted(rows)), encoding="utf-8")


def _doc_block(doc: str, start: str) -> str:
    """The toml block of docs/`doc` that starts with `start`."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    m = re.search(r"```toml\n(" + re.escape(start) + r".*?)```", text, re.S)
    assert m, f"docs/{doc} has no toml block starting {start!r}"
    return m.group(1)


def _doc_suite() -> str:
    """docs/suites.md's example suite file, with its phases (2 h and 8 h) a second each."""
    return re.sub(r"^runtime_s = \d+", "runtime_s = 1", _doc_block("suites.md", 'name = "my-suite"'), flags=re.M)


# ------------------------------------------------------------------------------------------------------ tests


@pytest.mark.parametrize("example", RUNNABLE, ids=[f"{e.where} {e.text[:60]}" for e in RUNNABLE])
def test_example(example: Example, lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example exits with a code its docs give for it."""
    if "nbdkit:" in example.text and shutil.which("nbdkit") is None:
        pytest.skip("nbdkit is not installed (sudo apt-get install nbdkit)")
    if example.text in lab.made:
        res, text = lab.made[example.text], substitute(example.text, {"cwd": str(lab.root)})
    else:
        monkeypatch.chdir(tmp_path)
        monkeypatch.delenv("SSDLAB_RESULTS", raising=False)
        values = _prepare(lab, tmp_path, example.text)
        text = substitute(example.text, values)
        res = run(text, tmp_path)
    codes, why = allowed(text)
    assert res.code in codes, (f"{example.where}: `{example.text}` ran here as `{text}` and exited {res.code} "
                               f"(the docs give: {why}):\n{res.err[-2000:]}")


def test_tables_are_current() -> None:
    """Every NOT_HERE, AS_PLAN and MAKERS entry is an example of the docs, and every substitution is used."""
    texts = {e.text for e in ALL}
    for table in (NOT_HERE, AS_PLAN, MAKERS.values(), WHOLE):
        stale = [t for t in table if t not in texts]
        assert not stale, f"not an example of the docs any more: {stale}"
    unused = [old for i, (old, _) in enumerate(SUBSTITUTIONS)
              if not any(old in _upto(e.text, i) for e in ALL if e.text not in WHOLE)]
    assert not unused, f"substitutions no example needs: {unused}"


def _upto(text: str, n: int) -> str:
    """The text after the first n substitutions."""
    for old, new in SUBSTITUTIONS[:n]:
        text = text.replace(old, new)
    return text


def test_extraction_finds_the_examples() -> None:
    """The extractor sees README's blocks, joins continuations and drops comments."""
    texts = {e.text for e in ALL}
    assert "ssdlab suites" in texts
    assert "ssdlab ss-check 101200 99800 100900 98700 100400" in texts
    assert any(t.startswith("ssdlab run pts-cbw") and t.endswith("--di-hist-prewrite-minutes 2") for t in texts)
    assert not any("#" in t and "node-" not in t for t in texts if t.startswith("ssdlab"))
    assert len(ALL) > 60
