"""Reliability: how likely an md array is to lose data, computed from its layout.

The numbers come from the Rust core (``crates/raidlab-core/src/reliability``): an exact Markov
chain over the failed sets the layout engine says survive (MTTDL, P(loss over the mission), with
the textbook approximation alongside), unrecoverable read errors and latent sector errors met by
rebuild reads that have no redundancy left, and a Monte Carlo with Weibull lifetimes (conditional
sampling and importance sampling, seeded, with 95 % confidence intervals). Sources are cited
beside each default below and in the core's module.

>>> from raidlab.reliability import analyze
>>> r = analyze(level=5, devices=8, mttf_hours=461386, mttr_hours=12, trials=0)
>>> round(r.mttdl_years), round(r.mttdl_years_approx)
(36176, 36162)

Everything user-facing is in :class:`ReliabilityResult` (``to_dict()`` is the JSON document).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional

from raidlab import _core, rebuild, stacked
from raidlab.drives import resolve_drive
from raidlab.errors import ConfigError
from raidlab.run import normalise_level

_DEFAULTS = dict(_core.reliability_defaults())

#: Annualized failure rate in percent: Backblaze Drive Stats fleet AFR 2023-2025, 1.36-1.70 %.
DEFAULT_AFR_PCT: float = _DEFAULTS["afr_pct"]
#: Weibull shape of drive lifetimes: 1.12 (Elerath & Pecht, IEEE TC 58(3), 2009).
DEFAULT_WEIBULL_SHAPE: float = _DEFAULTS["weibull_shape"]
#: Unrecoverable bit error rate per bit read: enterprise/NAS datasheets (desktop: 1e-14).
DEFAULT_UBER: float = _DEFAULTS["uber"]
#: Desktop drives' datasheet UBER (Harris 2007's "RAID 5 stops working" used it).
DESKTOP_UBER: float = _DEFAULTS["uber_desktop"]
#: Mission time in years.
DEFAULT_MISSION_YEARS: float = _DEFAULTS["mission_years"]
#: The core's worked-example rebuild (24 h). No longer the CLI's default: when neither
#: --mttr-hours nor --rebuild-from-sim is given the repair time comes from the drive or the
#: member size (raidlab.rebuild.repair_time, shared with plan).
DEFAULT_REBUILD_HOURS: float = _DEFAULTS["repair_hours"]
#: Days between scrubs: monthly, as Debian/Ubuntu's mdadm `checkarray` cron job.
DEFAULT_SCRUB_DAYS: float = _DEFAULTS["scrub_days"]
#: Monte Carlo trials.
DEFAULT_TRIALS: int = _DEFAULTS["trials"]
#: Member size in decimal TB when none is given.
DEFAULT_CAPACITY_TB: float = 4.0
DEFAULT_CHUNK_KIB: int = _core.DEFAULT_CHUNK_KIB
HOURS_PER_YEAR: float = _DEFAULTS["hours_per_year"]
#: The core's bounds on sector errors (crates/raidlab-core/src/reliability/mod.rs, validate):
#: UBER below 1e-3 per bit read, latent sector errors at most 1 per disk-hour. The CLI declares
#: its ranges from these, so an option's range and the model's agree.
MAX_UBER = 1e-3
MAX_LSE_PER_DISK_YEAR = 1.0 * HOURS_PER_YEAR
# ---- members dropped by the host's command timeout ----
#: The host's command timeout: Linux's SCSI disk default (SD_TIMEOUT, drivers/scsi/sd.h; per
#: device in /sys/block/sdX/device/timeout).
DEFAULT_COMMAND_TIMEOUT_S: float = 30.0
#: TB each drive reads a year: desktop drives' rated workload (Seagate BarraCuda and WD Blue
#: product manuals: 55 TB/year of reads and writes [memory]); give your own.
DEFAULT_READ_TB_PER_YEAR: float = 55.0
#: The shortest repair the exact chain takes (raidlab-core reliability validate: 36 s).
MIN_REPAIR_HOURS = 0.01
REPAIR_POLICIES = ("md", "serial", "parallel")
REPAIR_DISTRIBUTIONS = ("fixed", "exponential")

#: Where each default comes from (printed in the JSON document).
SOURCES = {
    "afr_pct": "Backblaze Drive Stats fleet AFR 2023-2025: 1.36-1.70 %/y",
    "weibull_shape": "Elerath & Pecht, IEEE Trans. Computers 58(3), 2009: TTOp Weibull shape 1.12",
    "uber": "drive datasheets: < 1 in 10^15 bits (enterprise/NAS), 1 in 10^14 (desktop)",
    "mission_years": "raidlab default (the literature often uses 10 y)",
    "rebuild_hours": ("the array's idle rebuild (raidlab.rebuild.repair_time, as plan): --drive's simulated on the "
                      "drive under md's speed limits, else the member size at 193 MB/s (Exos X16 data sheet: "
                      "261 MB/s outer, about 125 MB/s inner), capped by speed_limit_max 200,000 KiB/s"),
    "scrub_days": "Debian/Ubuntu mdadm packaging: monthly checkarray",
    "mttdl": "exact CTMC (Gibson 1990); approximation Patterson, Gibson & Katz 1988 / Chen et al. 1994",
    "ure": "P(URE) = 1 - (1 - UBER)^(8 x bytes read) (Harris 2007; Leventhal 2009)",
    "nomdl": "expected bytes lost, normalised by capacity (Greenan, Plank & Wylie, HotStorage 2010)",
    "timeout_drops": ("read errors/h = 8 x bytes read/h x UBER; a drive without ERC recovers a sector for "
                      "up to 2 min (WD answer 1397), past the 30 s SCSI timeout (SD_TIMEOUT) md drops it; "
                      "ERC (smartctl -l scterc,70,70) caps it at 7 s"),
    "read_tb_per_year": "desktop drives' rated workload, 55 TB/year (Seagate BarraCuda, WD Blue manuals)",
}


def _finite(name: str, value: Any, minimum: float = 0.0, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < minimum or (strict and number <= minimum):
        relation = "greater than" if strict else "at least"
        raise ConfigError(f"{name} must be a finite number {relation} {minimum:g}, got {value!r}")
    return number


def _whole(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or value >= 1 << 64:
        raise ConfigError(f"{name} must be a whole number of at least {minimum}, got {value!r}")
    return value


def simulated_rebuild_hours(level: str, devices: int, layout: Optional[str], chunk_kib: int,
                            capacity_bytes: int, drive: Optional[str],
                            sim_options: Mapping[str, Any]) -> float:
    """Rebuild hours from the rebuild simulator (``raidlab.rebuild.simulated_rebuild_hours``).

    It receives the array (level, devices, layout, chunk_kib, capacity_bytes), the drive model
    and the foreground-workload options given with ``--sim-opt KEY=VALUE`` as keyword arguments,
    and returns the hours one member's rebuild takes under that load and md's speed limits.
    """
    function = getattr(rebuild, "simulated_rebuild_hours", None)
    if function is None:
        raise ConfigError("--rebuild-from-sim needs the rebuild simulator (not available in this build)")
    checker = getattr(rebuild, "check_sim_options", None)
    if checker is not None:
        checker(dict(sim_options))
    hours = function(level=level, devices=devices, layout=layout, chunk_kib=chunk_kib,
                     capacity_bytes=capacity_bytes, drive=drive, **dict(sim_options))
    if isinstance(hours, bool) or not isinstance(hours, (int, float)) or not math.isfinite(hours) \
            or hours <= 0:
        raise ConfigError(f"the rebuild simulator returned {hours!r} hours, not a positive number")
    return float(hours)


def _years(hours: Optional[float]) -> Optional[float]:
    if hours is None or not math.isfinite(hours):
        return None
    return hours / HOURS_PER_YEAR


def _clean(value: Any) -> Any:
    """JSON has no infinities: they become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


