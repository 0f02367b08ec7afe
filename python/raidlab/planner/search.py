"""The planner's search: grow each family of designs one drive at a time, simulating in rounds.

A family is every design that differs only in its device count. More drives cost more, so once
a family's smallest design meets every target, larger members of that family can never be the
cheapest answer; the search simulates ``extra`` more counts past that point (to show on the
Pareto front what more money buys) and closes the family. A family also closes when even its
largest count could not reach the IOPS targets at linear scaling with 50 % slack (a design's
IOPS at n drives times max_n / n times 1.5 — adding drives never scales better than linearly),
or when the caller's ``closes(design, result, growth)`` says no larger count can meet the
targets even if the family's largest design (``growth`` times as many drives) did that much better.

Each round simulates the next count of every open family, in parallel (``jobs`` processes, or
Ray tasks: :class:`raidlab.sweep.Executor`).
Rounds are synchronous and every simulation depends only on its task, so the result is the same
whatever ``jobs`` is.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from raidlab.planner.candidates import Design
from raidlab.planner.evaluate import evaluate
from raidlab.sweep.executor import Executor

#: Headroom over linear scaling before a family is declared hopeless on IOPS.
SCALING_SLACK = 1.5


def _hopeless(family: List[Design], index: int, result: Dict[str, Any], targets: Dict[str, Any]) -> bool:
    """Even the family's largest design cannot reach an IOPS target at linear scaling."""
    here, top = family[index].devices, family[-1].devices
    for key, scenario in (("min_iops", "optimal"), ("min_degraded_iops", "degraded")):
        target = targets.get(key)
        metrics = result.get(scenario)
        if target is None or metrics is None:
            continue
        if metrics["iops"] * top / here * SCALING_SLACK < target:
            return True
    return False


def search(families: Sequence[List[Design]], make_task: Callable[[Design], Dict[str, Any]],
           passes: Callable[[Design, Dict[str, Any]], bool], targets: Dict[str, Any], extra: int,
           jobs: int, progress: Optional[Callable[[int], None]] = None,
           ray: Optional[str] = None,
           closes: Optional[Callable[[Design, Dict[str, Any], float], bool]] = None) -> Dict[Design, Dict[str, Any]]:
    """Simulates designs family by family; returns every simulated design's scenario metrics.

    ``passes(design, result)`` says whether a design meets every target; ``progress(n)`` is
    called with the number of designs settled (simulated or skipped) since the last call.
    """
    results: Dict[Design, Dict[str, Any]] = {}
    position = [0] * len(families)
    remaining = [None] * len(families)  # counts still to simulate past the first passing one
    open_families = list(range(len(families)))
    # the sweep's executor runs each round (jobs local processes, or Ray tasks)
    with Executor(jobs, ray) as executor:
        while open_families:
            batch = [(f, families[f][position[f]]) for f in open_families]
            tasks = [make_task(design) for _, design in batch]
            outcomes = executor.imap(evaluate, tasks)
            still_open = []
            for (f, design), outcome in zip(batch, outcomes):
                results[design] = outcome
                settled = 1
                family = families[f]
                index = position[f]
                if remaining[f] is None and passes(design, outcome):
                    remaining[f] = extra
                elif remaining[f] is not None:
                    remaining[f] -= 1
                done = (index + 1 >= len(family) or remaining[f] == 0
                        or (remaining[f] is None and (_hopeless(family, index, outcome, targets)
                                                      or (closes is not None and closes(
                                                          design, outcome, family[-1].devices / design.devices)))))
                if done:
                    settled += len(family) - index - 1
                else:
                    position[f] += 1
                    still_open.append(f)
                if progress is not None:
                    progress(settled)
            open_families = still_open
    return results
