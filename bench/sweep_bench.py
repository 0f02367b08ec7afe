"""Sweep throughput: points per second for 10-second points on local processes and on
Ray, Ray's overhead per point, and a real 1,000-point sweep.

    PYTHONPATH=python python3 bench/sweep_bench.py [--ray] [--thousand]

Prints one line per measurement (wall seconds from raidlab.sweep.runner's own clock, which
starts after the points are resolved and the executor is up; Ray's start is timed apart).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from raidlab.sweep import runner, store
from raidlab.sweep.executor import Executor

#: 64 points of the README's example family: 16 designs x 2 workloads x 2 seeds, 10 s each.
SIXTY_FOUR = {"sweep": {"runtime_s": 10, "drive": "nearline-7200"},
              "grid": {"level": [5, 10], "devices": [4, 6], "chunk-kib": [64, 512],
                       "preset": ["oltp-postgres", "wal"], "seed": [1, 2, 3, 4]}}
#: 200 nearly free points (a null drive for 10 ms): what is left is each path's cost per point.
CHEAP = {"sweep": {"runtime_s": 0.01, "drive": "null", "preset": "wal"},
         "grid": {"level": [5, 10], "seed": list(range(1, 101))}}
#: 1,000 points: 2 levels x 5 widths x 2 chunks x 2 workloads x 25 seeds, 10 s each.
THOUSAND = {"sweep": {"runtime_s": 10, "drive": "nearline-7200"},
            "grid": {"level": [5, 10], "devices": [4, 6, 8, 10, 12], "chunk-kib": [64, 512],
                     "preset": ["oltp-postgres", "wal"], "seed": list(range(1, 26))}}


def timed(spec, jobs, ray=None, label="", load=False):
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        outcome = runner.run(spec, os.path.join(out, "store"), jobs=jobs, ray=ray)
        total = time.perf_counter() - start
        if load:
            import pandas  # noqa: F401  (imported before the clock starts)

            start = time.perf_counter()
            rows = len(store.load(os.path.join(out, "store")))
            print(f"load_sweep of {rows} rows: {time.perf_counter() - start:.2f} s", flush=True)
    rate = outcome.ran / outcome.seconds
    print(f"{label}: {outcome.ran} points in {outcome.seconds:.2f} s = {rate:.1f} points/s "
          f"({outcome.seconds / outcome.ran * 1000:.1f} ms wall per point; {total:.2f} s with resolving "
          f"and startup)", flush=True)
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ray", action="store_true", help="also on Ray (local runtime, 2 CPUs)")
    parser.add_argument("--thousand", action="store_true", help="also the 1,000-point sweep")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    timed(SIXTY_FOUR, 1, label="64 points, 1 process")
    timed(SIXTY_FOUR, 2, label="64 points, 2 processes")
    if args.ray:
        start = time.perf_counter()
        with Executor(2, "auto"):  # the runs below join this runtime
            up = time.perf_counter() - start
            print(f"Ray start (local runtime, 2 CPUs): {up:.2f} s", flush=True)
            timed(SIXTY_FOUR, 2, "auto", label="64 points, Ray 2 CPUs")
            cheap_ray = timed(CHEAP, 2, "auto", label="200 null-drive points, Ray 2 CPUs")
        cheap_local = timed(CHEAP, 2, label="200 null-drive points, 2 processes")
        overhead_ms = (cheap_ray.seconds - cheap_local.seconds) / cheap_ray.ran * 1000
        print(f"Ray overhead per point over local processes (wall): {overhead_ms:.1f} ms", flush=True)
    if args.thousand:
        timed(THOUSAND, 2, label="1000 points, 2 processes", load=True)
    print(f"load average at end: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
