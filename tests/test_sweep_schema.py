"""The one schema of the tables users write: a drive table (a sweep file's, a designs file's,
``raidlab.simulate(drive=...)``'s, a drive FILE.toml) and a sweep file's tables. Unknown keys are
refused with the nearest valid name, wrong shapes name the key, nothing is dropped silently, and
a sweep file's relative files are read from beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

import raidlab
from raidlab.sweep import runner
from raidlab.sweep.grid import expand, parse

from conftest import run_cli

pytest.importorskip("pyarrow")

QUICK = {"preset": "wal", "runtime_s": 0.01, "level": 1, "devices": 2}
QUICK_TOML = '[sweep]\npreset = "wal"\nruntime_s = 0.01\nlevel = 1\ndevices = 2\n'


def _sweep_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


def refused(tmp_path: Path, text: str, *needles: str) -> str:
    """``raidlab sweep`` on ``text``: exit 2 and one ``raidlab: error:`` line holding every needle."""
    run = run_cli(["sweep", str(_sweep_file(tmp_path, text)), "--out", str(tmp_path / "store")])
    assert run.status == 2, (run.status, run.stderr)
    assert len(run.stderr_lines) == 1 and run.stderr_lines[0].startswith("raidlab: error: "), run.stderr
    for needle in needles:
        assert needle in run.stderr, run.stderr
    assert not (tmp_path / "store").exists()
    return run.stderr_lines[0]


# -- empty zips ---------------------------------------------------------------------------------


def test_an_empty_zip_table_in_a_sweep_file_is_one_line(tmp_path):
    refused(tmp_path, QUICK_TOML + 'drive = "null"\n[[zip]]\n', "[[zip]][0]", "has no axes")


def test_an_empty_zip_from_python_is_a_config_error(tmp_path):
    document = {"sweep": {**QUICK, "drive": "null"}, "zip": [{}]}
    with pytest.raises(raidlab.ConfigError, match=r"\[\[zip\]\]\[0\] has no axes"):
        raidlab.sweep(document, out=tmp_path / "store", jobs=1)
    with pytest.raises(raidlab.ConfigError, match="has no axes"):
        parse({"grid": {"level": [5]}, "zip": {}})
    assert not (tmp_path / "store").exists()


# -- the sweep file's own tables ------------------------------------------------------------------


def test_an_unknown_sweep_option_names_the_nearest(tmp_path):
    line = refused(tmp_path, QUICK_TOML + '[grid]\nchunk_kb = [64]\n', "[grid] unknown option 'chunk_kb'",
                   "did you mean chunk-kib?")
    assert "expected one of" in line
    with pytest.raises(raidlab.ConfigError, match=r"unknown option 'devcies' \(did you mean devices\?\)"):
        parse({"sweep": {"devcies": 4}})
    with pytest.raises(raidlab.ConfigError, match=r"unknown table \[girds\] \(did you mean \[grid\]\?\)"):
        parse({"girds": {"level": [5]}})


def test_a_sweep_table_of_the_wrong_shape_names_it():
    with pytest.raises(raidlab.ConfigError, match=r"\[\[zip\]\]\[1\] must be a table of option = value, got an integer"):
        parse({"zip": [{"level": [5]}, 3]})
    with pytest.raises(raidlab.ConfigError, match=r"\[sweep\] mode must be a string, got an array"):
        parse({"sweep": {"mode": ["zip"]}})


def test_a_sweep_from_python_takes_tuples_as_arrays():
    points = expand(parse({"grid": {"seed": (1, 2)}, "zip": ({"devices": (2, 3), "level": (1, 5)},),
                           "include": ({"seed": 9},)}))
    assert [(p.settings["seed"], p.settings.get("devices")) for p in points] == [(1, 2), (1, 3), (2, 2), (2, 3), (9, None)]


# -- drive tables -------------------------------------------------------------------------------


def test_a_drive_table_whose_params_is_not_a_table_is_refused(tmp_path):
    refused(tmp_path, QUICK_TOML + 'drive = {kind = "hdd", params = "x"}\n',
            "drive: 'params' must be a table, got a string")
    with pytest.raises(raidlab.ConfigError, match="'params' must be a table, got a string"):
        raidlab.simulate(drive={"kind": "hdd", "params": "x"}, **QUICK)


def test_an_unknown_drive_key_is_refused_with_the_nearest_name(tmp_path):
    line = refused(tmp_path, QUICK_TOML + '[grid]\ndrive = [{kind = "hdd", rmp = 15000}]\n',
                   "point 0", "drive: unknown key 'rmp' (did you mean 'rpm'?)")
    assert "raidlab drives --params hdd" in line
    with pytest.raises(raidlab.ConfigError, match=r"unknown key 'rmp' \(did you mean 'rpm'\?\)"):
        raidlab.simulate(drive={"kind": "hdd", "params": {"rmp": 15000}}, **QUICK)
    with pytest.raises(raidlab.ConfigError, match=r"unknown key 'knid' \(did you mean 'kind'\?\)"):
        raidlab.simulate(drive={"knid": "hdd"}, **QUICK)
    with pytest.raises(raidlab.ConfigError, match=r"unknown drive kind 'hhd' \(did you mean 'hdd'\?\)"):
        raidlab.simulate(drive={"kind": "hhd"}, **QUICK)


def test_a_drive_table_value_of_the_wrong_type_names_the_key():
    with pytest.raises(raidlab.ConfigError, match="'rpm' must be a number, got str 'fast'"):
        raidlab.simulate(drive={"kind": "hdd", "rpm": "fast"}, **QUICK)
    with pytest.raises(raidlab.ConfigError, match="'rpm' must be a finite number"):
        raidlab.simulate(drive={"kind": "hdd", "params": {"rpm": float("nan")}}, **QUICK)
    with pytest.raises(raidlab.ConfigError, match="'kind' must be a string, got an integer"):
        raidlab.simulate(drive={"kind": 5}, **QUICK)
    with pytest.raises(raidlab.ConfigError, match="needs kind = \"hdd\"|\"ssd\"|.* or preset = \"NAME\""):
        raidlab.simulate(drive={}, **QUICK)


def test_a_drive_parameter_beside_kind_is_honoured_as_params_are():
    """A drive table is the drive FILE.toml's flat form: ``rpm`` beside ``kind`` sets the
    spindle speed, as ``params = {rpm = ...}`` does. 15,000 rpm turns faster than the default
    7,200, so random 4 KiB reads wait less for the platter: more IOPS."""
    load = dict(level=0, devices=1, fio="[r]\nrw=randread\nbs=4k\niodepth=1\nsize=256m\n",
                runtime_s=0.5, seed=1)
    default = raidlab.simulate(drive={"kind": "hdd"}, **load).jobs().iops[0]
    flat = raidlab.simulate(drive={"kind": "hdd", "rpm": 15000}, **load).jobs().iops[0]
    nested = raidlab.simulate(drive={"kind": "hdd", "params": {"rpm": 15000}}, **load).jobs().iops[0]
    assert flat == nested
    assert flat > 1.2 * default, (flat, default)


def test_a_drive_parameter_given_twice_or_where_it_cannot_apply_is_refused():
    with pytest.raises(raidlab.ConfigError, match="'rpm' is given both beside kind and in params"):
        raidlab.simulate(drive={"kind": "hdd", "rpm": 15000, "params": {"rpm": 10000}}, **QUICK)
    with pytest.raises(raidlab.ConfigError, match='preset = "nvme-tlc" is of kind "ssd", not kind = "hdd"'):
        raidlab.simulate(drive={"kind": "hdd", "preset": "nvme-tlc"}, **QUICK)
    with pytest.raises(raidlab.ConfigError, match=r"unknown key 'rpm'.*raidlab drives --params ssd"):
        raidlab.simulate(drive={"preset": "x25e-slc", "rpm": 15000}, **QUICK)


def test_a_designs_file_takes_the_same_drive_table(tmp_path):
    designs = tmp_path / "designs.toml"
    designs.write_text('[[design]]\nname = "fast"\nlevel = 1\ndevices = 2\ndrive = {kind = "null", latncy_us = 5}\n')
    args = ["compare", "--designs", str(designs), "--preset", "wal", "--runtime-s", "0.01", "--states", "optimal"]
    run = run_cli(args)
    assert run.status == 2 and len(run.stderr_lines) == 1, run.stderr
    assert "unknown key 'latncy_us' (did you mean 'latency_us'?)" in run.stderr
    designs.write_text('[[design]]\nname = "fast"\nlevel = 1\ndevices = 2\ndrive = {kind = "null", latency_us = 5}\n')
    assert run_cli(args).status == 0


# -- relative files in a sweep file ---------------------------------------------------------------

BESIDE_JOB = "[beside]\nrw=randread\nbs=4k\nsize=16m\n"
DECOY_JOB = "[decoy]\nrw=write\nbs=1m\nsize=16m\n"


def test_relative_files_in_a_sweep_file_are_read_beside_it_not_from_the_cwd(tmp_path, monkeypatch):
    """A decoy of each file sits in the working directory; the sweep reads the ones beside it."""
    here, cwd = tmp_path / "study", tmp_path / "elsewhere"
    for folder, kind, job, ctl in ((here, "ssd", BESIDE_JOB, "md"), (cwd, "null", DECOY_JOB, "hw")):
        folder.mkdir()
        (folder / "drive.toml").write_text(f'kind = "{kind}"\n')
        (folder / "job.fio").write_text(job)
        (folder / "ctl.toml").write_text(f'preset = "{ctl}"\n')
    sweep = here / "sweep.toml"
    sweep.write_text('[sweep]\ndrive = "drive.toml"\nfio = "job.fio"\ncontroller = "ctl.toml"\nlevel = 1\n'
                     'devices = 2\nruntime_s = 0.01\n')
    monkeypatch.chdir(cwd)
    resolved, _ = runner.resolve(str(sweep))
    design = resolved[0].spec.design
    assert design.drive.kind == "ssd"
    assert [job.name for job in resolved[0].spec.workload.jobs] == ["beside"]
    assert resolved[0].spec.config()["controller"]["kind"] == "md"
    # a name that is not beside the sweep file is not looked up in the working directory either
    (here / "job.fio").unlink()
    with pytest.raises(raidlab.RaidlabError, match="job.fio"):
        runner.resolve(str(sweep))
