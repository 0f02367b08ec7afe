"""raidlab: model Linux md RAID arrays exactly.

>>> import raidlab
>>> array = raidlab.Array(level=5, devices=4, chunk_kib=64, member_kib=6144)
>>> array.layout, array.capacity_bytes, array.io_opt_bytes
('left-symmetric', 18874368, 196608)
>>> [column[:2] for column in array.map_table(rows=2)]
[[0, 4], [1, 5], [2, 'P'], ['P', 3]]

Errors are :class:`RaidlabError` subclasses (see :mod:`raidlab.errors`).

``import raidlab`` imports only the extension; every other name here (the classes, functions and
submodules listed in ``__all__`` and ``dir(raidlab)``) is imported the first time it is used
(PEP 562 ``__getattr__``), so no module of the package imports this one back half-built.
"""

import importlib as _importlib
import sys as _sys
import types as _types

# The exception classes are defined by the extension (see raidlab.errors).
from raidlab._core import (
    ArrayError,
    ConfigError,
    DataLossError,
    DeviceError,
    LayoutError,
    RaidlabError,
    RequestError,
    WorkloadError,
    __version__,
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

#: Each exported name and the module that defines it.
_EXPORTS = {
    "Array": "raidlab.array",
    "DEFAULT_CHUNK_KIB": "raidlab.array",
    "DEFAULT_MEMBER_KIB": "raidlab.array",
    "MAX_DEVICES": "raidlab.array",
    "SimResult": "raidlab.sim",
    "simulate": "raidlab.sim",
    "load_sweep": "raidlab.sweep",
}

#: Submodules reachable as attributes of the package without importing them first (those an
#: ``import raidlab`` used to load).
_SUBMODULES = ("array", "commands", "controllers", "drives", "errors", "hosts", "inputs", "layout",
               "outputs", "planner", "rebuild", "reliability", "report", "run", "schema", "sim",
               "stacked", "units", "workload")


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(_importlib.import_module(_EXPORTS[name]), name)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS) | set(_SUBMODULES) | {"sweep"})


class _Package(_types.ModuleType):
    """The package's module type, for one name: ``raidlab.sweep`` is the function
    :func:`raidlab.sweep.sweep`, not the package of the same name. Loading the package
    ``raidlab.sweep`` makes the import system set that attribute to the package; the assignment
    of a module is ignored here (any other value replaces the function, as on a plain module)."""

    @property
    def sweep(self):
        replaced = self.__dict__.get("_sweep")
        return replaced if replaced is not None else _importlib.import_module("raidlab.sweep").sweep

    @sweep.setter
    def sweep(self, value):
        if not isinstance(value, _types.ModuleType):
            self.__dict__["_sweep"] = value


_sys.modules[__name__].__class__ = _Package
