"""Temperature sampling during a run: how the sample lists are kept bounded."""

from __future__ import annotations

from typing import Any

import pytest

from ssdlab.targets import health


class CountingSnapshotter:
    def __init__(self) -> None:
        self.n = 0

    def sample(self, dev: health.Device, started: float) -> dict[str, Any]:
        self.n += 1
        return {"t": self.n}


def test_the_interval_doubles_once_per_thinning_round_however_many_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "MAX_SAMPLES", 4)
    devices = [health.Device(path=f"/dev/nvme{i}n1", sysdir=None, kind="nvme") for i in range(3)]
    mon = health.Monitor(CountingSnapshotter(), devices, interval_s=1.0)  # type: ignore[arg-type]
    for _ in range(5):  # the fifth round takes every device past 4 samples: each list is thinned once
        mon.sample_round()
    assert mon._interval == 2.0
    samples = mon.samples()
    assert all(len(v) == 3 for v in samples.values())  # every other one of 5 kept
    for _ in range(3):  # 3 -> 5 samples: thinned again in one round, then one more
        mon.sample_round()
    assert mon._interval == 4.0
    assert all(len(v) <= 4 for v in mon.samples().values())
