"""Byte counts in the binary units sysadmins read (KiB, MiB, GiB, ...), probabilities, and the
figures of a reliability analysis (decimal bytes, years, estimates with their 95 % interval).

The byte formatting lives in the workload package, which stays importable without the rest of
raidlab (`tests/test_workload_fio.py::test_pure_python_without_the_extension`); everything
else takes it from here.
"""

import math
from typing import Any, Callable, Mapping, Optional

from raidlab.workload.units import human_bytes

__all__ = ["human_bytes", "format_probability", "decimal_bytes", "years_text", "with_ci"]

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


def decimal_bytes(value: Optional[float]) -> str:
    """Bytes in decimal units, 3 significant digits ("1.2 TB", "512 B"); "-" for None. Drive
    makers quote capacities and read-error rates per 10^N bytes, so reliability figures use them."""
    if value is None:
        return "-"
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.3g} B"


def years_text(value: Optional[float]) -> str:
    """A time in years ("12,345 y", "1.234e+09 y"); "never" for None (no loss expected)."""
    if value is None:
        return "never"
    return f"{value:,.0f} y" if value < 1e7 else f"{value:.4g} y"


def with_ci(estimate: Optional[Mapping[str, Any]], fmt: Callable[[Any], str]) -> str:
    """A Monte Carlo estimate and its 95 % interval, each written by ``fmt``: "m [low, high]"."""
    if estimate is None:
        return "-"
    low, high = estimate["ci95"]
    return f"{fmt(estimate['mean'])} [{fmt(low)}, {fmt(high)}]"


def money(value: float, priced: bool) -> str:
    """A plan's cost as its table prints it: ``$750`` (``$1,234.50`` with cents), or ``5 drives``
    when the plan counts drives (``priced`` false)."""
    if not priced:
        count = int(value)
        return f"{count} drive" + ("s" if count != 1 else "")
    return f"${value:,.0f}" if value == int(value) else f"${value:,.2f}"
