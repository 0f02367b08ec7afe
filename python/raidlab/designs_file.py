"""The shape of a designs file (``raidlab compare --designs FILE.toml``), checked before use.

A designs file has three tables and nothing else::

    [defaults]        # optional, one table: settings every design starts from
    [[design]]        # one or more: name = "..." and any setting
    [[workload]]      # optional, any number: name = "..." and one of fio, sysbench, preset

A setting is any field of :class:`raidlab.run.Design`; it takes the values the
``raidlab sim`` option of the same name takes (``chunk_kib`` as ``--chunk-kib``: same type,
same range), checked by the setting's one declaration (:mod:`raidlab.settings`); ``drive`` may also be a drive table
(``drive = {kind = "hdd", rpm = 15000}``, :data:`raidlab.drives.DRIVE_TABLE`). An unknown table or key is refused
with the nearest valid name, a wrong type is named, so a typo never passes silently. A file the
designs file names relatively (a drive or controller FILE.toml, a fio job) is read from beside it.
"""

from __future__ import annotations

import difflib
import os
from typing import Any, Dict, Iterable, List, Mapping, Tuple

import click

from raidlab.cli_types import cli_type
from raidlab.errors import ConfigError
from raidlab.inputs import beside, read_toml, show_path
from raidlab.settings import BY_NAME, Setting

TABLES = ("defaults", "design", "workload")
_WRITTEN = {"defaults": "[defaults]", "design": "[[design]]", "workload": "[[workload]]"}
WORKLOAD_KEYS = ("name", "fio", "sysbench", "preset")


def _hint(key: str, allowed: Iterable[str], form: str = "'{}'") -> str:
    close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
    return f" (did you mean {form.format(close[0])}?)" if close else ""


_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
               list: "an array", dict: "a table"}


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _expected(setting: Setting) -> Tuple[type, ...]:
    """The TOML types a setting accepts, from its declared kind."""
    return {"bool": (bool,), "int": (int,), "float": (int, float)}.get(setting.kind, (str, int))


def _check_setting(key: str, value: Any, setting: Setting, where: str) -> None:
    expected = _expected(setting)
    if isinstance(value, bool) != (bool in expected) or not isinstance(value, expected):
        wanted = " or ".join(_TYPE_NAMES[kind] for kind in expected)
        raise ConfigError(f"{where}: '{key}' must be {wanted}, got {_type_name(value)} {value!r:.40}")
    kind = None if bool in expected else cli_type(key)
    if kind is None:
        return
    try:
        kind.convert(value, None, None)  # the range or choices of the sim option of the same name
    except click.BadParameter as error:
        raise ConfigError(f"{where}: '{key}': {error.message}") from None


def _check_table(entry: Any, allowed: Iterable[str], where: str, options: Mapping[str, Setting]) -> None:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table, got {_type_name(entry)}")
    allowed = list(allowed)
    for key, value in entry.items():
        if key not in allowed:
            raise ConfigError(f"{where}: unknown key '{key}'{_hint(key, allowed)}; "
                              f"expected one of {', '.join(allowed)}")
        if key == "drive" and isinstance(value, dict):
            continue  # a drive table: checked by raidlab.drives.drive_table as the design is built
        if key in WORKLOAD_KEYS and key not in options:
            if not isinstance(value, str):
                raise ConfigError(f"{where}: '{key}' must be a string, got {_type_name(value)}")
        elif key in options:
            _check_setting(key, value, options[key], where)


def _array_of_tables(table: Dict[str, Any], key: str, where: str) -> List[Any]:
    value = table.get(key, [])
    if isinstance(value, dict):
        raise ConfigError(f"{where}: [{key}] must be an array of tables, written [[{key}]]")
    if not isinstance(value, list):
        raise ConfigError(f"{where}: '{key}' must be an array of tables ([[{key}]]), got {_type_name(value)}")
    return value


def read_designs(path: str, settings: Iterable[str]) -> Tuple[Dict[str, Any], List[Dict[str, Any]],
                                                              List[Dict[str, str]]]:
    """``(defaults, designs, workloads)`` from the designs file at ``path``, every table and key
    checked; ``settings`` are the keys a design may set."""
    where = f"designs file {show_path(path)}"
    table = read_toml(path, "designs file")
    settings = list(settings)
    for key in table:
        if key not in TABLES:
            close = _hint(key, TABLES, "{}")
            for name, written in _WRITTEN.items():
                close = close.replace(f"mean {name}?", f"mean {written}?")
            raise ConfigError(f"{where}: unknown table [{key}]{close}; "
                              "expected [defaults], [[design]] and [[workload]]")
    options = {name: BY_NAME[name] for name in settings if name in BY_NAME}
    defaults = table.get("defaults", {})
    if isinstance(defaults, list):
        raise ConfigError(f"{where}: [defaults] must be one table, written [defaults], not [[defaults]]")
    _check_table(defaults, settings, f"{where}: [defaults]", options)
    designs = _array_of_tables(table, "design", where)
    for index, entry in enumerate(designs):
        name = entry.get("name", f"design{index + 1}") if isinstance(entry, dict) else index + 1
        _check_table(entry, ["name"] + settings, f"{where}: design '{name}'", options)
    workloads = _array_of_tables(table, "workload", where)
    for index, entry in enumerate(workloads):
        _check_table(entry, WORKLOAD_KEYS, f"{where}: [[workload]] {index + 1}", options)
    _check_names(designs, "design", where)
    _check_names(workloads, "workload", where)
    base = os.path.dirname(os.path.abspath(path))
    return _beside(defaults, base), [_beside(d, base) for d in designs], [_beside(w, base) for w in workloads]


def _beside(entry: Dict[str, Any], base: str) -> Dict[str, Any]:
    """The entry with the files it names relative to the designs file read from beside it."""
    return {key: beside(key, value, base) for key, value in entry.items()}


#: Longest design or workload name: it heads a table column and names PNG/HTML sections.
MAX_NAME_CHARS = 64


def _check_names(entries: List[Dict[str, Any]], kind: str, where: str) -> None:
    """Names label table rows, so each given one is a short, printable, unique string (two
    designs named 'a' gave two rows no one could tell apart; a newline or an escape sequence
    in a name broke the table or reached the terminal)."""
    seen: Dict[str, int] = {}
    for index, entry in enumerate(entries, 1):
        if "name" not in entry:
            continue
        name = entry["name"]
        label = f"{where}: [[{kind}]] {index}"
        if not isinstance(name, str):
            raise ConfigError(f"{label}: 'name' must be a string, got {_type_name(name)}")
        if not name.strip() or not name.isprintable() or len(name) > MAX_NAME_CHARS:
            raise ConfigError(f"{label}: 'name' must be 1 to {MAX_NAME_CHARS} printable characters, "
                              f"got {name[:MAX_NAME_CHARS]!r}")
        if name in seen:
            raise ConfigError(f"{label}: the name {name!r} is already used by [[{kind}]] {seen[name]}")
        seen[name] = index
