#!/usr/bin/env python3
"""Simulator speed as users see it: host I/Os per wall second of ``raidlab sim`` itself.

Runs the user's benchmark run (raid5 of 6 × cheetah-10k7, 64 KiB chunk, 16 KiB random 60/40 O_DIRECT,
128 threads, 1 M host I/Os) through the ``raidlab`` command as a subprocess, in its two
spellings:

- ``fio``: a job file, 128 jobs × 7,813 I/Os (1,000,064 reads and writes);
- ``sysbench``: ``--max-requests=1000000`` in sysbench 0.4's spelling, whose defaults add an
  fsync of every file (128) after each 100 requests: 1 M reads and writes plus 1.28 M fsyncs,
  each a flush of every member.

The clock runs from starting the process to its exit, so it counts Python's start-up, parsing,
the simulation, the report and printing it (to a pipe), as a user waits for them. "Host I/O"
is a read or a write the workload completed (the criterion benchmark's unit); fsyncs are
counted apart. One untimed run first writes the bytecode cache (as installing does) and reads
the counts from the run's ``--json``. Nothing here asserts a speed: the figures go to
bench/README.md.

    python3 bench/cli_speed.py                 # both forms, 5 timed runs each
    python3 bench/cli_speed.py --form fio --runs 9
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

#: The array of the run (the criterion benchmark's raid5 array).
ARRAY = ["--level", "5", "--devices", "6", "--drive", "cheetah-10k7", "--chunk-kib", "64"]

THREADS = 128


def fio_job(requests: int) -> str:
    """The fio form: ``requests`` spread over 128 jobs (rounded up to whole jobs' counts)."""
    per_job = -(-requests // THREADS)
    return ("[global]\nioengine=psync\ndirect=1\nbs=16k\nrw=randrw\nrwmixread=60\nsize=32g\n"
            f"number_ios={per_job}\n[j]\nnumjobs={THREADS}\ngroup_reporting\n")


def sysbench_options(requests: int) -> str:
    """The sysbench form, 0.4's spelling as the README's classic (fsync rounds by default)."""
    return (f"--file-test-mode=rndrw --num-threads={THREADS} --file-block-size=16384 "
            f"--file-total-size=32G --max-requests={requests} --file-extra-flags=direct")


def raidlab_command(python: Optional[str] = None) -> List[str]:
    """``PYTHON -m raidlab`` when given, else the ``raidlab`` script users run (or this Python's
    ``-m raidlab`` when none is on PATH)."""
    script = None if python else shutil.which("raidlab")
    return [script] if script else [python or sys.executable, "-m", "raidlab"]


def sim_command(form: str, requests: int, workdir: Path, python: Optional[str] = None) -> List[str]:
    """The user's command line for one form."""
    if form == "fio":
        job = workdir / "point8.fio"
        job.write_text(fio_job(requests), encoding="utf-8")
        workload = ["--fio", str(job)]
    else:
        workload = ["--sysbench", sysbench_options(requests)]
    return raidlab_command(python) + ["sim"] + ARRAY + workload


def environment() -> Dict[str, str]:
    """The caller's environment with a bytecode cache allowed (a fresh install has one)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "raidlab-bench-pycache"))
    return env


def counts(command: Sequence[str], workdir: Path, env: Dict[str, str]) -> Dict[str, int]:
    """Reads, writes and fsyncs of the run, from an untimed run's ``--json``."""
    out = workdir / "run.json"
    subprocess.run(list(command) + ["--json", str(out), "--force"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    jobs = json.loads(out.read_text(encoding="utf-8"))["jobs"]
    total = {"reads": 0, "writes": 0, "fsyncs": 0}
    for job in jobs:
        total["reads"] += job["read"]["total_ios"]
        total["writes"] += job["write"]["total_ios"]
        total["fsyncs"] += job.get("sync", {}).get("total_ios", 0)
    return total


def timed_run(command: Sequence[str], env: Dict[str, str]) -> float:
    """Wall seconds of one run, its output read from a pipe as a terminal would take it."""
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def measure(form: str, runs: int, requests: int, python: Optional[str] = None) -> Dict[str, object]:
    """One form: the command, its counts and each timed run's host I/O/s."""
    env = environment()
    with tempfile.TemporaryDirectory(prefix="raidlab-bench-") as tmp:
        workdir = Path(tmp)
        command = sim_command(form, requests, workdir, python)
        found = counts(command, workdir, env)
        host = found["reads"] + found["writes"]
        seconds = [timed_run(command, env) for _ in range(runs)]
    rates = [host / s for s in seconds]
    return {"form": form, "command": command, **found, "host_ios": host, "seconds": seconds,
            "rates": rates, "median": statistics.median(rates)}


def report(result: Dict[str, object]) -> str:
    """Lines for one form: what ran, then host I/O/s per run, median and range."""
    rates, seconds = result["rates"], result["seconds"]
    shown = " ".join(f"'{a}'" if " " in a else a for a in result["command"])
    return "\n".join([
        f"{result['form']}: {shown}",
        f"  {result['reads']:,} reads + {result['writes']:,} writes = {result['host_ios']:,} host I/Os"
        f" (+ {result['fsyncs']:,} fsyncs)",
        "  runs: " + ", ".join(f"{s:.3f} s = {r / 1e3:,.1f} K/s" for s, r in zip(seconds, rates)),
        f"  host I/O/s: median {result['median'] / 1e3:,.1f} K, range {min(rates) / 1e3:,.1f}"
        f"-{max(rates) / 1e3:,.1f} K",
    ])


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--form", choices=["fio", "sysbench", "both"], default="both")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per form (default 5)")
    parser.add_argument("--requests", type=int, default=1_000_000,
                        help="host reads and writes of the run (default 1,000,000)")
    parser.add_argument("--python", help="run PYTHON -m raidlab instead of the raidlab script")
    args = parser.parse_args(list(argv))
    if args.runs < 1 or args.requests < THREADS:
        parser.error(f"--runs must be at least 1 and --requests at least {THREADS}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    for form in (["fio", "sysbench"] if args.form == "both" else [args.form]):
        print(report(measure(form, args.runs, args.requests, args.python)), flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
