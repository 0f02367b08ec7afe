"""Running the real fio: one subprocess per job file, JSON to a file, progress from fio's ETA.

raidlab never does I/O itself; every byte moves through fio (Debian package ``fio``). The
command is

    fio --output-format=json --output=OUT.json [--eta=always --eta-newline=1] JOB.fio

run without a shell (an argument list, never ``shell=True``). The JSON goes to a file because
fio prints some error lines into its output stream ahead of the JSON (fio#731, #1685; seen with
3.33: ``fio: pid=..., err=22/file:io_u.c:1876, func=io_u error, error=Invalid argument``), and
the importer tolerates such a preamble anyway.

Progress: with ``--eta=always`` fio writes status lines such as
``Jobs: 1 (f=1): [r(1)][60.0%][r=485MiB/s][r=124k IOPS][eta 00m:02s]`` separated by ``\\r``
(fio's HOWTO, ``--eta``; verified with 3.33: the percentage appears after the first second or
two). raidlab reads the percentage from them and, until fio prints one, estimates progress from
the elapsed time and the workload's run time.

Errors: a missing fio binary, a non-zero exit status, or a job with ``error != 0`` in the JSON
become one :class:`~raidlab.errors.DeviceError` line that quotes fio's own first error line
(e.g. ``fio: io_u error on file F: Invalid argument: read offset=2023000, buflen=1000``) and
adds a hint for the usual causes: EINVAL with O_DIRECT is an alignment problem.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import stat as stat_module
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from raidlab import _core, outputs
from raidlab.errors import ConfigError, DeviceError
from raidlab.inputs import read_bytes, show_path
from raidlab.measure.importer import parse_fio_json
from raidlab.workload.units import show

__all__ = ["FioRun", "find_fio", "fio_version", "run_fio", "DEFAULT_FIO"]

#: The binary looked up on PATH unless ``--fio-binary`` or ``$RAIDLAB_FIO`` names another.
DEFAULT_FIO = "fio"
#: ``fio --version`` prints at once (it reads no job); a binary silent this long is not fio.
VERSION_TIMEOUT_S = 10.0
#: Time a run may take beyond the workload's own run time before raidlab stops fio: laying out
#: the file (fio writes it whole before a read job starts), ramp time and the final sync. A fio
#: that is still running then is stuck (a hung device, a binary that is not fio) and is ended
#: with SIGTERM, then SIGKILL, so 'measure' and 'calibrate' never hang.
RUN_GRACE_S = 600.0

_PERCENT = re.compile(rb"\[([0-9]{1,3}(?:\.[0-9]+)?)%\]")
_ERRNO_HINTS = {
    22: "EINVAL: with O_DIRECT (direct=1) every I/O size and offset must be a multiple of the "
        "device's logical block size{block}; use larger block sizes, or direct=0",
    28: "ENOSPC: the target is full",
    13: "EACCES: permission denied on the target",
    1: "EPERM: operation not permitted on the target",
    30: "EROFS: the target is on a read-only file system",
    95: "EOPNOTSUPP: the file system does not support this (O_DIRECT?)",
}


def find_fio(binary: Optional[str] = None) -> str:
    """The fio executable to run: ``binary``, ``$RAIDLAB_FIO``, or ``fio`` on PATH."""
    if binary is not None and not binary.strip():
        raise ConfigError("--fio-binary is empty: give the path of fio, or leave the option out")
    wanted = binary or os.environ.get("RAIDLAB_FIO") or DEFAULT_FIO
    if os.sep in wanted:
        if os.path.isfile(wanted) and os.access(wanted, os.X_OK):
            return wanted
        raise ConfigError(f"fio binary {wanted} not found or not executable "
                          "(install fio: apt-get install fio, or give --fio-binary PATH)")
    found = shutil.which(wanted)
    if found is None:
        raise ConfigError(f"fio not found: no '{wanted}' on PATH; raidlab measures through fio "
                          "(Debian/Ubuntu: apt-get install fio), or give --fio-binary PATH")
    return found


#: What ``--version`` may print: fio prints one short line (``fio-3.33``); a binary printing more
#: than this is not fio, and raidlab stops reading (and it) rather than fill memory.
VERSION_MAX_BYTES = 4096
#: fio's version line: ``fio-`` and its version (FIO-VERSION-GEN: ``fio-3.33``, ``fio-3.33-dirty``,
#: ``fio-3.33-12-gabcdef0``).
_VERSION = re.compile(r"fio-[0-9][0-9A-Za-z.+_~-]{0,60}")


def _version_output(binary: str) -> Tuple[bytes, int]:
    """What ``binary --version`` printed (stdout and stderr, at most VERSION_MAX_BYTES + 1 bytes)
    and its exit status. The process is killed once it has printed too much or its time is up,
    and the pipe is read only until then: a child holding it open cannot keep raidlab waiting."""
    try:
        process = subprocess.Popen([binary, "--version"], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as error:
        raise ConfigError(f"--fio-binary {show_path(binary)}: cannot run it ({error.strerror or error})") from None
    deadline = time.monotonic() + VERSION_TIMEOUT_S
    printed = bytearray()
    try:
        assert process.stdout is not None
        while len(printed) <= VERSION_MAX_BYTES:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([process.stdout], [], [], left)[0]:
                raise ConfigError(f"{show_path(binary)} --version did not answer within "
                                  f"{VERSION_TIMEOUT_S:g} s: it does not look like fio")
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                break
            printed += chunk
        if len(printed) > VERSION_MAX_BYTES:
            return bytes(printed), 0
        try:
            return bytes(printed), process.wait(max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            raise ConfigError(f"{show_path(binary)} --version did not answer within "
                              f"{VERSION_TIMEOUT_S:g} s: it does not look like fio") from None
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()  # type: ignore[union-attr]


def fio_version(binary: str) -> str:
    """``fio-3.33`` (what ``fio --version`` prints); :class:`ConfigError` for anything else."""
    printed, status = _version_output(binary)
    where = f"--fio-binary {show_path(binary)}"
    if len(printed) > VERSION_MAX_BYTES:
        raise ConfigError(f"{where} printed more than {VERSION_MAX_BYTES} bytes for --version: "
                          "it does not look like fio")
    if status < 0:
        raise ConfigError(f"{where} was killed by signal {-status} on --version: it does not look like fio")
    if status != 0:
        raise ConfigError(f"{where} --version ended with exit status {status}: it does not look like fio")
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    if not lines:
        raise ConfigError(f"{where} printed nothing for --version: it does not look like fio")
    first = lines[0].decode("ascii", "replace")
    if not _VERSION.fullmatch(first):
        raise ConfigError(f"{where} does not look like fio (--version printed "
                          f"'{show_path(first, 60)}', not fio-N.N)")
    return first


@dataclass
class FioRun:
    """One finished fio run: its JSON, its own version string and the text it printed."""

    raw: Dict[str, Any]
    version: str
    job_text: str
    output_text: str
    wall_s: float


def _logical_block(target_path: str) -> str:
    """`` (N bytes on this device)`` from sysfs, or ``""``."""
    try:
        st = os.stat(target_path)
    except OSError:
        try:
            st = os.stat(os.path.dirname(os.path.abspath(target_path)))
        except OSError:
            return ""
    dev = st.st_rdev if stat_module.S_ISBLK(st.st_mode) else st.st_dev
    base = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"
    for candidate in (f"{base}/queue/logical_block_size", f"{base}/../queue/logical_block_size"):
        try:
            with open(candidate) as handle:
                return f" ({handle.read().strip()} bytes here)"
        except OSError:
            continue
    return ""


def _first_error(text: str) -> str:
    """fio's most telling error line from what it printed."""
    lines = [line.strip() for line in re.split(r"[\r\n]+", text) if line.strip()]
    lines = [line for line in lines if not line.startswith("Jobs:")]
    for line in lines:
        if line.startswith("fio:") and not line.startswith("fio: pid="):
            return line
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else ""


