"""Sweeps: a grid of runs into a resumable Parquet store, on local cores or a Ray cluster.

>>> import raidlab, tempfile, os
>>> out = os.path.join(tempfile.mkdtemp(), "store")
>>> frame = raidlab.sweep({"sweep": {"drive": "null", "preset": "wal", "runtime_s": 0.05},
...                        "grid": {"level": [5, 10], "devices": [4]}}, out=out, jobs=1)
>>> list(frame.level), list(frame.devices)
([5, 10], [4, 4])
>>> len(raidlab.load_sweep(out))
2

Modules: :mod:`.grid` (the sweep file, grid expansion), :mod:`.points` (each point through
:func:`raidlab.run.build_run`, its key and option columns), :mod:`.metrics` (a point's run and
summary), :mod:`.store` (the Parquet store), :mod:`.executor` (local processes or Ray, also
used by ``compare`` and ``plan``), :mod:`.runner` (the whole sweep).
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Union

from raidlab.inputs import path_argument
from raidlab.sweep import runner, store
from raidlab.sweep.executor import Executor
from raidlab.sweep.grid import Grid, Point, expand, parse

__all__ = ["sweep", "load_sweep", "Executor", "Grid", "Point", "expand", "parse"]


def sweep(spec: Union[str, "os.PathLike[str]", Mapping[str, Any]], *, out: Union[str, "os.PathLike[str]"],
          jobs: Optional[int] = None, ray: Optional[str] = None, force: bool = False):
    """Runs a sweep (a SWEEP.toml path, or the same tables as a dict) into the store ``out`` and
    returns its rows as a pandas DataFrame, one per distinct point, in the sweep's order.

    Points already in the store are not run again; while another sweep writes into ``out``
    this one waits for it (:mod:`raidlab.sweep.store`). ``jobs``: local processes (default: the
    CPU count; never more than the points to run); ``ray``: ``"auto"`` or a Ray cluster address to run the points as Ray tasks.
    Raises :class:`raidlab.ConfigError` (one line) for a bad sweep or store.
    """
    out = path_argument(out, "sweep(out=...)")
    if not isinstance(spec, Mapping):
        spec = path_argument(spec, "sweep(spec)")
    outcome = runner.run(spec, out, jobs=jobs, ray=ray, force=force)
    return store.load(out, outcome.keys)


def load_sweep(path: Union[str, "os.PathLike[str]"]):
    """Every row of the sweep store at ``path`` as a pandas DataFrame, ordered by the options.
    A damaged or foreign file in the store is a :class:`raidlab.ConfigError` naming it."""
    return store.load(path_argument(path, "load_sweep(path)"))
