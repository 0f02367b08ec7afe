"""Rebuild time from the simulator, for reliability models (``raidlab reliability
--rebuild-from-sim``): one member fails, a spare takes over at once, and the rebuild runs under
the foreground workload with md's speed limits (or a controller's rebuild rate). When the run
ends before the member does, the rebuild is sampled zone by zone (:func:`zoned_rebuild_s`): a
drive's inner tracks stream at about half the rate of its outer ones, so the outer tracks' rate
alone puts a whole rebuild 16-20% short.

The run is a :class:`raidlab.run.RunSpec` built like every other (``--sim-opt KEY=VALUE`` takes
any setting of :data:`raidlab.run.KNOWN_KEYS`; ``--drive`` any drive ``raidlab sim`` takes),
with two defaults of its own, declared here: the drive and how long to simulate.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from raidlab.drives import resolve_drive
from raidlab.errors import ConfigError
from raidlab.run import KNOWN_KEYS, build_run
from raidlab.sim import run_spec

#: The drive when --drive is not given: reliability asks about today's multi-TB arrays.
REBUILD_DRIVE = "nearline-7200"
#: Simulated seconds of rebuild (md's resync speed settles within its 30 s mark window).
REBUILD_RUNTIME_S = 30.0
#: Equal zones of the member whose rebuild rates are sampled (midpoint rule over the member).
REBUILD_ZONES = 4
#: Settings the array options (--level, --devices, ...) and the rebuild itself fix.
_FIXED = ("level", "devices", "layout", "chunk_kib", "drive", "failed", "spare", "timeline", "rebuild_start_pct")
#: Options accepted through ``--sim-opt KEY=VALUE``.
SIM_OPTIONS = tuple(k for k in KNOWN_KEYS if k not in _FIXED)


def check_sim_options(options: Any) -> None:
    """Refuses ``--sim-opt`` keys that are unknown or that the array options and the rebuild fix
    (``devices=5`` is reliability's own ``--devices``), before any keyword reaches a call."""
    fixed = sorted(set(options) & set(_FIXED))
    if fixed:
        raise ConfigError(f"--sim-opt {', '.join(fixed)}: set by reliability's own options (--level, --devices, "
                          "--layout, --chunk-kib, --drive) and the rebuild (one failed member, a spare), "
                          "not by --sim-opt")
    unknown = sorted(set(options) - set(SIM_OPTIONS))
    if unknown:
        raise ConfigError(f"unknown --sim-opt key(s) {', '.join(unknown)}; expected {', '.join(SIM_OPTIONS)}")


def simulated_rebuild_hours(*, level: str, devices: int, layout: Optional[str], chunk_kib: Optional[int],
                            capacity_bytes: int, drive: Optional[str], **options: Any) -> float:
    """Hours to rebuild one member of ``capacity_bytes`` under the given foreground workload
    (an idle array when no workload option is given)."""
    check_sim_options(options)
    model = resolve_drive(drive or REBUILD_DRIVE)
    # A DiskSim model's size is fixed by its geometry: rebuild it as it is and scale the time to
    # the member size at the same rate (as the simulator extrapolates any unfinished rebuild).
    scale = capacity_bytes / model.capacity_bytes if model.fixed_capacity else 1.0
    model = model if model.fixed_capacity else model.with_capacity(capacity_bytes)
    settings = {"runtime_s": REBUILD_RUNTIME_S, **options, "level": level, "devices": devices,
                "layout": layout, "chunk_kib": chunk_kib, "drive": model, "failed": (0,), "spare": True}
    rebuild = zoned_rebuild(lambda start_pct: build_run({**settings, "rebuild_start_pct": start_pct},
                                                       where="--sim-opt ", allow_idle=True))
    return rebuild["duration_s"] * scale / 3600


def zoned_rebuild(spec_at: Callable[[float], Any]) -> Dict[str, Any]:
    """A whole member's rebuild: ``duration_s``, the average ``rate_kib_s`` and whether it was
    ``extrapolated``. The run from the member's start when it finishes; otherwise REBUILD_ZONES
    runs, each starting mid-zone (``rebuild_start_pct``), each zone taken at its own rate.
    ``spec_at(start_pct)`` builds the run."""
    whole = _rebuild_of(spec_at(0.0))
    member_kib = whole["member_bytes"] / 1024
    if whole["extrapolated"]:
        zone_kib = member_kib / REBUILD_ZONES
        rates = [_rebuild_of(spec_at(100.0 * (zone + 0.5) / REBUILD_ZONES))["rate_kib_s"]
                 for zone in range(REBUILD_ZONES)]
        seconds = sum(zone_kib / rate for rate in rates)
    else:
        seconds = whole["duration_s"]
    return {"duration_s": seconds, "rate_kib_s": member_kib / seconds, "extrapolated": whole["extrapolated"]}


def _rebuild_of(spec: Any) -> Dict[str, Any]:
    rebuild = run_spec(spec).to_dict()["rebuild"]
    if not rebuild or not rebuild["duration_s"] or not rebuild["rate_kib_s"]:
        raise ConfigError("the simulated rebuild made no progress; give it a longer runtime_s")
    return rebuild
