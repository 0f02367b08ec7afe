"""Simulating one candidate design: optimal, one member failed, and rebuilding onto a spare.

:func:`evaluate` is the unit of parallel work. It takes only plain, picklable data and depends
on nothing but its arguments and the seed, so the planner's answer does not depend on how many
processes run it or in what order.

Scenarios (each a ``raidlab.sim`` run with the same seed, so designs face the same request
stream — common random numbers):

- optimal: the workload as given (closed loop at its own concurrency): IOPS and p99 latency.
- degraded: member 0 failed, no spare: the IOPS the array keeps serving until someone acts.
- repair: the same rebuild with the array otherwise idle (:func:`repair`), the repair time of
  the design's P(loss), as ``raidlab reliability`` takes it.
- rebuilding: member 0 failed with a hot spare, so md rebuilds from the start of the run, while
  the array serves the load it must carry: the workload throttled to the --min-iops target when
  one is given (a DBA's "rebuild while serving the required load"), else at full speed. md's
  resync throttle (speed_limit_min/max with is_mddev_idle, drivers/md/md.c) decides the rate;
  the simulator extrapolates the rate to the drive's full size (``rebuild.duration_s``). This
  run is longer (``rebuild_s``): md measures its resync speed against marks taken every 3 s over
  a 30 s window (md_do_sync's SYNC_MARK_STEP/SYNC_MARKS) and, until the window fills, it runs
  faster than it will for the rest of the rebuild; a short run would flatter the rebuild time.

Work is skipped once a design has failed a target: a design that misses the IOPS target is not
also run degraded. Skipped scenarios are reported as ``None``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, Optional

from raidlab.rebuild import repair_time
from raidlab.report import headline, steady
from raidlab.run import DEFAULTS, build_run
from raidlab.sim import run_spec
from raidlab.workload import Workload


def throttled(workload: Workload, total_iops: float) -> Workload:
    """The workload with every thread capped so all threads together issue ``total_iops``
    (fio rate_iops per thread, evenly spaced)."""
    threads = sum(job.threads for job in workload.jobs)
    per_thread = max(1, math.ceil(total_iops / threads))
    jobs = tuple(dataclasses.replace(job, rate_iops=per_thread, arrival="linear") for job in workload.jobs)
    return dataclasses.replace(workload, jobs=jobs)


def _p99_ns(stats: Dict[str, Any]) -> Optional[int]:
    return stats["clat_ns"].get("percentile", {}).get("99.000000") if stats["total_ios"] else None


def metrics(document: Dict[str, Any]) -> Dict[str, Any]:
    """Totals over all jobs: IOPS and MiB/s (reads + writes) at steady state when the run
    reaches one (report.steady; ``steady_from_s``), and the worst data-I/O p99 (the larger of
    the read and write p99 of any job: a DBA's target holds for both), over the same steady
    state when the run kept each second's latencies (it does: :func:`_spec`)."""
    iops = 0.0
    bw = 0
    p99s = []
    for job in document["jobs"]:
        for direction in ("read", "write"):
            stats = job[direction]
            iops += stats["iops"]
            bw += stats["bw_bytes"]
            p99 = _p99_ns(stats)
            if p99 is not None:
                p99s.append(p99)

    # Steady-state figures when the run settles (report.steady says how).
    figures = steady.scale(document, iops, bw / 2**20)
    if figures["latency_ms_by_job"]:
        p99s = [direction["p99"] * 1e6 for job in figures["latency_ms_by_job"] if job
                for direction in (job["read"], job["write"]) if direction]
    return {"iops": round(figures["iops"], 1), "mib_s": round(figures["mib_s"], 2),
            "p99_ms": round(max(p99s) / 1e6, 3) if p99s else None, "steady_from_s": figures["steady_from_s"],
            "basis": _basis(document, figures["steady_from_s"])}


def _basis(document: Dict[str, Any], steady_from_s: Optional[float]) -> str:
    """What the figures cover, in the words every output uses (:mod:`raidlab.report.headline`)."""
    to_s = (document.get("steady_state") or {}).get("to_s")
    if steady_from_s is None or to_s is None:
        return headline.WHOLE_RUN
    return headline.steady_basis(steady_from_s, to_s)


def _spec(task: Dict[str, Any], workload: Optional[Workload], failed, spare: bool, rebuild_start_pct: float = 0.0):
    design = task["design"]
    return build_run({"level": design["level"], "devices": design["devices"], "layout": design["layout"],
                      "chunk_kib": design["chunk_kib"], "drive": task["drive_choice"], "controller": "md",
                      "stripe_cache_size": task["stripe_cache_size"], "scheduler": task["scheduler"],
                      "failed": failed, "spare": spare, "seed": task["seed"], "latency_by_second": True,
                      "max_time_s": task.get("max_time_s", DEFAULTS["max_time_s"]),
                      "speed_limit_min": task.get("speed_limit_min", DEFAULTS["speed_limit_min"]),
                      "speed_limit_max": task.get("speed_limit_max", DEFAULTS["speed_limit_max"]),
                      "rebuild_start_pct": rebuild_start_pct, "host": task.get("host"),
                      # A stack: the planner uses one chunk at both levels.
                      **({"outer_chunk_kib": design["chunk_kib"]} if "+" in str(design["level"]) else {})},
                     workload=workload, allow_idle=workload is None)


def _run(task: Dict[str, Any], workload: Optional[Workload], failed, spare: bool) -> Dict[str, Any]:
    return run_spec(_spec(task, workload, failed, spare)).to_dict()


def repair(task: Dict[str, Any]) -> Dict[str, Any]:
    """The design's repair time for P(loss): member 0 rebuilt onto a hot spare with no other I/O
    (md runs at the lower of the drive's streaming rate and speed_limit_max), by the function
    ``raidlab reliability`` uses (:func:`raidlab.rebuild.repair_time`), so both give one P(loss)."""
    design = task["design"]
    stack = {"outer_chunk_kib": design["chunk_kib"]} if "+" in str(design["level"]) else None
    return repair_time(level=design["level"], devices=design["devices"], layout=design["layout"],
                       chunk_kib=design["chunk_kib"], drive=task["drive_choice"],
                       speed_limit_min=task.get("speed_limit_min", DEFAULTS["speed_limit_min"]),
                       speed_limit_max=task.get("speed_limit_max", DEFAULTS["speed_limit_max"]),
                       host=task.get("host"), stack=stack)


def evaluate(task: Dict[str, Any]) -> Dict[str, Any]:
    """Runs a design's scenarios; returns ``{"optimal", "degraded", "rebuild"}`` metrics."""
    targets = task["targets"]
    workload: Workload = task["workload"].with_runtime_ns(int(task["runtime_s"] * 1e9))
    out: Dict[str, Any] = {"optimal": metrics(_run(task, workload, (), False)),
                           "degraded": None, "rebuild": None}
    optimal = out["optimal"]
    if targets.get("min_iops") is not None and optimal["iops"] < targets["min_iops"]:
        return out
    if targets.get("max_p99_ms") is not None and (optimal["p99_ms"] is None
                                                   or optimal["p99_ms"] > targets["max_p99_ms"]):
        return out
    if task["redundant"]:
        out["degraded"] = metrics(_run(task, workload, (0,), False))
        if targets.get("min_degraded_iops") is not None and out["degraded"]["iops"] < targets["min_degraded_iops"]:
            return out
        load = workload.with_runtime_ns(int(task["rebuild_s"] * 1e9))
        if targets.get("min_iops") is not None:
            load = throttled(load, targets["min_iops"])
        document = _run(task, load, (0,), True)
        rebuild = document.get("rebuild") or {}
        served = metrics(document)
        duration = rebuild.get("duration_s")
        out["rebuild"] = {
            "rate_kib_s": rebuild.get("rate_kib_s"),
            "hours": round(duration / 3600, 3) if duration else None,
            "extrapolated": bool(rebuild.get("extrapolated")),
            "served_iops": served["iops"], "p99_ms": served["p99_ms"],
            "load": "min-iops" if targets.get("min_iops") is not None else "full",
        }
        out["repair"] = repair(task)
    return out
