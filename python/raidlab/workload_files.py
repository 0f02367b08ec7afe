"""Reading a workload file a user names: a fio job file, through the one reader of raidlab.inputs.

:mod:`raidlab.workload` reads text only and imports nothing of raidlab outside itself (it works
without the native extension); reading a file (regular files only, capped in size, strict UTF-8)
is :mod:`raidlab.inputs`' job, so the two meet here, one layer above both.
"""

from __future__ import annotations

import os
from typing import Union

from raidlab.inputs import read_bytes, show_path
from raidlab.workload import Workload, WorkloadError, parse_fio
from raidlab.workload.units import decode_utf8

__all__ = ["parse_fio_file"]


def parse_fio_file(path: Union[str, "os.PathLike[str]"]) -> Workload:
    """Reads the fio job file at ``path`` (see :func:`raidlab.workload.parse_fio`)."""
    data = read_bytes(path, "fio job file", WorkloadError)
    return parse_fio(decode_utf8(data, f"fio job file {show_path(path)}", WorkloadError))
