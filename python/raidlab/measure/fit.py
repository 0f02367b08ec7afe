"""Fitting drive models to a measured sweep by simulating the sweep with the model itself.

Every candidate model (``hdd``, ``ssd``, ``empirical``; the Rust core's drive models) starts
from closed-form estimates read off the sweep, then a derivative-free pattern search (coordinate
moves in log space, step halved when no move improves; Hooke & Jeeves 1961) adjusts a few free
parameters to minimise the root-mean-square of ``ln(model IOPS / measured IOPS)`` over the sweep
points. The model IOPS come from the raidlab simulator running each sweep point on a one-drive
array (``level 0``, one member, a chunk larger than any request so md never splits one), so
the fitted drive is judged by exactly the engine that will later predict arrays of it. In a
closed loop at a fixed depth the mean latency is depth / IOPS (Little's law), so the IOPS error
is also the mean-latency error.

What each model's fit reads from the sweep (points are named like ``randread 4k QD1``):

- **ssd** (``device/ssd``: latency, parallelism, bandwidth). The page program time starts at
  the fdatasync latency (a flush waits for the data just written to be programmed); the number
  of dies from the sequential write rate (a page per die per tPROG) or the saturated read rate
  (a page per die per tR), whichever needs more; the command processor's time from the highest
  small-block IOPS (the model's per-command ceiling); the page read time and the write overhead
  from the depth-1 latencies; the host link from the highest bandwidth (each channel as fast,
  full or half duplex, whichever fits); over-provisioning from how much slower random writes
  are than sequential ones (inverting the model's write amplification). A short sweep on a
  fresh drive under-states garbage collection, so long random-write runs may be predicted
  optimistically.
- **hdd** (``device/hdd``: seek, rotation, transfer, queueing gain). The queue-depth-1 random
  read time is overhead + average seek + half a rotation + transfer; the spindle speed is the
  standard one (5400, 7200, 10000, 15000 rpm) that fits the sweep best, the media rate
  (sectors per track) comes from the sequential bandwidth, the write cache is on when writes at
  depth 1 are much faster than reads (the cache size is fitted too), and the queueing gain is
  the drive's own SPTF queue of depth 32 (or none, whichever fits). The seek curve keeps the preset shape
  (single-cylinder ≈ average / 8, full stroke ≈ 1.9 × average) scaled to the fitted average;
  on a file or partial span this is the average seek *over that span*.
- **empirical** (``device/empirical``): the depth-1 latency distribution of the smallest block
  (minimum and fio's 17 percentiles, minus the transfer time, with the interpolation shape that
  reproduces the measured depth-1 cycle time 1/IOPS); the contention (how much each command in service stretches
  the others, from the deepest point: IOPS = D / (latency₁ (1 + c (D − 1)))) and a hard cap on
  commands in service; the transfer rates; the flush time from the fdatasync point (1/IOPS
  minus a plain write's latency).

The model is chosen by its error (:func:`choose`): a physical model (ssd or hdd) when its RMS
error is within 25 % of the empirical model's or its mean |IOPS error| is at most 10 %;
otherwise the empirical one (when neither physical model fits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from raidlab.drives import load_drive
from raidlab.errors import ConfigError, RaidlabError
from raidlab.sim import simulate
from raidlab.units import human_bytes
from raidlab.workload import Job, Workload

__all__ = ["Point", "Observation", "Fit", "predict_point", "fit_model", "fit_all", "choose",
           "MODELS", "single_drive_sim"]

MODELS = ("ssd", "hdd", "empirical")
#: Standard spindle speeds tried by the HDD fit.
RPMS = (5400.0, 7200.0, 10000.0, 15000.0)
#: The empirical model's quantile knots: its parameter suffix and fio's percentile key (fio's
#: default percentile_list, fio's HOWTO "percentile_list") — the minimum comes from ``lat_ns.min``.
_QUANTILE_KEYS = (("p1", "1.000000"), ("p5", "5.000000"), ("p10", "10.000000"), ("p20", "20.000000"),
                  ("p30", "30.000000"), ("p40", "40.000000"), ("p50", "50.000000"), ("p60", "60.000000"),
                  ("p70", "70.000000"), ("p80", "80.000000"), ("p90", "90.000000"), ("p95", "95.000000"),
                  ("p99", "99.000000"), ("p99_5", "99.500000"), ("p99_9", "99.900000"),
                  ("p99_95", "99.950000"), ("p99_99", "99.990000"))
#: Simulated I/Os (and bytes) per point are about this many, bounded by the measured run time.
SIM_IOS = 2000
SIM_BYTES = 128 << 20


@dataclass(frozen=True)
class Point:
    """One sweep point: a pattern, a block size and a queue depth (one job, O_DIRECT)."""

    rw: str  # randread, randwrite, read, write
    bs: int
    iodepth: int
    fdatasync: int = 0

    @property
    def reads(self) -> bool:
        return self.rw in ("read", "randread")

    @property
    def random(self) -> bool:
        return self.rw.startswith("rand")

    @property
    def name(self) -> str:
        size = human_bytes(self.bs).replace(" KiB", "k").replace(" MiB", "m").replace(" GiB", "g")
        sync = f" fdatasync={self.fdatasync}" if self.fdatasync else ""
        return f"{self.rw} {size} QD{self.iodepth}{sync}"

    @property
    def slug(self) -> str:
        return self.name.replace(" ", "-").replace("=", "")

    def job(self, runtime_ns: int) -> Job:
        return Job(name=self.slug, iodepth=self.iodepth, read_fraction=1.0 if self.reads else 0.0,
                   random_fraction=1.0 if self.random else 0.0, block_sizes=((self.bs, 100),),
                   direct=True, runtime_ns=runtime_ns, time_based=runtime_ns > 0,
                   fsync_every=self.fdatasync, fsync_kind="fdatasync")

    def to_dict(self) -> Dict[str, Any]:
        return {"rw": self.rw, "bs": self.bs, "iodepth": self.iodepth, "fdatasync": self.fdatasync}


@dataclass
class Observation:
    """What fio measured at one point (latencies in ns, total latency = submit to completion)."""

    point: Point
    iops: float
    bw_bytes: float
    lat_mean_ns: float
    lat_min_ns: float
    percentiles: Dict[str, float]
    sync_mean_ns: float
    runtime_s: float

    def to_dict(self) -> Dict[str, Any]:
        return {"point": self.point.name, **self.point.to_dict(), "iops": self.iops,
                "bw_bytes": self.bw_bytes, "lat_mean_ns": self.lat_mean_ns,
                "lat_min_ns": self.lat_min_ns, "sync_mean_ns": self.sync_mean_ns,
                "runtime_s": self.runtime_s, "percentiles": self.percentiles}

    @classmethod
    def from_document(cls, point: Point, document: Dict[str, Any]) -> "Observation":
        """From raidlab's document of a one-job run (measured or simulated)."""
        job = document["jobs"][0]
        stats = job["read" if point.reads else "write"]
        lat = stats["lat_ns"] if stats["lat_ns"].get("N") else stats["clat_ns"]
        percentiles = lat.get("percentile") or stats["clat_ns"].get("percentile") or {}
        sync = job.get("sync") or {}
        return cls(point=point, iops=float(stats["iops"]), bw_bytes=float(stats["bw_bytes"]),
                   lat_mean_ns=float(lat.get("mean", 0.0)), lat_min_ns=float(lat.get("min", 0.0)),
                   percentiles={k: float(v) for k, v in percentiles.items()},
                   sync_mean_ns=float((sync.get("lat_ns") or {}).get("mean", 0.0) or 0.0),
                   runtime_s=float(stats.get("runtime", 0)) / 1000.0)


