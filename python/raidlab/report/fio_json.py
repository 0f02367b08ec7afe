"""fio's JSON output shape (fio 3.x ``--output-format=json``), so scripts written for fio read
raidlab's results unchanged.

Field meanings follow fio's ``stat.c`` (``show_thread_status_json``, fio-3.33): ``bw`` in KiB/s,
``bw_bytes`` in B/s, ``runtime`` in ms, latencies in ns with fio's default percentile list.
Every key fio 3.x writes for a job is here (``tests/test_fio_json_keys.py`` compares the key
trees with the installed fio's). Where each value comes from:

- Simulated: ``io_bytes``, ``bw``, ``iops``, ``runtime``, ``total_ios``, ``clat_ns``/``lat_ns``
  (min, max, mean, stddev, N, percentiles; json+ ``bins``), ``latency_ns/us/ms`` (the share of
  I/Os per latency range, from the same histogram), ``sync``, ``job_runtime``, ``elapsed``,
  ``disk_util`` (ios, merges, ticks = request time in flight, in_queue, util) and, beside it,
  ``array_device``: the md device as fio writes it (its own counts and ``aggr_*``).
- Derived from the simulation: ``bw_min/max/mean/dev/samples`` and ``iops_min/max/mean/stddev/
  samples`` from the 1 s windows (fio samples every 500 ms), only when the run has one job
  (the windows count every job together; zero otherwise); ``bw_agg`` is 100 % for one job in
  its group; ``iodepth_level`` puts every I/O at the job's depth for a closed-loop job (what fio
  reports once the queue is full; zero for rate-limited jobs); ``latency_depth`` is the depth.
- Zero, because the simulator has no such thing: ``slat_ns`` (no submission cost, so ``lat_ns``
  equals ``clat_ns``), ``short_ios``, ``drop_ios``, ``usr_cpu``, ``sys_cpu``, ``ctx``, ``majf``,
  ``minf``, ``iodepth_submit``, ``iodepth_complete``, ``error``, ``eta``, ``latency_target``,
  ``latency_window``, ``trim`` (discard is not modelled); ``timestamp``, ``timestamp_ms`` and
  ``time`` are zero/empty so that the same inputs and seed give the same bytes.

One entry per job section: fio writes one per ``numjobs`` clone unless ``group_reporting``
sums them; raidlab's entry is already the sum of the clones (``group_reporting`` then also
sums the jobs of a reporting group, see :mod:`raidlab.report.grouping`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from raidlab.report import grouping, headline, timeline
from raidlab.report import steady as steady_figures
from raidlab.report.latency import FIO_PERCENTILES, percentile_key

#: fio's latency ranges (stat.c ``show_latencies``): upper bounds, per unit.
LAT_KEYS = ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000")
LAT_MS_KEYS = LAT_KEYS + ("2000", ">=2000")
#: fio's clat histogram (stat.h): FIO_IO_U_PLAT_BITS, FIO_IO_U_PLAT_VAL, FIO_IO_U_PLAT_NR.
PLAT_BITS, PLAT_VAL = 6, 64
PLAT_NR = 29 * PLAT_VAL
#: fio's iodepth_level keys.
DEPTH_KEYS = ("1", "2", "4", "8", "16", "32", ">=64")
DEPTH_SUBMIT_KEYS = ("0", "4", "8", "16", "32", "64", ">=64")


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


def plat_index(value_ns: int) -> int:
    """fio's histogram bucket of a latency (stat.c ``plat_val_to_idx``, restated): exact up to
    2^6, then 64 buckets per power of two."""
    msb = max(int(value_ns).bit_length() - 1, 0)
    if msb <= PLAT_BITS:
        return int(value_ns)
    error_bits = msb - PLAT_BITS
    base = (error_bits + 1) << PLAT_BITS
    offset = (PLAT_VAL - 1) & (int(value_ns) >> error_bits)
    return min(base + offset, PLAT_NR - 1)


def plat_value(index: int) -> int:
    """The value fio writes for a bucket (stat.c ``plat_idx_to_val``): its midpoint."""
    if index < (PLAT_VAL << 1):
        return index
    error_bits = (index >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    return int(base + ((index % PLAT_VAL) + 0.5) * (1 << error_bits))


def bins(lat: Dict[str, Any]) -> Dict[str, int]:
    """json+'s ``bins``: count per fio bucket, keyed by the bucket's value in ns. Each of
    fio's buckets holds whole buckets of raidlab's histogram, so the counts are exact."""
    counts: Dict[int, int] = {}
    for low, _width, count in lat.get("buckets", ()):
        index = plat_index(low)
        counts[index] = counts.get(index, 0) + count
    return {str(plat_value(i)): c for i, c in sorted(counts.items())}


def direction(stats: Dict[str, Any], runtime_ns: int, plus: bool = False) -> Dict[str, Any]:
    """One of fio's per-direction objects (``read``, ``write``, ``trim``)."""
    seconds = runtime_ns / 1e9 if runtime_ns > 0 else 0.0
    ios, io_bytes = stats["ios"], stats["bytes"]
    bw_bytes = int(io_bytes / seconds) if seconds else 0
    latency = _latency(stats["lat_ns"]) if ios else _zero_latency()
    clat = dict(latency)
    if plus and ios:
        clat["bins"] = bins(stats["lat_ns"])
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
        "clat_ns": clat,
        "lat_ns": latency,
        **_samples(None),
    }


