"""The usable capacity reports show is the array the simulator builds: md's members less mdadm's
data offset (mdadm --detail's Array Size), the whole drive behind a hardware controller."""

from __future__ import annotations

import pytest

from raidlab import _core
from raidlab.notes import array_capacity_bytes
from raidlab.run import build_run

#: cheetah-10k7's capacity (300 GB); mdadm 1.2 puts its data offset before each member's data.
DRIVE_BYTES = 300_000_000_000


@pytest.mark.parametrize("level,devices,data_members", [("5", 6, 5), ("6", 8, 6), ("10", 4, 2)])
def test_md_usable_capacity_leaves_out_mdadms_data_offset(level, devices, data_members):
    spec = build_run({"level": level, "devices": devices, "chunk_kib": 64, "drive": "cheetah-10k7",
                      "preset": "oltp-postgres"})
    sectors = DRIVE_BYTES // 512
    offset = _core.mdadm_data_offset_sectors(sectors, 64 * 2)
    member_bytes = (sectors - offset) // 2 * 1024
    chunk_bytes = 64 * 1024
    assert array_capacity_bytes(spec) == member_bytes // chunk_bytes * chunk_bytes * data_members


def test_a_controllers_usable_capacity_is_the_whole_drives():
    spec = build_run({"level": "5", "devices": 6, "chunk_kib": 64, "drive": "cheetah-10k7",
                      "controller": "hw", "preset": "oltp-postgres"})
    assert array_capacity_bytes(spec) == DRIVE_BYTES // (64 * 1024) * (64 * 1024) * 5
