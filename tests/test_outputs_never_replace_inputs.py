"""No output of a command may replace one of its inputs (the fio JSON being imported, the job
file, a drive file named inside a designs file), not even with --force."""

from __future__ import annotations

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
