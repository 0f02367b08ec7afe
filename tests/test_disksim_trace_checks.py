"""DiskSim traces given to ``replay``: every number is range-checked and an empty trace is refused,
each with one ``raidlab: error:`` line; a sane trace still replays."""

from __future__ import annotations

import pytest

from conftest import run_process


# --- DiskSim traces: every number range-checked, an empty trace refused ------------------------

_MODEL = """dm_disk M {
   Number of data surfaces = 2, Number of cylinders = 100, Block count = 20000,
   Layout Model = dm_layout_g1 { Zones = [ dm_layout_g1_zone { First cylinder number = 0,
      Last cylinder number = 99, Blocks per track = 100 } ] },
   Mechanical Model = dm_mech_g1 { Seek type = extracted, Full seek curve = m.seek,
      Head switch time = 0.5, Rotation speed (in rpms) = 7200 }
}
"""
_DISK = """disksim_disk D {
  Model = source m.model, Bulk sector transfer time = 0.01, Max queue length = 1,
  Read hit over. after read = 0.1, Read hit over. after write = 0.1,
  Read miss over. after read = 0.2, Read miss over. after write = 0.2,
  Write hit over. after read = 0.3, Write hit over. after write = 0.3,
  Write miss over. after read = 0.4, Write miss over. after write = 0.4
}
"""


@pytest.fixture()
def disk(tmp_path):
    (tmp_path / "m.model").write_text(_MODEL)
    (tmp_path / "m.seek").write_text("Seek distances measured: 2\n1, 1.0\n99, 9.0\n")
    (tmp_path / "d.diskspecs").write_text(_DISK)
    return tmp_path


@pytest.mark.parametrize("trace, message", [
    ("R Miss 100 8 5.0 1e300\n", "t.trace:1: inter-arrival time '1e300' is not 0 to 3600000000 µs"),
    ("R Miss 100 8 5.0 1.0\nW Miss 18446744073709551615 8 5.0 1\n", "t.trace:2: LBN '18446744073709551615'"),
    ("R Miss 100 70000 5.0 1\n", "t.trace:1: size '70000' is not 1 to 65536 sectors"),
    ("R Miss 100 8 inf 1\n", "t.trace:1: service time 'inf'"),
    ("", "t.trace: trace has no requests"),
    ("# comments only\n", "t.trace: trace has no requests"),
])
def test_a_bad_trace_number_or_an_empty_trace_is_one_line(disk, trace, message):
    (disk / "t.trace").write_text(trace)
    run = run_process(["replay", "--disksim", str(disk / "d.diskspecs"), str(disk / "t.trace")])
    assert run.status == 2
    assert len(run.stderr_lines) == 1 and run.stderr_lines[0].startswith(f"raidlab: error: {message}"), run.stderr
    assert "nan" not in run.stdout


def test_a_sane_trace_still_replays(disk):
    (disk / "t.trace").write_text("R Miss 100 8 5.0 1000\nW Miss 19000 16 6.0 0\n")
    run = run_process(["replay", "--disksim", str(disk / "d.diskspecs"), str(disk / "t.trace"), "--json"])
    assert run.status == 0, run.stderr
    assert run.json()["requests"] == 2