def _failure(job_errors: List[int], text: str, status: int, target_path: str) -> DeviceError:
    said = show(_first_error(text), 300) if _first_error(text) else ""
    errno = next((e for e in job_errors if e), 0)
    if not errno:
        match = re.search(r"err=\s*([0-9]+)", text)
        errno = int(match.group(1)) if match else 0
    hint = _ERRNO_HINTS.get(errno, "")
    if "does not support direct" in text:
        hint = "the file system does not support O_DIRECT; use direct=0"
    if "{block}" in hint:
        hint = hint.format(block=_logical_block(target_path))
    where = f"fio failed on {target_path}"
    if not said:
        said = f"exit status {status}" if status else "it exited 0 but wrote no fio JSON output (is it fio?)"
    message = f"{where}: {said}"
    if hint:
        message += f" ({hint})"
    return DeviceError(" ".join(message.split()))


#: What raidlab keeps of fio's own printing (status lines and messages): the first and the last
#: bytes, for the error message. A fio (or a binary posing as fio) printing gigabytes must not
#: fill memory.
PRINTED_HEAD_BYTES = 64 * 1024
PRINTED_TAIL_BYTES = 256 * 1024


class _Printed:
    """fio's printing, bounded: the first :data:`PRINTED_HEAD_BYTES` and the last
    :data:`PRINTED_TAIL_BYTES`."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()

    def append(self, chunk: bytes) -> None:
        room = PRINTED_HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > 2 * PRINTED_TAIL_BYTES:
            del self.tail[:-PRINTED_TAIL_BYTES]

    def text(self) -> str:
        tail = self.tail[-PRINTED_TAIL_BYTES:]
        gap = "\n...\n" if len(self.tail) > len(tail) else ""
        return (bytes(self.head) + gap.encode() + bytes(tail)).decode("utf-8", "replace")


def _read_output(path: str) -> str:
    """fio's JSON output file through the one reader (a regular file, at most the fio JSON
    limit: a FIFO or a directory in its place, or gigabytes, are no output), or ``""``."""
    try:
        return read_bytes(path, "fio JSON").decode("utf-8", "replace")
    except ConfigError:
        return ""


def _errno(value: Any) -> int:
    """A job's ``error`` field as an errno (fio writes an int; anything else counts as 1)."""
    if value in (None, 0, False):
        return 0
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 4096 else 1


