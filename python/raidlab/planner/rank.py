"""Judging simulated designs: which meet the targets, which is best, the Pareto front, and why.

The winner is the cheapest design that meets every target (cost = drives x price, or the number
of drives when no prices are given). Ties go to the lower risk, then the higher IOPS, then the
lower p99, then the name (so the answer is total and deterministic).

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
from raidlab.units import format_probability

INF = math.inf

#: Targets in the order they are checked and reported: (key, label, which way is good).
TARGETS = (
    ("min_iops", "IOPS", "min"),
    ("max_p99_ms", "p99 latency", "max"),
    ("min_degraded_iops", "degraded IOPS", "min"),
    ("max_rebuild_hours", "rebuild time", "max"),
    ("max_loss_probability", "P(loss)", "max"),
)


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
                "max_loss_probability": self.loss_probability}[key]

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

    def rank_key(self) -> Tuple[Any, ...]:
        return (self.cost, self.risk(), -self.iops, self.p99_ms, self.design.name)

    def objectives(self) -> Tuple[float, ...]:
        """Pareto objectives, each lower-is-better."""
        return (self.cost, -self.iops, self.p99_ms) + self.risk()


def check(evaluated: Evaluated, targets: Dict[str, Any]) -> None:
    """Fills ``evaluated.checks``: one entry per target given; an unmeasured value fails
    (a scenario is skipped only after an earlier target failed)."""
    evaluated.checks = []
    for key, label, way in TARGETS:
        limit = targets.get(key)
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


def pareto(designs: Sequence[Evaluated]) -> List[Evaluated]:
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
    return sorted(front, key=Evaluated.rank_key)


def money(value: float, priced: bool) -> str:
    if not priced:
        count = int(value)
        return f"{count} drive" + ("s" if count != 1 else "")
    return f"${value:,.0f}" if value == int(value) else f"${value:,.2f}"


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
            targets: Dict[str, Any], priced: bool, capacity_bytes: int, pruned: Dict[str, int]) -> List[str]:
    """Why the winner wins, in sentences: what it costs, which constraint bound, what it beats."""
    lines = []
    cost = money(winner.cost, priced)
    lines.append(
        f"{winner.design.name} wins: the cheapest of {len(ranked)} design(s) that meet every target "
        f"({cost}; {winner.capacity_bytes / 1e12:.2f} TB usable).")
    if not priced:
        lines.append("No prices were given, so cost is the number of drives "
                     "(--drive NAME:PRICE weighs models against each other).")
    cheaper = [e for e in simulated if e.cost < winner.cost]  # none of them meets every target
    reasons: Dict[str, List[Evaluated]] = {}
    for evaluated in cheaper:
        first = evaluated.failed()[0]
        reasons.setdefault(first["target"], []).append(evaluated)
    if cheaper:
        parts = []
        for key, label, way in TARGETS:
            if key not in reasons:
                continue
            group = reasons[key]
            measured = [e.value(key) for e in group if e.value(key) is not None]
            if measured:
                best = max(measured) if way == "min" else min(measured)
                parts.append(f"{len(group)} miss {label} (best {_fmt(key, best)} vs target "
                             f"{_fmt(key, targets[key])})")
            else:
                parts.append(f"{len(group)} miss {label}")
        lines.append(f"Every cheaper design simulated misses a target: {'; '.join(parts)}.")
    if sum(pruned.values()):
        lines.append(
            f"Before simulating, {pruned.get('capacity', 0)} candidate(s) were too small for "
            f"{capacity_bytes / 1e12:g} TB and {pruned.get('budget', 0)} over budget.")
    tightest = min(winner.checks, key=margin) if winner.checks else None
    if reasons:
        key = max(reasons, key=lambda k: (len(reasons[k]), -[t[0] for t in TARGETS].index(k)))
        mine = next(c for c in winner.checks if c["target"] == key)
        lines.append(
            f"Binding constraint: {mine['label']} — it rules out {len(reasons[key])} cheaper "
            f"design(s); the winner reaches {_fmt(key, mine['value'])} against "
            f"{_fmt(key, mine['limit'])} ({margin(mine) * 100:.0f}% headroom).")
    else:
        line = (f"Binding constraint: capacity — no cheaper design holds {capacity_bytes / 1e12:g} TB"
                + (" within the budget" if pruned.get("budget") else "") + ".")
        if tightest is not None:
            line += (f" Every target is met with room to spare (tightest: {tightest['label']}, "
                     f"{_fmt(tightest['target'], tightest['value'])} against "
                     f"{_fmt(tightest['target'], tightest['limit'])}, {margin(tightest) * 100:.0f}% headroom).")
        lines.append(line)
    same_cost = [e for e in ranked if e is not winner and e.cost == winner.cost]
    if same_cost:
        rival = same_cost[0]
        lines.append(f"At the same cost it beats {rival.design.name} on " + _tie_reason(winner, rival) + ".")
    dearer = [e for e in ranked if e.cost > winner.cost]
    if dearer:
        rival = dearer[0]
        extra = rival.cost - winner.cost
        lines.append(
            f"The next design up, {rival.design.name}, costs {money(extra, priced)} more for "
            f"{rival.iops:,.0f} IOPS (vs {winner.iops:,.0f}) and p99 {rival.p99_ms:.2f} ms "
            f"(vs {winner.p99_ms:.2f} ms).")
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
    remedy = "relax it, allow more drives (--max-drives) or other models (--drive)"
    if key == "max_rebuild_hours":
        # Under load md rebuilds at about speed_limit_min (md_do_sync): the limit, not the drives,
        # is what usually misses a rebuild target.
        remedy = "raise md's resync floor (--speed-limit-min, KiB/s per device) or " + remedy
    return (f"no design meets the targets: {counts[key]} of {len(simulated)} simulated designs miss "
            f"{label}; the best reached {_fmt(key, best)}{where} against a target of "
            f"{_fmt(key, targets[key])} — {remedy}")
