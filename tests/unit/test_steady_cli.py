"""`ssdlab ss-check`: verdict, percentages, fit formula, exit codes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

CliRunner = Callable[..., Any]  # the `cli` fixture of tests/conftest.py


def test_steady_series_exits_0_and_prints_the_figures(cli: CliRunner) -> None:
    r = cli("ss-check", "--first-round", "6", "101200", "99800", "100900", "98700", "100400")
    assert r.code == 0
    assert r.out.startswith("STEADY over rounds 6-10")
    assert "2.50% of average" in r.out
    assert "1.08% of average" in r.out
    assert "y = -270·R + 102360" in r.out


def test_band_reading_trap_is_not_steady(cli: CliRunner) -> None:
    r = cli("ss-check", "92000", "96000", "100000", "104000", "108000")
    assert r.code == 1
    assert r.out.startswith("NOT STEADY")
    assert "16.00% of average (allowed 10000 = 10%) FAIL" in r.out


def test_only_the_last_five_values_count(cli: CliRunner) -> None:
    r = cli("ss-check", "10", "5000", "96000", "97000", "115000", "96000", "96000")
    assert r.code == 0
    assert "rounds 3-7" in r.out
    assert "19.00% of average" in r.out


def test_boundaries_pass_with_less_or_equal(cli: CliRunner) -> None:
    assert cli("ss-check", "0.9", "1.1", "1.0", "1.0", "1.0").code == 0
    assert cli("ss-check", "95000", "97500", "100000", "102500", "105000").code == 0
    assert cli("ss-check", "94999", "97500", "100000", "102500", "105001").code == 1


def test_json_output(cli: CliRunner) -> None:
    r = cli("ss-check", "--json", "92000", "96000", "100000", "104000", "108000")
    assert r.code == 1
    doc = json.loads(r.out)
    assert doc["steady"] is False
    assert doc["range_ok"] is True
    assert doc["excursion_ok"] is False
    assert doc["slope"] == 4000
    assert doc["formula"] == "4000·R + 88000"


@pytest.mark.parametrize("args", [["1", "2", "3"], ["1", "2", "x", "4", "5"], ["0", "0", "0", "0", "0"],
                                  ["1", "2", "nan", "4", "5"]])
def test_bad_input_is_one_line_exit_2(cli: CliRunner, args: list[str]) -> None:
    r = cli("ss-check", *args, traceback=False)
    assert r.code == 2
    assert len(r.err_lines) == 1
    assert r.err_lines[0].startswith("ssdlab: error:")
