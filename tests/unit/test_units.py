"""Size strings and human formatting."""

from __future__ import annotations

import pytest

from ssdlab.errors import UsageError
from ssdlab.units import format_bs, format_bytes, format_duration, parse_size


@pytest.mark.parametrize(("text", "value"), [
    ("4096", 4096), ("4k", 4096), ("4K", 4096), ("4KiB", 4096), ("4kb", 4000), ("512MiB", 512 * 1024**2),
    ("64M", 64 * 1024**2), ("1.5G", 1536 * 1024**2), ("4GiB", 4 * 1024**3), ("1GB", 10**9),
    ("2TiB", 2 * 1024**4), ("1tb", 10**12), (" 8 k ", 8192), ("10B", 10), ("0.5k", 512),
])
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "k", "4x", "4 GiBs", "-4k", "0", "0k", "1.3", "4,096", "4e3", "1.0001k"])
def test_bad_sizes_are_one_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="bad size") as info:
        parse_size(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("n", "text"), [
    (0, "0 B"), (512, "512 B"), (4096, "4 KiB"), (1536, "1.50 KiB"), (64 * 1024**2, "64 MiB"),
    (1024**3, "1 GiB"), (int(3.5 * 1024**3), "3.50 GiB"), (2 * 1024**4, "2 TiB"),
])
def test_format_bytes(n: int, text: str) -> None:
    assert format_bytes(n) == text


@pytest.mark.parametrize(("n", "text"), [(512, "512"), (4096, "4K"), (131072, "128K"), (1 << 20, "1M"),
                                         (6144, "6K"), (1000, "1000"), (3 << 20, "3M")])
def test_format_bs(n: int, text: str) -> None:
    assert format_bs(n) == text


@pytest.mark.parametrize(("s", "text"), [(0, "0s"), (59.4, "59s"), (61, "1m01s"), (3600, "1h00m00s"),
                                         (3723, "1h02m03s")])
def test_format_duration(s: float, text: str) -> None:
    assert format_duration(s) == text
