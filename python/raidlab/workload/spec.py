"""The one workload spec every front end produces and the Rust core simulates.

A :class:`Workload` is a list of :class:`Job` s that run at the same time, plus where it came
from. :meth:`Workload.to_dict` gives the exact plain-data shape the Rust glue reads::

    {"jobs": [{"name", "threads", "iodepth", "read_fraction", "random_fraction",
               "block_sizes", "offset_bytes", "size_bytes", "files", "sequential_cursor",
               "distribution", "rate_iops", "arrival", "fsync_every", "fsync_kind",
               "fsync_scope", "fsync_end", "runtime_ns", "ramp_ns", "time_based",
               "number_ios", "total_ios", "io_bytes", "direct", "block_align_bytes",
               "invalidate"}, ...],
     "source": {"tool": "fio" | "sysbench" | "preset", "text": ...}}

What each field means to the simulator (facts from fio-3.33's HOWTO.rst and sysbench 1.0.20's
``src/tests/fileio/sb_fileio.c``):

- ``threads`` independent issuers (fio ``numjobs`` clones, sysbench ``--threads``), each keeping
  up to ``iodepth`` I/Os in flight.
- ``read_fraction``: share of data I/Os that are reads. ``random_fraction``: share of I/Os at a
  random offset (fio ``percentage_random``); the rest continue sequentially.
- ``block_sizes``: ``[bytes, percent]`` pairs, percentages that add up to exactly 100; a
  request draws its size with that probability.
- The I/O region is ``[offset_bytes, offset_bytes + size_bytes)`` of the target; ``size_bytes``
  0 means "to the end of the target". ``files`` > 1 splits the region into that many equal
  files laid end to end (sysbench ``--file-num``); random offsets are drawn over the whole
  region and rounded down to ``block_align_bytes`` (sysbench ``file_get_rnd_request``), and a request never crosses
  the end of a file (it is clipped, as sysbench does).
- ``sequential_cursor``: ``per_thread`` means each thread walks the region from its start on
  its own (fio: each clone has its own position, kept per direction); ``shared`` means one
  cursor, shared by all threads, walks file 0 .. N-1 and wraps (sysbench ``file_get_seq_request``).
- ``distribution``: how random offsets are spread (fio ``random_distribution``).
- ``rate_iops``: per-thread cap on data I/Os per second, 0 = closed loop; ``arrival`` is fio's
  ``rate_process`` (``linear``: evenly spaced; ``poisson``: exponential gaps).
- ``fsync_every`` N with ``fsync_scope``:
  ``thread`` = the thread issues one ``fsync_kind`` call after every N of *its own writes*
  (fio ``fsync=N``/``fdatasync=N``, io_u.c ``get_rw_ddir``; sysbench ``--file-fsync-all``);
  ``all_files`` = after every N requests (reads included) counted over *all threads*, if
  anything was written since the last round, a round of one fsync per file over all ``files``
  follows (sysbench ``--file-fsync-freq``; these fsyncs are events of their own).
  ``fsync_end``: each thread syncs (all its files) when it finishes.
- Stop conditions (the first one reached ends the job): ``runtime_ns`` (0 = none) after
  ``ramp_ns`` of unmeasured warm-up; without ``time_based`` a job also ends once it has moved
  ``io_bytes`` (0 = ``size_bytes``, i.e. one pass over the region) per thread, as fio does;
  ``time_based`` keeps it going (wrapping) until the runtime; ``number_ios`` caps the data
  I/Os of each thread; ``total_ios`` caps the events of all threads together (sysbench
  ``--events``: in sysbench 1.0.20 every event counts, the fsyncs of a round included, see
  ``sb_more_events`` in src/sysbench.c).
- ``direct``: O_DIRECT; without it the job's I/O goes through the host's page cache (fio's
  default ``direct=0``, sysbench without ``--file-extra-flags=direct``). ``invalidate``
  (buffered jobs): the file's pages start cold (fio ``invalidate=1``, the default) or cached.
  ``block_align_bytes``: random offsets are multiples of it (relative to ``offset_bytes``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from raidlab.workload.human import human_bytes, human_duration

__all__ = ["WorkloadError", "Distribution", "Job", "Workload", "SECTOR_BYTES"]

#: Everything raidlab simulates is counted in 512-byte sectors (ARCHITECTURE.md: units).
SECTOR_BYTES = 512
#: Bounds raidlab enforces (fio itself has none this tight; these keep simulations sane).
MAX_THREADS = 4096
MAX_IODEPTH = 65536
#: Largest byte count or count the Rust core (u64) and fio (long long) can both hold.
MAX_INT = (1 << 63) - 1

SEQUENTIAL_CURSORS = ("per_thread", "shared")
ARRIVALS = ("linear", "poisson")
FSYNC_KINDS = ("fsync", "fdatasync")
FSYNC_SCOPES = ("thread", "all_files")
TOOLS = ("fio", "sysbench", "preset")
#: Job fields of fio's options beyond the core set: optional in dicts, written only when set, so
#: a job without them has the same plain-data shape as before they existed.
STREAM_FIELDS = ("start_delay_ns", "group", "think_ns", "think_blocks", "rate_bytes_per_s", "loops",
                 "offset_increment_bytes", "iodepth_low", "size_percent", "verify", "seq_skip_bytes",
                 "zone_bytes", "zone_skip_bytes", "zones", "zones_absolute", "zbd_zone_bytes",
                 "zbd_max_open_zones", "write_block_sizes", "flow_id", "flow_weight", "flow_sleep_ns",
                 "file_service", "file_service_ios")


try:  # raidlab.errors.WorkloadError (defined by the Rust extension, under RaidlabError)
    from raidlab.errors import WorkloadError as _RaidlabWorkloadError
    # The core's bounds on what a workload's numbers make it allocate (sim/workload.rs),
    # checked here too so a workload is refused before anything is built for it.
    from raidlab._core import MAX_JOBS, MAX_OUTSTANDING_IOS, MAX_THREADS_TOTAL

    _ERROR_BASES: Tuple[type, ...] = (_RaidlabWorkloadError, ValueError)
except ImportError:  # the extension is not built: this package still works on its own
    _ERROR_BASES = (ValueError,)
    MAX_JOBS = MAX_OUTSTANDING_IOS = MAX_THREADS_TOTAL = MAX_INT


class WorkloadError(*_ERROR_BASES):  # type: ignore[misc]
    """A workload raidlab cannot read or cannot honour; the message is always one line.

    A ``ValueError`` and, when the Rust extension is importable, a subclass of
    ``raidlab.errors.WorkloadError`` (so of ``raidlab.RaidlabError``), which the CLI turns into
    ``raidlab: error: <message>``.
    """

    def __init__(self, message: str) -> None:
        one_line = " ".join(str(message).replace("\r", "\n").split("\n"))
        super().__init__(one_line)


def _fail(job: str, message: str) -> None:
    raise WorkloadError(f"job {job!r}: {message}")


def _check_int(job: str, name: str, value: Any, low: int = 0, high: int = MAX_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(job, f"{name} must be an integer, not {type(value).__name__}")
    if value < low:
        _fail(job, f"{name}={value} must be at least {low}")
    if value > high:
        _fail(job, f"{name}={value} must be at most {high}")
    return value


def _check_fraction(job: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(job, f"{name} must be a number, not {type(value).__name__}")
    number = float(value)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        _fail(job, f"{name}={value} must be between 0 and 1")
    return number


def _check_bool(job: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        _fail(job, f"{name} must be true or false, not {type(value).__name__}")
    return value


def _check_choice(job: str, name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        _fail(job, f"{name}={value!r} must be one of {', '.join(choices)}")
    return value


@dataclass(frozen=True)
class Distribution:
    """Spread of random offsets: fio's ``random_distribution`` (HOWTO, fio-3.33).

    ``value`` is θ for ``zipf`` (any positive value but 1.0, fio's limit), h for ``pareto``
    (0 < h < 1) and fio's deviation parameter for ``normal`` (0 <= dev < 100); unused for
    ``uniform`` (fio's ``random``). The parameters mean what fio makes of them, so the simulator
    should draw the way fio-3.33 does: ``lib/zipf.c`` and ``lib/pareto`` rank blocks, and
    ``lib/gauss.c`` averages 12 uniform draws over the blocks and adds a uniform jitter of
    dev% of the blocks (dev 0 still gives a bell curve); all three then scatter the result over
    the region with a hash (``__hash_u64``), so the hot blocks are not adjacent.
    """

    kind: str = "uniform"
    value: float = 0.0

    _PARAM = {"zipf": "theta", "pareto": "h", "normal": "stddev_pct"}

    def __post_init__(self) -> None:
        kind, value = self.kind, self.value
        if kind not in ("uniform", "zipf", "pareto", "normal"):
            raise WorkloadError(f"distribution kind {kind!r} must be uniform, zipf, pareto or normal")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise WorkloadError(f"{kind} distribution parameter must be a finite number")
        value = float(value)
        object.__setattr__(self, "value", value)
        if kind == "uniform" and value != 0.0:
            raise WorkloadError("a uniform distribution takes no parameter")
        if kind == "zipf" and (value <= 0.0 or value == 1.0):
            raise WorkloadError(f"zipf theta {value:g} must be positive and not 1.0 (fio refuses 1.0)")
        if kind == "pareto" and not 0.0 < value < 1.0:
            raise WorkloadError(f"pareto h {value:g} must be between 0 and 1 (exclusive)")
        if kind == "normal" and not 0.0 <= value < 100.0:
            raise WorkloadError(f"normal stddev {value:g}% must be at least 0 and below 100")

    def to_dict(self) -> Dict[str, Any]:
        if self.kind == "uniform":
            return {"kind": "uniform"}
        return {"kind": self.kind, self._PARAM[self.kind]: self.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Distribution":
        if not isinstance(data, Mapping) or "kind" not in data:
            raise WorkloadError("distribution must be an object with a 'kind'")
        kind = data["kind"]
        if kind == "uniform":
            extra = set(data) - {"kind"}
            if extra:
                raise WorkloadError(f"uniform distribution takes no {', '.join(sorted(extra))}")
            return cls()
        if kind not in cls._PARAM:
            raise WorkloadError(f"distribution kind {kind!r} must be uniform, zipf, pareto or normal")
        param = cls._PARAM[kind]
        if set(data) != {"kind", param}:
            raise WorkloadError(f"{kind} distribution needs exactly 'kind' and {param!r}")
        return cls(kind, data[param])

    def describe(self) -> str:
        if self.kind == "uniform":
            return "uniform"
        if self.kind == "zipf":
            return f"zipf θ={self.value:g}"
        if self.kind == "pareto":
            return f"pareto h={self.value:g}"
        return f"normal σ={self.value:g}%"


def _check_steady(job: str, steady: Any) -> None:
    """fio's ss criterion: a metric, a finite limit >= 0, a window of at least 1 s."""
    if not isinstance(steady, tuple) or len(steady) != 5:
        _fail(job, "steady_state must be (metric, limit, percent, duration_ns, ramp_ns)")
    metric, limit, percent, duration_ns, ramp_ns = steady
    if metric not in ("iops", "iops_slope", "bw", "bw_slope"):
        _fail(job, f"steady-state metric {metric!r} is not iops, iops_slope, bw or bw_slope")
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not math.isfinite(limit) or limit < 0:
        _fail(job, f"steady-state limit {limit!r} must be a finite number >= 0")
    if not isinstance(percent, bool):
        _fail(job, "steady-state percent must be true or false")
    _check_int(job, "ss_dur", duration_ns, 1_000_000_000, MAX_INT)
    _check_int(job, "ss_ramp", ramp_ns, 0, MAX_INT)


@dataclass(frozen=True)
class Job:
    """One group of identical threads; every field is documented in the module docstring."""

    name: str
    threads: int = 1
    iodepth: int = 1
    read_fraction: float = 1.0
    random_fraction: float = 0.0
    block_sizes: Tuple[Tuple[int, int], ...] = ((4096, 100),)
    offset_bytes: int = 0
    size_bytes: int = 0
    files: int = 1
    sequential_cursor: str = "per_thread"
    distribution: Distribution = field(default_factory=Distribution)
    rate_iops: int = 0
    arrival: str = "linear"
    fsync_every: int = 0
    fsync_kind: str = "fsync"
    fsync_scope: str = "thread"
    fsync_end: bool = False
    runtime_ns: int = 0
    ramp_ns: int = 0
    time_based: bool = False
    number_ios: int = 0
    total_ios: int = 0
    io_bytes: int = 0
    direct: bool = False
    block_align_bytes: int = 0  # 0 here means "the smallest block size"; stored resolved
    # fio's ss/ss_dur/ss_ramp as (metric, limit, percent, duration_ns, ramp_ns), or None
    steady_state: Optional[Tuple[str, float, bool, int, int]] = None
    # Buffered jobs (direct False): whether the file's cached pages are dropped first (fio
    # invalidate=1, its default) or kept (invalidate=0: the run starts with them cached).
    invalidate: bool = True
    # -- fio options that shape the stream (the core's sim/workload.rs documents each).
    # Defaults change nothing; to_dict() writes them only when set, so older dicts stay valid.
    start_delay_ns: int = 0
    group: int = 0
    think_ns: int = 0
    think_blocks: int = 1
    rate_bytes_per_s: int = 0
    loops: int = 1
    offset_increment_bytes: int = 0
    iodepth_low: int = 0
    size_percent: int = 0
    verify: bool = False
    seq_skip_bytes: int = 0
    zone_bytes: int = 0
    zone_skip_bytes: int = 0
    zones: Tuple[Tuple[float, int, int], ...] = ()
    zones_absolute: bool = False
    zbd_zone_bytes: int = 0
    zbd_max_open_zones: int = 0
    write_block_sizes: Tuple[Tuple[int, int], ...] = ()
    flow_id: int = 0
    flow_weight: int = 0
    flow_sleep_ns: int = 0
    file_service: int = 0
    file_service_ios: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or len(self.name) > 255:
            raise WorkloadError("a job needs a name of 1 to 255 characters")
        job = self.name
        _check_int(job, "threads", self.threads, 1, MAX_THREADS)
        if self.steady_state is not None:
            _check_steady(job, self.steady_state)
        _check_int(job, "iodepth", self.iodepth, 1, MAX_IODEPTH)
        object.__setattr__(self, "read_fraction", _check_fraction(job, "read_fraction", self.read_fraction))
        object.__setattr__(
            self, "random_fraction", _check_fraction(job, "random_fraction", self.random_fraction)
        )

        sizes = self.block_sizes
        if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or not sizes:
            _fail(job, "block_sizes must be a non-empty list of [bytes, weight] pairs")
        pairs = []
        for pair in sizes:
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                _fail(job, "block_sizes must be a non-empty list of [bytes, weight] pairs")
            size = _check_int(job, "block size", pair[0], 1)
            weight = _check_int(job, "block size weight", pair[1], 1, 100)
            if size % SECTOR_BYTES:
                _fail(job, f"block size {size} is not a multiple of {SECTOR_BYTES}")
            if any(size == seen for seen, _ in pairs):
                _fail(job, f"block size {size} is listed twice")
            pairs.append((size, weight))
        total = sum(weight for _, weight in pairs)
        if total != 100:
            _fail(job, f"block size weights are percentages and must add up to 100, not {total}")
        object.__setattr__(self, "block_sizes", tuple(pairs))
        smallest = min(size for size, _ in pairs)
        largest = max(size for size, _ in pairs)

        for name in ("offset_bytes", "size_bytes"):
            value = _check_int(job, name, getattr(self, name))
            if value % SECTOR_BYTES:
                _fail(job, f"{name}={value} is not a multiple of {SECTOR_BYTES}")
        if self.size_bytes and self.size_bytes < largest:
            _fail(job, f"size_bytes={self.size_bytes} is smaller than the largest block size {largest}")
        _check_int(job, "files", self.files, 1, 1 << 20)
        if self.size_bytes and self.size_bytes // self.files < SECTOR_BYTES:
            _fail(job, f"{self.files} files do not fit in size_bytes={self.size_bytes}")
        _check_choice(job, "sequential_cursor", self.sequential_cursor, SEQUENTIAL_CURSORS)
        if not isinstance(self.distribution, Distribution):
            _fail(job, "distribution must be a Distribution")
        _check_int(job, "rate_iops", self.rate_iops)
        _check_choice(job, "arrival", self.arrival, ARRIVALS)
        _check_int(job, "fsync_every", self.fsync_every)
        _check_choice(job, "fsync_kind", self.fsync_kind, FSYNC_KINDS)
        _check_choice(job, "fsync_scope", self.fsync_scope, FSYNC_SCOPES)
        _check_bool(job, "fsync_end", self.fsync_end)
        for name in ("runtime_ns", "ramp_ns", "number_ios", "total_ios", "io_bytes"):
            _check_int(job, name, getattr(self, name))
        _check_bool(job, "time_based", self.time_based)
        if self.time_based and not self.runtime_ns:
            _fail(job, "time_based needs a runtime")
        _check_bool(job, "direct", self.direct)
        _check_bool(job, "invalidate", self.invalidate)
        self._check_stream(job)
        align = self.block_align_bytes
        if align == 0:
            object.__setattr__(self, "block_align_bytes", smallest)
        else:
            _check_int(job, "block_align_bytes", align, 1)
            if align % SECTOR_BYTES:
                _fail(job, f"block_align_bytes={align} is not a multiple of {SECTOR_BYTES}")

    def _check_stream(self, job: str) -> None:
        for name in ("start_delay_ns", "group", "think_ns", "rate_bytes_per_s", "offset_increment_bytes"):
            _check_int(job, name, getattr(self, name))
        _check_int(job, "think_blocks", self.think_blocks, 1, 1 << 31)
        _check_int(job, "loops", self.loops, 1, 1_000_000)
        _check_int(job, "iodepth_low", self.iodepth_low, 0, max(self.iodepth - 1, 0))
        _check_int(job, "size_percent", self.size_percent, 0, 100)
        _check_bool(job, "verify", self.verify)
        _check_int(job, "seq_skip_bytes", self.seq_skip_bytes, -MAX_INT, MAX_INT)
        for name in ("zone_bytes", "zone_skip_bytes", "zbd_zone_bytes", "zbd_max_open_zones", "seq_skip_bytes"):
            if getattr(self, name) % SECTOR_BYTES and name != "zbd_max_open_zones":
                _fail(job, f"{name}={getattr(self, name)} is not a multiple of {SECTOR_BYTES}")
        _check_bool(job, "zones_absolute", self.zones_absolute)
        for name in ("flow_id", "flow_weight"):
            _check_int(job, name, getattr(self, name), 0, (1 << 31))
        _check_int(job, "flow_sleep_ns", self.flow_sleep_ns)
        _check_int(job, "file_service", self.file_service, 0, 2)
        _check_int(job, "file_service_ios", self.file_service_ios, 1, 1 << 31)
        zones = tuple(tuple(z) for z in self.zones)
        if zones and abs(sum(z[0] for z in zones) - 1.0) > 1e-6:
            _fail(job, "zoned distribution shares must add up to 100%")
        object.__setattr__(self, "zones", zones)
        writes = tuple(tuple(p) for p in self.write_block_sizes)
        if writes and (sum(w for _, w in writes) != 100 or any(b <= 0 or b % SECTOR_BYTES for b, _ in writes)):
            _fail(job, "write_block_sizes must be [bytes, percent] pairs of sector multiples adding up to 100")
        object.__setattr__(self, "write_block_sizes", writes)

    # -- views ------------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """The plain-data shape of one job (see the module docstring)."""
        return {
            "name": self.name,
            "threads": self.threads,
            "iodepth": self.iodepth,
            "read_fraction": self.read_fraction,
            "random_fraction": self.random_fraction,
            "block_sizes": [[size, weight] for size, weight in self.block_sizes],
            "offset_bytes": self.offset_bytes,
            "size_bytes": self.size_bytes,
            "files": self.files,
            "sequential_cursor": self.sequential_cursor,
            "distribution": self.distribution.to_dict(),
            "rate_iops": self.rate_iops,
            "arrival": self.arrival,
            "fsync_every": self.fsync_every,
            "fsync_kind": self.fsync_kind,
            "fsync_scope": self.fsync_scope,
            "fsync_end": self.fsync_end,
            "runtime_ns": self.runtime_ns,
            "ramp_ns": self.ramp_ns,
            "time_based": self.time_based,
            "number_ios": self.number_ios,
            "total_ios": self.total_ios,
            "io_bytes": self.io_bytes,
            "direct": self.direct,
            "block_align_bytes": self.block_align_bytes,
            # only with fio's ss (the shape without it is unchanged)
            **({} if self.steady_state is None else {"steady_state": dict(
                zip(("metric", "limit", "percent", "duration_ns", "ramp_ns"), self.steady_state))}),
            "invalidate": self.invalidate,
            **{name: ([list(z) for z in getattr(self, name)] if name in ("zones", "write_block_sizes")
                      else getattr(self, name))
               for name in STREAM_FIELDS if getattr(self, name) != self.__dataclass_fields__[name].default},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Job":
        """The inverse of :meth:`to_dict`; every field is required and checked."""
        if not isinstance(data, Mapping):
            raise WorkloadError("a job must be an object")
        names = [f for f in cls.__dataclass_fields__]
        optional = ("steady_state", "invalidate", *STREAM_FIELDS)  # added later: older dicts lack them
        missing = [name for name in names if name not in data and name not in optional]
        extra = sorted(set(data) - set(names))
        if missing:
            raise WorkloadError(f"job is missing {', '.join(missing)}")
        if extra:
            raise WorkloadError(f"job has unknown field(s) {', '.join(map(str, extra))}")
        values = dict(data)
        values["distribution"] = Distribution.from_dict(data["distribution"])
        steady = data.get("steady_state")
        if steady is not None:
            if not isinstance(steady, Mapping) or set(steady) != {"metric", "limit", "percent", "duration_ns", "ramp_ns"}:
                raise WorkloadError("steady_state must be {metric, limit, percent, duration_ns, ramp_ns}")
            values["steady_state"] = (steady["metric"], steady["limit"], steady["percent"],
                                      steady["duration_ns"], steady["ramp_ns"])
        sizes = data["block_sizes"]
        if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence):
            raise WorkloadError("block_sizes must be a list of [bytes, weight] pairs")
        values["block_sizes"] = tuple(
            tuple(pair) if isinstance(pair, Sequence) and not isinstance(pair, (str, bytes)) else pair
            for pair in sizes
        )
        if data["block_align_bytes"] == 0:
            raise WorkloadError("block_align_bytes must be at least 512")
        return cls(**values)

    def pattern(self) -> str:
        """fio's name for the pattern: ``randrw 70/30``, ``read``, ``write``, ``rw 50/50``."""
        if self.random_fraction == 1.0:
            prefix = "rand"
        elif self.random_fraction == 0.0:
            prefix = ""
        else:
            prefix = f"{_percent(self.random_fraction)}% rand"
        if self.read_fraction == 1.0:
            name = prefix + "read"
        elif self.read_fraction == 0.0:
            name = prefix + "write"
        else:
            reads = _percent(self.read_fraction)
            writes = _percent(1.0 - self.read_fraction)
            name = f"{prefix}rw {reads}/{writes}"
        return name

    def describe(self) -> str:
        """One line: ``randrw 70/30, 16 KiB, 16 threads × QD1, direct``."""
        parts = [self.pattern()]
        if len(self.block_sizes) == 1:
            parts.append(human_bytes(self.block_sizes[0][0]))
        else:
            parts.append(" + ".join(f"{human_bytes(s)} {w}%" for s, w in self.block_sizes))
        thread_word = "thread" if self.threads == 1 else "threads"
        parts.append(f"{self.threads} {thread_word} × QD{self.iodepth}")
        parts.append("direct" if self.direct else "buffered")
        if self.random_fraction > 0 and self.distribution.kind != "uniform":
            parts.append(self.distribution.describe())
        if self.files > 1:
            parts.append(f"{self.files} files")
        if self.sequential_cursor == "shared" and self.random_fraction < 1 and self.threads > 1:
            parts.append("one shared sequential cursor")
        if self.fsync_every:
            if self.fsync_scope == "thread":
                every = "each write" if self.fsync_every == 1 else f"every {self.fsync_every} writes"
                parts.append(f"{self.fsync_kind} after {every}")
            else:
                parts.append(f"{self.fsync_kind} of all files every {self.fsync_every} requests")
        if self.fsync_end:
            parts.append(f"{self.fsync_kind} at end")
        if self.rate_iops:
            parts.append(f"capped at {self.rate_iops} IOPS/thread ({self.arrival})")
        if self.size_bytes:
            where = f" at {human_bytes(self.offset_bytes)}" if self.offset_bytes else ""
            parts.append(f"over {human_bytes(self.size_bytes)}{where}")
        elif self.offset_bytes:
            parts.append(f"from {human_bytes(self.offset_bytes)}")
        if self.runtime_ns:
            ramp = f" after {human_duration(self.ramp_ns)} ramp" if self.ramp_ns else ""
            limit = "for" if self.time_based else "up to"
            parts.append(f"{limit} {human_duration(self.runtime_ns)}{ramp}")
        if self.number_ios:
            parts.append(f"{self.number_ios} I/Os per thread")
        if self.total_ios:
            parts.append(f"{self.total_ios} events in total")
        if self.io_bytes:
            parts.append(f"{human_bytes(self.io_bytes)} per thread")
        return ", ".join(parts)


def _percent(fraction: float) -> str:
    value = round(fraction * 100, 1)
    return f"{value:g}"


def _check_totals(jobs: Sequence[Job]) -> None:
    """The core's bounds on the whole workload: jobs, threads, and outstanding I/Os."""
    if len(jobs) > MAX_JOBS:
        raise WorkloadError(f"the workload has {len(jobs)} jobs, more than the limit of {MAX_JOBS}")
    threads = sum(job.threads for job in jobs)
    if threads > MAX_THREADS_TOTAL:
        raise WorkloadError(f"the workload runs {threads} threads (numjobs summed over its jobs), "
                            f"more than the limit of {MAX_THREADS_TOTAL}")
    outstanding = sum(job.threads * job.iodepth for job in jobs)
    if outstanding > MAX_OUTSTANDING_IOS:
        raise WorkloadError(f"the workload keeps up to {outstanding} host I/Os outstanding (numjobs × iodepth "
                            f"summed over its jobs), more than the limit of {MAX_OUTSTANDING_IOS}")


@dataclass(frozen=True)
class Workload:
    """Jobs that run together, and the text they were read from.

    ``notes`` are things a user should know that do not stop the simulation (for example
    "iodepth=32 is capped at 1 by the psync engine"); they are not part of :meth:`to_dict`
    and do not take part in equality.
    """

    jobs: Tuple[Job, ...]
    tool: str
    text: str
    notes: Tuple[str, ...] = field(default=(), compare=False)
    #: fio reporting groups (``new_group``/``stonewall`` start one) and ``group_reporting`` per
    #: job, for the report only; empty for other tools.
    report_groups: Tuple[int, ...] = field(default=(), compare=False)
    group_reporting: Tuple[bool, ...] = field(default=(), compare=False)
    #: Each job's own options and the [global] ones, as written (fio's "job options" and
    #: "global options" in its JSON), for the report only.
    job_options: Tuple[Dict[str, str], ...] = field(default=(), compare=False)
    global_options: Dict[str, str] = field(default_factory=dict, compare=False)
    #: sysbench ``--report-interval`` in seconds (0 = no interval lines), for the report only.
    report_interval_s: int = field(default=0, compare=False)
    #: sysbench ``--percentile`` (0 = percentiles off), the one its text shows; for the report only.
    percentile: int = field(default=95, compare=False)

    def __post_init__(self) -> None:
        jobs = tuple(self.jobs)
        if not jobs:
            raise WorkloadError("a workload needs at least one job")
        if not all(isinstance(job, Job) for job in jobs):
            raise WorkloadError("workload jobs must be Job objects")
        _check_totals(jobs)
        object.__setattr__(self, "jobs", jobs)
        if self.tool not in TOOLS:
            raise WorkloadError(f"workload source tool {self.tool!r} must be one of {', '.join(TOOLS)}")
        if not isinstance(self.text, str):
            raise WorkloadError("workload source text must be a string")
        object.__setattr__(self, "notes", tuple(self.notes))

    def to_dict(self) -> Dict[str, Any]:
        """``{"jobs": [...], "source": {"tool", "text"}}``: plain ints, floats, strs, bools."""
        return {
            "jobs": [job.to_dict() for job in self.jobs],
            "source": {"tool": self.tool, "text": self.text},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Workload":
        """The inverse of :meth:`to_dict` (checks every field)."""
        if not isinstance(data, Mapping) or set(data) != {"jobs", "source"}:
            raise WorkloadError("a workload must be an object with exactly 'jobs' and 'source'")
        source = data["source"]
        if not isinstance(source, Mapping) or set(source) != {"tool", "text"}:
            raise WorkloadError("workload 'source' must have exactly 'tool' and 'text'")
        jobs = data["jobs"]
        if isinstance(jobs, (str, bytes)) or not isinstance(jobs, Sequence):
            raise WorkloadError("workload 'jobs' must be a list")
        return cls(tuple(Job.from_dict(job) for job in jobs), source["tool"], source["text"])

    def with_runtime_ns(self, runtime_ns: int) -> "Workload":
        """The same workload with every job's run time set to ``runtime_ns`` (0 = no limit).

        Jobs keep their ``time_based`` flag (a job that is not time based still ends after one
        pass over its region, as fio does), except that 0 turns it off.
        """
        jobs = tuple(
            replace(job, runtime_ns=runtime_ns, time_based=job.time_based and runtime_ns != 0)
            for job in self.jobs
        )
        return replace(self, jobs=jobs)

    def describe(self) -> str:
        """A one-line human summary; several jobs are joined with ``; ``."""
        if len(self.jobs) == 1:
            return self.jobs[0].describe()
        return "; ".join(f"[{job.name}] {job.describe()}" for job in self.jobs)
