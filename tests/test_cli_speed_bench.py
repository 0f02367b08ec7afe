"""bench/cli_speed.py times the user's own command: ``raidlab sim`` as a process, in the benchmark's
run's two spellings, counting host reads and writes (fsyncs apart). Run here scaled down to a
few hundred I/Os, once: this checks what it runs and counts, never how fast."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO_ROOT

BENCH = REPO_ROOT / "bench" / "cli_speed.py"
ARRAY = "sim --level 5 --devices 6 --drive cheetah-10k7 --chunk-kib 64"


def run_bench(*args: str) -> str:
    done = subprocess.run([sys.executable, str(BENCH), "--python", sys.executable, "--runs", "1",
                           "--requests", "256", *args],
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def test_cli_speed_runs_raidlab_sim_on_the_fio_job_and_counts_its_reads_and_writes():
    out = run_bench("--form", "fio")
    command = re.search(r"^fio: (.*)$", out, re.M).group(1)
    assert command.startswith(f"{sys.executable} -m raidlab {ARRAY} --fio ")
    counted = re.search(r"(\d+) reads \+ (\d+) writes = (\d+) host I/Os \(\+ (\d+) fsyncs\)", out)
    reads, writes, host, fsyncs = map(int, counted.groups())
    # 128 jobs of number_ios=2 (256 requests rounded up to whole jobs), no fsyncs
    assert (reads + writes, host, fsyncs) == (256, 256, 0)
    assert 0.5 < reads / host < 0.7  # rwmixread=60
    rate = re.search(r"runs: ([\d.]+) s = ([\d,.]+) K/s", out)
    assert abs(256 / float(rate.group(1)) / 1e3 - float(rate.group(2).replace(",", ""))) < 0.1
    assert re.search(r"host I/O/s: median [\d,.]+ K, range [\d,.]+-[\d,.]+ K", out)


def test_cli_speed_runs_the_sysbench_spelling_with_its_fsync_rounds_counted_apart():
    out = run_bench("--form", "sysbench")
    command = re.search(r"^sysbench: (.*)$", out, re.M).group(1)
    assert command == (f"{sys.executable} -m raidlab {ARRAY} --sysbench '--file-test-mode=rndrw "
                       "--num-threads=128 --file-block-size=16384 --file-total-size=32G "
                       "--max-requests=256 --file-extra-flags=direct'")
    counted = re.search(r"(\d+) reads \+ (\d+) writes = (\d+) host I/Os \(\+ (\d+) fsyncs\)", out)
    reads, writes, host, fsyncs = map(int, counted.groups())
    assert (reads + writes, host) == (256, 256)
    # sysbench 0.4 fsyncs all 128 files after each 100 requests: rounds at 100 and 200 at least
    assert fsyncs >= 2 * 128
    assert "load average before:" in out and "load average after:" in out
