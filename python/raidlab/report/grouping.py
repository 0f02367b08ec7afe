"""fio's ``group_reporting``: the jobs of a reporting group become one entry (issue 22).

fio (stat.c ``__show_run_stats``, fio-3.33) starts a reporting group at the first job and at
each job with ``new_group`` or ``stonewall``; when the group's first job has
``group_reporting``, its jobs are summed into one entry named after that first job: I/O counts
and bytes add up, the runtime is the longest, and latencies are those of all the group's I/Os
together. raidlab merges the latency histograms (the same buckets the percentiles come from),
so the group's percentiles are exact, not averages of percentiles.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List


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
    from raidlab.report.fio_json import FIO_PERCENTILES

    percentiles = [_percentile(buckets, total, p, low, high) for p in FIO_PERCENTILES]
    return {"min": low, "max": high, "mean": mean, "stddev": math.sqrt(max(square - mean * mean, 0.0)),
            "N": total, "percentiles": percentiles, "buckets": buckets}


def _percentile(buckets, total: int, p: float, low: int, high: int) -> int:
    """As the core's histogram reports it: the midpoint of the bucket holding the rank."""
    rank = max(math.ceil(p / 100.0 * total), 1)
    seen = 0
    for start, width, count in buckets:
        seen += count
        if seen >= rank:
            return min(max(start + width // 2, low), high)
    return high


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


def group_jobs(entries: List[Dict[str, Any]], result: Dict[str, Any], workload: Any, plus: bool) -> List[Dict[str, Any]]:
    """The document's job entries with each ``group_reporting`` group merged into one."""
    from raidlab.report.fio_json import job_entry

    groups = list(workload.report_groups) or [0] * len(entries)
    out: List[Dict[str, Any]] = []
    for members in entry_members(workload, len(entries)):
        index = members[0]
        if len(members) == 1:
            out.append(entries[index])
            continue
        merged = merge_raw_jobs([result["jobs"][i] for i in members])
        series = result["series"] if len(members) == len(entries) else []
        view = {"jobs": [merged], "series": series}
        options = workload.job_options[index] if index < len(workload.job_options) else {}
        out.append(job_entry(view, 0, workload.jobs[index], options, groups[index], plus))
    return out
