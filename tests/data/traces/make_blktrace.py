"""Writes the blktrace golden files from the event table below (`python make_blktrace.py` in this directory):
sample.blktrace.0 and sample.blktrace.1 (per-CPU files, as `blktrace -d DEV -o sample` writes them) and
sample-merged.bin (every record in time order in one file, as `blkparse -i sample -d` writes it, and as fio's
read_iolog= replays it). The events are blkparse.txt's, record for record, plus what blkparse does not print
as an I/O: a process-name notify record and an unplug, both with a payload (pdu)."""

from __future__ import annotations

import struct
from pathlib import Path

MAGIC = 0x65617407  # BLK_IO_TRACE_MAGIC | version 7
TA = {"Q": 1, "M": 2, "G": 4, "D": 7, "C": 8, "P": 9, "U": 10, "N": 0}  # __BLK_TA_*, N: a notify
TC_READ, TC_WRITE, TC_SYNC, TC_QUEUE, TC_ISSUE, TC_COMPLETE, TC_NOTIFY, TC_AHEAD, TC_DISCARD, TC_FLUSH = (
    1 << 0, 1 << 1, 1 << 3, 1 << 4, 1 << 6, 1 << 7, 1 << 10, 1 << 11, 1 << 13, 1 << 2)
CATEGORY = {"Q": TC_QUEUE, "M": TC_QUEUE, "G": TC_QUEUE, "P": TC_QUEUE, "U": TC_QUEUE, "D": TC_ISSUE,
            "C": TC_COMPLETE, "N": TC_NOTIFY}
RWBS = {"R": TC_READ, "W": TC_WRITE, "S": TC_SYNC, "A": TC_AHEAD, "D": TC_DISCARD | TC_WRITE, "F": TC_FLUSH,
        "N": 0}


def dev(major: int, minor: int) -> int:
    return (major << 20) | minor


# (cpu, seq, seconds, device, action, rwbs, sector, sectors, pid, pdu)
EVENTS = [
    (1, 0, 0.0, dev(8, 16), "N", "N", 0, 0, 1234, b"fio\0"),
    (1, 1, 0.000000000, dev(8, 16), "Q", "R", 2048, 8, 1234, b""),
    (1, 2, 0.000001000, dev(8, 16), "G", "R", 2048, 8, 1234, b""),
    (1, 3, 0.000002000, dev(8, 16), "D", "R", 2048, 8, 1234, b""),
    (0, 1, 0.000102000, dev(8, 16), "C", "R", 2048, 8, 0, b""),
    (1, 4, 0.000500000, dev(8, 16), "Q", "WS", 4096, 16, 1234, b""),
    (1, 5, 0.000501000, dev(8, 16), "Q", "WS", 4112, 16, 1234, b""),
    (1, 6, 0.000502000, dev(8, 16), "M", "WS", 4112, 16, 1234, b""),
    (1, 7, 0.000600000, dev(8, 16), "D", "WS", 4096, 32, 1234, b""),
    (0, 2, 0.000900000, dev(8, 16), "C", "WS", 4096, 32, 0, b""),
    (1, 8, 0.001000000, dev(8, 16), "Q", "FWS", 0, 0, 1234, b""),
    (1, 9, 0.002000000, dev(8, 32), "Q", "D", 65536, 2048, 4321, b""),
    (1, 10, 0.002100000, dev(8, 32), "D", "D", 65536, 2048, 4321, b""),
    (0, 3, 0.003100000, dev(8, 32), "C", "D", 65536, 2048, 0, b""),
    (1, 11, 0.004000000, dev(8, 16), "Q", "RA", 10000, 256, 1234, b""),
    (1, 12, 0.004000500, dev(8, 16), "P", "N", 0, 0, 1234, b""),
    (1, 13, 0.004001000, dev(8, 16), "U", "N", 0, 0, 1234, struct.pack(">Q", 1)),
    (1, 14, 0.004050000, dev(8, 16), "D", "RA", 10000, 256, 1234, b""),
    (0, 4, 0.004550000, dev(8, 16), "C", "RA", 10000, 256, 0, b""),
]


def record(cpu: int, seq: int, seconds: float, device: int, act: str, rwbs: str, sector: int, sectors: int,
           pid: int, pdu: bytes) -> bytes:
    cats = CATEGORY[act]
    for letter in rwbs:
        cats |= RWBS[letter]
    action = TA[act] | (cats << 16)
    head = struct.pack("<IIQQIIIIIHH", MAGIC, seq, round(seconds * 1e9), sector, sectors * 512, action, pid, device,
                       cpu, 0, len(pdu))
    return head + pdu


def main() -> None:
    here = Path(__file__).resolve().parent
    per_cpu: dict[int, list[bytes]] = {0: [], 1: []}
    merged = []
    for e in sorted(EVENTS, key=lambda e: e[2]):
        r = record(*e)
        per_cpu[e[0]].append(r)
        merged.append(r)
    for cpu, records in per_cpu.items():
        (here / f"sample.blktrace.{cpu}").write_bytes(b"".join(records))
    (here / "sample-merged.bin").write_bytes(b"".join(merged))


if __name__ == "__main__":
    main()
