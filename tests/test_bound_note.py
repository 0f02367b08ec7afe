"""The note that a run stopped at the bound on simulated time names only jobs it really cut."""

from __future__ import annotations

import raidlab

REQUESTS = "--file-test-mode=rndrd --file-extra-flags=direct --num-threads=16 --max-requests={}"


def _bound_notes(result: raidlab.sim.SimResult) -> list:
    return [note for note in result.notes if "still running when the run stopped" in note]


def test_a_rebuild_outlasting_a_finished_workload_is_not_called_a_cut_workload():
    # 2,000 requests end within 2 s; the spare's rebuild keeps the run going to the 60 s bound.
    result = raidlab.simulate(level=5, devices=4, drive="cheetah-10k7", sysbench=REQUESTS.format(2000),
                              failed=[0], spare=True, max_time_s=60)
    assert result.raw["end_ns"] == 60_000_000_000 and result.raw["jobs"][0]["finished"]
    assert _bound_notes(result) == []


def test_a_workload_the_bound_cuts_is_noted():
    result = raidlab.simulate(level=5, devices=4, drive="cheetah-10k7", sysbench=REQUESTS.format(200_000),
                              max_time_s=2)
    assert not result.raw["jobs"][0]["finished"]
    assert len(_bound_notes(result)) == 1
