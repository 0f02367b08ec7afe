"""``raidlab plan``: find the md array that meets a capacity, a workload's targets, a fault
tolerance (``survive``) and a budget and is best on an objective (by default the cheapest), show
the alternatives worth knowing, and print the commands that build it.

>>> from raidlab.planner import plan
>>> from raidlab.workload import preset
>>> result = plan(capacity_tb=0.5, workload=preset("oltp-postgres"), drives=["x25e-slc"],
...               levels=[5, 10], chunks_kib=[64], raid10_layouts=["n2"], max_drives=12,
...               sim_seconds=0.05, jobs=1)
>>> result.document["winner"]
'raid5 left-symmetric x9 64K x25e-slc'

Steps: enumerate designs (:mod:`.candidates`), drop those too small or too dear, simulate the
rest family by family (:mod:`.search`, :mod:`.evaluate`), judge them (:mod:`.rank`) and write
the setup (:mod:`.setup`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from raidlab import _core, reliability
from raidlab.array import MAX_DEVICES, Array
from raidlab.errors import ConfigError, RaidlabError
from raidlab.planner import evaluate as evaluate_mod
from raidlab.planner import formulas
from raidlab.planner import rank as ranking
from raidlab.planner import setup as setup_mod
from raidlab.planner.candidates import (DEFAULT_CHUNKS_KIB, DEFAULT_LEVELS, DEFAULT_MAX_DRIVES,
                                        DEFAULT_RAID10_LAYOUTS, TB, Design, DriveModel, array_for,
                                        check_models, default_drives, enumerate_designs,
                                        fault_tolerance, parse_drive)
from raidlab.planner.rank import Evaluated
from raidlab.planner.runbook import MD_SPEED_LIMIT_MAX_KIB_S, MD_SPEED_LIMIT_MIN_KIB_S
from raidlab.planner.search import SCALING_SLACK, search
from raidlab.run import normalise_level
from raidlab.stacked import FAULT_TOLERANCE, PLANNER_MIN_DEVICES, StackedArray
from raidlab.units import format_probability
from raidlab.workload import Workload
from raidlab.workload.units import is_decimal

__all__ = ["plan", "PlanResult", "Design", "DriveModel"]

#: Simulated seconds per scenario when not given: enough I/Os for a stable p99 on each kind
#: (disks do hundreds of IOPS, SSDs thousands to hundreds of thousands).
AUTO_SECONDS = {"hdd": 2.0, "ssd": 0.25, "nvme": 0.1, "null": 0.05}
#: Simulated seconds of the rebuild scenario (at least): md's resync throttle settles once its
#: 30 s window of speed marks has filled (see evaluate.py); disks are cheap to simulate for that
#: long, fast SSDs under full load are not, and their rebuild is capped by speed_limit_max anyway.
REBUILD_SECONDS = {"hdd": 30.0, "ssd": 5.0, "nvme": 1.0, "null": 0.5}
#: Extra device counts simulated past each family's first design that meets every target.
DEFAULT_EXTRA = 1
#: Largest usable capacity planned, TB: 64 members of today's largest drives hold under 2,000 TB;
#: the bound keeps every byte count inside 64 bits (10^6 TB is 10^18 bytes, 2^64 is 1.8 x 10^19).
MAX_CAPACITY_TB = 1e6
_DURABILITY_ERROR = "durability targets need raidlab.reliability"


@dataclass
class PlanResult:
    """The plan: ``document`` is the JSON-ready answer; the rest is for rendering."""

    document: Dict[str, Any]
    winner: Evaluated
    front: List[Evaluated]
    ranked: List[Evaluated]

    def __repr__(self) -> str:
        """One line: the winner and its figures, and how many designs were ranked (the whole
        answer is ``document``; ``print(result)`` used to dump every candidate's runs)."""
        w = self.winner
        return (f"PlanResult(winner {w.design.name}: {w.iops:,.0f} IOPS, {w.capacity_bytes / 1e12:.2f} TB, "
                f"objective {self.document['request'].get('objective', 'cost')}; {len(self.ranked)} design(s) "
                f"ranked, {len(self.front)} on the Pareto front)")


def _seconds_for(model: DriveModel, sim_seconds: Optional[float]) -> float:
    if sim_seconds is not None:
        return float(sim_seconds)
    if model.kind == "ssd" and model.nvme:
        return AUTO_SECONDS["nvme"]
    return AUTO_SECONDS.get(model.kind, 1.0)


def _rebuild_seconds_for(model: DriveModel, sim_seconds: Optional[float]) -> float:
    kind = "nvme" if model.kind == "ssd" and model.nvme else model.kind
    return max(REBUILD_SECONDS.get(kind, 10.0), _seconds_for(model, sim_seconds))


def _reliability(required: bool):
    """raidlab.reliability when it has the loss model; else None, or a one-line error when a
    durability target needs it."""
    if not hasattr(reliability, "loss_probability"):
        if required:
            raise ConfigError(_DURABILITY_ERROR)
        return None
    return reliability


def plan(*, capacity_tb: float, workload: Workload,
         drives: Optional[Sequence[Union[str, DriveModel]]] = None,
         min_iops: Optional[float] = None, max_p99_ms: Optional[float] = None,
         min_degraded_iops: Optional[float] = None, max_rebuild_hours: Optional[float] = None,
         max_drives: int = DEFAULT_MAX_DRIVES, budget: Optional[float] = None, spares: int = 0,
         levels: Sequence[int] = DEFAULT_LEVELS, chunks_kib: Sequence[int] = DEFAULT_CHUNKS_KIB,
         raid10_layouts: Sequence[str] = DEFAULT_RAID10_LAYOUTS,
         durability: Optional[float] = None, mission_years: float = 5.0,
         seed: int = 1, jobs: int = 1, sim_seconds: Optional[float] = None, extra: int = DEFAULT_EXTRA,
         progress: Optional[Callable[[int, int], Callable[[int], None]]] = None,
         speed_limit_min: int = MD_SPEED_LIMIT_MIN_KIB_S,
         speed_limit_max: int = MD_SPEED_LIMIT_MAX_KIB_S,
         ray: Optional[str] = None, host: Optional[str] = None,
         survive: Optional[int] = None, objective: str = "cost") -> PlanResult:
    """Plans an array. Raises ConfigError (one line) when the request cannot be met.

    ``survive``: drive failures every design must survive (None: 1, and 2 for a design whose
    rebuild under the workload lasts over a week, :data:`rank.DEFAULT_EXPOSURE_HOURS`; 0 when
    ``levels`` holds raid0). ``objective`` ranks the designs that meet every target: "cost"
    (cheapest), "iops", "p99" or "loss" (lowest P(loss)); :data:`rank.OBJECTIVES`.

    ``progress(total)`` may return a callback that receives the number of designs settled.
    The speed limits are md's resync limits (KiB/s per device) every simulated rebuild runs
    under and the runbook sets. ``jobs`` local processes, or Ray tasks with ``ray`` ("auto" or a
    cluster address), run the simulations; neither changes the answer. ``host``: a host preset
    (raidlab hosts) whose EBS limits cap cloud volume members in every simulation.
    """
    _check_types(locals())
    limits = _speed_limits(speed_limit_min, speed_limit_max)
    if not (isinstance(capacity_tb, (int, float)) and math.isfinite(capacity_tb)
            and 0 < capacity_tb <= MAX_CAPACITY_TB):
        raise ConfigError(f"--capacity-tb must be a positive number of terabytes (10^12 bytes), "
                          f"at most {MAX_CAPACITY_TB:g}")
    capacity_bytes = int(round(capacity_tb * TB))
    for name, value in (("--min-iops", min_iops), ("--max-p99-ms", max_p99_ms),
                        ("--min-degraded-iops", min_degraded_iops),
                        ("--max-rebuild-hours", max_rebuild_hours), ("--budget", budget)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ConfigError(f"{name} must be a positive number")
    if durability is not None:
        if not (0 < durability < 1):
            raise ConfigError("--durability is a probability of data loss: between 0 and 1")
    if not (math.isfinite(mission_years) and mission_years > 0):
        raise ConfigError("--mission-years must be a positive number")
    reliability = _reliability(required=durability is not None)
    if max_drives < 2:
        raise ConfigError("--max-drives must be at least 2")
    if spares < 0 or spares >= max_drives:
        raise ConfigError("--spares must leave room for the array within --max-drives")
    if extra < 0:
        raise ConfigError("--extra must be 0 or more")
    if jobs < 1:
        raise ConfigError("--jobs must be at least 1")
    levels = _planner_levels(levels)
    if not isinstance(workload, Workload):
        raise ConfigError(f"workload must be a raidlab Workload (raidlab.workload.preset(...), "
                          f"parse_fio, parse_sysbench), got {type(workload).__name__}")
    if not isinstance(objective, str) or objective not in ranking.OBJECTIVES:
        raise ConfigError(f"--objective {objective!r}: expected one of {', '.join(ranking.OBJECTIVES)}")
    for chunk in chunks_kib:
        if chunk < 4 or chunk & (chunk - 1):
            raise ConfigError(f"chunk {chunk} KiB: md needs a power of two of at least 4 KiB")
    for layout in raid10_layouts:
        try:
            Array(level=10, devices=MAX_DEVICES, layout=layout, chunk_kib=64, member_kib=1024)
        except RaidlabError as error:
            raise ConfigError(f"--raid10-layouts: {error}") from None
    models = [parse_drive(d) if isinstance(d, str) else d for d in (drives or [])] or default_drives()
    check_models(models, budget)
    priced = all(model.price is not None for model in models)
    by_name = {model.name: model for model in models}
    _check_survive(survive, levels, raid10_layouts)
    targets = {"min_iops": min_iops, "max_p99_ms": max_p99_ms, "min_degraded_iops": min_degraded_iops,
               "max_rebuild_hours": max_rebuild_hours,
               "max_loss_probability": durability, **_survive_targets(survive, levels)}

    found = enumerate_designs(models, levels, sorted(set(chunks_kib)), list(dict.fromkeys(raid10_layouts)),
                              max_drives, spares, capacity_bytes, budget)
    _prune_survive(found, by_name, targets["min_survive"])
    if not found.families:
        raise ConfigError(
            f"no design holds {capacity_tb:g} TB within {max_drives} drives"
            + (f" and a budget of {budget:g}" if budget is not None else "")
            + (f" surviving {survive} failures" if survive else "")
            + f" ({found.pruned['capacity']} too small, {found.pruned['budget']} over budget"
            + (f", {found.pruned['survive']} survive too few failures" if found.pruned.get("survive") else "") + ")")

    if durability is not None:
        _check_durability_reachable(reliability, found.families, by_name, durability, mission_years)

    def make_task(design: Design) -> Dict[str, Any]:
        model = by_name[design.drive]
        return {"design": design.to_dict(), "drive_choice": model.choice,
                "stripe_cache_size": setup_mod.planned_stripe_cache_size(design.devices),
                "scheduler": setup_mod.scheduler_for(model), "seed": seed, "workload": workload,
                "runtime_s": _seconds_for(model, sim_seconds),
                "rebuild_s": _rebuild_seconds_for(model, sim_seconds), "targets": targets,
                "redundant": design.level != 0, "host": host, **limits}

    def judge(design: Design, result: Dict[str, Any]) -> Evaluated:
        model = by_name[design.drive]
        array = array_for(design, model)
        evaluated = Evaluated(design, model, found.capacity[design], array.copies,
                              fault_tolerance(design, array.copies), result)
        if reliability is not None and result.get("repair") is not None:
            evaluated.loss_probability = _loss_probability(reliability, design, model, result["repair"]["hours"],
                                                           mission_years)
        ranking.check(evaluated, targets)
        return evaluated

    total = sum(len(family) for family in found.families)
    tick = progress(total) if progress is not None else None
    results = search(found.families, make_task, lambda d, r: judge(d, r).feasible, targets, extra,
                     jobs, tick, ray=ray, closes=lambda d, r, growth: _exposure_hopeless(judge(d, r), targets, growth))
    order = {design: index for index, design in
             enumerate(d for family in found.families for d in family)}
    simulated = [judge(design, results[design]) for design in sorted(results, key=order.__getitem__)]
    ranked = sorted((e for e in simulated if e.feasible), key=lambda e: e.rank_key(objective))
    if not ranked:
        raise ConfigError(ranking.closest_miss(simulated, targets))
    winner = ranked[0]
    front = ranking.pareto(ranked, objective)
    on_front = {id(e) for e in front}
    under_load = {id(e): _loss_under_load(reliability, e, mission_years) for e in simulated}
    explanation = ranking.explain(winner, ranked, simulated, targets, priced, capacity_bytes, found.pruned,
                                  objective, survive)
    if winner.loss_probability is not None:
        explanation.append(_loss_sentence(winner, under_load[id(winner)], mission_years))
    array = array_for(winner.design, winner.model)
    plan_setup = setup_mod.setup(winner.design, winner.model, array, workload, limits=limits,
                                 rebuild=_rebuild_estimate(winner, array, max_rebuild_hours,
                                                           under_load[id(winner)], mission_years))
    calculator = _calculator_check(winner, workload, seed, _seconds_for(winner.model, sim_seconds))
    explanation.append(calculator["sentence"])
    if plan_setup["geometry"]["note"]:
        explanation.append("Stripe geometry: " + plan_setup["geometry"]["note"])

    others = others_of(simulated)
    document = {
        "raidlab": {"version": _core.__version__, "seed": seed},
        "request": {
            "capacity_tb": capacity_tb,
            "workload": {"describe": workload.with_runtime_ns(0).describe(), "source": workload.to_dict()["source"]},
            "targets": {k: v for k, v in targets.items() if v is not None and k != "exposure_hours"},
            "survive": survive, "objective": objective,
            "survive_rule": ranking.survive_line(survive, targets),
            "mission_years": mission_years if reliability is not None else None,
            "risk": "P(loss) over the mission (raidlab.reliability; repair time: the idle rebuild simulated on "
                    "the drive, raidlab.rebuild.repair_time, as raidlab reliability --drive takes it)"
                    if reliability is not None else "failures survived, then rebuild hours",
            "drives": [model.to_dict() for model in models], "budget": budget,
            "max_drives": max_drives, "spares": spares, "levels": levels,
            "chunks_kib": sorted(set(chunks_kib)), "raid10_layouts": list(dict.fromkeys(raid10_layouts)),
            "sim_seconds": {model.name: _seconds_for(model, sim_seconds) for model in models},
            "rebuild_seconds": {model.name: _rebuild_seconds_for(model, sim_seconds) for model in models},
            "extra": extra, "cost_unit": "price" if priced else "drives", "md_speed_limits": limits,
        },
        "search": {"considered": found.considered, "pruned": dict(found.pruned),
                   "candidates": total, "simulated": len(simulated), "feasible": len(ranked)},
        "designs": [_design_doc(e, id(e) in on_front, under_load[id(e)]) for e in ranked + others],
        "pareto": [e.design.name for e in front],
        "winner": winner.design.name,
        "explanation": explanation,
        "calculator": calculator,
        "setup": plan_setup,
        "points": [{"label": e.design.name, "cost": e.cost, "iops": e.iops,
                    "p99_ms": e.result["optimal"]["p99_ms"], "risk": e.loss_probability,
                    "survives_failures": e.tolerance,
                    "pareto": id(e) in on_front, "chosen": e is winner,
                    "feasible": e.feasible} for e in ranked + others],
    }
    return PlanResult(document, winner, front, ranked)


#: plan()'s numeric arguments: whole numbers, and reals (finite; None where it means "not given").
_WHOLE_ARGS = ("max_drives", "spares", "seed", "jobs", "extra", "speed_limit_min", "speed_limit_max")
_REAL_ARGS = ("capacity_tb", "min_iops", "max_p99_ms", "min_degraded_iops", "max_rebuild_hours", "budget",
              "durability", "mission_years", "sim_seconds")


def _check_types(given: Dict[str, Any]) -> None:
    """plan()'s arguments have the types they are used as, so a Python caller's mistake is a
    ConfigError naming the argument, not a TypeError or OverflowError from deep inside."""
    def real(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

    for name in _WHOLE_ARGS:
        value = given[name]
        if not (isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63):
            raise ConfigError(f"plan({name}=...) must be a whole number, got {value!r:.40}")
    for name in _REAL_ARGS:
        if (given[name] is not None or name in ("capacity_tb", "mission_years")) and not real(given[name]):
            raise ConfigError(f"plan({name}=...) must be a finite number, got {given[name]!r:.40}")
    chunks = given["chunks_kib"]
    for chunk in chunks if isinstance(chunks, (list, tuple, set, frozenset)) else [None]:
        if not (isinstance(chunk, int) and not isinstance(chunk, bool) and 0 < chunk <= 1 << 20):
            raise ConfigError(f"plan(chunks_kib=...) must be a list of chunk sizes in KiB, got {chunk!r:.40}")
    drives = given["drives"]
    if drives is not None and (not isinstance(drives, (list, tuple))
                               or not all(isinstance(d, (str, DriveModel)) for d in drives)):
        raise ConfigError(f"plan(drives=...) must be a list of drive names or DriveModels, got {drives!r:.60}")
    if given["progress"] is not None and not callable(given["progress"]):
        raise ConfigError("plan(progress=...) must be a callable (or None)")


def _planner_levels(levels: Sequence[Any]) -> List[Any]:
    """md levels as numbers, then stacked levels by name ("1+0", "5+0", "6+0")."""
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence):
        raise ConfigError(f"levels must be a list of RAID levels, got {type(levels).__name__}")
    named = {normalise_level(level) for level in levels}
    if not named:
        raise ConfigError("--levels names no RAID level: give at least one (e.g. 5,6,10)")
    found = sorted((int(level) for level in named if is_decimal(level)))
    unknown = [level for level in found if level not in (0, 1, 5, 6, 10)]
    unknown += [level for level in sorted(named) if not is_decimal(level) and level not in PLANNER_MIN_DEVICES]
    if unknown:
        raise ConfigError(f"the planner builds raid0, 1, 5, 6 and 10 and the stacked 1+0, 5+0 and 6+0, "
                          f"not raid{unknown[0]}")
    return found + sorted(level for level in named if not is_decimal(level))


def _speed_limits(low: int, high: int) -> Dict[str, int]:
    """md's resync speed limits, checked: whole KiB/s per device, min no larger than max."""
    for name, value in (("--speed-limit-min", low), ("--speed-limit-max", high)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**9:
            raise ConfigError(f"{name} must be a whole number of KiB/s per device from 1 to 10^9")
    if low > high:
        raise ConfigError(f"--speed-limit-min {low} is above --speed-limit-max {high} (KiB/s per device)")
    return {"speed_limit_min": low, "speed_limit_max": high}


def _rebuild_estimate(winner: Evaluated, array, target_hours: Optional[float], loss_under_load: Optional[float],
                      mission_years: float) -> Optional[Dict[str, Any]]:
    """The winner's rebuild time idle (its repair time) and under the workload (from the search),
    both under the plan's speed limits, with P(loss) from each; None for raid0."""
    if winner.design.level == 0:
        return None
    return {"member_bytes": min(array.member_kib_list) * 1024,
            "idle": winner.result.get("repair"), "loaded": winner.result.get("rebuild"),
            "target_hours": target_hours, "mission_years": mission_years,
            "loss_probability": winner.loss_probability, "loss_probability_under_load": loss_under_load}


def _exposure_hopeless(evaluated: Evaluated, targets: Dict[str, Any], growth: float) -> bool:
    """The design misses the survive target because its rebuild under the workload is too long,
    and the family's largest count would still miss it were its rebuild ``growth`` times faster
    (the load per drive falls no faster than the drives are added) with the search's 50 % slack."""
    if not any(c["target"] == "min_survive" for c in evaluated.failed()):
        return False
    hours, limit = evaluated.rebuild_hours, targets.get("exposure_hours")
    if hours is None or limit is None:
        return True  # an explicit --survive: more drives of the same level survive no more failures
    return hours / (growth * SCALING_SLACK) > limit


def _check_survive(survive: Optional[int], levels: Sequence[Any], raid10_layouts: Sequence[str]) -> None:
    """Refuses a --survive no allowed level reaches, before anything is simulated."""
    if survive is None:
        return
    if isinstance(survive, bool) or not isinstance(survive, int) or survive < 0:
        raise ConfigError(f"--survive must be a whole number of drive failures, got {survive!r}")
    best = {level: _most_failures(level, raid10_layouts) for level in levels}
    top = max(best.values())
    if survive > top:
        holders = ", ".join(f"raid{level}" for level, n in best.items() if n == top) or "none"
        hint = "; raid6 and raid10 with 3 copies (--raid10-layouts n3) survive 2" if top < 2 else ""
        raise ConfigError(f"--survive {survive}: the levels allowed survive at most {top} drive failure(s) "
                          f"({holders}){hint}")


def _most_failures(level: Any, raid10_layouts: Sequence[str]) -> int:
    """The most drive failures any design of ``level`` the planner builds survives."""
    if level == 10:
        return max((Array(level=10, devices=MAX_DEVICES, layout=layout, chunk_kib=64, member_kib=1024).copies - 1
                    for layout in raid10_layouts), default=0)
    if isinstance(level, str):
        return FAULT_TOLERANCE[level]
    return {0: 0, 1: 1, 5: 1, 6: 2}[level]


def _survive_targets(survive: Optional[int], levels: Sequence[Any]) -> Dict[str, Any]:
    """The fault-tolerance target: --survive as given; by default 1, raised to 2 where the
    rebuild under the workload outlasts rank.DEFAULT_EXPOSURE_HOURS (none when raid0 is asked for)."""
    if survive is not None:
        return {"min_survive": survive, "exposure_hours": None}
    if 0 in levels:
        return {"min_survive": 0, "exposure_hours": None}
    return {"min_survive": 1, "exposure_hours": ranking.DEFAULT_EXPOSURE_HOURS}


def _prune_survive(found, by_name: Dict[str, DriveModel], need: int) -> None:
    """Drops the designs that survive fewer than ``need`` failures before they are simulated."""
    kept = []
    for family in found.families:
        family = [d for d in family if fault_tolerance(d, array_for(d, by_name[d.drive]).copies) >= need]
        if family:
            kept.append(family)
    found.pruned["survive"] = sum(map(len, found.families)) - sum(map(len, kept))
    found.families = kept


def others_of(simulated: Sequence[Evaluated]) -> List[Evaluated]:
    """The designs that miss a target, cheapest first."""
    return sorted((e for e in simulated if not e.feasible), key=lambda e: (e.cost, e.design.name))


def _loss_under_load(reliability, evaluated: Evaluated, mission_years: float) -> Optional[float]:
    """P(loss) if every rebuild ran under the workload for its whole length (the plan's
    rebuild-under-load estimate as the repair time): the risk beside the default one."""
    if reliability is None or evaluated.loss_probability is None or evaluated.rebuild_hours is None:
        return None
    return _loss_probability(reliability, evaluated.design, evaluated.model, evaluated.rebuild_hours, mission_years)


def _loss_sentence(winner: Evaluated, under_load: Optional[float], mission_years: float) -> str:
    """Which repair time the winner's P(loss) used, and what the rebuild under load would make it."""
    repair = winner.result["repair"]
    line = (f"P(loss) over {mission_years:g} y: {format_probability(winner.loss_probability)}, with the repair "
            f"time raidlab reliability --drive uses ({repair['how']}).")
    if under_load is not None:
        hours = winner.rebuild_hours
        length = "never ends" if hours == math.inf else f"takes {hours:,.1f} h"  # as the table shows it
        line += (f" A rebuild under the workload {length} (md yields down to speed_limit_min); if the load "
                 f"ran through every rebuild, P(loss) would be {format_probability(under_load)}.")
    return line


def _stack_write_penalties(array: StackedArray) -> Tuple[int, int]:
    """(md's small-write cost, the textbook's) of a stack: its inner arrays' (a 4 KiB write lands
    in one inner array)."""
    inner, per = array.geo["inner_level"], array.geo["inner_devices"]
    textbook = formulas.write_penalty(inner, per if inner == 1 else 2)
    return formulas.md_write_penalty(inner, per, per if inner == 1 else 2), textbook


def _calculator_check(winner: Evaluated, workload: Workload, seed: int, seconds: float) -> Dict[str, Any]:
    """The textbook calculator's answer for the winner (formulas.py), fed with one drive of the
    model simulated alone under the same workload, next to what the array simulation measured."""
    single = evaluate_mod.metrics(evaluate_mod._run(
        {"design": {"level": 0, "devices": 1, "layout": None, "chunk_kib": None},
         "drive_choice": winner.model.choice, "stripe_cache_size": setup_mod.MD_DEFAULT_STRIPE_CACHE,
         "scheduler": setup_mod.scheduler_for(winner.model), "seed": seed},
        workload.with_runtime_ns(int(seconds * 1e9)), (), False))
    threads = sum(job.threads for job in workload.jobs)
    writes = sum((1 - job.read_fraction) * job.threads for job in workload.jobs) / threads
    design = winner.design
    if isinstance(design.level, str):  # a stack: its inner arrays' cost
        penalty, textbook = _stack_write_penalties(array_for(design, winner.model))
    else:
        penalty = formulas.md_write_penalty(design.level, design.devices, winner.copies)
        textbook = formulas.write_penalty(design.level, winner.copies)
    estimate = formulas.array_iops(design.devices, single["iops"], writes, penalty)
    penalty_word = (f"P = {penalty} (md's small-write cost for raid{design.level} x{design.devices}; "
                    f"the textbook says {textbook})" if penalty != textbook else f"P = {penalty}")
    sentence = (f"Calculator check: N x IOPS_disk / (R + W x P) = {design.devices} x "
                f"{single['iops']:,.0f} / ({1 - writes:.2f} + {writes:.2f} x {penalty}) = {estimate:,.0f} "
                f"IOPS, with {penalty_word} and one {winner.model.name} simulated alone under the "
                f"workload; simulating the whole array gives {winner.iops:,.0f}.")
    in_flight = sum(job.threads * job.iodepth for job in workload.jobs)
    if winner.model.kind == "hdd" and estimate > 1.2 * winner.iops and in_flight > 1:
        sentence += (f" The formula over-states here: the single drive had all {in_flight} I/Os queued and "
                     f"reordered them; in the array each disk sees about "
                     f"{in_flight * ((1 - writes) + writes * penalty) / design.devices:.1f}.")
    return {"per_disk_iops": single["iops"], "write_fraction": round(writes, 6), "penalty": penalty,
            "textbook_penalty": textbook, "array_iops": round(estimate, 1),
            "simulated_iops": winner.iops, "sentence": sentence}


#: The shortest repair the reliability model takes (raidlab-core `reliability`: 36 s); a mission
#: shorter than that caps the repair here, not at the mission. reliability clamps its default to it too.
_MIN_REPAIR_HOURS = 0.01


def _loss_probability(reliability, design: Design, model: DriveModel, hours: Optional[float],
                      mission_years: float) -> float:
    """P(array loss) over the mission from raidlab.reliability's exact chain, with ``hours`` as
    the repair time (a hot spare or a prompt replacement: no waiting time added), the chunk and
    the drive as ``raidlab reliability`` takes them. A rebuild that makes no progress counts as
    lasting the whole mission."""
    mission_hours = mission_years * 8766.0
    if hours is None or not math.isfinite(hours) or hours > mission_hours:
        hours = mission_hours
    chunk = {"chunk_kib": design.chunk_kib} if design.chunk_kib else {}
    return float(reliability.loss_probability(
        level=design.level, devices=design.devices, layout=design.layout, drive=model.choice,
        capacity_bytes=model.capacity_bytes, rebuild_hours=max(hours, _MIN_REPAIR_HOURS),
        mission_years=mission_years, **chunk))


def _check_durability_reachable(reliability, families, by_name: Dict[str, DriveModel], durability: float,
                                mission_years: float) -> None:
    """Refuses a --durability target no candidate can meet, before anything is simulated (a
    target of 1e-300 used to simulate every design first). A design's P(loss) with the shortest
    repair the model takes (:data:`_MIN_REPAIR_HOURS`) is the least it can reach: its simulated
    rebuild can only be longer, and P(loss) grows with the repair time. raid0 has no rebuild,
    so no P(loss) to judge, and never meets a durability target."""
    best: Optional[Tuple[float, Design]] = None
    seen = set()
    for design in (d for family in families for d in family if d.level != 0):
        key = (design.level, design.devices, design.layout, design.drive)
        if key in seen:
            continue
        seen.add(key)
        model = by_name[design.drive]
        p = float(reliability.loss_probability(
            level=design.level, devices=design.devices, layout=design.layout, drive=model.choice,
            capacity_bytes=model.capacity_bytes, rebuild_hours=_MIN_REPAIR_HOURS, mission_years=mission_years))
        if best is None or p < best[0]:
            best = (p, design)
    if best is None:
        raise ConfigError(f"--durability {durability:g} cannot be met: no candidate design is redundant "
                          "(raid0 has no rebuild and no P(loss) to judge); allow other --levels")
    if best[0] > durability:
        raise ConfigError(f"--durability {durability:g} cannot be met: no candidate design's P(loss) over "
                          f"{mission_years:g} years comes below {best[0]:.3g}, even with a "
                          f"{_MIN_REPAIR_HOURS * 3600:g} s rebuild (the lowest: {best[1].name}); ask for "
                          f"{best[0]:.3g} or more, or allow more drives or levels")


def _design_doc(evaluated: Evaluated, on_front: bool, loss_under_load: Optional[float]) -> Dict[str, Any]:
    doc = evaluated.design.to_dict()
    doc.update({
        "cost": evaluated.cost, "capacity_bytes": evaluated.capacity_bytes,
        "survives_failures": evaluated.tolerance,
        "optimal": evaluated.result["optimal"], "degraded": evaluated.result.get("degraded"),
        "rebuild": evaluated.result.get("rebuild"),
        "repair": evaluated.result.get("repair"),
        "loss_probability": evaluated.loss_probability,
        "loss_probability_under_load": loss_under_load,
        "feasible": evaluated.feasible,
        "failed_targets": [c["target"] for c in evaluated.failed()],
        "pareto": on_front,
    })
    return doc
