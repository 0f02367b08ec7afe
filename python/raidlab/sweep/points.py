"""A sweep's points resolved through the one run type: each point's :class:`raidlab.run.RunSpec`,
its key, and its options as the store's columns.

Every point is resolved (and its array checked) before any point runs, so a bad value anywhere
in a grid is one line naming the point, not a failure an hour into the sweep.

A point's key is the SHA-256 of its resolved core configuration (which holds the seed, the
drive's parameters and the parsed workload) and the raidlab version: the same point gives the
same key wherever it runs, and a changed drive file, job file or version gives a new one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from raidlab import _core, notes, stacked
from raidlab.drives import resolve_drive
from raidlab.errors import ConfigError, RaidlabError
from raidlab.inputs import FILE_SETTINGS, beside
from raidlab.run import WORKLOAD_KEYS, Design, Options, RunSpec, build_run
from raidlab.sim import parse_events, resolve_workload
from raidlab.stacked import is_stacked
from raidlab.sweep.grid import EVENT_KEYS, Point

#: Hex digits of a point's key (128 bits of the SHA-256).
KEY_DIGITS = 32


@dataclass
class Resolved:
    """A point ready to run: its spec, key and option columns."""

    point: Point
    spec: RunSpec
    key: str
    options: Dict[str, Any]


def point_key(spec: RunSpec) -> str:
    """The hash of the resolved configuration (seed included) and the raidlab version; the
    report setting ``latency_by_second`` is left out, as it is of the row's columns."""
    config = {k: v for k, v in spec.config().items() if k != "latency_by_second"}
    text = json.dumps({"config": config, "version": _core.__version__}, sort_keys=True,
                      separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_DIGITS]


def _events(value: Any, action: str, where: str) -> List[Dict[str, Any]]:
    """``fail``/``replace``: one ``K@T`` text, a list of them, or none ("" or [])."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        raise ConfigError(f"{where}{action} = {value!r}: expected \"K@T\" or a list of them, e.g. \"2@30s\"")
    return parse_events([i for i in items if i.strip()], action)


def _failed(value: Any) -> Any:
    """``failed`` as the sweep file gives it: one member (an int), "0,2", a list, or none."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return (value,)
    if isinstance(value, str) and not value.strip():
        return ()
    return value


class Resolver:
    """Turns points' settings into run settings, resolving each distinct drive and workload once
    (reading a drive's or a job's file is the costly part of a point's resolution)."""

    def __init__(self, base: Optional[str] = None) -> None:
        self.base = base
        self.drives: Dict[str, Any] = {}
        self.workloads: Dict[str, Any] = {}
        self.checked: Dict[str, Optional[str]] = {}

    def settings(self, point: Point, where: str) -> Tuple[Dict[str, Any], Any]:
        given = dict(point.settings)
        events = [e for action in EVENT_KEYS if action in given
                  for e in _events(given.pop(action), action, where)]
        if events:
            timeline = given.get("timeline") or []
            # a timeline that is not a list is left for build_run to refuse, in its words
            given["timeline"] = list(timeline) + events if isinstance(timeline, (list, tuple)) else timeline
        if "failed" in given:
            given["failed"] = _failed(given["failed"])
        for key in FILE_SETTINGS:
            if key in given:
                given[key] = beside(key, given[key], self.base)
        if isinstance(given.get("drive"), str):
            name = given["drive"]
            if name not in self.drives:
                self.drives[name] = resolve_drive(name, f"{where}drive")
            given["drive"] = self.drives[name]
        chosen = tuple((k, given.pop(k)) for k in WORKLOAD_KEYS if given.get(k) is not None)
        workload = None
        if chosen:
            cache = repr(chosen)
            if cache not in self.workloads:
                self.workloads[cache] = resolve_workload(**dict(chosen))
            workload = self.workloads[cache]
        return given, workload

    def check_array(self, spec: RunSpec, where: str) -> None:
        """The array md would build (members failed from the start included): the core's own
        check, made once per distinct array and failure set."""
        notes.array_capacity_bytes(spec)
        if not spec.options.failed:
            return
        config = spec.config()
        shape = json.dumps([config["array"], config["failed"], config["controller"]["kind"]], sort_keys=True)
        if shape not in self.checked:
            try:
                stacked.core_simulation(config)  # a stack's data loss names its inner array
                self.checked[shape] = None
            except RaidlabError as error:
                self.checked[shape] = str(error)
        if self.checked[shape] is not None:
            raise ConfigError(f"{where}{self.checked[shape]}")

    def resolve(self, point: Point, label: str) -> Resolved:
        where = f"{label}{point.label()}: "
        try:
            settings, workload = self.settings(point, where)
            spec = build_run(settings, workload=workload, where=where)
            self.check_array(spec, where)
        except RaidlabError as error:  # every message names the point, once
            message = " ".join(str(error).split())
            raise ConfigError(message if message.startswith(where) else f"{where}{message}") from None
        return Resolved(point, spec, point_key(spec), option_columns(spec, point.settings))


