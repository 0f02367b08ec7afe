"""A host (cloud instance) caps the sum of its volume members with its EBS
IOPS and bandwidth, baseline and burst; a hardware controller's BBU learn cycle switches its
cache to write-through for the cycle."""

import pytest

import raidlab
from conftest import run_cli

RANDOM_16K = "[rr]\nrw=randread\nbs=16k\ndirect=1\nioengine=libaio\niodepth={depth}\ntime_based=1\nruntime={runtime}\n"
RANDOM_WRITE_4K = "[rw]\nrw=randwrite\nbs=4k\ndirect=1\nioengine=libaio\niodepth=32\ntime_based=1\nruntime={runtime}\nsize=2g\n"

# AWS "Amazon EBS-optimized instances": m5.large 3,600 IOPS baseline, 18,750 maximum for 30 min.
M5_LARGE_BASELINE, M5_LARGE_BURST, BURST_S = 3600, 18750, 1800


def _raid0_gp3(tmp_path, runtime=20, devices=4, **settings):
    job = tmp_path / "rr.fio"
    job.write_text(RANDOM_16K.format(depth=32 * devices, runtime=runtime))
    return raidlab.simulate(level="0", devices=devices, chunk_kib=256, drive="ebs-gp3", fio=str(job),
                            **settings).to_dict()


def _read_iops(doc):
    return doc["jobs"][0]["read"]["iops"]


def test_hosts_lists_ec2_presets_with_limits_and_source():
    run = run_cli(["hosts", "--json"])
    assert run.status == 0, run.stderr
    hosts = {h["name"]: h for h in run.json()}
    assert {"m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge", "r5.large", "c5.xlarge"} <= set(hosts)
    assert hosts["m5.large"]["limits"] == {"baseline_iops": 3600.0, "burst_iops": 18750.0, "baseline_mb_s": 81.25,
                                           "burst_mb_s": 593.75, "burst_minutes": 30.0, "credits_pct": 100.0}
    assert hosts["m5.4xlarge"]["limits"]["burst_minutes"] == 0.0  # sustained: no burst
    assert all("EBS-optimized" in h["source"] for h in hosts.values())


def test_a_host_that_does_not_cap_leaves_raid0_of_four_gp3_scaling(tmp_path):
    # Four gp3 at 3,000 IOPS each; m5.4xlarge's 18,750 IOPS and m5.large's burst sit above them.
    alone = _read_iops(_raid0_gp3(tmp_path))
    assert alone >= 3.6 * 3000
    for host in ("m5.4xlarge", "m5.large"):
        doc = _raid0_gp3(tmp_path, host=host)
        assert _read_iops(doc) == pytest.approx(alone, rel=0.01)
        assert doc["host"]["iops_burst_end_s"] is None


def test_a_capping_host_gives_its_cap(tmp_path):
    # m5.large with its burst spent today (credits 0): its baseline, 3,600 IOPS of 16 KiB.
    spent = _raid0_gp3(tmp_path, host="m5.large", host_credits_pct=0)
    assert _read_iops(spent) == pytest.approx(M5_LARGE_BASELINE, rel=0.03)
    # i3.large has no burst: 3,000 IOPS for the four volumes together.
    assert _read_iops(_raid0_gp3(tmp_path, host="i3.large")) == pytest.approx(3000, rel=0.03)


def test_a_burst_host_bursts_then_falls_to_its_baseline_when_the_budget_says(tmp_path):
    # The bucket holds (18,750 - 3,600) x 1,800 s of credits; 1% of it, drained at the array's
    # rate less the baseline, lasts 0.01 x bucket / (array IOPS - 3,600) seconds.
    demand = _read_iops(_raid0_gp3(tmp_path, runtime=10))
    doc = _raid0_gp3(tmp_path, runtime=60, host="m5.large", host_credits_pct=1)
    budget_s = 0.01 * (M5_LARGE_BURST - M5_LARGE_BASELINE) * BURST_S / (demand - M5_LARGE_BASELINE)
    assert 30 < budget_s < 36
    assert doc["host"]["iops_burst_end_s"] == pytest.approx(budget_s, abs=0.5)
    series = doc["timeline"]
    before = [p["read_iops"] for p in series[1:int(budget_s) - 1]]
    after = [p["read_iops"] for p in series[int(budget_s) + 2:]]
    assert sum(before) / len(before) == pytest.approx(demand, rel=0.02)
    assert sum(after) / len(after) == pytest.approx(M5_LARGE_BASELINE, rel=0.01)


def test_a_rebuild_goes_through_the_hosts_limits(tmp_path):
    # md raid1 over two gp3: recovery reads one volume and writes the other. Alone it runs at
    # gp3's 125 MiB/s; behind i3.large's 53.13 MB/s both directions share the link: half each.
    settings = dict(level="1", devices=2, drive="ebs-gp3", runtime_s=20,
                    timeline=[{"action": "fail", "member": 1, "at_s": 0}, {"action": "replace", "member": 1, "at_s": 1}])
    alone = raidlab.simulate(**settings).to_dict()["rebuild"]["rate_kib_s"] * 1024
    capped = raidlab.simulate(host="i3.large", **settings).to_dict()["rebuild"]["rate_kib_s"] * 1024
    assert alone == pytest.approx(125 * 2**20, rel=0.06)
    assert capped == pytest.approx(53.13e6 / 2, rel=0.03)


