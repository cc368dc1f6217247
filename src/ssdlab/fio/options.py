"""What fio options do, as far as safety is concerned: which ones a suite file may set (an allow-list of options
that shape the workload), which ones name paths, run commands or pick the engine (never from a suite file, and
at the fio boundary only as the target set them), and whether a finished job file writes.

Option names are fio 3.33's (`fio --cmdhelp=all`, `fio --enghelp=ENGINE`); docs/suites.md lists the allow-list
and tests/unit/test_fio_options.py checks every name against the installed fio.
"""

from __future__ import annotations

from collections.abc import Mapping

# Options a suite file's `options` table may set, with what they shape (docs/suites.md prints this table).
# Everything here changes how the I/O is issued or what the buffers hold, never where it goes: the file or
# device, the engine, the span (size/offset) and the log files are the target's and ssdlab's.
SUITE_FILE_OPTIONS: dict[str, str] = {
    # access pattern (inside the span the target and --capacity/--footprint allow)
    "percentage_random": "random share of a mixed sequential/random workload",
    "random_distribution": "offset distribution (random, zipf:1.2, pareto:0.9, normal:10, zoned:...)",
    "random_generator": "random number generator (tausworthe, lfsr, tausworthe64)",
    "randrepeat": "repeatable random offsets (0/1)",
    "randseed": "seed of the random generators",
    "allrandrepeat": "repeatable random numbers for everything (0/1)",
    "norandommap": "allow repeated random blocks (0/1)",
    "softrandommap": "fall back to norandommap when the random map cannot be allocated (0/1)",
    "rw_sequencer": "how offsets advance for rw=...:N (sequential, identical)",
    "ba": "offset alignment of random I/O",
    "blockalign": "offset alignment of random I/O (alias of ba)",
    # buffer contents
    "zero_buffers": "fill write buffers with zeros (0/1)",
    "refill_buffers": "new random data for every write (0/1)",
    "scramble_buffers": "lightly scramble buffers on every write (0/1)",
    "buffer_compress_percentage": "how compressible the written data is (%)",
    "buffer_compress_chunk": "size of the compressible runs",
    "dedupe_percentage": "share of written blocks that repeat earlier ones (%)",
    "dedupe_mode": "how repeated blocks are chosen (repeat, working_set)",
    "dedupe_working_set_percentage": "working set of repeated blocks (% of the span)",
    "dedupe_global": "share repeated blocks across jobs (0/1)",
    # pacing
    "rate": "bandwidth cap per job (read,write)",
    "rate_min": "minimum bandwidth; a job below it stops",
    "rate_iops": "IOPS cap per job (read,write)",
    "rate_iops_min": "minimum IOPS; a job below it stops",
    "rate_process": "how capped I/O is spaced (linear, poisson)",
    "rate_cycle": "averaging window of the caps (ms)",
    "rate_ignore_thinktime": "caps ignore think time (0/1)",
    "thinktime": "idle time between I/Os (µs)",
    "thinktime_spin": "part of the think time spent spinning (µs)",
    "thinktime_blocks": "I/Os between think times",
    "thinktime_blocks_type": "how thinktime_blocks counts (complete, issue)",
    "thinktime_iotime": "I/O time between think times",
    "latency_target": "lower the queue depth until this latency holds (µs)",
    "latency_window": "time the latency target must hold",
    "latency_percentile": "share of I/Os that must meet the latency target (%)",
    "latency_run": "keep adjusting the queue depth (0/1)",
    "max_latency": "stop a job whose latency exceeds this (µs)",
    # queueing
    "iodepth_batch": "I/Os submitted at once",
    "iodepth_batch_submit": "I/Os submitted at once (alias of iodepth_batch)",
    "iodepth_batch_complete_min": "minimum completions reaped at once",
    "iodepth_batch_complete_max": "maximum completions reaped at once",
    "iodepth_low": "queue refill threshold",
    "serialize_overlap": "wait for overlapping in-flight I/Os (0/1)",
    "io_submit_mode": "submit inline or from a thread pool (inline, offload)",
    # flushing (only matters for writes)
    "fsync": "fsync every N writes",
    "fdatasync": "fdatasync every N writes",
    "end_fsync": "fsync when the job ends (0/1)",
    "fsync_on_close": "fsync when the file is closed (0/1)",
    "sync": "synchronous writes (0, 1/sync, dsync)",
    # CPU and priority
    "cpus_allowed": "CPUs the jobs may run on",
    "cpus_allowed_policy": "how jobs share cpus_allowed (shared, split)",
    "cpumask": "CPU affinity mask",
    "nice": "CPU nice value of the jobs",
    "prio": "I/O priority level",
    "prioclass": "I/O priority class",
    # repetition
    "loops": "run the job this many times",
    "number_ios": "stop after this many I/Os",
    "startdelay": "wait this long before starting",
}

