"""The terminal table of a measured (or imported) run: the same job table as ``raidlab sim``.

The job rows have exactly the columns of :func:`raidlab.report.table.summary` (job, dir, IOPS,
MiB/s, clat mean, p50, p99, p99.9, max, and an ``fsync`` row) with the same formatting; a value
fio did not record (percentiles when ``clat_percentiles=0``, a disk's flushes) shows as ``-``.
The header names the source (fio version, host, target, time) instead of a seed.
"""

from __future__ import annotations

from typing import Any, Dict

from raidlab.report.table import JOB_HEADERS as HEADERS
from raidlab.report.table import headline_line, job_rows, render
from raidlab.terminal import printable

__all__ = ["job_rows", "summary", "HEADERS"]

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
    # Every string here comes from the file (or its name): shown with controls escaped.
    lines = [printable(title), printable(f"{source} with " + ", ".join(parts))]
    for note in block.get("notes") or []:
        lines.append(printable(f"note: {note}"))
    lines.append("")
    lines.append(render(HEADERS, job_rows(document)))
    lines.append(headline_line(document))
    disks = document.get("disk_util") or []
    if disks:
        lines.append("")
        rows = [[d.get("name", "?"), _cell(d.get("read_ios")), _cell(d.get("write_ios")),
                 _cell(d.get("flush_ios")), _cell(d.get("util"), ".1f"),
                 _cell(d.get("queue_depth_mean"), ".2f")] for d in disks]
        lines.append(render(["disk", "reads", "writes", "flushes", "util %", "mean qd"], rows))
    return "\n".join(lines)
