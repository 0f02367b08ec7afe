"""``--png`` never lets matplotlib's multi-line warnings reach stderr: their causes are avoided
(an empty legend), and any other warning or log line matplotlib gives while drawing becomes one
``raidlab: note: --png: ...`` line."""

from __future__ import annotations

import os
import subprocess
import sys

from raidlab.report import png


def test_an_idle_runs_charts_print_nothing_on_stderr(tmp_path):
    # A real process with Python's default warning filters (pytest would catch the warning). An
    # idle array (no workload, a rebuild alone) drew a latency chart with an empty legend.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}
    done = subprocess.run(
        [sys.executable, "-m", "raidlab", "sim", "--level", "1", "--devices", "2", "--drive", "null",
         "--fail", "1@0", "--replace", "1@0.01", "--max-time-s", "0.1", "--png", str(tmp_path / "charts")],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "latency_cdf.png" in os.listdir(tmp_path / "charts")


def _entry(design: str) -> dict:
    stats = {"total_ios": 10, "iops": 10.0,
             "clat_ns": {"percentile": {key: 1_000_000 * (1 + i) for i, key in enumerate(png.PERCENTILE_KEYS)}}}
    document = {"jobs": [{"read": stats, "write": {"total_ios": 0}}],
                "disk_util": [{"util": 50.0}], "timeline": []}
    return {"design": design, "state": "optimal", "document": document}


def test_a_warning_while_drawing_is_one_note_line(tmp_path, capsys):
    # No font has these glyphs: matplotlib warns once per glyph and chart.
    written = png.write_pngs(str(tmp_path / "charts"), [_entry("design \U000f0001\U000f0002")])
    assert len(written) == 4
    err = capsys.readouterr().err.splitlines()
    assert err, "matplotlib gave no warning to turn into notes"
    assert all(line.startswith("raidlab: note: --png: ") for line in err), err
    assert len(err) == len(set(err))
    assert any("missing from font" in line for line in err), err
