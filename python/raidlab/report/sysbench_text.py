"""sysbench 1.0-style text for sysbench fileio workloads, so results read like the tool users
ran (the format of sysbench 1.0.20's fileio test output, https://github.com/akopytov/sysbench).
Latency is one distribution over reads, writes and fsyncs, as sysbench reports it."""

from __future__ import annotations

from typing import Any, Dict, List

from raidlab import _core
from raidlab.report.latency import FIO_PERCENTILES, merged_percentiles
from raidlab.report.rows import fsync_row
from raidlab.workload import Workload


def render(raw: Dict[str, Any], document: Dict[str, Any], workload: Workload) -> str:
    """The 'File operations / Throughput / General statistics / Latency' blocks."""
    job = document["jobs"][0]
    everything = raw["jobs"][0]["all_lat_ns"]
    spec = workload.to_dict()["jobs"][0]
    seconds = max(job["read"]["runtime"], job["write"]["runtime"], 1) / 1000
    reads, writes, fsyncs = job["read"]["total_ios"], job["write"]["total_ios"], job["sync"]["total_ios"]
    events = reads + writes + fsyncs
    mean_ms = everything["mean"] / 1e6
    max_ms = everything["max"] / 1e6
    min_ms = everything["min"] / 1e6
    file_bytes = spec["size_bytes"] // max(spec["files"], 1)
    lines = [
        f"{spec['files']} files, {file_bytes // 2**20}MiB each",
        f"{spec['size_bytes'] // 2**20}MiB total file size",
        f"Block size {spec['block_sizes'][0][0] // 1024}KiB",
        "",
        "File operations:",
        f"    reads/s:                      {reads / seconds:.2f}",
        f"    writes/s:                     {writes / seconds:.2f}",
        f"    fsyncs/s:                     {_fsyncs_per_s(job):.2f}",
        "",
        "Throughput:",
        f"    read, MiB/s:                  {job['read']['io_bytes'] / 2**20 / seconds:.2f}",
        f"    written, MiB/s:               {job['write']['io_bytes'] / 2**20 / seconds:.2f}",
        "",
        "General statistics:",
        f"    total time:                          {seconds:.4f}s",
        f"    total number of events:              {events}",
        "",
        "Latency (ms):",
        f"         min:                                    {min_ms:.2f}",
        f"         avg:                                    {mean_ms:.2f}",
        f"         max:                                    {max_ms:.2f}",
        percentile_line(everything, workload.percentile),
        f"         sum:                                    {mean_ms * events:.2f}",
    ]
    return "\n".join(lines)


def percentile_line(latency: Dict[str, Any], percent: int) -> str:
    """sysbench 1.0.20's line for ``--percentile`` (src/sysbench.c ``report_cumulative``:
    ``"%3dth percentile: %27.2f"``, or "percentile stats: disabled" for 0), spaced as the
    block's other lines."""
    if not percent:
        return "         percentile stats:               disabled"
    return f"        {percent:3d}th percentile:                        {percentile_ns(latency, percent) / 1e6:.2f}"


def percentile_ns(latency: Dict[str, Any], percent: float) -> float:
    """A latency percentile of a run's distribution: fio's list holds the usual ones; any other
    comes from the same buckets, clamped to the exact minimum and maximum as the list's are."""
    if percent in FIO_PERCENTILES:
        return latency["percentiles"][FIO_PERCENTILES.index(percent)]
    if not latency["N"]:
        return 0
    return merged_percentiles(latency["buckets"], latency["min"], latency["max"], (float(percent),))[0]


def _fsyncs_per_s(job: Dict[str, Any]) -> float:
    """The job's fsyncs per second, as its fsync row gives them (:func:`raidlab.report.rows.fsync_row`)."""
    row = fsync_row(job)
    return row["iops"] if row is not None else 0.0


def _interval_ns(chunk: List[Dict[str, Any]], percent: int) -> float:
    """The interval's percentile: the largest of its windows' (the windows keep no histogram to
    merge), from the series' own p50/p95/p99, or else from each window's latency buckets (the
    run keeps them when the percentile asks: raidlab.run.build_run)."""
    if not percent:
        return 0  # sysbench keeps no histogram with --percentile=0: it prints 0
    key = {50: "latency_ns_p50", 95: "latency_ns_p95", 99: "latency_ns_p99"}.get(percent)
    if key:
        return max(p.get(key, 0) for p in chunk)
    values = []
    for point in chunk:
        bins = [b for job in point.get("lat_bins_by_job", ()) for d in ("read", "write") for b in job[d]]
        values.append(_core.latency_percentiles(bins, [float(percent)])[0] if bins else 0)
    return max(values)


def interval_lines(raw: Dict[str, Any], workload: Workload) -> List[str]:
    """sysbench 1.0.20's ``--report-interval`` lines (sb_fileio.c ``file_report_intermediate``):
    ``[ Ns ] reads: R MiB/s writes: W MiB/s fsyncs: F/s latency (ms,P%): L`` (P: --percentile),
    one per interval, from the simulator's 1 s windows. An interval of N > 1 s sums N windows
    and shows the largest of their percentiles (:func:`_interval_ns`)."""
    interval = workload.report_interval_s
    if not interval:
        return []
    block = workload.jobs[0].block_sizes[0][0]
    points = raw["series"]
    lines = []
    for start in range(0, len(points) - interval + 1, interval):
        chunk = points[start:start + interval]
        reads = sum(p["read_ios"] for p in chunk) * block / 2**20 / interval
        writes = sum(p["write_ios"] for p in chunk) * block / 2**20 / interval
        fsyncs = sum(p.get("flush_ios", 0) for p in chunk) / interval
        latency = _interval_ns(chunk, workload.percentile) / 1e6
        seconds = (start + interval)
        lines.append(f"[ {seconds}s ] reads: {reads:4.2f} MiB/s writes: {writes:4.2f} MiB/s "
                     f"fsyncs: {fsyncs:4.2f}/s latency (ms,{workload.percentile}%): {latency:4.3f}")
    return lines
