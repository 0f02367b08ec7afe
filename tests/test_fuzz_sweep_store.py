"""Fuzzing a sweep store's files: damage one file of a real store in a random way (truncation,
random bytes, wrong column types, a FIFO, a directory or a symlink in its place, a runaway JSON
mark) and check that ``raidlab.load_sweep`` raises only :class:`raidlab.RaidlabError` and that
``raidlab sweep`` into the store exits 0 or 2 (one ``raidlab: error:`` line), never 70, never
hangs (each call runs under an alarm).

Bounded time as in test_fuzz_inputs.py: ``CI=true`` runs fewer examples, derandomized;
``RAIDLAB_FUZZ_SCALE`` multiplies the examples.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import raidlab
from conftest import run_cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pandas")

CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
SCALE = float(os.environ.get("RAIDLAB_FUZZ_SCALE", "1"))
#: Seconds one load or one sweep may take before it counts as a hang.
HANG_S = 15
FAST = '[sweep]\ndrive = "null"\npreset = "wal"\nruntime_s = 0.01\n'
TARGETS = ("mark", "lock", "batch", "row", "points", "json", "document")
COLUMN_TYPES = {"string": (pa.string(), "x"), "int64": (pa.int64(), 7), "float64": (pa.float64(), 1.5),
                "bool": (pa.bool_(), True), "list": (pa.list_(pa.string()), ["a"]), "null": (pa.null(), None)}


class Hang(BaseException):
    """A call that did not end within HANG_S (raised from SIGALRM, so nothing catches it)."""


@contextlib.contextmanager
def bounded(seconds: float = HANG_S):
    def alarm(*_):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A store with every kind of file: the mark, the lock, a batch of 3 rows, 2 one-row files
    and 5 JSON documents; and a sweep file of those 5 points and one more."""
    from raidlab.sweep import store as store_mod

    root = tmp_path_factory.mktemp("fuzz-store")
    store = root / "store"
    first = root / "three.toml"
    first.write_text(FAST + "[grid]\nseed = [1, 2, 3]\n")
    assert run_cli(["sweep", str(first), "--out", str(store), "--jobs", "1"]).status == 0
    assert store_mod.Store.open(str(store)).compact(least=1) == 3
    five = root / "five.toml"
    five.write_text(FAST + "[grid]\nseed = [1, 2, 3, 4, 5]\n")
    assert run_cli(["sweep", str(five), "--out", str(store), "--jobs", "1"]).status == 0
    six = root / "six.toml"
    six.write_text(FAST + "[grid]\nseed = [1, 2, 3, 4, 5, 6]\n")
    return store, six


def _target(store: Path, name: str) -> Path:
    points = store / "points"
    return {"mark": store / "raidlab-sweep.json", "lock": store / ".raidlab-sweep.lock",
            "batch": next(points.glob("batch-*.parquet")),
            "row": sorted(points.glob("[0-9a-f]*.parquet"))[0], "points": points, "json": store / "json",
            "document": sorted((store / "json").glob("*.json"))[0]}[name]


def _replace(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _retyped(path: Path, column: str, kind: str, how: str):
    table = pq.read_table(str(path))
    rows = len(table)
    if how == "drop" and column in table.column_names:
        return table.drop_columns([column])
    if how == "twice":
        return pa.concat_tables([table, table])
    arrow_type, value = COLUMN_TYPES[kind]
    values = pa.array([value] * rows, type=arrow_type)
    if column in table.column_names:
        return table.set_column(table.schema.get_field_index(column), column, values)
    return table.append_column(column, values)


DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("scribble"), st.floats(0, 1), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("bytes"), st.binary(max_size=300)),
    st.tuples(st.just("fifo")), st.tuples(st.just("directory")),
    st.tuples(st.just("symlink"), st.sampled_from(["/dev/zero", "/nonexistent/x", "."])),
    st.tuples(st.just("nested"), st.integers(1, 100_000), st.sampled_from(["[", '{"a":'])),
    st.tuples(st.just("json"), st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                                            lambda inner: st.lists(inner, max_size=3)
                                            | st.dictionaries(st.sampled_from(["raidlab", "store", "format", "x"]),
                                                              inner, max_size=3), max_leaves=8)),
    st.tuples(st.just("column"), st.sampled_from(["key", "seed", "level", "read_iops", "data_loss", "drive",
                                                  "raidlab_version", "bogus"]),
              st.sampled_from(sorted(COLUMN_TYPES)), st.sampled_from(["retype", "drop", "twice"])),
)


def _damage(path: Path, damage) -> None:
    kind = damage[0]
    if kind == "column":
        if path.suffix != ".parquet":
            return
        table = _retyped(path, *damage[1:])
        path.unlink()
        pq.write_table(table, str(path))
        return
    if kind in ("truncate", "scribble") and path.is_file():
        data = bytearray(path.read_bytes())
        at = int(damage[1] * len(data))
        data = data[:at] if kind == "truncate" else data[:at] + damage[2] + data[at + len(damage[2]):]
        path.write_bytes(bytes(data))
        return
    if kind in ("truncate", "scribble"):
        return
    _replace(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        path.symlink_to(damage[1])
    elif kind == "bytes":
        path.write_bytes(damage[1])
    elif kind == "nested":
        path.write_text(damage[2] * damage[1])
    else:
        import json

        path.write_text(json.dumps(damage[1]))


def _load_ends_well(store: Path) -> None:
    try:
        with bounded():
            frame = raidlab.load_sweep(store)
    except raidlab.RaidlabError as error:
        assert "\n" not in str(error)
        return
    assert frame.key.is_unique


def _sweep_ends_well(store: Path, sweep: Path) -> int:
    with bounded():
        run = run_cli(["sweep", str(sweep), "--out", str(store), "--jobs", "1"])
    assert "Traceback" not in run.stderr, run.stderr
    assert run.status in (0, 2), (run.status, run.stderr)
    if run.status == 2:
        assert len(run.stderr_lines) == 1 and run.stderr_lines[0].startswith("raidlab: error: "), run.stderr
        assert "internal error" not in run.stderr
    return run.status


@settings(max_examples=max(1, int((25 if CI else 50) * SCALE)), deadline=timedelta(seconds=60),
          derandomize=CI, database=None if CI else settings.default.database,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(target=st.sampled_from(TARGETS), damage=DAMAGE)
def test_a_damaged_store_is_one_error_or_a_good_sweep(template, tmp_path_factory, target, damage):
    source, sweep = template
    store = tmp_path_factory.mktemp("damaged") / "store"
    shutil.copytree(source, store, symlinks=True)
    _damage(_target(store, target), damage)
    _load_ends_well(store)
    if _sweep_ends_well(store, sweep) == 0:
        frame = raidlab.load_sweep(store)
        assert frame.key.is_unique and sorted(int(s) for s in frame.seed) == [1, 2, 3, 4, 5, 6]
    shutil.rmtree(store.parent, ignore_errors=True)
