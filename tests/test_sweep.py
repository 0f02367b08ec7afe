"""raidlab sweep: grid expansion, the 16-point example, resume after SIGKILL, the
store's columns and units, and one-line errors."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import raidlab
from raidlab.sweep.grid import expand, parse

from conftest import REPO_ROOT, run_cli

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

EXAMPLE = REPO_ROOT / "examples" / "sweep-16.toml"
AXIS_KEYS = ("seed", "devices", "chunk_kib", "nr_requests", "rmw_level")


# -- grid expansion ------------------------------------------------------------------------------


@st.composite
def grids(draw):
    """Axes of distinct values, and excludes that are whole combinations of them."""
    keys = draw(st.lists(st.sampled_from(AXIS_KEYS), min_size=1, max_size=4, unique=True))
    axes = {k: draw(st.lists(st.integers(0, 50), min_size=1, max_size=4, unique=True)) for k in keys}
    combos = list(itertools.product(*axes.values()))
    chosen = draw(st.lists(st.sampled_from(combos), max_size=len(combos)))
    return axes, [dict(zip(keys, combo)) for combo in chosen]


@settings(max_examples=200, deadline=None)
@given(grids())
def test_points_are_the_product_of_the_axes_minus_the_excludes(case):
    axes, excludes = case
    product = 1
    for values in axes.values():
        product *= len(values)
    distinct_excluded = {tuple(sorted(e.items())) for e in excludes}
    points = expand(parse({"sweep": {"preset": "wal"}, "grid": axes, "exclude": excludes}))
    assert len(points) == product - len(distinct_excluded)
    seen = {tuple(p.settings[k] for k in axes) for p in points}
    assert len(seen) == len(points)  # each combination once
    assert not seen & {tuple(e[k] for k in axes) for e in excludes}
    assert all(p.settings["preset"] == "wal" for p in points)


def test_partial_excludes_zip_and_includes():
    grid = parse({"grid": {"level": [5, 10], "chunk-kib": [64, 128, 512]},
                  "zip": [{"devices": [4, 6], "drive": ["nearline-7200", "x25e-slc"]}],
                  "exclude": [{"level": 10, "chunk_kib": [64, 128]}],
                  "include": [{"level": 6, "devices": 8}]})
    points = expand(grid)
    assert len(points) == 2 * 3 * 2 - 2 * 2 + 1
    assert {(p.settings["devices"], p.settings["drive"]) for p in points[:-1]} == \
        {(4, "nearline-7200"), (6, "x25e-slc")}  # zipped axes move together
    assert points[-1].settings == {"level": 6, "devices": 8}
    assert points[0].label() == "point 0 (level=5, chunk_kib=64, devices=4, drive=nearline-7200)"
    zipped = expand(parse({"sweep": {"mode": "zip"}, "grid": {"level": [5, 6, 10], "devices": [4, 5, 6]}}))
    assert [(p.settings["level"], p.settings["devices"]) for p in zipped] == [(5, 4), (6, 5), (10, 6)]


def _write_toml(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# -- the 16-point example, resume after SIGKILL --------------------------------------------------


def _sweep(args, timeout=300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "raidlab", "sweep", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def _files(store: Path):
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The 16-point example run once from start to end (2 local processes)."""
    store = tmp_path_factory.mktemp("reference") / "store"
    done = _sweep([EXAMPLE, "--out", store, "--jobs", "2"])
    assert done.returncode == 0, done.stderr
    return store, done


def test_the_example_gives_16_rows(reference):
    store, done = reference
    assert done.stdout.splitlines()[0].startswith("16 points: 0 already stored, 16 to run on 2 local processes, about ")
    assert "sweep: 16 rows in" in done.stdout and "ran 16 in" in done.stdout
    frame = raidlab.load_sweep(store)
    assert len(frame) == 16 and frame.key.is_unique
    assert sorted(set(frame.level)) == [5, 10] and sorted(set(frame.devices)) == [4, 6]
    assert sorted(set(frame.chunk_kib)) == [64, 512] and set(frame.drive) == {"nearline-7200"}
    assert set(frame.preset) == {"oltp-postgres", "wal"} and set(frame.runtime_s) == {10.0}
    assert set(frame.raidlab_version) == {raidlab.__version__}
    assert len(list((store / "json").glob("*.json"))) == 16


