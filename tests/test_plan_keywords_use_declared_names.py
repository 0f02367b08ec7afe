"""plan() hands its md speed limits to every simulated run: its keywords (and the plan
document's ``md_speed_limits``/``setup.speed_limits``) name them as the run settings are
declared (``speed_limit_min``, ``speed_limit_max``), not by another name."""

import inspect

from raidlab import _core
from raidlab.planner import plan, setup

DECLARED = {s["name"] for s in _core.run_settings()}


def _second_names(names):
    return sorted(n for n in names if n not in DECLARED
                  and any(n.startswith(d + "_") for d in DECLARED if "_" in d))


def test_plan_keywords_are_not_second_names_of_declared_settings():
    keywords = inspect.signature(plan).parameters
    assert _second_names(keywords) == []
    assert {"speed_limit_min", "speed_limit_max"} <= set(keywords)


def test_the_runbook_speed_limits_are_keyed_by_the_declared_names():
    assert setup.default_limits() == {"speed_limit_min": 1000, "speed_limit_max": 200000}
