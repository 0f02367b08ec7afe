"""Judging simulated designs: which meet the targets, which is best, the Pareto front, and why.

The winner is the design that meets every target and is best on the objective (:data:`OBJECTIVES`):
by default the cheapest (cost = drives x price, or the number of drives when no prices are
given). Ties go to the lower cost, the lower risk, the higher IOPS, the lower p99 and finally the
name (so the answer is total and deterministic). Fault tolerance is a target (``min_survive``):
every design must survive that many drive failures; by default one, and two for a design whose
rebuild under the workload lasts longer than :data:`DEFAULT_EXPOSURE_HOURS`.

Risk is the durability model's P(loss) over the mission when raidlab.reliability is used;
otherwise the pair (member failures survived, hours of rebuild exposure), both from the design
and its simulated rebuild. The Pareto front is over the designs that meet every target, on cost,
IOPS, p99 and risk: a design is on it when no other is at least as good on all and better on one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from raidlab.planner.candidates import Design, DriveModel
from raidlab.units import format_probability, money

INF = math.inf

#: Targets in the order they are checked and reported: (key, label, which way is good).
TARGETS = (
    ("min_iops", "IOPS", "min"),
    ("max_p99_ms", "p99 latency", "max"),
    ("min_degraded_iops", "degraded IOPS", "min"),
    ("max_rebuild_hours", "rebuild time", "max"),
    ("max_loss_probability", "P(loss)", "max"),
    ("min_survive", "failures survived", "min"),
)
#: What each --objective ranks first, as the reasoning lines say it.
OBJECTIVES = {"cost": "the cheapest", "iops": "the most IOPS", "p99": "the lowest p99",
              "loss": "the lowest P(loss)"}
#: The designs that would beat the winner on the objective, in the reasoning lines.
_BETTER = {"cost": "cheaper", "iops": "faster", "p99": "lower-latency", "loss": "safer"}
#: Without --survive, a design surviving one failure must rebuild under the workload within a
#: week, else it must survive two. Under load md yields to the foreground I/O down to
#: speed_limit_min (drivers/md/md.c md_do_sync), so large members stay one failure from data loss
#: for months; a week is raidlab's line (explicit --survive 1 accepts any rebuild time).
DEFAULT_EXPOSURE_HOURS = 168.0


@dataclass
class Evaluated:
    """One simulated design with everything the planner knows about it."""

    design: Design
    model: DriveModel
    capacity_bytes: int
    copies: int
    tolerance: int
    result: Dict[str, Any]
    loss_probability: Optional[float] = None
    checks: List[Dict[str, Any]] = field(default_factory=list)

    @property
    def cost(self) -> float:
        price = self.model.price if self.model.price is not None else 1.0
        return self.design.drives * price

    @property
    def iops(self) -> float:
        return self.result["optimal"]["iops"]

    @property
    def p99_ms(self) -> float:
        value = self.result["optimal"]["p99_ms"]
        return INF if value is None else value

    @property
    def degraded_iops(self) -> Optional[float]:
        degraded = self.result.get("degraded")
        return None if degraded is None else degraded["iops"]

    @property
    def rebuild_hours(self) -> Optional[float]:
        rebuild = self.result.get("rebuild")
        if rebuild is None:
            return None
        return INF if rebuild["hours"] is None else rebuild["hours"]

    def value(self, key: str) -> Optional[float]:
        return {"min_iops": self.iops, "max_p99_ms": self.p99_ms,
                "min_degraded_iops": self.degraded_iops, "max_rebuild_hours": self.rebuild_hours,
                "max_loss_probability": self.loss_probability, "min_survive": self.tolerance}[key]

    @property
    def feasible(self) -> bool:
        return all(check["ok"] for check in self.checks)

    def failed(self) -> List[Dict[str, Any]]:
        return [check for check in self.checks if not check["ok"]]

    def risk(self) -> Tuple[float, ...]:
        """Lower is safer."""
        if self.loss_probability is not None:
            return (self.loss_probability,)
        hours = self.rebuild_hours
        return (-self.tolerance, INF if hours is None else hours)

    def rank_key(self, objective: str = "cost") -> Tuple[Any, ...]:
        """Lower ranks first: the objective's own figure, then cost, risk, IOPS, p99, name."""
        first = {"cost": (self.cost,), "iops": (-self.iops,), "p99": (self.p99_ms,),
                 "loss": (self.risk(),)}[objective]
        return first + (self.cost, self.risk(), -self.iops, self.p99_ms, self.design.name)

    def objectives(self) -> Tuple[float, ...]:
        """Pareto objectives, each lower-is-better."""
        return (self.cost, -self.iops, self.p99_ms) + self.risk()


