"""Workloads: fio job files, sysbench fileio options and named presets, read into one spec.

>>> from raidlab.workload import parse_fio, parse_sysbench, preset
>>> preset("oltp-innodb").describe()
'randrw 70/30, 16 KiB, 16 threads × QD1, direct, for 60 s'
>>> parse_sysbench("--file-test-mode=rndrw --threads=16").jobs[0].read_fraction
0.6

Every front end returns a :class:`Workload`; :meth:`Workload.to_dict` is the plain-data shape
the Rust core reads (documented in :mod:`raidlab.workload.spec`). Bad input raises
:class:`WorkloadError` (a ``ValueError``) with a one-line message. This package is pure Python
and does not import the native extension.
"""

from raidlab.workload.fio import parse_fio, render_fio
from raidlab.workload.presets import PRESETS, preset, preset_fio_text
from raidlab.workload.spec import Distribution, Job, Workload, WorkloadError
from raidlab.workload.sysbench import parse_sysbench

__all__ = [
    "Distribution",
    "Job",
    "PRESETS",
    "Workload",
    "WorkloadError",
    "parse_fio",
    "parse_sysbench",
    "preset",
    "preset_fio_text",
    "render_fio",
]