@dataclass
class Fit:
    """A fitted model: its parameters, its prediction at every sweep point, and its error."""

    kind: str
    params: Dict[str, float]
    predicted_iops: List[float]
    errors_pct: List[float]
    rms_log: float
    evaluations: int
    notes: List[str] = field(default_factory=list)

    @property
    def mean_abs_pct(self) -> float:
        return sum(abs(e) for e in self.errors_pct) / len(self.errors_pct) if self.errors_pct else math.inf

    @property
    def max_abs_pct(self) -> float:
        return max((abs(e) for e in self.errors_pct), default=math.inf)

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "params": self.params, "predicted_iops": self.predicted_iops,
                "errors_pct": self.errors_pct, "rms_log_error": self.rms_log,
                "mean_abs_error_pct": self.mean_abs_pct, "max_abs_error_pct": self.max_abs_pct,
                "evaluations": self.evaluations, "notes": self.notes}


# -- simulation of one point on one drive ----------------------------------------------------


def single_drive_sim(drive: Any, workload: Workload, seed: int = 1):
    """``raidlab.simulate`` on a one-drive array: level 0, one member, 16 MiB chunk (so md
    never splits a request; capped at the drive's size)."""
    choice = load_drive(drive)
    capacity = (choice.get("params") or {}).get("capacity_bytes")
    chunk_kib = 16384
    if capacity:
        while chunk_kib > 4 and chunk_kib * 1024 * 4 > capacity:
            chunk_kib //= 2
    return simulate(level=0, devices=1, chunk_kib=chunk_kib, drive=choice, workload=workload, seed=seed)