def resolve_all(points: Sequence[Point], label: str = "", base: Optional[str] = None,
                progress: Optional[Callable[[int], None]] = None) -> List[Resolved]:
    """Every point resolved (the first bad one raises ConfigError naming it); points that
    resolve to the same key (the same run) are kept once, first come first kept."""
    resolver = Resolver(base)
    seen: Dict[str, Resolved] = {}
    for point in points:
        resolved = resolver.resolve(point, label)
        seen.setdefault(resolved.key, resolved)
        if progress is not None:
            progress(1)
    return list(seen.values())


# -- a point's options as columns ---------------------------------------------------------------

#: Settings stored as the text the user gave (the workload's source) beside the resolved ones,
#: and a stack's level by name (``stacked_level``: md's ``level`` number column has none for it).
TEXT_COLUMNS = ("fio", "sysbench", "preset", "fail", "replace", "workload", "stacked_level")


def option_names() -> List[str]:
    """Every option column, in the order of raidlab.run's declarations (a setting added there
    becomes a column here)."""
    names = [f.name for cls in (Design, Options) for f in fields(cls) if f.name != "timeline"]
    return names + list(TEXT_COLUMNS)


def _events_text(spec: RunSpec, action: str) -> str:
    return ",".join(f"{e['member']}@{e['at_s']:g}s" for e in sorted(spec.options.timeline, key=lambda e: e["at_s"])
                    if e["action"] == action)


def _runtime_s(spec: RunSpec) -> Optional[float]:
    """The run time as resolved: given, else the workload's own (None: bounded only)."""
    if spec.options.runtime_s is not None:
        return float(spec.options.runtime_s)
    if spec.workload is None:
        return float(spec.options.max_time_s)
    longest = max((job.runtime_ns + job.ramp_ns for job in spec.workload.jobs if job.runtime_ns), default=0)
    return longest / 1e9 if longest else None


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def option_columns(spec: RunSpec, given: Mapping[str, Any]) -> Dict[str, Any]:
    """The point's resolved options by name: defaults filled in, the drive by its name, the level
    as md's number (a stack by name, in stacked_level), the default layout named, members failed
    as "0,2" (as ``--failed`` takes them)."""
    d, o = spec.design, spec.options
    row: Dict[str, Any] = {f.name: _plain(getattr(d, f.name)) for f in fields(Design)}
    # A report setting, not part of the point: left out of the row and the store's columns.
    row.update({f.name: _plain(getattr(o, f.name)) for f in fields(Options)
                if f.name not in ("timeline", "latency_by_second")})
    # The level column is md's level number; a stack (1+0, 5+0, 6+0, 0+1) has none,
    # so its row has no level and names the stack in stacked_level.
    stacked = is_stacked(d.level)
    row["level"] = None if stacked else int(d.level)
    row["stacked_level"] = d.level if stacked else None
    row["drive"] = d.drive.name
    row["layout"] = d.layout or _default_layout(d.level)
    row["failed"] = ",".join(str(m) for m in o.failed)
    row["runtime_s"] = _runtime_s(spec)
    for key in ("fio", "sysbench", "preset"):
        value = given.get(key)
        row[key] = None if value is None else str(value)
    row["fail"] = _events_text(spec, "fail")
    row["replace"] = _events_text(spec, "replace")
    row["workload"] = spec.workload.describe() if spec.workload is not None else "idle"
    return row


def _default_layout(level: str) -> Optional[str]:
    try:
        return _core.default_layout(str(level)) or None
    except Exception:  # noqa: BLE001 - raid1 has no layout
        return None
