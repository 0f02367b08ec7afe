"""fio's ``group_reporting``: the jobs of a reporting group become one entry.

fio (stat.c ``__show_run_stats``, fio-3.33) starts a reporting group at the first job and at
each job with ``new_group`` or ``stonewall``; when the group's first job has
``group_reporting``, its jobs are summed into one entry named after that first job: I/O counts
and bytes add up, the runtime is the longest, and latencies are those of all the group's I/Os
together. raidlab merges the latency histograms (the same buckets the percentiles come from)
and takes the group's percentiles from them by the core's histogram maths
(:func:`raidlab.report.latency.merged_percentiles`), so they are exact, not averages of
percentiles.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List

from raidlab.report.latency import merged_percentiles


def _merge_latency(parts: List[Dict[str, Any]]) -> Dict[str, Any]:
    parts = [p for p in parts if p.get("N")]
    if not parts:
        return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0, "percentiles": [], "buckets": []}
    total = sum(p["N"] for p in parts)
    mean = sum(p["mean"] * p["N"] for p in parts) / total
    square = sum(p["N"] * (p["stddev"] ** 2 + p["mean"] ** 2) for p in parts) / total
    low, high = min(p["min"] for p in parts), max(p["max"] for p in parts)
    merged: Dict[tuple, int] = {}
    for part in parts:
        for start, width, count in part["buckets"]:
            merged[(start, width)] = merged.get((start, width), 0) + count
    buckets = sorted((start, width, count) for (start, width), count in merged.items())
    return {"min": low, "max": high, "mean": mean, "stddev": math.sqrt(max(square - mean * mean, 0.0)),
            "N": total, "percentiles": merged_percentiles(buckets, low, high), "buckets": buckets}


def _merge_direction(parts: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {"ios": sum(p["ios"] for p in parts), "bytes": sum(p.get("bytes", 0) for p in parts),
            "lat_ns": _merge_latency([p["lat_ns"] for p in parts if p["ios"]])}


def merge_raw_jobs(jobs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The core's per-job results of a group summed into one."""
    return {
        "name": jobs[0]["name"],
        "read": _merge_direction([j["read"] for j in jobs]),
        "write": _merge_direction([j["write"] for j in jobs]),
        "flush": _merge_direction([j["flush"] for j in jobs]),
        "runtime_ns": max(j["runtime_ns"] for j in jobs),
    }


def entry_members(workload: Any, count: int, per_job: bool = False) -> List[List[int]]:
    """The raw jobs behind each job entry of the document: one each, or a ``group_reporting``
    group's together (unless ``per_job``)."""
    if per_job or workload is None or not any(getattr(workload, "group_reporting", ()) or ()):
        return [[index] for index in range(count)]
    groups = list(workload.report_groups) or [0] * count
    reporting = list(workload.group_reporting) or [False] * count
    out: List[List[int]] = []
    index = 0
    while index < count:
        members = [i for i in range(index, count) if groups[i] == groups[index]]
        if not reporting[index] or len(members) == 1:
            members = [index]
        out.append(members)
        index = members[-1] + 1
    return out
