"""The one check of the tables users write: a drive table (:data:`raidlab.drives.DRIVE_TABLE`)
and a sweep file's tables (:mod:`raidlab.sweep.grid`).

A table's schema is a small declaration, ``key -> Key(types, doc)``. :func:`check_table` refuses
an unknown key with the nearest valid name (``difflib``), a key given twice (``chunk-kib`` and
``chunk_kib`` are one key), and a value of the wrong type with the key named, so nothing a user
writes is dropped silently and no shape reaches the code below as a raw TypeError.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Tuple

from raidlab.errors import ConfigError

#: Any value: the key's own setting checks it later (a sweep's [sweep] values go to build_run).
ANY: Tuple[type, ...] = ()
NUMBER: Tuple[type, ...] = (int, float)
TABLE: Tuple[type, ...] = (dict,)


@dataclass(frozen=True)
class Key:
    """One key of a table: the types its value may have (:data:`ANY`: checked elsewhere) and
    what it means (for messages and docs)."""

    types: Tuple[type, ...]
    doc: str
    #: What the value must be, in words, when the types alone do not say it ("a list of values").
    shape: str = ""
    #: Checks and converts a value of the right type: ``convert(value, what)`` where ``what`` names
    #: the key for its message ("drive file d.toml: 'rpm'").
    convert: Optional[Callable[[Any, str], Any]] = None


_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
               list: "an array", tuple: "an array", dict: "a table"}


def type_name(value: Any) -> str:
    """``an integer``, ``a table``, ... as TOML calls the value's type (or the Python name)."""
    for kind, name in _TYPE_NAMES.items():
        if type(value) is kind:
            return name
    return "a table" if isinstance(value, Mapping) else type(value).__name__


def expected(types: Tuple[type, ...]) -> str:
    """``a number``, ``a string or a table``: what a key's types accept, in words."""
    if set(types) >= {int, float}:
        types = tuple(t for t in types if t is not int)
    return " or ".join(dict.fromkeys(_TYPE_NAMES.get(t, t.__name__) for t in types))


def matches(value: Any, types: Tuple[type, ...]) -> bool:
    """Whether ``value`` has one of ``types``: a boolean is not a number (``True`` is an int in
    Python, not in TOML), and any mapping is a table."""
    if not types:
        return True
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types) or (dict in types and isinstance(value, Mapping))


def quoted(name: str) -> str:
    return f"'{name}'"


def did_you_mean(name: Any, allowed: Iterable[str], show: Callable[[str], str] = quoted) -> str:
    """`` (did you mean 'rpm'?)`` for the allowed name nearest ``name``, or nothing."""
    close = difflib.get_close_matches(str(name), list(allowed), n=1, cutoff=0.6)
    return f" (did you mean {show(close[0])}?)" if close else ""


def check_table(table: Any, keys: Mapping[str, Key], where: str, *, noun: str = "key",
                normalise: Callable[[str], str] = str, show: Callable[[str], str] = quoted,
                quote: Callable[[str], str] = quoted, expected_keys: Optional[str] = None) -> Dict[str, Any]:
    """``table`` checked against ``keys``: a dict of the normalised keys and their values.

    ``where`` prefixes every message; ``normalise`` maps a written key to its declared name
    (``chunk-kib`` to ``chunk_kib``); ``show`` writes a declared name in messages (``'rpm'``,
    ``[[zip]]``, ``chunk-kib``) and ``quote`` a name as the user wrote it; ``expected_keys``
    replaces the list of every key after an unknown one."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}must be a table of {noun} = value, got {type_name(table)}")
    out: Dict[str, Any] = {}
    for name, value in table.items():
        key = normalise(str(name))
        if key not in keys:
            listing = expected_keys or f"expected one of {', '.join(show(k) for k in keys)}"
            raise ConfigError(f"{where}unknown {noun} {quote(str(name))}{did_you_mean(key, keys, show)}; {listing}")
        if key in out:
            raise ConfigError(f"{where}{noun} {show(key)} is given twice")
        spec = keys[key]
        if not matches(value, spec.types):
            raise ConfigError(f"{where}{show(key)} must be {spec.shape or expected(spec.types)}, "
                              f"got {type_name(value)} {_short(value)}")
        out[key] = spec.convert(value, f"{where}{show(key)}") if spec.convert else value
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
