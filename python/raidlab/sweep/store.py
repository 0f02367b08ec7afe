"""A sweep's store: a directory raidlab owns, one Parquet file and one JSON file per point.

::

    DIR/raidlab-sweep.json       marks the directory as raidlab's store (format, version)
    DIR/.raidlab-sweep.lock      the store's lock (empty; only its flock(2) matters)
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

One sweep writes into a store at a time: a sweep holds an exclusive ``flock(2)`` on
``DIR/.raidlab-sweep.lock`` from opening the store (its start-up tidying included) to the end of
its compaction. A second sweep into the same store waits for it (saying so), then reads what is
stored and runs only the rest, so the same sweep started twice runs each point once and two
different sweeps leave every row once. The lock is the kernel's: it goes when its holder exits,
however it ends, so a killed sweep never leaves the store locked. Readers
(:func:`load`, ``load_sweep``) take no lock: a store is read while a sweep writes into it, and
a file a running compaction removes is read again from the files that replace it.

Every file is read through :mod:`raidlab.sweep.storefiles`, which checks it (a regular file,
the mark's JSON nesting capped, each row file's columns and keys) and names a damaged or
foreign file in one line before any point runs.

A directory is taken as a store when it is empty, missing (its parent must exist) or holds the
mark; raidlab writes into a non-empty directory it did not make only with ``--force``, and then
only adds its own files.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
from typing import Callable, List, Optional, Set, Tuple

from raidlab import _core, inputs, outputs
from raidlab.errors import ConfigError
from raidlab.sweep import storefiles
from raidlab.sweep.points import option_names

MARK = "raidlab-sweep.json"
LOCK = ".raidlab-sweep.lock"
FORMAT = 1
POINTS, DOCUMENTS = "points", "json"
_KEY = storefiles.KEY
_BATCH = re.compile(r"batch-[0-9a-f]{32}\.parquet")
_LEFTOVER = re.compile(r"\.(batch-)?[0-9a-f]{32}\.(parquet|json)\..+\.tmp")
#: One-row files merged into one when a sweep ends with at least this many of them.
COMPACT_AT = 256
#: Times :func:`load` lists the files again when a compaction beside it removed one it listed.
RELIST_TRIES = 20


def _arrow():
    return storefiles.arrow()


Say = Callable[[str], None]


def _listdir(path: str) -> List[str]:
    """The names in a store's directory (none when it is missing yet); errors are one line."""
    try:
        return os.listdir(path)
    except FileNotFoundError:
        return []
    except NotADirectoryError:
        raise ConfigError(f"sweep store: {inputs.show_path(path)} is not a directory; move it away and run "
                          "the sweep again") from None
    except OSError as error:
        raise ConfigError(f"sweep store: cannot read {inputs.show_path(path)}: {error.strerror}") from None


