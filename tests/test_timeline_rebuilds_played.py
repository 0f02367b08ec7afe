"""Scripted failures and replacements the simulator cannot play are refused, never skipped:
a hot spare is md's one spare (a second failure, a failure of the slot it took and any
--replace are refused up front), and without one a replacement that met a running rebuild (the
simulator rebuilds one member at a time) is refused after the run; a replacement that fails
mid-rebuild is modelled (its recovery is aborted)."""

from __future__ import annotations

import pytest

import raidlab
from raidlab.errors import ConfigError

from conftest import refused, run_cli

#: A short, light run: one 8 KiB writer with fdatasync for 0.1 s.
SHORT = ["--preset", "wal", "--runtime-s", "0.1"]


# ---- a hot spare: md has one, and it takes the first failed member's slot ----

def test_spare_refuses_a_replace_of_a_working_member():
    run = run_cli(["sim", "--level", "5", "--devices", "4", *SHORT, "--spare", "--replace", "0@0.01s"])
    refused(run, "--replace 0@0.01s", "member 0 is working then", "hot replace")
    with pytest.raises(ConfigError, match="hot replace"):
        raidlab.simulate(level=5, devices=4, preset="wal", runtime_s=0.1, spare=True, replace="0@0.01s")


def test_spare_refuses_failing_the_member_it_is_rebuilding():
    run = run_cli(["sim", "--level", "5", "--devices", "4", *SHORT, "--spare",
                   "--fail", "0@0.01s", "--fail", "0@0.05s"])
    refused(run, "--fail 0@0.05s", "the hot spare took member 0's slot at 0.01s", "second spare")
    with pytest.raises(ConfigError, match="second spare"):
        raidlab.simulate(level=5, devices=4, preset="wal", runtime_s=0.1, spare=True,
                         fail=["0@0.01s", "0@0.05s"])


def test_spare_refuses_a_second_failure_that_would_need_a_second_spare():
    run = run_cli(["sim", "--level", "6", "--devices", "5", *SHORT, "--spare",
                   "--fail", "0@0.01s", "--fail", "1@0.02s"])
    refused(run, "--fail 1@0.02s", "member 0's slot at 0.01s", "second spare")
    run = run_cli(["sim", "--level", "6", "--devices", "5", *SHORT, "--spare", "--failed", "0,1"])
    refused(run, "--failed 0,1", "second spare")


def test_spare_refuses_a_replace_of_the_slot_it_already_took():
    run = run_cli(["sim", "--level", "5", "--devices", "4", *SHORT, "--spare",
                   "--fail", "0@0.01s", "--replace", "0@0.02s"])
    refused(run, "--replace 0@0.02s", "the hot spare took member 0's slot at 0.01s")


def test_spare_still_rebuilds_one_failed_member():
    doc = raidlab.simulate(level=5, devices=4, preset="wal", runtime_s=0.1, spare=True,
                           fail="0@0.01s").to_dict()
    assert doc["rebuild"]["member"] == 0


# ---- without a spare: the simulator rebuilds one member at a time ----

def test_a_replacement_while_another_rebuild_runs_is_refused_not_skipped():
    run = run_cli(["sim", "--level", "6", "--devices", "5", *SHORT, "--fail", "0@0.01s",
                   "--replace", "0@0.02s", "--fail", "1@0.03s", "--replace", "1@0.04s"])
    refused(run, "--replace 1@0.04s", "member 0's rebuild (from 0.02s) was still running then")


def test_a_replacement_failing_mid_rebuild_aborts_its_recovery_and_the_array_runs_degraded():
    # md_error on the disk being recovered: the recovery is interrupted and the slot is failed
    # again. The simulator used to skip the second fail and finish the rebuild as if nothing
    # had happened.
    result = raidlab.simulate(level=5, devices=4, drive="cheetah-10k7", preset="wal", runtime_s=0.1,
                              fail=["0@0.01s", "0@0.05s"], replace="0@0.02s")
    (rebuild,) = result.raw["rebuilds"]
    assert rebuild["member"] == 0 and rebuild["aborted_ns"] == 50_000_000 and rebuild["end_ns"] is None
    assert rebuild["done_sectors"] < rebuild["total_sectors"]
    phases = [(p["name"], p["start_ns"]) for p in result.raw["phases"]]
    assert phases == [("optimal", 0), ("degraded", 10_000_000), ("rebuilding", 20_000_000),
                      ("degraded", 50_000_000)], phases
    # A second replace after the abort starts a new rebuild of the slot.
    again = raidlab.simulate(level=5, devices=4, drive="cheetah-10k7", preset="wal", runtime_s=0.1,
                             fail=["0@0.01s", "0@0.05s"], replace=["0@0.02s", "0@0.06s"])
    assert [(r["start_ns"], r["aborted_ns"]) for r in again.raw["rebuilds"]] == [(20_000_000, 50_000_000),
                                                                               (60_000_000, None)]


def test_a_new_rebuild_right_after_an_abort_counts_only_its_own_windows():
    # The aborted recovery's sync windows still in flight complete after the new one started:
    # they count for nothing (they belong to the lost recovery).
    result = raidlab.simulate(level=5, devices=4, drive="cheetah-10k7", preset="wal", runtime_s=0.2,
                              fail=["0@0.01s", "0@0.05s"], replace=["0@0.02s", "0@0.0501s"])
    first, second = result.raw["rebuilds"]
    assert first["aborted_ns"] == 50_000_000 and second["aborted_ns"] is None
    assert second["start_ns"] == 50_100_000 and second["start_sector"] == 0
    assert 0 < second["done_sectors"] < second["total_sectors"]