def _keep(path: str, output: str, raw: Optional[Dict[str, Any]], target_path: str) -> None:
    """``--fio-output``: fio's JSON document with a ``raidlab`` block saying raidlab kept it (so a
    later run may replace it; :mod:`raidlab.outputs`), or fio's text as printed if it is not JSON."""
    if raw is not None:
        marked = dict(raw)
        marked["raidlab"] = {"kept_by": "raidlab measure --fio-output", "version": _core.__version__,
                             "source": "measured", "tool": "fio", "target": target_path}
        output = json.dumps(marked, indent=2) + "\n"
    outputs.write_text(path, output, "--fio-output", protect=[("--target", target_path)])


def run_fio(job_text: str, target_path: str, *, binary: Optional[str] = None,
            expected_s: float = 0.0, progress: Optional[Callable[[float], None]] = None,
            keep_json: Optional[str] = None) -> FioRun:
    """Runs fio on ``job_text`` and returns its parsed JSON.

    ``progress(fraction)`` (0..1) is called while it runs when given; ``expected_s`` is the
    run time the workload asks for (used until fio reports a percentage). ``keep_json`` copies
    fio's raw JSON output to that path.
    """
    fio = find_fio(binary)
    version = fio_version(fio)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="raidlab-fio-") as work:
        job_path = os.path.join(work, "job.fio")
        out_path = os.path.join(work, "out.json")
        # UTF-8, the encoding fio_target.resolve checked the target name in.
        with open(job_path, "w", encoding="utf-8") as handle:
            handle.write(job_text)
        command = [fio, "--output-format=json", f"--output={out_path}"]
        command += ["--eta=always", "--eta-newline=1"] if progress else ["--eta=never"]
        command.append(job_path)
        try:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, cwd=work)
        except OSError as error:
            raise ConfigError(f"cannot run {fio}: {error.strerror}") from None
        printed = _Printed()
        fraction = [0.0]

        def pump() -> None:
            assert process.stdout is not None
            for chunk in iter(lambda: process.stdout.read1(4096), b""):  # type: ignore[union-attr]
                printed.append(chunk)
                if progress is not None:
                    found = _PERCENT.findall(chunk)
                    if found:
                        fraction[0] = max(fraction[0], min(float(found[-1]) / 100.0, 1.0))

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        deadline_s = max(expected_s, 0.0) * 2 + RUN_GRACE_S
        try:
            while process.poll() is None:
                if time.monotonic() - started > deadline_s:
                    raise DeviceError(f"fio ran for {deadline_s:g} s on {target_path}, far past the workload's "
                                      f"{expected_s:g} s; stopped it (a stuck device, or {fio} is not fio?)")
                if progress is not None:
                    guess = (time.monotonic() - started) / expected_s if expected_s > 0 else 0.0
                    progress(max(fraction[0], min(guess, 0.99)))
                reader.join(0.2)
        except BaseException:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
            raise
        reader.join(5)
        if progress is not None:
            progress(1.0)
        status = process.returncode
        text = printed.text()
        output = _read_output(out_path)
        raw: Optional[Dict[str, Any]] = None
        try:
            raw = parse_fio_json(output, "fio's output")
        except ConfigError:
            raw = None
        jobs = raw.get("jobs") if isinstance(raw, dict) else None
        if not isinstance(jobs, list) or not all(isinstance(job, dict) for job in jobs):
            raw, jobs = None, []  # not fio's JSON: the failure below quotes what fio printed
        if keep_json:
            _keep(keep_json, output, raw, target_path)
        job_errors = [_errno(job.get("error")) for job in jobs]
        all_text = text + "\n" + output[:PRINTED_HEAD_BYTES].split("{", 1)[0]
        if status != 0 or raw is None or any(job_errors):
            raise _failure(job_errors, all_text, status, target_path)
    return FioRun(raw=raw, version=version, job_text=job_text, output_text=text,
                  wall_s=time.monotonic() - started)
