"""A run's fio-shaped document as pandas DataFrames (``raidlab.simulate(...)``'s result).

Units are in the column names, as everywhere in raidlab: ``iops`` per second, ``mib_s`` in
MiB/s (2^20 bytes), latencies in ns (``latency_ns_*``; the 1 s timeline keeps the document's ms),
``util_pct`` percent of the run, ``*_s`` seconds.
"""

from __future__ import annotations

import html
from typing import Any, Dict, Sequence

from raidlab.errors import ConfigError
from raidlab.report import headline as figures
from raidlab.report.rows import FIGURE_KEYS, ROW_PERCENTILES, job_rows, percentile_rows, phase_rows
from raidlab.report.latency import latency_ns

DIRECTIONS = ("read", "write")


def _pd():
    try:
        import pandas as pd
    except ImportError:
        raise ConfigError("DataFrames need pandas: pip install 'raidlab[sweep]'") from None
    return pd


def _figures(row: Dict[str, Any]) -> Dict[str, Any]:
    """A row's figures in the DataFrames' columns."""
    return {key: row[key] for key in FIGURE_KEYS}


def jobs(document: Dict[str, Any]):
    """One row per job and direction (read, write) that did I/O."""
    rows = [{"job": row["job"], "direction": row["direction"], **_figures(row)} for row in job_rows(document)]
    return _pd().DataFrame(rows, columns=["job", "direction", *FIGURE_KEYS])


def headline(document: Dict[str, Any]):
    """The run's headline figures, one row per direction (read, write), with their ``basis``
    (``whole run`` or ``steady state from A s to B s``): what every output of the run shows
    (:mod:`raidlab.report.headline`)."""
    h = figures.of(document)
    rows = [{"direction": d, "iops": h[d]["iops"], "mib_s": h[d]["mib_s"],
             **{f"latency_ns_p{p}": None if h[d][f"p{p}_ms"] is None else h[d][f"p{p}_ms"] * 1e6
                for p in figures.PERCENTS}, "basis": h["basis"]} for d in figures.DIRECTIONS]
    return _pd().DataFrame(rows, columns=["direction", "iops", "mib_s", "latency_ns_p50", "latency_ns_p99", "basis"])


def comparison(rows: Sequence[Any]):
    """``raidlab.compare.compare``'s rows as one table: a row per design, state and workload
    with the headline figures ``raidlab compare`` prints (its --csv's columns), and their basis."""
    records = []
    for row in rows:
        totals = row.totals()
        records.append({"design": row.design, "state": row.state, "workload": row.case, "iops": totals["iops"],
                        "mib_s": totals["mib_s"],
                        **{f"{d}_latency_ms_p{p}": totals[f"{d}_p{p}_ms"] for d in DIRECTIONS for p in (50, 99)},
                        "capacity_bytes": row.capacity_bytes, "rebuild_hours": row.rebuild_hours(),
                        "basis": totals["basis"]})
    return _pd().DataFrame(records, columns=["design", "state", "workload", "iops", "mib_s",
                                             *(f"{d}_latency_ms_p{p}" for d in DIRECTIONS for p in (50, 99)),
                                             "capacity_bytes", "rebuild_hours", "basis"])


def members(document: Dict[str, Any]):
    """One row per member: requests and sectors after merging, flushes, busy time, queue depth."""
    rows = [{"member": index, "name": d["name"], "read_ios": d["read_ios"], "write_ios": d["write_ios"],
             "read_mib": d["read_sectors"] * 512 / 2**20, "write_mib": d["write_sectors"] * 512 / 2**20,
             "flush_ios": d["flush_ios"], "util_pct": d["util"], "queue_depth_mean": d["queue_depth_mean"]}
            for index, d in enumerate(document.get("disk_util") or [])]
    return _pd().DataFrame(rows, columns=["member", "name", "read_ios", "write_ios", "read_mib", "write_mib",
                                          "flush_ios", "util_pct", "queue_depth_mean"])


def phases(document: Dict[str, Any]):
    """One row per phase of the array (optimal, degraded, rebuilding, ...) and direction."""
    rows = [{"phase": row["phase"], "start_s": row["start_s"], "end_s": row["end_s"], "direction": row["direction"],
             **_figures(row)} for row in phase_rows(document, every=True)]
    return _pd().DataFrame(rows, columns=["phase", "start_s", "end_s", "direction", *FIGURE_KEYS])


def timeline(document: Dict[str, Any]):
    """The 1 s time series: IOPS per direction, latency percentiles (ms) and rebuild progress."""
    return _pd().DataFrame(list(document.get("timeline") or []),
                           columns=["t_s", "read_iops", "write_iops", "latency_ms_p50", "latency_ms_p99",
                                    "rebuild_pct"])


def percentiles(document: Dict[str, Any]):
    """Every completion-latency percentile fio reports, per job and direction (long form), and
    the run's own over all jobs (job ``*``)."""
    rows = percentile_rows(document)
    for d in DIRECTIONS:
        for percent, _ in ROW_PERCENTILES:
            value = latency_ns(document, d, percent)
            if value is not None:
                rows.append({"job": "*", "direction": d, "percent": percent, "latency_ns": value})
    return _pd().DataFrame(rows, columns=["job", "direction", "percent", "latency_ns"])


def repr_html(document: Dict[str, Any], title: str) -> str:
    """The run as Jupyter shows it: its title, the jobs table and the members table."""
    head = f"<p><b>{html.escape(title)}</b><br>seed {document['raidlab']['seed']}, raidlab " \
           f"{html.escape(str(document['raidlab']['version']))}, " \
           f"{document['raidlab']['simulated_ns'] / 1e9:.3f} s simulated</p>"
    return head + jobs(document).to_html(index=False) + members(document).to_html(index=False)
