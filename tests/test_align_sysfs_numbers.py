"""`raidlab align --device` reads sysfs numbers by the one ASCII-digit rule
(:func:`raidlab.workload.units.is_decimal`): the kernel writes plain decimal digits, so ``2_048``,
``+2048`` or full-width digits are not a partition start but a one-line error (exit 2)."""

from __future__ import annotations

import pytest

from conftest import run_cli


def _sysfs(root, start: str, alignment_offset: str = "0"):
    base = root / "block" / "sda"
    (base / "queue").mkdir(parents=True)
    for key, value in {"logical_block_size": 512, "physical_block_size": 4096, "minimum_io_size": 4096,
                       "optimal_io_size": 0}.items():
        (base / "queue" / key).write_text(f"{value}\n")
    (base / "alignment_offset").write_text(f"{alignment_offset}\n")
    part = base / "sda1"
    part.mkdir()
    (part / "partition").write_text("1\n")
    (part / "start").write_text(f"{start}\n")
    (part / "size").write_text("1000\n")
    return part / "start"


@pytest.mark.parametrize("start", ["2_048", "\uff12\uff10\uff14\uff18", "+2048", "2048.0", "٢٠٤٨", ""])
def test_a_sysfs_start_that_is_not_ascii_digits_is_refused(tmp_path, start):
    path = _sysfs(tmp_path, start)
    run = run_cli(["align", "--device", "sda", "--sysfs-root", str(tmp_path)])
    assert run.status == 2, run.stdout
    assert run.stderr_lines == [f"raidlab: error: {path}: expected a number, found {start!r}"]


def test_plain_digits_and_the_kernels_minus_one_alignment_offset_still_read(tmp_path):
    _sysfs(tmp_path, "2048", alignment_offset="-1")
    run = run_cli(["align", "--device", "sda", "--sysfs-root", str(tmp_path), "--json"])
    assert run.status == 0, run.stderr
    report = run.json()
    assert report["partitions"][0]["start_bytes"] == 2048 * 512
    assert any("alignment_offset -1" in note for note in report["topology"]["notes"])


def test_a_device_name_too_long_for_the_system_is_a_one_line_error():
    # Path.is_dir raised OSError (ENAMETOOLONG): an internal error, exit 70.
    from conftest import refused, run_cli

    refused(run_cli(["align", "--device", "a" * 5000]), "cannot read sysfs for", "File name too long")
