"""The fio job file raidlab runs for a workload on a target.

fio workloads and presets are written back with :func:`raidlab.workload.render_fio`, which
reproduces the spec exactly. sysbench fileio workloads have features fio cannot express
(listed below); raidlab runs the *closest* fio job and lists every difference in the
result's notes (printed on stderr and kept in the JSON), instead of refusing:

- ``--file-num`` files laid end to end → one file (or device region) of the same total size.
  Random offsets are uniform over the whole set in sysbench, so their spread is the same; what
  is lost is the per-file clipping of requests and the per-file fsync calls.
- one sequential cursor shared by all threads → each fio clone (``numjobs``) walks the region
  with its own cursor, so N threads make N interleaved sequential streams instead of one.
- an fsync round over all files every N requests (reads included, all threads) → each thread
  fsyncs after every ``round(N × write share)`` of its own writes, which keeps the number of
  sync points per write; sysbench's round makes ``--file-num`` fsync calls, fio makes one.
- ``--events`` (a cap over all threads) → ``number_ios`` of ``ceil(events / threads)`` per thread.
- a read share that is not a whole percentage (``--file-rw-ratio=2`` is 66.7 % reads) → the
  nearest whole percentage (fio's ``rwmixread`` is an integer).

The target goes into ``[global]`` (``filename=``, absolute, with ``:`` escaped as ``\\:`` — fio
treats a bare colon as a separator between files; HOWTO ``filename``; a name fio would read as
another is refused, :mod:`raidlab.measure.fio_target`), with ``group_reporting`` so each
job reports once whatever its ``numjobs``, and ``new_group`` on every job after the first so
that jobs still report separately (fio puts all jobs of a file in group 0 unless told).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

from raidlab.measure import fio_target
from raidlab.workload import Job, Workload, render_fio

__all__ = ["adapt_for_fio", "job_file", "escape_filename"]


def escape_filename(path: str) -> str:
    """The ``filename=`` value fio opens ``path`` by (absolute, ``:`` escaped as ``\\:``), or
    :class:`ConfigError` for a name fio would read as another (:mod:`raidlab.measure.fio_target`)."""
    return fio_target.resolve(path).value


def _adapt_job(job: Job) -> Tuple[Job, List[str]]:
    notes: List[str] = []
    changes = {}
    name = job.name
    if job.files > 1:
        changes["files"] = 1
        notes.append(f"{name}: {job.files} files laid end to end are run as one region of the same size")
    if job.sequential_cursor == "shared":
        changes["sequential_cursor"] = "per_thread"
        if job.threads > 1 and job.random_fraction < 1:
            notes.append(f"{name}: sysbench's one shared sequential cursor becomes {job.threads} "
                         "cursors, one per fio clone")
    read_fraction = job.read_fraction
    percent = round(read_fraction * 100)
    if percent / 100 != read_fraction:
        changes["read_fraction"] = percent / 100
        notes.append(f"{name}: read share {read_fraction:.4f} rounded to {percent}% (fio's rwmixread is whole)")
        read_fraction = percent / 100
    random_percent = round(job.random_fraction * 100)
    if random_percent / 100 != job.random_fraction:
        changes["random_fraction"] = random_percent / 100
        notes.append(f"{name}: random share rounded to {random_percent}%")
    if job.fsync_every and job.fsync_scope == "all_files":
        changes["fsync_scope"] = "thread"
        writes = 1.0 - read_fraction
        if writes <= 0:
            changes["fsync_every"] = 0
        else:
            every = max(1, int(round(job.fsync_every * writes)))
            changes["fsync_every"] = every
            notes.append(
                f"{name}: an {job.fsync_kind} round over all files every {job.fsync_every} requests "
                f"becomes one {job.fsync_kind} per thread every {every} writes"
            )
    if job.total_ios:
        per_thread = math.ceil(job.total_ios / job.threads)
        changes["total_ios"] = 0
        changes["number_ios"] = min(job.number_ios or per_thread, per_thread)
        notes.append(f"{name}: {job.total_ios} events over all threads becomes {per_thread} I/Os per thread")
    return (replace(job, **changes) if changes else job), notes


def adapt_for_fio(workload: Workload) -> Tuple[Workload, List[str]]:
    """The workload fio will run (equal to ``workload`` unless it is not expressible)."""
    jobs, notes = [], []
    for job in workload.jobs:
        adapted, job_notes = _adapt_job(job)
        jobs.append(adapted)
        notes.extend(job_notes)
    if not notes:
        return workload, []
    return Workload(tuple(jobs), workload.tool, workload.text, workload.notes), notes


def job_file(workload: Workload, target_path: str, size_bytes: Optional[int],
             extra_global: Sequence[str] = ()) -> str:
    """A complete fio job file for an fio-expressible ``workload`` (see :func:`adapt_for_fio`).

    ``size_bytes`` (when given) is the region of every job that sets none of its own.
    """
    lines = ["[global]", f"filename={escape_filename(target_path)}"]
    if size_bytes:
        lines.append(f"size={size_bytes}")
    lines.append("group_reporting=1")
    lines.extend(extra_global)
    blocks = ["\n".join(lines)]
    for index, job in enumerate(workload.jobs):
        text = render_fio(Workload((job,), workload.tool, workload.text)).rstrip("\n")
        if index:
            header, _, rest = text.partition("\n")
            text = f"{header}\nnew_group\n{rest}"
        blocks.append(text)
    return "\n\n".join(blocks) + "\n"
