"""Stacked arrays (1+0, 5+0, 6+0, 0+1): `raidlab layout` draws them, and a failure set they
cannot survive names the inner array that died and its drives."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

import raidlab
from raidlab.array import Array
from raidlab.planner import setup
from raidlab.stacked import mdadm_commands
from conftest import refused, run_cli


def test_sim_names_the_inner_raid5_that_died_in_a_5_plus_0():
    run = run_cli(["sim", "--level", "5+0", "--devices", "6", "--drive", "null", "--preset", "oltp-innodb",
                   "--failed", "0,1"])
    refused(run, "raid5+0 cannot run with members [0, 1] failed: inner array md1 (raid5 of drives 0, 1, 2) "
                 "has drives 0, 1 failed, and a raid5 of 3 runs with at most 1 failed",
            "the outer raid0 md0 needs every inner array: data is lost")
    assert "raid0 original" not in run.stderr


def test_api_names_the_second_inner_array_of_a_6_plus_0():
    with pytest.raises(raidlab.DataLossError, match=r"inner array md2 \(raid6 of drives 4, 5, 6, 7\) has drives "
                                                    r"4, 5, 6 failed"):
        raidlab.simulate(level="6+0", devices=8, drive="null", preset="oltp-innodb", failed=[4, 5, 6],
                         runtime_s=0.1)


def test_a_0_plus_1_loses_data_only_when_every_inner_raid0_lost_a_drive():
    run = run_cli(["sim", "--level", "0+1", "--devices", "4", "--drive", "null", "--preset", "oltp-innodb",
                   "--failed", "0,2"])
    refused(run, "raid0+1 cannot run with members [0, 2] failed: every inner raid0 has lost a drive "
                 "(md1: 0; md2: 2) and the outer raid1 md0 needs one of them whole")


def test_a_sweep_point_with_a_dead_inner_array_names_it(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text('[sweep]\nlevel = "1+0"\ndevices = 4\ndrive = "null"\npreset = "wal"\nruntime_s = 0.01\n'
                    '[grid]\nfailed = ["2", "0,1"]\n')
    run = run_cli(["sweep", str(grid), "--out", str(tmp_path / "store")])
    refused(run, "inner array md1 (raid1 of drives 0, 1) has drives 0, 1 failed")


def test_layout_draws_a_1_plus_0_as_raid1_pairs_under_an_outer_raid0():
    run = run_cli(["layout", "--level", "1+0", "--devices", "4", "--rows", "2"])
    assert run.status == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "level         raid1+0: outer raid0 md0 over 2 inner raid1 arrays"
    assert "inner arrays  md1 = disk0, disk1" in lines
    assert "              md2 = disk2, disk3" in lines
    outer = lines.index("outer raid0 md0 over md1, md2: rows 0-1 of 2044")
    assert lines[outer + 2:outer + 5] == ["row  md1  md2", "  0  D0   D1", "  1  D2   D3"]
    second = lines.index("inner array md2: rows 0-1 of 2048")
    assert lines[second + 2:second + 5] == ["row  disk2  disk3", "  0  D0     D0", "  1  D1     D1"]


def test_layout_json_of_a_5_plus_0_holds_the_outer_map_and_each_inner_arrays_drives():
    run = run_cli(["layout", "--level", "5+0", "--devices", "6", "--chunk-kib", "64", "--outer-chunk-kib", "256",
                   "--member-kib", "65536", "--json"])
    assert run.status == 0, run.stderr
    doc = run.json()
    assert doc["inner_arrays"] == [{"name": "md1", "members": [0, 1, 2]}, {"name": "md2", "members": [3, 4, 5]}]
    inner = Array(level=5, devices=3, chunk_kib=64, member_kib=65536)
    assert doc["inner"]["map"] == inner.map_table()
    assert doc["inner"]["layout"] == "left-symmetric"
    # The outer raid0 stripes 256 KiB chunks over the inner arrays' data past mdadm's offset.
    assert (doc["outer"]["level"], doc["outer"]["devices"], doc["outer"]["chunk_kib"]) == (0, 2, 256)
    assert doc["outer"]["map"][0][:3] == [0, 2, 4] and doc["outer"]["map"][1][:3] == [1, 3, 5]
    per_inner = inner.capacity_bytes - doc["outer_offset_bytes"]
    assert doc["capacity_bytes"] == 2 * (per_inner // (256 * 1024)) * 256 * 1024
    assert doc["capacity_bytes"] == doc["outer"]["capacity_bytes"]


@pytest.mark.parametrize("args, fragment", [
    (["--level", "1+0", "--devices", "5"], "raid1+0 of 5 devices: the array is raid1 pairs"),
    (["--level", "5+0", "--member-kib-list", "1024,1024,1024,1024"], "a stack takes --devices and one --member-kib"),
    (["--level", "6+0", "--devices", "8", "--inner-devices", "3"], "an inner raid6 needs at least 4 drives"),
    (["--level", "1+0", "--devices", "4", "--member-kib", "0"], "size 0 KiB is out of range"),
    (["--level", "5+0", "--devices", "6", "--chunk-kib", "3"], "chunk must be a power of two"),
])
def test_layout_refuses_a_stack_md_would_not_build_in_one_line(args, fragment):
    refused(run_cli(["layout", *args]), fragment)


def test_ext4_options_are_spelled_stripe_width_in_layout_plan_and_stack_setup():
    layout = run_cli(["layout", "--level", "5", "--devices", "4", "--chunk-kib", "64"]).stdout
    assert "-E stride=16,stripe_width=48" in layout
    stack = run_cli(["layout", "--level", "5+0", "--devices", "6", "--chunk-kib", "64",
                     "--outer-chunk-kib", "256"]).stdout
    assert "-E stride=64,stripe_width=128" in stack
    commands = []
    array = Array(level=5, devices=4, chunk_kib=64, member_kib=1 << 20)
    setup._filesystems(lambda command, why, *rest: commands.append((command, why)), [],
                       SimpleNamespace(level=5), setup.geometry(array))
    ext4 = [(c, why) for c, why in commands if c.startswith("mkfs.ext4")]
    assert ext4[0][0] == "mkfs.ext4 -b 4096 -E stride=16,stripe_width=48 /dev/md0"
    assert "stripe-width" not in ext4[0][1]
    geo = raidlab.stacked.geometry(SimpleNamespace(level="5+0", layout=None, chunk_kib=64, devices=6,
                                                   inner_devices=0, outer_chunk_kib=256), 1 << 20)
    steps = [s["command"] for s in mdadm_commands(geo, [f"d{i}" for i in range(6)])]
    assert "mkfs.ext4 -b 4096 -E stride=64,stripe_width=128 /dev/md0" in steps
    assert not any("stripe-width" in step for step in steps)


def test_a_stack_lost_during_the_run_names_the_inner_array_in_every_output(tmp_path):
    args = ["sim", "--level", "5+0", "--devices", "6", "--preset", "wal", "--runtime-s", "0.3",
            "--fail", "0@0.1s", "--fail", "1@0.15s"]
    table = run_cli(args)
    assert table.status == 0, table.stderr
    line = next(line for line in table.stdout.splitlines() if line.startswith("DATA LOSS"))
    assert "inner array md1 (raid5 of drives 0, 1, 2) has drives 0, 1 failed" in line
    document = run_cli(args + ["--json", "-"]).json()
    assert document["data_loss"]["failed_members"] == [0, 1]
    assert document["data_loss"]["why"] in line
    html = tmp_path / "loss.html"
    assert run_cli(args + ["--html", str(html)]).status == 0
    assert "inner array md1 (raid5 of drives 0, 1, 2)" in html.read_text()