def predict_point(drive: Dict[str, Any], point: Point, runtime_s: float, iops_hint: float,
                  seed: int = 1) -> Tuple[float, float]:
    """(IOPS, mean latency ns) of the model at one point.

    The simulated run lasts the measured run time, shortened to about :data:`SIM_IOS` I/Os (or
    :data:`SIM_BYTES`) at the measured rate, and at least 20 ms, to keep fitting fast.
    """
    seconds = runtime_s if runtime_s > 0 else 1.0
    if iops_hint > 0:
        ios = min(SIM_IOS, SIM_BYTES / point.bs)
        seconds = min(seconds, max(0.02, ios / iops_hint))
    job = point.job(int(seconds * 1e6) * 1000)
    result = single_drive_sim(drive, Workload((job,), "fio", ""), seed)
    observed = Observation.from_document(point, result.to_dict())
    return observed.iops, observed.lat_mean_ns


# -- the search ----------------------------------------------------------------------------


@dataclass
class _Var:
    name: str
    low: float
    high: float
    integer: bool = False


def _pattern_search(objective: Callable[[Dict[str, float]], float], start: Dict[str, float],
                    variables: Sequence[_Var], max_evals: int, step: float = math.log(2.0),
                    min_step: float = math.log(1.02)) -> Tuple[Dict[str, float], float, int]:
    """Coordinate pattern search in log space within bounds (integers move by at least 1)."""
    cache: Dict[Tuple, float] = {}
    evaluations = [0]

    def key(x: Dict[str, float]) -> Tuple:
        return tuple(round(x[v.name], 9) for v in variables)

    def evaluate(x: Dict[str, float]) -> float:
        k = key(x)
        if k not in cache:
            evaluations[0] += 1
            cache[k] = objective(x)
        return cache[k]

    def clip(var: _Var, value: float) -> float:
        value = min(max(value, var.low), var.high)
        return float(round(value)) if var.integer else value

    best = {name: value for name, value in start.items()}
    for var in variables:
        best[var.name] = clip(var, best[var.name])
    best_value = evaluate(best)
    steps = {var.name: step for var in variables}
    while evaluations[0] < max_evals and any(s > min_step for s in steps.values()):
        improved = False
        for var in variables:
            if steps[var.name] <= min_step or evaluations[0] >= max_evals:
                continue
            for sign in (1.0, -1.0):
                current = best[var.name]
                moved = clip(var, max(current, 1e-9) * math.exp(sign * steps[var.name]))
                if var.integer and moved == current:
                    moved = clip(var, current + sign)
                if moved == current:
                    continue
                candidate = dict(best, **{var.name: moved})
                value = evaluate(candidate)
                if value < best_value - 1e-12:
                    best, best_value, improved = candidate, value, True
                    break
        if not improved:
            steps = {name: s / 2 for name, s in steps.items()}
    return best, best_value, evaluations[0]


