"""Calibration sweeps given to ``calibrate --sweep``: every field of every row is checked and a bad
one is one ``raidlab: error: calibration sweep:`` line, with no model written."""

from __future__ import annotations

import json

import pytest

from conftest import refused, run_cli


def test_calibration_sweep_numbers_are_checked(tmp_path):
    row = {"rw": "randread", "bs": 4096, "iodepth": 1, "iops": float("nan"), "bw_bytes": 1, "lat_mean_ns": 1,
           "lat_min_ns": 1, "percentiles": {}, "sync_mean_ns": 0, "runtime_s": 1}
    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps({"sweep": [row], "span_bytes": 1 << 30}))
    refused(run_cli(["calibrate", "--sweep", str(sweep), "--out", str(tmp_path / "d.toml")]),
            "sweep[0].iops must be a finite number, got nan")
    row["iops"], row["bs"] = 1, "big"
    sweep.write_text(json.dumps({"sweep": [row], "span_bytes": 1 << 30}))
    refused(run_cli(["calibrate", "--sweep", str(sweep), "--out", str(tmp_path / "d.toml")]),
            "sweep[0].bs must be a number, got str 'big'")


# -- calibration sweeps: every field of a row is checked -------------------------------------------


def _sweep_row(**changes):
    row = {"rw": "randread", "bs": 4096, "iodepth": 1, "fdatasync": 0, "iops": 1000.0, "bw_bytes": 4096000.0,
           "lat_mean_ns": 1e6, "lat_min_ns": 1e5, "sync_mean_ns": 0.0, "runtime_s": 1.0,
           "percentiles": {"50.000000": 1e6}}
    row.update(changes)
    return row


@pytest.mark.parametrize("changes, fragment", [
    ({"rw": 5}, "sweep[0] needs rw (one of randread, randwrite, read, write)"),
    ({"rw": True}, "sweep[0] needs rw"),
    ({"bs": 0}, "sweep[0].bs must be a whole number from 512 to"),
    ({"iodepth": 1e308}, "sweep[0].iodepth must be a whole number from 1 to 65536"),
    ({"fdatasync": 1e308}, "sweep[0].fdatasync must be a whole number"),
    ({"iops": 1e308}, "sweep[0].iops must be a number from 0 to 1e+09"),
    ({"lat_mean_ns": 0}, "sweep[0].lat_mean_ns must be a number from 1 to"),
    ({"percentiles": {"99.000000": 1e308}}, "sweep[0].percentiles must be latencies below"),
    ({"percentiles": [1]}, "a percentiles table"),
])
def test_calibration_sweep_rows_are_checked(tmp_path, changes, fragment):
    # Before: rw 5 was AttributeError, bs 0 ZeroDivisionError, 1e308 IOPS OverflowError (exit 70
    # each); fdatasync 1e308 became a 300-digit job name ("a job needs a name of 1 to 255 ...").
    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps({"sweep": [_sweep_row(**changes)], "span_bytes": 1 << 30,
                                 "capacity_bytes": 1 << 32}))
    run = run_cli(["calibrate", "--sweep", str(sweep), "--out", str(tmp_path / "d.toml")])
    assert run.status == 2, run.stderr
    assert run.stderr_lines[-1].startswith("raidlab: error: calibration sweep: "), run.stderr
    assert fragment in run.stderr_lines[-1], (fragment, run.stderr)
    assert "internal error" not in run.stderr
    assert not (tmp_path / "d.toml").exists()
