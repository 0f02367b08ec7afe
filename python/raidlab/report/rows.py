"""The rows of a run's document that every output shows, built once.

A job (or phase) and direction that did I/O becomes one row of figures read from the document
as the core reported them: nothing here is recomputed but unit changes (bytes/s to MiB/s). The
terminal job and phase tables (:mod:`raidlab.report.table`), the HTML tables
(:mod:`raidlab.report.html`), the DataFrames (:mod:`raidlab.frames`) and
``SimResult.to_pandas`` take these rows and only choose columns and formats, so they cannot
disagree on a figure. The keys carry their units (``latency_ns_p99`` in ns, ``mib_s`` in MiB/s).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

DIRECTIONS = ("read", "write")

#: The latency percentiles a row carries: (percent, the suffix of its key ``latency_ns_*``).
ROW_PERCENTILES = ((50.0, "p50"), (99.0, "p99"), (99.9, "p99_9"))

#: The figure keys of a direction row, in the order the DataFrames show them.
FIGURE_KEYS = ("iops", "mib_s", "ios", "latency_ns_mean", *(f"latency_ns_{n}" for _, n in ROW_PERCENTILES),
               "latency_ns_max")


def _percentile_table(clat: Dict[str, Any]) -> Dict[float, Any]:
    """fio's percentile table of a latency (keys such as ``"99.900000"``) by percent, the values
    as the document holds them; entries that are not numbers are skipped."""
    table: Dict[float, Any] = {}
    for key, value in (clat.get("percentile") or {}).items():
        try:
            percent, _ = float(key), float(value)
        except (TypeError, ValueError):
            continue
        table[percent] = value
    return table


def direction_figures(stats: Dict[str, Any]) -> Dict[str, Any]:
    """One direction's figures (fio's ``read`` or ``write`` object of a job or phase):
    IOPS, MiB/s, I/O count, ``bw_bytes`` (B/s) and the completion latency's mean, percentiles and
    maximum in ns (None when the direction did no I/O or the document does not hold them)."""
    busy = bool(stats.get("total_ios"))
    clat = stats.get("clat_ns") or {}
    table = _percentile_table(clat) if busy else {}
    row = {"iops": stats.get("iops"), "mib_s": (stats.get("bw_bytes") or 0) / 2**20, "ios": stats.get("total_ios"),
           "bw_bytes": stats.get("bw_bytes"), "latency_ns_mean": clat.get("mean") if busy else None,
           "latency_ns_max": clat.get("max") if busy else None}
    for percent, name in ROW_PERCENTILES:
        row[f"latency_ns_{name}"] = table.get(percent)
    return row


def job_rows(document: Dict[str, Any], fsync: bool = False) -> List[Dict[str, Any]]:
    """One row per job and direction that did I/O, in the document's order (``job``,
    ``direction`` and :func:`direction_figures`); with ``fsync``, each job's fsync row after its
    directions (``direction`` "fsync": syncs per second of the job's runtime, mean and max
    latency)."""
    rows: List[Dict[str, Any]] = []
    for job in document.get("jobs") or []:
        name = job.get("jobname", "job")
        for direction in DIRECTIONS:
            stats = job.get(direction) or {}
            if stats.get("total_ios"):
                rows.append({"job": name, "direction": direction, **direction_figures(stats)})
        sync = fsync_row(job) if fsync else None
        if sync is not None:
            rows.append(sync)
    return rows


def fsync_row(job: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """A job's fsync row, or None when it did no syncs: syncs per second of its runtime (fio's
    ``runtime``, ms, of its longer direction; at least 1 ms), and the syncs' mean and max."""
    sync = job.get("sync") or {}
    if not sync.get("total_ios"):
        return None
    seconds = max(job["read"]["runtime"], job["write"]["runtime"], 1) / 1000
    latency = sync.get("lat_ns") or {}
    return {"job": job.get("jobname", "job"), "direction": "fsync", "iops": sync["total_ios"] / seconds,
            "mib_s": None, "ios": sync["total_ios"], "bw_bytes": None, "latency_ns_mean": latency.get("mean"),
            **{f"latency_ns_{name}": None for _, name in ROW_PERCENTILES}, "latency_ns_max": latency.get("max")}


def phase_rows(document: Dict[str, Any], idle: bool = False, every: bool = False) -> List[Dict[str, Any]]:
    """One row per phase of the array (optimal, degraded, rebuilding, ...) and direction that
    did I/O (``phase``, ``start_s``, ``end_s``, ``direction`` and :func:`direction_figures`);
    with ``every``, each direction the phase holds, I/O or none; with ``idle``, a phase without
    I/O still gets a row (``direction`` "idle", no figures)."""
    rows: List[Dict[str, Any]] = []
    for phase in document.get("phases") or []:
        where = {"phase": phase.get("name"), "start_s": phase.get("start_s"), "end_s": phase.get("end_s")}
        active = [d for d in DIRECTIONS if (phase.get(d) or {}).get("total_ios")]
        shown = [d for d in DIRECTIONS if d in phase] if every else active
        rows += [{**where, "direction": d, **direction_figures(phase[d])} for d in shown]
        if idle and not active:
            rows.append({**where, "direction": "idle", **{key: None for key in FIGURE_KEYS}, "bw_bytes": None})
    return rows


def percentile_rows(document: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Every completion-latency percentile the document holds, one row per job, direction and
    percent (``job``, ``direction``, ``percent``, ``latency_ns``), in percent order."""
    return [{"job": job.get("jobname", "job"), "direction": direction, "percent": percent, "latency_ns": float(value)}
            for job in document.get("jobs") or [] for direction in DIRECTIONS
            for percent, value in sorted(_percentile_table((job.get(direction) or {}).get("clat_ns") or {}).items())]