@dataclass(frozen=True)
class ReliabilityResult:
    """The analysis of one array: exact chain, rebuild exposure and Monte Carlo."""

    inputs: Dict[str, Any]
    core: Dict[str, Any]

    def __repr__(self) -> str:
        """One line: the array, the mission and its headline odds (the full analysis is in
        ``inputs`` and ``core``; ``print(result)`` used to dump every state of the chain)."""
        i = self.inputs
        mttdl = self.mttdl_years
        return (f"ReliabilityResult(raid{i['level']} of {i['devices']} x {i['capacity_tb']:g} TB, AFR "
                f"{i['afr_pct']:g} %; P(array loss in {i['mission_years']:g} y) {self.p_array_loss:.3g}, "
                f"P(sector loss) {self.p_sector_loss:.3g}, MTTDL "
                f"{'inf' if mttdl is None else f'{mttdl:.3g}'} y (exact chain))")

    @property
    def mttdl_years(self) -> Optional[float]:
        """Exact CTMC MTTDL (exponential failures and repairs); pessimistic if truncated."""
        return _years(self.core["mttdl_hours"])

    @property
    def mttdl_years_approx(self) -> Optional[float]:
        """The textbook leading-order approximation, e.g. MTTF^2 / (N (N-1) MTTR) for RAID5."""
        return _years(self.core["mttdl_hours_approx"])

    @property
    def p_array_loss(self) -> float:
        """P(the array loses data within the mission), exact chain."""
        return self.core["p_array_loss"]

    @property
    def p_sector_loss(self) -> float:
        """P(any sector lost within the mission): array loss, or a URE/latent error in a rebuild
        read with no redundancy left (md records a bad block and carries on)."""
        return self.core["p_sector_loss"]

    @property
    def expected_bytes_lost_per_year(self) -> float:
        """Expected bytes lost per year over the mission (whole array on array loss)."""
        return self.core["expected_bytes_lost_per_year"]

    @property
    def monte_carlo(self) -> Optional[Dict[str, Any]]:
        return self.core["monte_carlo"]

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document of ``raidlab reliability --json``."""
        core = self.core
        mission_years = self.inputs["mission_years"]
        capacity = core["capacity_bytes"]
        mc = core["monte_carlo"]
        monte_carlo = None
        if mc is not None:
            bytes_lost = dict(mc["bytes_lost"])
            per_year = {
                "mean": bytes_lost["mean"] / mission_years,
                "std_error": bytes_lost["std_error"] / mission_years,
                "ci95": [x / mission_years for x in bytes_lost["ci95"]],
            }
            monte_carlo = {
                "model": (f"Weibull lifetimes (shape {self.inputs['weibull_shape']:g}, scaled so a new "
                          "drive fails within its first year with the AFR's probability), "
                          f"{self.inputs['repair_distribution']} repairs, "
                          f"{self.inputs['repair_policy']} repair policy; conditional sampling "
                          "(killed process) and failure-biasing importance sampling"),
                "trials": mc["trials"],
                "seed": mc["seed"],
                "rng": mc["rng"],
                "p_array_loss": _interval(mc["p_array_loss"]),
                "p_sector_loss": _interval(mc["p_sector_loss"]),
                "expected_bytes_lost_per_year": per_year,
                "trials_exposed": mc["trials_exposed"],
            }
        document = {
            "raidlab": {"command": "reliability", "version": _core.__version__},
            "version": _core.__version__,
            "seed": self.inputs["seed"],
            "inputs": dict(self.inputs),
            "mttdl_years": self.mttdl_years,
            "mttdl_years_approx": self.mttdl_years_approx,
            "mttdl_years_optimistic": _years(core["mttdl_hours_optimistic"]),
            "p_array_loss": self.p_array_loss,
            "p_sector_loss": self.p_sector_loss,
            "expected_bytes_lost_per_year": self.expected_bytes_lost_per_year,
            "mission_years": mission_years,
            "curve": [{"years": hours / HOURS_PER_YEAR, "p_loss": p}
                      for hours, p in core["loss_curve"]],
            "expected_bytes_lost_mission": core["expected_bytes_lost"],
            "nomdl_mission": core["expected_bytes_lost"] / capacity if capacity else None,
            "exact_model": {
                "kind": "continuous-time Markov chain, exponential failures (1/MTTF) and repairs",
                "lumping": core["lumping"],
                "states": core["states"],
                "depth_cap": core["depth_cap"],
                "uniformization_steps": core["uniformization_steps"],
            },
            "layout": {
                "level": core["level"],
                "layout": core["layout"],
                "devices": core["devices"],
                "capacity_bytes": capacity,
                "member_used_bytes": core["member_used_bytes"],
                "failures_to_lose_data": core["fatal_depth"],
                "second_failure_loss_fraction": core["second_failure_loss_fraction"],
                "third_failure_loss_fraction": core["third_failure_loss_fraction"],
            },
            "rebuild": {
                "read_bytes": core["rebuild_read_bytes"],
                "p_ure": core["p_ure_rebuild"],
                "critical_read_bytes": core["critical_read_bytes"],
                "p_sector_fault_critical": core["p_sector_fault_critical_rebuild"],
            },
            "monte_carlo": monte_carlo,
            "sources": dict(SOURCES),
            "timeout_drops": dict(self.inputs["timeout_drops"]),
        }
        return _clean(document)


def _interval(estimate: Mapping[str, Any]) -> Dict[str, Any]:
    return {"mean": estimate["mean"], "std_error": estimate["std_error"],
            "ci95": list(estimate["ci95"])}


def analyze(
    *,
    level: Any,
    devices: int,
    layout: Optional[str] = None,
    chunk_kib: int = DEFAULT_CHUNK_KIB,
    capacity_tb: Optional[float] = None,
    afr_pct: Optional[float] = None,
    mttf_hours: Optional[float] = None,
    weibull_shape: float = DEFAULT_WEIBULL_SHAPE,
    mttr_hours: Optional[float] = None,
    rebuild_from_sim: bool = False,
    drive: Optional[str] = None,
    sim_options: Optional[Mapping[str, Any]] = None,
    detect_hours: float = 0.0,
    replace_hours: float = 0.0,
    uber: float = DEFAULT_UBER,
    lse_per_disk_year: float = 0.0,
    scrub_days: float = DEFAULT_SCRUB_DAYS,
    mission_years: float = DEFAULT_MISSION_YEARS,
    repair_policy: str = "md",
    repair_distribution: str = "fixed",
    ure_fails_array: bool = False,
    trials: int = DEFAULT_TRIALS,
    seed: int = 1,
    progress: Optional[Callable[[int, int], None]] = None,
    inner_devices: int = 0,
    outer_chunk_kib: int = DEFAULT_CHUNK_KIB,
    erc_s: Optional[float] = None,
    command_timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S,
    read_tb_per_year: float = DEFAULT_READ_TB_PER_YEAR,
) -> ReliabilityResult:
    """Analyzes one array.

    Drives: ``afr_pct`` (annualized failure rate, %) or ``mttf_hours``, not both [default AFR
    1.5 %; an MTTF means the AFR 1 - exp(-8760/MTTF)]; the Monte Carlo's Weibull lifetimes keep
    that AFR: a new drive fails within its first year with that probability, whatever the shape
    (its scale is 8760 h / (-ln(1 - AFR))^(1/shape)). Members are ``capacity_tb`` [default: the
    ``drive``'s size, else 4 TB]. Repair: ``mttr_hours`` (the rebuild) or ``rebuild_from_sim``
    (the rebuild simulator under ``sim_options``' workload) or, by default, the array's idle
    rebuild (:func:`raidlab.rebuild.repair_time`, as ``raidlab plan`` uses: simulated on
    ``drive``, else the member size at a nearline drive's rate), plus ``detect_hours`` and
    ``replace_hours``. ``scrub_days`` 0 means never scrubbed. ``trials`` 0 skips the Monte Carlo,
    which calls ``progress(trials_done, trials)`` between batches of trials and stops with
    KeyboardInterrupt on Ctrl-C (the result does not depend on the batches).
    Drops by timeout: each drive reads ``read_tb_per_year``; an unreadable sector
    its recovery holds past ``command_timeout_s`` drops it (rate added to its failure rate). The
    recovery comes from ``drive``'s behaviour (ERC or deep recovery), ``erc_s`` overriding its
    ERC (0: none); without a drive, the declared defaults (ERC 7 s: no drops).
    Bad input raises a :class:`raidlab.RaidlabError` with a one-line message.
    """
    if sim_options is not None and not isinstance(sim_options, Mapping):
        raise ConfigError("analyze(sim_options=...) must be a mapping of simulator options (or None)")
    if progress is not None and not callable(progress):
        raise ConfigError("analyze(progress=...) must be a callable (or None)")
    if afr_pct is not None and mttf_hours is not None:
        raise ConfigError("--afr-pct and --mttf-hours cannot be used together")
    if mttr_hours is not None and rebuild_from_sim:
        raise ConfigError("--mttr-hours and --rebuild-from-sim cannot be used together")
    devices = _whole("--devices", devices, 1)
    chunk_kib = _whole("--chunk-kib", chunk_kib, 1)
    given_capacity = capacity_tb is not None
    if capacity_tb is None:
        capacity_tb = DEFAULT_CAPACITY_TB if drive is None else _drive_capacity_bytes(drive) / 1e12
    capacity_tb = _finite("--capacity-tb", capacity_tb, 0.0, strict=True)
    member_bytes = capacity_tb * 1e12
    if member_bytes / 1024 >= 1 << 50:
        raise ConfigError(f"--capacity-tb {capacity_tb:g} per member is too large")
    member_kib = int(member_bytes // 1024)
    weibull_shape = _finite("--weibull-shape", weibull_shape, 0.0, strict=True)
    detect_hours = _finite("--detect-hours", detect_hours)
    replace_hours = _finite("--replace-hours", replace_hours)
    uber = _finite("--uber", uber)
    lse_per_disk_year = _finite("--lse-per-disk-year", lse_per_disk_year)
    scrub_days = _finite("--scrub-days", scrub_days)
    mission_years = _finite("--mission-years", mission_years, 0.0, strict=True)
    if mission_years > 100:
        raise ConfigError(f"--mission-years must be at most 100, got {mission_years:g}")
    trials = _whole("--trials", trials)
    seed = _whole("--seed", seed)
    if repair_policy not in REPAIR_POLICIES:
        raise ConfigError(f"unknown repair policy {repair_policy!r}: expected md, serial or parallel")
    if repair_distribution not in REPAIR_DISTRIBUTIONS:
        raise ConfigError(f"unknown repair distribution {repair_distribution!r}: expected fixed or exponential")

    if mttf_hours is not None:
        mttf = _finite("--mttf-hours", mttf_hours, 0.0, strict=True)
        afr_used = None
    else:
        afr_used = DEFAULT_AFR_PCT if afr_pct is None else _finite("--afr-pct", afr_pct, -math.inf)
        mttf = _core.reliability_mttf_from_afr(afr_used)

    level_text = str(level)
    _check_stack_counts(level_text, devices, inner_devices)
    if rebuild_from_sim:
        # Validate the array before running a simulation for it.
        level_text = normalise_level(level_text)
        stack = {"inner_devices": inner_devices, "outer_chunk_kib": outer_chunk_kib} if "+" in level_text else {}
        rebuild_hours = simulated_rebuild_hours(level_text, devices, layout, chunk_kib,
                                                int(member_bytes), drive, {**(sim_options or {}), **stack})
        rebuild_source = "simulation"
        rebuild_how = f"rebuild {rebuild_hours:.1f} h: simulated under the --sim-opt workload"
    elif mttr_hours is not None:
        rebuild_hours = _finite("--mttr-hours", mttr_hours, 0.0, strict=True)
        rebuild_source = "input"
        rebuild_how = f"rebuild {rebuild_hours:g} h: --mttr-hours"
    else:
        repair = _default_repair(level_text, devices, layout, chunk_kib, drive,
                                 int(member_bytes) if given_capacity or drive is None else None,
                                 inner_devices, outer_chunk_kib)
        rebuild_hours, rebuild_source, rebuild_how = repair["hours"], repair["source"], repair["how"]
    repair_hours = rebuild_hours + detect_hours + replace_hours
    drops = timeout_drops(drive, erc_s, command_timeout_s, read_tb_per_year, uber)

    config = {
        "level": level_text,
        "devices": devices,
        "layout": layout,
        "chunk_kib": chunk_kib,
        "member_kib": member_kib,
        "mttf_hours": mttf,
        "weibull_shape": weibull_shape,
        "repair_hours": repair_hours,
        "policy": repair_policy,
        "repair_distribution": repair_distribution,
        "uber": uber,
        "lse_per_hour": lse_per_disk_year / HOURS_PER_YEAR,
        "scrub_hours": scrub_days * 24.0 if scrub_days > 0 else None,
        "mission_hours": mission_years * HOURS_PER_YEAR,
        "ure_aborts_rebuild": bool(ure_fails_array),
        "trials": trials,
        "seed": seed,
        # a stacked level's inner arrays and outer chunk (unused by other levels).
        "inner_devices": inner_devices,
        "outer_chunk_kib": outer_chunk_kib,
        "drops_per_hour": drops["drops_per_drive_year"] / HOURS_PER_YEAR,
    }
    core = dict(_core.reliability_analyze(config, progress))
    inputs = {
        "level": core["level"],
        "layout": core["layout"],
        "devices": devices,
        "chunk_kib": chunk_kib,
        "capacity_tb": capacity_tb,
        "afr_pct": afr_used,
        "mttf_hours": mttf,
        "weibull_shape": weibull_shape,
        "repair": {
            "rebuild_hours": rebuild_hours,
            "rebuild_source": rebuild_source,
            "rebuild_how": rebuild_how,
            "detect_hours": detect_hours,
            "replace_hours": replace_hours,
            "total_hours": repair_hours,
        },
        "drive": drive,
        "sim_options": dict(sim_options or {}),
        "repair_policy": repair_policy,
        "repair_distribution": repair_distribution,
        "uber": uber,
        "lse_per_disk_year": lse_per_disk_year,
        "scrub_days": scrub_days if scrub_days > 0 else None,
        "mission_years": mission_years,
        "ure_fails_array": bool(ure_fails_array),
        "trials": trials,
        "seed": seed,
        "timeout_drops": drops,
    }
    return ReliabilityResult(inputs=inputs, core=core)


def timeout_drops(drive: Optional[Any], erc_s: Optional[float], command_timeout_s: float,
                  read_tb_per_year: float, uber: float) -> Dict[str, Any]:
    """How often one drive is dropped by the host's command timeout, with the rates
    behind it (read errors a year, P(recovery > timeout)) and the behaviour they came from."""
    choice = resolve_drive(drive, "--drive").choice if drive is not None else {"kind": "hdd"}
    behaviour = dict(_core.drive_behaviour(choice))
    if erc_s is not None:
        erc_s = _finite("--erc-s", erc_s)
        if erc_s > 6553.5:
            raise ConfigError(f"--erc-s must be at most 6553.5 s (SCT ERC counts deciseconds), got {erc_s:g}")
        behaviour["erc_read_s"] = erc_s
    command_timeout_s = _finite("--command-timeout-s", command_timeout_s)
    read_tb_per_year = _finite("--read-tb-per-year", read_tb_per_year)
    rates = _core.reliability_timeout_drops(uber, read_tb_per_year * 1e12 / HOURS_PER_YEAR,
                                           {k: behaviour[k] for k in ("erc_read_s", "recovery_s_min",
                                                                      "recovery_s_max")},
                                           command_timeout_s)
    return {
        "erc_s": behaviour["erc_read_s"] or None,
        "recovery_s": [behaviour["recovery_s_min"], behaviour["recovery_s_max"]],
        "command_timeout_s": command_timeout_s,
        "read_tb_per_year": read_tb_per_year,
        "read_errors_per_drive_year": rates["read_errors_per_hour"] * HOURS_PER_YEAR,
        "p_recovery_over_timeout": rates["p_recovery_over_timeout"],
        "drops_per_drive_year": rates["drops_per_hour"] * HOURS_PER_YEAR,
    }


def _default_repair(level_text: str, devices: int, layout: Optional[str], chunk_kib: int, drive: Any,
                    capacity_bytes: Optional[int], inner_devices: int, outer_chunk_kib: int) -> Dict[str, Any]:
    """The repair time plan also uses (:func:`raidlab.rebuild.repair_time`), for this array; no
    shorter than the chain's shortest repair (:data:`MIN_REPAIR_HOURS`), as plan takes it too."""
    level_text = normalise_level(level_text)
    if level_text == "0":  # nothing to rebuild: the first failure loses the array
        return {"hours": MIN_REPAIR_HOURS, "source": "none (raid0)",
                "how": "no rebuild: raid0 loses data with its first failure"}
    stack = {"inner_devices": inner_devices, "outer_chunk_kib": outer_chunk_kib} if "+" in level_text else None
    repair = rebuild.repair_time(level=level_text, devices=devices, layout=layout, chunk_kib=chunk_kib, drive=drive,
                         capacity_bytes=capacity_bytes, stack=stack)
    if repair["hours"] < MIN_REPAIR_HOURS:
        repair = dict(repair, hours=MIN_REPAIR_HOURS,
                      how=repair["how"] + f"; taken as {MIN_REPAIR_HOURS * 3600:g} s, the model's shortest repair")
    return repair


def _drive_capacity_bytes(drive: Any) -> int:
    """A drive's capacity, from any way of naming it (:func:`raidlab.drives.resolve_drive`)."""
    return resolve_drive(drive, "--drive").capacity_bytes


def _check_stack_counts(level_text: str, devices: int, inner_devices: int) -> None:
    """A stacked level's device count by the rule sim uses (:func:`raidlab.stacked.check_counts`)."""
    if stacked.is_stacked(level_text):
        stacked.check_counts(normalise_level(level_text), devices, inner_devices)


def loss_probability(*, level: Any, devices: int, layout: Optional[str] = None,
                     drive: Optional[str] = None, capacity_bytes: Optional[int] = None,
                     rebuild_hours: Optional[float] = None,
                     mission_years: float = DEFAULT_MISSION_YEARS, **options: Any) -> float:
    """P(array loss) over the mission from the exact chain: the durability hook of the planner.

    The member size is ``capacity_bytes`` or the drive preset's; ``rebuild_hours`` (e.g. the
    simulated rebuild) is the rebuild time (None: the default, :func:`raidlab.rebuild.repair_time`).
    Other keyword arguments go to :func:`analyze` (``afr_pct``, ``chunk_kib``, ``detect_hours``, ...).
    """
    if capacity_bytes is None:
        if drive is None:
            raise ConfigError("the reliability model needs the drive or its capacity")
        capacity_bytes = _drive_capacity_bytes(drive)
    options.setdefault("trials", 0)
    result = analyze(level=level, devices=devices, layout=layout,
                     capacity_tb=_finite("capacity bytes", capacity_bytes, 0.0, strict=True) / 1e12,
                     mttr_hours=rebuild_hours, mission_years=mission_years, **options)
    return result.p_array_loss
