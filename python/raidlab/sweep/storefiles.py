"""Reading a sweep store's files: the one reader that sweep start-up, compaction and
:func:`raidlab.load_sweep` share, and the row schema it checks against.

Every file is read through :func:`raidlab.inputs.read_bytes`: a regular file only (a FIFO,
device or directory is refused from its ``stat`` before anything opens it, so nothing blocks),
its size capped. The mark (``raidlab-sweep.json``) is JSON with its nesting capped. A row file
is checked before its rows are used: it is Parquet, its ``key`` column is there, string-typed,
every key 32 hex digits and none twice; every column raidlab declares has the declared type
(columns a file lacks read as nulls, columns no longer declared are left out); a one-row file
``KEY.parquet`` holds the one row of KEY. A file that fails is named in one
:class:`~raidlab.errors.ConfigError` with what to do about it, never a raw pyarrow error.
"""

from __future__ import annotations

import functools
import io
import os
import re
from dataclasses import fields
from typing import Any, Dict, List, Optional

from raidlab import inputs
from raidlab.errors import ConfigError
from raidlab.run import _FLOAT_KEYS, Design, Options
from raidlab.sweep.metrics import METRICS
from raidlab.sweep.points import option_names

KEY = re.compile(r"[0-9a-f]{32}")
#: Identity columns, first in every row.
IDENTITY = (("key", "string"), ("raidlab_version", "string"))
#: The columns that say which point a row is (its key hashes the configuration, seed and version):
#: a row file lacking one is refused, where a missing option or metric column reads as nulls.
_POINT_IDENTITY = ("key", "raidlab_version", "seed")


def arrow():
    """pyarrow with its Parquet module, or the one-line error saying how to install it."""
    try:
        import pyarrow  # type: ignore[import-not-found]
        import pyarrow.parquet  # noqa: F401  (the submodule is imported for pyarrow.parquet below)
    except ImportError:
        raise ConfigError("sweeps need pyarrow and pandas: pip install 'raidlab[sweep]'") from None
    return pyarrow


def _option_type(name: str) -> str:
    """An option column's Arrow type, from the setting's declaration in raidlab.run."""
    if name == "level":
        return "int64"
    if name == "seed":
        return "uint64"
    declared = next((f for cls in (Design, Options) for f in fields(cls) if f.name == name), None)
    if declared is None or name in ("drive", "layout", "failed"):
        return "string"
    default = declared.default
    if isinstance(default, bool):
        return "bool"
    if name in _FLOAT_KEYS or isinstance(default, float):
        return "float64"
    if isinstance(default, int):
        return "int64"
    # a number with no default (declared with a range): float64 holds whole numbers exactly too
    return "float64" if declared.metadata.get("low") is not None else "string"


@functools.lru_cache(maxsize=1)
def schema():
    """The row schema: identity, every option, then the metrics (declared once per process)."""
    pa = arrow()
    columns = list(IDENTITY) + [(name, _option_type(name)) for name in option_names()] + list(METRICS)
    types = {"string": pa.string(), "bool": pa.bool_(), "int64": pa.int64(), "uint64": pa.uint64(),
             "float64": pa.float64()}
    return pa.schema([(name, types[kind]) for name, kind in columns])


def row_bytes(row: Dict[str, Any]) -> bytes:
    """One row as a Parquet file's bytes (same row, same bytes)."""
    pa = arrow()
    table = pa.Table.from_pylist([row], schema=schema())
    buffer = io.BytesIO()
    pa.parquet.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def table_bytes(table) -> bytes:
    """Rows of many points as one Parquet file's bytes."""
    buffer = io.BytesIO()
    arrow().parquet.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


# -- the mark ----------------------------------------------------------------------------------


def read_mark(path: str) -> Optional[Any]:
    """The JSON document in the mark file at ``path``; None when nothing is there."""
    if not os.path.lexists(path):
        return None
    store = os.path.dirname(path) or "."
    fix = (f"if {inputs.show_path(store)} is a raidlab sweep store, delete {os.path.basename(path)} and "
           "run the sweep again with --force to mark it anew")
    what = f"sweep store mark {inputs.show_path(path)}"
    try:
        text = inputs.decode(inputs.read_bytes(path, "sweep store mark", record=False), what)
        return inputs.parse_json(text, what)
    except ConfigError as error:
        raise ConfigError(f"{error}; {fix}") from None


