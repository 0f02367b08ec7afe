"""Whole-number options: help states the range the command accepts, and the same rule refuses.

A count's type is the declared setting's (raidlab.run), so `reliability --devices` takes what
`sim --devices` takes, and no help line shows the u64 ceiling as if it were a limit worth reading.
"""

from __future__ import annotations

import pytest

from conftest import refused, run_cli


def test_reliability_help_shows_the_device_range_it_accepts():
    shown = run_cli(["reliability", "--help"]).stdout
    devices = shown[shown.index("--devices"):shown.index("--layout")]
    assert "1<=x<=64" in devices, devices


def test_reliability_refuses_zero_devices_with_the_range_from_its_help():
    refused(run_cli(["reliability", "--level", "5", "--devices", "0"]), "--devices", "1<=x<=64")


def test_reliability_chunk_is_the_simulators_chunk_rule():
    refused(run_cli(["reliability", "--level", "5", "--devices", "4", "--chunk-kib", "2"]),
            "--chunk-kib", "4<=x<=1048576")


@pytest.mark.parametrize("command", ["sim", "reliability", "plan", "replay", "align", "compare", "sweep",
                                     "measure", "calibrate", "layout"])
def test_help_never_shows_the_u64_ceiling_as_a_range(command):
    shown = run_cli([command, "--help"]).stdout
    assert "18446744073709551615" not in shown
    assert "<=x" in shown or "x>=" in shown or command in ("layout", "compare")
