"""fio 3.x JSON output → raidlab's result document (the shape ``raidlab sim --json`` prints).

The schema *is* fio's own JSON (``--output-format=json``; fio-3.33
``stat.c`` ``show_thread_status_json``),
so a measured run keeps every field fio wrote and simulated and measured runs read the same
way: ``jobs[]`` with ``read``/``write``/``sync`` (``iops``, ``bw_bytes``, ``bw`` in KiB/s,
``runtime`` in ms, ``clat_ns``/``lat_ns`` with ``percentile`` keys such as ``"99.000000"``),
``disk_util[]``, ``"fio version"``. raidlab adds a ``raidlab`` block whose ``source`` is
``"measured"`` (tool, tool version, target, host, job file, notes, where it was imported from).

What the importer fixes up, each for a reason:

- a **preamble** before the JSON: fio prints some error lines into its output stream ahead of
  the document (fio#731, #1685; 3.33 writes e.g. ``fio: pid=0, err=20/file:filesetup.c:455,
  func=fstat, error=Not a directory`` there), and people paste runs with a shell prompt or
  ``--status-interval`` text in front. The document starts at the first line that begins with
  ``{``. ``--status-interval`` writes several concatenated documents (fio#672), each one
  cumulative, so raidlab takes the last complete one; other trailing text is ignored.
- ``sync.total_ios`` is always 0 in fio 3.33's JSON (verified: 576 fdatasyncs reported as
  ``"total_ios": 0`` with ``"lat_ns": {"N": 576}``; ``stat.c`` prints
  ``ts->total_io_u[DDIR_SYNC]``, which is not the fsync count), so raidlab takes the larger of
  it and ``sync.lat_ns.N``.
- fields raidlab's reports read but an older 3.x lacks (``sync``, ``drop_ios``, ``short_ios``)
  are added as zeros. ``disk_util`` entries keep fio's fields only: fio does not report the
  ``flush_ios``, ``read_sectors``/``write_sectors`` and ``queue_depth_mean`` the simulator
  adds, so those keys are absent (tables show ``-``) rather than guessed.
- a job without a ``read`` or ``write`` section (fio 3.x writes read, write and trim for every
  job, so one was cut from the file) gets a note that those figures are unknown, not 0; the
  tables leave the direction out rather than show zeros.
- fio 2.x JSON (latencies in µs under ``slat``/``clat``/``lat``, no ``*_ns``) is refused with
  a clear message rather than silently rescaled.
- client/server runs (``fio --client``) put their jobs under ``client_stats``; those are read,
  each job name prefixed with its ``hostname``.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from raidlab.errors import ConfigError
from raidlab.inputs import MAX_NESTING, nesting, parse_json, read_bytes, read_stdin, show_path
from raidlab.report import headline

__all__ = ["parse_fio_json", "to_document", "load", "RAIDLAB_KEYS"]

_DIRECTIONS = ("read", "write")
#: Where _job marks the directions a fio job had no section for, until to_document takes it.
_MISSING = "raidlab missing sections"
_ZERO_LATENCY = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
#: Keys of the ``raidlab`` block of a measured run.
RAIDLAB_KEYS = ("source", "tool", "tool_version", "version", "target", "hostname", "timestamp",
                "job_file", "workload", "notes", "imported_from")


#: Where a document may start: a '{' that opens a line (fio pretty-prints the top level so)
#: and is followed by a key or the closing brace.
_DOCUMENT_START = re.compile(r'(?:^|(?<=\r))\{\s*["}]', re.MULTILINE)
#: Places that look like a document's start but do not decode that are tried before giving up:
#: each failed try costs a pass over the text before it (the decoder counts lines for its
#: message), and fio's own preamble (warnings, a job listing) holds none or a few.
_TRIES = 200


def _documents(text: str) -> List[Dict[str, Any]]:
    decoder = json.JSONDecoder()
    found: List[Dict[str, Any]] = []
    position, failed = 0, 0
    while True:
        match = _DOCUMENT_START.search(text, position)
        if match is None:
            break
        if failed == _TRIES:
            raise ConfigError(f"gave up after {_TRIES} lines that start like a JSON object but do not "
                              "decode: cut the text before fio's document")
        start = match.start()
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position, failed = start + 1, failed + 1
            continue
        except RecursionError:
            raise _too_deep() from None
        if isinstance(value, dict):
            found.append(value)
        position = end
    return found


def parse_fio_json(text: str, what: str = "input") -> Dict[str, Any]:
    """The fio document in ``text``, skipping any non-JSON preamble (see the module docstring)."""
    if not isinstance(text, str):
        raise ConfigError(f"{what} must be text")
    stripped = text.lstrip()
    candidates: List[Dict[str, Any]] = []
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
            if isinstance(value, dict):
                candidates = [value]
        except json.JSONDecodeError:
            candidates = []
        except RecursionError:
            raise _too_deep(what) from None
    if not candidates:
        candidates = _documents(text)
    documents = [c for c in candidates if "jobs" in c or "client_stats" in c]
    if not documents:
        if candidates or "{" in text:
            raise ConfigError(f"{what} is not fio JSON output: no document with \"jobs\" "
                              "(was fio run with --output-format=json?)")
        raise ConfigError(f"{what} is not fio JSON output (was fio run with --output-format=json?)")
    if nesting(documents[-1]) > MAX_NESTING:
        raise _too_deep(what)
    return documents[-1]


def _too_deep(what: str = "input") -> ConfigError:
    return ConfigError(f"{what}: JSON nested more than {MAX_NESTING} levels deep")


#: The largest integer a count may be: what a 64-bit counter holds (fio's are uint64_t); JSON
#: integers are unbounded and larger ones overflow a float.
_LARGEST = (1 << 64) - 1


def _number(value: Any, where: str) -> float:
    """A count, rate, time or percentage fio wrote: a finite number, never negative."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"fio JSON: {where} is not a number (got {_short(value)})")
    if isinstance(value, int) and value > _LARGEST:
        raise ConfigError(f"fio JSON: {where} is out of range, got {_short(value)}")
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"fio JSON: {where} must be a finite number of at least 0, got {_short(value)}")
    return value


