"""An output never replaces an input of its command, however the command line is invoked: through
``raidlab.cli.main`` (the console script, ``python -m raidlab``) or through click's own entry
point on the group (``raidlab.cli.cli.main``, as a program embedding the CLI or click's test
runner calls it)."""

from __future__ import annotations

import pytest

from raidlab.cli import cli
from raidlab.errors import ConfigError

JOB = "[j]\nrw=randread\nbs=4k\nsize=16m\n"


def test_click_entry_point_protects_the_job_file(tmp_path):
    job = tmp_path / "job.fio"
    job.write_text(JOB)
    with pytest.raises(ConfigError, match="it is the file given to --fio, an input of this command"):
        cli.main(["sim", "--fio", str(job), "--drive", "null", "--runtime-s", "0.01", "--json", str(job),
                  "--force"],
                 standalone_mode=False)
    assert job.read_text() == JOB


def test_click_entry_point_protects_a_drive_file_read_while_running(tmp_path):
    drive = tmp_path / "d.toml"
    drive.write_text('kind = "null"\n')
    designs = tmp_path / "designs.toml"
    designs.write_text(f'[[design]]\nname = "a"\nlevel = 5\ndevices = 4\ndrive = "{drive}"\n')
    with pytest.raises(ConfigError, match=f"it is the drive file {drive}, an input of this command"):
        cli.main(["compare", "--designs", str(designs), "--preset", "wal", "--runtime-s", "0.01",
                  "--states", "optimal", "--csv", str(drive), "--force"], standalone_mode=False)
    assert drive.read_text() == 'kind = "null"\n'


def test_a_command_run_on_its_own_protects_its_inputs(tmp_path):
    # A command object run without the group (an embedding program may register it elsewhere).
    from raidlab.commands.sim import sim_command

    job = tmp_path / "job.fio"
    job.write_text(JOB)
    with pytest.raises(ConfigError, match="it is the file given to --fio, an input of this command"):
        sim_command.main(["--fio", str(job), "--drive", "null", "--runtime-s", "0.01", "--json", str(job),
                          "--force"], standalone_mode=False)
    assert job.read_text() == JOB
