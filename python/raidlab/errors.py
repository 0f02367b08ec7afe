"""raidlab's exceptions.

Every error raidlab raises for input it cannot honour is a :class:`RaidlabError`; there is one
subclass per kind of problem. The classes are defined in the Rust extension (``raidlab._core``),
so errors from the core and from the Python layer are the same classes.

- :class:`ArrayError`: an array md would refuse (level, device count, chunk, member sizes).
- :class:`LayoutError`: a layout unknown or invalid for the level.
- :class:`RequestError`: a request outside the array or otherwise malformed.
- :class:`DataLossError`: a failure set the layout cannot survive.
- :class:`DeviceError`: a drive model or preset that cannot be built.
- :class:`WorkloadError`: a workload that cannot be run.
- :class:`ConfigError`: a simulation configuration that cannot be run.

The Rust glue maps each core ``ErrorKind`` to exactly one of these
(``crates/raidlab-py/src/errors.rs``).
"""

from raidlab._core import (
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
    "RaidlabError",
    "ArrayError",
    "LayoutError",
    "RequestError",
    "DataLossError",
    "DeviceError",
    "WorkloadError",
    "ConfigError",
]
