"""Issue 21, the reporter's held-out set: bad inputs of the issue's classes that the first round's
tests did not cover. Each must end in one line ``raidlab: error: ...`` and exit status 2 (or, for
valid input, do what it says), and no output may replace an input. Each test here failed before
the fix it names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import refused, run_cli

JOB = "[j]\nrw=randread\nbs=4k\nsize=16m\n"
QUICK = ["--drive", "null", "--runtime-s", "0.01"]




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


def _posing_fio(tmp_path: Path, run: str) -> str:
    """A binary that answers --version as fio 3.33 does and then runs ``run`` (shell) with
    $OUT set to fio's --output= file."""
    fake = tmp_path / "fio"
    fake.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo fio-3.33; exit 0; fi\n'
                    'for a in "$@"; do case "$a" in --output=*) OUT="${a#--output=}";; esac; done\n'
                    f'{run}\n')
    fake.chmod(0o755)
    return str(fake)


@pytest.mark.parametrize("run, fragment", [
    ('echo \'{"jobs": "x"}\' > "$OUT"; exit 0', "it exited 0 but wrote no fio JSON output"),
    ('rm -f "$OUT"; mkfifo "$OUT"; exit 0', "it exited 0 but wrote no fio JSON output"),
    ('head -c 70000000 /dev/zero | tr "\\0" "{" > "$OUT"; exit 0', "it exited 0 but wrote no fio JSON output"),
    ('head -c 30000000 /dev/zero | tr "\\0" "x"; exit 3', "fio failed on"),
])
def test_what_fio_writes_is_read_bounded(tmp_path, run, fragment):
    # Before: '{"jobs": "x"}' was an internal error (AttributeError, exit 70); a FIFO in place of
    # the output file blocked forever; a huge output file or stdout was read whole into memory
    # (300 MB of output: 1.7 GB RSS) and quoted whole in the error line.
    run_ = run_cli(["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--size", "8M",
                    "--runtime-s", "0.2", "--fio-binary", _posing_fio(tmp_path, run)])
    refused(run_, fragment)
    assert len(run_.stderr) < 1000


@pytest.mark.parametrize("option, value, shown", [
    ("--uber", "0.5", "0<=x<0.001"),
    ("--lse-per-disk-year", "1000000", "0<=x<=8760"),
])
def test_reliability_option_ranges_are_the_models(option, value, shown):
    # Before: the options took up to 1 and 1e6 and the core then refused the value in its own
    # unit ("latent sector error rate must be between 0 and 1 per disk-hour, got 114.15...").
    refused(run_cli(["reliability", "--level", "5", "--devices", "4", option, value]),
            f"Invalid value for '{option}'", shown)


@pytest.mark.parametrize("option", ["--limit", "--seed"])
def test_whole_numbers_stop_at_the_u64_limit(option):
    # Before: replay --seed 2**64 (or a 22-digit --limit) was an internal error (OverflowError:
    # int too big to convert, exit 70).
    from conftest import REPO_ROOT

    data = REPO_ROOT / "data" / "disksim-valid"
    refused(run_cli(["replay", str(data / "atlas10k.trace"), "--disksim", str(data / "atlas10k.parv"),
                     option, str(2**64)]), f"Invalid value for '{option}'", "18446744073709551615")
