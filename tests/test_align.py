"""raidlab align: partition starts against chunk, stripe and 4 KiB sectors, from sfdisk -J dumps
and from a sysfs tree; exact straddle fractions; malformed input is one line and exit 2."""

from __future__ import annotations

import io
import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raidlab.align import kernel_alignment_offset, straddle_fraction

from conftest import run_cli

# What sfdisk -J prints (util-linux): an old DOS table from the XP era, without 'sectorsize'.
DOS_63 = """{
   "partitiontable": {
      "label": "dos",
      "id": "0x0004a2b1",
      "device": "/dev/sdb",
      "unit": "sectors",
      "partitions": [
         {"node": "/dev/sdb1", "start": 63, "size": 585871902, "type": "83"}
      ]
   }
}"""

# A modern DOS table (util-linux >= 2.35 adds sectorsize).
DOS_2048 = """{
   "partitiontable": {
      "label": "dos",
      "id": "0x5c3a2e1f",
      "device": "/dev/sdc",
      "unit": "sectors",
      "sectorsize": 512,
      "partitions": [
         {"node": "/dev/sdc1", "start": 2048, "size": 585869312, "type": "fd"}
      ]
   }
}"""

GPT = """{
   "partitiontable": {
      "label": "gpt",
      "id": "6A1F2C4D-93B0-4E6B-8C51-2F7D0E9A1B34",
      "device": "/dev/md0",
      "unit": "sectors",
      "firstlba": 34,
      "lastlba": 11721045134,
      "sectorsize": 512,
      "partitions": [
         {"node": "/dev/md0p1", "start": 2048, "size": 2097152, "type": "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
          "uuid": "0B9E5D7A-1C2F-4A3B-9D8E-7F6A5B4C3D2E", "name": "boot"},
         {"node": "/dev/md0p2", "start": 2099200, "size": 11718944768, "type": "E6D6D379-F507-44C2-A23C-238F2A3DF928",
          "uuid": "4C3D2E1F-0A9B-4C8D-8E7F-6A5B4C3D2E1F", "name": "data"}
      ]
   }
}"""

# A 4Kn drive: logical sectors of 4096 bytes, so start 256 is 1 MiB.
GPT_4KN = """{
   "partitiontable": {
      "label": "gpt",
      "id": "1E2D3C4B-5A69-4788-9A0B-C1D2E3F40516",
      "device": "/dev/sdd",
      "unit": "sectors",
      "firstlba": 6,
      "lastlba": 3906469882,
      "sectorsize": 4096,
      "partitions": [
         {"node": "/dev/sdd1", "start": 256, "size": 3906469376, "type": "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
          "uuid": "7A6B5C4D-3E2F-4109-8A7B-6C5D4E3F2A1B"}
      ]
   }
}"""


