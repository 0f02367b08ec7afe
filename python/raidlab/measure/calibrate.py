"""``raidlab calibrate``: sweep one device with fio, fit a drive model, save it as a drive TOML.

The sweep (random 4 KiB–1 MiB reads and writes at depths 1–64, sequential reads and writes),
every point one fio job with ``direct=1`` (so the page cache is not measured),
``time_based`` for ``--runtime-s`` seconds, over the same region, with ``lat_percentiles=1`` so
fio reports percentiles of the total (submission to completion) latency:

- full: random reads and writes of 4k, 16k, 64k, 256k and 1m at depths 1, 4, 16 and 64 (40
  points), sequential reads and writes of 64k and 1m at depths 1 and 8 (8 points), and one
  4k write at depth 1 with ``fdatasync=1`` (the flush cost): 49 points.
- ``--quick`` (for CI): random 4k at depths 1, 8 and 32 and 256k at depth 4, reads and writes;
  sequential 1m reads and writes at depth 4; the fdatasync point: 11 points.

Depths above 1 use libaio (what :func:`raidlab.workload.render_fio` writes for them); depth 1
uses fio's default psync. The fit (:mod:`raidlab.measure.fit`) simulates each point with the
candidate model and reports its error at every point; the chosen model is written as a drive
file that ``raidlab sim --drive FILE.toml`` reads (``kind = "..."`` plus parameters by name;
the provenance and the fit's error are TOML comments at the top).

Safety: the sweep writes, so the target obeys the same rules as ``raidlab measure`` with a
writing workload (:mod:`raidlab.measure.safety`): a new or empty file is fine, an existing
non-empty file or a block device needs ``--destroy-data``, and a mounted or busy device is
refused.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import socket
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from raidlab import _core
from raidlab.errors import ConfigError
from raidlab.measure import fit as fitting
from raidlab.measure import measurement, safety
from raidlab.measure.fit import Fit, Observation, Point
from raidlab.report.table import render
from raidlab.workload import Workload
from raidlab.units import human_bytes

__all__ = ["Calibration", "calibrate", "sweep_points", "run_sweep", "from_observations",
           "drive_capacity", "DEFAULT_SPAN_BYTES"]

KIB = 1024
MIB = 1024 * KIB
#: Region of a new file when --size is not given.
DEFAULT_SPAN_BYTES = 1 << 30
#: Largest drive capacity --capacity-tb accepts (decimal TB, as drives are sold).
MAX_CAPACITY_TB = 1000.0
TB = 10**12


def sweep_points(quick: bool) -> List[Point]:
    """The sweep, in the order it runs (see the module docstring)."""
    if quick:
        rand = [(4 * KIB, 1), (4 * KIB, 8), (4 * KIB, 32), (256 * KIB, 4)]
        points = [Point(rw, bs, qd) for rw in ("randread", "randwrite") for bs, qd in rand]
        points += [Point("read", MIB, 4), Point("write", MIB, 4)]
    else:
        sizes = (4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, MIB)
        points = [Point(rw, bs, qd) for rw in ("randread", "randwrite") for bs in sizes for qd in (1, 4, 16, 64)]
        points += [Point(rw, bs, qd) for rw in ("read", "write") for bs in (64 * KIB, MIB) for qd in (1, 8)]
    points.append(Point("write", 4 * KIB, 1, fdatasync=1))
    return points


@dataclass
class Calibration:
    """A sweep, every candidate fit, and the chosen model."""

    target: str
    target_kind: str
    span_bytes: int
    runtime_s: float
    tool_version: str
    hostname: str
    timestamp: str
    observations: List[Observation]
    fits: Dict[str, Fit]
    chosen: Fit
    notes: List[str] = field(default_factory=list)
    #: The drive's capacity (written as the model's capacity_bytes) and where it came from.
    capacity_bytes: int = 0
    capacity_source: str = ""

    def drive(self) -> Dict[str, Any]:
        """The drive choice ``raidlab.simulate(drive=...)`` takes."""
        return {"kind": self.chosen.kind, "params": dict(self.chosen.params)}

    def to_dict(self) -> Dict[str, Any]:
        return {
            "target": self.target, "target_kind": self.target_kind, "span_bytes": self.span_bytes,
            "capacity_bytes": self.capacity_bytes, "capacity_source": self.capacity_source,
            "runtime_s_per_point": self.runtime_s, "tool": "fio", "tool_version": self.tool_version,
            "hostname": self.hostname, "timestamp": self.timestamp, "raidlab_version": _core.__version__,
            "raidlab": {"command": "calibrate", "version": _core.__version__},
            "sweep": [o.to_dict() for o in self.observations],
            "model": self.chosen.kind, "params": self.chosen.params,
            "fit_error": {"mean_abs_pct": self.chosen.mean_abs_pct, "max_abs_pct": self.chosen.max_abs_pct,
                          "rms_log": self.chosen.rms_log},
            "candidates": {kind: f.to_dict() for kind, f in self.fits.items()},
            "notes": self.notes + self.chosen.notes,
        }

    def table(self) -> str:
        """Each sweep point: what fio measured and what the chosen model predicts."""
        rows = []
        for o, predicted, error in zip(self.chosen_observations, self.chosen.predicted_iops,
                                       self.chosen.errors_pct):
            rows.append([o.point.name, f"{o.iops:.0f}", f"{o.bw_bytes / MIB:.1f}", f"{o.lat_mean_ns / 1e6:.3f}",
                         f"{predicted:.0f}", f"{error:+.1f}"])
        return render(["point", "IOPS", "MiB/s", "lat ms", f"{self.chosen.kind} IOPS", "error %"], rows)

    @property
    def chosen_observations(self) -> List[Observation]:
        return [o for o in self.observations if o.iops > 0]

    def summary(self) -> str:
        lines = [self.table(), ""]
        lines.append(f"model: {self.chosen.kind}; fit error on the sweep (IOPS): mean "
                     f"{self.chosen.mean_abs_pct:.1f} %, max {self.chosen.max_abs_pct:.1f} %")
        others = [f"{k} {f.mean_abs_pct:.1f} %" for k, f in self.fits.items()
                  if k != self.chosen.kind and math.isfinite(f.mean_abs_pct)]
        if others:
            lines.append("other candidates (mean error): " + ", ".join(others))
        for note in self.notes + self.chosen.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)

    def to_toml(self) -> str:
        """The drive file: provenance and fit error as comments, then kind and parameters."""
        head = [
            f"# raidlab drive model fitted by 'raidlab calibrate' (raidlab {_core.__version__}, {self.tool_version})",
            f"# target: {self.target} ({self.target_kind}) on {self.hostname}, {self.timestamp}",
            f"# sweep: {len(self.observations)} points of {self.runtime_s:g} s over "
            f"{human_bytes(self.span_bytes)}, O_DIRECT",
            f"# capacity: {human_bytes(self.capacity_bytes)} ({self.capacity_source})",
            f"# fit error on the sweep (IOPS): mean {self.chosen.mean_abs_pct:.1f} %, max "
            f"{self.chosen.max_abs_pct:.1f} %, rms ln {self.chosen.rms_log:.4f}",
        ]
        for o, predicted, error in zip(self.chosen_observations, self.chosen.predicted_iops,
                                       self.chosen.errors_pct):
            head.append(f"#   {o.point.name}: measured {o.iops:.0f} IOPS, model {predicted:.0f} ({error:+.1f} %)")
        for kind, candidate in self.fits.items():
            if kind != self.chosen.kind:
                shown = f"{candidate.mean_abs_pct:.1f} %" if math.isfinite(candidate.mean_abs_pct) else "no fit"
                head.append(f"# candidate {kind}: mean error {shown}")
        for note in self.notes + self.chosen.notes:
            head.append(f"# note: {note}")
        body = [f'kind = "{self.chosen.kind}"']
        for name in sorted(self.chosen.params):
            body.append(f"{name} = {_number(self.chosen.params[name])}")
        return "\n".join(head + [""] + body) + "\n"


def _number(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e18:
        return str(int(value))
    return repr(float(value))


def _span(target: safety.Target, size_bytes: Optional[int]) -> int:
    if target.kind == "block":
        span = size_bytes or target.size_bytes
        if target.size_bytes and span > target.size_bytes:
            raise ConfigError(f"--size {human_bytes(span)} is larger than {target.path} "
                              f"({human_bytes(target.size_bytes)})")
    elif target.kind == "file" and target.size_bytes > 0:
        span = size_bytes or target.size_bytes // 512 * 512
    elif target.kind in ("file", "missing"):
        span = size_bytes or DEFAULT_SPAN_BYTES
    else:
        raise ConfigError(f"calibrate needs a file or a block device; {target.path} is a {target.describe()}")
    if span < 16 * MIB:
        raise ConfigError(f"the calibrated region ({human_bytes(span)}) must be at least 16 MiB")
    return span


def _whole_disk_bytes(target: safety.Target) -> Optional[int]:
    """For a partition, the size of the disk holding it (sysfs ``size`` is in 512-byte units,
    block/partitions/core.c); None for a whole disk or when sysfs does not say."""
    base = safety._sys_dir(target.device) if target.device else None
    if base is None or not (base / "partition").is_file():
        return None
    try:
        return int((base.parent / "size").read_text().strip()) * 512
    except (OSError, ValueError):
        return None


def drive_capacity(target: safety.Target, capacity_tb: Optional[float], span: int) -> Tuple[int, str]:
    """The capacity of the drive being calibrated, in bytes, and where it came from.

    --capacity-tb when given; else a block device's own size (for a partition, its disk's);
    a regular file's size is only the test region, never a drive's capacity, so a file target
    needs --capacity-tb.
    """
    if capacity_tb is not None:
        if not (math.isfinite(capacity_tb) and 0 < capacity_tb <= MAX_CAPACITY_TB):
            raise ConfigError(f"--capacity-tb {capacity_tb}: the drive's capacity in decimal TB, "
                              f"more than 0 and at most {MAX_CAPACITY_TB:g}")
        capacity = int(round(capacity_tb * TB)) // 512 * 512
        if capacity < span:
            raise ConfigError(f"--capacity-tb {capacity_tb:g} ({human_bytes(capacity)}) is smaller than the "
                              f"swept region ({human_bytes(span)})")
        return capacity, "given with --capacity-tb"
    if target.kind == "block" and target.size_bytes > 0:
        disk = _whole_disk_bytes(target)
        if disk:
            return disk, f"the disk holding partition {target.path}"
        return target.size_bytes, f"the size of block device {target.path}"
    what = "a regular file" if target.kind == "file" else "a new file"
    raise ConfigError(f"--target {target.path} is {what}: its size is not a drive's capacity; give the "
                      f"capacity of the drive it is on with --capacity-tb (e.g. 0.96 for a 960 GB drive)")


def _with_capacity(chosen: Fit, capacity: int, span: int) -> Tuple[Fit, List[str]]:
    """The chosen fit with the drive's capacity as its capacity_bytes (the fit itself simulated
    the swept region as the whole drive), and a note when the region was only part of it."""
    notes = []
    if capacity > span and chosen.kind == "hdd":
        notes.append(f"the sweep covered {human_bytes(span)} of a {human_bytes(capacity)} drive: the "
                     f"fitted seek times describe that region (sweep more with --size for full-stroke seeks)")
    params = dict(chosen.params, capacity_bytes=float(capacity))
    return dataclasses.replace(chosen, params=params), notes


def run_sweep(target_path: str, points: Sequence[Point], span: int, runtime_s: float, *,
              destroy_data: bool = False, fio_binary: Optional[str] = None,
              progress: Optional[Callable[[float], None]] = None,
              on_point: Optional[Callable[[int, int, Observation], None]] = None):
    """Runs every point with fio; returns (observations, fio version, target)."""
    target = safety.inspect(target_path)
    safety.check_writes(target, True, destroy_data)
    observations: List[Observation] = []
    version = ""
    for index, point in enumerate(points):
        workload = Workload((point.job(int(runtime_s * 1e6) * 1000),), "fio", "")

        def step(fraction: float, index: int = index) -> None:
            if progress is not None:
                progress((index + fraction) / len(points))

        # The user agreed to writes above (or the file is new/empty, or created by the first
        # point); every point runs over exactly the calibrated span.
        prepared = measurement.prepare(target_path, workload, size=span, destroy_data=True,
                                       extra_global=["lat_percentiles=1"])
        result = measurement.run_prepared(prepared, fio_binary=fio_binary, progress=step)
        version = result.document["raidlab"].get("tool_version", version)
        observation = Observation.from_document(point, result.document)
        observations.append(observation)
        if on_point is not None:
            on_point(index, len(points), observation)
    return observations, version, target


def from_observations(observations: Sequence[Observation], span: int, *, model: str = "auto",
                      max_evals: int = 60, target: str = "", target_kind: str = "",
                      runtime_s: float = 0.0, tool_version: str = "",
                      on_fit: Optional[Callable[[str], None]] = None,
                      capacity: Optional[Tuple[int, str]] = None) -> Calibration:
    """Fits the model(s) to a finished sweep (also used with simulated sweeps in tests).
    ``capacity`` is the drive's (bytes, source) from :func:`drive_capacity`; without it the
    model keeps the swept region as its capacity."""
    kinds = fitting.MODELS if model == "auto" else (model,)
    if model != "auto" and model not in fitting.MODELS:
        raise ConfigError(f"unknown model '{model}': expected auto, {', '.join(fitting.MODELS)}")
    fits = fitting.fit_all(observations, span, kinds, max_evals, on_fit)
    chosen = fitting.choose(fits) if model == "auto" else fits[model]
    if not chosen.params:
        raise ConfigError(f"the {chosen.kind} model does not fit this device: {'; '.join(chosen.notes)}")
    capacity_bytes, source = capacity if capacity is not None else (span, "the swept region")
    chosen, notes = _with_capacity(chosen, capacity_bytes, span)
    fits = dict(fits, **{chosen.kind: chosen})
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return Calibration(target, target_kind, span, runtime_s, tool_version, socket.gethostname(), stamp,
                       list(observations), fits, chosen, notes, capacity_bytes, source)


def calibrate(target: str, *, size: Any = None, quick: bool = False, runtime_s: Optional[float] = None,
              destroy_data: bool = False, fio_binary: Optional[str] = None, model: str = "auto",
              max_evals: Optional[int] = None, progress: Optional[Callable[[float], None]] = None,
              on_point: Optional[Callable[[int, int, Observation], None]] = None,
              on_fit: Optional[Callable[[str], None]] = None,
              capacity_tb: Optional[float] = None) -> Calibration:
    """Sweeps ``target`` with fio and fits a drive model (see the module docstring). The model's
    capacity is ``capacity_tb`` or the block device's size (:func:`drive_capacity`)."""
    if model != "auto" and model not in fitting.MODELS:
        raise ConfigError(f"unknown model '{model}': expected auto, {', '.join(fitting.MODELS)}")
    size_bytes = measurement.parse_size(size)
    seen = safety.inspect(target)
    safety.check_writes(seen, True, destroy_data)
    span = _span(seen, size_bytes)
    if seen.kind == "file" and seen.size_bytes and span > seen.size_bytes and not destroy_data:
        raise ConfigError(f"--size is larger than {target}; fio would lay it out again (add --destroy-data)")
    capacity = drive_capacity(seen, capacity_tb, span)
    seconds = runtime_s if runtime_s is not None else (1.0 if quick else 3.0)
    points = sweep_points(quick)
    observations, version, _ = run_sweep(target, points, span, seconds, destroy_data=destroy_data,
                                         fio_binary=fio_binary, progress=progress, on_point=on_point)
    evals = max_evals if max_evals is not None else (40 if quick else 80)
    return from_observations(observations, span, model=model, max_evals=evals, target=target,
                             target_kind=seen.describe(), runtime_s=seconds, tool_version=version,
                             on_fit=on_fit, capacity=capacity)
