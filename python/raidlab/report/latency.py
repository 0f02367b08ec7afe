"""Latency percentiles: fio's percentile list, and the one place a percentile is taken that
the core did not report.

- :data:`FIO_PERCENTILES`: fio's default ``percentile_list`` (fio's HOWTO, ``percentile_list``;
  stat.c ``fio_default_percentiles``), declared once in the core (``sim/histogram.rs``), which
  reports them for every job and phase; every report names its keys from here
  (:func:`percentile_key`).
- :func:`merged_percentiles`: the percentiles of several jobs' latencies together (fio's
  ``group_reporting``), from their merged histogram buckets by the core's own maths
  (``raidlab._core.latency_percentiles``), so a group's figures are exact, as a job's are.
- :func:`percentile_ms`: a percentile over every job of a document that holds only fio's
  percentile points per job (a document fio measured has no buckets): the mixture of the jobs'
  distributions, interpolated between their points. The run's headline takes it
  (:mod:`raidlab.report.headline`), and the HTML CDFs draw it.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from raidlab import _core

#: fio's default ``percentile_list``.
FIO_PERCENTILES = tuple(_core.FIO_PERCENTILES)


def percentile_key(p: float) -> str:
    """fio writes percentile keys with six decimals: ``"99.900000"``."""
    return f"{p:.6f}"


def merged_percentiles(buckets: Sequence[Sequence[int]], low: int, high: int,
                       percents: Sequence[float] = FIO_PERCENTILES) -> List[int]:
    """Percentiles (ns; fio's list unless ``percents``) of latencies given as the core's buckets
    (lowest ns, width, count), possibly several jobs' together: the core's histogram percentile
    (the midpoint of the bucket holding the rank), clamped to the exact minimum ``low`` and
    maximum ``high`` of the values, as the core clamps a job's own."""
    values = _core.latency_percentiles([[start, count] for start, _width, count in buckets], list(percents))
    return [min(max(value, low), high) for value in values]


# --- several jobs of a document that holds fio's percentile points only ------------------------

def points_ms(stats: Dict[str, Any]) -> List[Tuple[float, float]]:
    """fio's percentile points of a direction as (percent, latency ms), in percent order."""
    table = stats.get("clat_ns", {}).get("percentile") or {}
    points = []
    for key, value in table.items():
        try:
            points.append((float(key), float(value) / 1e6))
        except (TypeError, ValueError):
            continue
    return sorted(points)


def _active(document: Dict[str, Any], direction: str) -> List[Dict[str, Any]]:
    """The per-direction stats of each job that did I/O in ``direction``."""
    return [job[direction] for job in document.get("jobs", []) if job.get(direction, {}).get("total_ios")]


def _cdf(points: List[Tuple[float, float]], x: float) -> float:
    """The percent of one job's I/Os at or under ``x`` ms, interpolated in log latency."""
    if x < points[0][1]:
        return 0.0
    if x >= points[-1][1]:
        return 100.0 if x > points[-1][1] else points[-1][0]
    for (p0, x0), (p1, x1) in zip(points, points[1:]):
        if x0 <= x < x1:
            t = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0)) if x0 > 0 else 0.0
            return p0 + t * (p1 - p0)
    return points[-1][0]


def _mixture(parts: Sequence[Tuple[float, List[Tuple[float, float]]]], percent: float) -> Optional[float]:
    """The ``percent`` point of the mixture of several jobs' latency distributions, each given by
    its I/O count and percentile points (CDFs interpolated in log latency)."""
    parts = [(n, pts) for n, pts in parts if n and pts]
    if not parts:
        return None
    if len(parts) == 1:
        for p, value in parts[0][1]:
            if abs(p - percent) < 1e-9:
                return value
    total = sum(n for n, _ in parts)
    values = [x for _, pts in parts for _, x in pts if x > 0]
    if not values:
        return 0.0
    lo, hi = math.log(min(values)), math.log(max(values))
    for _ in range(60):
        mid = (lo + hi) / 2
        mixed = sum(n * _cdf(pts, math.exp(mid)) for n, pts in parts) / total
        if mixed < percent:
            lo = mid
        else:
            hi = mid
    return math.exp(hi)


def percentile_ms(document: Dict[str, Any], direction: str, percent: float) -> Optional[float]:
    """A latency percentile (ms) of one direction over all jobs of a run, or None without I/O."""
    return _mixture([(stats.get("total_ios", 0), points_ms(stats)) for stats in _active(document, direction)],
                    percent)


def cdf_points(document: Dict[str, Any], direction: str) -> List[Tuple[float, float]]:
    """(latency ms, percent) over all jobs: exact for one job, a mixture for several."""
    active = _active(document, direction)
    if len(active) == 1:
        return [(x, p) for p, x in points_ms(active[0])]
    if not active:
        return []
    percents = [p for p, _ in points_ms(active[0])]
    return [(percentile_ms(document, direction, p) or 0.0, p) for p in percents]


def latency_ns(document: Dict[str, Any], direction: str, percent: float) -> Optional[float]:
    """A completion-latency percentile (ns) over all jobs of a run, None without such I/O: one
    job's own figure when it reports that percentile, else :func:`percentile_ms`'s mixture."""
    active = _active(document, direction)
    if len(active) == 1:
        value = (active[0].get("clat_ns", {}).get("percentile") or {}).get(percentile_key(percent))
        if value is not None:
            return float(value)
    value_ms = percentile_ms(document, direction, percent)
    return None if value_ms is None else float(round(value_ms * 1e6))