def write(tmp_path, text, name="dump.json"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def align(args):
    """The JSON report; the exit status is 0 when every partition is aligned, else 1 (as linters)."""
    run = run_cli(["align", *args, "--json"])
    report = run.json()
    assert run.status == (0 if report["aligned"] else 1), run.stderr
    return report


# -- the exact arithmetic ---------------------------------------------------------------------


def test_straddle_fraction_exact_values():
    # Percona's rule ("Aligning IO on a hard disk RAID – the Theory", 2011): io dividing the chunk, misaligned -> io/chunk; aligned -> 0.
    assert straddle_fraction(63 * 512, 16384, 16384, 65536) == Fraction(1, 4)
    assert straddle_fraction(0, 16384, 16384, 65536) == 0
    assert straddle_fraction(2048 * 512, 16384, 16384, 65536) == 0
    assert straddle_fraction(512, 16384, 16384, 32768) == Fraction(1, 2)
    assert straddle_fraction(512, 8192, 8192, 512 * 1024) == Fraction(1, 64)  # 1.6 %
    # Misaligned by 512 bytes against 4 KiB physical sectors: every 4 KiB I/O crosses one.
    assert straddle_fraction(63 * 512, 4096, 4096, 4096) == 1
    # An I/O bigger than the chunk always crosses a boundary.
    assert straddle_fraction(0, 128 * 1024, 128 * 1024, 64 * 1024) == 1
    # 12 KiB I/Os at 12 KiB steps on a 64 KiB chunk straddle even when aligned: (12K - 4K)/64K.
    assert straddle_fraction(0, 12288, 12288, 65536) == Fraction(1, 8)
    # 16 KiB pages at 4 KiB steps (any 4 KiB-aligned offset): 3 of 16 positions straddle.
    assert straddle_fraction(0, 16384, 4096, 65536) == Fraction(3, 16)


@settings(max_examples=300, deadline=None)
@given(offset=st.integers(0, 1 << 22), io=st.integers(1, 64).map(lambda x: x * 512),
       step=st.integers(1, 64).map(lambda x: x * 512), chunk=st.sampled_from([4096, 8192, 16384, 65536]))
def test_straddle_fraction_matches_counting(offset, io, step, chunk):
    # Count over one full period of positions offset + k*step modulo the chunk.
    from math import gcd

    period = chunk // gcd(step, chunk)
    crossing = sum(1 for k in range(period) if (offset + k * step) % chunk + io > chunk)
    assert straddle_fraction(offset, io, step, chunk) == Fraction(crossing, period)


def test_kernel_alignment_offset_formula():
    # block/blk-settings.c: (g + disk_off - start mod g) mod g, g = max(physical, io_min).
    assert kernel_alignment_offset(63 * 512, 4096, None) == 512
    assert kernel_alignment_offset(2048 * 512, 4096, None) == 0
    assert kernel_alignment_offset(63 * 512, 4096, 65536) == 33280


# -- sfdisk -J dumps ----------------------------------------------------------------------------


def test_start_63_on_512e_with_64k_chunk(tmp_path):
    report = align([write(tmp_path, DOS_63), "--logical-block-bytes", "512", "--level", "5", "--devices", "4",
                    "--chunk-kib", "64", "--io-kib", "16"])
    row = report["partitions"][0]
    assert row["start_bytes"] == 32256
    assert row["misalignment_bytes"] == {"physical": 3584, "mib": 32256, "chunk": 32256, "stripe": 32256}
    assert row["kernel_alignment_offset"] == 33280
    assert row["status"] == "misaligned"
    assert row["straddle"]["chunk"]["fraction"] == "1/4" and row["straddle"]["chunk"]["if_aligned"] == "0"
    assert row["straddle"]["physical"]["fraction"] == "1"
    # The fix: a multiple of 1 MiB and of the 192 KiB stripe -> 3 MiB = sector 6144, same end.
    assert row["fix"]["start"] == 6144 and row["fix"]["grain_bytes"] == 3 * 2**20
    assert row["fix"]["start"] + row["fix"]["size"] == 63 + 585871902
    assert report["aligned"] is False


def test_start_63_against_a_chunk_only_fixes_to_1_mib(tmp_path):
    run = run_cli(["align", write(tmp_path, DOS_63), "--logical-block-bytes", "512", "--chunk-kib", "64"])
    assert run.status == 1, run.stderr  # checked, misaligned
    assert "exactly 1/4" in run.stdout and "recreate it at sector 2048" in run.stdout
    assert "32256 bytes into a 64 KiB chunk" in run.stdout


def test_start_2048_is_chunk_aligned_but_not_on_a_192k_stripe(tmp_path):
    report = align([write(tmp_path, DOS_2048), "--level", "5", "--devices", "4", "--chunk-kib", "64"])
    row = report["partitions"][0]
    assert row["misalignment_bytes"]["physical"] == 0 and row["misalignment_bytes"]["chunk"] == 0
    assert row["misalignment_bytes"]["stripe"] == 65536  # 1 MiB mod 192 KiB
    assert row["status"] == "stripe-misaligned"
    assert row["straddle"]["chunk"]["fraction"] == "0"
    assert row["fix"]["start"] == 6144
    # On a power-of-two stripe (raid10 n2 x4, 2 x 64 KiB) 2048 is aligned to everything.
    report = align([write(tmp_path, DOS_2048), "--level", "10", "--devices", "4", "--chunk-kib", "64"])
    assert report["aligned"] and report["partitions"][0]["fix"] is None


def test_gpt_on_md_with_two_partitions(tmp_path):
    report = align([write(tmp_path, GPT), "--level", "6", "--devices", "6", "--chunk-kib", "512"])
    first, second = report["partitions"]
    assert report["topology"]["stripe_bytes"] == 4 * 512 * 1024
    assert first["status"] == "stripe-misaligned" and first["fix"]["start"] == 4096  # lcm(1M, 2M)
    assert second["start_bytes"] == 2099200 * 512
    assert second["misalignment_bytes"]["chunk"] == 0
    assert second["status"] == "stripe-misaligned"


def test_4kn_disk(tmp_path):
    report = align([write(tmp_path, GPT_4KN), "--chunk-kib", "64"])
    row = report["partitions"][0]
    assert report["topology"]["logical_block_bytes"] == 4096
    assert report["topology"]["physical_block_bytes"] == 4096
    assert row["start_bytes"] == 2**20 and row["status"] == "aligned"
    # The same table read as 512-byte sectors would be wrong: it disagrees with the dump.
    run = run_cli(["align", write(tmp_path, GPT_4KN), "--logical-block-bytes", "512"])
    assert run.status == 2 and "disagrees" in run.stderr


def test_4kn_misaligned_fix_is_in_4k_sectors(tmp_path):
    dump = json.loads(GPT_4KN)
    dump["partitiontable"]["partitions"][0]["start"] = 6  # 24 KiB
    report = align([write(tmp_path, json.dumps(dump)), "--chunk-kib", "64"])
    row = report["partitions"][0]
    assert row["misalignment_bytes"]["chunk"] == 24576
    assert row["fix"]["start"] == 256 and row["fix"]["unit_bytes"] == 4096


def test_reads_stdin(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(DOS_2048))
    run = run_cli(["align", "-", "--chunk-kib", "64", "--json"])
    assert run.status == 0, run.stderr
    assert run.json()["aligned"] is True


# -- sysfs (read-only) -----------------------------------------------------------------------


def fake_sysfs(root, name, queue, partitions, md=None):
    base = root / "block" / name
    (base / "queue").mkdir(parents=True)
    for key, value in queue.items():
        (base / "queue" / key).write_text(f"{value}\n")
    (base / "alignment_offset").write_text("0\n")
    for part, (start, size) in partitions.items():
        (base / part).mkdir()
        (base / part / "partition").write_text(f"{part[-1]}\n")
        (base / part / "start").write_text(f"{start}\n")
        (base / part / "size").write_text(f"{size}\n")
    if md:
        (base / "md").mkdir()
        for key, value in md.items():
            (base / "md" / key).write_text(f"{value}\n")
    return base


def snapshot(root):
    return {str(p): (p.read_text(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def test_live_md_topology_from_sysfs(tmp_path):
    # md raid5 x4, 64 KiB chunk: io_min 64 KiB, io_opt 192 KiB; a partition at sysfs start 63.
    fake_sysfs(tmp_path, "md0", {"logical_block_size": 512, "physical_block_size": 4096,
                                 "minimum_io_size": 65536, "optimal_io_size": 196608},
               {"md0p1": (63, 1000000), "md0p2": (6144, 2000000)},
               md={"level": "raid5", "raid_disks": 4, "chunk_size": 65536})
    before = snapshot(tmp_path)
    report = align(["--device", "/dev/md0", "--sysfs-root", str(tmp_path)])
    assert snapshot(tmp_path) == before  # nothing written
    first, second = report["partitions"]
    assert report["topology"]["chunk_bytes"] == 65536 and report["topology"]["stripe_bytes"] == 196608
    assert first["node"] == "/dev/md0p1" and first["kernel_alignment_offset"] == 33280
    assert first["straddle"]["chunk"]["fraction"] == "1/4"
    assert second["status"] == "aligned"
    assert any("md array: raid5" in note for note in report["topology"]["notes"])


def test_sysfs_plain_disk_without_topology_and_bogus_io_opt(tmp_path):
    fake_sysfs(tmp_path, "sda", {"logical_block_size": 512, "physical_block_size": 4096,
                                 "minimum_io_size": 4096, "optimal_io_size": 33553920},
               {"sda1": (63, 1000)})
    report = align(["--device", "sda", "--sysfs-root", str(tmp_path)])
    assert report["topology"]["chunk_bytes"] is None and report["topology"]["stripe_bytes"] is None
    assert any("bogus" in note for note in report["topology"]["notes"])
    row = report["partitions"][0]
    assert row["misalignment_bytes"]["physical"] == 3584 and row["fix"]["start"] == 2048
    assert row["kernel_alignment_offset"] == 512


# -- malformed input ------------------------------------------------------------------------


@pytest.mark.parametrize("text,words", [
    ("{not json", "not JSON"),
    ("[]", "partitiontable"),
    ('{"partitiontable": []}', "partitiontable"),
    ('{"partitiontable": {"sectorsize": 512, "partitions": [{"node": "/dev/sda1", "size": 10}]}}', "no 'start'"),
    ('{"partitiontable": {"sectorsize": 512, "partitions": [{"node": "/dev/sda1", "start": 2048}]}}', "no 'size'"),
    ('{"partitiontable": {"sectorsize": 512, "partitions": [{"start": "2048", "size": 1}]}}', "whole number"),
    ('{"partitiontable": {"sectorsize": 512, "partitions": [{"start": -1, "size": 1}]}}', "whole number"),
    ('{"partitiontable": {"sectorsize": 512, "partitions": [{"start": true, "size": 1}]}}', "whole number"),
    ('{"partitiontable": {"sectorsize": 512, "partitions": []}}', "no 'partitions'"),
    ('{"partitiontable": {"sectorsize": 512}}', "no 'partitions'"),
    ('{"partitiontable": {"sectorsize": 1000, "partitions": [{"start": 1, "size": 1}]}}', "power of two"),
    ('{"partitiontable": {"unit": "bytes", "sectorsize": 512, "partitions": [{"start": 1, "size": 1}]}}', "unit"),
    ('{"partitiontable": {"partitions": [{"start": 63, "size": 1}]}}', "--logical-block-bytes"),
    ('{"partitiontable": {"sectorsize": 512, "partitions": ["sda1"]}}', "not an object"),
])
def test_malformed_dumps_are_one_line_exit_2(tmp_path, text, words):
    run = run_cli(["align", write(tmp_path, text), "--chunk-kib", "64"])
    assert run.status == 2
    assert len(run.stderr_lines) == 1 and run.stderr_lines[0].startswith("raidlab: error: ")
    assert words in run.stderr, run.stderr


@pytest.mark.parametrize("args,words", [
    (["--device", "sdz"], "no "),
    (["/no/such/file.json"], "cannot read"),
    (["--level", "5"], "--devices"),
    (["--chunk-kib", "48"], "power of two"),
    (["--physical-block-bytes", "256"], "power of two"),
])
def test_bad_options_are_one_line_exit_2(tmp_path, args, words):
    if not any(a.startswith("/") or a == "--device" for a in args):
        args = [write(tmp_path, DOS_2048), *args]
    run = run_cli(["align", *args, "--sysfs-root", str(tmp_path)])
    assert run.status == 2, run.stdout
    assert len(run.stderr_lines) == 1 and words in run.stderr, run.stderr
