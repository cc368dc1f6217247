"""Every trace format read from golden files the project writes (tests/data/traces/: hand-written text files, the
blktrace binaries from make_blktrace.py's event table), against values worked out by hand from those files; a
malformed line is one message naming the file, the line and the field; the vectorised readers agree with a plain
per-line reading on random traces (hypothesis)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.errors import UsageError
from ssdlab.trace.formats import detect, load
from ssdlab.trace.model import READ, TRIM, WRITE

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"


def counts(path: Path, **kw: object) -> dict[str, tuple[int, int]]:
    return load(path, **kw).counts()  # type: ignore[arg-type]


def test_msr_golden() -> None:
    t = load(DATA / "msr.csv")
    assert t.format == "msr"
    assert t.time_ns.tolist() == [0, 1_000_000, 2_000_000, 3_000_000, 5_000_000, 5_000_000]  # 100 ns ticks
    assert t.offset.tolist() == [4096, 8192, 0, 16384, 1048576, 12288]
    assert t.size.tolist() == [4096, 8192, 512, 4096, 65536, 4096]
    assert t.op.tolist() == [READ, WRITE, READ, WRITE, WRITE, READ]
    assert t.latency_ns is not None
    assert t.latency_ns.tolist() == [100_000, 250_000, 30_000, 120_000, 4_000_000,
                                                                  90_000]
    assert t.counts() == {"read": (3, 8704), "write": (3, 77824), "trim": (0, 0)}
    assert t.volume_counts() == [("hm_0", 4), ("hm_1", 2)]
    assert t.origin == "unix s 1172163600"  # FILETIME 128166372000000000 = 2007-02-22 17:00 UTC


def test_alibaba_golden() -> None:
    t = load(DATA / "alibaba.csv")
    assert t.format == "alibaba"
    assert t.time_ns.tolist() == [0, 100_000, 200_000, 1_000_000, 2_500_000, 3_000_000]  # microseconds
    assert t.counts() == {"read": (3, 24576), "write": (3, 16384), "trim": (0, 0)}
    assert t.volume_counts() == [("3", 4), ("12", 2)]
    assert t.latency_ns is None


def test_tencent_golden() -> None:
    t = load(DATA / "tencent.csv")
    assert t.format == "tencent"
    assert t.time_ns.tolist() == [0, 0, 1_000_000_000, 1_000_000_000, 3_000_000_000]  # whole seconds
    assert t.offset.tolist() == [0, 4096, 1048576, 8192, 2097152]  # 512-byte sectors
    assert t.size.tolist() == [4096, 4096, 8192, 4096, 65536]
    assert t.counts() == {"read": (3, 12288), "write": (2, 73728), "trim": (0, 0)}
    assert t.volume_counts() == [("1063", 3), ("22", 2)]


def test_iolog_v2_golden() -> None:
    t = load(DATA / "iolog2.log")
    assert t.format == "iolog2"
    assert t.time_ns.tolist() == [0, 0, 0, 0]  # no times: back to back
    assert t.op.tolist() == [READ, WRITE, TRIM, READ]
    assert t.counts() == {"read": (2, 8192), "write": (1, 8192), "trim": (1, 65536)}
    assert t.volumes == ("/dev/sdb",)
    assert any("sync" in n for n in t.notes)


def test_iolog_v2_waits_are_ms_since_the_start() -> None:
    t = load(DATA / "iolog2-wait.log")
    assert t.time_ns.tolist() == [0, 5_000_000, 20_000_000]


def test_iolog_v3_golden() -> None:
    t = load(DATA / "iolog3.log")
    assert t.format == "iolog3"
    assert t.time_ns.tolist() == [0, 240_000, 1_000_000, 1_000_000]  # microseconds, from the first I/O
    assert t.counts() == {"read": (2, 8192), "write": (1, 131072), "trim": (1, 4096)}


BLK_Q = {"time": [0, 500_000, 501_000, 2_000_000, 4_000_000],
         "offset": [1048576, 2097152, 2105344, 33554432, 5120000],
         "size": [4096, 8192, 8192, 1048576, 131072], "op": [READ, WRITE, WRITE, TRIM, READ],
         "latency": [102_000, -1, -1, 1_100_000, 550_000]}  # the merged writes complete as one request
BLK_D = {"time": [0, 598_000, 2_098_000, 4_048_000], "offset": [1048576, 2097152, 33554432, 5120000],
         "size": [4096, 16384, 1048576, 131072], "op": [READ, WRITE, TRIM, READ],
         "latency": [100_000, 300_000, 1_000_000, 500_000]}


@pytest.mark.parametrize("path", ["blkparse.txt", "sample-merged.bin", "sample.blktrace.1", "sample"])
@pytest.mark.parametrize(("event", "want"), [("Q", BLK_Q), ("D", BLK_D)])
def test_block_layer_traces_golden(path: str, event: str, want: dict[str, list[int]]) -> None:
    """blkparse text, blkparse -d's merged binary, and blktrace's per-CPU files (named by one of them or by their
    base name; completions are on another CPU's file) give the same I/Os."""
    t = load(DATA / path, event=event)
    assert t.time_ns.tolist() == want["time"]
    assert t.offset.tolist() == want["offset"]
    assert t.size.tolist() == want["size"]
    assert t.op.tolist() == want["op"]
    assert t.latency_ns is not None
    assert t.latency_ns.tolist() == want["latency"]
    assert sorted(t.volumes) == ["8,16", "8,32"]
    if event == "Q":
        assert any("flushes" in n for n in t.notes)


def test_detect_every_golden_file() -> None:
    want = {"msr.csv": "msr", "alibaba.csv": "alibaba", "tencent.csv": "tencent", "iolog2.log": "iolog",
            "iolog3.log": "iolog", "blkparse.txt": "blkparse", "sample-merged.bin": "blktrace"}
    for name, fmt in want.items():
        assert detect(name, (DATA / name).read_bytes()) == fmt


def test_gzip_and_volume_filter(tmp_path: Path) -> None:
    gz = tmp_path / "msr.csv.gz"
    gz.write_bytes(gzip.compress((DATA / "msr.csv").read_bytes()))
    t = load(gz, volume="hm_1")
    assert t.counts() == {"read": (1, 512), "write": (1, 65536), "trim": (0, 0)}
    assert t.time_ns.tolist() == [0, 3_000_000]  # relative to the volume's first I/O
    with pytest.raises(UsageError, match=r"no volume 'hm_9' in this trace \(volumes with the most I/Os: hm_0, hm_1"):
        load(gz, volume="hm_9")


@pytest.mark.parametrize(("name", "text", "line", "field"), [
    ("a.csv", "3,R,0,4096,1577836800000000\n3,X,0,4096,1577836800000100\n", 2, "opcode"),
    ("a.csv", "3,R,0,4096,1577836800000000\n\n3,W,4k,4096,1577836800000100\n", 3, "offset"),
    ("a.csv", "3,R,0,4096,1577836800000000\n3,R,0,4096\n", 2, "line"),
    ("a.csv", "3,R,0,0,1577836800000000\n", 1, "length"),
    ("m.csv", "128166372000000000,hm,0,Read,4096,4096,1000\n128166372000000000,hm,0,Read,4096,-1,1000\n", 2, "Size"),
    ("t.csv", "1538352000,0,8,0,1063\n1538352000,0,8,2,1063\n", 2, "IOType"),
    ("i.log", "fio version 3 iolog\n0 f add\n10 f read 0\n", 3, "line"),
    ("i.log", "fio version 3 iolog\n0 f add\nx f read 0 4096\n", 3, "timestamp"),
    ("i.log", "fio version 2 iolog\nf add\nf reed 0 4096\n", 3, "action"),
    ("b.txt", "  8,16   1  1  0.000000000  1234  Q   R 2048 + 8 [fio]\n  8,16   1  2  0.0x  1234  Q   R 2048 + 8 [f]\n",
     2, "time"),
])
def test_a_malformed_line_is_one_message_naming_file_line_and_field(tmp_path: Path, name: str, text: str,
                                                                    line: int, field: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    fmt = {"a.csv": "alibaba", "m.csv": "msr", "t.csv": "tencent", "i.log": "iolog", "b.txt": "blkparse"}[name]
    with pytest.raises(UsageError) as err:
        load(path, fmt)
    msg = str(err.value)
    assert msg.startswith(f"{path}:{line}: {field}: "), msg
    assert "\n" not in msg


def test_an_unknown_format_and_a_missing_file_are_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("hello world\n")
    with pytest.raises(UsageError, match="cannot tell the trace's format"):
        load(junk)
    with pytest.raises(UsageError, match="does not exist"):
        load(tmp_path / "absent.csv")


def test_a_corrupt_blktrace_names_the_byte(tmp_path: Path) -> None:
    raw = bytearray((DATA / "sample-merged.bin").read_bytes())
    raw[48 + 4 + 48: 48 + 4 + 52] = b"\0\0\0\0"  # the magic of the third record (after a 4-byte pdu)
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(raw))
    with pytest.raises(UsageError, match=r"byte 100: not a blktrace record"):
        load(bad)


def test_a_blktrace_cut_short_is_read_up_to_its_last_whole_record(tmp_path: Path) -> None:
    raw = (DATA / "sample-merged.bin").read_bytes()
    cut = tmp_path / "cut.blktrace.0"
    cut.write_bytes(raw[:-20])  # the last completion, half written
    t = load(cut)
    assert len(t) == 5
    assert t.latency_ns is not None
    assert t.latency_ns.tolist()[-1] == -1
    assert any("cut short" in n for n in t.notes)


def test_per_cpu_files_found_from_one_of_them(tmp_path: Path) -> None:
    for p in DATA.glob("sample.blktrace.*"):
        shutil.copy(p, tmp_path / p.name)
    assert load(tmp_path / "sample.blktrace.0").counts() == load(DATA / "blkparse.txt").counts()


# ---------------------------------------------------------------- the vectorised readers against a plain reading

rows = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["R", "W"]), st.integers(0, 2**40),
                          st.integers(1, 2**24), st.integers(0, 10**15)), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(rows)