@pytest.mark.parametrize("args, words", [
    (["--host", "m9.huge"], "--host"),
    (["--drive", "cheetah-10k7", "--host", "m5.large"], "cloud volume members"),
    (["--host-credits-pct", "101", "--host", "m5.large"], "host-credits-pct"),
    (["--bbu-learn", "30+60"], "--bbu-learn needs a hardware controller"),
    (["--controller", "hw", "--no-bbu", "--bbu-learn", "30+60"], "no BBU"),
    (["--controller", "hw", "--bbu-learn", "30"], "START+DURATION"),
    (["--controller", "hw", "--bbu-learn", "30+0"], "DURATION above 0"),
    (["--controller", "hw", "--bbu-learn", "x+5"], "bbu_learn start"),
])
def test_bad_host_and_learn_options_end_in_one_line(args, words):
    run = run_cli(["sim", "--level", "0", "--devices", "2", "--drive", "ebs-gp3", "--preset", "wal",
                   "--runtime-s", "1"] + args)
    assert run.status == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("raidlab: error:"), run.stderr
    assert words in lines[0], lines[0]


def _random_writes(tmp_path, runtime, **settings):
    job = tmp_path / "rw.fio"
    job.write_text(RANDOM_WRITE_4K.format(runtime=runtime))
    return raidlab.simulate(level="5", devices=4, drive="cheetah-10k7", controller="hw", fio=str(job),
                            **settings).to_dict()


def _mean(series, first, last):
    window = [p["write_iops"] for p in series[first:last]]
    return sum(window) / len(window)


def test_a_bbu_learn_cycle_runs_at_write_through_iops_and_write_back_outside_it(tmp_path):
    back = _random_writes(tmp_path, 120)
    through = _random_writes(tmp_path, 120, controller_opts=["write_policy=write-through"])
    learn = _random_writes(tmp_path, 120, bbu_learn=(20, 90))
    phases = [(p["name"], p["start_s"], p["end_s"]) for p in learn["phases"]]
    assert phases == [("optimal", 0, 20), ("bbu-learn", 20, 110), ("optimal", 110, 120)]
    series, wb, wt = learn["timeline"], back["timeline"], through["timeline"]
    # Before the cycle the run is the write-back run, second for second.
    assert [p["write_iops"] for p in series[:20]] == [p["write_iops"] for p in wb[:20]]
    # In the cycle, once the cache's dirty data has destaged, the write-through figure.
    through_iops = _mean(wt, 5, 120)
    assert 600 < through_iops < 900
    assert _mean(series, 60, 110) == pytest.approx(through_iops, rel=0.05)
    # The destage of the dirty cache at the start of the cycle makes its first seconds slower still.
    assert _mean(series, 20, 30) < 0.5 * through_iops
    # After it, write-back again: the empty cache absorbs writes at once, then the write-back rate.
    assert series[110]["write_iops"] > 20 * through_iops
    assert _mean(series, 112, 120) > 3 * through_iops
    assert _mean(series, 112, 120) == pytest.approx(_mean(wb, 2, 20), rel=0.25)


def test_a_learn_cycle_that_keeps_write_back_changes_nothing_but_the_phase_name(tmp_path):
    back = _random_writes(tmp_path, 40)
    kept = _random_writes(tmp_path, 40, bbu_learn=(10, 20), bbu_learn_policy="write-back")
    assert [p["name"] for p in kept["phases"]] == ["optimal", "bbu-learn", "optimal"]
    assert [p["write_iops"] for p in kept["timeline"]] == [p["write_iops"] for p in back["timeline"]]


def test_host_is_one_setting_on_compare_and_plan(tmp_path):
    # compare: a designs file sets host like any other setting.
    designs = tmp_path / "d.toml"
    designs.write_text('[defaults]\nlevel = 0\ndevices = 4\ndrive = "ebs-gp3"\nchunk_kib = 256\n'
                       '[[design]]\nname = "alone"\n[[design]]\nname = "i3"\nhost = "i3.large"\n'
                       '[[design]]\nname = "spent"\nhost = "m5.large"\nhost_credits_pct = 0\n')
    run = run_cli(["compare", "--designs", str(designs), "--preset", "oltp-postgres", "--states", "optimal",
                   "--runtime-s", "5", "--json", "-"])
    assert run.status == 0, run.stderr
    iops = {}
    for entry in run.json()["runs"]:
        job = entry["document"]["jobs"][0]
        iops[entry["design"]] = job["read"]["iops"] + job["write"]["iops"]
    assert iops["alone"] > 3.0 * 3000
    assert iops["i3"] == pytest.approx(3000, rel=0.03)
    assert iops["spent"] == pytest.approx(M5_LARGE_BASELINE, rel=0.03)
    # plan: every candidate simulated behind the host.
    capped = run_cli(["plan", "--capacity-tb", "1", "--drive", "ebs-gp3", "--preset", "oltp-postgres",
                      "--levels", "0,10", "--sim-seconds", "5", "--host", "i3.large", "--json"])
    assert capped.status == 0, capped.stderr
    assert max(p["iops"] for p in capped.json()["points"]) <= 3000 * 1.01
    free = run_cli(["plan", "--capacity-tb", "1", "--drive", "ebs-gp3", "--preset", "oltp-postgres",
                    "--levels", "0,10", "--sim-seconds", "5", "--json"])
    assert max(p["iops"] for p in free.json()["points"]) > 3 * 3000
