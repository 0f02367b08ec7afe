"""Each modelled fio option changes the simulated I/O stream as fio would.

Runs use the null drive (every command takes exactly 1 µs, any number in parallel), so the
expected numbers follow from fio's rules by arithmetic: a psync job at depth 1 does one I/O
per (service time + think time), a rate cap fixes the bytes per second, stonewall adds the
jobs' runtimes up.
"""

from __future__ import annotations

import pytest

from conftest import run_cli
from raidlab.workload import parse_fio


def sim(text: str, *extra: str, level: str = "1", devices: str = "2"):
    run = run_cli(["sim", "--drive", "null", "--level", level, "--devices", devices, "--fio", text, "--json", *extra])
    assert run.status == 0, run.stderr
    return run.json()


def iops(document, job: int = 0, direction: str = "read") -> float:
    return document["jobs"][job][direction]["iops"]


BASE = "[j]\nrw=randread\nbs=4k\ndirect=1\nruntime=1\ntime_based\n"


def test_three_unsupported_options_are_all_reported_in_one_run():
    run = run_cli(["sim", "--drive", "null", "--fio", "[j]\nrw=read\nfoo=1\nread_iolog=trace.log\nioengine=rbd\n"])
    assert run.status == 2 and len(run.stderr_lines) == 1
    line = run.stderr_lines[0]
    assert line.startswith("raidlab: error: fio job file: 3 problems: ")
    assert "line 3: unknown option 'foo'" in line
    assert "line 4: fio option 'read_iolog' replays a fio I/O log, which raidlab does not read" in line
    assert "line 5: ioengine=rbd talks to an object store" in line


def test_options_without_effect_are_accepted_with_a_note():
    run = run_cli(["sim", "--drive", "null", "--runtime-s", "0.01", "--fio",
                   "[j]\nrw=read\ncpus_allowed=0-3\ngtod_reduce=1\nrefill_buffers\nlog_prio=1\n"])
    assert run.status == 0, run.stderr
    assert ("raidlab: note: fio options cpus_allowed, gtod_reduce, log_prio, refill_buffers have no effect "
            "on the simulated I/O") in run.stderr


def test_thinktime_lowers_iops_by_the_pause():
    plain = sim(BASE)
    mean_ns = plain["jobs"][0]["read"]["lat_ns"]["mean"]
    thinking = sim(BASE + "thinktime=100\n")  # µs, a pause after every completed I/O
    assert iops(thinking) == pytest.approx(1e9 / (mean_ns + 100_000), rel=0.01)
    blocks = sim(BASE + "thinktime=100\nthinktime_blocks=4\n")  # one pause per 4 I/Os
    assert iops(blocks) == pytest.approx(4e9 / (4 * mean_ns + 100_000), rel=0.01)
    spin = sim(BASE + "thinktime=50\nthinktime_spin=100\n")  # spinning longer than thinktime
    assert iops(spin) == pytest.approx(iops(thinking), rel=0.01)


def test_rate_caps_the_bandwidth_per_direction():
    capped = sim(BASE + "rate=1m\n")
    assert capped["jobs"][0]["read"]["bw_bytes"] == pytest.approx(1 << 20, rel=0.01)
    mixed = sim("[j]\nrw=randrw\nrwmixread=50\nbs=4k\nruntime=1\ntime_based\nrate=1m,1m\n")
    job = mixed["jobs"][0]
    total = job["read"]["bw_bytes"] + job["write"]["bw_bytes"]
    assert total == pytest.approx(2 << 20, rel=0.02)
    assert job["read"]["bw_bytes"] == pytest.approx(job["write"]["bw_bytes"], rel=0.1)


def test_stonewall_runs_jobs_one_after_another():
    two = "[a]\nrw=randread\nruntime=100ms\ntime_based\n[b]\n{wall}rw=randread\nruntime=100ms\ntime_based\n"
    together = sim(two.format(wall=""))
    apart = sim(two.format(wall="stonewall\n"))
    assert together["raidlab"]["simulated_ns"] == pytest.approx(100e6, rel=0.001)
    assert apart["raidlab"]["simulated_ns"] == pytest.approx(200e6, rel=0.001)
    for document in (together, apart):
        assert [j["job_runtime"] for j in document["jobs"]] == [100, 100]
    # In sequence each job has the array to itself: the same IOPS as alone.
    assert iops(apart, 1) == pytest.approx(iops(apart, 0), rel=0.01)


def test_startdelay_starts_a_job_later_and_times_it_from_its_start():
    document = sim("[a]\nrw=read\nruntime=50ms\ntime_based\n[b]\nrw=read\nstartdelay=30ms\nruntime=50ms\ntime_based\n")
    assert document["raidlab"]["simulated_ns"] == pytest.approx(80e6, rel=0.001)
    assert [j["job_runtime"] for j in document["jobs"]] == [50, 50]