def test_alibaba_reader_matches_a_plain_reading(tmp_path_factory: pytest.TempPathFactory,
                                                data: list[tuple[int, str, int, int, int]]) -> None:
    path = tmp_path_factory.mktemp("ali") / "t.csv"
    path.write_text("".join(f"{d},{o},{off},{n},{ts}\n" for d, o, off, n, ts in data))
    t = load(path, "alibaba")
    order = sorted(range(len(data)), key=lambda i: data[i][4])  # stable: the reader sorts by time, ties in order
    base = min(r[4] for r in data)
    assert t.time_ns.tolist() == [(data[i][4] - base) * 1000 for i in order]
    assert t.offset.tolist() == [data[i][2] for i in order]
    assert t.size.tolist() == [data[i][3] for i in order]
    assert t.op.tolist() == [READ if data[i][1] == "R" else WRITE for i in order]
    assert [t.volumes[v] for v in t.volume.tolist()] == [str(data[i][0]) for i in order]  # type: ignore[union-attr]


iolog_rows = st.lists(st.tuples(st.integers(0, 10**12), st.sampled_from(["read", "write", "trim", "sync"]),
                                st.integers(0, 2**44), st.integers(1, 2**20),
                                st.sampled_from(["/dev/a", "/tmp/x.dat", "f"])), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(iolog_rows, st.sampled_from([" ", "  ", "\t"]))
def test_iolog_reader_matches_a_plain_reading(tmp_path_factory: pytest.TempPathFactory,
                                              data: list[tuple[int, str, int, int, str]], sep: str) -> None:
    data = sorted(data, key=lambda r: r[0])
    path = tmp_path_factory.mktemp("iolog") / "t.log"
    lines = ["fio version 3 iolog"] + [sep.join(map(str, (ts, f, a, o, n))) for ts, a, o, n, f in data]
    path.write_text("\n".join(lines) + "\n")
    io = [r for r in data if r[1] != "sync"]
    t = load(path, "iolog")
    if not io:
        assert len(t) == 0
        return
    assert t.time_ns.tolist() == [(r[0] - io[0][0]) * 1000 for r in io]
    assert t.op.tolist() == [["read", "write", "trim"].index(r[1]) for r in io]
    assert t.offset.tolist() == [r[2] for r in io]
    assert t.size.tolist() == [r[3] for r in io]
    assert [t.volumes[v] for v in t.volume.tolist()] == [r[4] for r in io]  # type: ignore[union-attr]


def test_a_million_line_trace_holds_arrays_not_objects(tmp_path: Path) -> None:
    """The columns are numpy arrays of fixed-size numbers (no Python object per I/O)."""
    path = tmp_path / "big.csv"
    n = 20_000
    path.write_text("".join(f"1,R,{i * 4096},4096,{1577836800000000 + i}\n" for i in range(n)))
    t = load(path)
    for col in (t.time_ns, t.offset, t.size, t.op, t.volume):
        assert isinstance(col, np.ndarray)
        assert col.dtype != object
        assert col.shape == (n,)