def test_a_point_matches_raidlab_sim(reference):
    """A row's numbers are raidlab sim's for the same options, and its JSON is sim --json's."""
    store, _ = reference
    frame = raidlab.load_sweep(store)
    row = frame[(frame.level == 10) & (frame.devices == 6) & (frame.chunk_kib == 64)
                & (frame.preset == "oltp-postgres")].iloc[0]
    sim = run_cli(["sim", "--level", "10", "--devices", "6", "--chunk-kib", "64", "--drive", "nearline-7200",
                   "--preset", "oltp-postgres", "--runtime-s", "10", "--json"])
    assert sim.status == 0, sim.stderr
    assert (store / "json" / f"{row.key}.json").read_text() == sim.stdout
    job = sim.json()["jobs"][0]
    assert row.read_iops == job["read"]["iops"] and row.write_iops == job["write"]["iops"]
    assert row.read_latency_ns_p99 == job["read"]["clat_ns"]["percentile"]["99.000000"]
    assert row.write_latency_ns_p99_9 == job["write"]["clat_ns"]["percentile"]["99.900000"]
    assert row.read_mib_s == pytest.approx(job["read"]["bw_bytes"] / 2**20)


def test_killed_and_rerun_gives_the_same_rows(reference, tmp_path):
    """SIGKILL mid-sweep (several times), then a rerun: the same 16 rows and numbers, and the
    same bytes in every file."""
    store = tmp_path / "store"
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    for kill_after_rows in (1, 5):
        process = subprocess.Popen([sys.executable, "-m", "raidlab", "sweep", str(EXAMPLE), "--out", str(store),
                                    "--jobs", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if (store / "points").is_dir() and len(list((store / "points").glob("*.parquet"))) >= kill_after_rows:
                break
            time.sleep(0.002)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        partial = raidlab.load_sweep(store)
        assert kill_after_rows <= len(partial) < 16  # killed mid-sweep: whole rows only
        assert partial.key.is_unique
    done = _sweep([EXAMPLE, "--out", store, "--jobs", "2"])
    assert done.returncode == 0, done.stderr
    assert f"16 points: {len(partial)} already stored, {16 - len(partial)} to run" in done.stdout
    pd.testing.assert_frame_equal(raidlab.load_sweep(store), raidlab.load_sweep(reference[0]))
    assert _files(store) == _files(reference[0])
    again = _sweep([EXAMPLE, "--out", store])
    assert "16 points: 16 already stored, 0 to run" in again.stdout and "ran none" in again.stdout


# -- columns and units ---------------------------------------------------------------------------


def test_columns_and_units(reference):
    frame = raidlab.load_sweep(reference[0])
    options = ["level", "devices", "layout", "chunk_kib", "drive", "controller", "scheduler", "stripe_cache_size",
               "seed", "runtime_s", "failed", "fail", "replace", "spare", "preset", "workload"]
    metrics = ["read_iops", "write_iops", "sync_iops", "read_mib_s", "write_mib_s",
               *(f"{d}_latency_ns_{p}" for d in ("read", "write") for p in ("p50", "p99", "p99_9")),
               "member_util_pct_mean", "member_util_pct_max", "rebuild_s", "data_loss", "simulated_s"]
    assert set(options + metrics + ["key", "raidlab_version"]) <= set(frame.columns)
    assert frame.columns[:3].tolist() == ["key", "raidlab_version", "level"]
    assert str(frame.seed.dtype) == "uint64" and str(frame.level.dtype) == "int64"
    assert set(frame.layout) == {"left-symmetric", "n2"} and set(frame.failed) == {""}
    oltp = frame[frame.preset == "oltp-postgres"]
    # 8 KiB requests: MiB/s is IOPS x 8 KiB / 2^20; disks: latencies of milliseconds, in ns
    assert (oltp.read_mib_s - oltp.read_iops * 8192 / 2**20).abs().max() < 1e-6
    assert (oltp.read_latency_ns_p50 > 1e6).all() and (oltp.read_latency_ns_p99 < 1e10).all()
    assert (oltp.read_latency_ns_p50 <= oltp.read_latency_ns_p99).all()
    assert (oltp.read_latency_ns_p99 <= oltp.read_latency_ns_p99_9).all()
    assert frame.member_util_pct_max.between(0, 100).all()
    wal = frame[frame.preset == "wal"]
    assert wal.read_iops.eq(0).all() and wal.read_latency_ns_p99.isna().all() and (wal.sync_iops > 0).all()
    assert (frame.simulated_s == 10.0).all()
    assert frame.rebuild_s.isna().all() and frame.data_loss.isna().all()  # no failures: no verdict


def test_failures_give_rebuild_time_and_a_data_loss_verdict(tmp_path):
    sweep = {"sweep": {"level": 5, "devices": 4, "drive": "nearline-7200", "preset": "oltp-postgres",
                       "runtime_s": 2},
             "grid": {"fail": ["", "1@0.5s", ["1@0.5s", "2@1s"]]},
             "include": [{"fail": "1@0.5s", "replace": "1@1s"}]}
    frame = raidlab.sweep(sweep, out=tmp_path / "store", jobs=1)
    assert frame.fail.tolist() == ["", "1@0.5s", "1@0.5s,2@1s", "1@0.5s"]
    assert frame["replace"].tolist() == ["", "", "", "1@1s"]
    assert frame.data_loss.tolist() == [pd.NA, False, True, False]
    assert frame.data_loss_at_s.tolist()[2] == 1.0
    assert pd.isna(frame.rebuild_s[1]) and frame.rebuild_s[3] > 0 and frame.rebuild_extrapolated[3]
    assert frame.member_util_pct_mean[0] > 90


def test_rerun_from_python_runs_nothing_and_same_runs_are_kept_once(tmp_path):
    sweep = {"sweep": {"drive": "null", "preset": "wal", "runtime_s": 0.05},
             "grid": {"level": [5, 6], "seed": [1, 2]},
             "include": [{"level": 5, "seed": 1}]}  # the same run as point 0
    store = tmp_path / "store"
    first = raidlab.sweep(sweep, out=store, jobs=2)
    assert len(first) == 4 and first.seed.tolist() == [1, 2, 1, 2]
    stamps = {p: p.stat().st_mtime_ns for p in (store / "points").iterdir()}
    again = raidlab.sweep(sweep, out=store, jobs=2)
    pd.testing.assert_frame_equal(first, again)
    assert {p: p.stat().st_mtime_ns for p in (store / "points").iterdir()} == stamps


# -- errors: one line, exit 2, nothing run -------------------------------------------------------


def test_a_bad_point_is_named_before_anything_runs(tmp_path):
    sweep = _write_toml(tmp_path / "bad.toml", '[sweep]\npreset = "wal"\ndrive = "null"\n'
                                                '[grid]\nlevel = [5, 6]\ndevices = [4, 2]\n')
    run = run_cli(["sweep", str(sweep), "--out", str(tmp_path / "store")])
    assert run.status == 2 and len(run.stderr_lines) == 1
    assert run.stderr_lines[0].startswith(f"raidlab: error: sweep file {sweep}: point 3 (level=6, devices=2): ")
    assert not (tmp_path / "store").exists()
    lost = _write_toml(tmp_path / "lost.toml", '[sweep]\npreset = "wal"\ndrive = "null"\nlevel = 5\n'
                                               '[grid]\nfailed = ["", "0", "0,1"]\n')
    run = run_cli(["sweep", str(lost), "--out", str(tmp_path / "store")])
    assert run.status == 2 and "point 2 (failed=0,1): " in run.stderr and "data is lost" in run.stderr


@pytest.mark.parametrize("text, message", [
    ('[grid]\nlevle = [5]\n', "[grid] unknown option 'levle'"),
    ('[grid]\nlevel = []\n', "[grid] level is an empty list"),
    ('[grid]\nlevel = 5\n', "[grid] level must be a list of values"),
    ('[sweep]\nlevel = 5\n[grid]\nlevel = [5, 6]\n', "level is both in [sweep] and in [grid]"),
    ('[[zip]]\nlevel = [5, 6]\ndevices = [4]\n', "lists of one length: level has 2, devices has 1"),
    ('[grids]\n', "unknown table [grids]"),
    ('[grid]\nlevel = [5]\n[[exclude]]\nlevel = 5\n', "every point is excluded"),
    ('[sweep]\npreset = "wal"\n[grid]\nfail = ["1@x"]\n', "point 0 (fail=1@x): --fail: 'x' is not a time"),
])
def test_bad_sweep_files_are_one_line_errors(tmp_path, text, message):
    sweep = _write_toml(tmp_path / "s.toml", text)
    run = run_cli(["sweep", str(sweep), "--out", str(tmp_path / "store")])
    assert run.status == 2 and len(run.stderr_lines) == 1 and message in run.stderr, run.stderr


def test_the_store_is_raidlabs_own(tmp_path):
    sweep = _write_toml(tmp_path / "s.toml", '[sweep]\npreset = "wal"\ndrive = "null"\nruntime_s = 0.05\n'
                                             '[grid]\nlevel = [5]\n')
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    run = run_cli(["sweep", str(sweep), "--out", str(foreign)])
    assert run.status == 2 and "not a raidlab sweep store (add --force" in run.stderr
    assert sorted(os.listdir(foreign)) == ["notes.txt"]
    assert run_cli(["sweep", str(sweep), "--out", str(foreign), "--force"]).status == 0
    assert (foreign / "notes.txt").read_text() == "mine" and len(raidlab.load_sweep(foreign)) == 1
    run = run_cli(["sweep", str(sweep), "--out", str(tmp_path / "s.toml")])
    assert run.status == 2 and "is not a directory" in run.stderr
    with pytest.raises(raidlab.ConfigError, match="not a raidlab sweep store"):
        raidlab.load_sweep(tmp_path)


# -- any sweep document: points, or one RaidlabError --------------------------------------------

SCALARS = st.one_of(st.integers(-3, 70), st.sampled_from([0.5, 1e400, float("nan"), -1.0, 10**30]),
                    st.booleans(), st.sampled_from(["", "5", "raid6", "null", "wal", "1@0.1s", "0,1", "x", "n2"]))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=2), st.dictionaries(st.sampled_from(["a", "action"]),
                                                                            SCALARS, max_size=2))
