"""Issue 21, "promised inputs" and "surprises": one run type, one drive resolver, notes.

Every command that simulates builds one ``raidlab.run.RunSpec`` the same way, so defaults,
drive names and workloads mean the same everywhere; what a run does that the user did not ask
for is said on stderr and recorded in the JSON; tables say which latency they show.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import raidlab
from conftest import run_cli

NULL_DESIGN = ["--level", "5", "--devices", "4", "--drive", "null"]


def _notes(stderr: str):
    return [line for line in stderr.splitlines() if line.startswith("raidlab: note: ")]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# --- one run type: compare and sim agree on defaults -------------------------------------


def test_a_design_compare_and_sim_both_run_gets_the_same_defaults(tmp_path):
    from raidlab.run import DEFAULTS

    designs = _write(tmp_path, "d.toml", '[[design]]\nname = "r5"\nlevel = 5\ndevices = 4\ndrive = "null"\n')
    compared = run_cli(["compare", "--designs", designs, "--preset", "wal", "--runtime-s", "0.05",
                        "--states", "optimal", "--json", "-"])
    assert compared.status == 0, compared.stderr
    entry = compared.json()["runs"][0]
    assert (entry["controller"], entry["chunk_kib"]) == ("md", 512)
    compare_config = entry["document"]["raidlab"]["config"]
    simulated = run_cli(["sim", *NULL_DESIGN, "--preset", "wal", "--runtime-s", "0.05", "--json"])
    assert simulated.status == 0, simulated.stderr
    sim_config = simulated.json()["raidlab"]["config"]
    # Not the classic's hardware controller and 64 KiB chunk: the defaults every command shares.
    assert compare_config["controller"] == sim_config["controller"]
    assert compare_config["controller"]["kind"] == "md" == DEFAULTS["controller"]
    assert compare_config["array"] == sim_config["array"]
    assert compare_config["array"]["chunk_kib"] == 512 == DEFAULTS["chunk_kib"]
    # The one difference is what compare reports, not what it runs: it keeps each second's
    # latencies, for percentiles over the steady state it finds.
    assert compare_config.pop("latency_by_second") is True and "latency_by_second" not in sim_config
    assert compare_config == {**sim_config, "workload": compare_config["workload"]}


def test_the_classic_says_its_controller_and_chunk_and_the_table_shows_them():
    from raidlab.compare import classic

    designs, _ = classic()
    for design in designs:
        assert design.settings["controller"] == "hw" and design.settings["chunk_kib"] == 64
    run = run_cli(["compare", "--preset", "wal", "--runtime-s", "0.05", "--states", "optimal"])
    assert run.status == 0, run.stderr
    header = run.stdout.splitlines()[0].split()
    assert header[:5] == ["design", "controller", "chunk", "KiB", "state"]
    rows = [line.split() for line in run.stdout.splitlines() if line.startswith(("RAID5 ", "RAID10 "))]
    assert [(r[0], r[1], r[2]) for r in rows] == [("RAID5", "hw", "64"), ("RAID10", "hw", "64")]


def test_compare_latency_columns_say_their_direction(tmp_path):
    designs = _write(tmp_path, "d.toml", '[[design]]\nname = "r5"\nlevel = 5\ndevices = 4\ndrive = "null"\n')
    args = ["compare", "--designs", designs, "--preset", "oltp-innodb", "--runtime-s", "0.05",
            "--states", "optimal"]
    table = run_cli(args)
    assert table.status == 0, table.stderr
    header = table.stdout.splitlines()[0]
    for column in ("read p50 ms", "read p99 ms", "write p50 ms", "write p99 ms"):
        assert column in header
    assert " p99 ms" not in header.replace("read p99 ms", "").replace("write p99 ms", "")
    csv_run = run_cli([*args, "--csv", "-"])
    row = next(csv.DictReader(io.StringIO(csv_run.stdout)))
    doc = run_cli([*args, "--json", "-"]).json()["runs"][0]["document"]
    for direction in ("read", "write"):
        p99_ns = doc["jobs"][0][direction]["clat_ns"]["percentile"]["99.000000"]
        assert float(row[f"{direction}_latency_ms_p99"]) == pytest.approx(p99_ns / 1e6, abs=1e-3)
    assert row["controller"] == "md" and row["chunk_kib"] == "512"
    # A write-only workload has no read latency: '-' in the table, empty in the CSV.
    wal = run_cli(["compare", "--designs", designs, "--preset", "wal", "--runtime-s", "0.05",
                   "--states", "optimal", "--csv", "-"])
    row = next(csv.DictReader(io.StringIO(wal.stdout)))
    assert row["read_latency_ms_p99"] == "" and float(row["write_latency_ms_p99"]) > 0


def test_level_names_are_normalised_once():
    run = run_cli(["sim", "--level", "raid6", "--devices", "4", "--drive", "null", "--preset", "wal",
                   "--runtime-s", "0.02"])
    assert run.status == 0, run.stderr
    assert run.stdout.startswith("raid6 x4 ") and "raidraid" not in run.stdout
    doc = run_cli(["sim", "--level", "raid6", "--devices", "4", "--drive", "null", "--preset", "wal",
                   "--runtime-s", "0.02", "--json"]).json()
    assert doc["raidlab"]["config"]["array"]["level"] == "6"
    from raidlab.run import build_run

    spec = build_run({"level": "mirror", "devices": 2, "drive": "null", "preset": "wal"})
    assert spec.design.level == "1" and spec.design.label().startswith("raid1 x2 ")


def test_every_setting_has_one_default_and_the_api_uses_it():
    from raidlab.run import DEFAULTS, build_run

    spec = build_run({"preset": "wal"})
    assert (spec.design.level, spec.design.devices, spec.design.chunk_kib, spec.design.controller,
            spec.design.drive.name, spec.options.seed, spec.options.max_time_s) == (
        "5", 6, 512, "md", "cheetah-10k7", 1, 3600.0)
    result = raidlab.simulate(level=10, devices=4, drive="null", preset="wal", runtime_s=0.02)
    assert result.config["controller"]["kind"] == DEFAULTS["controller"]
    assert result.config["array"]["chunk_kib"] == DEFAULTS["chunk_kib"]


def test_bad_settings_are_one_line_from_every_source(tmp_path):
    from raidlab.run import build_run

    with pytest.raises(raidlab.RaidlabError, match="unknown setting"):
        build_run({"preset": "wal", "warp": 9})
    with pytest.raises(raidlab.RaidlabError, match="controller 'raid'"):
        build_run({"preset": "wal", "controller": "raid"})
    base = dict(level=5, devices=4, drive="null", preset="wal", runtime_s=0.01)
    for bad, message in ((dict(failed=5), "failed=5 is not a list of member indices"),
                         (dict(layout=5), "layout=5 is not a layout name"),
                         (dict(bbu="maybe"), "bbu='maybe' is not true or false"),
                         (dict(runtime_s=float("nan")), "runtime_s=nan is not a finite number"),
                         (dict(stripe_cache_size=5), "stripe_cache_size=5 is out of range 17..32768")):
        with pytest.raises(raidlab.RaidlabError, match=message):
            raidlab.simulate(**{**base, **bad})
    designs = _write(tmp_path, "d.toml", '[[design]]\nname = "x"\nchunk_kib = 64.5\n')
    run = run_cli(["compare", "--designs", designs, "--preset", "wal"])
    assert run.status == 2 and len(run.stderr_lines) == 1
    assert "design 'x': 'chunk_kib' must be an integer, got a number 64.5" in run.stderr


# --- one drive resolver ------------------------------------------------------------------


def _reliability_hours(drive: str) -> float:
    run = run_cli(["reliability", "--level", "5", "--devices", "4", "--capacity-tb", "2",
                   "--rebuild-from-sim", "--drive", drive, "--sim-opt", "runtime_s=5",
                   "--trials", "0", "--json"])
    assert run.status == 0, run.stderr
    return run.json()["inputs"]["repair"]["rebuild_hours"]


def test_reliability_rebuild_from_sim_takes_a_drive_toml_file(tmp_path):
    toml = _write(tmp_path, "mine.toml", 'preset = "nearline-7200"\n')
    from_file = _reliability_hours(toml)
    assert from_file == _reliability_hours("nearline-7200")
    assert 1.0 < from_file < 10.0
    slower = _write(tmp_path, "slow.toml", 'preset = "nearline-7200"\nrpm = 3600\n')
    # Slower media, slower rebuild. Not twice as slow: md's raid5 recovery refills its stripe
    # cache in bursts with a jiffy's sleep between (raid5_sync_request), so a 7200-RPM drive
    # idles between bursts and a 3600-RPM one barely does (4.1 h against 6.1 h).
    assert _reliability_hours(slower) > from_file * 1.2


@pytest.mark.parametrize("command", [
    ["sim", "--level", "5", "--devices", "4", "--preset", "wal", "--runtime-s", "0.02"],
    ["reliability", "--level", "5", "--devices", "4", "--rebuild-from-sim", "--trials", "0"],
    ["plan", "--capacity-tb", "0.1", "--preset", "wal", "--jobs", "1"],
])
def test_an_unknown_drive_is_refused_the_same_way_everywhere(command):
    run = run_cli([*command, "--drive", "no-such-drive"])
    assert run.status == 2 and len(run.stderr_lines) == 1
    assert "--drive 'no-such-drive': unknown drive model; give a preset from 'raidlab drives', " \
           "a drive FILE.toml, or a DiskSim FILE.parv/.diskspecs" in run.stderr


def test_one_drive_file_works_in_sim_compare_and_plan(tmp_path):
    toml = _write(tmp_path, "small.toml", 'kind = "ssd"\ncapacity_bytes = 100e9\n')
    sim = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", toml, "--preset", "wal",
                   "--runtime-s", "0.02", "--json"])
    assert sim.status == 0, sim.stderr
    assert sim.json()["raidlab"]["config"]["drive"] == {"kind": "ssd", "params": {"capacity_bytes": 100e9}}
    designs = _write(tmp_path, "d.toml", f'[[design]]\nname = "x"\nlevel = 5\ndevices = 4\ndrive = "{toml}"\n')
    compared = run_cli(["compare", "--designs", designs, "--preset", "wal", "--runtime-s", "0.02",
                        "--states", "optimal", "--json", "-"])
    assert compared.status == 0, compared.stderr
    expected = raidlab.Array(level=5, devices=4, chunk_kib=512, member_kib=100_000_000_000 // 1024)
    assert compared.json()["runs"][0]["capacity_bytes"] == expected.capacity_bytes
    planned = run_cli(["plan", "--capacity-tb", "0.2", "--drive", toml, "--preset", "wal", "--levels", "5",
                       "--chunks-kib", "64", "--max-drives", "4", "--sim-seconds", "0.05", "--jobs", "1",
                       "--json"])
    assert planned.status == 0, planned.stderr
    assert planned.json()["winner"] == "raid5 left-symmetric x4 64K small"


def test_a_disksim_model_keeps_its_own_size():
    from raidlab.drives import DriveSpec

    drive = DriveSpec("x.parv", {"disksim": "x.parv", "files": {}}, "hdd", "SCSI", 9 * 10**9)
    assert drive.fixed_capacity
    with pytest.raises(raidlab.RaidlabError, match="DiskSim model's capacity is fixed"):
        drive.with_capacity(10**12)


DISKSIM = Path(__file__).resolve().parents[1] / "data" / "disksim-valid" / "atlas10k.parv"


def test_reliability_takes_a_disksim_drive_as_sim_does():
    """The rebuild runs on the model as it is; its time scales to --capacity-tb at that rate. The
    zone-by-zone estimate (30 s at four mid-zone points) is checked against the whole rebuild of
    the model simulated to its end (3,603 s): within 3 % (measured: 1.2 %)."""
    sim = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", str(DISKSIM), "--failed", "0",
                   "--spare", "--runtime-s", "5000", "--max-time-s", "6000", "--json"])
    assert sim.status == 0, sim.stderr
    rebuild = sim.json()["rebuild"]
    assert not rebuild["extrapolated"]
    from raidlab.drives import resolve_drive

    drive_bytes = resolve_drive(str(DISKSIM)).capacity_bytes
    hours = _reliability_hours(str(DISKSIM))
    assert hours == pytest.approx(rebuild["duration_s"] * 2e12 / drive_bytes / 3600, rel=0.03)
    # sim's own estimate from 30 s of the same rebuild (0.8 % of the member): this rebuild is
    # bound by its requests, not the media (2.5 MB/s per member on a drive streaming 20+), so
    # its rate barely falls on the inner tracks (measured 3,646 s, 1.2 % long; scaling the whole
    # rate by the zones' media rates said 4,032 s).
    short = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", str(DISKSIM), "--failed", "0",
                     "--spare", "--runtime-s", "30", "--json"])
    assert short.status == 0, short.stderr
    estimate = short.json()["rebuild"]
    assert estimate["extrapolated_by"] == "zone rates"
    assert estimate["duration_s"] == pytest.approx(rebuild["duration_s"], rel=0.03)


def test_sim_opt_takes_any_run_setting():
    from raidlab.rebuild import SIM_OPTIONS, simulated_rebuild_hours

    assert {"stripe_cache_size", "nr_requests", "preset", "seed", "runtime_s"} <= set(SIM_OPTIONS)
    base = dict(level="5", devices=4, layout=None, chunk_kib=512, capacity_bytes=10**12,
                drive="nearline-7200", runtime_s=2)
    assert simulated_rebuild_hours(**base, stripe_cache_size=4096) > 0
    with pytest.raises(raidlab.RaidlabError, match="--sim-opt stripe_cache_size=5 is out of range 17..32768"):
        simulated_rebuild_hours(**base, stripe_cache_size=5)


# --- notes: said on stderr and recorded in the JSON --------------------------------------


PSYNC_JOB = "[j]\nrw=randread\nioengine=psync\niodepth=32\nruntime=1\n"


def test_sim_says_the_parsers_notes(tmp_path):
    job = _write(tmp_path, "j.fio", PSYNC_JOB)
    run = run_cli(["sim", *NULL_DESIGN, "--fio", job, "--runtime-s", "0.02", "--json"])
    assert run.status == 0, run.stderr
    note = "j: iodepth=32 is capped at 1 by the psync engine; use ioengine=libaio or io_uring for a deeper queue"
    assert _notes(run.stderr) == [f"raidlab: note: {note}"]
    assert run.json()["raidlab"]["notes"] == [note]


def test_a_job_larger_than_the_array_is_said_to_be_clipped(tmp_path):
    small = _write(tmp_path, "small.toml", 'kind = "ssd"\ncapacity_bytes = 1e9\n')
    job = _write(tmp_path, "big.fio", "[big]\nrw=randread\nioengine=libaio\ndirect=1\niodepth=4\n"
                                      "runtime=1\nsize=10g\n")
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", small, "--fio", job,
                   "--runtime-s", "0.05", "--json"])
    assert run.status == 0, run.stderr
    note = ("job 'big': size 10 GiB is larger than the array (2999451648 bytes, 2.79 GiB); the "
            "simulator clips the job's region to the array's end, so it covers 2.79 GiB")
    assert run.json()["raidlab"]["notes"] == [note]
    assert _notes(run.stderr) == [f"raidlab: note: {note}"]


def test_a_job_with_no_size_and_no_runtime_is_said_to_stop_at_the_bound(tmp_path):
    job = _write(tmp_path, "open.fio", "[open]\nrw=randread\nioengine=libaio\ndirect=1\niodepth=4\n")
    run = run_cli(["sim", *NULL_DESIGN, "--fio", job, "--max-time-s", "0.05", "--json"])
    assert run.status == 0, run.stderr
    assert run.json()["raidlab"]["simulated_ns"] == 50_000_000
    note = ("the workload has no runtime and was still running when the run stopped at the 0.05 s "
            "bound on simulated time (--max-time-s); job(s) 'open' have no size and no runtime, so "
            "each would cover the whole array")
    assert run.json()["raidlab"]["notes"] == [note]
    assert _notes(run.stderr) == [f"raidlab: note: {note}"]


def test_a_runtime_beyond_the_bound_is_said_to_be_cut(tmp_path):
    # One I/O per second, so the default 3600 s bound is cheap to reach.
    job = _write(tmp_path, "slow.fio", "[slow]\nrw=randread\nrate_iops=1\nruntime=10\n")
    run = run_cli(["sim", *NULL_DESIGN, "--fio", job, "--runtime-s", "1e6", "--json"])
    assert run.status == 0, run.stderr
    doc = run.json()
    assert doc["raidlab"]["simulated_ns"] == 3600 * 10**9
    note = ("the workload runs for 1000000 s but simulated time is bounded at 3600 s "
            "(--max-time-s): the run stops at 3600 s")
    assert doc["raidlab"]["notes"] == [note]
    assert _notes(run.stderr) == [f"raidlab: note: {note}"]


def test_a_plain_run_has_no_notes():
    run = run_cli(["sim", *NULL_DESIGN, "--preset", "wal", "--runtime-s", "0.02", "--json"])
    assert run.status == 0 and run.stderr == ""
    assert run.json()["raidlab"]["notes"] == []


def test_compare_says_the_same_notes(tmp_path):
    job = _write(tmp_path, "j.fio", PSYNC_JOB)
    designs = _write(tmp_path, "d.toml", '[[design]]\nname = "r5"\nlevel = 5\ndevices = 4\ndrive = "null"\n')
    run = run_cli(["compare", "--designs", designs, "--fio", job, "--runtime-s", "0.02",
                   "--states", "optimal,degraded", "--json", "-"])
    assert run.status == 0, run.stderr
    note = "j: iodepth=32 is capped at 1 by the psync engine; use ioengine=libaio or io_uring for a deeper queue"
    assert _notes(run.stderr) == [f"raidlab: note: r5 · randread: {note}"]
    assert [r["document"]["raidlab"]["notes"] for r in run.json()["runs"]] == [[note], [note]]


# --- tables that say what they show -------------------------------------------------------


def test_an_idle_rebuild_prints_its_phases_not_empty_tables():
    run = run_cli(["sim", *NULL_DESIGN, "--failed", "0", "--spare", "--runtime-s", "1"])
    assert run.status == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "no foreground I/O: the array was idle" in lines
    assert not any(line.startswith("job ") for line in lines)
    phase = next(line.split() for line in lines if line.startswith("rebuilding "))
    assert phase == ["rebuilding", "0.0-1.0", "idle", "0", "-", "-"]
    assert any(line.startswith("rebuild of member0: started 0.0 s") for line in lines)


def _fio_json(tmp_path):
    target = tmp_path / "fio.dat"
    done = subprocess.run(["fio", "--name=mix", f"--filename={target}", "--size=4m", "--rw=randrw",
                           "--bs=4k", "--iodepth=2", "--ioengine=libaio", "--runtime=1",
                           "--output-format=json"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "fio.json"
    path.write_text(done.stdout)
    return path, json.loads(done.stdout)["fio version"]


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make deps installs it)")
def test_an_imported_run_is_labelled_from_what_fio_recorded(tmp_path):
    path, version = _fio_json(tmp_path)
    report = tmp_path / "r.html"
    run = run_cli(["import", str(path), "--html", str(report)])
    assert run.status == 0, run.stderr
    html = report.read_text()
    assert "seed</span> ?" not in html and "unknown workload" not in html
    assert "unknown configuration" not in html
    assert f'chip-key">measured</span> {version}' in html
    assert f"measured with {version} (not simulated)" in html
    assert "mix: rw=randrw, bs=4k, iodepth=2, ioengine=libaio" in html
    assert "1 measured run" in html and "1 simulation" not in html
