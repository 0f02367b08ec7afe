"""``--fio`` takes a path or inline job text: an existing path always wins (brackets and all), and
inline text needs a newline."""

from __future__ import annotations

from conftest import refused, run_cli

JOB = "[j]\nrw=randread\nbs=4k\nsize=16m\n"
QUICK = ["--drive", "null", "--runtime-s", "0.01"]


# -- --fio: an existing path always wins --------------------------------------------------------


def test_fio_path_with_brackets_is_a_path(tmp_path):
    # Before: any value holding '[' was parsed as inline job text.
    folder = tmp_path / "jobs[1]"
    folder.mkdir()
    job = folder / "oltp[a].fio"
    job.write_text(JOB)
    run = run_cli(["sim", "--fio", str(job), *QUICK, "--json"])
    assert run.status == 0, run.stderr
    assert run.json()["raidlab"]["config"]["workload"]["source"]["text"] == JOB


def test_fio_inline_text_needs_a_newline():
    assert run_cli(["sim", "--fio", JOB, *QUICK]).status == 0
    refused(run_cli(["sim", "--fio", "[j]", *QUICK]), "cannot read fio job file [j]: No such file or directory")
