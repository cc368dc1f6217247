"""NBD target strings, nbdkit fault parameters and what they become (filters, arguments, a ddrescue map);
no server is started here (tests/integration/test_nbdkit_faults.py runs real nbdkit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.errors import TargetError, UsageError
from ssdlab.run.target import parse_target
from ssdlab.targets import TargetOptions
from ssdlab.targets.nbd import DEFAULT_PORT, is_nbd_uri, parse_uri
from ssdlab.targets.nbdkit import Faults, NbdkitTarget, Stall, ddrescue_map

MiB = 1024**2


def test_nbd_uris() -> None:
    tcp = parse_uri("nbd://127.0.0.1/disk")
    assert (tcp.host, tcp.port, tcp.export, tcp.socket_path) == ("127.0.0.1", DEFAULT_PORT, "disk", "")
    assert parse_uri("nbd://localhost:10900").port == 10900
    unix = parse_uri("nbd+unix:///?socket=/run/x.sock")
    assert (unix.socket_path, unix.export) == ("/run/x.sock", "")
    assert "unix socket /run/x.sock" in unix.describe()
    assert is_nbd_uri("nbd://h")
    assert is_nbd_uri("nbd+unix:///?socket=/s")
    assert is_nbd_uri("nbds://h")
    assert not is_nbd_uri("nbdkit:memory")
    assert not is_nbd_uri("/dev/nbd0")
    assert not is_nbd_uri("null")


@pytest.mark.parametrize(("uri", "match"), [
    ("nbds://host/", "TLS"), ("nbd+unix:///", "socket="), ("nbd:///x", "name the server"),
])
def test_bad_nbd_uris(uri: str, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        parse_uri(uri)


def test_a_server_that_is_not_there_is_a_target_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="cannot connect"):
        parse_target(f"nbd+unix:///?socket={tmp_path / 'none.sock'}")


def test_nbdkit_memory_spec_needs_no_consent() -> None:
    t = parse_target("nbdkit:memory?size=16MiB")
    assert isinstance(t, NbdkitTarget)
    assert (t.kind, t.plugin, t.capacity()) == ("nbdkit", "memory", 16 * MiB)
    assert not t.needs_write_consent()
    assert t.hazards() == []
    assert "nothing" in t.destroys()
    assert t.info()["faults"] == []


def test_capacity_option_limits_the_disk() -> None:
    t = parse_target("nbdkit:memory?size=16MiB", TargetOptions(capacity=4 * MiB))
    assert t.capacity() == 4 * MiB


def test_nbdkit_file_spec_is_a_write_to_that_file(tmp_path: Path) -> None:
    img = tmp_path / "disk.img"
    with pytest.raises(TargetError, match="does not exist"):
        parse_target(f"nbdkit:file:{img}")
    t = parse_target(f"nbdkit:file:{img}?size=8MiB")
    assert isinstance(t, NbdkitTarget)
    assert t.capacity() == 8 * MiB
    assert str(img) in t.destroys()
    img.write_bytes(b"\0" * 2 * MiB)
    assert parse_target(f"nbdkit:file:{img}").capacity() == 2 * MiB
    with_errors = parse_target(f"nbdkit:file:{img}?read-error=0")
    assert "overlay" in with_errors.destroys()  # read-error faults put writes in nbdkit's cow overlay


@pytest.mark.parametrize(("spec", "match"), [
    ("nbdkit:floppy", "nbdkit:memory"), ("nbdkit:memory?size=16MiB&colour=red", "unknown nbdkit target parameter"),
    ("nbdkit:memory?size=16MiB&read-error=15MiB:2MiB", "beyond the disk"),
    ("nbdkit:memory?size=16MiB&stall=300ms", "LENGTH@TIME"), ("nbdkit:memory?size=16MiB&error-rate=200%", "range"),
    ("nbdkit:memory?size=16MiB&delay-read=fast", "duration"), ("nbdkit:memory?size=512k", "too small"),
])
def test_bad_nbdkit_specs(spec: str, match: str) -> None:
    with pytest.raises((UsageError, TargetError), match=match):
        parse_target(spec)


def test_fault_parameters() -> None:
    f = Faults.from_params({"read-error": "1MiB,2MiB:8KiB", "write-error": "0x300000", "error-rate": "1%",
                            "delay-read": "5ms", "delay-write": "0.25s", "stall": "1s@2s,300ms@500ms"})
    assert f.read_errors == ((MiB, 4096), (2 * MiB, 8192))
    assert f.write_errors == ((3 * MiB, 4096),)
    assert f.error_rate == pytest.approx(0.01)
    assert (f.delay_read_ms, f.delay_write_ms) == (5, 250)
    assert f.stalls == (Stall(at_s=0.5, length_s=0.3), Stall(at_s=2.0, length_s=1.0))  # in time order
    assert f.filters() == ["pause", "delay", "error", "protect", "cow", "ddrescue"]
    text = "; ".join(f.describe())
    assert "read errors (EIO) at 1048576 (+4 KiB), 2097152 (+8 KiB)" in text
    assert "300 ms stall 500 ms after fio connects" in text


def test_filter_arguments_and_the_bad_block_map(tmp_path: Path) -> None:
    f = Faults.from_params({"read-error": "2MiB:8KiB,1MiB", "write-error": "3MiB:4KiB"})
    args = f.arguments(tmp_path, 4 * MiB)
    assert "protect=3145728-3149823" in args
    assert f"ddrescue-mapfile={tmp_path / 'bad-blocks.map'}" in args
    assert "cow-block-size=4096" in args
    rows = [ln.split() for ln in (tmp_path / "bad-blocks.map").read_text().splitlines() if not ln.startswith("#")]
    assert rows[0] == ["0x00000000", "+", "1"]
    assert rows[1:] == [["0x00000000", "0x00100000", "+"], ["0x00100000", "0x00001000", "-"],
                        ["0x00101000", "0x000FF000", "+"], ["0x00200000", "0x00002000", "-"],
                        ["0x00202000", "0x001FE000", "+"]]


def test_overlapping_bad_ranges_merge() -> None:
    text = ddrescue_map(((0, 8192), (4096, 8192)), 1 * MiB)
    assert "0x00000000  0x00003000  -" in text
    assert "0x00003000  0x000FD000  +" in text


def test_no_faults_no_filters() -> None:
    assert Faults().filters() == []
    assert not Faults().any()
