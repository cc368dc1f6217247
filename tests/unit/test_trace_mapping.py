"""A trace placed on a target: offsets refused, wrapped or scaled into the span, aligned for direct I/O, the trace
on each device or striped across them; --speed parsed."""

from __future__ import annotations

import numpy as np
import pytest

from ssdlab.errors import UsageError
from ssdlab.trace.mapping import ReplaySpec, parse_speed, place, replay_record
from ssdlab.trace.model import Trace


def trace(offset: list[int], size: list[int], op: list[int] | None = None) -> Trace:
    n = len(offset)
    return Trace(path="t.csv", format="test", time_ns=np.arange(n, dtype=np.int64) * 1000,
                 offset=np.asarray(offset, np.int64), size=np.asarray(size, np.int64),
                 op=np.asarray(op or [0] * n, np.uint8))


T = trace([0, 8192, 1 << 20, (1 << 30) + 4096], [4096, 4096, 65536, 4096], [0, 1, 0, 1])


def spec(**kw: object) -> ReplaySpec:
    return ReplaySpec(trace="t.csv", **kw)  # type: ignore[arg-type]


def test_refuse_names_the_highest_byte_and_the_way_out() -> None:
    with pytest.raises(UsageError, match=r"addresses up to byte 1073750016 .* offers 1048576 B .*--map wrap"):
        place(T, spec(), [1 << 20], 512, "file:x")
    (p,) = place(T, spec(), [2 << 30], 512, "file:x")
    assert p.offset.tolist() == T.offset.tolist()


def test_wrap_and_scale_keep_every_io_inside_and_aligned() -> None:
    span = 1 << 20
    for mode in ("wrap", "scale"):
        (p,) = place(T, spec(map=mode), [span], 4096, "t")
        end = p.offset + T.size
        assert int(end.max()) <= span
        assert not np.any(p.offset % 4096)
        assert p.rows.tolist() == [0, 1, 2, 3]
    (w,) = place(T, spec(map="wrap"), [span], 4096, "t")
    assert w.offset.tolist()[:2] == [0, 8192]
    assert w.offset.tolist()[3] == 4096  # 2^30 + 4096 wraps round to 4096
    (s,) = place(T, spec(map="scale"), [span], 4096, "t")
    assert s.offset.tolist()[3] == span - 4096  # the highest I/O ends at the span's end


def test_sizes_direct_io_cannot_do_are_refused() -> None:
    odd = trace([0, 512], [512, 4096])
    with pytest.raises(UsageError, match=r"1 I/Os have sizes that are not a multiple of .* \(4096 B; the first is "
                                         r"512 B\)"):
        place(odd, spec(map="wrap"), [1 << 20], 4096, "the target")
    with pytest.raises(UsageError, match=r"1 I/Os start at offsets that are not a multiple"):
        place(trace([0, 512], [4096, 4096]), spec(), [1 << 20], 4096, "t")


def test_each_device_replays_all_or_a_stripe() -> None:
    each = place(T, spec(), [2 << 30, 2 << 30], 1, "t")
    assert [p.rows.tolist() for p in each] == [[0, 1, 2, 3]] * 2
    split = place(T, spec(split=True, stripe=4096), [2 << 30, 2 << 30], 1, "t")
    assert sorted(np.concatenate([p.rows for p in split]).tolist()) == [0, 1, 2, 3]  # each I/O once
    # stripe of 4 KiB over 2 devices: offset 8192 is stripe 2 -> device 0, local 4096
    assert split[0].rows.tolist() == [0, 1, 2]
    assert split[0].offset.tolist() == [0, 4096, 524288]
    assert split[1].rows.tolist() == [3]
    assert split[1].offset.tolist() == [(1 << 29)]
    assert sum(p.counts(T)["read"][0] for p in split) == 2


def test_speed() -> None:
    assert parse_speed(None) == 1.0
    assert parse_speed("2x") == 2.0
    assert parse_speed("0.5") == 0.5
    assert parse_speed("max") is None
    for bad in ("fast", "0", "1.234x", "5000"):
        with pytest.raises(UsageError, match="--speed"):
            parse_speed(bad)


def test_replay_record_names_what_is_missing() -> None:
    exp = [{"read": [2, 8192], "write": [1, 4096], "trim": [0, 0]}]
    ok = replay_record(spec(), T, exp, {"read": (2, 8192), "write": (1, 4096)}, 0.004)
    assert ok["missing"] == []
    assert ok["ios"] == 3
    assert ok["slowdown"] == pytest.approx(0.004 / 0.000003)
    short = replay_record(spec(speed=None), T, exp, {"read": (1, 4096), "write": (1, 4096)}, 0.001)
    assert short["missing"] == ["read: 1 of 2 I/Os, 4096 of 8192 bytes"]
    assert "slowdown" not in short
    assert short["mode"] == "max"
