"""Hosts and devices a run went on without (--on-error continue): which left, at which point and why, as the
stored run records them (its points' per-device parts). `resume` leaves them out again; the run's warning names
them."""

from __future__ import annotations

from ssdlab.results.model import Run


def left_run(run: Run) -> dict[str, tuple[str, str]]:
    """Hosts and devices that failed in a point of a run under --on-error continue, so that later points ran
    without them: key -> (point id, reason). The key is a host name when all of its devices failed together
    (the host is left out as a whole), else 'host:device' (the device alone on the local host)."""
    out: dict[str, tuple[str, str]] = {}
    continued = run.options.error_policy == "continue"
    for r in run.points:
        m = r.measurement
        if m is None or not (r.status == "ok" or (r.status == "failed" and continued)):
            continue
        by_host: dict[str, list[bool]] = {}
        for p in m.parts:
            by_host.setdefault(p.host, []).append(p.status == "ok")
        for p in m.parts:
            if p.status != "ok":
                whole = bool(p.host) and not any(by_host.get(p.host, []))
                out.setdefault(p.host if whole else p.key, (r.point.id, p.reason))
    return out


def dropped_in(run: Run) -> dict[str, str]:
    """What a resumed run must leave out again: left_run() as key -> reason."""
    return {k: why for k, (_, why) in left_run(run).items()}


def left_run_warning(run: Run) -> Run:
    """The run with one warning naming every host or device that left it, and where."""
    gone = left_run(run)
    if not gone:
        return run
    text = "; ".join(f"{k} at point {pid} ({why})" for k, (pid, why) in gone.items())
    return run.with_warning(f"{len(gone)} host(s)/device(s) left the run (--on-error continue) and later points "
                            f"ran without them: {text}")
