"""A sweep's points: a SWEEP.toml (or the same dict from Python) expanded into settings.

The file::

    [sweep]                 # fixed settings of every point (any ``raidlab sim`` option)
    runtime_s = 10
    mode = "grid"           # or "zip": every [grid] axis moves together (equal lengths)
    [grid]                  # axes: every combination is a point
    level = [5, 10]
    chunk-kib = [64, 512]
    [[zip]]                 # optional: axes that move together (one combined axis)
    devices = [4, 6]
    drive = ["nearline-7200", "x25e-slc"]
    [[exclude]]             # optional: drop the combinations that match every key
    level = 10              # (a list matches any of its values)
    chunk-kib = 64
    [[include]]             # optional: one extra point ([sweep] settings plus these)
    level = 6
    devices = 6

Keys are the long names of ``raidlab sim``'s options (``chunk-kib``; ``chunk_kib`` is the same
key) or the settings of :mod:`raidlab.run`; ``fail`` and ``replace`` take ``K@T`` texts (a list
of them for several events). A drive may be a drive table, ``drive = {kind = "hdd", rpm = 15000}``
(:data:`raidlab.drives.DRIVE_TABLE`). A relative drive, controller or fio file is read from beside
the sweep file. The tables' schema is declared below (:data:`DOCUMENT`, :data:`FIXED`,
:data:`AXES`, :data:`SETTINGS`) and checked by :func:`raidlab.schema.check_table`: an unknown
key is refused with the nearest name. Points are ``product(axes) - excludes + includes``, in order:
the last axis moves fastest, as in :func:`itertools.product`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from raidlab.errors import ConfigError
from raidlab.run import KNOWN_KEYS, Design, Options
from raidlab.schema import ANY, TABLE, Key, check_table, type_name

#: Settings a sweep may set beyond raidlab.run's: scripted events as ``raidlab sim`` takes them.
EVENT_KEYS = ("fail", "replace")
SWEEP_KEYS = tuple(KNOWN_KEYS) + EVENT_KEYS
TABLES = ("sweep", "grid", "zip", "exclude", "include")
MODES = ("grid", "zip")


def _docs() -> Dict[str, str]:
    """Each sweep option's meaning: raidlab.run's declaration, or the workload's and events'."""
    docs = {f.name: f.metadata.get("doc", "") for cls in (Design, Options) for f in fields(cls)}
    docs.update(fio="a fio job file (beside the sweep file) or its text", sysbench="sysbench options",
                preset="a workload preset", fail="members failing: \"K@T\" texts",
                replace="members replaced: \"K@T\" texts")
    return docs


# -- the schema of a sweep file's tables (checked by raidlab.schema.check_table) ------------------

#: [sweep] and each [[exclude]]/[[include]]: any option, any value (each point's run checks it).
SETTINGS: Dict[str, Key] = {key: Key(ANY, doc) for key, doc in _docs().items() if key in SWEEP_KEYS}
#: [grid] and each [[zip]]: any option, a list of its values.
AXES: Dict[str, Key] = {key: Key((list, tuple), f"values of: {spec.doc}", "a list of values")
                        for key, spec in SETTINGS.items()}
FIXED: Dict[str, Key] = {**SETTINGS, "mode": Key((str,), "grid, or zip: every [grid] axis moves together")}
DOCUMENT: Dict[str, Key] = {
    "sweep": Key(TABLE, "settings every point shares"),
    "grid": Key(TABLE, "axes: every combination of their values is a point"),
    "zip": Key((list, tuple, dict), "groups of axes that move together", "an array of tables, written [[zip]]"),
    "exclude": Key((list, tuple, dict), "combinations to drop", "an array of tables, written [[exclude]]"),
    "include": Key((list, tuple, dict), "extra points", "an array of tables, written [[include]]"),
}


def _option(key: str) -> str:
    """An option as the user writes it: ``chunk-kib``."""
    return key.replace("_", "-")


def _table_name(key: str) -> str:
    return f"[[{key}]]" if key in ("zip", "exclude", "include") else f"[{key}]"


_OPTIONS = {"noun": "option", "normalise": lambda name: name.replace("-", "_"), "show": _option,
            "expected_keys": f"expected one of raidlab sim's options ({', '.join(map(_option, SWEEP_KEYS))})"}


@dataclass(frozen=True)
class Point:
    """One point of a sweep: its settings (names of :data:`SWEEP_KEYS`) and what varies."""

    index: int
    settings: Dict[str, Any]
    #: The axis values that make this point differ from the others, for messages and tables.
    varies: Tuple[str, ...] = ()

    def label(self) -> str:
        """``point 3 (level=5, chunk_kib=64)``."""
        shown = ", ".join(f"{k}={_show(self.settings[k])}" for k in self.varies if k in self.settings)
        return f"point {self.index}" + (f" ({shown})" if shown else "")


@dataclass
class Grid:
    """A sweep file's content, checked: fixed settings, axes, zip groups, excludes, includes."""

    fixed: Dict[str, Any] = field(default_factory=dict)
    axes: Dict[str, List[Any]] = field(default_factory=dict)
    zips: List[Dict[str, List[Any]]] = field(default_factory=list)
    excludes: List[Dict[str, Any]] = field(default_factory=list)
    includes: List[Dict[str, Any]] = field(default_factory=list)

    def varying(self) -> Tuple[str, ...]:
        keys = list(self.axes) + [k for group in self.zips for k in group]
        keys += [k for extra in self.includes for k in extra]
        return tuple(dict.fromkeys(keys))

    def combinations(self) -> int:
        """Points of the full product (before excludes): the product of the axes' lengths."""
        count = 1
        for values in self.axes.values():
            count *= len(values)
        for group in self.zips:
            count *= len(next(iter(group.values())))
        return count


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value if "\n" not in value else repr(value[:30] + "...")
    return str(value)