# -- row files ---------------------------------------------------------------------------------


def _damaged(path: str, problem: str) -> ConfigError:
    points = os.path.dirname(path) or "."
    return ConfigError(f"sweep store: {inputs.show_path(path)} {problem}; move it out of "
                       f"{inputs.show_path(points)} (or delete it) and run the sweep again to "
                       "recompute its points")


def read_rows(path: str, key: Optional[str] = None, keys_only: bool = False):
    """The rows of the row file at ``path``, checked and in today's schema; None when the file
    is gone (a compaction running beside a reader removed it). ``key``: the file is ``KEY.parquet``
    and must hold that one point's row. ``keys_only``: the columns are checked from the file's
    schema and only the key column is read (a table of that one column), at a fraction of the
    cost of decoding every column."""
    pa = arrow()
    try:
        data = inputs.read_bytes(path, "sweep row file", record=False)
    except ConfigError as error:
        if not os.path.lexists(path):
            return None
        prefix = f"cannot read sweep row file {inputs.show_path(path)}: "
        why = str(error)[len(prefix):] if str(error).startswith(prefix) else str(error)
        raise _damaged(path, f"cannot be read ({why})") from None
    unreadable = (pa.ArrowException, OSError, ValueError, TypeError, IndexError, KeyError)
    try:
        parquet = pa.parquet.ParquetFile(pa.BufferReader(data))
        found = parquet.schema_arrow
    except unreadable:
        raise _damaged(path, "is not a readable Parquet file") from None
    expected = schema()
    _check_columns(path, found, expected)
    try:
        # one thread: a small file gains nothing from Arrow's thread pool, and a pool thread
        # alive at exit can abort the process ("terminate called without an active exception",
        # https://github.com/apache/arrow/issues/34314)
        table = parquet.read(columns=["key"] if keys_only else None, use_threads=False)
    except unreadable:
        raise _damaged(path, "is not a readable Parquet file") from None
    _check_keys(path, table, key)
    return table if keys_only else _conformed(pa, table, expected)


def _check_columns(path: str, found, expected) -> None:
    """The file's schema ``found`` against today's: key there, known columns of their type."""
    names = found.names
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise _damaged(path, f"is not a row file raidlab wrote: column {_show(twice)} appears twice")
    for name in _POINT_IDENTITY:
        if name not in names:
            raise _damaged(path, f"is not a row file raidlab wrote: it has no {name} column")
    for field in expected:
        if field.name in names:
            kind = found.field(field.name).type
            if kind != field.type:
                raise _damaged(path, f"is not a row file raidlab wrote: column {field.name} is "
                                     f"{_show(str(kind))}, expected {field.type}")


def _check_keys(path: str, table, key: Optional[str]) -> None:
    keys = table.column("key").to_pylist()
    bad = [k for k in keys if not isinstance(k, str) or not KEY.fullmatch(k)][:1]
    if bad:
        raise _damaged(path, f"is not a row file raidlab wrote: key {_show(repr(bad[0]))} is not 32 hex digits")
    if len(set(keys)) != len(keys):
        twice = next(k for k in keys if keys.count(k) > 1)
        raise _damaged(path, f"holds the row of point {twice} twice")
    if key is not None and keys != [key]:
        held = f"{len(keys)} rows" if len(keys) != 1 else f"the row of point {keys[0]}"
        raise _damaged(path, f"should hold the one row of point {key} but holds {held}")


def _conformed(pa, table, expected):
    """``table`` in the schema ``expected``: missing columns as nulls, unknown ones left out."""
    names = set(table.column_names)
    columns = [table.column(f.name) if f.name in names else pa.nulls(len(table), f.type) for f in expected]
    return pa.Table.from_arrays(columns, schema=expected)


def concat(tables: List[Any]):
    """Checked tables as one (an empty table of today's schema when there are none)."""
    pa = arrow()
    return pa.concat_tables(tables) if tables else schema().empty_table()


def _show(text: str, limit: int = 60) -> str:
    """A name or value from a file, printable and bounded for a one-line message."""
    return inputs.show_path(text, limit)