def survive_limit(evaluated: Evaluated, targets: Dict[str, Any]) -> Optional[int]:
    """Failures the design must survive: ``min_survive``, raised to 2 under the default rule
    (``exposure_hours`` set) for a design whose rebuild under the workload outlasts it."""
    need = targets.get("min_survive")
    hours = targets.get("exposure_hours")
    rebuild = evaluated.rebuild_hours
    if need == 1 and hours is not None and rebuild is not None and rebuild > hours:
        return 2
    return need


def check(evaluated: Evaluated, targets: Dict[str, Any]) -> None:
    """Fills ``evaluated.checks``: one entry per target given; an unmeasured value fails
    (a scenario is skipped only after an earlier target failed)."""
    evaluated.checks = []
    for key, label, way in TARGETS:
        limit = survive_limit(evaluated, targets) if key == "min_survive" else targets.get(key)
        if limit is None:
            continue
        value = evaluated.value(key)
        if value is None:
            ok = False
        elif way == "min":
            ok = value >= limit
        else:
            ok = value <= limit
        evaluated.checks.append({"target": key, "label": label, "value": value, "limit": limit,
                                 "ok": ok, "measured": value is not None})


def passes(evaluated: Evaluated) -> bool:
    return evaluated.feasible


def pareto(designs: Sequence[Evaluated], objective: str = "cost") -> List[Evaluated]:
    """The non-dominated designs, in rank order."""
    front = []
    for candidate in designs:
        mine = candidate.objectives()
        dominated = False
        for other in designs:
            if other is candidate:
                continue
            theirs = other.objectives()
            if all(t <= m for t, m in zip(theirs, mine)) and any(t < m for t, m in zip(theirs, mine)):
                dominated = True
                break
        if not dominated:
            front.append(candidate)
    return sorted(front, key=lambda e: e.rank_key(objective))




def _fmt(key: str, value: Optional[float]) -> str:
    if value is None:
        return "not measured"
    if value == INF:
        return "never (no progress)" if key == "max_rebuild_hours" else "n/a"
    if key in ("min_iops", "min_degraded_iops"):
        return f"{value:,.0f} IOPS"
    if key == "max_p99_ms":
        return f"{value:.2f} ms"
    if key == "max_rebuild_hours":
        return f"{value:.1f} h"
    if key == "min_survive":
        return f"{value:g} failure(s)"
    return format_probability(value)


def margin(check_entry: Dict[str, Any]) -> float:
    """Relative headroom of a met target (0 = exactly on it)."""
    value, limit = check_entry["value"], check_entry["limit"]
    if limit == 0:
        return INF
    if check_entry["target"].startswith("min"):
        return (value - limit) / limit
    return (limit - value) / limit


def explain(winner: Evaluated, ranked: Sequence[Evaluated], simulated: Sequence[Evaluated],
            targets: Dict[str, Any], priced: bool, capacity_bytes: int, pruned: Dict[str, int],
            objective: str = "cost", survive: Optional[int] = None) -> List[str]:
    """Why the winner wins, in sentences: the objective and the survive target, what it costs,
    which constraint bound, what it beats."""
    lines = [
        f"{winner.design.name} wins: {OBJECTIVES[objective]} of {len(ranked)} design(s) that meet every "
        f"target ({money(winner.cost, priced)}; {winner.capacity_bytes / 1e12:.2f} TB usable; survives any "
        f"{winner.tolerance} drive failure(s)).",
        objective_line(objective) + " " + survive_line(survive, targets)]
    if not priced and objective == "cost":
        lines.append("No prices were given, so cost is the number of drives "
                     "(--drive NAME:PRICE weighs models against each other).")
    first = winner.rank_key(objective)[0]
    better = [e for e in simulated if e.rank_key(objective)[0] < first]  # none meets every target
    reasons = _reasons(better)
    if better:
        lines.append(f"Every {_BETTER[objective]} design simulated misses a target: {_reason_parts(reasons, targets)}.")
    if sum(pruned.values()):
        survived = (f", and {pruned['survive']} survive too few failures" if pruned.get("survive") else "")
        lines.append(
            f"Before simulating, {pruned.get('capacity', 0)} candidate(s) were too small for "
            f"{capacity_bytes / 1e12:g} TB, {pruned.get('budget', 0)} over budget{survived}.")
    lines.append(_binding(winner, reasons, objective, capacity_bytes, pruned))
    lines += _rivals(winner, ranked, objective, priced)
    return lines


