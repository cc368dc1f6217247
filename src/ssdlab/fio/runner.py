"""Run fio as a subprocess (argv list, no shell), stream its status documents, keep every artefact.

For each point the directory receives job.fio, cmd.txt (the exact command, re-runnable), fio.json (the
final json+ document, byte for byte) and stderr.txt when fio wrote anything there, with stderr.times.json
(when each stderr line arrived).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

from ssdlab.errors import FioFailedError, FioMissingError, ResultsDirError
from ssdlab.fio.job import FioJob
from ssdlab.fio.status import stream_documents
from ssdlab.fio.stderr import write_times
from ssdlab.results import atomic

# called with every JSON document fio prints (status documents, then the final one); returning True asks fio
# to stop early (SIGINT) and finish normally: its final document is the run's result, not an interruption
StatusCallback = Callable[[dict[str, Any]], bool | None]

INSTALL_HINT = "install it with `sudo apt-get install fio` (Debian/Ubuntu) and retry"

# Stop requests from signal handlers (Ctrl-C, SIGTERM). A KeyboardInterrupt raised by a handler can be
# swallowed when it lands in a finalizer or an at-fork hook ("Exception ignored in ..."), so the request is
# also remembered here and checked at safe points: after fio exits and between points.
_stop_state: dict[str, Any] = {"requested": False, "proc": None}


def request_stop() -> None:
    """Signal-handler side: remember the request and ask the running fio, if any, to stop (SIGINT)."""
    _stop_state["requested"] = True
    proc = _stop_state["proc"]
    if proc is not None and proc.returncode is None:
        with contextlib.suppress(OSError):
            proc.send_signal(signal.SIGINT)


def stop_requested() -> bool:
    """Whether a stop was requested since the last clear_stop_request()."""
    return bool(_stop_state["requested"])


def clear_stop_request() -> None:
    """Forget an earlier stop request (a new run starts)."""
    _stop_state["requested"] = False


def fio_binary() -> str:
    path = shutil.which("fio")
    if path is None:
        raise FioMissingError(f"fio was not found on PATH: {INSTALL_HINT}")
    return path


def fio_version(binary: str | None = None) -> str:
    """'fio-3.33' -> '3.33'. Asking fio costs a process start on every command, so the answer is remembered
    per binary (its path, inode, size and modification time: an upgrade or a rebuild asks again)."""
    exe = binary or fio_binary()
    key, identity = _binary_identity(exe)
    cached = _version_cache()
    entry = cached.get(key)
    if identity and isinstance(entry, dict) and entry.get("identity") == identity and entry.get("version"):
        return str(entry["version"])
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20, check=False)
    except OSError as exc:
        raise FioMissingError(f"fio could not be started ({exc}): {INSTALL_HINT}") from exc
    text = out.stdout.strip()
    version = text.removeprefix("fio-") or "unknown"
    if identity and out.returncode == 0 and version != "unknown":
        cached.pop(key, None)
        cached[key] = {"identity": identity, "version": version}
        _save_version_cache(dict(list(cached.items())[-VERSION_CACHE_ENTRIES:]))
    return version


VERSION_CACHE_ENTRIES = 8  # binaries remembered (the newest)


def _binary_identity(exe: str) -> tuple[str, list[int]]:
    """(resolved path, [device, inode, size, mtime_ns]); an empty identity when the binary cannot be looked at."""
    path = shutil.which(exe) or exe
    try:
        real = Path(path).resolve()
        st = real.stat()
    except (OSError, RuntimeError):
        return path, []
    return str(real), [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def version_cache_path() -> Path:
    """$XDG_CACHE_HOME/ssdlab/fio-versions.json (~/.cache by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ssdlab" / "fio-versions.json"


def _version_cache() -> dict[str, Any]:
    try:
        data = json.loads(version_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError, RuntimeError):  # none yet, unreadable, or no home directory
        return {}
    return data if isinstance(data, dict) else {}


def _save_version_cache(data: dict[str, Any]) -> None:
    """Best effort: a cache that cannot be written is asked for again next time."""
    with contextlib.suppress(ResultsDirError, OSError, RuntimeError):  # OSError: its directory cannot be made
        atomic.write_text(version_cache_path(), json.dumps(data, indent=1), durable=False)


def engine_available(engine: str, binary: str | None = None) -> bool:
    """Whether this fio has the I/O engine `engine` (e.g. 'nbd' needs fio built with libnbd)."""
    exe = binary or fio_binary()
    try:
        out = subprocess.run([exe, f"--enghelp={engine}"], capture_output=True, text=True, timeout=20, check=False)
    except OSError:
        return False
    return out.returncode == 0


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _child_setup() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In fio's process: take Ctrl-C/SIGTERM again (blocked around the fork) and ask the kernel to kill
    fio if ssdlab dies (kill -9), so an orphan never keeps writing."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@contextlib.contextmanager
def fio_process(argv: list[str], cwd: Path, *, errors: str | None = None) -> Iterator[subprocess.Popen[str]]:
    """fio (argv, stdout and stderr piped as text) running for the `with` block, the one way ssdlab starts it.

    Ctrl-C/SIGTERM are held back while forking: a KeyboardInterrupt raised inside Popen's at-fork hooks would
    be printed as "Exception ignored" and could leave fio running unobserved. A signal that arrives meanwhile
    is delivered when the mask is restored, where fio is stopped cleanly. fio dies with ssdlab (_child_setup);
    request_stop() reaches it while the block runs; any exception stops it (_stop), and a stop requested
    during the block raises KeyboardInterrupt when the block ends (a stopped fio's result is not a finished
    point)."""
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors=errors,
                                cwd=cwd, start_new_session=True, preexec_fn=_child_setup)
    except OSError as exc:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        raise FioMissingError(f"fio could not be started ({exc}): {INSTALL_HINT}") from exc
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        raise
    _stop_state["proc"] = proc
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        if stop_requested():  # the request came while fio was being started
            request_stop()
        yield proc
        if stop_requested():  # fio was stopped early: its result is not a finished point
            raise KeyboardInterrupt
    except BaseException:
        _stop(proc)
        raise
    finally:
        _stop_state["proc"] = None


