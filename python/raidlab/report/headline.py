"""A run's headline figures, chosen once: every output of a command shows these.

The headline is IOPS and MiB/s (all jobs, and per direction) and the p50/p99 latency of each
direction, over one stated span, its ``basis``:

- ``steady state from A s to B s`` for commands that report the steady state (compare, plan):
  from the start of the steady state (:mod:`raidlab.report.steady`, fio's ``ss`` when the job
  sets one) to the end of the workload, latency from the distributions the run kept for each
  second (``latency_by_second``);
- ``whole run`` otherwise, or when the run never settles: the measured part of the run (after
  ``ramp_time``), as fio's ``jobs[]`` report it.

The document builder (:func:`raidlab.report.fio_json.document`) computes it once and stores it
as ``raidlab.headline``; the terminal tables, ``--csv``, ``--html`` and the DataFrames read it
from there (:func:`of`), so they cannot disagree. fio's ``jobs[]`` stay whole-run, as fio's are.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from raidlab.report.latency import percentile_ms
from raidlab.report.steady import in_window

DIRECTIONS = ("read", "write")
#: The basis of figures over the whole (measured) run.
WHOLE_RUN = "whole run"
#: The latency percentiles of the headline.
PERCENTS = (50, 99)


def steady_basis(from_s: float, to_s: float) -> str:
    """The basis of steady-state figures, in the words every output uses."""
    return f"steady state from {from_s:.1f} s to {to_s:.1f} s"


def compute(document: Dict[str, Any], steady: bool) -> Dict[str, Any]:
    """The headline of a fio-shaped document: over its steady state when ``steady`` and the
    run reached one whose latencies it kept (its ``steady_state`` section has ``latency_ms``
    and ``to_s``), else over the whole run."""
    section = document.get("steady_state") if steady else None
    if isinstance(section, dict) and section.get("attained") and section.get("latency_ms") \
            and _number(section.get("from_s")) is not None and _number(section.get("to_s")) is not None:
        figures = _steady(document, section)
        if figures is not None:
            return figures
    return _whole(document)


def of(document: Dict[str, Any]) -> Dict[str, Any]:
    """The headline a document carries (``raidlab.headline``), or its whole-run figures when it
    carries none (a document from elsewhere)."""
    block = document.get("raidlab")
    stored = block.get("headline") if isinstance(block, dict) else None
    return stored if _well_formed(stored) else compute(document, steady=False)


# --- the two bases -----------------------------------------------------------------------------

def _steady(document: Dict[str, Any], section: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """Each direction's mean rate over the whole seconds of the steady state (the seconds its
    IOPS were judged on), MiB/s at the run's mean request size of that direction, and the
    percentiles of the I/Os completed in those seconds."""
    from_s, to_s = float(section["from_s"]), float(section["to_s"])
    points = [p for p in document.get("timeline") or []
              if isinstance(p, dict) and _number(p.get("t_s")) is not None and in_window(p["t_s"], from_s, to_s)]
    if not points:
        return None
    latency = section["latency_ms"]
    directions = {}
    for direction in DIRECTIONS:
        iops = sum(_number(p.get(f"{direction}_iops")) or 0.0 for p in points) / len(points)
        figures = latency.get(direction) or {}
        directions[direction] = _direction(iops, iops * _bytes_per_io(document, direction) / 2**20,
                                           *(figures.get(f"p{percent}") for percent in PERCENTS))
    return _headline(steady_basis(from_s, to_s), from_s, to_s, directions)


def _whole(document: Dict[str, Any]) -> Dict[str, Any]:
    """I/Os over the seconds the jobs were measured in (the array device's counts over its
    ``measured_ns``: jobs that ran one after another are not summed as if they ran at once);
    a document without them (fio's own) sums its jobs' rates. Latency over every job."""
    array = document.get("array_device")
    seconds = (_number(array.get("measured_ns")) or 0.0) / 1e9 if isinstance(array, dict) else 0.0
    directions = {}
    for direction in DIRECTIONS:
        stats = _stats(document, direction)
        if seconds > 0 and _number(array.get(f"{direction}_ios")) is not None:
            iops = array[f"{direction}_ios"] / seconds
            mib_s = (_number(array.get(f"{direction}_sectors")) or 0.0) * 512 / seconds / 2**20
        else:
            iops = sum(_number(s.get("iops")) or 0.0 for s in stats)
            mib_s = sum(_number(s.get("bw_bytes")) or 0.0 for s in stats) / 2**20
        directions[direction] = _direction(iops, mib_s, *(percentile_ms(document, direction, float(percent))
                                                          for percent in PERCENTS))
    return _headline(WHOLE_RUN, None, None, directions)


def _headline(basis: str, from_s: Optional[float], to_s: Optional[float],
              directions: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    return {"basis": basis, "from_s": from_s, "to_s": to_s,
            "iops": sum(d["iops"] for d in directions.values()),
            "mib_s": sum(d["mib_s"] for d in directions.values()), **directions}


def _direction(iops: float, mib_s: float, p50: Any, p99: Any) -> Dict[str, Any]:
    """One direction's figures; its latencies are None when it did no I/O."""
    busy = iops > 0
    return {"iops": iops, "mib_s": mib_s, "p50_ms": _number(p50) if busy else None,
            "p99_ms": _number(p99) if busy else None}


# --- reading the document ----------------------------------------------------------------------

def _stats(document: Dict[str, Any], direction: str) -> List[Dict[str, Any]]:
    return [job[direction] for job in document.get("jobs") or []
            if isinstance(job, dict) and isinstance(job.get(direction), dict)]


def _bytes_per_io(document: Dict[str, Any], direction: str) -> float:
    """The mean request size of a direction over the run (bytes; 0 without I/O)."""
    stats = _stats(document, direction)
    ios = sum(_number(s.get("total_ios")) or 0.0 for s in stats)
    return sum(_number(s.get("io_bytes")) or 0.0 for s in stats) / ios if ios else 0.0


def _number(value: Any) -> Optional[float]:
    """A finite number as a float, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _well_formed(headline: Any) -> bool:
    """Whether a stored headline has every figure the outputs read, of the right type."""
    if not isinstance(headline, dict) or not isinstance(headline.get("basis"), str):
        return False
    if any(_number(headline.get(key)) is None for key in ("iops", "mib_s")):
        return False
    for direction in DIRECTIONS:
        figures = headline.get(direction)
        if not isinstance(figures, dict) or any(_number(figures.get(k)) is None for k in ("iops", "mib_s")):
            return False
        if any(figures.get(k) is not None and _number(figures.get(k)) is None for k in ("p50_ms", "p99_ms")):
            return False
    return True
