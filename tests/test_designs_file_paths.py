"""A designs file's relative drive, controller and fio files are read from beside it, never from
the working directory (the rule a sweep file follows too)."""

from __future__ import annotations

from conftest import run_cli


def test_relative_files_in_a_designs_file_are_read_beside_it_not_from_the_cwd(tmp_path, monkeypatch):
    here, there = tmp_path / "cwd", tmp_path / "plans"
    here.mkdir()
    there.mkdir()
    (there / "designs.toml").write_text(
        '[defaults]\ndrive = "fast.toml"\ndevices = 4\n'
        '[[design]]\nname = "r5"\nlevel = 5\n'
        '[[workload]]\nname = "reads"\nfio = "job.fio"\n')
    (there / "fast.toml").write_text('kind = "null"\n[params]\nlatency_us = 50\n')
    (there / "job.fio").write_text("[j]\nrw=randread\nbs=4k\nsize=16m\nruntime=200ms\ntime_based\n")
    # Decoys of the same names in the working directory: a slow drive and a write job.
    (here / "fast.toml").write_text('kind = "null"\n[params]\nlatency_us = 5000\n')
    (here / "job.fio").write_text("[j]\nrw=randwrite\nbs=4k\nsize=16m\nruntime=200ms\ntime_based\n")
    monkeypatch.chdir(here)
    run = run_cli(["compare", "--designs", str(there / "designs.toml"), "--states", "optimal", "--csv", "-"])
    assert run.status == 0, run.stderr
    header, row = run.stdout.splitlines()[:2]
    values = dict(zip(header.split(","), row.split(",")))
    assert values["workload"] == "reads"
    assert float(values["read_latency_ms_p50"]) < 1.0, values  # the 50 µs drive beside the file, not the 5 ms decoy
    assert values["write_latency_ms_p50"] == "", values