# -- helpers reading the sweep ------------------------------------------------------------------


def _find(observations: Sequence[Observation], rw: str, bs: Optional[int] = None,
          depth: Optional[int] = None, sync: bool = False) -> List[Observation]:
    return [o for o in observations if o.point.rw == rw and (bs is None or o.point.bs == bs)
            and (depth is None or o.point.iodepth == depth) and bool(o.point.fdatasync) == sync]


def _qd1(observations: Sequence[Observation], rw: str) -> Observation:
    found = sorted(_find(observations, rw, depth=1), key=lambda o: o.point.bs)
    if not found:
        raise ConfigError(f"the sweep needs a {rw} point at queue depth 1")
    return found[0]


def _max_iops(observations: Sequence[Observation], rw: str, bs: int) -> float:
    return max((o.iops for o in _find(observations, rw, bs)), default=0.0)


def _max_bw(observations: Sequence[Observation], reads: bool) -> float:
    return max((o.bw_bytes for o in observations if o.point.reads == reads and not o.point.fdatasync),
               default=0.0)


class _Scorer:
    """Simulates the sweep for a parameter set and scores it (RMS of ln(model/measured))."""

    def __init__(self, observations: Sequence[Observation], kind: str):
        self.observations = [o for o in observations if o.iops > 0]
        if not self.observations:
            raise ConfigError("the sweep has no point with any I/O")
        self.kind = kind
        self.last: Dict[Tuple, List[float]] = {}

    def predictions(self, params: Dict[str, float]) -> List[float]:
        key = tuple(sorted(params.items()))
        if key not in self.last:
            drive = {"kind": self.kind, "params": dict(params)}
            self.last[key] = [predict_point(drive, o.point, o.runtime_s, o.iops)[0] for o in self.observations]
        return self.last[key]

    def score(self, params: Dict[str, float]) -> float:
        try:
            predicted = self.predictions(params)
        except RaidlabError:  # a parameter set the core refuses (e.g. an impossible seek curve)
            return math.inf
        total = 0.0
        for o, p in zip(self.observations, predicted):
            total += math.log(max(p, 1e-9) / o.iops) ** 2
        return math.sqrt(total / len(predicted))

    def fit(self, params: Dict[str, float], evaluations: int, notes: List[str]) -> Fit:
        predicted = self.predictions(params)
        errors = [100.0 * (p - o.iops) / o.iops for o, p in zip(self.observations, predicted)]
        return Fit(self.kind, params, predicted, errors, self.score(params), evaluations, notes)


# -- the three models --------------------------------------------------------------------------


_KNOT_PROBABILITIES = (0.0,) + tuple(float(key) / 100 for _, key in _QUANTILE_KEYS)


def _mean_for_shape(knots: Sequence[float], shape: float) -> float:
    """The empirical model's mean access time (``EmpiricalSpec::mean_access_ns``)."""
    p = _KNOT_PROBABILITIES
    mean = (1.0 - p[-1]) * knots[-1]
    for i in range(1, len(p)):
        mean += (p[i] - p[i - 1]) * (knots[i - 1] + (knots[i] - knots[i - 1]) / (shape + 1.0))
    return mean


def _shape_for_mean(knots: Sequence[float], target: float) -> float:
    """The interpolation shape (0.01 to 100) whose mean is ``target`` (bisection, log scale)."""
    low, high = 0.01, 100.0
    if target >= _mean_for_shape(knots, low):
        return low
    if target <= _mean_for_shape(knots, high):
        return high
    for _ in range(60):
        middle = math.sqrt(low * high)
        if _mean_for_shape(knots, middle) > target:
            low = middle
        else:
            high = middle
    return math.sqrt(low * high)