def _short(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _latency(stats: Dict[str, Any], key: str, where: str) -> Dict[str, Any]:
    value = stats.get(key)
    if value is None:
        return dict(_ZERO_LATENCY)
    if not isinstance(value, dict):
        raise ConfigError(f"fio JSON: {where}.{key} is not an object")
    for field in ("min", "max", "mean", "N"):
        if field in value:
            _number(value[field], f"{where}.{key}.{field}")
    percentile = value.get("percentile")
    if percentile is not None and not isinstance(percentile, dict):
        raise ConfigError(f"fio JSON: {where}.{key}.percentile is not an object")
    for name, number in (percentile or {}).items():
        _number(number, f"{where}.{key}.percentile.{name}")
    return value


def _direction(job: Dict[str, Any], name: str, where: str) -> Dict[str, Any]:
    stats = job.get(name)
    if stats is None:
        stats = {}
    if not isinstance(stats, dict):
        raise ConfigError(f"fio JSON: {where}.{name} is not an object")
    if ("clat" in stats or "lat" in stats) and "clat_ns" not in stats and "lat_ns" not in stats:
        raise ConfigError("fio 2.x JSON (latencies in µs, no clat_ns) is not supported; "
                          "raidlab reads fio 3.x output")
    out = dict(stats)
    for field in ("io_bytes", "bw_bytes", "bw", "iops", "runtime", "total_ios"):
        out[field] = _number(stats.get(field, 0), f"{where}.{name}.{field}")
    out.setdefault("io_kbytes", int(out["io_bytes"]) // 1024)
    out.setdefault("short_ios", 0)
    out.setdefault("drop_ios", 0)
    for key in ("slat_ns", "clat_ns", "lat_ns"):
        out[key] = _latency(stats, key, f"{where}.{name}")
    return out


def _sync(job: Dict[str, Any], where: str) -> Dict[str, Any]:
    stats = job.get("sync")
    if stats is None:
        return {"total_ios": 0, "lat_ns": dict(_ZERO_LATENCY)}
    if not isinstance(stats, dict):
        raise ConfigError(f"fio JSON: {where}.sync is not an object")
    out = dict(stats)
    out["lat_ns"] = _latency(stats, "lat_ns", f"{where}.sync")
    count = _number(stats.get("total_ios", 0), f"{where}.sync.total_ios")
    out["total_ios"] = max(int(count), int(out["lat_ns"].get("N", 0) or 0))
    return out


def _job(job: Any, index: int, host: Optional[str]) -> Dict[str, Any]:
    where = f"jobs[{index}]"
    if not isinstance(job, dict):
        raise ConfigError(f"fio JSON: {where} is not an object")
    if not isinstance(job.get("job options", {}), dict):
        raise ConfigError(f"fio JSON: {where}[\"job options\"] is not an object")
    out = dict(job)
    name = job.get("jobname", f"job{index}")
    out["jobname"] = f"{host}/{name}" if host else str(name)
    out.setdefault("groupid", 0)
    out.setdefault("error", 0)
    out.setdefault("elapsed", 0)
    # fio 3.x writes read, write and trim for every job (stat.c show_thread_status_json), so a
    # missing one was cut from the file: its figures are unknown. Its stand-in counts nothing
    # (the tables leave out a direction without I/O) and run_notes says it is missing.
    missing = [direction for direction in _DIRECTIONS if job.get(direction) is None]
    if missing:
        out[_MISSING] = missing
    for direction in _DIRECTIONS:
        out[direction] = _direction(job, direction, where)
    if "trim" in job and isinstance(job["trim"], dict):
        out["trim"] = _direction(job, "trim", where)
    out["sync"] = _sync(job, where)
    return out


def run_notes(document: Dict[str, Any], missing: Optional[Dict[int, List[str]]] = None) -> List[str]:
    """What a reader of an imported fio run must know that its table does not show: a job fio
    reports as failed (its ``error``, an errno), a direction's section missing from the file
    (its figures are unknown, not 0), a job that did no I/O at all (fio could not start it),
    and trims (the table shows reads, writes and syncs). ``missing``: the directions each job
    (by index) had no section for."""
    notes = []
    for index, job in enumerate(document["jobs"]):
        name = job["jobname"]
        absent = (missing or {}).get(index, [])
        notes += [f"job {name!r} has no {direction!r} section (fio writes one for every job): its "
                  f"{direction}s are unknown, not 0, and are left out" for direction in absent]
        error = job.get("error", 0)
        if isinstance(error, (int, float)) and not isinstance(error, bool) and error:
            meaning = os.strerror(int(error)) if 0 < error < 4096 else "unknown"
            notes.append(f"job {name!r} ended with fio error {int(error)} ({meaning}): its figures are "
                         f"what it did before the error")
        trims = job["trim"]["total_ios"] if isinstance(job.get("trim"), dict) else 0
        done = sum(job[d]["total_ios"] for d in _DIRECTIONS) + job["sync"]["total_ios"] + trims
        if not done and not absent:
            notes.append(f"job {name!r} did no I/O: fio may have failed to start it (see its messages)")
        elif trims:
            notes.append(f"job {name!r} trimmed {trims:,} times; the table shows reads, writes and syncs only")
    return notes


def _disk(entry: Any, index: int) -> Dict[str, Any]:
    if not isinstance(entry, dict):
        raise ConfigError(f"fio JSON: disk_util[{index}] is not an object")
    out = {key: value for key, value in entry.items() if value is not None}
    out["name"] = str(out.get("name", f"disk{index}"))
    for field in ("read_ios", "write_ios", "util"):
        out[field] = _number(entry.get(field, 0), f"disk_util[{index}].{field}")
    for field in ("flush_ios", "queue_depth_mean"):  # raidlab's own documents only
        if field in out:
            _number(out[field], f"disk_util[{index}].{field}")
    return out


def to_document(raw: Dict[str, Any], block: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """raidlab's document for a parsed fio run; ``block`` becomes (or updates) ``raidlab``.

    A document raidlab wrote itself (it has a ``raidlab`` block) keeps its block (only
    ``imported_from`` is added), so a simulated run stays a simulated run.
    """
    if not isinstance(raw, dict):
        raise ConfigError("fio JSON: the document is not an object")
    _check_finite(raw)
    raw = copy.deepcopy(raw)
    if "client_stats" in raw and "jobs" not in raw:
        entries = raw.pop("client_stats")
        if not isinstance(entries, list):
            raise ConfigError("fio JSON: client_stats is not a list")
        jobs = [_job(job, i, str(job.get("hostname", "client")) if isinstance(job, dict) else None)
                for i, job in enumerate(entries)
                if not (isinstance(job, dict) and job.get("jobname") == "All clients")]
    else:
        entries = raw.get("jobs")
        if not isinstance(entries, list):
            raise ConfigError("fio JSON: \"jobs\" is not a list")
        jobs = [_job(job, i, None) for i, job in enumerate(entries)]
    if not jobs:
        raise ConfigError("fio JSON has no jobs")
    missing = {index: job.pop(_MISSING) for index, job in enumerate(jobs) if _MISSING in job}
    disks = raw.get("disk_util") or []
    if not isinstance(disks, list):
        raise ConfigError("fio JSON: disk_util is not a list")
    document = dict(raw)
    document["fio version"] = str(raw.get("fio version", "fio-unknown"))
    document.setdefault("global options", {})
    if not isinstance(document["global options"], dict):
        raise ConfigError("fio JSON: \"global options\" is not an object")
    document["jobs"] = jobs
    document["disk_util"] = [_disk(d, i) for i, d in enumerate(disks)]
    existing = raw.get("raidlab")
    if isinstance(existing, dict):
        # A document raidlab wrote (simulated or measured) keeps its own block.
        merged = dict(existing)
        if block and block.get("imported_from"):
            merged["imported_from"] = block["imported_from"]
    else:
        merged = dict(block or {})
    document["raidlab"] = merged
    _check_shape(document, _DOCUMENT, "")
    if is_simulated(document):
        _check_simulated(document)
    else:
        # What a measured run's table does not show (a failed job, no I/O, trims) goes with it.
        notes = list(merged.get("notes") or [])
        merged["notes"] = notes + [note for note in run_notes(document, missing) if note not in notes]
    # The headline every output shows, recomputed from the document's own data (a stored one
    # is not trusted): over the whole run, or, for a run raidlab simulated whose headline was
    # its steady state (compare's, plan's), over the steady state its document records.

    stored = existing.get("headline") if isinstance(existing, dict) else None
    steady = is_simulated(document) and isinstance(stored, dict) and str(stored.get("basis", "")).startswith("steady")
    merged["headline"] = headline.compute(document, steady=steady)
    return document


def is_simulated(document: Dict[str, Any]) -> bool:
    """Whether a document is a raidlab simulation's (not a measured or imported fio run)."""
    block = document.get("raidlab") or {}
    return "simulated_ns" in block and block.get("source") != "measured"


# -- the one schema of what the reports read -------------------------------------------------
#
# Every field of a document that a report reads (raidlab.report.table, .html, .timeline and
# raidlab.measure.report), with its type: a number (finite, at least 0), a member index or a
# whole number, a string, a boolean, ``_ANY`` (printed as it is), an object (a dict of its
# fields: absent or null fields are allowed) or a list of one kind ([kind]). The jobs and the
# disks are read by _job and _disk above; what a simulated run's table needs present is
# _check_simulated's. A wrongly typed field is one line that names its path.

_NUM, _INDEX, _WHOLE, _STR, _BOOL, _ANY = "a number", "a member index", "a whole number", "a string", "a boolean", "any"


class _Object(dict):
    """An object's fields, of which the ``needed`` ones must be there: a report reads them
    without a default."""

    def __init__(self, fields: Dict[str, Any], needed: Sequence[str] = ()) -> None:
        super().__init__(fields)
        self.needed = tuple(needed)


#: An object of numbers under any names (a latency's percentiles, "99.000000": ns).
_NUMBERS = "numbers by name"
_LATENCY_OBJECT = {"min": _NUM, "max": _NUM, "mean": _NUM, "N": _NUM, "percentile": _NUMBERS}
_STATS = {key: _NUM for key in ("total_ios", "iops", "io_bytes", "bw_bytes", "bw", "runtime")}
_STATS["clat_ns"] = _LATENCY_OBJECT
_WORKLOAD = {"source": {"tool": _STR, "text": _STR}, "jobs": [{}]}
_CONFIG = {
    "array": {"level": _ANY, "devices": _WHOLE, "layout": _STR, "chunk_kib": _WHOLE},
    "controller": {"kind": _STR, "cache_mib": _NUM, "bbu": _BOOL},
    "failed": [_INDEX], "timeline": [{"action": _STR, "member": _INDEX, "at_s": _NUM}],
    # rebuild.hot_spare: what documents written before the recorded configuration used the
    # declared names (spare) call it.
    "rebuild": {"spare": _BOOL, "hot_spare": _BOOL}, "workload": _WORKLOAD, "scheduler": _STR, "drive": _ANY,
}
_BLOCK = {
    "source": _STR, "tool": _STR, "tool_version": _STR, "version": _STR, "target": _STR,
    "hostname": _STR, "imported_from": _STR, "notes": [_STR], "seed": _WHOLE, "events": _NUM,
    "simulated_ns": _NUM, "truncated": _STR, "workload": _WORKLOAD, "config": _CONFIG,
    "array": {}, "controller": {}, "rebuild": {},
}
_DOCUMENT = {
    "time": _ANY, "raidlab": _BLOCK,
    "array_device": {"name": _STR, **{key: _NUM for key in (
        "read_ios", "write_ios", "read_merges", "write_merges", "read_sectors", "write_sectors",
        "read_time_ns", "write_time_ns", "queue_depth_mean", "util", "flush_ios", "measured_ns")}},
    "phases": [{"name": _STR, "start_s": _NUM, "end_s": _NUM, "read": _STATS, "write": _STATS}],
    "rebuild": {"member": _INDEX, "extrapolated": _BOOL, "extrapolated_by": _STR, **{key: _NUM for key in (
        "start_s", "end_s", "duration_s", "rate_kib_s", "progress_pct", "member_bytes", "aborted_s")}},
    "data_loss": {"at_s": _NUM, "failed_members": [_INDEX], "why": _STR},
    "drive_events": [_Object({"at_s": _NUM, "member": _INDEX, "event": _STR}, needed=("at_s", "member", "event"))],
    "timeline": [_Object({key: _NUM for key in ("t_s", "read_iops", "write_iops", "latency_ms_p50",
                                                "latency_ms_p99", "rebuild_pct")}, needed=("t_s",))],
    "page_cache": {key: _NUM for key in ("ram_bytes", "hit_ratio", "read_from_array_bytes", "written_back_bytes",
                                         "throttled_ns", "peak_dirty_bytes")},
    "host": _Object({key: _NUM for key in ("iops_burst_end_s", "bytes_burst_end_s", "ios", "delayed_ios",
                                           "io_balance", "byte_balance")},
                    needed=("ios", "delayed_ios", "io_balance", "byte_balance")),
    "steady_state": {},
}


def _leaf_ok(value: Any, kind: str) -> bool:
    if kind == _NUM:
        return not isinstance(value, bool) and isinstance(value, (int, float))
    if kind in (_INDEX, _WHOLE):
        return not isinstance(value, bool) and isinstance(value, int) and value >= 0
    return kind == _ANY or isinstance(value, {_STR: str, _BOOL: bool}[kind])


def _check_shape(value: Any, kind: Any, where: str) -> None:
    """``value`` is of ``kind`` (see the schema above); raises one line naming the first field
    that is not."""
    if isinstance(kind, dict):
        if not isinstance(value, dict):
            raise ConfigError(f"fio JSON: {where} is not an object")
        for key in getattr(kind, "needed", ()):
            if key not in value:
                raise ConfigError(f"fio JSON: {where}.{key} is missing")
        for key, inner in kind.items():
            if value.get(key) is not None:
                _check_shape(value[key], inner, f"{where}.{key}" if where else key)
    elif isinstance(kind, list):
        _check_list(value, kind[0], where)
    elif kind == _NUMBERS:
        if not isinstance(value, dict):
            raise ConfigError(f"fio JSON: {where} is not an object")
        for name, number in value.items():
            _number(number, f"{where}.{name}")
    elif kind == _NUM:
        _number(value, where)
    elif not _leaf_ok(value, kind):
        raise ConfigError(f"fio JSON: {where} is not {kind} (got {_short(value)})")


def _check_list(value: Any, kind: Any, where: str) -> None:
    plural = "objects" if isinstance(kind, dict) else {_STR: "strings", _INDEX: "member indices"}.get(kind, kind)
    if not isinstance(value, list):
        raise ConfigError(f"fio JSON: {where} is not a list of {plural}")
    if not isinstance(kind, dict):
        if not all(_leaf_ok(item, kind) for item in value):
            raise ConfigError(f"fio JSON: {where} is not a list of {plural}")
        return
    if not all(isinstance(item, dict) for item in value):
        raise ConfigError(f"fio JSON: {where} is not a list of objects")
    for index, item in enumerate(value):
        _check_shape(item, kind, f"{where}[{index}]")


def _check_finite(document: Dict[str, Any]) -> None:
    """No NaN or Infinity anywhere: RFC 8259 JSON has neither and fio never writes them, and
    raidlab's own JSON output must stay JSON. The message names the first one's path."""
    stack: List[Any] = [(document, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"fio JSON: {where.lstrip('.')} is {_short(value)}, which is not a JSON number")
        if isinstance(value, dict):
            stack.extend((item, f"{where}.{key}") for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{index}]") for index, item in enumerate(value))


def _fields(value: Any, where: str, numbers: Sequence[str], present: Sequence[str] = ()) -> Dict[str, Any]:
    """``value`` is an object with a number at each of ``numbers`` and any value at ``present``."""
    if not isinstance(value, dict):
        raise ConfigError(f"fio JSON: {where} is not an object")
    for key in present:
        if key not in value:
            raise ConfigError(f"fio JSON: {where}.{key} is missing")
    for key in numbers:
        _number(value.get(key), f"{where}.{key}")
    return value


def _check_simulated(document: Dict[str, Any]) -> None:
    """The fields the table of a simulated run shows (``raidlab.report.table.summary``)."""
    _fields(document["raidlab"], "raidlab", ("simulated_ns", "events"), ("seed", "version", "truncated"))
    for index, disk in enumerate(document["disk_util"]):
        _fields(disk, f"disk_util[{index}]", ("flush_ios", "queue_depth_mean"))
    phases = document.get("phases", [])
    if not isinstance(phases, list):
        raise ConfigError("fio JSON: phases is not a list")
    for index, phase in enumerate(phases):
        where = f"phases[{index}]"
        _fields(phase, where, ("start_s", "end_s"), ("name",))
        for direction in _DIRECTIONS:
            stats = _fields(phase.get(direction), f"{where}.{direction}", ("total_ios",))
            if stats["total_ios"]:
                _fields(stats, f"{where}.{direction}", ("iops",), ("clat_ns",))
                latency = _fields(stats["clat_ns"], f"{where}.{direction}.clat_ns", (), ("percentile",))
                _fields(latency["percentile"], f"{where}.{direction}.clat_ns.percentile",
                        ("50.000000", "99.000000"))
    rebuild = document.get("rebuild")
    if rebuild:
        _fields(rebuild, "rebuild", ("start_s", "rate_kib_s"), ("member", "extrapolated"))
        if rebuild["extrapolated"]:
            _fields(rebuild, "rebuild", ("progress_pct", "member_bytes"))
            if rebuild.get("duration_s") is not None:
                _number(rebuild["duration_s"], "rebuild.duration_s")
        else:
            _fields(rebuild, "rebuild", ("end_s", "duration_s"))
    if document.get("data_loss"):
        _fields(document["data_loss"], "data_loss", ("at_s",), ("failed_members",))


def _read(path: str) -> str:
    if path == "-":
        return read_stdin("fio JSON")
    # fio writes job names and file names as raw bytes: keep the rest of such a document.
    return read_bytes(path, "fio JSON").decode("utf-8", "replace")


def load(path: str, block: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Reads a fio JSON file (``-`` is stdin) into raidlab's document."""
    return to_document(parse_fio_json(_read(path), show_path(path)), block)


def load_all(path: str, block: Optional[Dict[str, Any]] = None) -> List[Tuple[str, Dict[str, Any]]]:
    """Every document in a file, each with its label: one for fio's JSON (or a document raidlab
    wrote), one per run for ``raidlab compare --json``'s ``{"runs": [{"document": ...}]}``."""
    text = _read(path)
    runs = _compare_runs(text, show_path(path))
    if runs is None:
        return [(path, to_document(parse_fio_json(text, show_path(path)), block))]
    return [(f"{path} [{label}]", to_document(document, block)) for label, document in runs]


def _compare_runs(text: str, what: str) -> Optional[List[Tuple[str, Dict[str, Any]]]]:
    """The runs of a ``raidlab compare --json`` document, or None when ``text`` is not one."""
    stripped = text.lstrip()
    if not stripped.startswith("{") or '"runs"' not in stripped:
        return None
    try:
        value = parse_json(stripped, what)
    except ConfigError:
        return None
    runs = value.get("runs") if isinstance(value, dict) and "jobs" not in value else None
    if not isinstance(runs, list) or not runs:
        return None
    found = []
    for index, run in enumerate(runs):
        if not isinstance(run, dict) or not isinstance(run.get("document"), dict):
            raise ConfigError(f"{what}: runs[{index}] holds no document (a raidlab compare run has one)")
        label = " ".join(str(run.get(key, "?")) for key in ("design", "state", "workload"))
        found.append((label, run["document"]))
    return found