# Why common options are refused, for a one-line message that says what to do instead.
_INSTEAD: dict[str, str] = {
    **dict.fromkeys(("rw", "readwrite", "bs", "blocksize", "bssplit", "iodepth", "numjobs", "rwmixread",
                     "rwmixwrite"), "set it as a matrix axis or phase key"),
    **dict.fromkeys(("size", "filesize", "io_size", "io_limit", "offset", "offset_increment", "offset_align",
                     "fill_device", "fill_fs", "zonemode", "zonerange", "zonesize", "zoneskip", "zonecapacity"),
                    "the span comes from the target, --capacity and --footprint"),
    **dict.fromkeys(("runtime", "time_based", "ramp_time", "timeout"), "use runtime_s / ramp_s (or --runtime)"),
    **dict.fromkeys(("write_bw_log", "write_iops_log", "write_lat_log", "write_hist_log", "log_avg_msec",
                     "log_hist_msec"), "use log_interval_ms / hist_log_ms: ssdlab keeps logs in the point's directory"),
    **dict.fromkeys(("filename", "directory", "filename_format", "opendir", "ioengine", "direct", "buffered"),
                    "the target decides which file or device fio opens and how"),
}

# Options that name files or devices, run commands, pick the engine, change users/cgroups/schedulers or
# create/delete files: a job may carry one only as the target (filename, ioengine, direct) or ssdlab itself
# (log prefixes inside the point directory) set it. fio 3.33 names; the engine-specific ones come from
# `fio --enghelp=ENGINE`. The fio boundary refuses a job that has any other of these.
PATH_OR_COMMAND_OPTIONS: frozenset[str] = frozenset({
    "filename", "directory", "filename_format", "unique_filename", "opendir", "lockfile", "nrfiles", "openfiles",
    "file_service_type", "ioengine", "exec_prerun", "exec_postrun", "write_iolog", "read_iolog",
    "read_iolog_chunked", "replay_redirect", "merge_blktrace_file", "write_bw_log", "write_lat_log",
    "write_iops_log", "write_hist_log", "verify_state_load", "verify_state_save", "cgroup", "cgroup_nodelete",
    "cgroup_weight", "uid", "gid", "ioscheduler", "unlink", "unlink_each_loop", "create_serialize",
    "create_fsync", "create_on_open", "create_only", "allow_file_create", "allow_mounted_write", "fallocate",
    "file_append", "fill_device", "fill_fs", "zonemode", "zone_reset_threshold", "zone_reset_frequency",
    "profile", "buffer_pattern", "verify_pattern", "mem", "iomem", "hugepage-size",
    # engine options (exec, e4defrag, net, ...)
    "program", "arguments", "std_redirect", "grace_time", "donorname", "hostname", "port", "interface",
    "listen", "protocol",
})

# Engines that do ordinary reads and writes on the target's own file or device: a built-in suite may pick one
# of these per stream (ACT runs QD1 streams on psync) when the target itself uses one of them.
LOCAL_ENGINES: frozenset[str] = frozenset({"libaio", "io_uring", "psync", "sync", "pvsync", "pvsync2", "vsync",
                                           "posixaio"})