def _fit_empirical(observations: Sequence[Observation], span: int, max_evals: int) -> Fit:
    r1, w1 = _qd1(observations, "randread"), _qd1(observations, "randwrite")
    syncs = [o for o in observations if o.point.fdatasync]
    flush_us = 0.0
    notes: List[str] = []
    if syncs:
        # A write + fdatasync pair at depth 1 takes 1/IOPS; a plain write takes the depth-1 write
        # latency, and the flush is the rest (fio's own sync latency alone misses that writes
        # right after a flush can be slower too).
        flush_us = max(0.0, 1e6 / syncs[0].iops - w1.lat_mean_ns / 1e3) if syncs[0].iops > 0 else 0.0
    else:
        notes.append("no fdatasync point in the sweep: flush_us = 0")

    def quantiles(o: Observation, mb_s: float, prefix: str) -> Dict[str, float]:
        """The knots (measured latency minus the transfer), and the shape matching the mean."""
        transfer_us = o.point.bs / mb_s  # bytes / (MB/s) = µs
        raw = [o.lat_min_ns / 1e3]
        for _, key in _QUANTILE_KEYS:
            value = o.percentiles.get(key)
            raw.append((value if value is not None else raw[-1] * 1e3) / 1e3)
        knots, floor = [], 0.0
        for value in raw:
            floor = max(value - transfer_us, floor)
            knots.append(round(floor, 3))
        # Match the measured *cycle* (1 / IOPS at depth 1), not the latency mean: it also holds
        # fio's own time per I/O between a completion and the next submission (5-10 µs on
        # the machine this was built on, 7 % of a 100 µs device), which the simulator has no
        # separate place for. Latencies come out that much high; IOPS come out right.
        cycle_us = 1e6 / o.iops if o.iops > 0 else o.lat_mean_ns / 1e3
        target = max(max(cycle_us, o.lat_mean_ns / 1e3) - transfer_us, 0.0)
        out = {f"{prefix}_us_{name}": value for name, value in zip(("min",) + tuple(n for n, _ in _QUANTILE_KEYS), knots)}
        out[f"{prefix}_shape"] = round(_shape_for_mean(knots, target), 4)
        return out

    read_mb_s = max(_max_bw(observations, True) / 1e6, 1.0)
    write_mb_s = max(_max_bw(observations, False) / 1e6, 1.0)

    def contention(rw: str, qd1: Observation) -> float:
        """From the deepest small-block point: IOPS = D / (latency₁ × (1 + c (D − 1)))."""
        deepest = max(_find(observations, rw, qd1.point.bs), key=lambda o: o.point.iodepth, default=qd1)
        depth = deepest.point.iodepth
        busy = qd1.lat_mean_ns / 1e9 * deepest.iops  # depth / busy = 1 + c (D - 1)
        if depth <= 1 or not busy > 0:
            return 0.01
        value = (depth / busy - 1.0) / (depth - 1)
        return min(max(value, 0.001), 100.0)

    def parallel(rw: str, qd1: Observation) -> float:
        """Little's law at the best small-block point: commands in service = IOPS × latency₁."""
        best = max(_find(observations, rw, qd1.point.bs), key=lambda o: o.iops, default=qd1)
        return max(1.0, round(best.iops * qd1.lat_mean_ns / 1e9))

    # Two ways a depth curve bends: a hard cap on commands in service (a kink), or contention
    # (a smooth bend). Start from whichever explains the sweep better.
    bends = {"read_mb_s": read_mb_s, "write_mb_s": write_mb_s}
    starts = [
        dict(bends, read_parallelism=1024.0, write_parallelism=1024.0,
             read_contention=contention("randread", r1), write_contention=contention("randwrite", w1)),
        dict(bends, read_parallelism=parallel("randread", r1), write_parallelism=parallel("randwrite", w1),
             read_contention=0.0001, write_contention=0.0001),
    ]
    depth = max(o.point.iodepth for o in observations)

    def params_of(x: Dict[str, float]) -> Dict[str, float]:
        params = {"capacity_bytes": float(span), "queue_depth": float(max(128, depth)),
                  "flush_us": round(flush_us, 3)}
        params.update(quantiles(r1, x["read_mb_s"], "read"))
        params.update(quantiles(w1, x["write_mb_s"], "write"))
        params.update({k: (float(round(v)) if k.endswith("parallelism") else round(v, 5)) for k, v in x.items()})
        return params

    scorer = _Scorer(observations, "empirical")
    variables = [_Var("read_contention", 0.0001, 100.0), _Var("write_contention", 0.0001, 100.0),
                 _Var("read_mb_s", 0.01, 1e7), _Var("write_mb_s", 0.01, 1e7),
                 _Var("read_parallelism", 1, 4096, True), _Var("write_parallelism", 1, 4096, True)]
    start = min(starts, key=lambda x: scorer.score(params_of(x)))
    best, _, evaluations = _pattern_search(lambda x: scorer.score(params_of(x)), start, variables,
                                           max(max_evals - len(starts), 1))
    return scorer.fit(params_of(best), evaluations + len(starts), notes)


