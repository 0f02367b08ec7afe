"""The one type of every float option: a finite number inside the option's declared range.

click's own FLOAT takes ``nan``, ``inf`` and ``1e999`` (Python's ``float()`` does), and
``click.FloatRange`` lets NaN through because every comparison with NaN is false, so a
``--max-time-s nan`` used to run nothing at all and ``--capacity-tb 1e300`` overflowed later.
Every float option of the CLI is declared with :func:`finite`, which gives its range once.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import click


class FiniteFloat(click.FloatRange):
    """A finite float within ``[low, high]`` (either end open if asked)."""

    def __init__(self, low: float, high: float, low_open: bool = False, high_open: bool = False) -> None:
        super().__init__(low, high, min_open=low_open, max_open=high_open)

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a number", param, ctx)
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            self.fail(f"{str(value)[:40]!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{str(value)[:40]!r} is not a finite number (the range is {self._describe_range()})",
                      param, ctx)
        return super().convert(number, param, ctx)


def finite(low: float, high: float, low_open: bool = False, high_open: bool = False) -> FiniteFloat:
    """The type of a float option: finite, from ``low`` to ``high``."""
    return FiniteFloat(low, high, low_open, high_open)
