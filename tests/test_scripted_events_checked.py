"""Scripted timeline events (--fail/--replace/--failed) that would do nothing are refused, one after
the end of the run is a note, and a valid fail-replace-fail sequence runs."""

from __future__ import annotations

import pytest

from conftest import refused, run_cli

QUICK = ["--drive", "null", "--runtime-s", "0.01"]


# -- scripted failures make sense or say why -------------------------------------------------------


@pytest.mark.parametrize("events, fragment", [
    (["--replace", "0@0.005"], "--replace 0@0.005s: member 0 is working then"),
    (["--fail", "0@0.008", "--replace", "0@0.005"], "--replace 0@0.005s: member 0 is working then"),
    (["--fail", "0@0.002", "--fail", "0@0.005"], "--fail 0@0.005s: member 0 is already failed then"),
    (["--failed", "0", "--fail", "0@0.005"], "failed from the start"),
])
def test_timeline_events_that_would_do_nothing_are_refused(events, fragment):
    # Before: each ran to exit 0 and the event silently did nothing.
    refused(run_cli(["sim", "--preset", "wal", *QUICK, *events]), fragment)


def test_an_event_after_the_end_of_the_run_is_a_note():
    # Before: '--fail 0@1h' on a 10 ms run left no trace: no failure, no note.
    run = run_cli(["sim", "--preset", "wal", *QUICK, "--fail", "0@1h", "--json"])
    assert run.status == 0, run.stderr
    note = "--fail 0@3600s never happened: the run ended at 0.01 s simulated"
    assert run.stderr == f"raidlab: note: {note}\n"
    assert note in run.json()["raidlab"]["notes"]


def test_fail_replace_fail_still_runs():
    run = run_cli(["sim", "--preset", "wal", *QUICK, "--fail", "0@0.002", "--replace", "0@0.004",
                   "--fail", "0@0.006", "--json"])
    assert run.status == 0, run.stderr
    assert [e["action"] for e in run.json()["raidlab"]["config"]["timeline"]] == ["fail", "replace", "fail"]
