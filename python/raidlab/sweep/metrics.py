"""A point's run and its summary metrics: the unit of work every executor runs.

:func:`run_point` takes a :class:`raidlab.run.RunSpec` (plain, picklable data: the drive and the
workload already resolved, so a Ray worker on another machine reads no file) and returns the
fio-shaped JSON text and the summary metrics. It depends on nothing but its argument, so a point
gives the same bytes in this process, in a local worker process or in a Ray task.

Metric columns (units in the names; None where the run had no such I/O or event):

- ``read_iops``, ``write_iops``, ``sync_iops`` (per s), ``read_mib_s``, ``write_mib_s`` (MiB/s,
  2^20 bytes), summed over the jobs;
- ``read_latency_ns_p50`` / ``_p99`` / ``_p99_9`` and the same for ``write``: completion latency
  over all jobs (fio's clat; one job's percentiles exactly, several jobs' as the mixture of their
  distributions, :func:`raidlab.report.latency.latency_ns`);
- ``member_util_pct_mean``, ``member_util_pct_max``: the members' busy time, percent of the run
  (fio's disk_util), and ``member_queue_depth_mean``;
- ``rebuild_s`` (a rebuild's duration, extrapolated to the whole member when the run ended
  first, then ``rebuild_extrapolated`` is true), ``rebuild_rate_kib_s``; ``data_loss`` (true or
  false when the run had failures, None without) and ``data_loss_at_s``;
- ``events``, ``simulated_s``, ``truncated`` (why the run stopped early, if it did), ``notes``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from raidlab.report.latency import latency_ns
from raidlab.run import RunSpec
from raidlab.sim import run_spec

DIRECTIONS = ("read", "write")
PERCENTILES = ((50.0, "p50"), (99.0, "p99"), (99.9, "p99_9"))

#: The metric columns and their Arrow type names, in order.
METRICS: Tuple[Tuple[str, str], ...] = (
    ("read_iops", "float64"), ("write_iops", "float64"), ("sync_iops", "float64"),
    ("read_mib_s", "float64"), ("write_mib_s", "float64"),
    *((f"{d}_latency_ns_{name}", "float64") for d in DIRECTIONS for _, name in PERCENTILES),
    ("member_util_pct_mean", "float64"), ("member_util_pct_max", "float64"),
    ("member_queue_depth_mean", "float64"),
    ("rebuild_s", "float64"), ("rebuild_extrapolated", "bool"), ("rebuild_rate_kib_s", "float64"),
    ("data_loss", "bool"), ("data_loss_at_s", "float64"),
    ("events", "int64"), ("simulated_s", "float64"), ("truncated", "string"), ("notes", "string"),
)


def _sum(document: Dict[str, Any], direction: str, key: str) -> float:
    return float(sum(job.get(direction, {}).get(key, 0) or 0 for job in document.get("jobs", [])))


def _sync_iops(document: Dict[str, Any]) -> float:
    """fsyncs per second over the jobs, each over its own run time (as ``raidlab sim``'s table)."""
    total = 0.0
    for job in document.get("jobs", []):
        seconds = max(job["read"]["runtime"], job["write"]["runtime"], 1) / 1000
        total += (job.get("sync", {}).get("total_ios", 0) or 0) / seconds
    return total


def _members(document: Dict[str, Any]) -> Dict[str, Optional[float]]:
    disks: List[Dict[str, Any]] = document.get("disk_util") or []
    utils = [float(d.get("util", 0.0)) for d in disks]
    depths = [float(d.get("queue_depth_mean", 0.0)) for d in disks]
    return {"member_util_pct_mean": sum(utils) / len(utils) if utils else None,
            "member_util_pct_max": max(utils) if utils else None,
            "member_queue_depth_mean": sum(depths) / len(depths) if depths else None}


def _failures(document: Dict[str, Any], spec: RunSpec) -> Dict[str, Any]:
    rebuild = document.get("rebuild") or {}
    loss = document.get("data_loss")
    had_failures = bool(spec.options.failed or spec.options.timeline)
    return {"rebuild_s": rebuild.get("duration_s"),
            "rebuild_extrapolated": bool(rebuild["extrapolated"]) if rebuild else None,
            "rebuild_rate_kib_s": rebuild.get("rate_kib_s"),
            "data_loss": (loss is not None) if had_failures or loss is not None else None,
            "data_loss_at_s": loss.get("at_s") if isinstance(loss, dict) else None}


def summary(document: Dict[str, Any], spec: RunSpec) -> Dict[str, Any]:
    """The metric columns of one run's fio-shaped document."""
    row: Dict[str, Any] = {}
    for direction in DIRECTIONS:
        row[f"{direction}_iops"] = _sum(document, direction, "iops")
    row["sync_iops"] = _sync_iops(document)
    for direction in DIRECTIONS:
        row[f"{direction}_mib_s"] = _sum(document, direction, "bw_bytes") / 2**20
    for direction in DIRECTIONS:
        for percent, name in PERCENTILES:
            row[f"{direction}_latency_ns_{name}"] = latency_ns(document, direction, percent)
    row.update(_members(document))
    row.update(_failures(document, spec))
    block = document["raidlab"]
    row.update({"events": int(block["events"]), "simulated_s": block["simulated_ns"] / 1e9,
                "truncated": None if block.get("truncated") is None else str(block["truncated"]),
                "notes": "\n".join(block.get("notes") or ()) or None})
    return row


def run_point(spec: RunSpec) -> Tuple[str, Dict[str, Any]]:
    """Runs one point: its fio-shaped JSON text (as ``raidlab sim --json`` writes it) and its
    summary metrics."""
    document = run_spec(spec).to_dict()
    return json.dumps(document, indent=2, sort_keys=False) + "\n", summary(document, spec)
