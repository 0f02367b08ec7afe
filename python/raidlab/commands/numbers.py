"""The one grammar of every number a user types, and the click types of every number option.

Numbers are ASCII decimal text: ``[+-]digits`` for whole numbers, and that with an optional
fraction and exponent for real numbers. Python's ``int()`` and ``float()`` (which click's
INT, FLOAT and ranges call) also take other scripts' digits (``'١٢'`` is 12), ``_`` separators
(``'1_024'``) and surrounding whitespace, so a typo could run silently; fio, mdadm and sysbench
read ASCII digits only (``strtoll``/``strtod``), and so does raidlab. Surrounding ASCII spaces
are dropped. :func:`whole_text` and :func:`real_text` are the grammar; the CLI's whole-number
options are declared with :func:`whole`, the real-number ones with :func:`finite`.

click's own FLOAT takes ``nan``, ``inf`` and ``1e999`` (Python's ``float()`` does), and
``click.FloatRange`` lets NaN through because every comparison with NaN is false, so a
``--max-time-s nan`` used to run nothing at all and ``--capacity-tb 1e300`` overflowed later.
Every float option of the CLI is declared with :func:`finite`, which gives its range once.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional

import click

_WHOLE = re.compile(r"[+-]?[0-9]+")
_REAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: Words float() takes for the non-finite values; they are numbers, just not finite ones.
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_SPACES = " \t"


def whole_text(text: str) -> Optional[int]:
    """The whole number ``text`` spells in ASCII decimal digits, or None."""
    stripped = text.strip(_SPACES)
    return int(stripped) if _WHOLE.fullmatch(stripped) else None


def real_text(text: str) -> Optional[float]:
    """The real number ``text`` spells in ASCII decimal (``1.5``, ``-2e3``, ``nan``), or None."""
    stripped = text.strip(_SPACES)
    if _REAL.fullmatch(stripped) or _NON_FINITE.fullmatch(stripped):
        return float(stripped)
    return None


class WholeRange(click.IntRange):
    """A whole number in ASCII decimal digits within ``[low, high]`` (None: unbounded)."""

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a whole number", param, ctx)
        if not isinstance(value, int):
            number = whole_text(str(value))
            if number is None:
                self.fail(f"{str(value)[:40]!r} is not a whole number (ASCII digits 0-9)", param, ctx)
            value = number
        if self.max == MAX_WHOLE and value > MAX_WHOLE:
            self.fail(f"{value} is above {MAX_WHOLE}, the largest whole number raidlab takes", param, ctx)
        return super().convert(value, param, ctx)

    def _describe_range(self) -> str:
        """The range as help shows it; the u64 ceiling every count has is no limit worth reading."""
        if self.max == MAX_WHOLE and self.min is not None:
            return f"x>={self.min}"
        return super()._describe_range()


#: Every whole number a user gives raidlab is a count, a size or a seed: a u64 in the core.
MAX_WHOLE = 2**64 - 1


def whole(low: Optional[int] = 0, high: Optional[int] = MAX_WHOLE) -> WholeRange:
    """The type of a whole-number option, from ``low`` (0 unless given) to ``high`` (the u64
    limit unless given: a 22-digit --limit was an OverflowError in the glue)."""
    return WholeRange(low, high)


class FiniteFloat(click.FloatRange):
    """A finite float within ``[low, high]`` (either end open if asked)."""

    def __init__(self, low: float, high: float, low_open: bool = False, high_open: bool = False) -> None:
        super().__init__(low, high, min_open=low_open, max_open=high_open)

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a number", param, ctx)
        try:
            number = float(value) if isinstance(value, (int, float)) else real_text(str(value))
        except (TypeError, ValueError, OverflowError):
            number = None
        if number is None:
            self.fail(f"{str(value)[:40]!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{str(value)[:40]!r} is not a finite number (the range is {self._describe_range()})",
                      param, ctx)
        return super().convert(number, param, ctx)


def finite(low: float, high: float, low_open: bool = False, high_open: bool = False) -> FiniteFloat:
    """The type of a float option: finite, from ``low`` to ``high``."""
    return FiniteFloat(low, high, low_open, high_open)
