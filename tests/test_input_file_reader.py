"""Every file a user names is read by one reader: only regular files, never blocking on a FIFO or
device, capped in size per kind, strict UTF-8 (the error gives the byte offset)."""

from __future__ import annotations

import os
import time
from typing import List

import pytest

from conftest import REPO_ROOT, refused, run_bounded, run_cli
from raidlab.inputs import LIMITS

DISKSIM = REPO_ROOT / "data" / "disksim-valid"
JOB = "[j]\nrw=randread\nbs=4k\nsize=16m\n"
QUICK = ["--drive", "null", "--runtime-s", "0.01"]


# -- one reader: only regular files, never blocking, capped, strict UTF-8 ------------------------


def _surfaces(path: str) -> List[List[str]]:
    """Every command line that reads a user file, reading ``path`` (a name ending .toml is
    needed where the suffix selects the kind of file)."""
    toml = path if path.endswith(".toml") else None
    lines = [["sim", "--fio", path, *QUICK],
             ["align", path],
             ["import", path],
             ["calibrate", "--sweep", path, "--out", "-"],
             ["replay", "--disksim", path, "trace"]]
    if toml:
        lines += [["sim", "--drive", toml, "--preset", "wal", "--runtime-s", "0.01"],
                  ["compare", "--designs", toml],
                  ["plan", "--capacity-tb", "1", "--preset", "wal", "--drive", toml]]
    return lines


@pytest.fixture
def special_files(tmp_path):
    """A FIFO and /dev/zero, each also under a .toml name (symlinks: the reader follows them)."""
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.toml"
    zero.symlink_to("/dev/zero")
    return {"FIFO": str(fifo), "character device": str(zero)}


@pytest.mark.parametrize("kind", ["FIFO", "character device"])
def test_fifos_and_devices_are_refused_without_blocking(special_files, kind):
    # Before: a FIFO blocked forever in open(); /dev/zero was read until memory ran out.
    for args in _surfaces(special_files[kind]):
        started = time.monotonic()
        refused(run_bounded(args), f"it is a {kind}, not a regular file")
        assert time.monotonic() - started < 20


def test_dev_zero_itself_is_refused():
    refused(run_bounded(["sim", "--fio", "/dev/zero", *QUICK]),
            "cannot read fio job file /dev/zero: it is a character device, not a regular file")


def test_a_directory_is_refused_by_name(tmp_path):
    for args in _surfaces(str(tmp_path)):
        refused(run_cli(args), "it is a directory, not a regular file")


def test_sizes_are_capped_per_kind(tmp_path):
    big = tmp_path / "big.fio"
    with open(big, "wb") as handle:
        handle.truncate(LIMITS["fio job file"] + 1)  # sparse: costs no disk
    refused(run_cli(["sim", "--fio", str(big), *QUICK]), "larger than the 16 MiB limit for a fio job file")
    trace = tmp_path / "big.trace"
    with open(trace, "wb") as handle:
        handle.truncate(LIMITS["DiskSim trace"] + 1)
    (tmp_path / "x.parv").write_text("")
    refused(run_cli(["replay", "--disksim", str(tmp_path / "x.parv"), str(trace)]),
            "larger than the 64 MiB limit for a DiskSim trace")


def test_a_file_at_the_cap_is_read(tmp_path):
    job = tmp_path / "padded.fio"
    text = JOB + ";" * (LIMITS["fio job file"] - len(JOB) - 1) + "\n"
    job.write_text(text)
    assert run_cli(["sim", "--fio", str(job), *QUICK]).status == 0


@pytest.mark.parametrize("args_of, content", [
    (lambda p: ["sim", "--fio", p, *QUICK], b"[j]\nrw=read\n; caf\xe9\n"),
    (lambda p: ["sim", "--drive", p, "--preset", "wal"], b'kind = "hdd"\n# caf\xe9\n'),
    (lambda p: ["compare", "--designs", p], b'[[design]]\nname = "caf\xe9"\n'),
    (lambda p: ["align", p], b'{"partitiontable": {"x": "caf\xe9"}}'),
    (lambda p: ["calibrate", "--sweep", p, "--out", "-"], b'{"sweep": "caf\xe9"}'),
])
def test_non_utf8_files_are_refused_with_the_byte_offset(tmp_path, args_of, content):
    # Before: UnicodeDecodeError, exit 1 (an internal error), or "not a text file" with no place.
    path = tmp_path / "input.toml"
    path.write_bytes(content)
    offset = content.index(b"\xe9")
    line = content[:offset].count(b"\n") + 1
    refused(run_cli(args_of(str(path))), f"is not UTF-8 text: byte 0xe9 at offset {offset} (line {line})")


def test_non_utf8_trace_is_refused(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_bytes(b"0.0 0 1000 8 1\n\xff\n")
    refused(run_cli(["replay", "--disksim", str(DISKSIM / "atlas10k.parv"), str(trace)]),
            "DiskSim trace", "byte 0xff at offset 15 (line 2)")


def test_a_fifo_named_by_a_disksim_file_is_refused(tmp_path):
    for name in ("atlas10k.parv", "atlas10k.diskspecs", "atlas10k.seek", "atlas10k.trace"):
        (tmp_path / name).symlink_to(DISKSIM / name)
    os.mkfifo(tmp_path / "atlas10k.model")
    refused(run_bounded(["replay", "--disksim", str(tmp_path / "atlas10k.parv"), str(tmp_path / "atlas10k.trace")]),
            "atlas10k.model: it is a FIFO, not a regular file")


def test_a_fifo_in_a_sysfs_copy_is_refused(tmp_path):
    # Before: align --sysfs-root read every attribute with open(), which blocks on a FIFO.
    queue = tmp_path / "block" / "sdx" / "queue"
    queue.mkdir(parents=True)
    os.mkfifo(queue / "logical_block_size")
    refused(run_bounded(["align", "--device", "sdx", "--sysfs-root", str(tmp_path)]),
            "cannot read sysfs attribute", "logical_block_size: it is a FIFO, not a regular file")


@pytest.mark.parametrize("text, fragment", [
    ("", "t.trace: trace has no requests"),
    ("# only a comment\n\n", "t.trace: trace has no requests"),
    ("W Hit 4583176 4 0 1\n", "t.trace: every measured service time is 0"),
    ("W Hit 4583176 4 663.0 1\nR Hit 100 4 1e300 5\n", "t.trace:2: service time '1e300' is not 0 to"),
])
def test_degenerate_traces_are_refused(tmp_path, text, fragment):
    # Before: exit 0 with "demerit: nan ms (nan %)", or Infinity in the --json document.
    trace = tmp_path / "t.trace"
    trace.write_text(text)
    refused(run_cli(["replay", "--disksim", str(DISKSIM / "atlas10k.parv"), str(trace), "--json"]), fragment)
