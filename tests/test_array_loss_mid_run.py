"""A failure that loses the array mid-run ends the run with a DATA LOSS verdict (in the table and
the JSON), not a crash."""

from __future__ import annotations

import pytest

from conftest import run_process


# --- data loss mid-run ends the run with a verdict (it panicked "time went backwards") -------

@pytest.mark.parametrize("level, devices, fails, lost", [
    ("0", "4", ["0@0.1s"], [0]),
    ("5", "4", ["0@0.1s", "1@0.15s"], [0, 1]),
    ("1", "2", ["0@0.1s", "1@0.15s"], [0, 1]),
    ("10", "4", ["0@0.1s", "1@0.15s"], [0, 1]),
])
def test_a_failure_that_loses_the_array_is_a_verdict(level, devices, fails, lost):
    args = ["sim", "--level", level, "--devices", devices, "--preset", "wal", "--runtime-s", "0.3"]
    for fail in fails:
        args += ["--fail", fail]
    table = run_process(args)
    assert table.status == 0, table.stderr
    assert all(line.startswith("raidlab: note: ") for line in table.stderr.splitlines()), table.stderr
    assert f"DATA LOSS at {float(fails[-1].split('@')[1][:-1]):.3f} s: members {lost} failed" in table.stdout
    document = run_process(args + ["--json", "-"])
    assert document.status == 0
    assert document.json()["data_loss"] == {"at_s": float(fails[-1].split("@")[1][:-1]), "failed_members": lost}
