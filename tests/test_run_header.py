"""The run's header line: each fact once, and only facts that apply to the drive."""

from __future__ import annotations

from conftest import run_cli


def _title(*args: str) -> str:
    run = run_cli(["sim", "--level", "5", "--devices", "4", *args])
    assert run.status == 0, run.stderr
    return run.stdout.splitlines()[0] if not run.stdout.startswith("sysbench") else run.stdout


def test_a_cloud_volume_is_not_said_to_have_a_drive_write_cache():
    title = _title("--drive", "ebs-gp3", "--preset", "oltp-innodb", "--runtime-s", "0.2")
    assert "| volume drive: no write cache setting |" in title
    assert "drive's default" not in title


def test_an_hdd_keeps_its_write_cache_clause():
    title = _title("--drive", "cheetah-10k7", "--preset", "oltp-innodb", "--runtime-s", "0.2")
    assert "| drive write cache: the drive's default |" in title


def test_a_sysbench_run_says_direct_once():
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", "null", "--sysbench",
                   "--file-test-mode=rndrd --file-extra-flags=direct --max-requests=200"])
    assert run.status == 0, run.stderr
    header = next(line for line in run.stdout.splitlines() if " | " in line)
    assert header.count("direct") == 1, header


def test_a_latency_under_ten_microseconds_is_not_shown_as_zero():
    # Buffered writes acknowledged by the page cache take a few µs: "0.00" ms read as no time.
    from raidlab.report.table import _ms_value

    assert _ms_value(0.002638) == "0.0026" and _ms_value(0.0) == "0.00" and _ms_value(12.345) == "12.35"
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", "x25e-slc", "--runtime-s", "0.5",
                   "--sysbench", "--file-test-mode=rndrw --file-total-size=4G --threads=16"])
    assert run.status == 0, run.stderr
    write = next(line for line in run.stdout.splitlines() if line.startswith("sysbench-rndrw  write"))
    assert " 0.00 " not in write + " ", write
