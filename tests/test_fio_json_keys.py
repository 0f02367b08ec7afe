"""raidlab's --json carries every key fio 3.x writes for the same job.

The real fio (installed by ``make deps``) runs a small job on a temporary file; raidlab runs the
same job file; every key of fio's document must be in raidlab's. json+ adds fio's histogram
bins, which fio's own ``fio_jsonplus_clat2csv`` reads; fio-plot draws raidlab's documents.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, run_process
from raidlab.report.fio_json import plat_index, plat_value

JOB = """[global]
filename={path}
size=4m
bs=4k
ioengine=psync
[mixed]
rw=randrw
rwmixread=70
runtime=1
"""
#: Option dicts: their keys are the job's options, not part of fio's format.
OPAQUE = ("job options", "global options", "bins")


def key_tree(node, path=""):
    keys = set()
    if isinstance(node, dict):
        for key, value in node.items():
            keys.add(f"{path}/{key}")
            if key not in OPAQUE:
                keys |= key_tree(value, f"{path}/{key}")
    elif isinstance(node, list):
        for item in node:
            keys |= key_tree(item, f"{path}[]")
    return keys


def fio_document(tmp_path: Path, fmt: str):
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed (make deps installs it)")
    job = tmp_path / "job.fio"
    job.write_text(JOB.format(path=tmp_path / "data"))
    done = subprocess.run(["fio", f"--output-format={fmt}", str(job)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout[done.stdout.index("{"):]), job


def test_every_key_of_fios_json_is_in_raidlabs(tmp_path):
    fio, job = fio_document(tmp_path, "json")
    run = run_cli(["sim", "--drive", "null", "--fio", str(job), "--runtime-s", "0.05", "--json"])
    assert run.status == 0, run.stderr
    ours = run.json()
    missing = key_tree(fio) - key_tree(ours)
    assert not missing, sorted(missing)
    assert len(key_tree(fio)) > 200
    # Honest values: simulated where known, zero where the simulator has no such thing.
    entry = ours["jobs"][0]
    assert entry["job options"] == {"rw": "randrw", "rwmixread": "70", "runtime": "1"}
    assert ours["global options"]["bs"] == "4k"
    assert entry["read"]["total_ios"] > 0 and entry["read"]["clat_ns"]["N"] == entry["read"]["total_ios"]
    assert entry["usr_cpu"] == 0.0 and entry["ctx"] == 0 and entry["read"]["slat_ns"]["N"] == 0
    assert entry["iodepth_level"]["1"] == 100.0  # psync: one I/O in flight
    ranges = sum(entry["latency_ns"].values()) + sum(entry["latency_us"].values()) + sum(entry["latency_ms"].values())
    assert ranges == pytest.approx(100.0)
    array = ours["array_device"]
    assert array["name"] == "md0" and array["read_ios"] == entry["read"]["total_ios"]
    assert array["aggr_read_ios"] == sum(d["read_ios"] for d in ours["disk_util"])
    assert set(fio["disk_util"][0]) <= set(array)  # the md device has every key of a disk


def test_json_plus_bins_are_fios_buckets_and_fios_own_tool_reads_them(tmp_path):
    fio, job = fio_document(tmp_path, "json+")
    run = run_cli(["sim", "--drive", "null", "--fio", str(job), "--runtime-s", "0.05", "--output-format", "json+"])
    assert run.status == 0, run.stderr
    ours = run.json()
    assert not key_tree(fio) - key_tree(ours)
    read = ours["jobs"][0]["read"]
    assert sum(read["clat_ns"]["bins"].values()) == read["total_ios"]
    # Every bin is keyed by a value fio itself writes for some bucket.
    assert all(plat_value(plat_index(int(value))) == int(value) for value in read["clat_ns"]["bins"])
    tool = shutil.which("fio_jsonplus_clat2csv")
    if tool is None:
        pytest.skip("fio_jsonplus_clat2csv is not installed (it comes with fio)")
    document = tmp_path / "plus.json"
    document.write_text(run.stdout)
    # The tool is Debian's script (`#!/usr/bin/env python3`, imports six): in a virtualenv that
    # shebang finds the venv's Python, which lacks six, so run it with the Python it ships for.
    python = "/usr/bin/python3" if tool.startswith("/usr/") and os.path.exists("/usr/bin/python3") else sys.executable
    done = subprocess.run([python, tool, str(document), str(tmp_path / "clat")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = (tmp_path / "clat_job0").read_text().splitlines()
    assert rows[0].startswith("nsec, read_slat_ns_count") and len(rows) > 1


def test_fio_buckets_restate_fios_maths():
    # stat.c: exact below 128 ns; then 64 buckets per power of two, valued at their midpoint.
    assert [plat_index(v) for v in (0, 1, 64, 127)] == [0, 1, 64, 127]
    assert plat_value(plat_index(36608)) == 36608  # a bin fio-3.33 wrote for a 36.6 µs read
    assert plat_value(plat_index(1_000_000)) == 1_003_520  # 2^19 + 58.5 × 2^13


def test_fio_plot_draws_raidlabs_json(tmp_path):
    pytest.importorskip("fio_plot", reason="fio-plot (PyPI) is in the test extra")
    fio_plot = shutil.which("fio-plot")
    if fio_plot is None:
        pytest.skip("the fio-plot command is not on PATH")
    runs = tmp_path / "runs"
    runs.mkdir()
    for depth in (1, 2, 4):
        job = tmp_path / f"qd{depth}.fio"
        job.write_text(f"[global]\nioengine=libaio\ndirect=1\nbs=4k\n[randread]\nrw=randread\niodepth={depth}\n"
                       "numjobs=1\nruntime=1\ntime_based\n")
        run = run_cli(["sim", "--drive", "null", "--fio", str(job), "--runtime-s", "0.02",
                       "--json", str(runs / f"randread-{depth}-1.json")])
        assert run.status == 0, run.stderr
    out = tmp_path / "chart.png"
    done = subprocess.run([fio_plot, "-i", str(runs), "-T", "raidlab", "-l", "-r", "randread", "-d", "1", "2", "4",
                           "-n", "1", "-o", str(out)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert out.stat().st_size > 10_000


def test_ramp_time_is_left_out_of_every_rate_and_log_as_fio_does(tmp_path):
    """ramp_time's seconds were once counted in the time base but not their I/O: iops_mean
    and bw_mean half of iops and bw, the phase's and md0's rates halved beside their members',
    fio logs with 0 IOPS while the drives were busy, and elapsed without the ramp."""
    job = tmp_path / "r.fio"
    job.write_text("[r]\nrw=randread\nbs=4k\niodepth=8\ndirect=1\nioengine=libaio\nruntime=2\n"
                   "ramp_time=2\ntime_based\n")
    out = tmp_path / "r.json"
    run = run_cli(["sim", "--level", "0", "--devices", "2", "--fio", str(job), "--json", str(out),
                   "--log-prefix", str(tmp_path / "lg")])
    assert run.status == 0, run.stderr
    doc = json.loads(out.read_text())
    read = doc["jobs"][0]["read"]
    assert read["runtime"] == 2000 and read["bw_samples"] == read["iops_samples"] == 2
    assert read["iops_mean"] == pytest.approx(read["iops"], rel=0.05)
    assert read["bw_mean"] == pytest.approx(read["bw"], rel=0.05)
    assert doc["jobs"][0]["elapsed"] == 4  # fio's wall time, ramp included
    assert doc["phases"][0]["read"]["iops"] == pytest.approx(read["iops"], rel=1e-6)
    # md0's measured reads over the measured 2 s equal the job's rate; the members, counted over
    # the whole 4 s (the ramp's reads included), add up to about as much.
    md0 = doc["array_device"]
    assert md0["measured_ns"] == 2_000_000_000
    members = sum(d["read_ios"] for d in doc["disk_util"]) / 4
    assert md0["read_ios"] / 2 == pytest.approx(read["iops"]) == pytest.approx(members, rel=0.05)
    from raidlab.report.table import iostat_table

    md0_row = next(line for line in iostat_table(doc).splitlines() if line.startswith("md0"))
    assert float(md0_row.split()[1]) == pytest.approx(read["iops"], abs=0.05)
    # fio logs nothing during the ramp: the first entry is the first measured second's.
    lines = (tmp_path / "lg_iops.1.log").read_text().splitlines()
    assert lines[0].startswith("3000, ") and int(lines[0].split(", ")[1]) > 0


@pytest.mark.parametrize("jobs, rate_ios_s_of", [
    # A job that starts late (startdelay): its phase's rate is over the 2 s it ran, not 0.
    ("[a]\nrw=randread\nbs=4k\niodepth=8\ndirect=1\nioengine=libaio\nruntime=2\nstartdelay=3\ntime_based\n", ["a"]),
    # Two jobs one after another, each with its own ramp: 4 measured seconds, not 5.
    ("[a]\nrw=randread\nbs=4k\niodepth=8\ndirect=1\nioengine=libaio\nruntime=2\nramp_time=1\ntime_based\n"
     "[b]\nstonewall\nrw=randread\nbs=4k\niodepth=8\ndirect=1\nioengine=libaio\nruntime=2\nramp_time=1\n"
     "time_based\n", ["a", "b"]),
])
def test_measured_time_is_each_jobs_own_window(tmp_path, jobs, rate_ios_s_of):
    """Beyond ramp_time: the measured part of a run is each job's own window
    (start + ramp to its end), so late and stonewalled jobs are timed right too."""
    job = tmp_path / "j.fio"
    job.write_text(jobs)
    out = tmp_path / "j.json"
    assert run_cli(["sim", "--level", "0", "--devices", "2", "--fio", str(job), "--json", str(out)]).status == 0
    doc = json.loads(out.read_text())
    entries = [j for j in doc["jobs"] if j["jobname"] in rate_ios_s_of]
    measured_s = len(entries) * 2
    ios = sum(j["read"]["total_ios"] for j in entries)
    assert doc["array_device"]["measured_ns"] == measured_s * 1_000_000_000
    assert doc["phases"][0]["read"]["runtime"] == measured_s * 1000
    assert doc["phases"][0]["read"]["iops"] == pytest.approx(ios / measured_s)
