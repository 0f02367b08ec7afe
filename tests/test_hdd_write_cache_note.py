"""HDD members whose write cache acknowledges md's writes: the run says the write latency shown is
the cache's acknowledgement (and that the model's cache absorbs random writes more than real
drives do), on stderr and in the document's notes."""

from __future__ import annotations

import raidlab
from conftest import run_cli

ARGS = ["sim", "--level", "5", "--devices", "4", "--drive", "cheetah-10k7", "--preset", "oltp-innodb",
        "--runtime-s", "2"]


def _cache_notes(notes):
    return [note for note in notes if "write cache" in note and "acknowledg" in note]


def test_sim_notes_that_hdd_writes_were_acknowledged_from_the_drive_cache():
    run = run_cli([*ARGS, "--json"])
    assert run.status == 0, run.stderr
    doc = run.json()
    notes = _cache_notes(doc["raidlab"]["notes"])
    assert len(notes) == 1, doc["raidlab"]["notes"]
    members = doc["disk_util"][:4]
    awaits = [m["write_time_ns"] / m["write_ios"] / 1e6 for m in members]
    assert max(awaits) < 1.0  # the figure the note explains: sub-millisecond HDD writes
    assert f"{max(awaits):.2f} ms" in notes[0]
    assert "absorbs random writes more than real drives do" in notes[0]
    assert "--drive-write-cache off" in notes[0]
    stderr_notes = [line for line in run.stderr_lines if line.startswith("raidlab: note: ")]
    assert any(notes[0] in line for line in stderr_notes), run.stderr


def test_no_cache_note_with_the_drive_cache_off_or_on_ssds_or_read_only_runs():
    off = raidlab.simulate(level=5, devices=4, drive="cheetah-10k7", preset="oltp-innodb", runtime_s=1,
                           drive_write_cache="off")
    assert not _cache_notes(off.notes)
    ssd = raidlab.simulate(level=5, devices=4, drive="null", preset="oltp-innodb", runtime_s=1)
    assert not _cache_notes(ssd.notes)
    reads = raidlab.simulate(level=5, devices=4, drive="cheetah-10k7", fio="[r]\nrw=randread\nruntime=1\n")
    assert not _cache_notes(reads.notes)
