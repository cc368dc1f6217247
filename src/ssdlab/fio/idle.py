"""Host idle between fio runs, as the device sees it (PTS HIR's wait states).

A point with `idle_before_s` must leave the device without I/O for that long: from the end of the previous
run's I/O to the start of its own. fio needs some time between being started and issuing its first I/O (and
writes its result after the last one), so sleeping the wait state between two fio processes would idle the
device for longer. IdleTimer learns that start-up time from each run and starts the next fio early by as
much; each run's I/O window comes from fio's own clocks (fio.parse.io_window), so the idle actually achieved
is measured, not assumed, and recorded with the point.
"""

from __future__ import annotations

import time


class IdleTimer:
    """Times the device-side idle between consecutive fio runs of one process."""

    def __init__(self) -> None:
        self._last_end: float | None = None  # Unix time the previous run's I/O ended
        self._startup_s = 0.0  # from starting fio to its first I/O, as the previous run took it

    def wait(self, seconds: float) -> None:
        """Sleep so that the next run's I/O starts `seconds` after the previous run's I/O ended (without a
        previous run in this process, e.g. after a resume, sleep the whole wait: the device idled longer)."""
        if seconds <= 0:
            return
        if self._last_end is None:
            time.sleep(seconds)
            return
        delay = self._last_end + seconds - self._startup_s - time.time()
        if delay > 0:
            time.sleep(delay)

    def observe(self, started: float, window: tuple[float, float] | None) -> float | None:
        """Record a finished run (started: Unix time fio was started; window: its I/O start and end) and
        return the idle before its I/O (None when unknown)."""
        if window is None:
            self._last_end = None
            return None
        io_start, io_end = window
        idle = io_start - self._last_end if self._last_end is not None else None
        self._startup_s = max(0.0, io_start - started)
        self._last_end = io_end
        return max(0.0, idle) if idle is not None else None
