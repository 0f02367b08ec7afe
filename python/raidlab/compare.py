"""Compare array designs on one workload, in optimal, degraded and rebuilding states.

The built-in classic (``raidlab compare`` with no arguments) is the question database RAID
benchmarks of the mid-2000s asked: six 10k RPM SCSI drives behind a RAID controller with a
256 MB battery-backed write-back cache, the deadline scheduler, sysbench fileio on 32 GiB with
128 threads and 16 KiB O_DIRECT requests, modes rndrd, rndwr and rndrw — RAID5 or RAID10?
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, Dict, List, Optional, Sequence

from raidlab import notes as run_notes
from raidlab.designs_file import read_designs
from raidlab.errors import ConfigError, DataLossError, RaidlabError
from raidlab.report import headline
from raidlab.run import Design as ArrayDesign
from raidlab.run import build_design, build_run
from raidlab.sim import resolve_workload, run_spec
from raidlab.sweep.executor import Executor
from raidlab.workload import Workload, parse_sysbench

STATES = ("optimal", "degraded", "rebuilding")

#: The classic's hardware, said in full: six Cheetah 10K.7 behind a RAID controller with a
#: 256 MiB battery-backed cache and 64 KiB stripe units. Settings a design does not give take
#: the defaults every command shares (:data:`raidlab.run.DEFAULTS`: md, 512 KiB chunks, ...).
CLASSIC_HARDWARE: Dict[str, Any] = {
    "devices": 6, "drive": "cheetah-10k7", "controller": "hw", "cache_mib": 256, "bbu": True,
    "chunk_kib": 64,
}

CLASSIC_SYSBENCH = ("--file-total-size=32G --threads=128 --file-block-size=16384 "
                    "--file-extra-flags=direct --time=60")
CLASSIC_MODES = ("rndrd", "rndwr", "rndrw")


@dataclass
class Design:
    """A named design: its settings as given (names of :class:`raidlab.run.Design`)."""

    name: str
    settings: Dict[str, Any]


@dataclass
class Case:
    """One workload of the comparison, with a short name for tables."""
    name: str
    workload: Workload


@dataclass
class Row:
    design: str
    state: str
    case: str
    document: Dict[str, Any]
    capacity_bytes: int
    #: The design as run (controller, chunk, ... with defaults filled in).
    resolved: Optional[ArrayDesign] = None
    notes: List[str] = field(default_factory=list)

    def totals(self) -> Dict[str, Any]:
        """The run's headline (:mod:`raidlab.report.headline`, chosen when its document was
        built: the steady state when the run reached one): IOPS and MiB/s over reads and
        writes of every job, the p50/p99 latency (ms) of each direction (``read_p99_ms``, ...;
        None when the run had none), and ``basis``, the span they cover, in words."""
        figures = headline.of(self.document)
        totals: Dict[str, Any] = {"iops": figures["iops"], "mib_s": figures["mib_s"],
                                  "steady_from_s": figures["from_s"], "basis": figures["basis"]}
        for direction in ("read", "write"):
            for percent in (50, 99):
                totals[f"{direction}_p{percent}_ms"] = figures[direction][f"p{percent}_ms"]
        return totals

    def rebuild_hours(self) -> Optional[float]:
        rebuild = self.document.get("rebuild")
        if not rebuild or not rebuild.get("duration_s"):
            return None
        return rebuild["duration_s"] / 3600


def classic() -> tuple:
    """The built-in comparison: RAID5 vs RAID10 on the classic hardware and sysbench modes."""
    designs = [Design("RAID5", {**CLASSIC_HARDWARE, "level": 5}), Design("RAID10", {**CLASSIC_HARDWARE, "level": 10})]
    cases = [Case(mode, parse_sysbench(f"--file-test-mode={mode} {CLASSIC_SYSBENCH}")) for mode in CLASSIC_MODES]
    return designs, cases


def load_designs(path: str) -> tuple:
    """Designs and (optionally) workloads from a TOML file::

        [defaults]            # optional: applies to every design
        drive = "cheetah-10k7"
        [[design]]
        name = "RAID5 64K"
        level = 5
        chunk_kib = 64
        [[workload]]          # optional: default is the classic sysbench modes
        name = "oltp"
        preset = "oltp-innodb"  # or sysbench = "...", or fio = "path or job text"
    """
    defaults, entries, workloads = read_designs(path, [f.name for f in fields(ArrayDesign)])
    designs = []
    for index, entry in enumerate(entries):
        settings = {**defaults, **entry}
        name = str(settings.pop("name", f"design{index + 1}"))
        build_design(settings, f"designs file {path}: design '{name}': ")
        designs.append(Design(name, settings))
    if not designs:
        raise ConfigError(f"designs file {path}: no [[design]] entries")
    cases = []
    for index, entry in enumerate(workloads):
        name = str(entry.get("name", f"workload{index + 1}"))
        spec = {k: entry[k] for k in ("fio", "sysbench", "preset") if k in entry}
        cases.append(Case(name, resolve_workload(**spec)))
    return designs, cases or classic()[1]


def _state_options(state: str) -> Dict[str, Any]:
    if state == "optimal":
        return {"failed": (), "spare": False}
    if state == "degraded":
        return {"failed": (0,), "spare": False}
    if state == "rebuilding":
        return {"failed": (0,), "spare": True}
    raise ConfigError(f"unknown state '{state}': expected {', '.join(STATES)}")


def run_one(design: Design, case: Case, state: str, seed: int, runtime_s: Optional[float]) -> Row:
    spec = build_run({**design.settings, **_state_options(state), "seed": seed, "runtime_s": runtime_s,
                      "latency_by_second": True},
                     workload=case.workload, where=f"design '{design.name}': ")
    try:
        result = run_spec(spec)
    except DataLossError as lost:
        if state == "optimal":
            raise
        raise ConfigError(f"design '{design.name}' has no {state} state ({lost}); run it with "
                          "--states optimal, or drop the design") from None
    # compare reports the steady state: the headline is chosen here, once, for every output.
    return Row(design.name, state, case.name, result.to_dict(steady=True), run_notes.array_capacity_bytes(spec),
               spec.design, result.notes)


def _run_task(task: tuple) -> Any:
    """One run of the comparison (a unit of work for :class:`raidlab.sweep.Executor`); a
    refusal comes back as a value, so the one raised is the first in order, as run serially."""
    try:
        return run_one(*task)
    except RaidlabError as error:
        return error


def compare(designs: Sequence[Design], cases: Sequence[Case], states: Sequence[str] = STATES,
            seed: int = 1, runtime_s: Optional[float] = None,
            progress: Optional[Callable[[int, int], None]] = None,
            jobs: int = 1, ray: Optional[str] = None) -> List[Row]:
    """Every design × state × workload, in a fixed order (so output is deterministic), run by
    the sweep's executor (``jobs`` local processes, or Ray tasks with ``ray``): where a run
    happens never changes its result. :func:`raidlab.frames.comparison` turns the rows into a
    DataFrame of the figures ``raidlab compare`` prints."""
    tasks = [(design, case, state, seed, runtime_s) for design in designs for state in states for case in cases]
    rows: List[Any] = [None] * len(tasks)
    with Executor(jobs, ray) as executor:
        for done, (index, row) in enumerate(executor.as_completed(_run_task, tasks), start=1):
            rows[index] = row
            if progress is not None:
                progress(done, len(tasks))
    for row in rows:
        if isinstance(row, RaidlabError):
            raise row
    return rows


def verdicts(rows: Sequence[Row]) -> List[str]:
    """One line per design: where it wins, what failure costs it, capacity and rebuild time."""
    designs = list(dict.fromkeys(r.design for r in rows))
    cases = list(dict.fromkeys(r.case for r in rows))
    lookup = {(r.design, r.state, r.case): r for r in rows}
    lines = []
    for design in designs:
        wins, keeps = [], []
        for case in cases:
            optimal = lookup.get((design, "optimal", case))
            if optimal is None:
                continue
            mine = optimal.totals()["iops"]
            others = [lookup[(d, "optimal", case)].totals()["iops"] for d in designs
                      if d != design and (d, "optimal", case) in lookup]
            if others and mine > max(others) * 1.05:
                wins.append(f"{case} ({mine / max(others):.1f}x)")
            degraded = lookup.get((design, "degraded", case))
            if degraded is not None and mine > 0:
                keeps.append(f"{case} {100 * degraded.totals()['iops'] / mine:.0f}%")
        sample = next(r for r in rows if r.design == design)
        rebuild = next((r.rebuild_hours() for r in rows if r.design == design and r.rebuild_hours()), None)
        parts = [f"{design}: usable {sample.capacity_bytes / 1e9:.0f} GB"]
        parts.append("fastest on " + ", ".join(wins) if wins else "fastest on none of the workloads")
        if keeps:
            parts.append("with a drive failed keeps " + ", ".join(keeps) + " of its IOPS")
        if rebuild is not None:
            parts.append(f"rebuild under load ~{rebuild:.1f} h")
        lines.append("; ".join(parts) + ".")
    return lines
