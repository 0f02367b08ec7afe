"""Simulate an array under a workload: ``raidlab.simulate(...)``.

The Rust core does the simulation; this module turns user-level choices (presets, fio job
files, sysbench options, drive TOML files) into the core's configuration, steps the run so a
progress bar can follow it, and wraps the result.

>>> import raidlab
>>> result = raidlab.simulate(level=10, devices=4, drive="null", preset="oltp-postgres",
...                           runtime_s=0.05, seed=3)
>>> result.to_dict()["raidlab"]["seed"]
3
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from raidlab import _core, inputs
from raidlab.errors import ConfigError, DeviceError
from raidlab.report import fio_json
from raidlab.workload import Workload, parse_fio, parse_fio_file, parse_sysbench, preset as workload_preset

#: Defaults, each with its source.
DEFAULT_CHUNK_KIB = 512  # mdadm DEFAULT_CHUNK since 3.1
DEFAULT_STRIPE_CACHE = 256  # md NR_STRIPES
DEFAULT_NR_REQUESTS = 128  # block layer BLKDEV_DEFAULT_RQ
DEFAULT_MAX_SECTORS_KB = 1280  # block layer BLK_DEF_MAX_SECTORS (2560 sectors)
DEFAULT_MAX_TIME_S = 3600.0
DEFAULT_MAX_EVENTS = 2_000_000_000
#: Simulated seconds per progress step.
PROGRESS_STEP_NS = 250_000_000


def load_drive(drive: Union[str, Path, Dict[str, Any]]) -> Dict[str, Any]:
    """A drive choice for the core: a preset name, a TOML file path, or a dict of parameters.

    A TOML file holds ``kind = "hdd"|"ssd"|"null"`` or ``preset = "NAME"`` (to start from a
    preset) and any parameters of that model by name (see ``raidlab drives --params``).
    A DiskSim ``.parv`` or ``.diskspecs`` file is imported (:mod:`raidlab.disksim`).
    """
    if isinstance(drive, dict):
        return drive
    text = str(drive)
    if text.endswith((".parv", ".diskspecs")):
        from raidlab import disksim

        return disksim.drive_choice(text)
    if text.endswith(".toml"):
        table = inputs.read_toml(text, "drive file")
        choice: Dict[str, Any] = {}
        for key in ("preset", "kind"):
            if key in table:
                choice[key] = str(table.pop(key))
        params = {}
        for key, value in table.items():
            if isinstance(value, bool):
                value = float(value)
            params[key] = inputs.finite_number(value, f"drive file {inputs.show_path(text)}: '{key}'")
        choice["params"] = params
        if "preset" not in choice and "kind" not in choice:
            raise DeviceError(f"drive file {text}: needs kind = \"hdd\"|\"ssd\"|\"null\" or preset = \"NAME\"")
        return choice
    return {"preset": text}


#: The workload of an idle array (a rebuild with no foreground I/O).
IDLE = None


def parse_events(specs: Sequence[str], action: str) -> List[Dict[str, Any]]:
    """``K@T`` entries (member K at time T, e.g. ``2@30s``, ``1@1.5m``, ``0@500ms``)."""
    events = []
    for spec in specs:
        member, _, when = spec.partition("@")
        if not member.strip().isdigit() or not when:
            raise ConfigError(f"--{action} {spec!r}: expected MEMBER@TIME, e.g. 2@30s")
        events.append({"action": action, "member": int(member), "at_s": parse_seconds(when, action)})
    return events


def parse_seconds(text: str, option: str) -> float:
    """A duration: plain seconds or with a unit (ms, s, m, h)."""
    units = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    value = text.strip().lower()
    for suffix in ("ms", "s", "m", "h"):
        if value.endswith(suffix):
            number, scale = value[: -len(suffix)], units[suffix]
            break
    else:
        number, scale = value, 1.0
    try:
        seconds = float(number) * scale
    except ValueError:
        raise ConfigError(f"--{option}: {text!r} is not a time (e.g. 30s, 1.5m, 500ms)") from None
    if not 0 <= seconds <= 1e7:
        raise ConfigError(f"--{option}: {text!r} is out of range")
    return seconds


#: What ``--fio`` takes, for every command's help (see :func:`fio_workload`).
FIO_FORMS = ("JOB.fio is a job file's path (an existing path is always read as a file) or, when it "
             "holds a newline, the job text itself.")


def fio_workload(fio: str) -> Workload:
    """``--fio``'s value: the path of a job file, or the job text itself.

    A value that names an existing file (or anything else that exists) is always read as a file,
    whatever characters it holds (``jobs[1]/oltp.fio`` is a path). Only a value that does not
    exist and holds a newline is job text: a job needs a section line and an option line.
    """
    try:
        os.stat(fio)
        exists = True
    except (OSError, ValueError):  # missing, a name too long for a path, or a NUL in it
        exists = False
    if exists or "\n" not in fio:
        return parse_fio_file(fio)
    return parse_fio(fio)


def resolve_workload(fio: Optional[str] = None, sysbench: Optional[str] = None,
                     preset: Optional[str] = None, workload: Optional[Workload] = None,
                     allow_idle: bool = False) -> Optional[Workload]:
    """Exactly one of a fio job file (path or text), sysbench options, a preset or a Workload;
    none at all means an idle array when ``allow_idle`` (a failure timeline runs on its own)."""
    given = [w for w in (fio, sysbench, preset, workload) if w is not None]
    if not given and allow_idle:
        return IDLE
    if len(given) != 1:
        raise ConfigError("give exactly one workload: --fio JOB, --sysbench \"OPTIONS\" or --preset NAME")
    if workload is not None:
        return workload
    if fio is not None:
        return fio_workload(fio)
    if sysbench is not None:
        return parse_sysbench(sysbench)
    return workload_preset(preset)


@dataclass
class SimResult:
    """A finished run: the core's measurements plus the configuration that produced them."""

    raw: Dict[str, Any]
    config: Dict[str, Any]
    workload: Optional[Workload]

    def to_dict(self) -> Dict[str, Any]:
        """fio's JSON shape, with a ``raidlab`` block (version, seed, resolved configuration)."""
        block = {
            "version": _core.__version__,
            "seed": self.raw["seed"],
            "prng": "xoshiro256**/splitmix64",
            "events": self.raw["events"],
            "simulated_ns": self.raw["end_ns"],
            "truncated": self.raw["truncated"],
            "config": self.config,
        }
        return fio_json.document(self.raw, block)

    def to_pandas(self):
        """One row per job and direction: iops, bandwidth and latency percentiles (pandas)."""
        import pandas as pd

        rows = []
        for job in self.to_dict()["jobs"]:
            for direction in ("read", "write"):
                stats = job[direction]
                if not stats["total_ios"]:
                    continue
                percentiles = stats["clat_ns"].get("percentile", {})
                rows.append({
                    "job": job["jobname"], "direction": direction, "iops": stats["iops"],
                    "bw_bytes": stats["bw_bytes"], "latency_ns_mean": stats["clat_ns"]["mean"],
                    "latency_ns_p50": percentiles.get("50.000000"),
                    "latency_ns_p99": percentiles.get("99.000000"),
                })
        return pd.DataFrame(rows)


