"""``calibrate`` records the drive's capacity, never a test file's size: a file target needs
--capacity-tb, a partition's capacity is its disk's."""

from __future__ import annotations

import pytest

from conftest import run_cli, run_process


# -- calibrate: the drive's capacity, never a test file's size ---------------------------------


def test_calibrate_refuses_a_file_target_without_the_drive_capacity(tmp_path):
    target = tmp_path / "cal.bin"
    run = run_process(["calibrate", "--target", str(target), "--size", "64M", "--quick"])
    assert run.status == 2
    assert len(run.stderr_lines) == 1
    assert run.stderr_lines[0].startswith("raidlab: error: --target ")
    assert "its size is not a drive's capacity" in run.stderr and "--capacity-tb" in run.stderr
    assert not target.exists()  # refused before fio wrote anything


def test_calibrate_refuses_an_existing_file_too(tmp_path):
    target = tmp_path / "cal.bin"
    target.write_bytes(b"\0" * (32 << 20))
    run = run_cli(["calibrate", "--target", str(target), "--destroy-data", "--quick"])
    assert run.status == 2 and "is a regular file: its size is not a drive's capacity" in run.stderr
    assert target.read_bytes() == b"\0" * (32 << 20)


@pytest.mark.parametrize("value,words", [("nan", "not a finite number (the range is 0<x<=1000.0)"),
                                         ("-1", "not in the range 0<x<=1000.0"),
                                         ("0.00001", "smaller than the swept region")])
def test_calibrate_capacity_tb_out_of_range_is_one_line(tmp_path, value, words):
    run = run_cli(["calibrate", "--target", str(tmp_path / "x.bin"), "--size", "64M",
                   "--capacity-tb", value, "--quick"])
    assert run.status == 2 and len(run.stderr_lines) == 1, run.stderr
    assert words in run.stderr


def test_drive_capacity_decision():
    from raidlab.errors import ConfigError
    from raidlab.measure.calibrate import drive_capacity
    from raidlab.measure.safety import Target

    span = 64 << 20
    assert drive_capacity(Target("/tmp/f", "file", span), 0.96, span) == (
        960_000_000_000, "given with --capacity-tb")
    # A block device's size is the drive's (no sysfs entry for this made-up device number).
    assert drive_capacity(Target("/dev/sdz", "block", 4 * 10**12, "4095:4095"), None, span) == (
        4 * 10**12, "the size of block device /dev/sdz")
    with pytest.raises(ConfigError, match="is a new file: its size is not a drive's capacity"):
        drive_capacity(Target("/tmp/new", "missing"), None, span)


def test_drive_capacity_of_a_partition_is_its_disk(tmp_path, monkeypatch):
    from raidlab.measure import safety
    from raidlab.measure.calibrate import drive_capacity

    disk = tmp_path / "devices" / "sdb"
    (disk / "sdb1").mkdir(parents=True)
    (disk / "size").write_text("31251759104\n")  # 16 TB in 512-byte units
    (disk / "sdb1" / "partition").write_text("1\n")
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "8:17").symlink_to(disk / "sdb1")
    monkeypatch.setattr(safety, "SYS_DEV_BLOCK", str(tmp_path / "dev"))
    target = safety.Target("/dev/sdb1", "block", 10**12, "8:17")
    assert drive_capacity(target, None, 64 << 20) == (31251759104 * 512, "the disk holding partition /dev/sdb1")


def test_calibration_writes_the_drive_capacity_into_the_model():
    from raidlab.measure import calibrate as calibration
    from raidlab.measure import fit
    from raidlab.workload import Workload

    span = 64 << 20
    truth = {"kind": "empirical", "params": {"capacity_bytes": span, "read_mb_s": 500.0, "write_mb_s": 300.0}}
    observations = [fit.Observation.from_document(point, fit.single_drive_sim(
        truth, Workload((point.job(50_000_000),), "fio", ""), seed=3).to_dict())
        for point in calibration.sweep_points(True)]
    result = calibration.from_observations(observations, span, model="empirical", max_evals=3,
                                           capacity=(960_000_000_000, "given with --capacity-tb"))
    assert result.drive()["params"]["capacity_bytes"] == 960_000_000_000
    assert result.to_dict()["capacity_bytes"] == 960_000_000_000
    assert result.to_dict()["candidates"]["empirical"]["params"]["capacity_bytes"] == 960_000_000_000
    toml = result.to_toml()
    assert "\ncapacity_bytes = 960000000000\n" in toml
    assert "# capacity: 894.07 GiB (given with --capacity-tb)" in toml
