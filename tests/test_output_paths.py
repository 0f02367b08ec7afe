"""An output path that names a directory (it ends in ``/``, ``/.`` or ``/..``) is refused by the
one writer (raidlab.outputs) with one line, exit 2, for every file option; nothing is written."""

from __future__ import annotations

import os

import pytest

from conftest import run_cli

SIM = ["sim", "--level", "0", "--devices", "1", "--drive", "null", "--preset", "wal", "--runtime-s", "0.05"]


@pytest.mark.parametrize("option", ["--json", "--html"])
@pytest.mark.parametrize("suffix", ["/", "//", "/.", "/.."])
def test_an_output_path_that_names_a_directory_is_refused(tmp_path, option, suffix):
    given = str(tmp_path / "o") + suffix
    run = run_cli([*SIM, option, given])
    assert run.status == 2, run.stderr
    assert run.stderr_lines == [f"raidlab: error: refusing to write {option} {given}: it names a directory "
                                f"(it ends in {suffix[1:] if suffix == '//' else suffix!r}); give a file name"]
    assert sorted(os.listdir(tmp_path)) == []


def test_import_json_into_a_directory_name_is_refused(tmp_path):
    document = tmp_path / "sim.json"
    assert run_cli([*SIM, "--json", str(document)]).status == 0
    run = run_cli(["import", str(document), "--json", str(tmp_path / "out") + "/"])
    assert run.status == 2
    assert run.stderr_lines[0].startswith("raidlab: error: refusing to write --json ")
    assert sorted(os.listdir(tmp_path)) == ["sim.json"]


def test_a_log_prefix_inside_a_directory_still_writes_there(tmp_path):
    (tmp_path / "logs").mkdir()
    run = run_cli([*SIM, "--log-prefix", str(tmp_path / "logs") + "/"])
    assert run.status == 0, run.stderr
    assert "_iops.1.log" in os.listdir(tmp_path / "logs")


def test_two_outputs_to_standard_output_are_refused():
    # They used to run together on stdout (the JSON, then the CSV) where neither could be read.
    run = run_cli(["compare", "--runtime-s", "1", "--states", "optimal", "--csv", "-", "--json", "-"])
    assert run.status == 2 and run.stdout == ""
    assert run.stderr_lines == ["raidlab: error: --json and --csv both write to standard output ('-'), "
                                "where they would run together; give all but one of them a file"]
