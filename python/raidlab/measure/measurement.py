"""``raidlab.measure.measure(...)``: one raidlab workload run by the real fio on a real target.

>>> from raidlab.measure import measure                                   # doctest: +SKIP
>>> run = measure("/tmp/x.dat", preset="oltp-postgres", size="256M", runtime_s=2)
>>> run.document["jobs"][0]["read"]["iops"]                              # doctest: +SKIP

Steps: resolve the workload (fio job / sysbench options / preset, as ``raidlab sim``), look at
the target and refuse what would destroy data (:mod:`raidlab.measure.safety`), write the fio job
(:mod:`raidlab.measure.jobfile`), run fio (:mod:`raidlab.measure.runner`) and load its JSON into
raidlab's document (:mod:`raidlab.measure.importer`) with a ``raidlab`` block whose ``source``
is ``"measured"``.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from raidlab import _core
from raidlab.errors import ConfigError
from raidlab.measure import importer, jobfile, runner, safety
from raidlab.sim import resolve_workload
from raidlab.workload import Workload

__all__ = ["Measurement", "measure", "parse_size", "DEFAULT_NEW_FILE_BYTES", "prepare"]

#: Region of a new file when neither the workload nor --size gives one.
DEFAULT_NEW_FILE_BYTES = 1 << 30

_SIZE = re.compile(r"([0-9]{1,18})\s*([kmgtKMGT]?)(i?[bB])?")


def parse_size(text: Union[str, int, None], what: str = "--size") -> Optional[int]:
    """``1G``, ``256M``, ``512MiB``, ``4096``: bytes, K/M/G/T always powers of 1024.

    (Unlike fio's compatibility mode, where ``1GiB`` means 10^9: raidlab's own options read
    every spelling the way sysadmins do.) The result is a whole number of 512-byte sectors.
    """
    if text is None:
        return None
    if isinstance(text, int) and not isinstance(text, bool):
        number = text
    else:
        match = _SIZE.fullmatch(str(text).strip())
        if match is None:
            raise ConfigError(f"{what} {text!r} is not a size (examples: 4096, 256M, 1G, 2TiB)")
        digits, unit, _ = match.groups()
        number = int(digits) * 1024 ** ("KMGT".index(unit.upper()) + 1 if unit else 0)
    if number <= 0 or number % 512:
        raise ConfigError(f"{what} {text} must be a positive multiple of 512 bytes")
    return number


@dataclass
class Measurement:
    """A finished measurement."""

    document: Dict[str, Any]
    job_text: str
    workload: Workload
    notes: List[str] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return self.document


@dataclass
class Prepared:
    """Everything decided before fio runs (what ``--show-job`` prints)."""

    target: safety.Target
    workload: Workload
    job_text: str
    notes: List[str]
    expected_s: float


def prepare(target_path: str, workload: Workload, *, size: Union[str, int, None] = None,
            runtime_s: Optional[float] = None, destroy_data: bool = False,
            extra_global: Sequence[str] = ()) -> Prepared:
    """Checks the target and writes the job file; raises ConfigError on a refusal."""
    size_bytes = parse_size(size)
    if runtime_s is not None:
        workload = workload.with_runtime_ns(int(round(runtime_s * 1e6)) * 1000)
    adapted, notes = jobfile.adapt_for_fio(workload)
    notes = list(workload.notes) + notes
    target = safety.inspect(target_path)
    safety.check_writes(target, safety.workload_writes(adapted), destroy_data)
    region, region_notes = safety.region_for(target, adapted, size_bytes, destroy_data, DEFAULT_NEW_FILE_BYTES)
    notes += region_notes
    if size_bytes is not None and region is not None:
        # --size is every job's region (capped at an existing file's size by region_for).
        adapted = replace(adapted, jobs=tuple(replace(job, size_bytes=region) for job in adapted.jobs))
    for job in adapted.jobs:
        largest = max(size for size, _ in job.block_sizes)
        effective = job.size_bytes or region or 0
        if effective and effective - job.offset_bytes < largest:
            raise ConfigError(f"job {job.name!r}: the region ({effective} bytes from offset "
                              f"{job.offset_bytes}) is smaller than its block size {largest}")
    safety.check_region(target, adapted, region, destroy_data)
    text = jobfile.job_file(adapted, target_path, region, extra_global)
    expected = max((job.ramp_ns + job.runtime_ns) / 1e9 for job in adapted.jobs)
    return Prepared(target, adapted, text, notes, expected)


def measure(target: str, *, fio: Optional[str] = None, sysbench: Optional[str] = None,
            preset: Optional[str] = None, workload: Optional[Workload] = None,
            size: Union[str, int, None] = None, runtime_s: Optional[float] = None,
            destroy_data: bool = False, fio_binary: Optional[str] = None,
            progress: Optional[Callable[[float], None]] = None,
            keep_json: Optional[str] = None, command: Optional[List[str]] = None) -> Measurement:
    """Runs one workload with fio on ``target`` and returns the measured document."""
    chosen = resolve_workload(fio, sysbench, preset, workload)
    prepared = prepare(target, chosen, size=size, runtime_s=runtime_s, destroy_data=destroy_data)
    return run_prepared(prepared, fio_binary=fio_binary, progress=progress, keep_json=keep_json,
                        command=command)


def run_prepared(prepared: Prepared, *, fio_binary: Optional[str] = None,
                 progress: Optional[Callable[[float], None]] = None,
                 keep_json: Optional[str] = None, command: Optional[List[str]] = None) -> Measurement:
    """Runs a :class:`Prepared` measurement."""
    run = runner.run_fio(prepared.job_text, prepared.target.path, binary=fio_binary,
                         expected_s=prepared.expected_s, progress=progress, keep_json=keep_json)
    block = {
        "source": "measured",
        "tool": "fio",
        "tool_version": run.version,
        "version": _core.__version__,
        "target": prepared.target.path,
        "target_kind": prepared.target.describe(),
        "hostname": socket.gethostname(),
        "timestamp": run.raw.get("timestamp"),
        "wall_s": round(run.wall_s, 3),
        "job_file": prepared.job_text,
        "workload": prepared.workload.to_dict(),
        "notes": list(prepared.notes),
        "command": command,
    }
    document = importer.to_document(run.raw, block)
    return Measurement(document, prepared.job_text, prepared.workload, list(prepared.notes), run.raw)
