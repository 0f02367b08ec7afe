"""A sweep's store: a directory raidlab owns, one Parquet file and one JSON file per point.

::

    DIR/raidlab-sweep.json       marks the directory as raidlab's store (format, version)
    DIR/points/KEY.parquet       one row: the point's options, seed, version and metrics
    DIR/points/batch-HASH.parquet  rows of many points, merged when a sweep ends with at least
                                 COMPACT_AT one-row files (a large store loads as a few files)
    DIR/json/KEY.json            the point's full fio-shaped JSON (as ``raidlab sim --json``)

Each file is written through :mod:`raidlab.outputs` (a temporary file in the same directory,
fsynced, then renamed over the name: rename(2) is atomic), the JSON first and the row last, so
a point is stored exactly when its row file exists. A sweep killed at any moment (SIGKILL
included) leaves whole rows only, never half a row and never two rows of one point (a key is
one file name); what it was running is run again on the next start. ``points/`` is a Parquet
dataset any Parquet reader opens (``pyarrow.dataset.dataset(DIR + "/points")``).

A directory is taken as a store when it is empty, missing (its parent must exist) or holds the
mark; raidlab writes into a non-empty directory it did not make only with ``--force``, and then
only adds its own files.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from typing import Any, Dict, List, Optional, Set

from raidlab import _core, outputs
from raidlab.errors import ConfigError
from raidlab.sweep.metrics import METRICS
from raidlab.sweep.points import option_names

MARK = "raidlab-sweep.json"
FORMAT = 1
POINTS, DOCUMENTS = "points", "json"
_KEY = re.compile(r"[0-9a-f]{32}")
_BATCH = re.compile(r"batch-[0-9a-f]{32}\.parquet")
_LEFTOVER = re.compile(r"\.(batch-)?[0-9a-f]{32}\.(parquet|json)\..+\.tmp")
#: One-row files merged into one when a sweep ends with at least this many of them.
COMPACT_AT = 256
#: Identity columns, first in every row.
IDENTITY = (("key", "string"), ("raidlab_version", "string"))


def _arrow():
    try:
        import pyarrow  # type: ignore[import-not-found]
        import pyarrow.parquet  # noqa: F401  (the submodule is imported for pyarrow.parquet below)
    except ImportError:
        raise ConfigError("sweeps need pyarrow and pandas: pip install 'raidlab[sweep]'") from None
    return pyarrow


def _option_type(name: str) -> str:
    """An option column's Arrow type, from the setting's declaration in raidlab.run."""
    from dataclasses import fields

    from raidlab.run import _FLOAT_KEYS, Design, Options

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


def schema():
    """The row schema: identity, every option, then the metrics."""
    pa = _arrow()
    columns = list(IDENTITY) + [(name, _option_type(name)) for name in option_names()] + list(METRICS)
    types = {"string": pa.string(), "bool": pa.bool_(), "int64": pa.int64(), "uint64": pa.uint64(),
             "float64": pa.float64()}
    return pa.schema([(name, types[kind]) for name, kind in columns])


class Store:
    """An open store: the keys already stored, and atomic writes of new points."""

    def __init__(self, path: str, option: str = "--out") -> None:
        self.path = os.fspath(path)
        self.option = option

    @classmethod
    def open(cls, path: str, force: bool = False, option: str = "--out") -> "Store":
        """Opens the store at ``path``, creating it (and its mark) when needed; refuses a
        non-empty directory raidlab did not make unless ``force``."""
        store = cls.check(path, force, option)
        outputs.make_directory(store.path, option)
        for sub in (POINTS, DOCUMENTS):
            outputs.make_directory(os.path.join(store.path, sub), option)
        if not store.marked():
            mark = {"raidlab": {"version": _core.__version__, "store": "sweep", "format": FORMAT}}
            outputs.write_text(os.path.join(store.path, MARK), json.dumps(mark, indent=2) + "\n", option)
        store.clean()
        return store

    @classmethod
    def check(cls, path: str, force: bool = False, option: str = "--out") -> "Store":
        """Raises ConfigError unless ``path`` may be (or become) a store; creates nothing."""
        _arrow()  # before any point runs: a sweep without pyarrow stops here, in one line
        store = cls(path, option)
        if os.path.isdir(store.path) and not store.marked() and os.listdir(store.path) and not force:
            raise ConfigError(f"refusing to write {option} {store.path}: it is a non-empty directory that is "
                              "not a raidlab sweep store (add --force to add the sweep's files to it)")
        return store

    def marked(self) -> bool:
        try:
            with open(os.path.join(self.path, MARK), "rb") as handle:
                block = json.loads(handle.read(65536).decode("utf-8")).get("raidlab", {})
        except (OSError, ValueError, AttributeError):
            return False
        return isinstance(block, dict) and block.get("store") == "sweep"

    def clean(self) -> None:
        """Removes temporary files a killed sweep left (only raidlab's own names), and one-row
        files a killed compaction left behind."""
        for sub in (POINTS, DOCUMENTS):
            directory = os.path.join(self.path, sub)
            for name in os.listdir(directory):
                if _LEFTOVER.fullmatch(name):
                    try:
                        os.unlink(os.path.join(directory, name))
                    except OSError:
                        pass
        self.drop_merged()

    def _names(self) -> List[str]:
        return sorted(os.listdir(os.path.join(self.path, POINTS)))

    def point_keys(self) -> List[str]:
        """Keys stored one row per file (``KEY.parquet``)."""
        return [n[:-8] for n in self._names() if n.endswith(".parquet") and _KEY.fullmatch(n[:-8])]

    def batches(self) -> List[str]:
        """Paths of the compacted row files (``batch-HASH.parquet``), by name."""
        return [os.path.join(self.path, POINTS, n) for n in self._names() if _BATCH.fullmatch(n)]

    def batch_keys(self) -> Set[str]:
        """Keys of the rows in compacted files (only their key column is read)."""
        found: Set[str] = set()
        batches = self.batches()
        if batches:
            pa = _arrow()
            for path in batches:
                try:
                    found.update(pa.parquet.read_table(path, columns=["key"]).column("key").to_pylist())
                except (pa.ArrowInvalid, OSError):
                    raise ConfigError(f"sweep store: {path} is not a readable Parquet file; delete it and "
                                      "run the sweep again to recompute its points") from None
        return found

    def keys(self) -> Set[str]:
        """Keys of the points stored: a row file, or a row in a compacted file."""
        return set(self.point_keys()) | self.batch_keys()

    def drop_merged(self) -> None:
        """Removes one-row files whose row a compacted file already holds (a compaction was
        killed before it removed them)."""
        singles = self.point_keys()
        merged = self.batch_keys() if singles else set()
        for key in singles:
            if key in merged:
                os.unlink(self.row_path(key))

    def compact(self, least: int = COMPACT_AT) -> int:
        """Merges the one-row files into one file, when there are at least ``least`` of them, so
        a large store loads as a few files. The merged file is written (atomically) before the
        one-row files go, so a kill in between leaves a row twice on disk, never none; readers
        (:func:`load`) keep one row per key. Returns the number of rows merged."""
        self.drop_merged()
        keys = self.point_keys()
        if len(keys) < max(least, 1):
            return 0
        pa = _arrow()
        table = _read_rows(pa, [self.row_path(k) for k in keys])
        name = "batch-" + hashlib.sha256("\n".join(keys).encode()).hexdigest()[:32] + ".parquet"
        buffer = io.BytesIO()
        pa.parquet.write_table(table, buffer, compression="zstd")
        outputs.write_bytes(os.path.join(self.path, POINTS, name), buffer.getvalue(), self.option)
        for key in keys:
            os.unlink(self.row_path(key))
        return len(keys)

    def row_path(self, key: str) -> str:
        return os.path.join(self.path, POINTS, f"{key}.parquet")

    def json_path(self, key: str) -> str:
        return os.path.join(self.path, DOCUMENTS, f"{key}.json")

    def put(self, key: str, row: bytes, document_text: str) -> None:
        """Stores one point: its JSON, then its row (:func:`row_bytes`; the row's file marks the
        point stored)."""
        outputs.write_text(self.json_path(key), document_text, self.option)
        outputs.write_bytes(self.row_path(key), row, self.option)


def row_bytes(row: Dict[str, Any]) -> bytes:
    """One row as a Parquet file's bytes (same row, same bytes)."""
    pa = _arrow()
    table = pa.Table.from_pylist([row], schema=schema())
    buffer = io.BytesIO()
    pa.parquet.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def load(path: str, keys: Optional[List[str]] = None):
    """The store's rows as a pandas DataFrame (``keys``: only these, in this order; otherwise
    every row, ordered by the options then the key)."""
    pa = _arrow()
    import pandas as pd

    store = Store(path)
    if not os.path.isdir(os.path.join(store.path, POINTS)) or not store.marked():
        raise ConfigError(f"{store.path} is not a raidlab sweep store (no {MARK})")
    files = store.batches() + [store.row_path(k) for k in store.point_keys()]
    table = _read_rows(pa, files) if files else schema().empty_table()
    frame = table.to_pandas(types_mapper={pa.bool_(): pd.BooleanDtype()}.get)  # nullable: None stays None
    frame = frame.drop_duplicates("key").reset_index(drop=True)  # a kill mid-compaction: a row twice
    if keys is not None:
        missing = sorted(set(keys) - set(frame.key))
        if missing:
            raise ConfigError(f"{store.path}: point {missing[0]} is not stored")
        return frame.set_index("key", drop=False).loc[list(keys)].reset_index(drop=True)
    order = [c for c in option_names() if c in frame.columns] + ["key"]
    return frame.sort_values(order, na_position="first", kind="stable").reset_index(drop=True)


def _read_rows(pa, files: List[str]):
    """Row files as one table with today's schema: columns added since a file was written read
    as nulls, columns no longer declared are left out."""
    import pyarrow.dataset as ds

    try:
        return ds.dataset(files, schema=schema(), format="parquet").to_table()
    except (pa.ArrowInvalid, OSError) as error:
        # Only damage from outside makes a stored file unreadable (raidlab renames whole files
        # into place): name it, and how to get the point back.
        bad = next((f for f in files if not _readable(pa, f)), None)
        where = f"{bad} is not a readable Parquet file" if bad else f"a row file is not readable ({error})"
        raise ConfigError(f"sweep store: {where}; delete it and run the sweep again to recompute "
                          "its points") from None


def _readable(pa, path: str) -> bool:
    try:
        pa.parquet.ParquetFile(path).metadata
    except (pa.ArrowInvalid, OSError):
        return False
    return True
