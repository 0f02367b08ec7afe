"""The bad days in a report: the measured parts of a run, the rebuild with its rate and a
full-size estimate, data loss, drive events and the 1 s time series (its fio-format log files:
:mod:`raidlab.report.fio_logs`)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from raidlab import stacked

SECTOR_BYTES = 512


def measured_windows(result: Dict[str, Any]) -> List[Tuple[int, int]]:
    """Each job's measured part, ``(from_ns, to_ns)``: from its start plus its ``ramp_time`` (fio
    counts no I/O before, its statistics reset after the ramp) to the end of its runtime, within
    the run; merged where jobs overlap, in time order."""
    end_ns = result.get("end_ns", 0)
    spans = sorted((job.get("start_ns", 0) + job.get("ramp_ns", 0),
                    min(job.get("start_ns", 0) + job.get("ramp_ns", 0) + job["runtime_ns"], end_ns))
                   for job in result.get("jobs") or [])
    merged: List[Tuple[int, int]] = []
    for start, end in spans:
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def measured_ns(windows: List[Tuple[int, int]], start: int = 0, end: Optional[int] = None) -> int:
    """How much of ``[start, end)`` the measured windows cover."""
    return sum(max(min(b, end if end is not None else b) - max(a, start), 0) for a, b in windows)


def is_measured(windows: List[Tuple[int, int]], at_ns: int) -> bool:
    """Whether a window of the time series starting at ``at_ns`` lies in a measured part."""
    return any(a <= at_ns < b for a, b in windows)


def rebuild(result: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The first rebuild that was not aborted (else the first): start, end, duration and average
    rate (KiB/s per device); when the run ended first, or the replacement failed mid-rebuild
    (``aborted_s``), the duration is extrapolated from the average rate and labelled so."""
    if not result["rebuilds"]:
        return None
    first = next((r for r in result["rebuilds"] if r.get("aborted_ns") is None), result["rebuilds"][0])
    aborted_ns = first.get("aborted_ns")
    end_ns = first["end_ns"] if first["end_ns"] is not None else aborted_ns if aborted_ns is not None \
        else result["end_ns"]
    elapsed_s = max(end_ns - first["start_ns"], 1) / 1e9
    rate_kib_s = first["done_sectors"] * SECTOR_BYTES / 1024 / elapsed_s
    start_sector = first.get("start_sector", 0)
    total_kib = (first["total_sectors"] - start_sector) * SECTOR_BYTES / 1024
    finished = first["end_ns"] is not None
    duration_s = elapsed_s if finished else (total_kib / rate_kib_s if rate_kib_s > 0 else None)
    by_zones = not finished and first.get("estimated_duration_ns") is not None
    if by_zones:
        # The rate over the zones done, carried over the zones left at their own rates
        # (inner zones are slower; a straight extrapolation of the outer rate is short).
        duration_s = first["estimated_duration_ns"] / 1e9
    return {
        "member": first["member"],
        "start_s": first["start_ns"] / 1e9,
        "end_s": first["end_ns"] / 1e9 if finished else None,
        "duration_s": duration_s,
        "rate_kib_s": rate_kib_s,
        "progress_pct": 100.0 * (start_sector + first["done_sectors"]) / max(first["total_sectors"], 1),
        "member_bytes": first["total_sectors"] * SECTOR_BYTES,
        "extrapolated": not finished,
        "extrapolated_by": None if finished else ("zone rates" if by_zones else "average rate"),
        "aborted_s": aborted_ns / 1e9 if aborted_ns is not None else None,
    }


def series(result: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One entry per simulated second: IOPS, latency p50/p99 (ms) and rebuild progress."""
    return [{
        "t_s": point["start_ns"] / 1e9,
        "read_iops": point["read_ios"],
        "write_iops": point["write_ios"],
        "latency_ms_p50": point["latency_ns_p50"] / 1e6,
        "latency_ms_p99": point["latency_ns_p99"] / 1e6,
        "rebuild_pct": point["rebuild_pct"],
    } for point in result["series"]]


def data_loss(result: Dict[str, Any], array: Optional[Dict[str, Any]] = None) -> Optional[Dict[str, Any]]:
    """When the array lost data and the physical members failed then; for a stacked array
    (``array``: the run's array configuration) also ``why``: the inner array that died."""
    loss = result["data_loss"]
    if loss is None:
        return None
    out = {"at_s": loss["at_ns"] / 1e9, "failed_members": loss["failed"]}
    if array and stacked.is_stacked(array.get("level")):
        why = stacked.loss_message(array, list(loss["failed"]))
        if why is not None:
            out["why"] = why
    return out


def drive_events(result: Dict[str, Any]) -> List[Dict[str, Any]]:
    """What the members' behaviour did (``latent-error``, ``read-error``, ``retry``,
    ``corrected``, ``timeout-dropped``), in time order."""
    return [{"at_s": event["at_ns"] / 1e9, "member": event["member"], "event": event["event"]}
            for event in result.get("drive_events", [])]
