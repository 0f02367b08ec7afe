"""fio's JSON output shape (fio 3.x ``--output-format=json``), so scripts written for fio read
raidlab's results unchanged.

Field meanings follow fio's ``stat.c`` (``show_thread_status_json``): ``bw`` in KiB/s,
``bw_bytes`` in B/s, ``runtime`` in ms, latencies in ns with fio's default percentile list.
``slat_ns`` is all zero (the simulator has no submission cost), so ``lat_ns`` equals ``clat_ns``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

#: fio's default ``percentile_list``.
FIO_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0,
                   99.0, 99.5, 99.9, 99.95, 99.99)


def percentile_key(p: float) -> str:
    """fio writes percentile keys with six decimals: ``"99.900000"``."""
    return f"{p:.6f}"


def _latency(lat: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "min": lat["min"],
        "max": lat["max"],
        "mean": lat["mean"],
        "stddev": lat["stddev"],
        "N": lat["N"],
        "percentile": {percentile_key(p): v for p, v in zip(FIO_PERCENTILES, lat["percentiles"])},
    }


def _zero_latency() -> Dict[str, Any]:
    return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}


def direction(stats: Dict[str, Any], runtime_ns: int) -> Dict[str, Any]:
    """One of fio's per-direction objects (``read``, ``write``)."""
    seconds = runtime_ns / 1e9 if runtime_ns > 0 else 0.0
    ios, io_bytes = stats["ios"], stats["bytes"]
    bw_bytes = int(io_bytes / seconds) if seconds else 0
    latency = _latency(stats["lat_ns"]) if ios else _zero_latency()
    return {
        "io_bytes": io_bytes,
        "io_kbytes": io_bytes // 1024,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes // 1024,
        "iops": ios / seconds if seconds else 0.0,
        "runtime": runtime_ns // 1_000_000,
        "total_ios": ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": _zero_latency(),
        "clat_ns": latency,
        "lat_ns": latency,
    }


def sync_direction(stats: Dict[str, Any]) -> Dict[str, Any]:
    """fio's ``sync`` object: fsync/fdatasync counts and latency."""
    latency = _latency(stats["lat_ns"]) if stats["ios"] else _zero_latency()
    return {"total_ios": stats["ios"], "lat_ns": latency}


def disk_util(members: List[Dict[str, Any]], end_ns: int) -> List[Dict[str, Any]]:
    """fio's ``disk_util``: one entry per member, plus raidlab's mean queue depth."""
    rows = []
    for index, member in enumerate(members):
        util = 100.0 * member["busy_ns"] / end_ns if end_ns else 0.0
        rows.append({
            "name": f"member{index}",
            "read_ios": member["read_ios"],
            "write_ios": member["write_ios"],
            "read_sectors": member["read_sectors"],
            "write_sectors": member["write_sectors"],
            "flush_ios": member["flush_ios"],
            "util": min(util, 100.0),
            "queue_depth_mean": member["queue_area"] / end_ns if end_ns else 0.0,
        })
    return rows


def document(result: Dict[str, Any], raidlab_block: Dict[str, Any]) -> Dict[str, Any]:
    """The whole fio-shaped document for a simulated run."""
    jobs = []
    for job in result["jobs"]:
        runtime = job["runtime_ns"]
        jobs.append({
            "jobname": job["name"],
            "groupid": 0,
            "error": 0,
            "elapsed": runtime // 1_000_000_000,
            "read": direction(job["read"], runtime),
            "write": direction(job["write"], runtime),
            "sync": sync_direction(job["flush"]),
        })
    from raidlab.report import timeline

    out = {
        "fio version": f"raidlab-{raidlab_block['version']}",
        "global options": {},
        "jobs": jobs,
        "disk_util": disk_util(result["members"], result["end_ns"]),
        "phases": timeline.phases(result),
        "rebuild": timeline.rebuild(result),
        "data_loss": timeline.data_loss(result),
        "timeline": timeline.series(result),
        "steady_state": _steady_state(result, raidlab_block),
    }
    if result.get("page_cache") is not None:  # runs with buffered jobs only
        out["page_cache"] = page_cache(result["page_cache"])
    out["raidlab"] = raidlab_block
    return out


def page_cache(raw: Dict[str, Any]) -> Dict[str, Any]:
    """What the host's page cache did: the share of pages buffered reads found cached, bytes
    the array read for it (demand reads and readahead) and written back, the time writers
    waited at the dirty limit (summed over writes) and the most dirty plus writeback bytes."""
    return {
        "ram_bytes": raw["ram_bytes"],
        "hit_ratio": raw["hit_ratio"],
        "read_from_array_bytes": raw["read_from_array_bytes"],
        "written_back_bytes": raw["written_back_bytes"],
        "throttled_ns": raw["throttled_ns"],
        "peak_dirty_bytes": raw["peak_dirty_bytes"],
        "evicted_bytes": raw["evicted_pages"] * 4096,
    }


def _steady_state(result: Dict[str, Any], raidlab_block: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """When the run reached steady state (issue 20): fio's own criterion (the job's ``ss``; the
    run ended there) or, without one, report.steady's default; the timeline before ``from_s``
    is the warm-up."""
    from raidlab.report import steady, timeline

    jobs = ((raidlab_block.get("config") or {}).get("workload") or {}).get("jobs") or []
    # Only the whole seconds the workload ran in count (a rebuild may run on after it).
    end_s = max((job["ramp_ns"] + job["runtime_ns"] for job in result["jobs"]), default=0) / 1e9
    series = [point for point in timeline.series(result) if point["t_s"] + 1 <= end_s + 1e-9]
    fio_ss = next((job["steady_state"] for job in jobs if job.get("steady_state")), None)
    if fio_ss is not None:
        at_ns = result.get("steady_state_ns")
        limit = f"{fio_ss['limit']:g}{'%' if fio_ss['percent'] else ''}"
        section = {"ss": f"{fio_ss['metric']}:{limit}", "ss_dur_s": fio_ss["duration_ns"] / 1e9,
                   "ss_ramp_s": fio_ss["ramp_ns"] / 1e9, "attained": at_ns is not None,
                   "attained_s": None if at_ns is None else at_ns / 1e9, "from_s": None, "iops": None}
        if at_ns is not None:
            section["from_s"] = max(float(int(at_ns / 1e9 - fio_ss["duration_ns"] / 1e9)), 0.0)
            window = [p["read_iops"] + p["write_iops"] for p in series if p["t_s"] >= section["from_s"]]
            section["iops"] = sum(window) / len(window) if window else None
        return section
    found = steady.steady_state({"timeline": series})
    return None if found is None else {**found, "attained": True}
