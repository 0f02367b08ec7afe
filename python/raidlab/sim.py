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

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

from raidlab import _core, frames, notes
from raidlab.array import MAX_DEVICES
from raidlab.drives import load_drive
from raidlab.errors import ConfigError
from raidlab.numeric import real_text, whole_text
from raidlab.report import fio_json
from raidlab.report.describe import run_label
from raidlab.report.rows import job_rows
from raidlab.run import FIO_FORMS, IDLE, RunSpec, build_run, check_timeline_played, fio_workload, resolve_workload
from raidlab.stacked import core_simulation
from raidlab.workload import Workload

#: Re-exported: where commands and the sweep have always found them.
__all__ = ["FIO_FORMS", "IDLE", "SimResult", "fio_workload", "load_drive", "parse_events", "parse_seconds",
           "resolve_workload", "run_config", "run_spec", "simulate"]

#: Simulated seconds per progress step.
PROGRESS_STEP_NS = 250_000_000


def parse_events(specs: Sequence[str], action: str) -> List[Dict[str, Any]]:
    """``K@T`` entries (member K at time T, e.g. ``2@30s``, ``1@1.5m``, ``0@500ms``)."""
    events = []
    option = action.replace("_", "-")  # latent_error is --latent-error
    for spec in specs:
        member, _, when = spec.partition("@")
        index = whole_text(member)
        if index is None or index < 0 or not when:
            raise ConfigError(f"--{option} {spec!r}: expected MEMBER@TIME, e.g. 2@30s")
        if index >= MAX_DEVICES:
            raise ConfigError(f"--{option} {spec!r}: member {index} does not exist "
                              f"(an array has at most {MAX_DEVICES} members)")
        events.append({"action": action, "member": index, "at_s": parse_seconds(when, action)})
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
    parsed = real_text(number)
    if parsed is None:
        raise ConfigError(f"--{option}: {text!r} is not a time (e.g. 30s, 1.5m, 500ms)")
    seconds = parsed * scale
    if not 0 <= seconds <= 1e7:
        raise ConfigError(f"--{option}: {text!r} is out of range")
    return seconds


@dataclass
class SimResult:
    """A finished run: the core's measurements plus the configuration that produced them."""

    raw: Dict[str, Any]
    config: Dict[str, Any]
    workload: Optional[Workload]
    #: What the user should know about this run (see :mod:`raidlab.notes`).
    notes: List[str] = field(default_factory=list)

    def to_dict(self, plus: bool = False, per_job: bool = False, steady: bool = False) -> Dict[str, Any]:
        """fio's JSON shape, with a ``raidlab`` block (version, seed, resolved configuration,
        and the ``headline`` figures every output shows: :mod:`raidlab.report.headline`);
        ``plus`` adds fio's json+ histogram bins, ``per_job`` ignores ``group_reporting``,
        ``steady`` makes the headline the steady state's when the run reaches one."""
        block = {
            "version": _core.__version__,
            "seed": self.raw["seed"],
            "prng": "xoshiro256**/splitmix64",
            "events": self.raw["events"],
            "simulated_ns": self.raw["end_ns"],
            "truncated": self.raw["truncated"],
            "notes": list(self.notes),
            "config": self.config,
        }
        return fio_json.document(self.raw, block, self.workload, plus=plus, per_job=per_job, steady=steady)

    def __repr__(self) -> str:
        """One line: the design, the workload, the headline figures (the ones every output
        shows, with their basis), failed members, seed and version; ``to_dict()`` and the
        DataFrame methods give the rest (the whole result is ~150 KB)."""
        config = self.config
        array, drive = config.get("array") or {}, config.get("drive") or {}
        name = drive.get("preset") or drive.get("name") or "a custom drive"
        layout = f" {array['layout']}" if array.get("layout") else ""
        design = f"raid{array.get('level')}{layout} of {array.get('devices')} {name}, {array.get('chunk_kib')} KiB chunk"
        workload = self.workload.describe() if self.workload is not None else "no workload"
        head = self.to_dict()["raidlab"]["headline"]

        def direction(key: str) -> str:
            d = head.get(key) or {}
            if not d.get("iops"):
                return ""
            return f"{key} {d['iops']:,.0f} IOPS p50 {d['p50_ms']:.3g} ms p99 {d['p99_ms']:.3g} ms"

        figures = "; ".join(part for part in (direction("read"), direction("write")) if part)
        failed = f"; members {config['failed']} failed" if config.get("failed") else ""
        return (f"SimResult({design}; {workload[:200]}; {head['iops']:,.0f} IOPS ({head['basis']})"
                + (f": {figures}" if figures else "") + f"{failed}; seed {self.raw['seed']}; "
                f"raidlab {_core.__version__})")

    __str__ = __repr__

    def to_pandas(self):
        """One row per job and direction: iops, bandwidth and latency percentiles (pandas);
        the rows every output shows (:mod:`raidlab.report.rows`)."""
        import pandas as pd

        columns = ("job", "direction", "iops", "bw_bytes", "latency_ns_mean", "latency_ns_p50", "latency_ns_p99")
        return pd.DataFrame([{key: row[key] for key in columns} for row in job_rows(self.to_dict())])

    # -- the run as DataFrames (raidlab.frames), and as a table in Jupyter ----------------------

    def jobs(self):
        """One row per job and direction: IOPS, MiB/s, latency mean/p50/p99/p99.9/max (ns)."""
        return frames.jobs(self.to_dict())

    def headline(self):
        """The headline figures per direction (IOPS, MiB/s, latency p50/p99 in ns) and their
        ``basis``: what ``raidlab sim`` prints on the ``all jobs`` line, in --json and --html."""
        return frames.headline(self.to_dict())

    def members(self):
        """One row per member: requests, MiB, flushes, util_pct, mean queue depth."""
        return frames.members(self.to_dict())

    def phases(self):
        """One row per array phase (optimal, degraded, rebuilding) and direction."""
        return frames.phases(self.to_dict())

    def timeline(self):
        """The 1 s time series (IOPS, latency p50/p99 in ms, rebuild progress)."""
        return frames.timeline(self.to_dict())

    def percentiles(self):
        """Every latency percentile per job and direction (ns), and over all jobs (job "*")."""
        return frames.percentiles(self.to_dict())

    def _repr_html_(self) -> str:
        document = self.to_dict()
        return frames.repr_html(document, run_label(document))


