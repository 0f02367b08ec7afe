"""The sweep store under concurrent writers and damage from outside.

Two sweeps into one store at once must each finish (the second waits for the store's lock) and
leave every point's row once, as raidlab and any Parquet reader see it. A damaged or foreign
file in a store (a FIFO, a runaway JSON mark, a Parquet file of the wrong shape) is one line
naming the file, exit status 2 from ``raidlab sweep`` before any point runs, and a
:class:`raidlab.ConfigError` from ``raidlab.load_sweep``: never a hang, exit 70 or a raw
pyarrow error. ``--jobs`` never starts more workers than there are points to run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import raidlab
from conftest import refused, run_bounded, run_cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ds = pytest.importorskip("pyarrow.dataset")
pytest.importorskip("pandas")

#: The fastest point that is still a real run: the null drive, the WAL preset, 10 ms simulated.
FAST = '[sweep]\ndrive = "null"\npreset = "wal"\nruntime_s = 0.01\n'


def _sweep_file(path: Path, seeds) -> Path:
    path.write_text(FAST + f"[grid]\nseed = {list(seeds)}\n")
    return path


def _start(sweep: Path, store: Path, jobs: int = 1) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "raidlab", "sweep", str(sweep), "--out", str(store),
                             "--jobs", str(jobs)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONWARNINGS="ignore"))


def _finish(process: subprocess.Popen, seconds: float = 120):
    out, err = process.communicate(timeout=seconds)
    return process.returncode, out, err


def _dataset_keys(store: Path):
    return ds.dataset(str(store / "points"), format="parquet").to_table().column("key").to_pylist()


@pytest.fixture
def store(tmp_path):
    """A store of two points (seeds 1 and 2), one row file each."""
    made = tmp_path / "store"
    done = run_cli(["sweep", str(_sweep_file(tmp_path / "two.toml", [1, 2])), "--out", str(made), "--jobs", "1"])
    assert done.status == 0, done.stderr
    return made


def _row_file(store: Path) -> Path:
    return sorted((store / "points").glob("[0-9a-f]*.parquet"))[0]


def _load_bounded(store: Path, seconds: float = 20) -> str:
    """``raidlab.load_sweep(store)`` in a process that must end in ``seconds``: 'rows N', or the
    RaidlabError's class and message (anything else is a traceback and a non-zero status)."""
    code = ("import sys, raidlab\n"
            "try:\n    print('rows', len(raidlab.load_sweep(sys.argv[1])))\n"
            "except raidlab.RaidlabError as error:\n    print(type(error).__name__, error)\n")
    done = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True,
                          timeout=seconds, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# -- two writers at once -----------------------------------------------------------------------


def test_two_sweeps_at_once_into_one_store_keep_every_row_once(store, tmp_path):
    """Two 260-point sweeps (each compacts its rows when it ends) into an existing store."""
    first = _start(_sweep_file(tmp_path / "a.toml", range(100, 360)), store)
    second = _start(_sweep_file(tmp_path / "b.toml", range(1000, 1260)), store)
    outcomes = [_finish(first), _finish(second)]
    assert [status for status, _, _ in outcomes] == [0, 0], [err for _, _, err in outcomes]
    keys = _dataset_keys(store)
    assert len(keys) == len(set(keys)) == 2 + 260 + 260
    frame = raidlab.load_sweep(store)
    assert len(frame) == 522 and frame.key.is_unique
    assert sorted(int(seed) for seed in frame.seed) == [1, 2, *range(100, 360), *range(1000, 1260)]


def test_the_same_sweep_twice_at_once_stores_each_point_once(store, tmp_path):
    sweep = _sweep_file(tmp_path / "same.toml", range(300, 560))
    runs = [_start(sweep, store), _start(sweep, store)]
    outcomes = [_finish(run) for run in runs]
    assert [status for status, _, _ in outcomes] == [0, 0], [err for _, _, err in outcomes]
    assert all(err == "" for _, _, err in outcomes), [err for _, _, err in outcomes]
    # one ran every point; the other found them stored (it waited, or started after)
    assert sum("260 points: 260 already stored, 0 to run" in out for _, out, _ in outcomes) == 1
    keys = _dataset_keys(store)
    assert len(keys) == len(set(keys)) == 262


# -- damaged or foreign files ------------------------------------------------------------------


def _rerun(store: Path, tmp_path: Path, seconds: float = 30):
    """The store's sweep plus one new point, as a bounded process."""
    return run_bounded(["sweep", str(_sweep_file(tmp_path / "three.toml", [1, 2, 3])), "--out", str(store),
                        "--jobs", "1"], seconds)


def _nothing_ran(store: Path) -> None:
    assert len(list((store / "json").glob("*.json"))) == 2  # the new point did not run


def test_a_fifo_as_the_mark_is_refused_without_hanging(store, tmp_path):
    mark = store / "raidlab-sweep.json"
    mark.unlink()
    os.mkfifo(mark)
    refused(_rerun(store, tmp_path), f"{mark}", "FIFO")
    _nothing_ran(store)
    loaded = _load_bounded(store)
    assert loaded.startswith("ConfigError ") and "FIFO" in loaded and str(mark) in loaded


