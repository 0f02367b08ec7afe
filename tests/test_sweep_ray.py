"""raidlab sweep on Ray: the example sweep as Ray tasks gives the same bytes as local
processes; compare runs on Ray unchanged. The one module that starts Ray: every start is a
local runtime of 2 CPUs without a dashboard (no network needed), stopped when the command ends.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import raidlab

from conftest import REPO_ROOT

pytest.importorskip("pyarrow")
pytest.importorskip("ray")

EXAMPLE = REPO_ROOT / "examples" / "sweep-16.toml"
#: Bound on one Ray run here (a local runtime starts in about 5 s on a quiet 2-core machine).
TIMEOUT_S = 300


def _raidlab(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # never join a stray cluster
    env["PYTHONWARNINGS"] = "ignore"
    return subprocess.run([sys.executable, "-m", "raidlab", *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT_S, env=env, stdin=subprocess.DEVNULL)


def _files(store):
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def test_ray_auto_gives_the_same_rows_and_bytes_as_local_processes(tmp_path):
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert _raidlab("sweep", EXAMPLE, "--out", local, "--jobs", "2").returncode == 0
    # half the points stored already: Ray runs only the other half, into the same store
    keys = sorted(raidlab.load_sweep(local).key)[:8]
    (on_ray / "points").mkdir(parents=True)
    (on_ray / "json").mkdir()
    for name in ("raidlab-sweep.json", *(f"points/{k}.parquet" for k in keys), *(f"json/{k}.json" for k in keys)):
        (on_ray / name).write_bytes((local / name).read_bytes())
    done = _raidlab("sweep", EXAMPLE, "--out", on_ray, "--ray", "auto", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert "16 points: 8 already stored, 8 to run on Ray (2 CPUs)" in done.stdout
    assert done.stderr == ""
    assert _files(on_ray) == _files(local)
    assert len(raidlab.load_sweep(on_ray)) == 16


def test_compare_on_ray_prints_what_it_prints_locally():
    args = ("compare", "--runtime-s", "0.2", "--states", "optimal,degraded", "--csv", "-")
    local = _raidlab(*args, "--jobs", "1")
    on_ray = _raidlab(*args, "--ray", "--jobs", "2")
    assert local.returncode == 0 and on_ray.returncode == 0, on_ray.stderr
    assert on_ray.stdout == local.stdout and len(local.stdout.strip().splitlines()) == 1 + 2 * 2 * 3


def test_an_unreachable_cluster_is_one_line_and_creates_nothing(tmp_path):
    done = _raidlab("sweep", EXAMPLE, "--out", tmp_path / "store", "--ray", "127.0.0.1:1")
    assert done.returncode == 2 and done.stderr.splitlines() == [
        "raidlab: error: --ray 127.0.0.1:1: cannot reach the Ray cluster at 127.0.0.1:1 (Connection refused)"]
    assert not (tmp_path / "store").exists()