def build_config(*, level: Union[int, str], devices: int, layout: Optional[str],
                 chunk_kib: Optional[int], drive: Union[str, Path, Dict[str, Any]],
                 controller: str, cache_mib: int, bbu: bool, read_ahead: bool,
                 stripe_cache_size: int, rmw_level: int, scheduler: str, nr_requests: int,
                 max_sectors_kb: int, failed: Sequence[int], workload: Optional[Workload], seed: int,
                 max_time_s: float, max_events: int, timeline: Sequence[Dict[str, Any]] = (),
                 spare: bool = False, speed_limit_min: int = 1000, speed_limit_max: int = 200000,
                 rebuild_priority_pct: int = 30) -> Dict[str, Any]:
    """The core's configuration dict (also recorded in every report)."""
    if workload is IDLE and not timeline and not (spare and failed):
        raise ConfigError("give a workload (--fio, --sysbench or --preset), or failures to simulate on an idle array")
    workload_dict = workload.to_dict() if workload is not None else {"jobs": [], "source": {"tool": "idle", "text": ""}}
    return {
        "seed": int(seed),
        "array": {"level": str(level), "layout": layout, "devices": int(devices),
                  "chunk_kib": int(chunk_kib if chunk_kib is not None else DEFAULT_CHUNK_KIB)},
        "failed": [int(m) for m in failed],
        "drive": load_drive(drive),
        "controller": {"kind": controller, "stripe_cache_entries": int(stripe_cache_size),
                       "rmw_level": int(rmw_level), "cache_mib": int(cache_mib), "bbu": bool(bbu),
                       "read_ahead": bool(read_ahead)},
        "scheduler": scheduler,
        "nr_requests": int(nr_requests),
        "max_sectors_kb": int(max_sectors_kb),
        "workload": workload_dict,
        "max_time_s": float(max_time_s),
        "max_events": int(max_events),
        "timeline": sorted(timeline, key=lambda e: e["at_s"]),
        "rebuild": {"speed_limit_min_kib_s": int(speed_limit_min), "speed_limit_max_kib_s": int(speed_limit_max),
                    "hot_spare": bool(spare), "hw_priority_pct": int(rebuild_priority_pct)},
    }


