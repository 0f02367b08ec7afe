"""`raidlab reliability --rebuild-from-sim`: the repair time comes from the rebuild simulator."""

from __future__ import annotations

import json

from raidlab.cli import main
from raidlab.rebuild import simulated_rebuild_hours


def test_idle_rebuild_hours_follow_the_drive_rate():
    hours = simulated_rebuild_hours(level="5", devices=4, layout=None, chunk_kib=512,
                                    capacity_bytes=2 * 10**12, drive="nearline-7200", runtime_s="10")
    # 2 TB at the nearline drive's ~150-250 MB/s sequential rate: a few hours.
    assert 1.5 < hours < 6


def test_load_lengthens_the_rebuild_and_raises_the_loss_probability(capsys):
    base = ["reliability", "--level", "5", "--devices", "6", "--capacity-tb", "2", "--afr-pct", "1.5",
            "--rebuild-from-sim", "--drive", "nearline-7200", "--json", "--sim-opt", "runtime_s=10"]
    assert main(base) == 0
    idle = json.loads(capsys.readouterr().out)
    assert main([*base, "--sim-opt", "preset=oltp-innodb"]) == 0
    loaded = json.loads(capsys.readouterr().out)
    assert loaded["p_array_loss"] > idle["p_array_loss"]
    assert loaded["mttdl_years"] < idle["mttdl_years"]


def test_unknown_sim_option_is_one_line(capsys):
    status = main(["reliability", "--level", "5", "--devices", "4", "--afr-pct", "1", "--rebuild-from-sim",
                   "--sim-opt", "warp=9"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1 and "warp" in err