def test_verify_reads_back_every_block_written():
    document = sim("[w]\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\n")
    job = document["jobs"][0]
    assert job["write"]["total_ios"] == 256 and job["read"]["total_ios"] == 256
    assert job["read"]["io_bytes"] == job["write"]["io_bytes"] == 1 << 20
    unverified = sim("[w]\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\ndo_verify=0\n")
    assert unverified["jobs"][0]["read"]["total_ios"] == 0


def test_loops_repeat_the_pass():
    assert sim("[j]\nrw=write\nbs=4k\nsize=1m\nloops=3\n")["jobs"][0]["write"]["total_ios"] == 3 * 256


def test_bsrange_draws_sizes_between_the_bounds_in_steps_of_the_smallest():
    job = parse_fio("[j]\nrw=randread\nbsrange=4k-16k\n").jobs[0]
    assert job.block_sizes == ((4096, 25), (8192, 25), (12288, 25), (16384, 25))
    document = sim("[j]\nrw=randread\nbsrange=4k-16k\nruntime=200ms\ntime_based\n")
    read = document["jobs"][0]["read"]
    assert read["io_bytes"] / read["total_ios"] == pytest.approx(10240, rel=0.03)


def test_bs_per_direction_sizes_reads_and_writes_apart():
    document = sim("[j]\nrw=randrw\nbs=4k,64k\nruntime=100ms\ntime_based\n")
    job = document["jobs"][0]
    assert job["read"]["io_bytes"] == job["read"]["total_ios"] * 4096
    assert job["write"]["io_bytes"] == job["write"]["total_ios"] * 65536


def test_sync_flushes_after_every_write():
    job = sim("[j]\nrw=randwrite\nbs=4k\nsize=1m\nsync=1\n")["jobs"][0]
    assert job["write"]["total_ios"] == 256 and job["sync"]["total_ios"] == 256


def test_size_percent_takes_that_share_of_the_target():
    whole = sim("[j]\nrw=read\nbs=64m\nsize=100%\n")["jobs"][0]["read"]["io_bytes"]
    half = sim("[j]\nrw=read\nbs=64m\nsize=50%\n")["jobs"][0]["read"]["io_bytes"]
    assert half / whole == pytest.approx(0.5, abs=64 / (whole / 2**20))


def test_rw_sequencer_and_backwards_reads_are_read():
    job = parse_fio("[j]\nrw=randread:8\n").jobs[0]
    assert job.random_fraction == pytest.approx(1 / 8)
    assert parse_fio("[j]\nrw=read:-8k\n").jobs[0].seq_skip_bytes == -8192
    document = sim("[j]\nrw=read:-8k\nbs=4k\nsize=1m\n")
    assert document["jobs"][0]["read"]["total_ios"] == 256  # one pass, walking backwards


def test_offset_increment_loops_nrfiles_and_zones_reach_the_core():
    job = parse_fio("[j]\nnumjobs=4\noffset_increment=1g\nnrfiles=8\nfilesize=16m\n").jobs[0]
    assert (job.offset_increment_bytes, job.files, job.size_bytes) == (1 << 30, 8, 8 << 24)
    zoned = parse_fio("[j]\nrw=randread\nrandom_distribution=zoned:50/5:30/15:20/\n").jobs[0]
    assert [round(z[0], 2) for z in zoned.zones] == [0.5, 0.3, 0.2]
    assert [z[1:] for z in zoned.zones] == [(0, 50_000), (50_000, 200_000), (200_000, 1_000_000)]
    strided = parse_fio("[j]\nrw=read\nzonemode=strided\nzonesize=256m\nzoneskip=2g\n").jobs[0]
    assert (strided.zone_bytes, strided.zone_skip_bytes) == (256 << 20, 2 << 30)
    document = sim("[j]\nrw=randread\nnumjobs=4\noffset_increment=1g\nsize=64m\nruntime=20ms\ntime_based\n")
    assert document["jobs"][0]["read"]["total_ios"] > 0


def test_iodepth_low_lets_the_queue_drain_before_refilling():
    text = "[j]\nrw=randread\nioengine=libaio\niodepth=32\nruntime=100ms\ntime_based\n"
    full = run_cli(["sim", "--drive", "nvme-tlc", "--level", "0", "--devices", "1", "--fio", text, "--json"]).json()
    low = run_cli(["sim", "--drive", "nvme-tlc", "--level", "0", "--devices", "1", "--fio", text + "iodepth_low=4\n",
                   "--json"]).json()
    queue = lambda d: d["array_device"]["queue_depth_mean"]  # md0
    assert queue(full) == pytest.approx(32, rel=0.02)
    assert 4 < queue(low) < 0.8 * queue(full)


