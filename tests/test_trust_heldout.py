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


# -- an empty path is not "no output" -------------------------------------------------------------


@pytest.mark.parametrize("args, option", [
    (["sim", "--preset", "wal", *QUICK, "--html", ""], "--html"),
    (["sim", "--preset", "wal", *QUICK, "--png", ""], "--png"),
    (["sim", "--preset", "wal", *QUICK, "--log-prefix", " "], "--log-prefix"),
    (["compare", "--preset", "wal", "--runtime-s", "0.01", "--states", "optimal", "--csv", ""], "--csv"),
    (["reliability", "--level", "5", "--devices", "4", "--html", ""], "--html"),
])
def test_an_empty_output_path_is_refused(args, option, tmp_path, monkeypatch):
    # Before: an empty path counted as "not given": the command printed its table, exit 0, and
    # the report the user asked for was never written (or ' _iops.1.log' appeared).
    monkeypatch.chdir(tmp_path)
    refused(run_cli(args), f"cannot write {option}: the path is empty")


def test_empty_target_and_fio_binary_are_refused(tmp_path):
    # Before: --target '' printed a job with 'filename=' (exit 0); --fio-binary '' ran the fio
    # on PATH instead.
    refused(run_cli(["measure", "--target", "", "--preset", "wal", "--dry-run"]), "--target is empty")
    refused(run_cli(["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--size", "8M",
                     "--fio-binary", ""]), "--fio-binary is empty")
    assert not (tmp_path / "t.img").exists()


def test_png_directory_parent_must_exist(tmp_path):
    # Before: --png /missing/a/b created the whole tree (mkdir -p); a file's directory must exist.
    missing = tmp_path / "missing" / "charts"
    refused(run_cli(["sim", "--preset", "wal", *QUICK, "--png", str(missing)]),
            f"directory {missing.parent} does not exist")
    assert not missing.parent.exists()


# -- fio that never answers ---------------------------------------------------------------------


def _fake_fio(tmp_path: Path, version_ok: bool) -> Path:
    fake = tmp_path / "fio"
    answer = 'echo fio-3.33; exit 0' if version_ok else 'exec sleep 1000'
    fake.write_text(f'#!/bin/sh\nif [ "$1" = "--version" ]; then {answer}; fi\nexec sleep 1000\n')
    fake.chmod(0o755)
    return fake


def test_a_fio_that_hangs_on_version_is_stopped(tmp_path, monkeypatch):
    # Before: 'fio --version' had 30 s, past the 20 s any bad input must end within.
    from raidlab.measure import runner

    assert runner.VERSION_TIMEOUT_S <= 10
    monkeypatch.setattr(runner, "VERSION_TIMEOUT_S", 0.5)
    refused(run_cli(["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--size", "8M",
                     "--runtime-s", "0.2", "--fio-binary", str(_fake_fio(tmp_path, False))]),
            "--version did not answer within 0.5 s")


def test_a_fio_run_that_never_ends_is_stopped(tmp_path, monkeypatch):
    # Before: no deadline: a fio stuck in its run (a hung device, a binary that only looks like
    # fio) kept 'measure' waiting forever.
    from raidlab.measure import runner

    monkeypatch.setattr(runner, "RUN_GRACE_S", 0.5)
    refused(run_cli(["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--size", "8M",
                     "--runtime-s", "0.2", "--fio-binary", str(_fake_fio(tmp_path, True))]),
            "fio ran for 0.9 s", "stopped it")


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


# -- the Python API raises RaidlabError for bad values ---------------------------------------------


@pytest.mark.parametrize("settings, fragment", [
    ({"fio": 5}, "fio must be a job file's path or the job text, got int"),
    ({"fio": b"[j]\nrw=read\n"}, "got bytes"),
    ({"workload": "wal"}, "workload must be a raidlab Workload, got str"),
    ({"preset": "wal", "timeline": [{"x": 1}]}, "timeline event"),
    ({"preset": "wal", "timeline": "0@1"}, "timeline must be a list of events"),
    ({"preset": "wal", "timeline": [{"action": "fail", "member": 0, "at_s": "nan"}]}, "not a finite number"),
    ({"preset": "wal", "seed": "\u0661"}, "seed='\u0661' is not a whole number"),
])
def test_simulate_refuses_bad_values_with_raidlab_errors(settings, fragment):
    # Before: TypeError (fio=5, bytes), AttributeError (workload='wal'), KeyError/TypeError
    # (malformed timelines), and seed='١' ran with seed 1.
    import raidlab

    with pytest.raises(raidlab.RaidlabError) as raised:
        raidlab.simulate(runtime_s=0.01, drive="null", **settings)
    assert fragment in str(raised.value)
