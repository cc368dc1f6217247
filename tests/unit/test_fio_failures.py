"""Parsers of fio's verify failures and I/O errors, on real fio 3.33 stderr captured by capture-faults.sh."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ssdlab.fio import failures, stderr
from ssdlab.fio.ioerrors import IGNORE_ERROR, continue_options, job_errors, parse_io_errors
from ssdlab.fio.parse import last_document
from ssdlab.fio.verify import check_options, parse_failures, write_options

Golden = Callable[[str], Path]

# the five corruptions capture-faults.sh plants, as (block offset, kind, check)
PLANTED = [(12288, "checksum", "crc32c"), (40960, "checksum", "crc32c"), (204800, "header", "offset"),
           (819200, "header", "length"), (1228800, "header", "magic")]


def _lines(golden: Golden, name: str) -> list[stderr.Line]:
    return list(stderr.text_lines(golden(name).read_text(encoding="utf-8")))


def test_every_planted_corruption_is_found_once_with_its_offset(golden: Golden) -> None:
    found = parse_failures(_lines(golden, "verify-check-crc32c.stderr"))
    assert [(f.offset, f.kind, f.check) for f in found] == PLANTED
    assert all(f.length == 4096 for f in found)
    assert all(f.file == "/tmp/ssdlab-golden/verify.dat" for f in found)


def test_checksum_failures_carry_both_checksums(golden: Golden) -> None:
    first, second = parse_failures(_lines(golden, "verify-check-crc32c.stderr"))[:2]
    assert (first.expected, first.received) == ("5f0a9b23", "7bbcbf09")
    assert (second.expected, second.received) == ("efe35273", "2a6677e9")


def test_header_failures_carry_the_field_values(golden: Golden) -> None:
    by_check = {f.check: f for f in parse_failures(_lines(golden, "verify-check-crc32c.stderr")) if f.kind == "header"}
    assert (by_check["offset"].received, by_check["offset"].expected) == ("4278394880", "204800")
    assert (by_check["length"].received, by_check["length"].expected) == ("61184", "4096")
    assert (by_check["magic"].received, by_check["magic"].expected) == ("ac35", "acca")
    assert "expected 204800" in by_check["offset"].describe()


def test_without_continue_on_error_fio_reports_only_the_first(golden: Golden) -> None:
    found = parse_failures(_lines(golden, "verify-check-crc32c-stop.stderr"))
    assert [(f.offset, f.check) for f in found] == [(12288, "crc32c")]


def test_sha256_failures_parse_with_fio_s_64_byte_values(golden: Golden) -> None:
    found = parse_failures(_lines(golden, "verify-check-sha256.stderr"))
    assert [(f.offset, f.kind) for f in found] == [(o, k) for o, k, _ in PLANTED]
    first = found[0]
    assert first.check == "sha256"
    assert len(first.expected) == 128
    assert first.expected != first.received


def test_arrival_times_follow_their_lines(golden: Golden) -> None:
    text = golden("verify-check-crc32c.stderr").read_text(encoding="utf-8")
    times = [0.5 + i for i in range(len(text.splitlines()))]
    found = parse_failures(stderr.text_lines(text, times))
    assert [f.seconds for f in found] == [0.5, 3.5, 6.5, 7.5, 8.5]  # each failure's first line


def test_io_errors_each_with_offset_and_direction(golden: Golden) -> None:
    errs = parse_io_errors(_lines(golden, "nbd-read-errors.stderr"))
    assert [(e.direction, e.offset, e.length, e.error) for e in errs] == [
        ("read", 1048576, 4096, "Input/output error"), ("read", 2101248, 4096, "Input/output error"),
        ("read", 2105344, 4096, "Input/output error")]
    doc = last_document(golden("nbd-read-errors.json").read_text(encoding="utf-8"))
    assert doc["jobs"][0]["total_err"] == 3  # fio's own count agrees


def test_write_refused_by_the_server_is_reported(golden: Golden) -> None:
    errs = parse_io_errors(_lines(golden, "nbd-write-eperm.stderr"))
    assert [(e.direction, e.offset, e.error) for e in errs] == [("write", 3145728, "Operation not permitted")]
    assert "write at offset 3145728" in failures.error_message(errs)


def test_job_error_without_an_offset_comes_from_the_json(golden: Golden) -> None:
    doc = last_document(golden("nbd-write-eperm.json").read_text(encoding="utf-8"))
    errs = job_errors(doc)
    assert len(errs) == 1
    assert errs[0].offset is None
    assert "Operation not permitted" in errs[0].error
    assert job_errors(doc, ignore=(1,)) == []


def test_summarize_a_point_directory(tmp_path: Path, golden: Golden) -> None:
    (tmp_path / "stderr.txt").write_bytes(golden("verify-check-crc32c.stderr").read_bytes())
    n = len((tmp_path / "stderr.txt").read_text().splitlines())
    stderr.write_times(tmp_path, "2026-01-02T03:04:05.000+00:00", [1.25] * n)
    doc = json.loads(golden("verify-check-crc32c.json").read_text(encoding="utf-8"))
    found = failures.summarize(tmp_path, doc)
    v = found["verify"]
    assert v["checksum"] == "crc32c"
    assert v["checked_bytes"] == 4 * 1024**2
    assert v["mismatches"] == 5
    assert v["header_mismatches"] == 3
    assert [f["offset"] for f in v["listed"]] == [o for o, _, _ in PLANTED]
    assert v["listed"][0]["time"] == "2026-01-02T03:04:06.250+00:00"
    assert "io_errors" not in found  # verify failures are not I/O errors


def test_summarize_lists_at_most_max_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: Golden) -> None:
    monkeypatch.setattr(failures, "MAX_LISTED", 2)
    (tmp_path / "stderr.txt").write_bytes(golden("verify-check-crc32c.stderr").read_bytes())
    doc = json.loads(golden("verify-check-crc32c.json").read_text(encoding="utf-8"))
    v = failures.summarize(tmp_path, doc)["verify"]
    assert v["mismatches"] == 5
    assert len(v["listed"]) == 2


def test_job_options() -> None:
    assert write_options("sha256", 7) == {"verify": "sha256", "do_verify": "0", "randseed": "7"}
    opts = check_options("crc32c")
    assert opts["verify"] == "crc32c"
    assert opts["continue_on_error"] == "all"
    assert opts["error_dump"] == "1"
    read, write, verify = IGNORE_ERROR.split(",")
    assert "EIO" in read
    assert "EPERM" in write
    assert "84" in verify.split(":")
    assert continue_options()["ignore_error"] == IGNORE_ERROR


def test_unrelated_lines_are_ignored() -> None:
    text = "fio: connected to NBD server\nnote: both iodepth >= 1 and synchronous I/O engine are selected\n"
    assert parse_failures(stderr.text_lines(text)) == []
    assert parse_io_errors(stderr.text_lines(text)) == []
