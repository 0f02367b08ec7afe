"""`raidlab sim`, `raidlab drives` and `raidlab.simulate`: fio-shaped JSON, determinism,
sysbench semantics, drive files, and one-line errors for bad workloads."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import raidlab
from raidlab.cli import main

FAST = ["--runtime-s", "0.5"]


def run_cli(args, capsys):
    status = main(args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def sim_json(args, capsys):
    status, out, err = run_cli(["sim", *args, "--json"], capsys)
    assert status == 0, err
    return json.loads(out), out


def test_json_has_fio_shape_and_records_seed_and_config(capsys):
    doc, _ = sim_json(["--level", "10", "--devices", "4", "--drive", "x25e-slc", "--preset", "oltp-postgres", *FAST], capsys)
    job = doc["jobs"][0]
    for direction in ("read", "write"):
        stats = job[direction]
        for key in ("total_ios", "io_bytes", "bw_bytes", "bw", "iops", "runtime", "lat_ns", "clat_ns"):
            assert key in stats
        assert set(stats["clat_ns"]["percentile"]) >= {"1.000000", "95.000000", "99.000000", "99.900000", "99.990000"}
        assert stats["total_ios"] > 0
    assert len(doc["disk_util"]) == 4
    assert all(d["util"] > 0 for d in doc["disk_util"])
    assert doc["raidlab"]["seed"] == 1
    assert doc["raidlab"]["config"]["array"]["level"] == "10"
    reads = job["read"]["total_ios"]
    writes = job["write"]["total_ios"]
    assert 0.62 < reads / (reads + writes) < 0.78  # the preset is 70/30


def test_same_seed_same_bytes_and_other_seed_differs(capsys):
    args = ["--level", "5", "--devices", "6", "--chunk-kib", "64", "--drive", "cheetah-10k7",
            "--preset", "oltp-innodb", *FAST]
    _, first = sim_json([*args, "--seed", "5"], capsys)
    _, again = sim_json([*args, "--seed", "5"], capsys)
    _, other = sim_json([*args, "--seed", "6"], capsys)
    assert first == again
    assert first != other


def test_sysbench_ratio_gives_sixty_percent_reads_and_fsync_rounds(capsys):
    options = ("--file-test-mode=rndrw --file-rw-ratio=1.5 --file-num=4 --file-total-size=1G "
               "--file-fsync-freq=10 --file-extra-flags=direct --threads=4 --time=2")
    doc, _ = sim_json(["--level", "10", "--devices", "4", "--drive", "x25e-slc", "--sysbench", options], capsys)
    job = doc["jobs"][0]
    reads, writes = job["read"]["total_ios"], job["write"]["total_ios"]
    assert abs(reads / (reads + writes) - 0.6) < 0.01
    # One fsync per file (4) after every 10 requests that followed a write.
    fsyncs = job["sync"]["total_ios"]
    expected = (reads + writes) // 10 * 4
    assert abs(fsyncs - expected) <= 8, (fsyncs, expected)


def test_sysbench_text_output(capsys):
    status, out, err = run_cli(["sim", "--level", "1", "--devices", "2", "--drive", "x25e-slc", "--sysbench",
                                "--file-test-mode=rndrd --file-num=2 --file-total-size=256M --time=1"], capsys)
    assert status == 0, err
    assert "File operations:" in out and "reads/s:" in out and "95th percentile:" in out


@pytest.mark.parametrize("job_text, needle", [
    ("[j]\nrw=randread\nbs=4k\nfrobnicate=1\n", "frobnicate"),
    ("[j]\nrw=randread\nbs=1000\n", "512"),
    ("[j]\nrw=randread\nbs=4k\nsize=-5g\n", "size"),
])
def test_bad_fio_jobs_are_one_line_exit_2(tmp_path, capsys, job_text, needle):
    path = tmp_path / "bad.fio"
    path.write_text(job_text)
    status, out, err = run_cli(["sim", "--drive", "null", "--fio", str(path)], capsys)
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and needle in err
    assert "Traceback" not in err


def test_bad_workload_and_config_choices_exit_2(capsys):
    for args in (["sim", "--drive", "no-such-drive", "--preset", "wal"],
                 ["sim", "--preset", "no-such-preset"],
                 ["sim", "--sysbench", "--file-test-mode=bogus"],
                 ["sim", "--level", "6", "--devices", "3", "--preset", "wal"],
                 ["sim", "--level", "10", "--devices", "4", "--failed", "0,1", "--preset", "wal"],
                 ["sim", "--preset", "wal", "--fio", "x.fio"]):
        status, _, err = run_cli(args, capsys)
        assert status == 2, args
        assert len(err.strip().splitlines()) == 1, err


def test_drive_toml_file_overrides_a_preset(tmp_path, capsys):
    good = tmp_path / "fast.toml"
    good.write_text('preset = "cheetah-10k7"\nrpm = 15000\n')
    doc, _ = sim_json(["--level", "0", "--devices", "1", "--drive", str(good), "--preset", "oltp-postgres", *FAST], capsys)
    assert doc["raidlab"]["config"]["drive"]["params"]["rpm"] == 15000.0
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "hdd"\nwarp_factor = 9\n')
    status, _, err = run_cli(["sim", "--drive", str(bad), "--preset", "wal"], capsys)
    assert status == 2 and "warp_factor" in err


def test_drives_lists_presets_with_sources(capsys):
    status, out, _ = run_cli(["drives", "--json"], capsys)
    assert status == 0
    presets = {p["name"]: p for p in json.loads(out)}
    assert {"cheetah-10k7", "raptor-wd1500adfd", "green-5400", "nearline-7200", "x25e-slc", "nvme-tlc", "null"} <= set(presets)
    assert presets["cheetah-10k7"]["rpm"] == 10000 and presets["cheetah-10k7"]["kind"] == "hdd"
    assert presets["x25e-slc"]["kind"] == "ssd" and presets["x25e-slc"]["source"]


def test_python_api_simulate_and_pandas():
    result = raidlab.simulate(level=5, devices=4, drive="null", preset="backup-scan", runtime_s=0.05, seed=2)
    doc = result.to_dict()
    assert doc["jobs"][0]["read"]["total_ios"] > 0
    pandas = pytest.importorskip("pandas")
    frame = result.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and list(frame["direction"]) == ["read"]


def test_no_progress_bar_in_json_output():
    process = subprocess.run([sys.executable, "-m", "raidlab", "sim", "--drive", "null", "--preset", "wal",
                              "--runtime-s", "0.05", "--json"], capture_output=True, text=True)
    assert process.returncode == 0
    json.loads(process.stdout)
    assert "simulating" not in process.stderr
