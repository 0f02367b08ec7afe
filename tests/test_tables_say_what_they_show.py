"""Tables say what they show: an idle rebuild prints its phases, not empty tables, and an imported
run is labelled from what fio recorded."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import run_cli

NULL_DESIGN = ["--level", "5", "--devices", "4", "--drive", "null"]


# --- tables that say what they show -------------------------------------------------------


def test_an_idle_rebuild_prints_its_phases_not_empty_tables():
    run = run_cli(["sim", *NULL_DESIGN, "--failed", "0", "--spare", "--runtime-s", "1"])
    assert run.status == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "no foreground I/O: the array was idle" in lines
    assert not any(line.startswith("job ") for line in lines)
    phase = next(line.split() for line in lines if line.startswith("rebuilding "))
    assert phase == ["rebuilding", "0.0-1.0", "idle", "0", "-", "-"]
    assert any(line.startswith("rebuild of member0: started 0.0 s") for line in lines)


def _fio_json(tmp_path):
    target = tmp_path / "fio.dat"
    done = subprocess.run(["fio", "--name=mix", f"--filename={target}", "--size=4m", "--rw=randrw",
                           "--bs=4k", "--iodepth=2", "--ioengine=libaio", "--runtime=1",
                           "--output-format=json"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "fio.json"
    path.write_text(done.stdout)
    return path, json.loads(done.stdout)["fio version"]


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make deps installs it)")
def test_an_imported_run_is_labelled_from_what_fio_recorded(tmp_path):
    path, version = _fio_json(tmp_path)
    report = tmp_path / "r.html"
    run = run_cli(["import", str(path), "--html", str(report)])
    assert run.status == 0, run.stderr
    html = report.read_text()
    assert "seed</span> ?" not in html and "unknown workload" not in html
    assert "unknown configuration" not in html
    assert f'chip-key">measured</span> {version}' in html
    assert f"measured with {version} (not simulated)" in html
    assert "mix: rw=randrw, bs=4k, iodepth=2, ioengine=libaio" in html
    assert "1 measured run" in html and "1 simulation" not in html