class Store:
    """An open store: the keys already stored, and atomic writes of new points.

    Every step that changes the store (opening it, which tidies up; writing a point;
    compacting) runs under the store's lock; ``Store.open(..., hold=True)`` keeps the lock until
    :meth:`close` (or the end of a ``with`` block), as a sweep does for its whole run."""

    def __init__(self, path: str, option: str = "--out") -> None:
        self.path = os.fspath(path)
        self.option = option
        self._lock_fd: Optional[int] = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def open(cls, path: str, force: bool = False, option: str = "--out", hold: bool = False,
             say: Optional[Say] = None) -> "Store":
        """Opens the store at ``path``, creating it (and its mark) when needed; refuses a
        non-empty directory raidlab did not make unless ``force``. ``hold``: keep the store's
        lock until :meth:`close`; ``say`` hears that another sweep holds it (this one waits)."""
        store = cls.check(path, force, option)
        outputs.make_directory(store.path, option)
        store._acquire(say)
        try:
            store._refuse_foreign(force)  # again, under the lock
            if not store.marked():
                mark = {"raidlab": {"version": _core.__version__, "store": "sweep", "format": FORMAT}}
                outputs.write_text(os.path.join(store.path, MARK), json.dumps(mark, indent=2) + "\n", option)
            for sub in (POINTS, DOCUMENTS):
                outputs.make_directory(os.path.join(store.path, sub), option)
            store.clean()
        except BaseException:
            store.close()
            raise
        if not hold:
            store.close()
        return store

    @classmethod
    def check(cls, path: str, force: bool = False, option: str = "--out") -> "Store":
        """Raises ConfigError unless ``path`` may be (or become) a store; creates nothing."""
        _arrow()  # before any point runs: a sweep without pyarrow stops here, in one line
        store = cls(path, option)
        store._refuse_foreign(force)
        return store

    def _refuse_foreign(self, force: bool) -> None:
        if force or not os.path.isdir(self.path) or self.marked():
            return
        if set(_listdir(self.path)) - {LOCK}:  # the lock alone: another sweep is creating the store
            raise ConfigError(f"refusing to write {self.option} {self.path}: it is a non-empty directory that "
                              "is not a raidlab sweep store (add --force to add the sweep's files to it)")

    # -- the lock --------------------------------------------------------------------------------

    def _acquire(self, say: Optional[Say] = None) -> None:
        """Takes the store's exclusive lock (flock(2) on DIR/.raidlab-sweep.lock), waiting while
        another sweep holds it."""
        path = os.path.join(self.path, LOCK)
        flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_CLOEXEC", 0))

        def refuse(why: str) -> ConfigError:
            return ConfigError(f"cannot lock sweep store {inputs.show_path(self.path)}: {LOCK} {why}; "
                               f"delete it (raidlab makes it anew) and run the sweep again")

        try:
            descriptor = os.open(path, flags, 0o644)  # opening a FIFO with O_NONBLOCK does not block
        except OSError as error:
            raise refuse(f"cannot be opened ({error.strerror})") from None
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise refuse("is not a regular file")
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                (say or (lambda line: None))(f"another sweep is writing into {inputs.show_path(self.path)}: "
                                             "waiting for it to finish")
                fcntl.flock(descriptor, fcntl.LOCK_EX)
        except OSError as error:
            os.close(descriptor)
            raise refuse(f"cannot be locked ({error.strerror})") from None
        except BaseException:
            os.close(descriptor)
            raise
        self._lock_fd = descriptor

    def close(self) -> None:
        """Releases the store's lock (if this store holds it)."""
        descriptor, self._lock_fd = self._lock_fd, None
        if descriptor is not None:
            # LOCK_UN releases it even where forked workers still share the descriptor
            with contextlib.suppress(OSError):
                fcntl.flock(descriptor, fcntl.LOCK_UN)
            os.close(descriptor)

    @contextlib.contextmanager
    def _locked(self):
        """The lock for one step: already held (a sweep's whole run), or taken for the step."""
        if self._lock_fd is not None:
            yield
            return
        self._acquire()
        try:
            yield
        finally:
            self.close()

    # -- reading -------------------------------------------------------------------------------

    def marked(self) -> bool:
        """True when the store's mark is there (a damaged mark is a one-line ConfigError)."""
        document = storefiles.read_mark(os.path.join(self.path, MARK))
        block = document.get("raidlab") if isinstance(document, dict) else None
        if not (isinstance(block, dict) and block.get("store") == "sweep"):
            return False
        if block.get("format", FORMAT) != FORMAT:
            raise ConfigError(f"sweep store {inputs.show_path(self.path)} has format "
                              f"{inputs.show_path(repr(block.get('format')), 40)}; this raidlab reads format "
                              f"{FORMAT} (a newer raidlab wrote it?)")
        return True

    def clean(self) -> None:
        """Removes temporary files a killed sweep left (only raidlab's own names), and one-row
        files a killed compaction left behind."""
        with self._locked():
            for sub in (POINTS, DOCUMENTS):
                directory = os.path.join(self.path, sub)
                for name in _listdir(directory):
                    if _LEFTOVER.fullmatch(name):
                        with contextlib.suppress(OSError):
                            os.unlink(os.path.join(directory, name))
            self.drop_merged()

    def _names(self) -> List[str]:
        return sorted(_listdir(os.path.join(self.path, POINTS)))

    def point_keys(self) -> List[str]:
        """Keys stored one row per file (``KEY.parquet``)."""
        return [n[:-8] for n in self._names() if n.endswith(".parquet") and _KEY.fullmatch(n[:-8])]

    def batches(self) -> List[str]:
        """Paths of the compacted row files (``batch-HASH.parquet``), by name."""
        return [os.path.join(self.path, POINTS, n) for n in self._names() if _BATCH.fullmatch(n)]

    def _read(self, files: List[Tuple[str, Optional[str]]],
              keys_only: bool = False) -> Tuple[List[Tuple[str, Optional[str], object]], bool]:
        """The checked rows of each ``(path, key)`` still there, and whether every one was
        (``keys_only``: every file checked, only its key column read)."""
        found = [(path, key, storefiles.read_rows(path, key, keys_only)) for path, key in files]
        present = [entry for entry in found if entry[2] is not None]
        return present, len(present) == len(found)

    def _files(self) -> List[Tuple[str, Optional[str]]]:
        """The row files, ``(path, key)`` (key None for a batch); a name raidlab does not write
        is refused, as Parquet readers of ``points/`` would read it as rows (they skip only
        names that start with ``.`` or ``_``, where raidlab's temporary files are)."""
        for name in self._names():
            if not name.startswith((".", "_")) and not _BATCH.fullmatch(name) and not (
                    name.endswith(".parquet") and _KEY.fullmatch(name[:-8])):
                path = os.path.join(self.path, POINTS, name)
                raise ConfigError(f"sweep store: {inputs.show_path(path)} is not a file raidlab writes (a "
                                  f"Parquet reader of {POINTS}/ would take it for rows); move it out of "
                                  f"{inputs.show_path(os.path.dirname(path))}")
        return [(path, None) for path in self.batches()] + [(self.row_path(k), k) for k in self.point_keys()]

    def rows(self):
        """Every stored row, checked, as one Arrow table. A file a compaction beside this reader
        removed sends it back to list the files again; while a compaction is half done a row may
        be there twice (:func:`load` keeps one)."""
        for _ in range(RELIST_TRIES):
            present, complete = self._read(self._files())
            if complete:
                return storefiles.concat([table for _, _, table in present])
        raise ConfigError(f"sweep store {inputs.show_path(self.path)}: its files kept changing while they "
                          "were read; read it again")

    def batch_keys(self) -> Set[str]:
        """Keys of the rows in compacted files."""
        present, _ = self._read([(path, None) for path in self.batches()], keys_only=True)
        return {key for _, _, table in present for key in table.column("key").to_pylist()}

    def keys(self) -> Set[str]:
        """Keys of the points stored: a row file, or a row in a compacted file. Every file is
        read whole and checked (about 3 ms a one-row file), so a damaged or foreign one is found
        before any point runs, not when the rows are merged after they all ran."""
        return set(self.rows().column("key").to_pylist())

    # -- writing -------------------------------------------------------------------------------

    def drop_merged(self) -> None:
        """Removes one-row files whose row a compacted file already holds (a compaction was
        killed before it removed them)."""
        with self._locked():
            singles = self.point_keys()
            merged = self.batch_keys() if singles else set()
            for key in singles:
                if key in merged:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(self.row_path(key))

    def compact(self, least: int = COMPACT_AT) -> int:
        """Merges the one-row files into one file, when there are at least ``least`` of them, so
        a large store loads as a few files. The merged file is written (atomically) before the
        one-row files go, so a kill in between leaves a row twice on disk, never none; readers
        (:func:`load`) keep one row per key, and the next opening removes the one-row copies.
        Returns the number of rows merged."""
        with self._locked():
            self.drop_merged()
            if len(self.point_keys()) < max(least, 1):
                return 0
            present, _ = self._read([(self.row_path(k), k) for k in self.point_keys()])
            keys = [key for _, key, _ in present]
            table = storefiles.concat([table for _, _, table in present])
            name = "batch-" + hashlib.sha256("\n".join(keys).encode()).hexdigest()[:32] + ".parquet"
            outputs.write_bytes(os.path.join(self.path, POINTS, name), storefiles.table_bytes(table), self.option)
            for key in keys:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.row_path(key))
            return len(keys)

    def row_path(self, key: str) -> str:
        return os.path.join(self.path, POINTS, f"{key}.parquet")

    def json_path(self, key: str) -> str:
        return os.path.join(self.path, DOCUMENTS, f"{key}.json")

    def put(self, key: str, row: bytes, document_text: str) -> None:
        """Stores one point: its JSON, then its row (:func:`storefiles.row_bytes`; the row's file
        marks the point stored)."""
        with self._locked():
            outputs.write_text(self.json_path(key), document_text, self.option)
            outputs.write_bytes(self.row_path(key), row, self.option)


def load(path: str, keys: Optional[List[str]] = None):
    """The store's rows as a pandas DataFrame (``keys``: only these, in this order; otherwise
    every row, ordered by the options then the key). Every file is checked as it is read: a
    damaged or foreign one is a one-line ConfigError naming it."""
    pa = _arrow()
    import pandas as pd

    store = Store(path)
    if not store.marked():
        raise ConfigError(f"{store.path} is not a raidlab sweep store (no {MARK})")
    table = store.rows()
    # nullable booleans: None stays None; one thread, as the files were read (storefiles.read_rows)
    frame = table.to_pandas(types_mapper={pa.bool_(): pd.BooleanDtype()}.get, use_threads=False)
    frame = frame.drop_duplicates("key").reset_index(drop=True)  # a compaction half done: a row twice
    if keys is not None:
        missing = sorted(set(keys) - set(frame.key))
        if missing:
            raise ConfigError(f"{store.path}: point {missing[0]} is not stored")
        return frame.set_index("key", drop=False).loc[list(keys)].reset_index(drop=True)
    order = [c for c in option_names() if c in frame.columns] + ["key"]
    return frame.sort_values(order, na_position="first", kind="stable").reset_index(drop=True)
