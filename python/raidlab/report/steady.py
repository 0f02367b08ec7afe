"""Steady-state figures of a run.

fio's own criterion (``ss``, ``ss_dur``, ``ss_ramp``; fio steadystate.c) ends a job once met and
the core stops the run there (crates/raidlab-core/src/sim/steady.rs); its section in the
document says when. Runs without ``ss`` are judged here on their 1 s series with
:data:`DEFAULT_CRITERION`, so ``compare`` and ``plan`` can report the rate after the warm-up
(a controller's cache filling, a drive's write cache, an SSD running out of clean blocks)
instead of averages the warm-up inflates, and say so.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from raidlab import _core

#: fio-style criterion used when the workload sets none: the first 10 s window whose IOPS
#: least-squares slope is within 1 % of the window's mean per second (fio: ss=iops_slope:1%,
#: ss_dur=10). fio's documentation suggests 0.1 % over longer windows; 1 s samples of a
#: simulated random workload carry a few per cent of counting noise, so 10 s at 1 % keeps false
#: "not yet" answers rare.
DEFAULT_WINDOW_S = 10
DEFAULT_SLOPE_PCT = 1.0
#: A flat window is the steady state only if the run stays there: the rest of the run from the
#: window's start averages within this much of the window's own mean. A controller's cache
#: filling is flat too (writes at memory speed until it is full, then a step down): a fill
#: longer than the window met the slope criterion and was taken for the steady state, so a
#: rebuilding array looked faster than an optimal one whose cache filled sooner.
DEFAULT_REST_PCT = 10.0
DEFAULT_CRITERION = (f"iops_slope:{DEFAULT_SLOPE_PCT:g}% over {DEFAULT_WINDOW_S} s, "
                     f"the rest of the run within {DEFAULT_REST_PCT:g}%")


def _slope_pct(values: Sequence[float]) -> Optional[float]:
    n = len(values)
    mean = sum(values) / n
    if mean <= 0:
        return None
    x_mean = (n - 1) / 2
    sxy = sum((i - x_mean) * (v - mean) for i, v in enumerate(values))
    sxx = sum((i - x_mean) ** 2 for i in range(n))
    return 100.0 * abs(sxy / sxx) / mean if sxx else 0.0


def iops_series(document: Dict[str, Any]) -> List[float]:
    """IOPS of each whole simulated second (reads and writes)."""
    return [point["read_iops"] + point["write_iops"] for point in document.get("timeline") or []]


def steady_state(document: Dict[str, Any], window_s: int = DEFAULT_WINDOW_S,
                 slope_pct: float = DEFAULT_SLOPE_PCT, rest_pct: float = DEFAULT_REST_PCT) -> Optional[Dict[str, Any]]:
    """``{"from_s", "iops", "criterion"}``: the rate from the start of the first window that
    meets the criterion (flat, and the run stays at its level: :data:`DEFAULT_REST_PCT`) to the
    end of the run; None if no window does (or the run is shorter than one)."""
    series = iops_series(document)
    # Sums from each second to the end, once: each candidate's rest mean is then one division.
    tail = [0.0] * (len(series) + 1)
    for i in range(len(series) - 1, -1, -1):
        tail[i] = tail[i + 1] + series[i]
    for start in range(0, len(series) - window_s + 1):
        window = series[start:start + window_s]
        slope = _slope_pct(window)
        if slope is None or slope > slope_pct:
            continue
        rest_mean = tail[start] / (len(series) - start)
        window_mean = (tail[start] - tail[start + window_s]) / window_s
        if abs(rest_mean - window_mean) <= rest_pct / 100 * window_mean:
            return {"from_s": float(start), "iops": rest_mean, "criterion": DEFAULT_CRITERION}
    return None


#: Latency percentiles the steady_state section gives (when the run kept each second's).
LATENCY_PERCENTS = (50.0, 99.0)


def in_window(start_s: float, from_s: float, end_s: float) -> bool:
    """Whether the whole second starting at ``start_s`` lies from ``from_s`` to ``end_s``."""
    return from_s - 1e-9 <= start_s and start_s + 1 <= end_s + 1e-9


def latency_ms(series: Sequence[Dict[str, Any]], from_s: float, end_s: float,
               entries: Sequence[Sequence[int]]) -> Optional[Tuple[Dict[str, Any], List[Dict[str, Any]]]]:
    """The latency percentiles over the whole seconds from ``from_s`` to ``end_s`` of a raw
    result's series, from the distributions the core kept for each second and job (the run's
    ``latency_by_second``): over every job, and over the jobs of each of ``entries`` (the raw
    jobs behind each of the document's job entries); each ``{"read": {"p50": ms, "p99": ms} or
    None, "write": ...}``. None when the run kept none."""
    points = [p for p in series if "lat_bins_by_job" in p and in_window(p["start_ns"] / 1e9, from_s, end_s)]
    if not points:
        return None
    # Each job's bins over the window, gathered once.
    by_job: List[Dict[str, List[Any]]] = [{"read": [], "write": []} for _ in points[0]["lat_bins_by_job"]]
    for point in points:
        for gathered, bins in zip(by_job, point["lat_bins_by_job"]):
            gathered["read"].extend(bins["read"])
            gathered["write"].extend(bins["write"])
    every = _percentiles_ms([by_job[j] for j in range(len(by_job))])
    return every, [_percentiles_ms([by_job[j] for j in jobs]) for jobs in entries]


def _percentiles_ms(jobs_bins: Sequence[Dict[str, List[Any]]]) -> Dict[str, Any]:
    figures: Dict[str, Any] = {}
    for direction in ("read", "write"):
        bins = [b for bins in jobs_bins for b in bins[direction]]
        if not bins:
            figures[direction] = None
            continue
        values = _core.latency_percentiles(bins, list(LATENCY_PERCENTS))
        figures[direction] = {f"p{p:g}": ns / 1e6 for p, ns in zip(LATENCY_PERCENTS, values)}
    return figures


def scale(document: Dict[str, Any], iops: float, mib_s: float) -> Dict[str, Any]:
    """Whole-run IOPS and MiB/s replaced by their steady-state values when there is a steady
    state (MiB/s scaled with IOPS: the block sizes do not change); ``steady_from_s`` says from
    when (None: whole-run averages), and ``latency_ms`` gives the steady state's latency
    percentiles by direction over every job (:func:`latency_ms`) and ``latency_ms_by_job``
    those of each of the document's job entries, when the run kept them, else None."""
    found = document.get("steady_state") if "steady_state" in document else steady_state(document)
    if not found or not found.get("attained") or not found.get("iops") or iops <= 0:
        return {"iops": iops, "mib_s": mib_s, "steady_from_s": None, "latency_ms": None,
                "latency_ms_by_job": None}
    ratio = found["iops"] / iops
    return {"iops": found["iops"], "mib_s": mib_s * ratio, "steady_from_s": found["from_s"],
            "latency_ms": found.get("latency_ms"), "latency_ms_by_job": found.get("latency_ms_by_job")}


NOTE = (f"IOPS, MiB/s and latency percentiles cover each row's basis: the steady state, from the first "
        f"{DEFAULT_WINDOW_S} s window whose IOPS slope is within {DEFAULT_SLOPE_PCT:g}%/s of its mean (fio "
        f"ss=iops_slope:{DEFAULT_SLOPE_PCT:g}%, ss_dur={DEFAULT_WINDOW_S}) and whose mean the rest of the run "
        f"stays within {DEFAULT_REST_PCT:g}% of, to the end of the run; or the whole run, for runs that never "
        "settle or whose jobs run one after another (stonewall, startdelay)")
