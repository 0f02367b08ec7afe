"""Running a sweep: resolve every point, open the store, run what is not stored yet, report.

:func:`sweep` is both ``raidlab sweep`` and ``raidlab.sweep(...)``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from raidlab import _core, inputs
from raidlab.errors import ConfigError, RaidlabError
from raidlab.sweep import store as store_mod
from raidlab.sweep import storefiles
from raidlab.sweep.executor import Executor
from raidlab.sweep.grid import expand, parse
from raidlab.sweep.metrics import run_point
from raidlab.sweep.points import Resolved, resolve_all

#: Simulated seconds a pilot runs to estimate the sweep's time (at most).
PILOT_SECONDS = 1.0

Say = Callable[[str], None]


@dataclass
class Outcome:
    """What a sweep did: its points (in order), how many ran or were already stored, wall time."""

    keys: List[str]
    expanded: int
    stored_before: int
    ran: int = 0
    failed: List[Tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    where: str = ""


def read_spec(spec: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> Tuple[Mapping[str, Any], str, Optional[str]]:
    """The sweep document, the prefix of its messages and the directory its relative files are
    read from (the sweep file's; the working directory for a dict)."""
    if isinstance(spec, Mapping):
        return spec, "sweep: ", None
    path = os.fspath(spec)
    return inputs.read_toml(path, "sweep file"), f"sweep file {inputs.show_path(path)}: ", \
        os.path.dirname(os.path.abspath(path))


def resolve(spec: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> Tuple[List[Resolved], int]:
    """Every point of a sweep resolved (distinct runs only) and the number of points expanded."""
    document, label, base = read_spec(spec)
    points = expand(parse(document, label))
    if not points:
        raise ConfigError(f"{label}every point is excluded: the sweep has no points")
    return resolve_all(points, label, base), len(points)


def _sim_seconds(resolved: Resolved) -> float:
    runtime = resolved.options.get("runtime_s")
    return float(min(runtime, resolved.spec.options.max_time_s) if runtime else resolved.spec.options.max_time_s)


def _pilot(resolved: Resolved, seconds: float) -> float:
    """Wall seconds of a point's whole unit of work (run, JSON, row) cut to ``seconds`` simulated."""
    spec = resolved.spec
    if spec.workload is not None:
        spec = replace(spec, workload=spec.workload.with_runtime_ns(int(seconds * 1e9)))
    else:
        spec = replace(spec, options=replace(spec.options, max_time_s=seconds))
    start = time.perf_counter()
    _safe_run(_task(replace(resolved, spec=spec)))
    return time.perf_counter() - start


def estimate_seconds(todo: List[Resolved], workers: int) -> Optional[float]:
    """Wall seconds to run ``todo`` on ``workers``: the first and the last point run cut to
    1/10 and 1 of :data:`PILOT_SECONDS` simulated seconds give a fixed cost and a cost per
    simulated second, applied to every point's simulated time. Rough: points that differ in
    drives or load differ in cost."""
    if not todo:
        return None
    fixed = per_second = 0.0
    pilots = [todo[0], todo[-1]] if len(todo) > 1 else [todo[0]]
    _pilot(todo[0], 0.001)  # first use of the encoders and the core: not a point's cost
    for resolved in pilots:
        long = min(PILOT_SECONDS, _sim_seconds(resolved))
        short_time, long_time = _pilot(resolved, long / 10), _pilot(resolved, long)
        slope = max(long_time - short_time, 0.0) / (long * 0.9)
        fixed += max(short_time - slope * long / 10, 0.0) / len(pilots)
        per_second += slope / len(pilots)
    total = sum(fixed + per_second * _sim_seconds(r) for r in todo)
    return total / max(1, min(workers, len(todo)))


def _task(resolved: Resolved) -> Tuple[Any, Dict[str, Any]]:
    """A point's unit of work: its spec, and the row's identity and option columns."""
    return resolved.spec, {"key": resolved.key, "raidlab_version": _core.__version__, **resolved.options}


def _safe_run(task: Tuple[Any, Dict[str, Any]]) -> Tuple[Optional[str], Any]:
    """Runs a point where the executor puts it and encodes its row there too (the writer only
    writes bytes): ``(JSON text, row's Parquet bytes)``, or ``(None, message)`` for a
    RaidlabError (the sweep goes on)."""
    spec, head = task
    try:
        text, metrics = run_point(spec)
    except RaidlabError as error:
        return None, str(error)
    return text, storefiles.row_bytes({**head, **metrics})


def human_seconds(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def run(spec: Union[str, "os.PathLike[str]", Mapping[str, Any]], out: Union[str, "os.PathLike[str]"], *,
        jobs: Optional[int] = None, ray: Optional[str] = None, force: bool = False,
        say: Optional[Say] = None, progress: Optional[Callable[[int, int, float], None]] = None) -> Outcome:
    """Runs a sweep into the store ``out``; ``say`` gets the plan and summary lines,
    ``progress(done, total, seconds)`` each finished point. The sweep holds the store's lock from
    opening it to the end of its compaction: a second sweep into the same store waits (see
    :mod:`raidlab.sweep.store`)."""
    say = say or (lambda line: None)
    resolved, expanded = resolve(spec)
    store_mod.Store.check(os.fspath(out), force)  # refused before Ray starts; created after it is up
    with Executor(jobs, ray) as executor, \
            store_mod.Store.open(os.fspath(out), force=force, hold=True, say=say) as store:
        outcome = _run_points(store, executor, resolved, expanded, say, progress)
        executor.close()  # the workers stop before the rows are merged
        store.compact()
    say(summary(outcome))
    if outcome.failed:
        label, message = outcome.failed[0]
        raise ConfigError(f"{len(outcome.failed)} point(s) could not run (the others are stored); "
                          f"{label}: {message}")
    return outcome


def _run_points(store: "store_mod.Store", executor: Executor, resolved: List[Resolved], expanded: int,
                say: Say, progress: Optional[Callable[[int, int, float], None]]) -> Outcome:
    """Runs the points the store lacks (every stored file is read and checked first)."""
    stored = store.keys()
    todo = [r for r in resolved if r.key not in stored]
    outcome = Outcome([r.key for r in resolved], expanded, len(resolved) - len(todo), where=store.path)
    executor.fit(len(todo), "point to run")
    merged = expanded - len(resolved)
    guess = estimate_seconds(todo, executor.workers)
    say(f"{expanded} points" + (f" ({merged} the same run as another, kept once)" if merged else "")
        + f": {outcome.stored_before} already stored, {len(todo)} to run on {executor.describe()}"
        + (f", about {human_seconds(guess)}" if guess is not None else ""))
    start = time.perf_counter()
    for index, (text, row) in executor.as_completed(_safe_run, [_task(r) for r in todo]):
        if text is None:
            outcome.failed.append((todo[index].point.label(), row))
        else:
            store.put(todo[index].key, row, text)
            outcome.ran += 1
        if progress is not None:
            progress(outcome.ran + len(outcome.failed), len(todo), time.perf_counter() - start)
    outcome.seconds = time.perf_counter() - start
    return outcome


def summary(outcome: Outcome) -> str:
    rate = outcome.ran / outcome.seconds if outcome.seconds > 0 else 0.0
    ran = f"ran {outcome.ran} in {human_seconds(outcome.seconds)}, {rate:.1f} points/s" if outcome.ran else "ran none"
    failed = f"; {len(outcome.failed)} failed" if outcome.failed else ""
    return (f"sweep: {len(outcome.keys)} rows in {outcome.where}; {ran}; {outcome.stored_before} were "
            f"stored already{failed}")
