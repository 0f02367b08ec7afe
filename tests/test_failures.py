"""Bad days: degraded arrays, failures during a run, rebuilds under md's speed limits."""

from __future__ import annotations

import json

import pytest

from raidlab.cli import main

READS_16K = """
[global]
ioengine=libaio
direct=1
rw=randread
bs=16k
iodepth=32
numjobs=4
time_based=1
runtime=4
[reads]
"""


@pytest.fixture
def small_cheetah(tmp_path):
    """A Cheetah 10K.7 shrunk to 1 GB so a whole rebuild takes seconds of simulated time."""
    path = tmp_path / "cheetah-1g.toml"
    path.write_text('preset = "cheetah-10k7"\ncapacity_bytes = 1000000000\n')
    return str(path)


def sim(args, capsys):
    status = main(["sim", *args, "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out), captured.out


def member_reads_per_host_read(doc):
    host = doc["jobs"][0]["read"]["total_ios"]
    return sum(d["read_ios"] for d in doc["disk_util"]) / host


def test_degraded_raid5_reads_cost_five_sixths_plus_five_times_one_sixth(tmp_path, capsys):
    job = tmp_path / "reads.fio"
    job.write_text(READS_16K)
    # A large stripe cache keeps md's cache out of the way so only the extra reads count.
    base = ["--level", "5", "--devices", "6", "--chunk-kib", "64", "--drive", "cheetah-10k7", "--fio", str(job),
            "--stripe-cache-size", "4096"]
    optimal, _ = sim(base, capsys)
    degraded, _ = sim([*base, "--failed", "0"], capsys)
    ratio = member_reads_per_host_read(degraded) / member_reads_per_host_read(optimal)
    assert ratio == pytest.approx(5 / 6 + 5 / 6, rel=0.02)
    iops = lambda doc: doc["jobs"][0]["read"]["iops"]
    # Drives are the bottleneck, so IOPS fall by the extra member reads.
    assert iops(degraded) / iops(optimal) == pytest.approx(1 / ratio, rel=0.05)
    assert degraded["disk_util"][0]["read_ios"] == 0
    # With md's default 256-entry cache, every degraded read holds 4 stripe heads: concurrency
    # and so SPTF's gain shrink, and IOPS fall further.
    default_cache = [a for a in base if a not in ("--stripe-cache-size", "4096")]
    cramped, _ = sim([*default_cache, "--failed", "0"], capsys)
    assert iops(cramped) < 0.9 * iops(degraded)


def test_raid10_failures(capsys):
    base = ["--level", "10", "--devices", "4", "--chunk-kib", "64", "--drive", "x25e-slc",
            "--preset", "oltp-postgres", "--runtime-s", "2"]
    doc, _ = sim([*base, "--failed", "0"], capsys)
    util = doc["disk_util"]
    assert util[0]["read_ios"] == 0
    # Member 1 serves every read of the pair it shares with member 0.
    assert util[1]["read_ios"] == pytest.approx(util[2]["read_ios"] + util[3]["read_ios"], rel=0.1)
    other_pair, _ = sim([*base, "--failed", "0", "--fail", "2@1s"], capsys)
    assert other_pair["data_loss"] is None
    same_pair, _ = sim([*base, "--failed", "0", "--fail", "1@1s"], capsys)
    assert same_pair["data_loss"] == {"at_s": 1.0, "failed_members": [0, 1]}
    assert same_pair["raidlab"]["simulated_ns"] == 1_000_000_000


def rebuild_of(args, small_cheetah, capsys, runtime="40"):
    base = ["--level", "5", "--devices", "4", "--chunk-kib", "64", "--drive", small_cheetah,
            "--failed", "1", "--spare", "--runtime-s", runtime]
    doc, _ = sim([*base, *args], capsys)
    return doc


def test_idle_rebuild_runs_at_the_max_or_the_drive_limit(small_cheetah, capsys):
    capped = rebuild_of(["--speed-limit-max", "20000"], small_cheetah, capsys, runtime="120")["rebuild"]
    assert not capped["extrapolated"]
    assert 0.8 * 20000 <= capped["rate_kib_s"] <= 1.05 * 20000
    free = rebuild_of([], small_cheetah, capsys)["rebuild"]
    assert not free["extrapolated"]
    # Drive-limited: the Cheetah's media rate is 39-80 MB/s.
    assert 30_000 <= free["rate_kib_s"] <= 80_000
    assert free["duration_s"] < capped["duration_s"]


def test_load_slows_the_rebuild_toward_the_min_and_a_higher_min_costs_latency(small_cheetah, capsys):
    load = ["--preset", "oltp-innodb"]
    idle = rebuild_of([], small_cheetah, capsys)["rebuild"]
    loaded_doc = rebuild_of(load, small_cheetah, capsys, runtime="20")
    loaded = loaded_doc["rebuild"]
    assert loaded["rate_kib_s"] < idle["rate_kib_s"] / 3
    assert loaded["rate_kib_s"] >= 0.8 * 1000
    pushed_doc = rebuild_of([*load, "--speed-limit-min", "20000"], small_cheetah, capsys, runtime="20")
    pushed = pushed_doc["rebuild"]
    assert pushed["rate_kib_s"] > 2 * loaded["rate_kib_s"]
    latency = lambda doc: doc["jobs"][0]["read"]["clat_ns"]["mean"]
    assert latency(pushed_doc) > latency(loaded_doc)


def test_timeline_is_deterministic_and_has_phases(small_cheetah, capsys):
    args = ["--level", "5", "--devices", "4", "--drive", small_cheetah, "--preset", "oltp-postgres",
            "--runtime-s", "6", "--fail", "3@2s", "--replace", "3@4s", "--seed", "9"]
    first, text = sim(args, capsys)
    _, again = sim(args, capsys)
    assert text == again
    assert [p["name"] for p in first["phases"]] == ["optimal", "degraded", "rebuilding"]
    assert [round(p["start_s"], 3) for p in first["phases"]] == [0.0, 2.0, 4.0]
    series = first["timeline"]
    assert len(series) == 6 and series[-1]["rebuild_pct"] > 0
    assert all(point["read_iops"] > 0 for point in series)


def test_fio_logs_are_written(small_cheetah, tmp_path, capsys):
    prefix = str(tmp_path / "run")
    status = main(["sim", "--level", "5", "--devices", "4", "--drive", small_cheetah, "--preset", "wal",
                   "--runtime-s", "3", "--log-prefix", prefix])
    capsys.readouterr()
    assert status == 0
    lines = (tmp_path / "run_iops.1.log").read_text().splitlines()
    assert lines[0].startswith("1000, ") and len(lines) == 6


@pytest.mark.parametrize("args", [["--fail", "9@1s"], ["--fail", "x@1s"], ["--replace", "1@soon"],
                                  ["--speed-limit-min", "5000", "--speed-limit-max", "1000", "--fail", "0@1s"]])
def test_bad_timelines_exit_2(args, capsys):
    status = main(["sim", "--level", "5", "--devices", "4", "--drive", "null", "--preset", "wal", *args])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1


def test_a_replacement_serves_the_part_already_rebuilt(small_cheetah, tmp_path, capsys):
    """md reads from (and writes to) a recovering device below its recovery offset: during a
    raid1 rebuild under load, the replacement takes its share of the reads in the part already
    rebuilt; the rest still goes to the survivor."""
    job = tmp_path / "reads.fio"
    job.write_text(READS_16K.replace("runtime=4", "runtime=20"))
    base = ["--level", "1", "--devices", "2", "--drive", small_cheetah, "--fio", str(job), "--failed", "1"]
    degraded, _ = sim(base, capsys)
    rebuilding, _ = sim([*base, "--spare"], capsys)
    assert rebuilding["rebuild"]["end_s"] is None or rebuilding["rebuild"]["extrapolated"]
    assert degraded["disk_util"][1]["read_ios"] == 0
    survivor, replacement = (d["read_ios"] for d in rebuilding["disk_util"])
    share = replacement / (survivor + replacement)
    # Only reads in the rebuilt part may go there (at most the final rebuilt fraction of all
    # reads); md's read balancing sends it most of those, its head being nearest (at the
    # rebuild point).
    rebuilt = rebuilding["rebuild"]["progress_pct"] / 100
    assert 0 < rebuilt < 0.5
    assert 0.2 * rebuilt < share <= rebuilt, (share, rebuilt)
