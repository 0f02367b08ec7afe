"""print(raidlab.simulate(...)) shows a short, useful summary, not the whole result."""

from __future__ import annotations

import re

import raidlab


def test_a_sim_results_repr_is_a_short_summary_of_design_workload_figures_seed_and_version():
    result = raidlab.simulate(level=5, devices=4, drive="cheetah-10k7", preset="oltp-innodb", runtime_s=1, seed=7)
    text = repr(result)
    assert len(text) < 1024, len(text)
    assert "\n" not in text
    assert text.startswith("SimResult(raid5 of 4 cheetah-10k7, 512 KiB chunk; ")
    assert "randrw 70/30, 16 KiB, 16 threads × QD1, direct" in text
    headline = result.to_dict()["raidlab"]["headline"]
    assert f"{headline['iops']:,.0f} IOPS" in text
    assert f"read {headline['read']['iops']:,.0f} IOPS p50 {headline['read']['p50_ms']:.3g} ms" in text
    assert f"p99 {headline['write']['p99_ms']:.3g} ms" in text
    assert f"({headline['basis']})" in text
    assert "seed 7" in text and f"raidlab {raidlab.__version__}" in text
    assert str(result) == text


def test_a_degraded_stacked_runs_repr_names_its_level_and_failed_members():
    result = raidlab.simulate(level="1+0", devices=4, drive="null", preset="oltp-innodb", runtime_s=0.2, failed=[1])
    text = repr(result)
    assert len(text) < 1024
    assert text.startswith("SimResult(raid1+0 of 4 null, 512 KiB chunk; ")
    assert "members [1] failed" in text
    assert re.search(r"\d IOPS", text)