def test_a_fifo_as_a_row_file_is_refused_without_hanging(store, tmp_path):
    row = _row_file(store)
    row.unlink()
    os.mkfifo(row)
    refused(_rerun(store, tmp_path), str(row), "FIFO", "delete it")
    _nothing_ran(store)
    loaded = _load_bounded(store)
    assert loaded.startswith("ConfigError ") and "FIFO" in loaded and str(row) in loaded


def test_a_mark_nested_70000_deep_is_one_line(store, tmp_path):
    mark = store / "raidlab-sweep.json"
    mark.write_text("[" * 70_000)
    refused(_rerun(store, tmp_path), str(mark), "nested more than")
    _nothing_ran(store)
    with pytest.raises(raidlab.ConfigError, match="raidlab-sweep.json.*nested more than"):
        raidlab.load_sweep(store)


def _rewrite(path: Path, table) -> None:
    path.unlink()
    pq.write_table(table, str(path))


def test_a_list_typed_key_column_is_refused(store, tmp_path):
    table = pq.read_table(str(_row_file(store)))
    keys = pa.array([[k] for k in table.column("key").to_pylist()], type=pa.list_(pa.string()))
    batch = store / "points" / ("batch-" + "0" * 32 + ".parquet")
    pq.write_table(table.set_column(0, "key", keys), str(batch))
    refused(_rerun(store, tmp_path), str(batch), "column key", "list<")
    _nothing_ran(store)
    with pytest.raises(raidlab.ConfigError, match=r"column key .*list<"):
        raidlab.load_sweep(store)


def test_a_mistyped_column_is_found_before_any_point_runs(store, tmp_path):
    row = _row_file(store)
    table = pq.read_table(str(row))
    index = table.schema.get_field_index("read_iops")
    _rewrite(row, table.set_column(index, "read_iops", pa.array(["fast"] * len(table), type=pa.string())))
    refused(_rerun(store, tmp_path), str(row), "column read_iops", "string", "double")
    _nothing_ran(store)
    with pytest.raises(raidlab.ConfigError, match="column read_iops"):
        raidlab.load_sweep(store)


def test_a_foreign_batch_file_without_key_is_refused_by_sweep_and_load_alike(store, tmp_path):
    batch = store / "points" / ("batch-" + "f" * 32 + ".parquet")
    pq.write_table(pa.table({"read_iops": [1.0, 2.0]}), str(batch))
    refused(_rerun(store, tmp_path), str(batch), "no key column")
    _nothing_ran(store)
    with pytest.raises(raidlab.ConfigError, match="no key column"):
        raidlab.load_sweep(store)


def test_load_sweep_names_a_truncated_row_file_and_raises_no_pyarrow_error(store):
    row = _row_file(store)
    row.write_bytes(row.read_bytes()[:40])
    with pytest.raises(raidlab.ConfigError, match=f"{row.name}.*not a readable Parquet file"):
        raidlab.load_sweep(store)


# -- workers -----------------------------------------------------------------------------------


def test_jobs_1024_on_two_points_starts_at_most_two_workers(tmp_path, monkeypatch):
    import multiprocessing.pool

    started = []
    real = multiprocessing.pool.Pool.__init__

    def spy(self, processes=None, *args, **kwargs):
        started.append(processes)
        if processes is None or processes > 2:
            raise AssertionError(f"a pool of {processes} workers for 2 points")
        real(self, processes, *args, **kwargs)

    monkeypatch.setattr(multiprocessing.pool.Pool, "__init__", spy)
    frame = raidlab.sweep(FAST_DICT, out=tmp_path / "store", jobs=1024)
    assert len(frame) == 2 and started and max(started) <= 2


FAST_DICT = {"sweep": {"drive": "null", "preset": "wal", "runtime_s": 0.01}, "grid": {"seed": [1, 2]}}


def test_jobs_1024_says_it_runs_as_many_processes_as_points(tmp_path):
    done = run_bounded(["sweep", str(_sweep_file(tmp_path / "two.toml", [1, 2])), "--out", str(tmp_path / "s"),
                        "--jobs", "1024"], 60)
    assert done.status == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(
        "2 points: 0 already stored, 2 to run on 2 local processes (--jobs 1024: one per point to run)")


@pytest.mark.parametrize("name", ["notes.parquet", "README", "extra"])
def test_a_file_raidlab_does_not_write_in_points_is_named_not_read_as_rows(store, tmp_path, name):
    """Parquet readers of points/ take every file not named .* or _* for rows; raidlab names it."""
    foreign = store / "points" / name
    if name == "extra":
        foreign.mkdir()
    else:
        pq.write_table(pa.table({"key": ["f" * 32]}), str(foreign))
    refused(_rerun(store, tmp_path), str(foreign), "not a file raidlab writes", "move it out")
    _nothing_ran(store)
    with pytest.raises(raidlab.ConfigError, match="not a file raidlab writes"):
        raidlab.load_sweep(store)


@pytest.mark.parametrize("column", ["seed", "raidlab_version"])
def test_a_row_file_without_a_point_identity_column_is_refused(store, tmp_path, column):
    # The key is a hash of the configuration, the seed and the version: a row that lost one of
    # them cannot say which point it is (loaded, its seed would be a null).
    row = _row_file(store)
    table = pq.read_table(str(row))
    _rewrite(row, table.drop([column]))
    refused(_rerun(store, tmp_path), str(row), f"no {column} column")
    _nothing_ran(store)
    with pytest.raises(raidlab.ConfigError, match=f"no {column} column"):
        raidlab.load_sweep(store)
