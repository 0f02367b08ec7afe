"""md raid5d's CPU options of ``sim``: --group-thread-cnt, --skip-copy,
--preread-bypass-threshold, declared once in raidlab.run and validated with one-line errors."""

import subprocess
import sys
import textwrap


def _sim(*args, tmp_path=None):
    return subprocess.run([sys.executable, "-m", "raidlab", "sim", *args], capture_output=True, text=True,
                          timeout=300)


def _job(tmp_path):
    job = tmp_path / "seqw.fio"
    job.write_text(textwrap.dedent("""\
        [seqw]
        ioengine=libaio
        direct=1
        rw=write
        bs=1M
        iodepth=32
        runtime=30ms
        time_based=1
        size=4G
        """))
    return str(job)


def test_out_of_range_values_are_one_line_errors():
    cases = [
        (["--group-thread-cnt", "8193"], "--group-thread-cnt"),
        (["--preread-bypass-threshold", "-1"], "--preread-bypass-threshold"),
        (["--stripe-cache-size", "64", "--preread-bypass-threshold", "65"], "preread_bypass_threshold must be 0 to stripe_cache_size (64"),
    ]
    for args, fragment in cases:
        done = _sim("--preset", "wal", "--runtime-s", "0.01", *args)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("raidlab: error: ") and fragment in lines[0], done.stderr


def _mib_s(done):
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("seqw"))
    return float(row.split()[3])


def test_worker_threads_and_skip_copy_raise_raid5d_s_ceiling_on_nvme(tmp_path):
    job = _job(tmp_path)
    base = ["--level", "5", "--devices", "6", "--drive", "nvme-tlc", "--stripe-cache-size", "4096", "--fio", job]
    alone = _mib_s(_sim(*base))
    workers = _mib_s(_sim(*base, "--group-thread-cnt", "4"))
    no_copy = _mib_s(_sim(*base, "--skip-copy"))
    assert workers > 3 * alone, (alone, workers)
    assert no_copy > 1.2 * alone, (alone, no_copy)