class JobGate(Protocol):
    """The run's write gate (safety.WriteGrant): raises UnsafeTargetError for a job the run may not start;
    `holding` checks it and keeps what it opens open while fio runs (so it cannot become something else)."""

    def check_job(self, job: FioJob, where: Path | None = None) -> None: ...

    def holding(self, job: FioJob, where: Path | None = None) -> contextlib.AbstractContextManager[None]: ...


def run_job(job: FioJob, point_dir: Path, *, gate: JobGate, status_interval: float | None = 1.0,
            on_status: StatusCallback | None = None, binary: str | None = None, readonly: bool = False) -> str:
    """Run `job`, store its artefacts in `point_dir`, return the final JSON document text.

    `gate` sees the job first: nothing is written and fio is not started unless it passes. `readonly` adds
    fio's own --readonly guard (fio then refuses any write or trim in the job). When fio fails, the
    FioFailedError carries fio's last JSON document (`output`), which is also kept as fio.json: the I/O a
    failed point did finish is not lost."""
    with gate.holding(job, point_dir):  # checked (fio runs in point_dir), its devices held until fio ends
        return _run_checked(job, point_dir, status_interval=status_interval, on_status=on_status, binary=binary,
                            readonly=readonly)


def _run_checked(job: FioJob, point_dir: Path, *, status_interval: float | None, on_status: StatusCallback | None,
                 binary: str | None, readonly: bool) -> str:
    """run_job after the gate: the artefacts, fio itself, its final document."""
    if not readonly:  # a replay that does not write: fio skips any write its iolog might hold
        from ssdlab.fio.options import replays_readonly

        readonly = replays_readonly([{**job.global_options, **s.options} for s in job.jobs])
    point_dir.mkdir(parents=True, exist_ok=True)
    job_path = point_dir / "job.fio"
    atomic.write_text(job_path, job.render(), durable=False)  # made durable with fio's output after fio ends
    argv = _argv(binary or fio_binary(), job_path, status_interval, readonly=readonly)
    cmd_path = point_dir / "cmd.txt"
    atomic.write_text(cmd_path, shlex.join(argv) + "\n", durable=False)
    stderr_path = point_dir / "stderr.txt"
    started = datetime.now(UTC).isoformat(timespec="milliseconds")
    times: list[float] = []
    early: list[bool] = []  # the caller asked fio to stop early (see StatusCallback)
    returncode, final = _run(argv, point_dir, stderr_path, on_status, early, times)
    stderr = stderr_path.read_text(encoding="utf-8", errors="replace")
    if not stderr.strip():
        stderr_path.unlink()
    elif times:
        write_times(point_dir, started, times)
    kept = [job_path, cmd_path]
    if final:  # kept even when fio failed: what the point did finish stays with it
        atomic.write_text(point_dir / "fio.json", final, durable=False)
        kept.append(point_dir / "fio.json")
    if stderr_path.exists():
        kept.append(stderr_path)
    # on disk in the background, before the point's record (atomic.flush_later keeps their order), so the next
    # point does not wait for the disk
    atomic.flush_later([*kept, point_dir])
    if (returncode != 0 and not (early and final)) or not final:  # fio may exit non-zero when stopped early
        lines = [ln for ln in stderr.splitlines() if ln.strip()]
        first = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "")
        tail = first or f"exit status {returncode}"
        raise FioFailedError(f"fio failed: {tail}", cmd=argv, returncode=returncode, stderr=stderr, output=final)
    return final


