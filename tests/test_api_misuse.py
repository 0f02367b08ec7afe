"""The Python API answers a wrong argument with a RaidlabError (ConfigError or kin), never a raw
TypeError/AttributeError from deep inside."""

from __future__ import annotations

import pytest

import raidlab

FIO = "[j]\nrw=randread\nbs=4k\nsize=1m\nruntime=10ms\ntime_based\n"
WRONG = [None, -1, 1.5, [], {}, (1,), True, float("nan"), 10**30, b"x", object(), ""]


@pytest.mark.parametrize("value", WRONG, ids=repr)
def test_load_sweep_with_a_non_path_is_a_config_error(value):
    with pytest.raises(raidlab.ConfigError, match=r"load_sweep\(path\) must be a path"):
        raidlab.load_sweep(value)


@pytest.mark.parametrize("value", WRONG, ids=repr)
def test_sweep_with_a_non_path_spec_or_store_is_a_config_error(value, tmp_path):
    if not isinstance(value, dict):  # a dict is a sweep's tables
        with pytest.raises(raidlab.ConfigError, match=r"sweep\(spec\) must be a path"):
            raidlab.sweep(value, out=tmp_path / "store")
    with pytest.raises(raidlab.ConfigError, match=r"sweep\(out=\.\.\.\) must be a path"):
        raidlab.sweep({"sweep": {"level": 5, "devices": 4, "drive": "null", "fio": FIO}}, out=value)


@pytest.mark.parametrize("key", ["level", "devices", "drive", "fio", "chunk_kib", "seed", "runtime_s", "failed",
                                 "timeline", "controller", "spare", "sysbench", "controller_opts", "inner_devices"])
def test_simulate_with_a_wrongly_typed_setting_is_a_raidlab_error(key):
    for value in WRONG:
        try:
            raidlab.simulate(**{"level": 5, "devices": 4, "drive": "null", "fio": FIO, key: value})
        except raidlab.RaidlabError:
            pass


def test_a_level_that_is_not_text_the_core_can_read_is_an_array_error():
    # A lone surrogate (an undecodable byte) was a raw UnicodeEncodeError from the glue.
    with pytest.raises(raidlab.ArrayError, match="unknown RAID level"):
        raidlab.simulate(preset="wal", drive="null", level="\udcff")
    with pytest.raises(raidlab.ArrayError, match="unknown RAID level"):
        raidlab.reliability.analyze(level="\udcff", devices=4)


@pytest.mark.parametrize("argument", [
    {"sim_seconds": float("nan")}, {"sim_seconds": "x"}, {"chunks_kib": [2**70]}, {"chunks_kib": [float("nan")]},
    {"drives": [("nvme-tlc", 1)]}, {"drives": 0}, {"durability": ""}, {"mission_years": None},
    {"max_drives": None}, {"min_iops": "x"}, {"progress": 0},
], ids=repr)
def test_plan_with_a_wrongly_typed_argument_is_a_config_error_naming_it(argument):
    from raidlab.planner import plan
    from raidlab.workload import preset

    with pytest.raises(raidlab.ConfigError, match=f"plan\\({next(iter(argument))}="):
        plan(capacity_tb=0.1, workload=preset("wal"), **argument)


def test_other_wrongly_typed_api_arguments_are_raidlab_errors():
    # Each was a raw TypeError or ValueError.
    with pytest.raises(raidlab.ConfigError, match="simulate\\(progress="):
        raidlab.simulate(preset="wal", drive="null", runtime_s=0.01, progress=0)
    with pytest.raises(raidlab.ConfigError, match="analyze\\(progress="):
        raidlab.reliability.analyze(level=5, devices=4, progress=0)
    for options in ("x", 1):
        with pytest.raises(raidlab.ConfigError, match="analyze\\(sim_options="):
            raidlab.reliability.analyze(level=5, devices=4, sim_options=options)
    with pytest.raises(raidlab.ArrayError, match="member_kib_list must be a list"):
        raidlab.Array(level=5, devices=4, member_kib_list=0)