# Other engines whose reads only read: null (no device), nbd (libnbd reads of the target's NBD export)
READ_ENGINES: frozenset[str] = frozenset({"null", "nbd"})

# fio log options ssdlab sets itself: their values are bare prefixes, so fio writes them into the point's
# directory (its working directory)
SSDLAB_LOG_OPTIONS: frozenset[str] = frozenset({"write_bw_log", "write_lat_log", "write_iops_log",
                                                "write_hist_log"})

# An iolog replay's own options (fio/replay.py), accepted at the fio boundary only as ssdlab sets them: the iolog is
# a file ssdlab wrote (a bare name in the point's directory, fio's working directory, or an absolute path to a
# regular *.iolog file for agents that read it there), and every I/O of it is redirected to the section's own
# file or device, so what the log names plays no part in what fio opens.
REPLAY_OPTIONS: frozenset[str] = frozenset({"read_iolog", "replay_redirect"})


def replay_input_ok(key: str, value: str, options: Mapping[str, object]) -> bool:
    """Whether `key=value` is a replay option as fio/replay.py sets it in a section with these options."""
    if key == "read_iolog":
        from pathlib import Path

        if ":" in value or not value.endswith(".iolog"):
            return False
        if "/" not in value:
            return not value.startswith(".")
        path = Path(value)
        return path.is_absolute() and path.is_file() and ".." not in path.parts
    if key == "replay_redirect":
        return "filename" in options and value == str(options["filename"])
    return False


def replays_readonly(sections: list[Mapping[str, object]]) -> bool:
    """A replay job none of whose sections writes: fio runs it with --readonly, so whatever its iolog holds, fio
    skips every write and trim (iolog.c: 'skips replay of N writes due to read-only')."""
    return any("read_iolog" in s for s in sections) and not any(section_writes(s) for s in sections)


# rw values (before any ':N' modifier) that write or trim
_WRITING_RW = frozenset({"write", "randwrite", "trim", "randtrim", "trimwrite", "randtrimwrite"})
_MIXED_RW = frozenset({"rw", "readwrite", "randrw"})


def suite_option_refusal(key: str) -> str | None:
    """Why a suite file may not set fio option `key` (None: it may)."""
    if key in SUITE_FILE_OPTIONS:
        return None
    instead = _INSTEAD.get(key)
    if instead is None and key in PATH_OR_COMMAND_OPTIONS:
        instead = "it names files or devices, runs commands or changes the host"
    return ("suite files may set only workload-shaping fio options (docs/suites.md lists them)"
            + (f"; {instead}" if instead else ""))


def _number(value: object) -> float | None:
    try:
        return float(str(value).strip().rstrip("%"))
    except ValueError:
        return None


def section_writes(options: Mapping[str, object]) -> str:
    """Why a job section with these (merged) options writes, trims or changes the target ('' when it only reads)."""
    rw_value = str(options.get("rw", options.get("readwrite", "read"))).strip().lower()
    rw = rw_value.split(":", 1)[0]
    if rw in _WRITING_RW:
        what = "trims" if "trim" in rw and rw != "trimwrite" else "writes"
        return f"rw={rw_value} {what}"
    if rw in _MIXED_RW:
        read_pct = _number(options.get("rwmixread", 50))
        write_pct = _number(options.get("rwmixwrite", 0))
        if read_pct != 100 or write_pct:
            return f"rw={rw_value} writes"
    elif rw not in ("read", "randread"):
        return f"rw={rw_value} is not a known read mode"
    trim = _number(options.get("trim_percentage", 0))
    if trim:
        return f"trim_percentage={options['trim_percentage']} trims"
    for key in ("unlink", "unlink_each_loop", "create_only", "file_append", "fill_device", "fill_fs",
                "zone_reset_threshold", "zone_reset_frequency"):
        if key in options and str(options[key]) not in ("0", "false", ""):
            return f"{key}={options[key]} changes the target"
    engine = str(options.get("ioengine", ""))
    if engine and engine not in LOCAL_ENGINES and engine not in READ_ENGINES:
        return f"ioengine={engine} is not a plain read engine"
    return ""

