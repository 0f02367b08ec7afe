"""The glue checks every run setting it reads against the core's one declaration of it
(``_core.run_settings()``), so a configuration dict handed to the core directly (not through
``raidlab.run``, which checks first) gets the declared range in its error, and the core's own
defaults are the declared ones."""

import copy

import pytest

import raidlab
from raidlab import _core, controllers
from raidlab.run import build_run


def _config(**settings):
    return build_run({"level": "5", "devices": 4, "drive": "null", "preset": "wal", "runtime_s": 0.01,
                      **settings}).config()


def _declared(name):
    return next(s for s in _core.run_settings() if s["name"] == name)


@pytest.mark.parametrize("path, value, message", [
    (("nr_requests",), 0, "nr_requests = 0 is out of range: expected 1 to 65536 requests"),
    (("max_sectors_kb",), 2, "max_sectors_kb = 2 is out of range: expected 4 to 1048576 KiB"),
    (("max_events",), 0, "max_events = 0 is out of range: expected 1 to 9223372036854775807 events"),
    (("max_time_s",), 0.0, "max_time_s = 0 is out of range: expected 0.001 to 1000000 s"),
    (("controller", "stripe_cache_size"), 5, "stripe_cache_size = 5 is out of range: expected 17 to 32768 4 KiB rows"),
    (("controller", "rmw_level"), 3, "rmw_level = 3 is out of range: expected 0 to 2"),
    (("rebuild", "rebuild_priority"), 0, "rebuild_priority = 0 is out of range: expected 1 to 100 %"),
    (("command_timeout_s",), -1.0, "command_timeout_s = -1 is out of range: expected 0 to 1000000 s"),
])
def test_a_setting_past_its_declared_range_is_refused_by_the_core(path, value, message):
    config = copy.deepcopy(_config())
    *parents, key = path
    target = config
    for parent in parents:
        target = target[parent]
    target[key] = value
    with pytest.raises(raidlab.ConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        _core.CoreSimulation(config)


def test_a_controller_parameter_past_its_declared_range_is_refused_by_the_core():
    config = _config(controller="hw")
    config["controller"]["hw"]["commands_per_drive"] = 70000
    with pytest.raises(raidlab.ConfigError, match="^commands_per_drive = 70000 is out of range: expected 0 to 65536 commands$"):
        _core.CoreSimulation(config)
    config["controller"]["hw"]["commands_per_drive"] = 8
    config["controller"]["hw"]["write_policy"] = "sometimes"
    with pytest.raises(raidlab.ConfigError, match="^write_policy 'sometimes': expected one of write-back, write-through"):
        _core.CoreSimulation(config)


def test_what_a_run_records_is_the_declared_default():
    config = _config()
    assert config["nr_requests"] == _declared("nr_requests")["default"] == 128
    assert config["max_events"] == _declared("max_events")["default"] == 2_000_000_000
    assert config["controller"]["stripe_cache_size"] == _declared("stripe_cache_size")["default"]
    assert config["rebuild"]["rebuild_priority"] == _declared("rebuild_priority")["default"]


def test_the_controller_parameters_declared_by_the_core_are_the_ones_the_cli_lists():
    names = [p["name"] for p in _core.controller_settings()]
    assert len(names) == len(set(names))
    assert names == [p.name for p in controllers.PARAMS]


def test_a_rebuild_start_past_its_declared_percentage_is_refused_by_the_core():
    config = _config()
    config["rebuild"]["rebuild_start_pct"] = 99.9001
    with pytest.raises(raidlab.ConfigError, match=r"^rebuild_start_pct = 99.9001 is out of range: expected 0 to 99.9 %$"):
        _core.CoreSimulation(config)
    config["rebuild"]["rebuild_start_pct"] = 99.9
    _core.CoreSimulation(config)
