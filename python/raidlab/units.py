"""Byte counts in the binary units sysadmins read (KiB, MiB, GiB, ...).

The formatting lives in the workload package, which stays importable without the rest of
raidlab (`tests/test_workload_fio.py::test_pure_python_without_the_extension`); everything
else takes it from here.
"""

from raidlab.workload.units import human_bytes

__all__ = ["human_bytes"]
