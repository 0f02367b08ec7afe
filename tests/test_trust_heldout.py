"""Issue 21, the reporter's held-out set: bad inputs of the issue's classes that the first round's
tests did not cover. Each must end in one line ``raidlab: error: ...`` and exit status 2 (or, for
valid input, do what it says), and no output may replace an input. Each test here failed before
the fix it names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest

from conftest import Run, run_cli

JOB = "[j]\nrw=randread\nbs=4k\nsize=16m\n"
QUICK = ["--drive", "null", "--runtime-s", "0.01"]


def refused(run: Run, *fragments: str) -> None:
    """Exit status 2 and exactly one stderr line, ``raidlab: error: ...`` holding each fragment."""
    assert run.status == 2, (run.status, run.stderr)
    assert len(run.stderr_lines) == 1 and run.stderr.endswith("\n"), run.stderr
    line = run.stderr_lines[0]
    assert line.startswith("raidlab: error: "), line
    assert "Traceback" not in run.stderr and "internal error" not in line, line
    for fragment in fragments:
        assert fragment in line, (fragment, line)


def run_bounded(args: Sequence[str], seconds: float = 20, env: dict = None) -> Run:
    """``python -m raidlab ARGS`` in a process that must end within ``seconds`` (a hang fails)."""
    done = subprocess.run([sys.executable, "-m", "raidlab", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=seconds,
                          env=dict(os.environ, PYTHONWARNINGS="ignore", **(env or {})))
    return Run(done.returncode, done.stdout, done.stderr)


# -- outputs never replace an input of the same command -----------------------------------------


def test_import_json_onto_its_own_input_is_refused(tmp_path):
    # Before: the fio JSON kept by 'measure --fio-output' carries a raidlab object, so it counted
    # as raidlab's own output and 'import X.json --json X.json' replaced the measurement.
    source = tmp_path / "run.json"
    sim = run_cli(["sim", "--preset", "wal", *QUICK, "--json", str(source)])
    assert sim.status == 0, sim.stderr
    before = source.read_bytes()
    refused(run_cli(["import", str(source), "--json", str(source)]),
            f"refusing to write --json {source}", "an input of this command")
    refused(run_cli(["import", str(source), "--html", str(source), "--force"]), "an input of this command")
    assert source.read_bytes() == before


def test_force_does_not_let_a_report_replace_the_job_file(tmp_path):
    # Before: 'sim --fio JOB --json JOB --force' replaced the user's job file with the report.
    job = tmp_path / "job.fio"
    job.write_text(JOB)
    refused(run_cli(["sim", "--fio", str(job), *QUICK, "--json", str(job), "--force"]),
            "it is the file given to --fio, an input of this command")
    assert job.read_text() == JOB


def test_a_drive_file_named_inside_a_designs_file_is_an_input_too(tmp_path):
    # Before: compare --csv replaced the drive file a [[design]] entry reads (with --force).
    drive = tmp_path / "d.toml"
    drive.write_text('kind = "null"\n')
    designs = tmp_path / "designs.toml"
    designs.write_text(f'[[design]]\nname = "a"\nlevel = 5\ndevices = 4\ndrive = "{drive}"\n')
    refused(run_cli(["compare", "--designs", str(designs), "--preset", "wal", "--runtime-s", "0.01",
                     "--states", "optimal", "--csv", str(drive), "--force"]),
            f"it is the drive file {drive}, an input of this command")
    assert drive.read_text() == 'kind = "null"\n'


# -- one number grammar: ASCII decimal digits ----------------------------------------------------


@pytest.mark.parametrize("args, option", [
    (["sim", "--preset", "wal", *QUICK, "--devices", "\u0661\u0662"], "--devices"),
    (["sim", "--preset", "wal", *QUICK, "--chunk-kib", "1_024"], "--chunk-kib"),
    (["sim", "--preset", "wal", "--drive", "null", "--runtime-s", "1_0"], "--runtime-s"),
    (["sim", "--preset", "wal", "--drive", "null", "--runtime-s", "\u0661"], "--runtime-s"),
    (["sim", "--preset", "wal", *QUICK, "--seed", "\u0667"], "--seed"),
    (["sim", "--preset", "wal", *QUICK, "--failed", "\u0661"], "--failed"),
    (["reliability", "--level", "5", "--devices", "\u0664"], "--devices"),
    (["reliability", "--level", "5", "--devices", "4", "--trials", "1_000"], "--trials"),
    (["plan", "--capacity-tb", "1", "--preset", "wal", "--top", "\u0665"], "--top"),
    (["compare", "--seed", "1_0"], "--seed"),
    (["align", "--level", "5", "--devices", "\u0664"], "--devices"),
])
def test_numbers_are_ascii_decimal(args, option):
    # Before: click's INT/FLOAT call int()/float(), which take other scripts' digits ('١٢' ran
    # a 12-member array) and '_' separators ('1_024' ran with chunk 1024), silently.
    refused(run_cli(args), f"Invalid value for '{option}'" if option != "--failed" else "--failed")


@pytest.mark.parametrize("event, fragment", [
    ("\u0661@1", "expected MEMBER@TIME"),
    ("0@1_0", "'1_0' is not a time"),
    ("99999999999999999999@1", "member 99999999999999999999 does not exist (an array has at most 64 members)"),
])
def test_scripted_events_read_ascii_numbers(event, fragment):
    # Before: '١@1' failed member 1; '0@1_0' failed it at 10 s; a 20-digit member gave
    # "configuration field 'member' has the wrong type".
    refused(run_cli(["sim", "--preset", "wal", *QUICK, "--fail", event]), fragment)


@pytest.mark.parametrize("option, fragment", [
    ("seed=\u0661", "--sim-opt seed='\u0661' is not a whole number"),
    ("cache_mib=1_0", "--sim-opt cache_mib='1_0' is not a whole number"),
    ("devices=5", "--sim-opt devices: set by reliability's own options"),
    ("level=6", "--sim-opt level: set by reliability's own options"),
])
def test_sim_options_are_checked_before_the_simulator_is_called(option, fragment):
    # Before: '--sim-opt devices=5' was an internal error (TypeError: multiple values for keyword
    # argument 'devices', exit 70); '١' and '1_0' were read as numbers by int().
    refused(run_cli(["reliability", "--level", "5", "--devices", "4", "--trials", "0",
                     "--rebuild-from-sim", "--drive", "null", "--sim-opt", option]), fragment)