def run_config(config: Dict[str, Any], workload: Optional[Workload],
               progress: Optional[Callable[[int, int], None]] = None) -> SimResult:
    """Runs a core configuration in steps, calling ``progress(now_ns, stop_ns)`` between them."""
    simulation = core_simulation(config)  # a stack's data loss names its inner array
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


def run_spec(spec: RunSpec, progress: Optional[Callable[[int, int], None]] = None) -> SimResult:
    """Runs a :class:`raidlab.run.RunSpec`; the result carries the run's notes."""
    before = notes.before(spec)
    result = run_config(spec.config(), spec.workload, progress)
    check_timeline_played(spec.options, result.raw)
    result.notes = before + notes.after(spec, result.raw)
    return result


def simulate(*, fio: Optional[str] = None, sysbench: Optional[str] = None, preset: Optional[str] = None,
             workload: Optional[Workload] = None,
             progress: Optional[Callable[[int, int], None]] = None, **settings: Any) -> SimResult:
    """Simulates one array under one workload and returns a :class:`SimResult`.

    ``settings`` are any of :data:`raidlab.run.KNOWN_KEYS` (``level``, ``devices``, ``chunk_kib``,
    ``drive``, ``controller``, ..., ``seed``, ``runtime_s``, ``failed``), with the defaults
    declared in :mod:`raidlab.run`. ``runtime_s`` overrides the workload's own run time
    (handy for presets in tests). Failures as ``raidlab sim`` takes them: ``failed=[0]``,
    ``fail=["1@5s"]``, ``replace=["1@8s"]``, ``latent_error=["1@2s"]`` (or
    ``timeline=`` events), ``spare=True``, ``command_timeout_s``, and the
    speed limits, controller and every other option by its setting name. The result gives
    DataFrames: ``jobs()``, ``members()``, ``phases()``, ``timeline()``, ``percentiles()``.
    """
    if progress is not None and not callable(progress):
        raise ConfigError("simulate(progress=...) must be a callable (or None)")
    # --fail/--replace/--latent-error as raidlab sim takes them (K@T texts), beside timeline= events
    events = [e for action in ("fail", "replace", "latent_error")
              for e in parse_events(_texts(settings.pop(action, ()), action), action)]
    if events:
        settings["timeline"] = list(settings.get("timeline") or ()) + events
    spec = build_run({**settings, "fio": fio, "sysbench": sysbench, "preset": preset},
                     workload=workload)
    return run_spec(spec, progress)


def _texts(value: Any, action: str) -> List[str]:
    """``fail=``/``replace=`` of :func:`simulate`: one ``K@T`` text or a list of them."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) for item in items):
        raise ConfigError(f"{action}={value!r}: expected \"K@T\" or a list of them, e.g. \"2@30s\"")
    return list(items)
