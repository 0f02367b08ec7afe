"""Bad input: exit status 2 and exactly one line ``raidlab: error: ...`` on stderr, no traceback."""

from __future__ import annotations

import pytest

from conftest import run_cli, run_process

BAD_INPUTS = {
    "raid6-with-3-devices": ["layout", "--level", "6", "--devices", "3"],
    "raid4-with-1-device": ["layout", "--level", "4", "--devices", "1"],
    "unknown-layout-for-level": ["layout", "--level", "5", "--devices", "4", "--layout", "n2"],
    "raid10-layout-on-raid6": ["layout", "--level", "6", "--devices", "4", "--layout", "f2"],
    "raid6-layout-on-raid5": ["layout", "--level", "5", "--devices", "4",
                              "--layout", "left-symmetric-6"],
    "layout-for-raid1": ["layout", "--level", "1", "--devices", "2", "--layout", "n2"],
    "raid10-too-many-copies": ["layout", "--level", "10", "--devices", "3", "--layout", "n4"],
    "unknown-level": ["layout", "--level", "7", "--devices", "4"],
    "level-nonsense": ["layout", "--level", "abc", "--devices", "4"],
    "level-with-newline": ["layout", "--level", "5\nx", "--devices", "4"],
    "layout-with-newline": ["layout", "--level", "5", "--devices", "4", "--layout", "left\nx"],
    "chunk-not-power-of-two": ["layout", "--level", "5", "--devices", "4", "--chunk-kib", "48"],
    "chunk-below-4k": ["layout", "--level", "5", "--devices", "4", "--chunk-kib", "2"],
    "chunk-zero": ["layout", "--level", "0", "--devices", "2", "--chunk-kib", "0"],
    "chunk-too-large": ["layout", "--level", "5", "--devices", "4", "--chunk-kib", "2097152"],
    "zero-devices": ["layout", "--level", "5", "--devices", "0"],
    "too-many-devices": ["layout", "--level", "5", "--devices", "100000"],
    "members-too-small": ["layout", "--level", "5", "--devices", "4", "--member-kib", "64"],
    "member-zero": ["layout", "--level", "0", "--member-kib-list", "0,1024"],
    "member-list-too-small": ["layout", "--level", "6", "--chunk-kib", "64",
                              "--member-kib-list", "32,32,32,32"],
    "devices-abc": ["layout", "--level", "5", "--devices", "abc"],
    "devices-negative": ["layout", "--level", "5", "--devices", "-3"],
    "devices-negative-equals": ["layout", "--level", "5", "--devices=-3"],
    "devices-huge": ["layout", "--level", "5", "--devices", "99999999999999999999999"],
    "chunk-abc": ["layout", "--level", "5", "--devices", "4", "--chunk-kib", "abc"],
    "chunk-negative": ["layout", "--level", "5", "--devices", "4", "--chunk-kib", "-64"],
    "chunk-float": ["layout", "--level", "5", "--devices", "4", "--chunk-kib", "64.0"],
    "member-kib-negative": ["layout", "--level", "5", "--devices", "4", "--member-kib", "-1"],
    "member-list-nonsense": ["layout", "--level", "5", "--member-kib-list", "1024,abc"],
    "member-list-empty": ["layout", "--level", "5", "--member-kib-list", ""],
    "member-list-empty-item": ["layout", "--level", "5", "--member-kib-list", "1024,,1024"],
    "devices-mismatch-list": ["layout", "--level", "5", "--devices", "3",
                              "--member-kib-list", "6144,6144,6144,6144"],
    "member-kib-and-list": ["layout", "--level", "5", "--member-kib", "6144",
                            "--member-kib-list", "6144,6144,6144"],
    "no-devices-no-list": ["layout", "--level", "5"],
    "missing-level": ["layout", "--devices", "4"],
    "rows-negative": ["layout", "--level", "5", "--devices", "4", "--rows", "-1"],
    "unknown-option": ["layout", "--level", "5", "--devices", "4", "--bogus"],
    "option-missing-value": ["layout", "--level", "5", "--devices"],
    "extra-argument": ["layout", "--level", "5", "--devices", "4", "extra"],
    "unknown-command": ["bogus"],
    "unknown-group-option": ["--bogus"],
}


def assert_one_line_error(run) -> None:
    assert run.status == 2, (run.status, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    assert run.stdout == ""
    assert len(run.stderr_lines) == 1, run.stderr
    assert run.stderr_lines[0].startswith("raidlab: error: ")
    assert run.stderr.endswith("\n")
    assert len(run.stderr_lines[0]) > len("raidlab: error: ")


@pytest.mark.parametrize("args", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_in_process(args):
    assert_one_line_error(run_cli(args))


@pytest.mark.parametrize("args", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_through_a_real_process(args):
    assert_one_line_error(run_process(args))


def test_messages_name_the_problem():
    raid6 = run_cli(BAD_INPUTS["raid6-with-3-devices"]).stderr
    assert "raid6 needs at least 4 devices, got 3" in raid6
    assert "power of two" in run_cli(BAD_INPUTS["chunk-not-power-of-two"]).stderr
    assert "'abc'" in run_cli(BAD_INPUTS["devices-abc"]).stderr
    assert "left-symmetric" in run_cli(BAD_INPUTS["unknown-layout-for-level"]).stderr
    assert "3 devices requested but 4 member sizes given" in run_cli(
        BAD_INPUTS["devices-mismatch-list"]
    ).stderr


def test_broken_pipe_is_quiet():
    """``raidlab layout --json | head -c1`` must not print a traceback either."""
    import subprocess
    import sys

    pipeline = subprocess.run(
        f"'{sys.executable}' -m raidlab layout --json --level 5 --devices 8 --chunk-kib 4 "
        f"| head -c 1 >/dev/null",
        shell=True, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in pipeline.stderr
    assert pipeline.stderr == ""