def _write_amplification(op: float) -> float:
    """Greedy GC write amplification for uniform random writes at over-provisioning ``op``
    (Xiang & Kurkoski 2012), as the SSD model computes it (``device/ssd/gc.rs``):
    WA = α / (α + W0(−α e^−α)) with α = 1 + op."""
    alpha = 1.0 + op
    x = -alpha * math.exp(-alpha)
    w = -1.0 + math.sqrt(max(2.0 * (1.0 + math.e * x), 0.0)) if x < -0.25 else x
    for _ in range(100):  # Newton on w e^w = x
        ew = math.exp(w)
        step = (w * ew - x) / (ew * (w + 1.0)) if abs(w + 1.0) > 1e-12 else 0.0
        w -= step
        if abs(step) < 1e-14:
            break
    return alpha / (alpha + w)


def _over_provisioning_for(wa: float) -> float:
    """The over-provisioning whose uniform-random write amplification is ``wa`` (bisection)."""
    low, high = 0.01, 10.0
    if wa >= _write_amplification(low):
        return low
    if wa <= _write_amplification(high):
        return high
    for _ in range(60):
        middle = math.sqrt(low * high)
        if _write_amplification(middle) > wa:
            low = middle
        else:
            high = middle
    return math.sqrt(low * high)


def _fit_ssd(observations: Sequence[Observation], span: int, max_evals: int) -> Fit:
    r1, w1 = _qd1(observations, "randread"), _qd1(observations, "randwrite")
    small = r1.point.bs
    page = 4096.0
    notes: List[str] = []
    read_max = max(_max_iops(observations, "randread", small), r1.iops)
    write_max = max(_max_iops(observations, "randwrite", small), w1.iops)
    link = max(_max_bw(observations, True), _max_bw(observations, False), 1e6) / 1e6 * 1.05
    transfer = small / link  # one pass over the link (or a channel), µs
    # Flush = wait until the data just written is programmed: fsync latency ≈ tPROG.
    syncs = [o for o in observations if o.point.fdatasync and o.sync_mean_ns > 0]
    program = max(syncs[0].sync_mean_ns / 1e3 - transfer, 1.0) if syncs else 200.0
    if not syncs:
        notes.append("no fdatasync point: program_us_page starts from 200 µs")
    sequential_writes = [o for o in observations if not o.point.reads and not o.point.random
                         and not o.point.fdatasync]
    seq_write_bw = max((o.bw_bytes for o in sequential_writes), default=_max_bw(observations, False))
    random_write_bw = max((o.bw_bytes for o in observations if o.point.rw == "randwrite"), default=seq_write_bw)
    # Dies from the sequential write rate (each die programs a page per tPROG) and from the
    # saturated read rate (each die reads a page per tR), whichever needs more.
    controller = 0.95e6 / max(read_max, write_max)
    read_page = max(r1.lat_mean_ns / 1e3 - controller - 2 * transfer, 0.5)
    dies = max(seq_write_bw * program / 1e6 / page, read_max * (read_page + page / link) / 1e6, 1.0)
    dies = min(math.ceil(dies), 64 * 64)
    channels = min(64, dies)
    per_channel = min(64, math.ceil(dies / channels))
    write_overhead = max(w1.lat_mean_ns / 1e3 - controller - transfer, 0.05)
    # Random writes slower per byte than sequential ones: garbage collection (WA > 1).
    ratio = max(seq_write_bw / max(random_write_bw, 1.0), 1.0)
    wa = 1.0 + (ratio - 1.0) * program / (read_page + program)
    over_provisioning = _over_provisioning_for(wa)
    depth = max(o.point.iodepth for o in observations)
    fixed = {"capacity_bytes": float(span), "dies_per_channel": float(per_channel), "page_kib": page / 1024,
             "pages_per_block": 256.0, "erase_ms_block": 1.0, "read_us_spread": 0.0,
             "interface_full_duplex": 1.0, "queue_depth": float(max(128, depth)),
             "initial_random_fraction": 1.0, "channels": float(channels), "overhead_us_read": 0.0}
    start = {"controller_us_per_command": controller, "read_us_page": read_page,
             "overhead_us_write": write_overhead, "program_us_page": program, "interface_mb_s": link,
             "write_buffer_mib": 8.0, "over_provisioning_fraction": over_provisioning}

    def params_of(x: Dict[str, float]) -> Dict[str, float]:
        params = dict(fixed)
        params.update({k: round(v, 4) for k, v in x.items()})
        params["channel_mb_s"] = params["interface_mb_s"]
        return params

    scorer = _Scorer(observations, "ssd")
    # A SATA link is shared by both directions, PCIe is not: keep whichever fits better.
    duplex = min((1.0, 0.0), key=lambda d: scorer.score(dict(params_of(start), interface_full_duplex=d)))
    fixed["interface_full_duplex"] = duplex
    variables = [_Var("controller_us_per_command", 0.05, 1e4), _Var("read_us_page", 0.5, 1e5),
                 _Var("program_us_page", 0.5, 1e6), _Var("overhead_us_write", 0.05, 1e5),
                 _Var("write_buffer_mib", 0.25, 65536), _Var("over_provisioning_fraction", 0.01, 10.0),
                 _Var("interface_mb_s", 1, 1e6)]
    best, _, evaluations = _pattern_search(lambda x: scorer.score(params_of(x)), start, variables,
                                           max(max_evals - 2, 1))
    evaluations += 2
    notes.append("over_provisioning_fraction comes from how much slower random writes are than "
                 "sequential ones; a short sweep on a fresh drive under-states garbage collection")
    return scorer.fit(params_of(best), evaluations, notes)


