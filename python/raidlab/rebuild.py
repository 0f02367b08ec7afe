"""Rebuild time from the simulator, for reliability models.

:func:`repair_time` is the one repair time (MTTR) that ``raidlab reliability`` (when no
--mttr-hours is given) and ``raidlab plan`` (its P(loss)) use: one member rebuilt onto a hot spare
while the array is otherwise idle, as md does it (the lower of the drive's streaming rate and
speed_limit_max). Under a saturating workload md yields down to speed_limit_min (1000 KiB/s per
device: a 16 TB member takes half a year), which lasts as long as the load does; plan reports that
figure beside it as a separate risk, and ``--rebuild-from-sim --sim-opt`` asks for it.

:func:`simulated_rebuild_hours` (``raidlab reliability --rebuild-from-sim``): one member fails, a spare takes over at once, and the rebuild runs under
the foreground workload with md's speed limits (or a controller's rebuild rate). When the run
ends before the member does, the rebuild is sampled zone by zone (:func:`zoned_rebuild_s`): a
drive's inner tracks stream at about half the rate of its outer ones, so the outer tracks' rate
alone puts a whole rebuild 16-20% short.

The run is a :class:`raidlab.run.RunSpec` built like every other (``--sim-opt KEY=VALUE`` takes
any setting of :data:`raidlab.run.KNOWN_KEYS`; ``--drive`` any drive ``raidlab sim`` takes),
with two defaults of its own, declared here: the drive and how long to simulate.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional

from raidlab.drives import resolve_drive
from raidlab.errors import ConfigError, RaidlabError
from raidlab.run import DEFAULTS, KNOWN_KEYS, build_run
from raidlab.sim import run_spec
from raidlab.stripe_cache import planned_stripe_cache_size
from raidlab.units import human_bytes

#: The drive when --drive is not given: reliability asks about today's multi-TB arrays.
REBUILD_DRIVE = "nearline-7200"
#: Simulated seconds of rebuild (md's resync speed settles within its 30 s mark window).
REBUILD_RUNTIME_S = 30.0
#: Equal zones of the member whose rebuild rates are sampled (midpoint rule over the member).
REBUILD_ZONES = 4
#: The rate one member rebuilds at when no drive is named, MB/s: a 7200 rpm nearline drive's
#: zone-averaged streaming rate. Seagate's Exos X16 data sheet (ST16000NM001G, the nearline-7200
#: preset's source) gives 261 MB/s sustained at the outer zone; the preset estimates 125 MB/s at
#: the inner one. A rebuild streams every zone once, and equal cylinders take equal time, so the
#: average of the two.
DEFAULT_REBUILD_RATE_MB_S = 193.0
#: Simulated seconds of an idle rebuild by drive kind: enough for md's resync speed to settle
#: (its 30 s window of marks, md_do_sync) on disks; SSDs and NVMe reach speed_limit_max at once.
IDLE_REBUILD_SECONDS = {"hdd": 30.0, "ssd": 5.0, "nvme": 1.0, "null": 0.5}
#: The seed of the idle rebuild: a property of the array and drive, not of the caller's run.
REPAIR_SEED = 1
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


def repair_time(*, level: Any, devices: int, layout: Optional[str] = None, chunk_kib: Optional[int] = None,
                drive: Any = None, capacity_bytes: Optional[int] = None,
                speed_limit_min: int = DEFAULTS["speed_limit_min"], speed_limit_max: int = DEFAULTS["speed_limit_max"],
                host: Optional[str] = None, stack: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The array's repair time for reliability purposes: one member rebuilt onto a hot spare with
    no other I/O, under md's speed limits (KiB/s per device).

    With a ``drive`` (anything :func:`raidlab.drives.resolve_drive` takes; its own size unless
    ``capacity_bytes`` is given) the rebuild is simulated on it, zone by zone, with the stripe cache
    raidlab's runbook sets; without one, ``capacity_bytes`` at :data:`DEFAULT_REBUILD_RATE_MB_S`,
    capped by speed_limit_max. Returns ``hours``, ``rate_kib_s``, ``source`` and ``how`` (a sentence
    for the reader)."""
    if drive is None:
        if capacity_bytes is None:
            raise ConfigError("the repair time needs a drive or a member size")
        rate = min(DEFAULT_REBUILD_RATE_MB_S * 1e6 / 1024, float(speed_limit_max))
        hours = capacity_bytes / 1024 / rate / 3600
        how = (f"rebuild {hours_text(hours)}: {capacity_bytes / 1e12:g} TB at {rate * 1024 / 1e6:.0f} MB/s (a 7200 rpm "
               f"nearline drive's zone-averaged rate, Exos X16 data sheet; md's speed_limit_max "
               f"{speed_limit_max:,} KiB/s caps it), the array otherwise idle; --drive simulates the drive's own")
        return {"hours": hours, "rate_kib_s": rate, "source": "member size at the default rate", "how": how,
                "drive": None, "speed_limits": [speed_limit_min, speed_limit_max]}
    model = resolve_drive(drive)
    scale = 1.0
    if capacity_bytes is not None and capacity_bytes != model.capacity_bytes:
        scale = capacity_bytes / model.capacity_bytes if model.fixed_capacity else 1.0
        try:
            model = model if model.fixed_capacity else model.with_capacity(capacity_bytes)
        except ConfigError as error:
            raise ConfigError(f"--capacity-tb {capacity_bytes / 1e12:g} for --drive {model.name}: {error}") from None
    try:
        rebuild = zoned_rebuild(lambda start_pct: build_run(
            _idle_settings(level, devices, layout, chunk_kib, model, speed_limit_min, speed_limit_max, host, stack,
                           start_pct), allow_idle=True))
    except RaidlabError as error:
        if scale == 1.0 and model.capacity_bytes == capacity_bytes and "capacity_bytes" in str(error):
            raise ConfigError(f"--capacity-tb {capacity_bytes / 1e12:g} for --drive {model.name}: {error}") from None
        raise
    hours = rebuild["duration_s"] * scale / 3600
    how = (f"rebuild {hours_text(hours)}: an idle rebuild of one {model.name} member "
           f"({human_bytes(int(model.capacity_bytes * scale))}) onto a hot spare, simulated at "
           f"{rebuild['rate_kib_s']:,.0f} KiB/s under md's speed_limit_max {speed_limit_max:,} KiB/s")
    return {"hours": hours, "rate_kib_s": rebuild["rate_kib_s"], "source": "drive idle rebuild", "how": how,
            "drive": model.name, "speed_limits": [speed_limit_min, speed_limit_max]}


def hours_text(hours: float) -> str:
    """Hours for the reader: minutes below one hour."""
    return f"{hours:,.1f} h" if hours >= 1 else f"{hours * 60:.2g} min"


def _idle_settings(level: Any, devices: int, layout: Optional[str], chunk_kib: Optional[int], model: Any,
                   low: int, high: int, host: Optional[str], stack: Optional[Mapping[str, Any]],
                   start_pct: float) -> Dict[str, Any]:
    """The idle rebuild's run: member 0 failed onto a spare, the runbook's stripe cache, a fixed
    seed, and as many simulated seconds as the drive kind needs."""
    kind = "nvme" if model.kind == "ssd" and "nvme" in model.interface.lower() else model.kind
    return {"level": level, "devices": devices, "layout": layout, "chunk_kib": chunk_kib, "drive": model,
            "failed": (0,), "spare": True, "controller": "md", "stripe_cache_size": planned_stripe_cache_size(devices),
            "speed_limit_min": low, "speed_limit_max": high, "seed": REPAIR_SEED, "host": host,
            "runtime_s": IDLE_REBUILD_SECONDS.get(kind, 10.0), "rebuild_start_pct": start_pct, **(stack or {})}
