"""The Python API for sweeps: raidlab.simulate takes what raidlab sim takes and gives DataFrames;
raidlab.sweep/load_sweep, reliability.analyze and planner.plan are exported; the example runs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import raidlab

from conftest import REPO_ROOT, run_cli

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def rebuilt():
    """raid5 x4 under load: member 1 fails at 0.5 s, its replacement rebuilds from 1 s."""
    return raidlab.simulate(level=5, devices=4, drive="nearline-7200", preset="oltp-postgres", runtime_s=3,
                            fail="1@0.5s", replace=["1@1s"], speed_limit_min=5000, seed=4)


def test_simulate_takes_what_raidlab_sim_takes(rebuilt):
    cli = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", "nearline-7200", "--preset", "oltp-postgres",
                   "--runtime-s", "3", "--fail", "1@0.5s", "--replace", "1@1s", "--speed-limit-min", "5000",
                   "--seed", "4", "--json"])
    assert cli.status == 0, cli.stderr
    assert cli.json() == rebuilt.to_dict()
    with pytest.raises(raidlab.ConfigError, match="fail=5: expected"):
        raidlab.simulate(drive="null", preset="wal", fail=5)


def test_result_dataframes_and_their_units(rebuilt):
    document = rebuilt.to_dict()
    jobs = rebuilt.jobs()
    assert jobs.columns.tolist() == ["job", "direction", "iops", "mib_s", "ios", "latency_ns_mean", "latency_ns_p50",
                                     "latency_ns_p99", "latency_ns_p99_9", "latency_ns_max"]
    read = document["jobs"][0]["read"]
    assert jobs.iops.tolist()[0] == read["iops"] and jobs.latency_ns_p99[0] == read["clat_ns"]["percentile"]["99.000000"]
    assert jobs.mib_s[0] == pytest.approx(read["bw_bytes"] / 2**20)
    members = rebuilt.members()
    assert members.member.tolist() == [0, 1, 2, 3] and members.util_pct.between(0, 100).all()
    assert members.read_mib[0] == pytest.approx(document["disk_util"][0]["read_sectors"] * 512 / 2**20)
    phases = rebuilt.phases()
    assert phases.phase.drop_duplicates().tolist() == ["optimal", "degraded", "rebuilding"]
    assert phases.start_s.drop_duplicates().tolist() == [0.0, 0.5, 1.0]
    timeline = rebuilt.timeline()
    assert timeline.t_s.tolist() == [0.0, 1.0, 2.0] and timeline.columns.tolist()[-1] == "rebuild_pct"
    percentiles = rebuilt.percentiles()
    assert set(percentiles.job) == {"oltp-postgres", "*"}
    mine = percentiles[(percentiles.job == "*") & (percentiles.direction == "read") & (percentiles.percent == 99.0)]
    assert mine.latency_ns.tolist() == [read["clat_ns"]["percentile"]["99.000000"]]
    html = rebuilt._repr_html_()
    assert html.startswith("<p><b>") and html.count("<table") == 2 and "member3" in html


def test_the_rest_of_the_api_is_exported():
    assert callable(raidlab.sweep) and callable(raidlab.load_sweep)
    assert callable(raidlab.reliability.analyze) and callable(raidlab.planner.plan)
    assert {"sweep", "load_sweep", "reliability", "planner"} <= set(raidlab.__all__)


def test_the_example_script_runs(tmp_path):
    store = tmp_path / "store"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "examples" / "sweep_example.py"), str(store)],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "16 points; oltp-postgres read IOPS and read p99 (ms) by chunk KiB:"
    assert len(raidlab.load_sweep(store)) == 16


def test_sweep_docstring_example():
    import doctest
    import importlib

    module = importlib.import_module("raidlab.sweep")  # raidlab.sweep is the function of the same name
    failures, tried = doctest.testmod(module)
    assert tried > 0 and failures == 0