def objective_line(objective: str) -> str:
    """The --objective in words: what ranks first and how ties go."""
    ties = {"cost": "ties go to the lower P(loss), then more IOPS",
            "iops": "ties go to the cheaper, then the lower P(loss)",
            "p99": "ties go to the cheaper, then the lower P(loss)",
            "loss": "ties go to the cheaper, then more IOPS"}[objective]
    return f"Objective: --objective {objective}, {OBJECTIVES[objective]} design wins ({ties})."


def survive_line(survive: Optional[int], targets: Dict[str, Any]) -> str:
    """The fault-tolerance target in words."""
    if survive is not None:
        if survive == 0:
            return "Fault tolerance: --survive 0, designs without redundancy allowed."
        return f"Fault tolerance: --survive {survive}, every design considered survives any {survive} drive failures."
    if targets.get("exposure_hours") is None:
        return "Fault tolerance: none asked (--levels includes raid0); --survive N asks for N."
    return (f"Fault tolerance: the default, any 1 drive failure, and any 2 for a design whose rebuild under the "
            f"workload lasts more than a week ({targets['exposure_hours']:g} h; md rebuilds at about "
            f"speed_limit_min under load); --survive 1 accepts it, --survive 2 asks for two everywhere.")


def _reasons(designs: Sequence[Evaluated]) -> Dict[str, List[Evaluated]]:
    reasons: Dict[str, List[Evaluated]] = {}
    for evaluated in designs:
        failed = evaluated.failed()
        if failed:
            reasons.setdefault(failed[0]["target"], []).append(evaluated)
    return reasons


def _reason_parts(reasons: Dict[str, List[Evaluated]], targets: Dict[str, Any]) -> str:
    parts = []
    for key, label, way in TARGETS:
        if key not in reasons:
            continue
        group = reasons[key]
        measured = [e.value(key) for e in group if e.value(key) is not None]
        if measured:
            best = max(measured) if way == "min" else min(measured)
            limit = max(c["limit"] for e in group for c in e.failed() if c["target"] == key)
            parts.append(f"{len(group)} miss {label} (best {_fmt(key, best)} vs target {_fmt(key, limit)})")
        else:
            parts.append(f"{len(group)} miss {label}")
    return "; ".join(parts)


def _binding(winner: Evaluated, reasons: Dict[str, List[Evaluated]], objective: str, capacity_bytes: int,
             pruned: Dict[str, int]) -> str:
    """The constraint that kept a better design from winning."""
    # The survive target has no headroom to speak of: the reasoning's fault-tolerance line says it.
    given = [c for c in winner.checks if c["target"] != "min_survive"]
    tightest = min(given, key=margin) if given else None
    if reasons:
        key = max(reasons, key=lambda k: (len(reasons[k]), -[t[0] for t in TARGETS].index(k)))
        mine = next(c for c in winner.checks if c["target"] == key)
        return (f"Binding constraint: {mine['label']} — it rules out {len(reasons[key])} {_BETTER[objective]} "
                f"design(s); the winner reaches {_fmt(key, mine['value'])} against "
                f"{_fmt(key, mine['limit'])} ({margin(mine) * 100:.0f}% headroom).")
    if objective == "cost":
        line = (f"Binding constraint: capacity — no cheaper design holds {capacity_bytes / 1e12:g} TB"
                + (" within the budget" if pruned.get("budget") else "") + ".")
    else:
        line = f"Binding constraint: none — no design simulated is {_BETTER[objective]}."
    if tightest is not None:
        line += (f" Every target is met with room to spare (tightest: {tightest['label']}, "
                 f"{_fmt(tightest['target'], tightest['value'])} against "
                 f"{_fmt(tightest['target'], tightest['limit'])}, {margin(tightest) * 100:.0f}% headroom).")
    return line