def run_config(config: Dict[str, Any], workload: Optional[Workload],
               progress: Optional[Callable[[int, int], None]] = None) -> SimResult:
    """Runs a core configuration in steps, calling ``progress(now_ns, stop_ns)`` between them."""
    if config["controller"]["kind"] not in ("md", "hw"):
        raise ConfigError(f"unknown controller '{config['controller']['kind']}': expected md or hw")
    simulation = _core.CoreSimulation(config)
    stop = simulation.stop_ns
    target = 0
    while not simulation.finished:
        target = min(target + PROGRESS_STEP_NS, stop) if stop < 2**63 else target + PROGRESS_STEP_NS
        simulation.run_until(target)
        if progress is not None:
            progress(simulation.now_ns, stop)
        if target >= stop:
            break
    return SimResult(raw=simulation.result(), config=config, workload=workload)


def simulate(*, level: Union[int, str] = 5, devices: int = 6, layout: Optional[str] = None,
             chunk_kib: Optional[int] = None, drive: Union[str, Path, Dict[str, Any]] = "cheetah-10k7",
             controller: str = "md", cache_mib: int = 256, bbu: bool = True, read_ahead: bool = False,
             stripe_cache_size: int = DEFAULT_STRIPE_CACHE, rmw_level: int = 1,
             scheduler: str = "mq-deadline", nr_requests: int = DEFAULT_NR_REQUESTS,
             max_sectors_kb: int = DEFAULT_MAX_SECTORS_KB, failed: Sequence[int] = (),
             fio: Optional[str] = None, sysbench: Optional[str] = None, preset: Optional[str] = None,
             workload: Optional[Workload] = None, runtime_s: Optional[float] = None, seed: int = 1,
             max_time_s: float = DEFAULT_MAX_TIME_S, max_events: int = DEFAULT_MAX_EVENTS,
             progress: Optional[Callable[[int, int], None]] = None) -> SimResult:
    """Simulates one array under one workload and returns a :class:`SimResult`.

    ``runtime_s`` overrides the workload's own run time (handy for presets in tests).
    """
    chosen = resolve_workload(fio, sysbench, preset, workload)
    if runtime_s is not None:
        chosen = chosen.with_runtime_ns(int(runtime_s * 1e9))
    config = build_config(level=level, devices=devices, layout=layout, chunk_kib=chunk_kib,
                          drive=drive, controller=controller, cache_mib=cache_mib, bbu=bbu,
                          read_ahead=read_ahead, stripe_cache_size=stripe_cache_size,
                          rmw_level=rmw_level, scheduler=scheduler, nr_requests=nr_requests,
                          max_sectors_kb=max_sectors_kb, failed=failed, workload=chosen, seed=seed,
                          max_time_s=max_time_s, max_events=max_events)
    return run_config(config, chosen, progress)
