"""Stacked levels take the device counts their help names (raid1 pairs for 1+0, two equal
inner arrays otherwise, each of its level's fewest drives): 3 drives no longer make a raid0+1
of three one-disk halves."""

from __future__ import annotations

import pytest

import raidlab
from raidlab.errors import ConfigError

from conftest import refused, run_cli

#: A short, light run: one 8 KiB writer with fdatasync for 0.1 s.
SHORT = ["--preset", "wal", "--runtime-s", "0.1"]


# ---- stacked levels: the device counts the help names ----

@pytest.mark.parametrize("level, devices, valid", [
    ("0+1", 3, "4, 6, 8"), ("0+1", 2, "4, 6, 8"), ("0+1", 5, "4, 6, 8"),
    ("1+0", 5, "4, 6, 8"), ("1+0", 3, "4, 6, 8"),
    ("5+0", 3, "4, 6, 8"), ("5+0", 7, "4, 6, 8"),
    ("6+0", 6, "8, 10, 12"), ("6+0", 9, "8, 10, 12"),
])
def test_stacked_level_refuses_a_device_count_outside_the_helps_rule(level, devices, valid):
    run = run_cli(["sim", "--level", level, "--devices", str(devices), *SHORT])
    refused(run, f"raid{level} of {devices} devices", valid)
    with pytest.raises(ConfigError, match=valid):
        raidlab.simulate(level=level, devices=devices, preset="wal", runtime_s=0.1)


def test_raid0_plus_1_refuses_one_disk_halves_given_as_inner_devices():
    run = run_cli(["sim", "--level", "0+1", "--devices", "4", "--inner-devices", "1", *SHORT])
    refused(run, "--inner-devices 1", "raid0 needs at least 2")


def test_stacked_levels_keep_their_valid_counts():
    for level, devices, extra in (("0+1", 4, {}), ("1+0", 6, {}), ("5+0", 6, {}), ("6+0", 8, {}),
                                  ("1+0", 6, {"inner_devices": 3}), ("5+0", 9, {"inner_devices": 3})):
        doc = raidlab.simulate(level=level, devices=devices, preset="wal", runtime_s=0.05, **extra).to_dict()
        assert doc["jobs"][0]["write"]["total_ios"] > 0
