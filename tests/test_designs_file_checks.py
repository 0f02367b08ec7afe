"""Designs files and drive files: the document's shape, keys and types are checked, names label rows
(unique, printable), a byte-order mark is not content, contradictions are refused, and repeated
states or failed members count once or are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import refused, run_cli

JOB = "[j]\nrw=randread\nbs=4k\nsize=16m\n"
QUICK = ["--drive", "null", "--runtime-s", "0.01"]


# -- designs files: the document's shape is checked -----------------------------------------------


@pytest.mark.parametrize("text, fragment", [
    ("[[defaults]]\ndrive = 'null'\n[[design]]\nlevel = 5\n",
     "[defaults] must be one table, written [defaults], not [[defaults]]"),
    ("[[desing]]\nlevel = 5\n[[design]]\nlevel = 10\n",
     "unknown table [desing] (did you mean [[design]]?)"),
    ("[default]\ndrive = 'null'\n[[design]]\nlevel = 5\n", "unknown table [default] (did you mean [defaults]?)"),
    ("[[design]]\nlevel = 5\nchunk_kb = 64\n", "design 'design1': unknown key 'chunk_kb' (did you mean 'chunk_kib'?)"),
    ("[defaults]\ndrvie = 'null'\n[[design]]\nlevel = 5\n", "[defaults]: unknown key 'drvie' (did you mean 'drive'?)"),
    ("[[design]]\nname = 'a'\ndevices = '4'\n", "design 'a': 'devices' must be an integer, got a string '4'"),
    ("[[design]]\nbbu = 1\n", "'bbu' must be a boolean, got an integer 1"),
    ("[[design]]\nchunk_kib = 3\n", "'chunk_kib': 3 is not in the range 4<=x<=1048576"),
    ("[[design]]\ncontroller = 'raid'\n", "'controller': 'raid' is not one of 'md', 'hw'"),
    ("[design]\nlevel = 5\n", "[design] must be an array of tables, written [[design]]"),
    ("[[design]]\nlevel = 5\n[[workload]]\nnmae = 'x'\npreset = 'wal'\n",
     "[[workload]] 1: unknown key 'nmae' (did you mean 'name'?)"),
    ("[[design]]\nlevel = 5\n[[workload]]\npreset = 7\n", "[[workload]] 1: 'preset' must be a string"),
    ("x = " + "[" * 200 + "]" * 200 + "\n", "nested more than 64 levels deep"),
    ("x = " + "[" * 50_000 + "]" * 50_000 + "\n", "nested more than 64 levels deep"),
])
def test_designs_file_shape_is_checked(tmp_path, text, fragment):
    # Before: [[defaults]] was an internal error (exit 1); misspelt tables were silently ignored.
    designs = tmp_path / "designs.toml"
    designs.write_text(text)
    refused(run_cli(["compare", "--designs", str(designs)]), f"designs file {designs}", fragment)


def test_a_valid_designs_file_still_runs(tmp_path):
    designs = tmp_path / "designs.toml"
    designs.write_text("[defaults]\ndrive = 'null'\ncontroller = 'md'\n[[design]]\nname = 'r5'\nlevel = 'raid5'\n"
                       "devices = 4\nchunk_kib = 64\nbbu = false\n[[workload]]\nname = 'w'\npreset = 'wal'\n")
    run = run_cli(["compare", "--designs", str(designs), "--states", "optimal", "--runtime-s", "0.01"])
    assert run.status == 0, run.stderr
    assert "r5" in run.stdout


# -- designs and drive files: names, byte-order marks, contradictions ------------------------------


def _designs(tmp_path: Path, text: str) -> str:
    path = tmp_path / "designs.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("text, fragment", [
    ('[[design]]\nname="a"\nlevel=5\ndevices=4\n[[design]]\nname="a"\nlevel=6\ndevices=4\n',
     "[[design]] 2: the name 'a' is already used by [[design]] 1"),
    ('[[design]]\nname=""\nlevel=5\ndevices=4\n', "'name' must be 1 to 64 printable characters"),
    ('[[design]]\nname="a\\u001b[2Jb"\nlevel=5\ndevices=4\n', "'name' must be 1 to 64 printable characters"),
    ('[[design]]\nname="a\\nb"\nlevel=5\ndevices=4\n', "'name' must be 1 to 64 printable characters"),
    ('[[design]]\nname="' + "x" * 65 + '"\nlevel=5\ndevices=4\n', "1 to 64 printable characters"),
    ('[[design]]\nname="a"\nlevel=5\ndevices=4\n[[workload]]\nname="w"\npreset="wal"\n'
     '[[workload]]\nname="w"\npreset="oltp-innodb"\n', "[[workload]] 2: the name 'w' is already used"),
])
def test_design_and_workload_names_label_rows(tmp_path, text, fragment):
    # Before: duplicate names gave rows no one could tell apart, an empty name an empty label,
    # and a newline or an escape sequence went into the table and to the terminal; exit 0.
    refused(run_cli(["compare", "--designs", _designs(tmp_path, text), "--runtime-s", "0.01",
                     "--states", "optimal"]), fragment)


def test_a_byte_order_mark_is_not_content(tmp_path):
    # Before: a designs file saved with a BOM was "Invalid statement (at line 1, column 1)" and a
    # fio job file's first section "option '\ufeff[j]' is outside of a [job] section".
    designs = _designs(tmp_path, '\ufeff[[design]]\nname="a"\nlevel=5\ndevices=4\ndrive="null"\n')
    run = run_cli(["compare", "--designs", designs, "--preset", "wal", "--runtime-s", "0.01",
                   "--states", "optimal", "--json", "-"])
    assert run.status == 0, run.stderr
    assert [r["design"] for r in run.json()["runs"]] == ["a"]
    job = tmp_path / "job.fio"
    job.write_bytes(b"\xef\xbb\xbf" + JOB.encode())
    run = run_cli(["sim", "--fio", str(job), *QUICK, "--json"])
    assert run.status == 0, run.stderr
    assert run.json()["jobs"][0]["jobname"] == "j"


def test_a_drive_file_with_a_preset_of_another_kind_is_refused(tmp_path):
    # Before: kind = "hdd" with preset = "nvme-tlc" ran silently as one of the two.
    drive = tmp_path / "d.toml"
    drive.write_text('kind = "hdd"\npreset = "nvme-tlc"\n')
    refused(run_cli(["sim", "--drive", str(drive), "--preset", "wal", "--runtime-s", "0.01"]),
            'preset = "nvme-tlc" is of kind "ssd", not kind = "hdd"')


def test_compare_names_the_state_a_design_cannot_run(tmp_path):
    # Before: a raid0 design with the default states ended in "raid0 original cannot run with
    # members [0] failed: data is lost", naming neither the design nor the way out.
    designs = _designs(tmp_path, '[[design]]\nname="fast"\nlevel=0\ndevices=4\ndrive="null"\n')
    refused(run_cli(["compare", "--designs", designs, "--preset", "wal", "--runtime-s", "0.01"]),
            "design 'fast' has no degraded state", "--states optimal")


def test_repeated_states_and_failed_members_count_once_or_are_refused():
    # Before: --states optimal,optimal ran every row twice; --failed 0,0 ran silently.
    run = run_cli(["compare", "--preset", "wal", "--runtime-s", "0.01", "--states", "optimal,optimal",
                   "--json", "-"])
    assert run.status == 0, run.stderr
    assert [r["state"] for r in run.json()["runs"]] == ["optimal", "optimal"]  # RAID5 and RAID10, once each
    refused(run_cli(["sim", "--level", "6", "--failed", "0,0", "--preset", "wal", *QUICK]),
            "member 0 is listed twice")