def _samples(windows: Any) -> Dict[str, Any]:
    """fio's bandwidth and IOPS sample statistics (KiB/s and I/O/s per sample)."""
    if not windows:
        return {"bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
                "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0}
    iops, bw = [w[0] for w in windows], [w[1] for w in windows]
    return {"bw_min": int(min(bw)), "bw_max": int(max(bw)), "bw_agg": 100.0, "bw_mean": _mean(bw),
            "bw_dev": _stddev(bw), "bw_samples": len(bw), "iops_min": int(min(iops)), "iops_max": int(max(iops)),
            "iops_mean": _mean(iops), "iops_stddev": _stddev(iops), "iops_samples": len(iops)}


def _mean(values: List[float]) -> float:
    return sum(values) / len(values)


def _stddev(values: List[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = _mean(values)
    return (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5


def sync_direction(stats: Dict[str, Any]) -> Dict[str, Any]:
    """fio's ``sync`` object: fsync/fdatasync counts and latency."""
    latency = _latency(stats["lat_ns"]) if stats["ios"] else _zero_latency()
    return {"total_ios": stats["ios"], "lat_ns": latency}


def _member_row(name: str, member: Dict[str, Any], end_ns: int) -> Dict[str, Any]:
    util = 100.0 * member["busy_ns"] / end_ns if end_ns else 0.0
    return {
        "name": name,
        "read_ios": member["read_ios"],
        "write_ios": member["write_ios"],
        "read_merges": member.get("read_merges", 0),
        "write_merges": member.get("write_merges", 0),
        "read_ticks": int(member.get("read_area", 0) // 1_000_000),
        "write_ticks": int(member.get("write_area", 0) // 1_000_000),
        "in_queue": int(member["queue_area"] // 1_000_000),
        "util": min(util, 100.0),
        "read_sectors": member["read_sectors"],
        "write_sectors": member["write_sectors"],
        "flush_ios": member["flush_ios"],
        "queue_depth_mean": member["queue_area"] / end_ns if end_ns else 0.0,
        # raidlab's: the ticks in ns (fio's are whole ms), for iostat's awaits.
        "read_time_ns": float(member.get("read_area", 0)),
        "write_time_ns": float(member.get("write_area", 0)),
    }


def disk_util(members: List[Dict[str, Any]], end_ns: int) -> List[Dict[str, Any]]:
    """fio's ``disk_util``: one entry per member (``read_ticks``/``write_ticks``/``in_queue`` in
    ms of request time in flight, as /proc/diskstats counts them)."""
    return [_member_row(f"member{index}", member, end_ns) for index, member in enumerate(members)]


def array_device(members: List[Dict[str, Any]], end_ns: int, host: Dict[str, Any],
                 measured_ns: Optional[int] = None) -> Dict[str, Any]:
    """The array device as fio's ``disk_util`` entry for md: its own counts (``host``: the host
    I/O) and fio's ``aggr_*`` keys over its members. raidlab writes it beside ``disk_util``
    (``array_device``), so that ``disk_util`` keeps one entry per member. Its counts are the
    jobs' measured I/O, after their ``ramp_time``: ``measured_ns`` (raidlab's key) is the time
    they cover, which rates over them divide by (the members' cover the whole run)."""
    measured_ns = end_ns if measured_ns is None else measured_ns
    rows = disk_util(members, end_ns)
    array = dict(_member_row(ARRAY_NAME, {
        "read_ios": host["read_ios"], "write_ios": host["write_ios"], "read_sectors": host["read_sectors"],
        "write_sectors": host["write_sectors"], "flush_ios": host["flush_ios"], "busy_ns": host["busy_ns"],
        "queue_area": host["queue_area"], "read_area": host["read_area"], "write_area": host["write_area"],
    }, end_ns))
    array["queue_depth_mean"] = host["queue_area"] / measured_ns if measured_ns else 0.0
    array.update({
        "measured_ns": measured_ns,
        "aggr_read_ios": sum(r["read_ios"] for r in rows),
        "aggr_write_ios": sum(r["write_ios"] for r in rows),
        "aggr_read_merges": sum(r["read_merges"] for r in rows),
        "aggr_write_merge": sum(r["write_merges"] for r in rows),  # sic: fio's key
        "aggr_read_ticks": sum(r["read_ticks"] for r in rows),
        "aggr_write_ticks": sum(r["write_ticks"] for r in rows),
        "aggr_in_queue": sum(r["in_queue"] for r in rows),
        "aggr_util": sum(r["util"] for r in rows) / len(rows) if rows else 0.0,
    })
    return array


#: The name of the array device's ``disk_util`` entry.
ARRAY_NAME = "md0"


def _host_device(result: Dict[str, Any]) -> Dict[str, Any]:
    """The array device as /proc/diskstats would count it: every host I/O, its time in flight
    (the sum of the latencies), and the time anything was in flight."""
    jobs = result["jobs"]

    def area(direction: str) -> float:
        return float(sum(j[direction]["lat_ns"]["mean"] * j[direction]["ios"] for j in jobs if j[direction]["ios"]))

    reads, writes = area("read"), area("write")
    return {
        "read_ios": sum(j["read"]["ios"] for j in jobs), "write_ios": sum(j["write"]["ios"] for j in jobs),
        "read_sectors": sum(j["read"]["bytes"] for j in jobs) // 512,
        "write_sectors": sum(j["write"]["bytes"] for j in jobs) // 512,
        "flush_ios": sum(j["flush"]["ios"] for j in jobs), "busy_ns": result.get("host_busy_ns", 0),
        "queue_area": reads + writes, "read_area": reads, "write_area": writes,
    }


def _latency_ranges(job: Dict[str, Any]) -> Dict[str, Dict[str, float]]:
    """fio's ``latency_ns``/``latency_us``/``latency_ms``: percent of the job's I/Os per range."""
    counts = {"ns": [0] * len(LAT_KEYS), "us": [0] * len(LAT_KEYS), "ms": [0] * len(LAT_MS_KEYS)}
    total = 0
    for name in ("read", "write"):
        for low, width, count in job[name]["lat_ns"].get("buckets", ()) if job[name]["ios"] else ():
            value = low + width // 2
            total += count
            for unit, scale in (("ns", 1), ("us", 1000), ("ms", 1_000_000)):
                if unit != "ms" and value >= 1000 * scale:
                    continue
                bounds = [int(k) for k in LAT_KEYS] + ([2000] if unit == "ms" else [])
                index = next((i for i, b in enumerate(bounds) if value < b * scale), len(bounds))
                counts[unit][index] += count
                break
    return {f"latency_{unit}": {key: (100.0 * c / total if total else 0.0)
                                for key, c in zip(LAT_MS_KEYS if unit == "ms" else LAT_KEYS, counts[unit])}
            for unit in ("ns", "us", "ms")}


def _depth_levels(spec: Any, ios: int) -> Dict[str, Dict[str, float]]:
    """``iodepth_level`` (the queue full at the job's depth for a closed loop), and fio's
    submit/complete batch counts, which the simulator does not have (zero)."""
    level = {key: 0.0 for key in DEPTH_KEYS}
    if spec is not None and ios and not (spec.rate_iops or spec.rate_bytes_per_s):
        depth = spec.iodepth
        key = ">=64" if depth >= 64 else next(k for k in reversed(DEPTH_KEYS[:-1]) if int(k) <= depth)
        level[key] = 100.0
    zero = {key: 0.0 for key in DEPTH_SUBMIT_KEYS}
    return {"iodepth_level": level, "iodepth_submit": zero, "iodepth_complete": dict(zero)}


def _windows(result: Dict[str, Any], job: Dict[str, Any], name: str) -> List[Any]:
    """(IOPS, KiB/s) per 1 s window of the one job of a run, for fio's sample statistics."""
    stats = job[name]
    if len(result["jobs"]) != 1 or not stats["ios"]:
        return []
    mean_bytes = stats["bytes"] / stats["ios"]
    key = "read_ios" if name == "read" else "write_ios"
    # fio takes no samples during ramp_time: the windows of the (one) job's measured part.
    windows = timeline.measured_windows(result)
    return [(p[key], p[key] * mean_bytes / 1024) for p in result["series"] if timeline.is_measured(windows, p["start_ns"])]


def job_entry(result: Dict[str, Any], index: int, spec: Any, options: Dict[str, str], group: int,
              plus: bool) -> Dict[str, Any]:
    """One job as fio writes it (every key of fio 3.x's ``jobs[]`` entries)."""
    job = result["jobs"][index]
    runtime = job["runtime_ns"]
    entry: Dict[str, Any] = {
        "jobname": job["name"], "groupid": group, "error": 0, "eta": 0,
        # fio's elapsed is the job's wall time in whole seconds, its ramp_time included.
        "elapsed": (job.get("ramp_ns", 0) + runtime) // 1_000_000_000, "job options": dict(options),
    }
    for name in ("read", "write"):
        entry[name] = direction(job[name], runtime, plus)
        entry[name].update(_samples(_windows(result, job, name)))
    entry["trim"] = direction({"ios": 0, "bytes": 0, "lat_ns": {}}, 0)
    entry["sync"] = sync_direction(job["flush"])
    entry.update({"job_runtime": runtime // 1_000_000, "usr_cpu": 0.0, "sys_cpu": 0.0, "ctx": 0, "majf": 0,
                  "minf": 0})
    entry.update(_depth_levels(spec, job["read"]["ios"] + job["write"]["ios"]))
    entry.update(_latency_ranges(job))
    entry.update({"latency_depth": spec.iodepth if spec is not None else 1, "latency_target": 0,
                  "latency_percentile": 100.0, "latency_window": 0})
    return entry


def _group_jobs(entries: List[Dict[str, Any]], result: Dict[str, Any], workload: Any, plus: bool) -> List[Dict[str, Any]]:
    """The document's job entries with each ``group_reporting`` group merged into one."""
    groups = list(workload.report_groups) or [0] * len(entries)
    out: List[Dict[str, Any]] = []
    for members in grouping.entry_members(workload, len(entries)):
        index = members[0]
        if len(members) == 1:
            out.append(entries[index])
            continue
        merged = grouping.merge_raw_jobs([result["jobs"][i] for i in members])
        series = result["series"] if len(members) == len(entries) else []
        view = {"jobs": [merged], "series": series}
        options = workload.job_options[index] if index < len(workload.job_options) else {}
        out.append(job_entry(view, 0, workload.jobs[index], options, groups[index], plus))
    return out


def phases(result: Dict[str, Any]) -> List[Dict[str, Any]]:
    """``[{"name", "start_s", "end_s", "read", "write"}]`` with fio's per-direction objects.

    A phase's rates are over the time the workload was measured in it (see
    :func:`raidlab.report.timeline.measured_windows`)."""
    shown = []
    windows = timeline.measured_windows(result)
    for phase in result["phases"]:
        # Over the part of the phase the jobs were measured in: not their ramp_time (no I/O is
        # counted then), nor the idle rest of a phase the workload ended before (a rebuild
        # simulated on after the last job).
        runtime = timeline.measured_ns(windows, phase["start_ns"], phase["end_ns"])
        shown.append({
            "name": phase["name"],
            "start_s": phase["start_ns"] / 1e9,
            "end_s": phase["end_ns"] / 1e9,
            "read": direction(phase["read"], runtime),
            "write": direction(phase["write"], runtime),
        })
    return shown


def document(result: Dict[str, Any], raidlab_block: Dict[str, Any], workload: Any = None,
             plus: bool = False, per_job: bool = False, steady: bool = False) -> Dict[str, Any]:
    """The whole fio-shaped document for a simulated run (``plus``: fio's json+ bins;
    ``per_job``: one entry per job even where the job file asks for ``group_reporting``), with
    its headline figures in ``raidlab.headline`` (:mod:`raidlab.report.headline`): over the
    steady state when ``steady`` (the command reports it) and the run reached one, else over the
    whole run."""
    specs = list(workload.jobs) if workload is not None else []
    options = list(getattr(workload, "job_options", ()) or ())
    groups = list(getattr(workload, "report_groups", ()) or ())
    jobs = []
    for index in range(len(result["jobs"])):
        spec = specs[index] if index < len(specs) else None
        jobs.append(job_entry(result, index, spec, options[index] if index < len(options) else {},
                              groups[index] if index < len(groups) else 0, plus))
    if not per_job and workload is not None and any(getattr(workload, "group_reporting", ()) or ()):
        jobs = _group_jobs(jobs, result, workload, plus)
    out = {
        "fio version": f"raidlab-{raidlab_block['version']}",
        "timestamp": 0,
        "timestamp_ms": 0,
        "time": "",
        "global options": dict(getattr(workload, "global_options", {}) or {}),
        "jobs": jobs,
        "disk_util": disk_util(result["members"], result["end_ns"]),
        "array_device": array_device(result["members"], result["end_ns"], _host_device(result),
                                     timeline.measured_ns(timeline.measured_windows(result))),
        "phases": phases(result),
        "rebuild": timeline.rebuild(result),
        "data_loss": timeline.data_loss(result, (raidlab_block.get("config") or {}).get("array")),
        "timeline": timeline.series(result),
        "steady_state": _steady_state(result, raidlab_block,
                                      grouping.entry_members(workload, len(result["jobs"]), per_job)),
    }
    if result.get("page_cache") is not None:  # runs with buffered jobs only
        out["page_cache"] = page_cache(result["page_cache"])
    if result.get("host") is not None:  # runs with --host only
        out["host"] = dict(result["host"])
    if result.get("drive_events"):  # runs where a drive misbehaved only
        out["drive_events"] = timeline.drive_events(result)
    out["raidlab"] = dict(raidlab_block)
    out["raidlab"]["headline"] = headline.compute(out, steady)
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


def _steady_state(result: Dict[str, Any], raidlab_block: Dict[str, Any],
                  entries: List[List[int]]) -> Optional[Dict[str, Any]]:
    """When the run reached steady state: fio's own criterion (the job's ``ss``; the
    run ended there) or, without one, report.steady's default; the timeline before ``from_s``
    is the warm-up. ``entries``: the raw jobs behind each of the document's job entries."""
    jobs = ((raidlab_block.get("config") or {}).get("workload") or {}).get("jobs") or []
    # Only the whole seconds the workload ran in count (a rebuild may run on after it): up to
    # the end of its last job, which may have started late (stonewall, startdelay).
    spans = [(job["start_ns"], job["start_ns"] + job["ramp_ns"] + job["runtime_ns"]) for job in result["jobs"]]
    end_s = max((end for _, end in spans), default=0) / 1e9
    series = [point for point in timeline.series(result) if steady_figures.in_window(point["t_s"], 0.0, end_s)]
    fio_ss = next((job["steady_state"] for job in jobs if job.get("steady_state")), None)
    if fio_ss is not None:
        at_ns = result.get("steady_state_ns")
        limit = f"{fio_ss['limit']:g}{'%' if fio_ss['percent'] else ''}"
        section = {"ss": f"{fio_ss['metric']}:{limit}", "ss_dur_s": fio_ss["duration_ns"] / 1e9,
                   "ss_ramp_s": fio_ss["ramp_ns"] / 1e9, "attained": at_ns is not None,
                   "attained_s": None if at_ns is None else at_ns / 1e9, "from_s": None, "to_s": None,
                   "iops": None}
        if at_ns is not None:
            section["from_s"] = max(float(int(at_ns / 1e9 - fio_ss["duration_ns"] / 1e9)), 0.0)
            section["to_s"] = end_s
            window = [p["read_iops"] + p["write_iops"] for p in series if p["t_s"] >= section["from_s"]]
            section["iops"] = sum(window) / len(window) if window else None
            _steady_latency(section, result, end_s, entries)
        return section
    if not _one_continuous_load(spans):
        # Jobs one after another have no common level: the criterion is for one load.
        return None
    found = steady_figures.steady_state({"timeline": series})
    if found is None:
        return None
    # The steady state runs to the end of the workload (the seconds its IOPS are a mean of).
    section = {**found, "to_s": end_s, "attained": True}
    _steady_latency(section, result, end_s, entries)
    return section


def _one_continuous_load(spans: List[Tuple[int, int]]) -> bool:
    """Whether every job ran over the same seconds (``spans``: each job's start and end, ns):
    what the default steady-state criterion judges. Jobs that start or end apart (fio
    ``stonewall``, ``startdelay``, different runtimes) put loads of different levels one after
    another in the time series, and the sum of their rates never ran at any one time."""
    starts, ends = [start for start, _ in spans], [end for _, end in spans]
    return not spans or (max(starts) - min(starts) < 1_000_000_000 and max(ends) - min(ends) < 1_000_000_000)


def _steady_latency(section: Dict[str, Any], result: Dict[str, Any], end_s: float,
                    entries: List[List[int]]) -> None:
    """The steady state's latency percentiles over every job (``latency_ms``) and of each job
    entry of the document (``latency_ms_by_job``; a group_reporting group's are its jobs'
    together), when the run kept each second's distributions (its ``latency_by_second``:
    compare and plan)."""
    figures = steady_figures.latency_ms(result["series"], section["from_s"], end_s, entries)
    if figures is not None:
        section["latency_ms"], section["latency_ms_by_job"] = figures
