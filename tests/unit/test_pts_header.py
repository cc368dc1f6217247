"""--pts-header: the operator's SNIA header facts, validated when the run starts and stored with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.unit.test_pts_rounds import ctx

from ssdlab.errors import UsageError
from ssdlab.suites import get_suite
from ssdlab.suites.base import load_toml_option
from ssdlab.suites.pts import common, header

GOOD = """
[report]
sponsor = "Example Labs"
revision = 2
[device]
model = "EX-1"
nand_type = "TLC"
[platform]
cpu = "8 cores"
"""


def _option(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "header.toml"
    path.write_text(text)
    return load_toml_option(str(path))


def test_a_header_file_is_read_once_and_kept_whole(tmp_path: Path) -> None:
    value = _option(tmp_path, GOOD)
    assert value["file"] == str((tmp_path / "header.toml").resolve())
    (tmp_path / "header.toml").unlink()  # from here on only the stored value counts
    h = header.parse(value)
    assert h is not None
    assert dict(h.report) == {"sponsor": "Example Labs", "revision": "2"}
    assert dict(h.device) == {"model": "EX-1", "nand_type": "TLC"}
    assert dict(h.platform) == {"cpu": "8 cores"}
    s = common.settings(ctx(pts_header=value))  # the settings keep it (hashable) and validate it
    assert header.parse(s.option("pts_header")) == h
    get_suite("pts-lat").plan(ctx(pts_header=value))


@pytest.mark.parametrize(("text", "message"), [
    ("[dut]\nmodel = 'x'\n", "unknown section [dut]"),
    ("[device]\ncolour = 'red'\n", "unknown key 'colour' in [device]"),
    ("[report]\nsponsor = ['a', 'b']\n", "sponsor must be text or a number"),
    ("report = 'x'\n", "[report] must be a table"),
])
def test_bad_header_files_are_one_usage_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        common.settings(ctx(pts_header=_option(tmp_path, text)))


def test_missing_or_broken_files_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read"):
        load_toml_option(str(tmp_path / "nope.toml"))
    (tmp_path / "bad.toml").write_text("sponsor = \n")
    with pytest.raises(UsageError, match="not a TOML file"):
        load_toml_option(str(tmp_path / "bad.toml"))
