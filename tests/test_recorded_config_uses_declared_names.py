"""A run's recorded configuration (``raidlab.config`` in every JSON output, the dict the glue
reads) names each run setting as the core declares it (``_core.run_settings()``): the name a
user types on the command line, in a designs file or as a keyword, in its declared unit. No key
is a second name of a declared setting, and every declared setting the run uses is there."""

import pytest

import raidlab
from raidlab import _core

RUN = {s["name"]: s for s in _core.run_settings()}
CONTROLLER = {s["name"] for s in _core.controller_settings()}

#: Names the configuration used to carry for declared settings (another name, or the same
#: setting converted to another unit); none may come back.
OLD_NAMES = {
    "stripe_cache_entries": "stripe_cache_size", "hw_priority_pct": "rebuild_priority",
    "hot_spare": "spare", "speed_limit_min_kib_s": "speed_limit_min", "speed_limit_max_kib_s": "speed_limit_max",
    "start_ppm": "rebuild_start_pct", "dirty_ratio_pct": "dirty_ratio",
    "dirty_background_ratio_pct": "dirty_background_ratio", "read_ahead_kib": "read_ahead_kb",
    "dirty_expire_ns": "dirty_expire_centisecs", "dirty_writeback_ns": "dirty_writeback_centisecs",
    "ram_bytes": "ram_gib", "partition_bytes": "partition_gib", "credits_pct": "host_credits_pct",
}

#: Declared settings a run does not record under their own key, and where they went instead.
FOLDED = {
    "controller_opts": "merged into controller.hw (each parameter under its declared name)",
    "host_credits_pct": "in the 'host' entry (the host's limits), only with a host preset",
    "runtime_s": "the workload's jobs' run time (or max_time_s of an idle array)",
    "bbu_learn": "only with a learn cycle (then controller.bbu_learn, [start_s, duration_s])",
    "inner_devices": "only for a stacked level", "outer_chunk_kib": "only for a stacked level",
    "latency_by_second": "only when asked",
}

BASE = {"level": "5", "devices": 4, "drive": "null", "runtime_s": 0.02}
RUNS = {
    "md": {"preset": "oltp-postgres"},
    "hw controller": {"preset": "oltp-postgres", "controller": "megaraid-9361", "rebuild_priority": 50},
    "cloud host": {"preset": "oltp-postgres", "drive": "ebs-gp3", "host": "m5.large", "host_credits_pct": 40},
    "bbu learn cycle": {"preset": "oltp-postgres", "controller": "perc4e-di", "bbu_learn": "0.005+0.01"},
    "buffered": {"fio": "[w]\nrw=write\nbs=64k\ndirect=0\nsize=16m\n", "ram_gib": 1.5, "dirty_ratio": 30},
    "rebuild": {"failed": "1", "spare": True, "speed_limit_min": 5000, "rebuild_start_pct": 12.5,
                "partition_gib": 2.5, "max_time_s": 0.05},
}


def _keys(value, path=""):
    """Every (path, key) of a nested dict, lists' dicts included."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield path, key
            yield from _keys(inner, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner, path)


def _recorded(name):
    return raidlab.simulate(**{**BASE, **RUNS[name]}).to_dict()["raidlab"]["config"]


@pytest.fixture(scope="module", params=sorted(RUNS))
def recorded(request):
    return request.param, _recorded(request.param)


def _is_second_name(key):
    """A key that is an old name, or a declared name with a unit glued on (dirty_ratio_pct)."""
    if key in RUN or key in CONTROLLER:
        return False
    return key in OLD_NAMES or any(key.startswith(name + "_") for name in RUN if "_" in name)


def test_no_recorded_key_is_a_second_name_of_a_declared_setting(recorded):
    run, config = recorded
    wrong = sorted({f"{path}.{key}".lstrip(".") for path, key in _keys(config)
                    if not path.startswith("workload") and _is_second_name(key)})
    assert wrong == [], f"{run}: recorded under another name than the declared one"


def test_every_declared_setting_a_run_uses_is_recorded_under_its_name(recorded):
    run, config = recorded
    keys = {key for _, key in _keys(config)}
    missing = sorted(set(RUN) - set(FOLDED) - keys)
    assert missing == [], f"{run}: declared settings missing from the recorded configuration"


def test_recorded_values_are_in_the_declared_units():
    config = _recorded("rebuild")
    assert config["array"]["partition_gib"] == 2.5
    assert config["rebuild"]["rebuild_start_pct"] == 12.5
    assert config["rebuild"]["spare"] is True and config["rebuild"]["speed_limit_min"] == 5000
    cache = _recorded("buffered")["page_cache"]
    assert (cache["ram_gib"], cache["dirty_ratio"], cache["dirty_expire_centisecs"]) == (1.5, 30, 3000)
    assert _recorded("hw controller")["rebuild"]["rebuild_priority"] == 50
    # The drives' write caches as the setting's choices: md leaves the drives' own, the
    # controller preset switches them off.
    assert _recorded("md")["drive_write_cache"] == "default"
    assert _recorded("hw controller")["drive_write_cache"] == "off"
    assert _recorded("bbu learn cycle")["controller"]["bbu_learn"] == [0.005, 0.01]
    assert _recorded("cloud host")["host"]["host_credits_pct"] == 40.0


def test_the_recorded_configuration_runs_again_to_the_same_numbers():
    # The glue reads the declared names and converts units itself: a recorded configuration
    # handed back to the core reproduces the run.
    result = raidlab.simulate(**{**BASE, **RUNS["rebuild"]}).to_dict()
    simulation = _core.CoreSimulation(result["raidlab"]["config"])
    simulation.run_until(simulation.stop_ns)
    again = simulation.result()
    assert again["events"] == result["raidlab"]["events"]
    assert again["end_ns"] == result["raidlab"]["simulated_ns"]
    rebuild = again["rebuilds"][0]
    # 2.5 GiB partitions, the rebuild from 12.5 % of them: the units were converted as declared.
    assert rebuild["total_sectors"] * 512 == result["rebuild"]["member_bytes"]
    assert 0.12 < rebuild["start_sector"] / rebuild["total_sectors"] <= 0.125


def test_the_learn_cycle_under_its_declared_name_reaches_the_controller():
    # During the learn cycle the controller writes through: the run differs from one without.
    with_cycle = raidlab.simulate(**{**BASE, **RUNS["bbu learn cycle"]}).to_dict()["raidlab"]
    settings = {k: v for k, v in RUNS["bbu learn cycle"].items() if k != "bbu_learn"}
    without = raidlab.simulate(**{**BASE, **settings}).to_dict()["raidlab"]
    assert with_cycle["events"] != without["events"]