def _argv(exe: str, job_path: Path, status_interval: float | None, *, readonly: bool) -> list[str]:
    argv = [exe, "--output-format=json+"]
    if readonly:
        argv.append("--readonly")
    if status_interval:
        argv.append(f"--status-interval={status_arg(status_interval)}")
    argv.append(str(job_path.resolve()))
    return argv


def _run(argv: list[str], point_dir: Path, stderr_path: Path, on_status: StatusCallback | None,
         early: list[bool], times: list[float]) -> tuple[int, str]:
    """fio's exit status and its last JSON document; its stderr is copied to `stderr_path` as it comes."""
    t0 = time.monotonic()
    proc: subprocess.Popen[str] | None = None
    drain: threading.Thread | None = None
    try:
        with fio_process(argv, point_dir, errors="replace") as proc:
            # stderr is drained by a thread into stderr.txt as it comes (a chatty fio never blocks on a full
            # pipe), noting when each line arrived: fio reports verify failures and I/O errors only there
            drain = threading.Thread(target=_drain_stderr, args=(proc, stderr_path, t0, times), daemon=True)
            drain.start()
            final = _read_stream(proc, on_status, early)
            return proc.wait(), final
    finally:  # after fio was stopped, if it had to be
        if drain is not None:
            drain.join(timeout=30)
        if proc is not None:
            for stream in (proc.stdout, proc.stderr):
                if stream:
                    with contextlib.suppress(OSError):
                        stream.close()


def _drain_stderr(proc: subprocess.Popen[str], path: Path, t0: float, times: list[float]) -> None:
    """Copy fio's stderr to `path` line by line, recording the seconds since `t0` of each line."""
    assert proc.stderr is not None
    fh: IO[str] | None = None
    try:
        fh = path.open("w", encoding="utf-8")
    except OSError:
        fh = None  # the pipe is still drained, or fio would block on it
    try:
        for line in proc.stderr:
            times.append(time.monotonic() - t0)
            if fh is not None:
                try:
                    fh.write(line)
                    fh.flush()
                except OSError:  # e.g. the disk filled up: keep reading so fio can finish
                    with contextlib.suppress(OSError):
                        fh.close()
                    fh = None
    finally:
        if fh is not None:
            fh.close()


def status_arg(seconds: float) -> str:
    """--status-interval value: whole seconds (at least 1) as before, sub-second or fractional ones in ms."""
    if seconds >= 1 and seconds == int(seconds):
        return str(int(seconds))
    return f"{max(100, round(seconds * 1000))}ms"


def _read_stream(proc: subprocess.Popen[str], on_status: StatusCallback | None, early: list[bool]) -> str:
    """Split stdout into JSON documents (fio.status.documents); return the last one's text. A callback that
    returns True stops fio early (SIGINT, once); reading goes on to its final document."""
    assert proc.stdout is not None
    last = ""
    for text, doc in stream_documents(proc.stdout.fileno()):
        last = text
        if on_status is not None and on_status(doc) and not early:
            early.append(True)
            with contextlib.suppress(OSError):
                proc.send_signal(signal.SIGINT)
    return last


def _stop(proc: subprocess.Popen[str]) -> None:
    """Stop fio cleanly (SIGINT lets it finish its accounting), then forcefully."""
    for sig, wait in ((signal.SIGINT, 10.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
