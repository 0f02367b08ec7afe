"""Hardware RAID controllers and host queues: presets with sources, ceilings that
saturate as the published measurements did, firmware and block-layer queue limits, CFQ on a
controller's logical drive, sysbench 0.4's spelling and defaults."""

from __future__ import annotations

import functools
import json

import pytest

import raidlab
from raidlab import controllers
from raidlab.cli import main
from raidlab.workload.sysbench import TEST_MODES, parse_sysbench

SEQ_READ_64K = """[seq]
rw=read
bs=64k
direct=1
ioengine=libaio
iodepth=32
runtime=2
time_based=1
size=8g
"""

RANDOM_READ_128 = """[rr]
rw=randread
bs=16k
direct=1
numjobs=128
iodepth=1
runtime={seconds}
time_based=1
size=32g
"""

SYSBENCH_2005 = ("./sysbench --num-threads=128 --max-requests=1000000 --file-total-size=32G "
                 "--file-extra-flags=direct --test=fileio --init-rng=1 --file-test-mode={mode} run")


def _job(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _read_mb_s(**settings) -> float:
    document = raidlab.simulate(**settings).to_dict()
    return sum(job["read"]["bw_bytes"] for job in document["jobs"]) / 1e6


def _read_iops(**settings) -> float:
    document = raidlab.simulate(**settings).to_dict()
    return sum(job["read"]["iops"] for job in document["jobs"])


def test_controllers_json_lists_the_presets_with_a_source_for_every_parameter(capsys):
    assert main(["controllers", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    names = [c["name"] for c in listing]
    assert names[:2] == ["md", "hw"]
    for preset in ("perc4e-di", "adaptec-5805", "areca-1680", "megaraid-9361", "hba"):
        assert preset in names
    perc = next(c for c in listing if c["name"] == "perc4e-di")
    assert set(perc["params"]) == {p.name for p in controllers.PARAMS}
    assert all(p["source"] for c in listing[2:] for p in c["params"].values())
    assert perc["params"]["host_queue_depth"]["value"] == 64
    assert "megaraid_mbox" in perc["params"]["host_queue_depth"]["source"]
    assert perc["params"]["channel_mb_s"]["value"] == 320.0


def test_adaptec_saturates_near_700_mb_s_with_4_drives_already_close(tmp_path):
    job = _job(tmp_path, "seq.fio", SEQ_READ_64K)
    common = dict(level="0", chunk_kib=64, drive="x25e-slc", controller="adaptec-5805", fio=job)
    eight = _read_mb_s(devices=8, **common)
    four = _read_mb_s(devices=4, **common)
    assert 550 <= eight <= 850, eight
    assert four >= 0.75 * eight, (four, eight)


def test_areca_scales_from_4_to_8_drives(tmp_path):
    job = _job(tmp_path, "seq.fio", SEQ_READ_64K)
    common = dict(level="0", chunk_kib=64, drive="x25e-slc", controller="areca-1680", fio=job)
    eight = _read_mb_s(devices=8, **common)
    four = _read_mb_s(devices=4, **common)
    assert eight >= 1.5 * four, (four, eight)


def test_nr_requests_bounds_the_scheduler_and_the_driver(tmp_path):
    job = _job(tmp_path, "rr.fio", RANDOM_READ_128.format(seconds=4))
    common = dict(level="0", devices=1, drive="cheetah-10k7", fio=job)
    small = _read_iops(nr_requests=4, **common)
    large = _read_iops(nr_requests=128, **common)
    assert small <= 0.70 * large, (small, large)


def test_two_commands_per_drive_get_less_than_sixty_four(tmp_path):
    job = _job(tmp_path, "rr.fio", RANDOM_READ_128.format(seconds=3))
    common = dict(level="0", devices=4, drive="cheetah-10k7", controller="hw", fio=job)
    two = _read_iops(controller_opts=["commands_per_drive=2"], **common)
    sixty_four = _read_iops(controller_opts=["commands_per_drive=64"], **common)
    assert two < 0.8 * sixty_four, (two, sixty_four)


def test_cfq_on_a_controllers_logical_drive_is_near_deadline(tmp_path):
    job = _job(tmp_path, "rr.fio", RANDOM_READ_128.format(seconds=10))
    common = dict(level="5", devices=6, drive="cheetah-10k7", controller="perc4e-di", fio=job)
    cfq = _read_iops(scheduler="cfq", **common)
    deadline = _read_iops(scheduler="mq-deadline", **common)
    assert abs(cfq - deadline) <= 0.15 * deadline, (cfq, deadline)


@pytest.mark.parametrize("mode", TEST_MODES)
def test_sysbench_04_spelling_has_04_defaults(mode):
    job = parse_sysbench(SYSBENCH_2005.format(mode=mode)).jobs[0]
    assert (job.threads, job.total_ios, job.runtime_ns, job.time_based) == (128, 1_000_000, 0, False)
    default = parse_sysbench(f"sysbench --test=fileio --file-test-mode={mode} run").jobs[0]
    assert (default.total_ios, default.runtime_ns) == (10_000, 0)
    # Mixed with 1.0 names, 1.0.20's reading stays (--time=10 unless given).
    mixed = parse_sysbench(f"--num-threads=4 --threads=2 --file-test-mode={mode}").jobs[0]
    assert (mixed.threads, mixed.total_ios, mixed.runtime_ns) == (4, 0, 10 * 10**9)


@pytest.mark.parametrize("mode", TEST_MODES)
def test_the_2005_sysbench_command_runs_to_its_request_count(mode):
    requests = 1_000_000 if mode == "rndrw" else 50_000
    text = SYSBENCH_2005.format(mode=mode).replace("--max-requests=1000000", f"--max-requests={requests}")
    document = raidlab.simulate(sysbench=text, level="5", devices=6, drive="cheetah-10k7",
                                controller="perc4e-di").to_dict()
    job = document["jobs"][0]
    assert job["read"]["total_ios"] + job["write"]["total_ios"] == requests
    if mode == "rndrw":  # the 2005 machine's own benchmark: far past sysbench 1.0's default 10 s
        assert document["jobs"][0]["elapsed"] > 100


def test_header_line_says_whether_drive_write_caches_are_on(tmp_path, capsys):
    args = ["sim", "--level", "0", "--devices", "2", "--drive", "cheetah-10k7", "--preset", "wal", "--runtime-s", "0.05"]
    assert main(args + ["--controller", "perc4e-di"]) == 0
    assert "drive write cache off" in capsys.readouterr().out
    assert main(args + ["--controller", "hw", "--drive-write-cache", "on"]) == 0
    assert "drive write cache on" in capsys.readouterr().out


def test_a_controller_file_and_options_override_a_preset(tmp_path):
    path = tmp_path / "ctl.toml"
    path.write_text('preset = "perc4e-di"\ncommands_per_drive = 4\n')
    from raidlab.run import build_run

    spec = build_run({"level": "0", "devices": 2, "drive": "null", "preset": "wal", "controller": str(path),
                      "controller_opts": ["host_queue_depth=8"]})
    hw = spec.config()["controller"]["hw"]
    assert (hw["commands_per_drive"], hw["host_queue_depth"], hw["commands_total"]) == (4, 8, 255)


@pytest.mark.parametrize("extra, needle", [
    (["--controller", "perc9"], "'perc9' is not one of 'md', 'hw', 'perc4e-di'"),
    (["--controller", "hw", "--controller-opt", "bogus=1"], "unknown controller parameter 'bogus'"),
    (["--controller", "hw", "--controller-opt", "commands_per_drive=-1"], "out of range"),
    (["--controller", "hw", "--controller-opt", "command_order=random"], "expected one of fifo, elevator"),
    (["--controller", "hw", "--controller-opt", "nokeyvalue"], "expected KEY=VALUE"),
    (["--drive-write-cache", "maybe"], "--drive-write-cache"),
])
def test_bad_controller_input_is_one_line_exit_2(capsys, extra, needle):
    args = ["sim", "--level", "0", "--devices", "2", "--drive", "null", "--preset", "wal", "--runtime-s", "0.05"]
    assert main(args + extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("raidlab: error: ") and needle in err[0], err


def test_rebuild_time_extrapolates_over_the_zones_at_their_rates():
    # A 300 GB Cheetah 10K.7 mirror rebuilt on an idle array: 60 simulated seconds (1.4 % of the
    # member, all on the outer zones) predict the full simulated rebuild (5721 s) within 2 %;
    # the outer rate carried straight over the member would be about 25 % short.
    common = dict(level="1", devices=2, drive="cheetah-10k7", allow_idle=True,
                  timeline=[{"action": "fail", "member": 1, "at_s": 0},
                            {"action": "replace", "member": 1, "at_s": 0.001}])
    from raidlab.run import build_run
    from raidlab.sim import run_spec

    short = run_spec(build_run({k: v for k, v in common.items() if k != "allow_idle"} | {"max_time_s": 60},
                               allow_idle=True)).to_dict()["rebuild"]
    full = run_spec(build_run({k: v for k, v in common.items() if k != "allow_idle"} | {"max_time_s": 7000},
                              allow_idle=True)).to_dict()["rebuild"]
    assert short["extrapolated"] and short["extrapolated_by"] == "zone rates"
    assert not full["extrapolated"]
    assert abs(short["duration_s"] - full["duration_s"]) <= 0.02 * full["duration_s"], (short, full)
    straight = short["member_bytes"] / 1024 / short["rate_kib_s"]
    assert straight < 0.85 * full["duration_s"]


def test_a_phase_rate_is_over_the_time_the_workload_ran_in_it(tmp_path):
    # 2000 reads finish within the first seconds; the degraded phase then runs on (rebuild
    # after a replacement) to the run's end. The degraded phase's IOPS is over the seconds the
    # workload ran, not over the whole phase.
    job = _job(tmp_path, "count.fio", "[count]\nrw=randread\nbs=4k\ndirect=1\nnumber_ios=2000\nsize=1g\n")
    document = raidlab.simulate(fio=job, level="1", devices=2, drive="cheetah-10k7", failed=[1],
                                timeline=[{"action": "replace", "member": 1, "at_s": 30}],
                                max_time_s=40).to_dict()
    degraded = document["phases"][0]
    assert degraded["name"] == "degraded" and degraded["end_s"] >= 29
    reads = degraded["read"]
    assert reads["total_ios"] == 2000
    runtime_s = document["jobs"][0]["elapsed"]
    assert reads["iops"] > 0.8 * 2000 / max(runtime_s, 1e-9) and reads["iops"] > 2000 / 29 * 3
    # Steady-state figures count only the seconds the workload ran in, too.
    section = document["steady_state"]
    assert section is None or section["iops"] > 0.5 * document["jobs"][0]["read"]["iops"], section


SS_JOB = """[ss]
rw=randwrite
bs=16k
direct=1
numjobs=32
runtime=300
time_based=1
size=32g
ss=iops_slope:2%
ss_dur=20
ss_ramp=10
"""


def test_fio_steady_state_ends_the_run_once_met(tmp_path):
    from raidlab.workload.fio import parse_fio, render_fio

    workload = parse_fio(SS_JOB)
    assert workload.jobs[0].steady_state == ("iops_slope", 2.0, True, 20 * 10**9, 10 * 10**9)
    assert parse_fio(render_fio(workload)).jobs == workload.jobs
    document = raidlab.simulate(fio=_job(tmp_path, "ss.fio", SS_JOB), level="5", devices=6,
                                drive="cheetah-10k7", controller="perc4e-di").to_dict()
    section = document["steady_state"]
    assert section["ss"] == "iops_slope:2%" and section["attained"]
    # Judged after the 10 s ramp over a 20 s window: met at 30 s at the earliest, long before
    # the job's 300 s.
    assert 30 <= section["attained_s"] < 100
    assert document["jobs"][0]["elapsed"] < 100


@pytest.mark.parametrize("text, needle", [
    ("ss=iops:5%\n", "ss needs ss_dur"),
    ("ss=latency:5%\nss_dur=10\n", "must be iops, iops_slope, bw or bw_slope"),
    ("ss=iops:-1\nss_dur=10\n", "limit must be a number"),
    ("ss_dur=10\n", "need ss"),
])
def test_bad_steady_state_options_are_refused(text, needle):
    from raidlab.workload.fio import parse_fio
    from raidlab.workload.spec import WorkloadError

    with pytest.raises(WorkloadError, match=needle):
        parse_fio("[j]\nrw=read\n" + text)


def test_steady_state_figures_leave_the_cache_fill_out():
    # A 256 MB write-back cache takes the first second's writes at memory speed; the rate that
    # lasts is the drives'. The run's average counts the fill; the steady-state figure does not.
    result = raidlab.simulate(
        sysbench="--num-threads=128 --time=30 --file-total-size=32G --file-extra-flags=direct "
                 "--file-test-mode=rndwr",
        level="5", devices=6, drive="cheetah-10k7", controller="perc4e-di", latency_by_second=True)
    document = result.to_dict()
    average = document["jobs"][0]["write"]["iops"]
    section = document["steady_state"]
    assert section["attained"] and section["from_s"] >= 1
    assert average > 1.2 * section["iops"], (average, section)
    from raidlab.compare import Row

    # compare builds its documents with the steady-state headline (to_dict(steady=True)).
    totals = Row("d", "optimal", "w", result.to_dict(steady=True), 0).totals()
    assert totals["iops"] == pytest.approx(section["iops"]) and totals["steady_from_s"] == section["from_s"]


@functools.lru_cache(maxsize=None)
def _rebuilding_raid5_rndrw():
    # A rebuilding RAID5 behind a 256 MiB battery-backed cache (the classic's hardware), run once
    # for the tests below, keeping each second's latencies as compare does.
    return raidlab.simulate(
        sysbench="--file-test-mode=rndrw --file-total-size=32G --threads=128 --file-block-size=16384 "
                 "--file-extra-flags=direct --time=40",
        level="5", devices=6, drive="cheetah-10k7", controller="hw", cache_mib=256, bbu=True, chunk_kib=64,
        failed=[0], spare=True, latency_by_second=True)


def test_a_cache_fill_longer_than_the_window_is_not_the_steady_state():
    # Reads reconstruct and the rebuild takes drive time, so the cache takes ~11 s to fill at a
    # flat ~3,400 IOPS, then the run settles near 650. The fill is flat for longer than the 10 s
    # window; the steady state is the level the run stays at, not the fill.
    from raidlab.report.steady import steady_state

    document = _rebuilding_raid5_rndrw().to_dict()
    series = [p["read_iops"] + p["write_iops"] for p in document["timeline"]]
    assert min(series[:10]) > 2 * max(series[15:]), "the fill plateau and the level after it"
    found = steady_state(document)
    assert found is not None and found["from_s"] >= 11, found
    assert found["iops"] < 1.2 * sum(series[15:]) / len(series[15:])


def test_latency_percentiles_cover_the_same_steady_state():
    # The write p50 over the whole run is the fill's (writes the cache took at memory speed,
    # under a millisecond), the steady state's is the drives' pace once the cache is full
    # (hundreds of ms), and compare's table shows the steady figure beside the steady IOPS.
    from raidlab.compare import Row
    from raidlab.planner.evaluate import metrics
    from raidlab.report.steady import latency_ms

    raw = _rebuilding_raid5_rndrw()
    document = raw.to_dict()
    section = document["steady_state"]
    assert section["from_s"] >= 11
    whole_p50_ms = document["jobs"][0]["write"]["clat_ns"]["percentile"]["50.000000"] / 1e6
    steady_p50_ms = section["latency_ms"]["write"]["p50"]
    assert whole_p50_ms < 1.0 and steady_p50_ms > 100.0, (whole_p50_ms, steady_p50_ms)
    totals = Row("d", "rebuilding", "rndrw", raw.to_dict(steady=True), 0).totals()
    assert totals["write_p50_ms"] == steady_p50_ms and totals["read_p99_ms"] == section["latency_ms"]["read"]["p99"]
    # One job: its own figures are the run's; plan's worst p99 is the steady one too.
    assert section["latency_ms_by_job"] == [section["latency_ms"]]
    worst = max(section["latency_ms"]["read"]["p99"], section["latency_ms"]["write"]["p99"])
    assert metrics(document)["p99_ms"] == round(worst, 3)
    # Over every second, the kept distributions give the run's own p50 and p99 (40 whole s;
    # away from the top bucket, where the run's own clamp to the exact maximum).
    everything, _ = latency_ms(raw.raw["series"], 0.0, 40.0, [[0]])
    for direction in ("read", "write"):
        percentiles = document["jobs"][0][direction]["clat_ns"]["percentile"]
        assert everything[direction]["p50"] == percentiles["50.000000"] / 1e6
        assert everything[direction]["p99"] == percentiles["99.000000"] / 1e6


def test_steady_latency_follows_the_documents_job_entries():
    # A reader and a writer: each entry has its own direction only, the whole is both; with
    # group_reporting the two are one entry, their bins together.
    jobs = ("[global]\ndirect=1\nsize=2G\nruntime=14\ntime_based\nbs=16k\n"
            "[reader]\nrw=randread\niodepth=8\n[writer]\nrw=randwrite\niodepth=4\n")
    for grouped in (False, True):
        text = ("[global]\ngroup_reporting\n" + jobs.split("\n", 1)[1]) if grouped else jobs
        document = raidlab.simulate(fio=text, level="5", devices=4, latency_by_second=True).to_dict()
        section = document["steady_state"]
        assert section and section["attained"], section
        entries = section["latency_ms_by_job"]
        assert len(entries) == len(document["jobs"]) == (1 if grouped else 2)
        if grouped:
            assert entries == [section["latency_ms"]]
        else:
            (reader, writer) = entries
            assert reader["write"] is None and writer["read"] is None
            assert reader["read"] == section["latency_ms"]["read"] and writer["write"] == section["latency_ms"]["write"]


def test_runs_that_do_not_ask_keep_no_latencies():
    plain = raidlab.simulate(sysbench="--file-test-mode=rndrd --file-total-size=1G --threads=4 --time=14 "
                                      "--file-extra-flags=direct", level="5", devices=4)
    section = plain.to_dict()["steady_state"]
    assert section and section["attained"], "a run that settles"
    assert "latency_ms" not in section
    assert all("lat_bins_by_job" not in point for point in plain.raw["series"])


def test_jobs_one_after_another_have_no_common_steady_state():
    # A stonewalled write phase then read phase: the series holds two levels one after the
    # other, and the sum of the jobs' rates never ran at any one time. The steady-state window
    # used to end with the first job's own length (15 s), so the write phase alone was taken for
    # the steady state of both and compare reported its ~150 IOPS for the pair.
    from raidlab.compare import Row

    text = ("[global]\ndirect=1\nsize=4G\nruntime=15\ntime_based\nbs=16k\n"
            "[w]\nrw=randwrite\n[r]\nstonewall\nrw=randread\n")
    result = raidlab.simulate(fio=text, level="5", devices=4, drive="cheetah-10k7", latency_by_second=True)
    starts = [job["start_ns"] for job in result.raw["jobs"]]
    assert starts[0] == 0 and 15e9 <= starts[1] < 15.5e9, starts
    document = result.to_dict()
    assert document["steady_state"] is None
    totals = Row("d", "optimal", "two", result.to_dict(steady=True), 0).totals()
    # The whole run's rate: every I/O over the time the jobs ran, one after the other (the sum
    # of the two jobs' own rates never ran at any one time).
    ios = sum(job[d]["total_ios"] for job in document["jobs"] for d in ("read", "write"))
    seconds = sum(job["job_runtime"] for job in document["jobs"]) / 1000
    assert totals["steady_from_s"] is None and totals["basis"] == "whole run"
    assert totals["iops"] == pytest.approx(ios / seconds, rel=0.01)



def test_a_pass_through_hba_lists_only_what_it_sets(capsys):
    # A plain HBA has no cache, battery or RAID firmware: it used to list the hardware
    # controller's defaults (bbu = True, a read-ahead policy, an XOR engine).
    assert main(["controllers", "--json"]) == 0
    hba = next(c for c in json.loads(capsys.readouterr().out) if c["name"] == "hba")
    assert set(hba["params"]) == {"cache_mib", "drive_write_cache"}
    assert hba["params"]["cache_mib"]["value"] == 0
