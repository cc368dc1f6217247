"""Golden reports: re-render a fixed set of stored runs and diff the outputs against a stored reference, so a
restructuring can prove it changes no report (the rule of every refactoring step: same bytes, or each
difference explained).

    # once, before the first move: store runs (the committed fixtures + a short run of every suite on the
    # simulator, several devices, a file target) and render the reference outputs from them
    .venv/bin/python scripts/golden.py capture /work/golden
    # after each step: re-render (never re-run) the same stored runs and compare byte for byte
    .venv/bin/python scripts/golden.py check /work/golden [--as new-mybranch]

What is rendered for every stored run: report.html (`ssdlab report`, with --junit), the CSV and JSON exports,
the terminal summary (`report`'s stdout and exit code), `latency` of the first point with bins, and for chosen
pairs `compare` (compare.html + compare.csv + JUnit with a gate). Outputs land in DIR/<name>/ (reference:
`ref`, check: `new`); `check` prints one line per differing file and exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "runs"

# every suite, short, on the simulator (virtual time: seconds of CPU each); options keep the long ones short
SIM_RUNS: dict[str, list[str]] = {
    "quick": ["quick", "--runtime", "0.5"],
    "quick-read": ["quick-read", "--runtime", "0.5"],
    "four-corners": ["four-corners", "--runtime", "0.5"],
    "pts": ["pts", "--runtime", "0.5"],
    "pts-all": ["pts", "--runtime", "0.3", "--pts-tests", "all", "--capacity", "512MiB"],
    "pts-iops-op28": ["pts-iops", "--runtime", "0.5", "--target", "sim:tlc-4k-28"],
    "pts-cbw": ["pts-cbw", "--runtime", "0.3", "--capacity", "512MiB"],
    "sweep-bs": ["sweep-bs", "--runtime", "0.5"],
    "sweep-qd": ["sweep-qd", "--runtime", "0.5"],
    "stability": ["stability", "--runtime", "20"],
    "lat-curve": ["lat-curve", "--runtime", "0.5"],
    "iorate-curve": ["iorate-curve", "--runtime", "0.5"],
    "app-oracle": ["app-oracle", "--runtime", "0.5"],
    "iometer-database": ["iometer-database", "--runtime", "0.5"],
}
# fio targets (real time: kept short); FILES is replaced by the directory of the golden set's files
OTHER_RUNS: dict[str, list[str]] = {
    "quick-null": ["quick", "--runtime", "0.3", "--target", "null"],
    "quick-file": ["quick", "--runtime", "0.3", "--target", "file:FILES/q.dat?size=64MiB"],
    "quick-2file": ["quick", "--runtime", "0.3", "--target", "file:FILES/a.dat?size=64MiB",
                    "--target", "file:FILES/b.dat?size=64MiB"],
    "sweep-qd-2file": ["sweep-qd", "--runtime", "0.3", "--target", "file:FILES/c.dat?size=64MiB",
                       "--target", "file:FILES/d.dat?size=64MiB"],
    "act-file": ["act", "--target", "file:FILES/act.dat?size=256MiB", "--duration", "12", "--slice", "4",
                 "--load", "3x"],
    "integrity-file": ["integrity", "--target", "file:FILES/int.dat?size=32MiB"],
    "stability-file": ["stability", "--target", "file:FILES/st.dat?size=64MiB", "--runtime", "6"],
}
HOSTS_RUN = ["quick", "--runtime", "0.3"]  # on a group of two local agents (127.0.0.2, 127.0.0.3), two devices
# compare pairs (names of stored runs) and a gate for one of them
COMPARES: list[tuple[str, ...]] = [
    ("fixture-schema1-pts-iops-op7", "fixture-schema1-pts-iops-op28"),
    ("fixture-schema2-pts-dirth-op7", "fixture-schema2-pts-dirth-op28"),
    ("pts", "pts-iops-op28"),
    ("quick", "quick-null"),
    ("sweep-qd", "sweep-qd"),
    ("quick-file", "quick-2file"),
    ("stability", "stability-file"),
]
GATE = ["--fail-on", "iops:-5%"]


def _ssdlab() -> list[str]:
    venv = ROOT / ".venv" / "bin" / "ssdlab"
    return [str(venv)] if venv.exists() else [sys.executable, "-m", "ssdlab"]


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)


def capture(base: Path, only: set[str] | None) -> int:
    runs = base / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    for fixture in sorted(FIXTURES.glob("schema*/*/run.json")):
        name = f"fixture-{fixture.parent.parent.name}-{fixture.parent.name}"
        if not (runs / name).exists():
            shutil.copytree(fixture.parent, runs / name)
    files = base / "files"
    files.mkdir(exist_ok=True)
    for name, argv in {**SIM_RUNS, **OTHER_RUNS}.items():
        if (runs / name).exists() or (only and name not in only):
            continue
        argv = [a.replace("FILES", str(files)) for a in argv]
        full = [*_ssdlab(), "run", *argv, "--out", str(runs / name), "--yes"]
        if "--target" not in argv:
            full += ["--target", "sim:tlc-4k"]
        print("run:", " ".join(full[1:]), flush=True)
        done = _run(full, base)
        if not (runs / name / "run.json").exists():
            print(f"  failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}", flush=True)
    if not (runs / "quick-hosts").exists() and (not only or "quick-hosts" in only):
        _hosts_run(base, runs / "quick-hosts", files)
    return render(base, "ref")


def _hosts_run(base: Path, out: Path, files: Path) -> None:
    """A host-group run: two agents on loopback addresses of this machine, two file devices each."""
    agents = []
    try:
        lines = []
        for i, addr in enumerate(("127.0.0.2", "127.0.0.3")):
            work = base / f"agent{i}"
            work.mkdir(mode=0o700, exist_ok=True)  # an agent's --dir is private to its user
            work.chmod(0o700)
            agents.append(subprocess.Popen([*_ssdlab(), "agent", "--bind", addr, "--port", "18765", "--dir",
                                            str(work)], cwd=work, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL))
            lines += ["[[host]]", f'name = "node{i}"', f'address = "{addr}"', "port = 18765",
                      f'targets = ["file:{files}/h{i}a.dat?size=64MiB", "file:{files}/h{i}b.dat?size=64MiB"]', ""]
        inv = base / "lab.toml"
        inv.write_text("\n".join(lines), encoding="utf-8")
        time.sleep(3)
        full = [*_ssdlab(), "run", *HOSTS_RUN, "--hosts", str(inv), "--out", str(out), "--yes"]
        print("run:", " ".join(full[1:]), flush=True)
        done = _run(full, base)
        if not (out / "run.json").exists():
            print(f"  failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}", flush=True)
    finally:
        for a in agents:
            a.terminate()
            a.wait()


def _outputs(run: Path, out: Path, cwd: Path) -> None:
    """Every output of one stored run into out/ (the run is copied first: rendering writes report.html)."""
    work = out / "run"
    shutil.copytree(run, work)
    (work / "report.html").unlink(missing_ok=True)
    done = _run([*_ssdlab(), "report", str(work), "--junit", str(out / "junit.xml")], cwd)
    (out / "report.stdout").write_text(done.stdout.replace(str(work), "RUN") + f"exit {done.returncode}\n"
                                       + done.stderr.replace(str(work), "RUN"), encoding="utf-8")
    if (work / "report.html").exists():
        shutil.move(work / "report.html", out / "report.html")
    for fmt in ("csv", "json"):
        done = _run([*_ssdlab(), "export", str(work), "--format", fmt], cwd)
        (out / f"export.{fmt}").write_text(done.stdout + f"exit {done.returncode}\n" + done.stderr, encoding="utf-8")
    point = _first_point(work)
    if point:
        done = _run([*_ssdlab(), "latency", str(work), point], cwd)
        (out / "latency.txt").write_text(done.stdout + f"exit {done.returncode}\n" + done.stderr, encoding="utf-8")
    shutil.rmtree(work)


def _first_point(run: Path) -> str | None:
    try:
        doc = json.loads((run / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for p in doc.get("points", []):
        m = p.get("measurement") or {}
        if any((d.get("clat") or {}).get("bins") for d in (m.get("directions") or {}).values()):
            return str(p["point"]["id"])
    return None


def render(base: Path, which: str) -> int:
    runs = base / "runs"
    out_root = base / which
    if out_root.exists():
        shutil.rmtree(out_root)
    out_root.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        for run in sorted(p for p in runs.iterdir() if (p / "run.json").exists()):
            out = out_root / run.name
            out.mkdir()
            _outputs(run, out, cwd)
        for pair in COMPARES:
            if not all((runs / n / "run.json").exists() for n in pair):
                continue
            name = "compare-" + "-vs-".join(pair)
            out = out_root / name
            out.mkdir()
            work = [out / f"run{i}-{n}" for i, n in enumerate(pair)]
            for src, dst in zip(pair, work, strict=True):
                shutil.copytree(runs / src, dst)
            done = _run([*_ssdlab(), "compare", *map(str, work), "--out", str(out / "cmp"), *GATE,
                         "--junit", str(out / "junit.xml")], cwd)
            text = done.stdout + f"exit {done.returncode}\n" + done.stderr
            (out / "compare.stdout").write_text(text.replace(str(out), "OUT"), encoding="utf-8")
            for w in work:
                shutil.rmtree(w)
    for path in out_root.rglob("*"):  # where each set was rendered is not part of the output
        if path.is_file():
            data = path.read_bytes()
            if str(out_root).encode() in data:
                path.write_bytes(data.replace(str(out_root).encode(), b"OUT"))
    print(f"rendered {sum(1 for _ in out_root.iterdir())} sets into {out_root}")
    return 0


def check(base: Path, name: str) -> int:
    render(base, name)
    ref, new = base / "ref", base / name
    differ = 0

    def walk(cmp: filecmp.dircmp[str], rel: Path) -> None:
        nonlocal differ
        for name in cmp.left_only:
            print(f"only in ref: {rel / name}")
            differ += 1
        for name in cmp.right_only:
            print(f"only in new: {rel / name}")
            differ += 1
        for name in cmp.common_files:
            if (Path(cmp.left) / name).read_bytes() != (Path(cmp.right) / name).read_bytes():
                print(f"differs: {rel / name}")
                differ += 1
        for name, sub in cmp.subdirs.items():
            walk(sub, rel / name)

    walk(filecmp.dircmp(str(ref), str(new)), Path())
    print("identical" if not differ else f"{differ} files differ (diff -r {ref} {new})")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["capture", "check", "render"])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--only", nargs="*", help="capture: run only these named runs")
    ap.add_argument("--as", dest="name", default="new",
                    help="check: render into DIR/NAME (default new), so several checkouts can check at once")
    a = ap.parse_args()
    base = a.dir.resolve()
    if a.mode == "capture":
        return capture(base, set(a.only) if a.only else None)
    if a.mode == "render":
        return render(base, "ref")
    return check(base, a.name)


if __name__ == "__main__":
    sys.exit(main())
