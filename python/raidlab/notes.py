"""What a user should know about a run that does not stop it: one line each.

``raidlab sim`` and ``raidlab compare`` print every note on stderr (``raidlab: note: ...``) and
record them in the JSON document (``raidlab.notes``). Sources:

- the workload parsers' notes (e.g. "iodepth=32 is capped at 1 by the psync engine");
- a job region that runs past the end of the array: the engine clips it (``Region::of`` in
  crates/raidlab-core/src/sim/offsets.rs takes ``min(size, capacity - offset)``, rounded down
  to whole blocks), so the job covers less than it asked for;
- a run time beyond the bound on simulated time: the engine stops at ``min(run time,
  max_time_s)`` (``Simulation::new`` in crates/raidlab-core/src/sim/engine/mod.rs);
- after the run: a workload with no run time that was still going when the bound stopped it,
  scripted failures or replacements timed after the run's end (they never happened), and HDD
  members whose write cache acknowledged the writes (the latency shown is the cache's).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List

from raidlab import _core, stacked
from raidlab.array import Array
from raidlab.terminal import printable
from raidlab.workload.units import human_bytes, human_duration


def array_capacity_bytes(spec: Any) -> int:
    """Usable bytes of the spec's array as the simulator builds it: each member (the drive or its
    partition) less the data offset before its data (mdadm's on md, none behind a controller)."""
    d = spec.design
    if stacked.is_stacked(d.level):
        return stacked.geometry(d, d.drive.capacity_bytes // 1024)["capacity_bytes"]
    md = d.controller_values()[0] == "md"
    member_kib = _core.member_data_kib(md, d.level, d.devices, d.member_bytes(), d.chunk_kib)
    return Array(level=d.level, devices=d.devices, chunk_kib=d.chunk_kib, layout=d.layout,
                 member_kib=member_kib).capacity_bytes


def before(spec: Any) -> List[str]:
    """Notes known before the run starts."""
    workload = spec.workload
    if workload is None:
        return []
    notes = list(workload.notes)
    capacity = array_capacity_bytes(spec)
    for job in workload.jobs:
        if job.size_bytes and job.offset_bytes + job.size_bytes > capacity > job.offset_bytes:
            where = f" from offset {human_bytes(job.offset_bytes)}" if job.offset_bytes else ""
            notes.append(f"job '{job.name}': size {human_bytes(job.size_bytes)}{where} is larger than the "
                         f"array ({capacity} bytes, {human_bytes(capacity)}); the simulator clips the job's "
                         f"region to the array's end, so it covers {human_bytes(capacity - job.offset_bytes)}")
    limit_ns = max((job.runtime_ns + job.ramp_ns for job in workload.jobs if job.runtime_ns), default=0)
    bound_s = spec.options.max_time_s
    if limit_ns > bound_s * 1e9:
        notes.append(f"the workload runs for {human_duration(limit_ns)} but simulated time is bounded "
                     f"at {bound_s:g} s (--max-time-s): the run stops at {bound_s:g} s")
    return notes


def after(spec: Any, raw: Dict[str, Any]) -> List[str]:
    """Notes only the finished run can tell: a workload with no run time that the bound cut."""
    workload = spec.workload
    bound_ns = int(spec.options.max_time_s * 1e9)
    late = events_after_the_end(spec, raw) + drive_cache_acknowledged(spec, raw)
    if workload is None or raw["end_ns"] < bound_ns or any(job.runtime_ns for job in workload.jobs):
        return late
    if all(job["finished"] for job in raw["jobs"]):
        return late  # the jobs got through their work; the run went on for a rebuild or destage
    unsized = [job.name for job in workload.jobs if not job.size_bytes and not job.time_based]
    why = (f"; job(s) {', '.join(repr(n) for n in unsized)} have no size and no runtime, so each "
           "would cover the whole array" if unsized else "")
    return late + [f"the workload has no runtime and was still running when the run stopped at the "
                   f"{spec.options.max_time_s:g} s bound on simulated time (--max-time-s){why}"]


#: A member write that completes faster than this was acknowledged from the drive's write cache:
#: no disk reaches its media that fast (a 15k rpm drive turns once in 4 ms, so its mean
#: rotational wait alone is 2 ms).
_MEDIA_WRITE_FLOOR_NS = 1_000_000


def drive_cache_acknowledged(spec: Any, raw: Dict[str, Any]) -> List[str]:
    """HDD members whose write cache acknowledged md's writes (mean member write time under a
    millisecond): the write latencies shown are the cache's, and the model's cache absorbs
    random writes more than real drives do (until the drives' behaviour under load is modelled)."""
    if spec.design.drive.kind != "hdd" or spec.config().get("drive_write_cache") is False:
        return []
    members = [m for m in raw["members"] if m.get("write_ios")]
    if not members:
        return []
    slowest_ns = max(m["write_area"] / m["write_ios"] for m in members)
    if slowest_ns >= _MEDIA_WRITE_FLOOR_NS:
        return []
    busiest = max(m["busy_ns"] for m in raw["members"]) / max(raw["end_ns"], 1)
    return [f"the HDD members' writes were acknowledged from their write cache (mean member write "
            f"{slowest_ns / 1e6:.2f} ms at up to {100 * min(busiest, 1):.0f} % utilisation): the write "
            "latencies shown count the cache's acknowledgement, not the media write, and the model's cache "
            "absorbs random writes more than real drives do; --drive-write-cache off shows the media's"]


def events_after_the_end(spec: Any, raw: Dict[str, Any]) -> List[str]:
    """Scripted failures and replacements timed after the run ended never happened: say so
    (``--fail 0@1h`` on a 10 s run used to leave no trace at all)."""
    end_s = raw["end_ns"] / 1e9
    return [f"--{e['action']} {e['member']}@{e['at_s']:g}s never happened: the run ended at {end_s:g} s "
            "simulated" for e in sorted(spec.options.timeline, key=lambda e: e["at_s"])
            if e["at_s"] > end_s]


def emit(notes: List[str], context: str = "") -> None:
    """Each note as one line on stderr: ``raidlab: note: [CONTEXT: ]NOTE``, with any control
    character a note quotes (a job or file name) shown escaped."""
    for note in notes:
        print(printable(f"raidlab: note: {context + ': ' if context else ''}{note}"), file=sys.stderr, flush=True)
