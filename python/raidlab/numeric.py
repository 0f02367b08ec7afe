"""The one grammar of every number a user types, and the one reading of a number or a flag.

Numbers are ASCII decimal text: ``[+-]digits`` for whole numbers, and that with an optional
fraction and exponent for real numbers. Python's ``int()`` and ``float()`` (which click's
INT, FLOAT and ranges call) also take other scripts' digits (``'١٢'`` is 12), ``_`` separators
(``'1_024'``) and surrounding whitespace, so a typo could run silently; fio, mdadm and sysbench
read ASCII digits only (``strtoll``/``strtod``), and so does raidlab. Surrounding ASCII spaces
are dropped. :func:`whole_text` and :func:`real_text` are the grammar; :func:`number` and
:func:`boolean` read a setting's value (a CLI text, a TOML value or a Python keyword) by it.
The click types of the CLI's number options, built on this grammar, are in
:mod:`raidlab.cli_types`.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional

from raidlab.errors import ConfigError

_WHOLE = re.compile(r"[+-]?[0-9]+")
_REAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: Words float() takes for the non-finite values; they are numbers, just not finite ones.
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_SPACES = " \t"

#: Every whole number a user gives raidlab is a count, a size or a seed: a u64 in the core.
MAX_WHOLE = 2**64 - 1


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


def number(name: str, value: Any, where: str, kind: type) -> Any:
    """``value`` as a finite ``kind`` (int or float): text in ASCII decimal only, as on the CLI;
    anything else a ConfigError naming ``where`` and ``name``."""
    if isinstance(value, str):
        exact = whole_text(value) if kind is int else None
        if exact is not None:
            return exact  # exact, even past float precision (seeds)
        parsed = real_text(value)
        parsed = math.nan if parsed is None else parsed
    else:
        try:
            parsed = float(value) if not isinstance(value, bool) else math.nan
        except (TypeError, ValueError, OverflowError):
            parsed = math.nan
    if not math.isfinite(parsed) or (kind is int and parsed != int(parsed)):
        what = "a whole number" if kind is int else "a finite number"
        raise ConfigError(f"{where}{name}={value!r} is not {what}")
    return int(value) if kind is int and isinstance(value, int) else kind(parsed)


def boolean(name: str, value: Any, where: str) -> bool:
    """``value`` as a flag: a bool, or true/yes/on/1 and false/no/off/0 in any case."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise ConfigError(f"{where}{name}={value!r} is not true or false")
