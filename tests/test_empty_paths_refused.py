"""An empty path is not "no output": empty output paths, targets and fio binaries are refused, and
a file's directory must exist (nothing is created on the way)."""

from __future__ import annotations

import pytest

from conftest import refused, run_cli

QUICK = ["--drive", "null", "--runtime-s", "0.01"]


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