def _rivals(winner: Evaluated, ranked: Sequence[Evaluated], objective: str, priced: bool) -> List[str]:
    """The design tied on the objective it beats, and the next one down the ranking."""
    lines = []
    first = winner.rank_key(objective)[0]
    same = [e for e in ranked if e is not winner and e.rank_key(objective)[0] == first]
    if same:
        lines.append(f"At the same {'cost' if objective == 'cost' else objective} it beats "
                     f"{same[0].design.name} on " + _tie_reason(winner, same[0]) + ".")
    after = [e for e in ranked if e.rank_key(objective)[0] > first]
    if after:
        rival = after[0]
        extra = rival.cost - winner.cost
        price = (f"costs {money(extra, priced)} more" if extra > 0 else
                 f"costs {money(-extra, priced)} less" if extra < 0 else "costs the same")
        risk = (f", P(loss) {format_probability(rival.loss_probability)} (vs "
                f"{format_probability(winner.loss_probability)})" if winner.loss_probability is not None
                and rival.loss_probability is not None else "")
        lines.append(f"The next design, {rival.design.name}, {price} for {rival.iops:,.0f} IOPS (vs "
                     f"{winner.iops:,.0f}), p99 {rival.p99_ms:.2f} ms (vs {winner.p99_ms:.2f} ms){risk}.")
    return lines


def _tie_reason(winner: Evaluated, rival: Evaluated) -> str:
    if winner.risk() != rival.risk():
        if winner.loss_probability is not None:
            return (f"risk (P(loss) {format_probability(winner.loss_probability)} vs "
                    f"{format_probability(rival.loss_probability)})")
        if winner.tolerance != rival.tolerance:
            return f"risk (survives {winner.tolerance} failure(s) vs {rival.tolerance})"
        return (f"risk (rebuild {_fmt('max_rebuild_hours', winner.rebuild_hours)} vs "
                f"{_fmt('max_rebuild_hours', rival.rebuild_hours)})")
    if winner.iops != rival.iops:
        return f"IOPS ({winner.iops:,.0f} vs {rival.iops:,.0f})"
    if winner.p99_ms != rival.p99_ms:
        return f"p99 ({winner.p99_ms:.2f} ms vs {rival.p99_ms:.2f} ms)"
    return "name order (identical results)"


def closest_miss(simulated: Sequence[Evaluated], targets: Dict[str, Any]) -> str:
    """One line for 'nothing meets the targets': the target most designs failed on, and the
    best value any design reached for it."""
    if not simulated:
        return "no candidate design fits the capacity, budget and drive limits"
    counts: Dict[str, int] = {}
    for evaluated in simulated:
        for failure in evaluated.failed():
            counts[failure["target"]] = counts.get(failure["target"], 0) + 1
            break
    key, label, way = max((t for t in TARGETS if t[0] in counts), key=lambda t: counts[t[0]])
    values = [e.value(key) for e in simulated if e.value(key) is not None]
    best = (max(values) if way == "min" else min(values)) if values else None
    holder = next((e for e in simulated if e.value(key) == best), None)
    where = f" ({holder.design.name})" if holder is not None else ""
    limit = max(c["limit"] for e in simulated for c in e.failed() if c["target"] == key)
    remedy = "relax it, allow more drives (--max-drives) or other models (--drive)"
    if key == "min_survive":
        remedy = ("their rebuild under the workload lasts over a week, so the default asks for two: allow raid6 "
                  "(--levels), raise md's resync floor (--speed-limit-min), or accept it with --survive 1")
    if key == "max_rebuild_hours":
        # Under load md rebuilds at about speed_limit_min (md_do_sync): the limit, not the drives,
        # is what usually misses a rebuild target.
        remedy = "raise md's resync floor (--speed-limit-min, KiB/s per device) or " + remedy
    return (f"no design meets the targets: {counts[key]} of {len(simulated)} simulated designs miss "
            f"{label}; the best reached {_fmt(key, best)}{where} against a target of "
            f"{_fmt(key, limit)} — {remedy}")