def _fit_hdd(observations: Sequence[Observation], span: int, max_evals: int) -> Fit:
    r1 = _qd1(observations, "randread")
    seq = max(_max_bw([o for o in observations if not o.point.random], True), r1.bw_bytes, 1e6)
    link = max(300.0, 1.2 * max(_max_bw(observations, True), _max_bw(observations, False)) / 1e6)
    zones = 1.0 if span < (10 << 30) else 16.0
    scorer = _Scorer(observations, "hdd")
    read_ms = r1.lat_mean_ns / 1e6

    def params_of(x: Dict[str, float]) -> Dict[str, float]:
        avg = x["seek_ms_average"]
        single = min(max(avg / 8.0, 0.011), avg * 0.9)
        return {"capacity_bytes": float(span), "rpm": x["rpm"], "zones": zones,
                "sectors_per_track_outer": float(round(x["sectors_per_track"])),
                "sectors_per_track_inner": float(round(x["sectors_per_track"])),
                "seek_ms_single_cylinder": round(single, 4), "seek_ms_average": round(avg, 4),
                "seek_ms_full_stroke": round(min(avg * 1.9, 100.0), 4),
                "overhead_ms_read": round(x["overhead_ms_read"], 4),
                "overhead_ms_write": round(x["overhead_ms_write"], 4),
                "write_cache": x["write_cache"], "queue_depth": x["queue_depth"],
                "queue_policy": 2.0, "interface_mb_s": round(link, 1),
                "cache_segments": 8.0, "cache_segment_kib": 512.0, "read_ahead_kib": 512.0,
                "cache_kib": float(round(x["cache_kib"]))}

    # Closed-form start for each spindle speed, write-cache setting and queue depth; keep the best.
    starts = []
    for rpm in RPMS:
        half_rotation = 30000.0 / rpm
        spt = min(max(seq / 512.0 / (rpm / 60.0), 1.0), 1e5)
        transfer_ms = r1.point.bs / (spt * 512.0 * rpm / 60.0) * 1e3
        seek = read_ms - half_rotation - 0.1 - transfer_ms
        if seek < 0.05:
            continue
        for cache in (0.0, 1.0):
            for depth in (1.0, 32.0):
                starts.append({"rpm": rpm, "sectors_per_track": spt, "seek_ms_average": min(seek, 49.0),
                               "overhead_ms_read": 0.1, "overhead_ms_write": 0.1, "write_cache": cache,
                               "queue_depth": depth, "cache_kib": 16384.0})
    if not starts:
        return Fit("hdd", {}, [], [], math.inf, 0,
                   [f"a random read at depth 1 takes {read_ms:.3f} ms, less than half a rotation "
                    "at 15000 rpm: not a disk"])
    scored = sorted(starts, key=lambda x: scorer.score(params_of(x)))
    used = len(starts)
    start = scored[0]
    variables = [_Var("seek_ms_average", 0.05, 49.0), _Var("sectors_per_track", 1, 1e5),
                 _Var("overhead_ms_read", 0.001, 10.0), _Var("overhead_ms_write", 0.001, 10.0),
                 _Var("cache_kib", 4608, 1e7, True)]
    best, _, evaluations = _pattern_search(lambda x: scorer.score(params_of(x)), start, variables,
                                           max(max_evals - used, 1))
    notes = [f"rpm {best['rpm']:.0f} fitted best of {', '.join(f'{r:.0f}' for r in RPMS)}"]
    return scorer.fit(params_of(best), evaluations + used, notes)


