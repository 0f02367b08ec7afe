"""print() of the Python API's reliability and plan results is one readable line, not a dump."""

from __future__ import annotations

import raidlab
from raidlab.planner import plan
from raidlab.workload import preset


def test_a_reliability_result_prints_its_array_and_headline_odds_in_one_short_line():
    result = raidlab.reliability.analyze(level=6, devices=6, capacity_tb=4, trials=100)
    text = repr(result)
    assert "\n" not in text and len(text) < 300, text
    assert text.startswith("ReliabilityResult(raid6 of 6 x 4 TB, AFR 1.5 %")
    assert f"{result.p_array_loss:.3g}" in text and "MTTDL" in text and "exact chain" in text


def test_a_plan_result_prints_its_winner_in_one_short_line():
    result = plan(capacity_tb=0.5, workload=preset("oltp-postgres"), drives=["x25e-slc"], levels=[5, 10],
                  chunks_kib=[64], raid10_layouts=["n2"], max_drives=12, sim_seconds=0.05, jobs=1)
    text = repr(result)
    assert "\n" not in text and len(text) < 300, text
    assert text.startswith(f"PlanResult(winner {result.document['winner']}: ")
    assert f"{len(result.ranked)} design(s) ranked" in text
