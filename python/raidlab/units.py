"""Byte counts in the binary units sysadmins read (KiB, MiB, GiB, ...), and probabilities.

The byte formatting lives in the workload package, which stays importable without the rest of
raidlab (`tests/test_workload_fio.py::test_pure_python_without_the_extension`); everything
else takes it from here.
"""

import math
from typing import Optional

from raidlab.workload.units import human_bytes

__all__ = ["human_bytes", "format_probability"]

#: Below this percentage a probability is written in scientific notation (still in percent).
_SCIENTIFIC_BELOW_PCT = 0.01


def format_probability(p: Optional[float], digits: int = 3, missing: str = "-") -> str:
    """One way to write a probability in every table, sentence and report: a percentage with
    ``digits`` significant digits ("5.52 %", "0.0123 %"), in scientific notation below 0.01 %
    ("3.30e-05 %"), "0 %" for zero; never rounded up to 100 % unless it is 1. ``missing`` for
    None or a value that is not a finite number."""
    if p is None or isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p):
        return missing
    if p == 0:
        return "0 %"
    pct = float(p) * 100
    if abs(pct) < _SCIENTIFIC_BELOW_PCT:
        return f"{pct:.{digits - 1}e} %"
    text = f"{pct:.{digits}g}"
    if text == "100" and p < 1:
        text = f"{pct:.{digits + 3}g}"  # 99.9996 %, not a certainty it is not
    return f"{text} %"
