"""Compare array designs on one workload, in optimal, degraded and rebuilding states.

The built-in classic (``raidlab compare`` with no arguments) is the question database RAID
benchmarks of the mid-2000s asked: six 10k RPM SCSI drives behind a RAID controller with a
256 MB battery-backed write-back cache, the deadline scheduler, sysbench fileio on 32 GiB with
128 threads and 16 KiB O_DIRECT requests, modes rndrd, rndwr and rndrw — RAID5 or RAID10?
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

from raidlab import _core
from raidlab.array import Array
from raidlab.designs_file import read_designs
from raidlab.errors import ConfigError
from raidlab.sim import build_config, load_drive, resolve_workload, run_config
from raidlab.workload import Workload, parse_sysbench

STATES = ("optimal", "degraded", "rebuilding")

#: Settings every design starts from (the classic's hardware); a design overrides any of them.
DEFAULT_DESIGN: Dict[str, Any] = {
    "level": 5, "devices": 6, "layout": None, "chunk_kib": 64, "drive": "cheetah-10k7",
    "controller": "hw", "cache_mib": 256, "bbu": True, "read_ahead": False,
    "scheduler": "mq-deadline", "stripe_cache_size": 256, "rmw_level": 1, "nr_requests": 128,
    "max_sectors_kb": 1280, "speed_limit_min": 1000, "speed_limit_max": 200000,
    "rebuild_priority": 30,
}

CLASSIC_SYSBENCH = ("--file-total-size=32G --threads=128 --file-block-size=16384 "
                    "--file-extra-flags=direct --time=60")
CLASSIC_MODES = ("rndrd", "rndwr", "rndrw")


@dataclass
class Design:
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

    def totals(self) -> Dict[str, float]:
        """IOPS, MiB/s and p50/p99 latency (ms) over reads and writes of every job."""
        iops = bw = 0.0
        p50 = p99 = 0.0
        for job in self.document["jobs"]:
            for direction in ("read", "write"):
                stats = job[direction]
                if not stats["total_ios"]:
                    continue
                iops += stats["iops"]
                bw += stats["bw_bytes"] / 2**20
                pct = stats["clat_ns"]["percentile"]
                p50 = max(p50, pct["50.000000"] / 1e6)
                p99 = max(p99, pct["99.000000"] / 1e6)
        return {"iops": iops, "mib_s": bw, "p50_ms": p50, "p99_ms": p99}

    def rebuild_hours(self) -> Optional[float]:
        rebuild = self.document.get("rebuild")
        if not rebuild or not rebuild.get("duration_s"):
            return None
        return rebuild["duration_s"] / 3600


def classic() -> tuple:
    """The built-in comparison: RAID5 vs RAID10 on the classic hardware and sysbench modes."""
    designs = [Design("RAID5", {"level": 5}), Design("RAID10", {"level": 10})]
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
    defaults, entries, workloads = read_designs(path, DEFAULT_DESIGN)
    designs = []
    for index, entry in enumerate(entries):
        settings = {**defaults, **entry}
        name = str(settings.pop("name", f"design{index + 1}"))
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
    settings = {**DEFAULT_DESIGN, **design.settings}
    workload = case.workload if runtime_s is None else case.workload.with_runtime_ns(int(runtime_s * 1e9))
    options = _state_options(state)
    config = build_config(
        level=settings["level"], devices=settings["devices"], layout=settings["layout"],
        chunk_kib=settings["chunk_kib"], drive=settings["drive"], controller=settings["controller"],
        cache_mib=settings["cache_mib"], bbu=settings["bbu"], read_ahead=settings["read_ahead"],
        stripe_cache_size=settings["stripe_cache_size"], rmw_level=settings["rmw_level"],
        scheduler=settings["scheduler"], nr_requests=settings["nr_requests"],
        max_sectors_kb=settings["max_sectors_kb"], failed=options["failed"], workload=workload,
        seed=seed, max_time_s=3600.0, max_events=2_000_000_000, spare=options["spare"],
        speed_limit_min=settings["speed_limit_min"], speed_limit_max=settings["speed_limit_max"],
        rebuild_priority_pct=settings["rebuild_priority"])
    result = run_config(config, workload)
    capacity = _member_capacity(settings)
    array = Array(level=settings["level"], devices=settings["devices"], chunk_kib=settings["chunk_kib"],
                  layout=settings["layout"], member_kib=capacity)
    return Row(design.name, state, case.name, result.to_dict(), array.capacity_bytes)


def _member_capacity(settings: Dict[str, Any]) -> int:
    """Member size in KiB as the simulation uses it (the drive's capacity)."""
    drive = load_drive(settings["drive"])
    if "params" in drive and "capacity_bytes" in drive["params"]:
        return int(drive["params"]["capacity_bytes"]) // 1024
    preset = drive.get("preset")
    for entry in _core.drive_presets():
        if entry["name"] == preset:
            return entry["capacity_bytes"] // 1024
    return 1 << 30


def compare(designs: Sequence[Design], cases: Sequence[Case], states: Sequence[str] = STATES,
            seed: int = 1, runtime_s: Optional[float] = None,
            progress: Optional[Callable[[int, int], None]] = None) -> List[Row]:
    """Every design × state × workload, in a fixed order (so output is deterministic)."""
    rows = []
    total = len(designs) * len(states) * len(cases)
    for design in designs:
        for state in states:
            for case in cases:
                rows.append(run_one(design, case, state, seed, runtime_s))
                if progress is not None:
                    progress(len(rows), total)
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
