"""raidlab: model Linux md RAID arrays exactly.

>>> import raidlab
>>> array = raidlab.Array(level=5, devices=4, chunk_kib=64, member_kib=6144)
>>> array.layout, array.capacity_bytes, array.io_opt_bytes
('left-symmetric', 18874368, 196608)
>>> [column[:2] for column in array.map_table(rows=2)]
[[0, 4], [1, 5], [2, 'P'], ['P', 3]]

Errors are :class:`RaidlabError` subclasses (see :mod:`raidlab.errors`).
"""

from raidlab._core import __version__
from raidlab.array import DEFAULT_CHUNK_KIB, DEFAULT_MEMBER_KIB, MAX_DEVICES, Array
from raidlab.sim import SimResult, simulate
# issue 23: sweeps and the rest of the Python API
from raidlab.sweep import load_sweep, sweep
from raidlab import planner, reliability
from raidlab.errors import (
    ArrayError,
    ConfigError,
    DataLossError,
    DeviceError,
    LayoutError,
    RaidlabError,
    RequestError,
    WorkloadError,
)

__all__ = [
    "Array",
    "SimResult",
    "simulate",
    "DEFAULT_CHUNK_KIB",
    "DEFAULT_MEMBER_KIB",
    "MAX_DEVICES",
    "RaidlabError",
    "ArrayError",
    "LayoutError",
    "RequestError",
    "DataLossError",
    "DeviceError",
    "WorkloadError",
    "ConfigError",
    "__version__",
    "sweep",
    "load_sweep",
    "planner",
    "reliability",
]