def test_group_reporting_sums_a_group_and_per_job_keeps_each():
    text = ("[global]\nrw=randread\nruntime=50ms\ntime_based\ngroup_reporting\n[a]\n[b]\n"
            "[c]\nnew_group\n")
    grouped = sim(text)
    names = [j["jobname"] for j in grouped["jobs"]]
    assert names == ["a", "c"]
    each = sim(text, "--per-job")
    assert [j["jobname"] for j in each["jobs"]] == ["a", "b", "c"]
    assert grouped["jobs"][0]["read"]["total_ios"] == sum(j["read"]["total_ios"] for j in each["jobs"][:2])
    assert grouped["jobs"][0]["read"]["clat_ns"]["N"] == grouped["jobs"][0]["read"]["total_ios"]
    assert [j["groupid"] for j in each["jobs"]] == [0, 0, 1]


def test_engines_map_with_a_note_and_network_engines_are_refused():
    workload = parse_fio("[j]\nioengine=null\niodepth=8\n")
    assert workload.jobs[0].iodepth == 8
    assert any("ioengine=null does no I/O in fio" in note for note in workload.notes)
    run = run_cli(["sim", "--drive", "null", "--fio", "[j]\nioengine=net\n"])
    assert run.status == 2
    assert run.stderr_lines == ["raidlab: error: fio job file line 2: ioengine=net talks to a network service, "
                                "not to a local block device"]


def test_sysbench_report_interval_prints_sysbench_lines():
    run = run_cli(["sim", "--drive", "null", "--sysbench", "--file-test-mode=rndrd --time=3 --report-interval=1"])
    assert run.status == 0, run.stderr
    lines = [line for line in run.stdout.splitlines() if line.startswith("[ ")]
    assert [line.split(" ]")[0] for line in lines] == ["[ 1s", "[ 2s", "[ 3s"]
    assert all(" reads: " in line and " MiB/s writes: " in line and " fsyncs: " in line
               and "latency (ms,95%): " in line for line in lines)


def test_the_member_table_reads_like_iostat():
    run = run_cli(["sim", "--drive", "null", "--runtime-s", "0.02", "--fio", "[j]\nrw=randwrite\n"])
    header = next(line for line in run.stdout.splitlines() if line.startswith("device"))
    assert header.split() == ["device", "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "r_await", "w_await",
                              "aqu-sz", "%util", "flush/s"]
    assert any(line.startswith("md0 ") for line in run.stdout.splitlines())


def test_flow_keeps_the_jobs_io_in_the_ratio_of_their_weights():
    text = "[global]\nrw=randread\nruntime=100ms\ntime_based\n[a]\nflow=1\n[b]\nflow=8\n"
    document = sim(text)
    ratio = document["jobs"][1]["read"]["total_ios"] / document["jobs"][0]["read"]["total_ios"]
    assert ratio == pytest.approx(8, rel=0.01)
    # Without flow each job runs on its own: the same IOPS.
    free = sim(text.replace("flow=1", "").replace("flow=8", ""))
    assert iops(free, 1) == pytest.approx(iops(free, 0), rel=0.01)


def test_stream_options_are_written_back_as_fio_reads_them():
    from raidlab.workload.fio import render_fio

    workload = parse_fio("[j]\nrw=randwrite\nthinktime=50\nthinktime_blocks=2\nrate=1m\nloops=2\nsize=10%\n"
                         "verify=md5\nstartdelay=2\nflow=3\niodepth_low=0\n")
    assert parse_fio(render_fio(workload)).jobs == workload.jobs
    with pytest.raises(ValueError, match="seq_skip_bytes have no fio spelling"):
        render_fio(parse_fio("[j]\nrw=read:-8k\n"))


def test_file_service_type_reaches_the_core_and_is_written_back():
    from raidlab.workload.fio import render_fio

    default = parse_fio("[j]\nrw=read\nnrfiles=4\nfilesize=1m\n").jobs[0]
    assert (default.files, default.file_service, default.file_service_ios) == (4, 1, 1)  # roundrobin
    chosen = parse_fio("[j]\nrw=read\nnrfiles=4\nfilesize=1m\nfile_service_type=random:8\n")
    assert (chosen.jobs[0].file_service, chosen.jobs[0].file_service_ios) == (2, 8)
    assert parse_fio(render_fio(chosen)).jobs == chosen.jobs
    document = sim("[j]\nrw=read\nbs=4k\nnrfiles=4\nfilesize=1m\n")
    assert document["jobs"][0]["read"]["total_ios"] == 4 * 256


def test_wait_for_delays_only_the_job_that_waits():
    text = ("[a]\nrw=read\nruntime=40ms\ntime_based\n[b]\nwait_for=a\nrw=read\nruntime=40ms\ntime_based\n"
            "[c]\nrw=read\nruntime=40ms\ntime_based\n")
    workload = parse_fio(text)
    assert [job.group for job in workload.jobs] == [0, 1, 0]
    assert sim(text)["raidlab"]["simulated_ns"] == pytest.approx(80e6, rel=0.001)


def test_a_linear_rate_issues_its_first_io_at_once():
    # fio's usec_for_io: nothing is due before the first I/O, so it goes at the start.
    document = sim("[j]\nrw=read\nbs=4k\nrate=1250\nruntime=20ms\ntime_based\n")
    assert document["jobs"][0]["read"]["total_ios"] == 1
