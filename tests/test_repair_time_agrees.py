"""One repair time for reliability purposes: `raidlab reliability` and `raidlab plan` take it
from the same function (raidlab.rebuild.repair_time) and so give the same P(loss) for the same
array and drive when both use their defaults; each says which repair time it used."""

from __future__ import annotations

import pytest

from raidlab.drives import resolve_drive
from raidlab.rebuild import DEFAULT_REBUILD_RATE_MB_S, repair_time

from conftest import run_cli

#: raid6 x4 of 16 TB nearline drives, one chunk: a plan with a single candidate to simulate.
PLAN_RAID6 = ["plan", "--capacity-tb", "32", "--drive", "nearline-7200", "--levels", "6", "--chunks-kib", "512",
              "--max-drives", "4", "--preset", "oltp-postgres", "--jobs", "1"]
RELIABILITY_RAID6 = ["reliability", "--level", "6", "--devices", "4", "--chunk-kib", "512", "--trials", "0"]


def _json(args):
    run = run_cli([*args, "--json"])
    assert run.status == 0, run.stderr
    return run.json()


def test_reliability_and_plan_give_the_same_p_loss_for_the_same_array_and_drive():
    plan = _json(PLAN_RAID6)
    winner = next(d for d in plan["designs"] if d["name"] == plan["winner"])
    assert winner["name"] == "raid6 left-symmetric x4 512K nearline-7200"
    reliability = _json([*RELIABILITY_RAID6, "--drive", "nearline-7200"])
    assert reliability["p_array_loss"] == pytest.approx(winner["loss_probability"], rel=1e-12)
    assert reliability["inputs"]["repair"]["rebuild_hours"] == pytest.approx(winner["repair"]["hours"], rel=1e-12)
    # The same repair time, named the same way in both documents.
    assert reliability["inputs"]["repair"]["rebuild_source"] == winner["repair"]["source"] == "drive idle rebuild"
    assert 20 < winner["repair"]["hours"] < 40  # 16 TB at the drive's 125-261 MB/s, not md's 1 MB/s floor
    # The under-load rebuild is reported beside it, as a separate, larger risk.
    assert winner["rebuild"]["hours"] > 10 * winner["repair"]["hours"]
    assert winner["loss_probability_under_load"] > winner["loss_probability"]


def test_the_plan_seed_and_scenario_length_do_not_change_the_repair_time():
    one = _json([*PLAN_RAID6, "--seed", "7", "--sim-seconds", "0.5"])
    two = _json(PLAN_RAID6)
    assert one["designs"][0]["repair"] == two["designs"][0]["repair"]
    assert one["designs"][0]["loss_probability"] == two["designs"][0]["loss_probability"]


def test_reliability_default_repair_time_comes_from_the_member_size_and_says_so():
    doc = _json(["reliability", "--level", "6", "--devices", "4", "--capacity-tb", "16", "--trials", "0"])
    repair = doc["inputs"]["repair"]
    expected = 16e12 / (DEFAULT_REBUILD_RATE_MB_S * 1e6) / 3600
    assert repair["rebuild_hours"] == pytest.approx(expected)
    assert 20 < repair["rebuild_hours"] < 26 and repair["rebuild_hours"] != 24
    assert repair["rebuild_source"] == "member size at the default rate"
    assert "MB/s" in repair["rebuild_how"] and "16 TB" in repair["rebuild_how"]
    # It scales with the member: an eighth of the size, an eighth of the time.
    small = _json(["reliability", "--level", "6", "--devices", "4", "--capacity-tb", "2", "--trials", "0"])
    assert small["inputs"]["repair"]["rebuild_hours"] == pytest.approx(expected / 8)
    text = run_cli(["reliability", "--level", "6", "--devices", "4", "--capacity-tb", "16", "--trials", "0"]).stdout
    assert f"rebuild {expected:.1f} h: 16 TB at " in text


def test_reliability_with_a_drive_takes_its_size_and_simulated_idle_rebuild():
    doc = _json([*RELIABILITY_RAID6, "--drive", "nearline-7200"])
    assert doc["inputs"]["capacity_tb"] == pytest.approx(resolve_drive("nearline-7200").capacity_bytes / 1e12)
    repair = doc["inputs"]["repair"]
    direct = repair_time(level="6", devices=4, chunk_kib=512, drive="nearline-7200")
    assert repair["rebuild_hours"] == pytest.approx(direct["hours"])
    assert "nearline-7200" in repair["rebuild_how"] and "idle" in repair["rebuild_how"]
    text = run_cli([*RELIABILITY_RAID6, "--drive", "nearline-7200"]).stdout
    assert "idle rebuild of one nearline-7200 member" in text
    # --mttr-hours still overrides, and says so.
    given = _json([*RELIABILITY_RAID6, "--drive", "nearline-7200", "--mttr-hours", "24"])
    assert given["inputs"]["repair"]["rebuild_hours"] == 24.0
    assert given["inputs"]["repair"]["rebuild_source"] == "input"


def test_the_idle_rebuild_is_capped_by_speed_limit_max():
    fast = repair_time(level="5", devices=4, chunk_kib=512, capacity_bytes=10**12)
    capped = repair_time(level="5", devices=4, chunk_kib=512, capacity_bytes=10**12, speed_limit_max=50_000)
    assert capped["rate_kib_s"] == 50_000 and fast["rate_kib_s"] == pytest.approx(DEFAULT_REBUILD_RATE_MB_S * 1e6 / 1024)
    assert capped["hours"] == pytest.approx(10**12 / 1024 / 50_000 / 3600)


def test_the_plan_says_which_repair_time_its_p_loss_used():
    run = run_cli(PLAN_RAID6)
    assert run.status == 0, run.stderr
    why = run.stdout.split("Why:")[1].split("Setup for")[0]
    assert "idle rebuild of one nearline-7200 member" in why
    assert "under the workload" in why and "would be" in why


def test_raid0_has_no_rebuild_and_tiny_members_take_the_models_shortest_repair():
    raid0 = _json(["reliability", "--level", "0", "--devices", "4", "--drive", "nearline-7200", "--trials", "0"])
    assert raid0["inputs"]["repair"]["rebuild_source"] == "none (raid0)"
    assert "no rebuild" in raid0["inputs"]["repair"]["rebuild_how"]
    tiny = _json([*RELIABILITY_RAID6, "--drive", "nearline-7200", "--capacity-tb", "0.001"])
    assert tiny["inputs"]["repair"]["rebuild_hours"] == 0.01
    assert "the model's shortest repair" in tiny["inputs"]["repair"]["rebuild_how"]
    run = run_cli([*RELIABILITY_RAID6, "--drive", "nearline-7200", "--capacity-tb", "1000000"])
    assert run.status == 2 and len(run.stderr_lines) == 1
    assert run.stderr.startswith("raidlab: error: --capacity-tb 1e+06 for --drive nearline-7200: ")