def _table(value: Any, where: str, keys: Mapping[str, Key] = SETTINGS) -> Dict[str, Any]:
    return check_table(value, keys, where, **_OPTIONS)


def _axes(value: Any, where: str, zipped: bool = False) -> Dict[str, List[Any]]:
    axes = {key: list(values) for key, values in _table(value, where, AXES).items()}
    if zipped and not axes:
        raise ConfigError(f"{where}has no axes: give lists that move together (devices = [4, 6]) or drop it")
    for key, values in axes.items():
        if not values:
            raise ConfigError(f"{where}{_option(key)} is an empty list: the sweep has no points")
    return axes


def _tables(value: Any, where: str) -> List[Dict[str, Any]]:
    items = value if isinstance(value, (list, tuple)) else [value]
    return [_table(item, f"{where}[{index}] ") for index, item in enumerate(items)]


def _zip_group(group: Dict[str, List[Any]], where: str) -> Dict[str, List[Any]]:
    lengths = {key: len(values) for key, values in group.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k.replace('_', '-')} has {n}" for k, n in lengths.items())
        raise ConfigError(f"{where}axes that move together need lists of one length: {shown}")
    return group


def parse(document: Mapping[str, Any], where: str = "") -> Grid:
    """A :class:`Grid` from a sweep document (the parsed TOML, or the same dict from Python)."""
    if not isinstance(document, Mapping):
        raise ConfigError(f"{where}a sweep is a table with [sweep] and [grid], got {type_name(document)}")
    tables = check_table(document, DOCUMENT, where, noun="table", show=_table_name, quote=_table_name)
    fixed = _table(tables.get("sweep", {}), f"{where}[sweep] ", FIXED)
    mode = fixed.pop("mode", "grid")
    if mode not in MODES:
        raise ConfigError(f"{where}[sweep] mode = {mode!r}; expected grid or zip")
    grid = Grid(fixed=fixed, axes=_axes(tables.get("grid", {}), f"{where}[grid] "))
    if mode == "zip" and grid.axes:
        grid.zips.append(_zip_group(grid.axes, f"{where}[grid] (mode = \"zip\") "))
        grid.axes = {}
    groups = tables.get("zip", [])
    for index, group in enumerate(groups if isinstance(groups, (list, tuple)) else [groups]):
        at = f"{where}[[zip]][{index}] "
        grid.zips.append(_zip_group(_axes(group, at, zipped=True), at))
    grid.excludes = _tables(tables.get("exclude", []), f"{where}[[exclude]]")
    grid.includes = _tables(tables.get("include", []), f"{where}[[include]]")
    _check_overlaps(grid, where)
    return grid


def _check_overlaps(grid: Grid, where: str) -> None:
    """An option is fixed, one axis, or in one zip group: never two of them."""
    seen: Dict[str, str] = {k: "[sweep]" for k in grid.fixed}
    for key in grid.axes:
        if key in seen:
            raise ConfigError(f"{where}{_option(key)} is both in {seen[key]} and in [grid]")
        seen[key] = "[grid]"
    for index, group in enumerate(grid.zips):
        for key in group:
            if key in seen:
                raise ConfigError(f"{where}{_option(key)} is both in {seen[key]} and in [[zip]][{index}]")
            seen[key] = f"[[zip]][{index}]"


def _same(value: Any, wanted: Any) -> bool:
    """A point's value matches an exclude's: equal (5 and "5" too), or one of a list."""
    if value == wanted or (value is not None and str(value) == str(wanted)):
        return True
    return isinstance(wanted, list) and any(_same(value, item) for item in wanted)


def excluded(settings: Mapping[str, Any], excludes: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any exclude table matches ``settings`` on every one of its keys."""
    return any(all(_same(settings.get(k), v) for k, v in rule.items()) for rule in excludes)


#: The most points a sweep file may expand to: each is a run (seconds of CPU) and a row of the
#: store, and the expansion is held in memory. A larger study is several sweep files.
MAX_POINTS = 100_000


def expand(grid: Grid) -> List[Point]:
    """Every point, in order: the product of the axes (last fastest) minus the excludes, then the
    includes. Each is the fixed settings updated with its axis values."""
    product = grid.combinations()
    if product + len(grid.includes) > MAX_POINTS:
        raise ConfigError(f"the sweep's grid has {product + len(grid.includes):,} points (the product of its "
                          f"axes' lengths, before excludes); at most {MAX_POINTS:,}: split it into several "
                          "sweep files")
    keys: List[Tuple[str, ...]] = [(k,) for k in grid.axes] + [tuple(group) for group in grid.zips]
    columns: List[List[Tuple[Any, ...]]] = [[(v,) for v in values] for values in grid.axes.values()]
    columns += [list(zip(*group.values())) for group in grid.zips]
    varies = grid.varying()
    points: List[Point] = []
    for combo in itertools.product(*columns):
        settings = dict(grid.fixed)
        for key, value in zip(keys, combo):
            settings.update(zip(key, value))
        if not excluded(settings, grid.excludes):
            points.append(Point(len(points), settings, varies))
    for extra in grid.includes:
        points.append(Point(len(points), {**grid.fixed, **extra}, varies))
    return points
