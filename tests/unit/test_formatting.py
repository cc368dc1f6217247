"""The number styles of ssdlab.formatting: each gives the text the page that uses it always printed."""

from __future__ import annotations

import pytest

from ssdlab import formatting


@pytest.mark.parametrize(("value", "digits", "text"), [
    (1234567.89, 0, "1,234,568"), (1234.56, 1, "1,234.6"), (0.0, 0, "0"), (None, 0, ""), (-2.5, 1, "-2.5"),
])
def test_grouped(value: float | None, digits: int, text: str) -> None:
    assert formatting.grouped(value, digits) == text


def test_grouped_none_text() -> None:
    assert formatting.grouped(None, none="n/a") == "n/a"


@pytest.mark.parametrize(("value", "text"), [(12.345, "12.3"), (99_999.94, "99,999.9"), (123_456.7, "123,457")])
def test_mbps(value: float, text: str) -> None:
    assert formatting.mbps(value) == text


@pytest.mark.parametrize(("us", "text"), [
    (0.0314, "0.03"), (9.999, "10.00"), (10.0, "10.0"), (999.94, "999.9"), (1000.0, "1,000"), (12345.6, "12,346"),
    (None, ""),
])
def test_latency_us(us: float | None, text: str) -> None:
    assert formatting.latency_us(us) == text


def test_latency_ns_is_latency_us_of_the_microseconds() -> None:
    for ns in (31.4, 12_400.0, 1_234_000.0, 5.0e9):
        assert formatting.latency_ns(ns) == formatting.latency_us(ns / 1000.0)
    assert formatting.latency_ns(None, "n/a") == "n/a"


@pytest.mark.parametrize(("value", "unit", "text"), [
    (1234.5, "", "1,234"), (-1500.0, "", "-1,500"), (12.34, "", "12.3"), (1.2345, "", "1.23"), (0.012345, "", "0.0123"),
    (250.0, "µs", "250.0 µs"), (None, "µs", "–"),
])
def test_sig3(value: float | None, unit: str, text: str) -> None:
    assert formatting.sig3(value, unit) == text


def test_sig3_none_text() -> None:
    assert formatting.sig3(None, "IOPS", none="n/a") == "n/a"


@pytest.mark.parametrize(("value", "digits", "text"), [
    (1234.5, 1, "1,234"), (999.96, 1, "1000.0"), (12.34, 0, "12"), (None, 1, "–"), (float("nan"), 1, "–"),
])
def test_fixed(value: float | None, digits: int, text: str) -> None:
    assert formatting.fixed(value, digits) == text


@pytest.mark.parametrize(("value", "text"), [(1234.5, "1,234"), (100.0, "100"), (99.94, "99.9"), (0.1234, "0.123"),
                                             (None, "-")])
def test_brief(value: float | None, text: str) -> None:
    assert formatting.brief(value) == text


@pytest.mark.parametrize(("value", "unit", "text"), [
    (5.123, "p99 µs", "5.12"), (512.34, "p99.9 µs", "512.3"), (5123.0, "p99 µs", "5,123"), (99.44, "MB/s", "99.4"),
    (1234.5, "MB/s", "1,234"), (1234.5, "IOPS", "1,234"), (None, "IOPS", ""),
])
def test_by_unit(value: float | None, unit: str, text: str) -> None:
    assert formatting.by_unit(value, unit) == text


@pytest.mark.parametrize(("value", "text"), [(None, "not reported"), (1234, "1,234"), (1234.56, "1,234.6"),
                                             ("ok", "ok")])
def test_counter(value: object, text: str) -> None:
    assert formatting.counter(value) == text


@pytest.mark.parametrize(("value", "text"), [(None, ""), (1234, "+1,234"), (0, "0"), (-3, "-3")])
def test_change(value: int | None, text: str) -> None:
    assert formatting.change(value) == text


@pytest.mark.parametrize(("value", "text"), [(None, ""), (1234567.0, "1.23457e+06"), (12.3456789, "12.3457")])
def test_csv_value(value: float | None, text: str) -> None:
    assert formatting.csv_value(value) == text


@pytest.mark.parametrize(("value", "text"), [(0.0, "0"), (500.0, "500"), (2500.0, "2.5k"), (10_000.0, "10k"),
                                             (2_000_000.0, "2M"), (-1500.0, "-1.5k")])
def test_tick(value: float, text: str) -> None:
    assert formatting.tick(value) == text


@pytest.mark.parametrize(("value", "text"), [(0.5, "0.5"), (500.0, "500"), (5000.0, "5,000"), (50_000.0, "50,000"),
                                             (500_000.0, "500k"), (5_000_000.0, "5M")])
def test_log_tick(value: float, text: str) -> None:
    assert formatting.log_tick(value) == text


@pytest.mark.parametrize(("value", "text"), [(61.234, "61.2"), (3500.0, "3500"), (15_000.0, "15k"),
                                             (2_500_000.0, "2.50M")])
def test_bar_label(value: float, text: str) -> None:
    assert formatting.bar_label(value) == text