KEYS = st.sampled_from(["level", "devices", "chunk-kib", "layout", "drive", "preset", "sysbench", "failed", "fail",
                        "replace", "spare", "seed", "runtime_s", "timeline", "controller", "mode", "bogus"])


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=4), st.dictionaries(KEYS, st.lists(VALUES, max_size=2), max_size=2),
       st.lists(st.dictionaries(KEYS, VALUES, max_size=2), max_size=2))
def test_any_sweep_document_resolves_or_is_one_error(fixed, axes, excludes):
    from raidlab.sweep import runner

    document = {"sweep": {"drive": "null", "preset": "wal", **fixed}, "grid": axes, "exclude": excludes}
    try:
        resolved, expanded = runner.resolve(document)
    except raidlab.RaidlabError as error:
        assert "\n" not in str(error) and str(error).startswith("sweep: ")
        return
    assert 1 <= len(resolved) <= expanded and len({r.key for r in resolved}) == len(resolved)


def test_compaction_keeps_every_row_once_even_when_killed_midway(tmp_path, monkeypatch):
    from raidlab.sweep import store as store_mod

    sweep = {"sweep": {"drive": "null", "preset": "wal", "runtime_s": 0.02}, "grid": {"seed": list(range(6))}}
    before = raidlab.sweep(sweep, out=tmp_path / "store", jobs=1)
    store = store_mod.Store.open(str(tmp_path / "store"))
    loaded = raidlab.load_sweep(store.path)
    singles = {k: Path(store.row_path(k)).read_bytes() for k in store.point_keys()}
    assert len(singles) == 6 and store.compact(least=4) == 6
    assert store.point_keys() == [] and len(store.batches()) == 1 and store.keys() == set(singles)
    pd.testing.assert_frame_equal(raidlab.load_sweep(store.path), loaded)
    assert loaded.key.tolist() == before.key.tolist()  # ordered by the options: seeds 0..5
    # a compaction killed after writing its file: the one-row files are still there
    for key, data in singles.items():
        Path(store.row_path(key)).write_bytes(data)
    frame = raidlab.load_sweep(store.path)
    assert len(frame) == 6 and frame.key.is_unique
    again = raidlab.sweep(sweep, out=tmp_path / "store", jobs=1)  # opening the store tidies up
    pd.testing.assert_frame_equal(again, before)
    assert store.point_keys() == [] and len(store.batches()) == 1
