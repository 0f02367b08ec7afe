"""Cloud block volumes as members: provisioned IOPS and throughput, I/O size
accounting and gp2's burst bucket, from the providers' published figures."""

import pytest

import raidlab
from conftest import run_cli

RANDOM_16K = "[rr]\nrw=randread\nbs=16k\ndirect=1\nioengine=libaio\niodepth={depth}\ntime_based=1\nruntime={runtime}\n"


def _random_reads(tmp_path, drive, devices, depth, runtime, **settings):
    job = tmp_path / "rr.fio"
    job.write_text(RANDOM_16K.format(depth=depth, runtime=runtime))
    return raidlab.simulate(level="0", devices=devices, chunk_kib=256, drive=drive, fio=str(job), **settings).to_dict()


def test_drives_lists_cloud_volumes_with_sources():
    run = run_cli(["drives", "--json"])
    assert run.status == 0, run.stderr
    volumes = {d["name"]: d for d in run.json() if d["kind"] == "volume"}
    assert {"ebs-gp2", "ebs-gp3", "ebs-io2", "ebs-st1"} <= set(volumes)
    assert all("Amazon EBS" in volumes[name]["source"] for name in ("ebs-gp2", "ebs-gp3", "ebs-io2", "ebs-st1"))


def test_gp3_at_default_provisioning_serves_3000_iops_and_raid0_of_four_scales(tmp_path):
    one = _random_reads(tmp_path, "ebs-gp3", 1, 32, 20)["jobs"][0]["read"]["iops"]
    assert one == pytest.approx(3000, rel=0.03)
    four = _random_reads(tmp_path, "ebs-gp3", 4, 128, 20)["jobs"][0]["read"]["iops"]
    assert four >= 3.6 * one


def test_gp2_bursts_until_its_credits_run_out_then_falls_to_its_baseline(tmp_path):
    # 100 GiB gp2: baseline 3 IOPS/GiB = 300; bursting at 3,000 spends 3,000 credits a second
    # and earns 300: the 5.4 million credit bucket lasts 5.4e6 / 2,700 = 2,000 s.
    doc = _random_reads(tmp_path, "ebs-gp2", 1, 32, 2100)
    series = doc["timeline"]
    assert all(abs(p["read_iops"] - 3000) <= 90 for p in series[10:1990])
    assert all(abs(p["read_iops"] - 300) <= 15 for p in series[2010:2100])
    empty_at = next(p["t_s"] for p in series if p["read_iops"] < 1000)
    assert 1995 <= empty_at <= 2005
