"""Subcommands registered lazily in cli.EXTENSIONS: each entry names the module that really adds that command,
`ssdlab --help` lists them all without importing any, and running one loads only its own module."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from ssdlab import cli


@pytest.mark.parametrize("name", sorted(cli.EXTENSIONS))
def test_each_extension_module_adds_its_command(name: str) -> None:
    module, help_text = cli.EXTENSIONS[name]
    sub = argparse.ArgumentParser().add_subparsers()
    handlers = importlib.import_module(module).add_commands(sub)
    assert name in handlers
    assert name in sub.choices
    assert help_text


def _loaded_after(*argv: str) -> tuple[str, set[str]]:
    code = ("import sys, io, contextlib\n"
            "from ssdlab import cli\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
            f"    cli.main({list(argv)!r}, env=cli.Env(stdout=out))\n"
            "print('\\n'.join(sorted(m for m in sys.modules\n"
            "                      if m.startswith(('ssdlab', 'scipy', 'sqlite3', 'aiohttp', 'plotly')))))\n"
            "print('---')\n"
            "print(out.getvalue())\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    modules, _, text = res.stdout.partition("---\n")
    return text, set(modules.split())


def test_help_lists_compare_runs_and_tag_without_loading_them() -> None:
    text, loaded = _loaded_after("--help")
    for name in ("compare", "runs", "tag", "latency", "plot"):
        assert f"    {name}" in text
    assert not {m for m in loaded if m.startswith(("ssdlab.commands", "ssdlab.compare.matching",
                                                   "ssdlab.results.catalog", "scipy", "sqlite3"))}


def test_runs_loads_the_catalog_but_not_compare(tmp_path: Path) -> None:
    _, loaded = _loaded_after("runs", "--results", str(tmp_path))
    assert "ssdlab.commands.catalog" in loaded
    assert "ssdlab.commands.compare" not in loaded
    assert not {m for m in loaded if m.startswith("scipy")}


def test_version_and_run_load_nothing_of_the_server(tmp_path: Path) -> None:
    """`ssdlab serve` costs the other commands nothing: its package and aiohttp load only when it runs."""
    server = ("ssdlab.serve", "aiohttp", "plotly")
    _, loaded = _loaded_after("--version")
    assert not {m for m in loaded if m.startswith(server)}
    _, loaded = _loaded_after("run", "quick", "--target", "sim:tlc-4k?capacity=1GiB", "--runtime", "0.1", "--out",
                              str(tmp_path / "run"), "--yes", "-q")
    assert "ssdlab.run.liverecord" in loaded  # the run keeps its live record ...
    assert not {m for m in loaded if m.startswith(server)}  # ... without the server
    assert (tmp_path / "run" / "live.jsonl").is_file()
    _, loaded = _loaded_after("serve", "--help")
    assert "ssdlab.serve.command" in loaded
    assert "ssdlab.serve.app" not in loaded
