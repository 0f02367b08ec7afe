"""The terminal table of a measured (or imported) run: the same job table as ``raidlab sim``.

The job rows have exactly the columns of :func:`raidlab.report.table.summary` (job, dir, IOPS,
MiB/s, clat mean, p50, p99, p99.9, max, and an ``fsync`` row) with the same formatting; a value
fio did not record (percentiles when ``clat_percentiles=0``, a disk's flushes) shows as ``-``.
The header names the source (fio version, host, target, time) instead of a seed.
"""

from __future__ import annotations

from typing import Any, Dict, List

from raidlab.report.table import render

__all__ = ["job_rows", "summary", "HEADERS"]

HEADERS = ["job", "dir", "IOPS", "MiB/s", "lat ms mean", "p50", "p99", "p99.9", "max"]


def _ms(nanos: Any) -> str:
    if nanos is None:
        return "-"
    return f"{nanos / 1e6:.2f}"


def _pct(latency: Dict[str, Any], key: str) -> Any:
    return (latency.get("percentile") or {}).get(key)


def job_rows(document: Dict[str, Any]) -> List[List[Any]]:
    """One row per job and direction that did I/O, plus an fsync row (as ``raidlab sim``)."""
    rows = []
    for job in document["jobs"]:
        for direction in ("read", "write"):
            stats = job[direction]
            if not stats["total_ios"]:
                continue
            clat = stats["clat_ns"]
            rows.append([
                job["jobname"], direction, f"{stats['iops']:.0f}", f"{stats['bw_bytes'] / 2**20:.1f}",
                _ms(clat.get("mean")), _ms(_pct(clat, "50.000000")), _ms(_pct(clat, "99.000000")),
                _ms(_pct(clat, "99.900000")), _ms(clat.get("max")),
            ])
        sync = job["sync"]
        if sync["total_ios"]:
            seconds = max(job["read"]["runtime"], job["write"]["runtime"], 1) / 1000
            rows.append([job["jobname"], "fsync", f"{sync['total_ios'] / seconds:.0f}", "-",
                         _ms(sync["lat_ns"].get("mean")), "-", "-", "-", _ms(sync["lat_ns"].get("max"))])
    return rows


def _cell(value: Any, spec: str = "") -> str:
    if value is None:
        return "-"
    return format(value, spec) if spec else str(value)


def summary(document: Dict[str, Any], title: str) -> str:
    """Title, provenance, the job table and fio's disk statistics."""
    block = document.get("raidlab", {})
    source = block.get("source", "measured")
    parts = [str(document.get("fio version", "fio"))]
    if block.get("hostname"):
        parts.append(f"host {block['hostname']}")
    if document.get("time"):
        parts.append(str(document["time"]))
    if block.get("version"):
        parts.append(f"raidlab {block['version']}")
    if block.get("imported_from"):
        parts.append(f"imported from {block['imported_from']}")
    lines = [title, f"{source} with " + ", ".join(parts)]
    for note in block.get("notes") or []:
        lines.append(f"note: {note}")
    lines.append("")
    lines.append(render(HEADERS, job_rows(document)))
    disks = document.get("disk_util") or []
    if disks:
        lines.append("")
        rows = [[d.get("name", "?"), _cell(d.get("read_ios")), _cell(d.get("write_ios")),
                 _cell(d.get("flush_ios")), _cell(d.get("util"), ".1f"),
                 _cell(d.get("queue_depth_mean"), ".2f")] for d in disks]
        lines.append(render(["disk", "reads", "writes", "flushes", "util %", "mean qd"], rows))
    return "\n".join(lines)