_FITTERS = {"ssd": _fit_ssd, "hdd": _fit_hdd, "empirical": _fit_empirical}


def fit_model(kind: str, observations: Sequence[Observation], span: int, max_evals: int = 60) -> Fit:
    """Fits one model kind to the sweep."""
    if kind not in _FITTERS:
        raise ConfigError(f"unknown model '{kind}': expected {', '.join(MODELS)} or auto")
    return _FITTERS[kind](observations, span, max_evals)


def fit_all(observations: Sequence[Observation], span: int, kinds: Sequence[str] = MODELS,
            max_evals: int = 60, progress: Optional[Callable[[str], None]] = None) -> Dict[str, Fit]:
    fits = {}
    for kind in kinds:
        if progress:
            progress(kind)
        fits[kind] = fit_model(kind, observations, span, max_evals)
    return fits


def choose(fits: Dict[str, Fit]) -> Fit:
    """The model to keep (rule in the module docstring)."""
    physical = [f for f in fits.values() if f.kind in ("ssd", "hdd") and math.isfinite(f.rms_log)]
    empirical = fits.get("empirical")
    best_physical = min(physical, key=lambda f: f.rms_log, default=None)
    if empirical is None or not math.isfinite(empirical.rms_log):
        if best_physical is None:
            raise ConfigError("no drive model could be fitted to the sweep")
        return best_physical
    if best_physical is not None and (best_physical.rms_log <= 1.25 * empirical.rms_log
                                      or best_physical.mean_abs_pct <= 10.0):
        return best_physical
    return empirical
