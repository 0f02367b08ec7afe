"""A run in words: what ran (the array, or the fio that measured it), its workload, and a short
label; the HTML report's headings and the notebook view (``SimResult._repr_html_``) say the
same."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from raidlab.report.svg import fmt_num
from raidlab.workload import Workload


def raidlab_block(document: Dict[str, Any]) -> Dict[str, Any]:
    """The document's ``raidlab`` block ({} when it has none)."""
    return document.get("raidlab") or {}


def config_of(document: Dict[str, Any]) -> Dict[str, Any]:
    """The configuration the run resolved to ({} when the document does not record it)."""
    return raidlab_block(document).get("config") or {}


def _drive_name(drive: Any) -> str:
    if not isinstance(drive, dict):
        return str(drive)
    name = drive.get("preset") or drive.get("kind") or "custom drive"
    return f"{name} (modified)" if drive.get("params") else str(name)


def workload_text(config: Dict[str, Any]) -> str:
    """The workload in one line, as ``raidlab sim`` titles it."""
    workload = config.get("workload")
    if not workload:
        return "unknown workload"
    source = workload.get("source", {})
    if source.get("tool") == "idle" or not workload.get("jobs"):
        return "idle (no foreground I/O)"
    try:
        return Workload.from_dict(workload).describe()
    except Exception:  # a document from another version: say where it came from instead
        return f"{source.get('tool', 'workload')}: {source.get('text', '')}".strip()


def is_measured(document: Dict[str, Any]) -> bool:
    """A run fio measured (``raidlab measure`` or ``raidlab import``), not a simulation."""
    return raidlab_block(document).get("source") == "measured"


#: fio job options that say what a job did, in the order a reader wants them.
_FIO_KEYS = ("rw", "rwmixread", "bs", "iodepth", "numjobs", "ioengine", "direct", "size", "runtime")


def fio_jobs_text(document: Dict[str, Any]) -> str:
    """A measured run's workload from the options fio recorded per job ("global options" and
    each job's "job options" in fio's JSON)."""
    shared = document.get("global options") or {}
    parts = []
    for job in document.get("jobs") or []:
        options = {**shared, **(job.get("job options") or {})}
        said = ", ".join(f"{key}={options[key]}" for key in _FIO_KEYS if key in options)
        parts.append(f"{job.get('jobname', 'job')}: {said or 'no job options recorded'}")
    return "; ".join(parts) or "no jobs"


def describe_run(document: Dict[str, Any]) -> Tuple[str, str]:
    """(what ran, its workload) in words: the array and workload of a simulation, or for a
    measured run the fio version and target, and the workload fio recorded."""
    if not is_measured(document):
        config = config_of(document)
        return describe_array(config), workload_text(config)
    block = raidlab_block(document)
    version = block.get("tool_version") or document.get("fio version") or "fio"
    target = f" on {block['target']}" if block.get("target") else ""
    workload = workload_text(block) if block.get("workload") else fio_jobs_text(document)
    return f"measured with {version}{target} (not simulated)", workload


def describe_array(config: Dict[str, Any]) -> str:
    """"raid5 ×6, left-symmetric, 512 KiB chunk · cheetah-10k7 · md, mq-deadline"."""
    array = config.get("array") or {}
    if not array:
        return "unknown configuration"
    controller = config.get("controller") or {}
    kind = controller.get("kind", "md")
    if kind == "hw":
        cache = f"{controller.get('cache_mib', 0)} MiB {'BBU ' if controller.get('bbu') else ''}cache"
        ctrl = f"hardware controller, {cache}"
    else:
        ctrl = "Linux md"
    parts = [f"raid{array.get('level', '?')} ×{array.get('devices', '?')}, "
             f"{array.get('layout') or 'default layout'}, {array.get('chunk_kib', '?')} KiB chunk",
             _drive_name(config.get("drive")), f"{ctrl}, {config.get('scheduler', '?')}"]
    failed = config.get("failed") or []
    if failed:
        parts.append("failed: " + ", ".join(f"member{m}" for m in failed))
    events = config.get("timeline") or []
    if events:
        parts.append(", ".join(f"{e.get('action')} member{e.get('member')} at {fmt_num(e.get('at_s', 0))} s"
                               for e in events))
    if _spare(config):
        parts.append("hot spare")
    return " · ".join(parts)


def _spare(config: Dict[str, Any]) -> bool:
    """Whether the run had md's hot spare: ``rebuild.spare``, the setting's declared name
    (documents written before the recorded configuration used it say ``hot_spare``)."""
    rebuild = config.get("rebuild") or {}
    return bool(rebuild.get("spare", rebuild.get("hot_spare")))


def run_label(document: Dict[str, Any]) -> str:
    if is_measured(document):
        block = raidlab_block(document)
        jobs = ",".join(str(job.get("jobname", "job")) for job in document.get("jobs") or [])
        return f"measured {jobs} ({block.get('tool_version') or document.get('fio version') or 'fio'})"
    config = config_of(document)
    array = config.get("array") or {}
    if not array:
        return "run"
    label = f"raid{array.get('level')} ×{array.get('devices')} {_drive_name(config.get('drive'))}"
    if config.get("failed"):
        label += " failed " + ",".join(str(m) for m in config["failed"])
    for event in config.get("timeline") or []:
        label += f" {event.get('action')} {event.get('member')}@{fmt_num(event.get('at_s', 0))}s"
    if _spare(config):
        label += " spare"
    return label
