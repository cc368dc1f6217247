"""CSV and JSON export of stored runs (`ssdlab export RUN [RUN...] --format csv|json`).

Every CSV row names its run (run_id, run_label, target, model; last, so scripts that read the older columns by
position keep working); several runs export into one CSV with one header. JSON is the run itself, or a list
of runs when several are named.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from ssdlab import metrics
from ssdlab.results.model import Measurement, Run, to_dict
from ssdlab.results.naming import target_name

CSV_COLUMNS = [
    "point", "label", "phase", "status", "rw", "bs", "iodepth", "numjobs", "rwmixread", "runtime_s",
    "read_iops", "write_iops", "read_bw_MBps", "write_bw_MBps",
    "read_lat_mean_us", "read_p50_us", "read_p99_us", "read_p99_9_us", "read_p99_99_us", "read_lat_max_us",
    "write_lat_mean_us", "write_p50_us", "write_p99_us", "write_p99_9_us", "write_p99_99_us", "write_lat_max_us",
    "usr_cpu", "sys_cpu", "reason", "run_id", "run_label", "target", "model",
]


# the metrics (ssdlab.metrics) of each direction's columns, rounded to 3 decimals
DIRECTION_METRICS = ("iops", "bw_MBps", "lat_mean_us", "p50_us", "p99_us", "p99_9_us", "p99_99_us", "lat_max_us")


def _dir_cols(m: Measurement) -> dict[str, object]:
    reading = metrics.Reading(m)
    cols: dict[str, object] = {}
    for d in ("read", "write"):
        for base in DIRECTION_METRICS:
            v = metrics.get(f"{d}_{base}").read(reading)
            if v is not None:
                cols[f"{d}_{base}"] = round(v, 3)
    return cols


def rows(run: Run, label: str = "") -> list[dict[str, object]]:
    ident = run.target.get("identity") or {}
    run_cols: dict[str, object] = {
        "run_id": run.run_id, "run_label": label or run.run_id,
        "target": target_name(run.target),
        "model": str(ident.get("model") or "") if isinstance(ident, dict) else "",
    }
    out = []
    for r in run.points:
        w = r.point.workload
        row: dict[str, object] = {
            "point": r.point.id, "label": r.point.label, "phase": r.point.phase, "status": r.status,
            "rw": w.rw, "bs": w.bssplit or w.bs, "iodepth": w.iodepth, "numjobs": w.numjobs,
            "rwmixread": "" if w.rwmixread is None else w.rwmixread,
            "runtime_s": "" if w.runtime_s is None else w.runtime_s, "reason": r.reason, **run_cols,
        }
        m = r.measurement
        if m is not None:
            row.update(_dir_cols(m))
            if m.engine != "sim":  # the model measures no host CPU: empty, not 0
                row["usr_cpu"] = round(m.usr_cpu, 2)
                row["sys_cpu"] = round(m.sys_cpu, 2)
        out.append(row)
    return out


def to_csv(run: Run, label: str = "") -> str:
    return to_csv_many([(run, label)])


def to_csv_many(runs: Sequence[tuple[Run, str]]) -> str:
    """One CSV of several runs: (run, label) pairs, an empty label meaning the run id."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for run, label in runs:
        for row in rows(run, label):
            writer.writerow(row)
    return buf.getvalue()


def to_json(run: Run) -> str:
    return json.dumps(to_dict(run), indent=1) + "\n"


def to_json_many(runs: Sequence[Run]) -> str:
    """The run itself for one run; a JSON list of runs for several."""
    if len(runs) == 1:
        return to_json(runs[0])
    return json.dumps([to_dict(r) for r in runs], indent=1) + "\n"
