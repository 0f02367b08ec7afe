"""Buffered I/O through the page cache from the CLI and the workload readers: fio's
direct=0 default, buffered, invalidate, fsync_on_close; sysbench without O_DIRECT; the header;
the page_cache object in JSON; the presets; the options' one-line errors."""

import json
import subprocess
import sys
import textwrap

from raidlab.workload import parse_fio, preset
from raidlab.workload.sysbench import parse_sysbench


def _sim(*args):
    return subprocess.run([sys.executable, "-m", "raidlab", "sim", *args], capture_output=True, text=True,
                          timeout=300)


def _job(tmp_path, body):
    path = tmp_path / "job.fio"
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_fio_direct_0_is_buffered_and_the_buffered_options_parse():
    (plain,) = parse_fio("[a]\nrw=write\nbs=8k\n").jobs
    assert plain.direct is False and plain.invalidate is True
    (direct,) = parse_fio("[a]\nrw=write\nbuffered=0\n").jobs
    assert direct.direct is True
    (warm,) = parse_fio("[a]\nrw=read\ninvalidate=0\n").jobs
    assert warm.invalidate is False
    (closing,) = parse_fio("[a]\nrw=write\nfsync_on_close=1\n").jobs
    assert closing.fsync_end is True
    assert parse_sysbench("--file-test-mode=seqwr").jobs[0].direct is False
    assert parse_sysbench("--file-test-mode=seqwr --file-extra-flags=direct").jobs[0].direct is True
    # The database presets that model O_DIRECT keep it.
    assert all(job.direct for name in ("oltp-innodb", "oltp-postgres", "backup-scan") for job in preset(name).jobs)
    assert not any(job.direct for name in ("bonnie-seq", "dd-write", "dd-read", "wal") for job in preset(name).jobs)


def test_buffered_write_with_end_fsync_writes_every_sector_and_reports_the_page_cache(tmp_path):
    job = _job(tmp_path, """\
        [w]
        rw=write
        bs=8k
        size=256m
        end_fsync=1
        """)
    done = _sim("--level", "0", "--devices", "1", "--drive", "nearline-7200", "--fio", job, "--ram-gib", "1", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    cache = document["page_cache"]
    assert cache["written_back_bytes"] == 256 << 20
    assert cache["ram_bytes"] == 1 << 30
    assert 0 < cache["peak_dirty_bytes"] <= 256 << 20
    assert document["jobs"][0]["sync"]["total_ios"] == 1
    member = document["disk_util"][0]
    assert member["write_ios"] > 0
    table = _sim("--level", "0", "--devices", "1", "--drive", "nearline-7200", "--fio", job, "--ram-gib", "1")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].endswith(", buffered, fsync at end, over 256 MiB | page cache 1 GiB")
    assert "page cache 1 GiB: read hit ratio" in table.stdout


def test_o_direct_runs_say_direct_and_have_no_page_cache(tmp_path):
    job = _job(tmp_path, """\
        [w]
        rw=write
        bs=8k
        size=16m
        direct=1
        """)
    done = _sim("--level", "0", "--devices", "1", "--drive", "nvme-tlc", "--fio", job)
    assert done.returncode == 0, done.stderr
    title = done.stdout.splitlines()[0]
    assert title.endswith(", direct, over 16 MiB") and title.count("direct") == 1 and "page cache" not in title
    document = json.loads(_sim("--level", "0", "--devices", "1", "--drive", "nvme-tlc", "--fio", job, "--json").stdout)
    assert "page_cache" not in document


def test_a_warm_file_is_read_from_memory_and_a_cold_one_from_the_array(tmp_path):
    reads = {}
    for invalidate in (0, 1):
        job = _job(tmp_path, f"""\
            [r]
            rw=read
            bs=64k
            size=64m
            invalidate={invalidate}
            """)
        done = _sim("--level", "0", "--devices", "1", "--drive", "nvme-tlc", "--fio", job, "--json")
        assert done.returncode == 0, done.stderr
        reads[invalidate] = json.loads(done.stdout)["page_cache"]
    assert reads[0]["read_from_array_bytes"] == 0 and reads[0]["hit_ratio"] == 1.0
    assert reads[1]["read_from_array_bytes"] >= 64 << 20


def test_page_cache_options_are_validated_with_one_line_errors():
    for args, fragment in [(["--ram-gib", "0"], "--ram-gib"), (["--dirty-ratio", "101"], "--dirty-ratio"),
                           (["--dirty-writeback-centisecs", "0"], "--dirty-writeback-centisecs"),
                           (["--read-ahead-kb", "-4"], "--read-ahead-kb")]:
        done = _sim("--preset", "wal", "--runtime-s", "0.01", *args)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("raidlab: error: ") and fragment in lines[0], done.stderr


def test_dd_write_fdatasync_preset_streams_at_the_drive_rate_and_bonnie_is_sized_by_ram():
    done = _sim("--level", "0", "--devices", "1", "--drive", "nearline-7200", "--preset", "bonnie-seq",
                "--ram-gib", "0.25", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    write = document["jobs"][0]["write"]
    assert write["io_bytes"] == 512 << 20  # twice RAM
    assert document["page_cache"]["written_back_bytes"] == 512 << 20
    # A long buffered write settles at the drive's rate (nearline-7200 streams ~240 MB/s), not
    # at memory speed: the job's time includes the final fsync.
    assert 150e6 < write["bw_bytes"] < 300e6
