"""The options table of a PTS family run lists the options of the tests it ran, not of the others."""

from __future__ import annotations

from typing import Any

from ssdlab.report.readable import option_facts
from ssdlab.results.model import Run


def _run(suite: str, **suite_options: Any) -> Run:
    return Run(schema_version=2, ssdlab_version="t", run_id="t", suite=suite, status="complete", created="",
               options={"target_specs": ["sim:tlc-4k"], "runtime_s": 0.5, "suite_options": suite_options},
               target={"kind": "sim"}, host={})


def test_default_selection_hides_the_options_of_tests_it_did_not_run() -> None:
    flags = dict(option_facts(_run("pts", spec="E", wsat_fills=4.0, hir_waits="5,10", di_sweep="7x7", ecw=False,
                                   pts_tests=None)))
    assert "--spec" in flags  # common to every PTS test
    assert "--wsat-fills" in flags  # WSAT is in the default selection
    assert "--hir-waits" not in flags
    assert "--di-sweep" not in flags
    assert "--ecw" not in flags


def test_every_test_selected_shows_every_option() -> None:
    flags = dict(option_facts(_run("pts", wsat_fills=4.0, hir_waits="5,10", di_sweep="7x7", pts_tests="all")))
    assert {"--wsat-fills", "--hir-waits", "--di-sweep", "--pts-tests"} <= set(flags)


def test_a_single_test_suite_shows_its_own_options_only() -> None:
    flags = dict(option_facts(_run("pts-hir", hir_waits="5,10", wsat_fills=4.0)))
    assert "--hir-waits" in flags
    assert "--wsat-fills" not in flags


def test_other_suites_list_every_option() -> None:
    flags = dict(option_facts(_run("quick", anything="x")))
    assert flags["--anything"] == "x"


def test_options_not_given_are_one_row_not_a_row_of_default_each() -> None:
    """An ACT report listed some 30 options as 'default': those the run was not given are named in one row."""
    from ssdlab.suites import get_suite

    act = get_suite("act")
    opts = {o.key: o.default for o in act.suite_options()}
    opts["load"] = "3x"
    rows = option_facts(_run("act", **opts))
    values = [v for _, v in rows]
    assert "default" not in values
    flags = dict(rows)
    assert flags["--load"] == "3x"  # what differs is listed
    assert "--duration" not in flags
    unset = sum(1 for v in opts.values() if v is None)
    assert unset >= 20
    assert flags["not given"].startswith(f"{unset} options at their defaults: ")
    assert "--duration" in flags["not given"]
    assert "`ssdlab run act --help`" in flags["not given"]
