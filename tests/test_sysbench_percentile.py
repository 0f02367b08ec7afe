"""sysbench --percentile: the text shows the percentile asked for (not always the 95th), 0
turns it off, and out-of-range values are refused as sysbench 1.0 and 0.4 refuse them."""

from __future__ import annotations

import pytest

from raidlab.errors import WorkloadError
from raidlab.workload import parse_sysbench

from conftest import refused, run_cli


# ---- sysbench --percentile ----

SYSBENCH = "--file-test-mode=rndrd --file-total-size=64M --time=2 --report-interval=1"


def _sysbench_text(percentile_option: str) -> str:
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--sysbench", f"{SYSBENCH} {percentile_option}"])
    assert run.status == 0, run.stderr
    return run.stdout


def test_sysbench_prints_the_percentile_it_was_asked_for():
    text = _sysbench_text("--percentile=99")
    assert "         99th percentile:" in text and "95th percentile" not in text
    assert "latency (ms,99%):" in text and "latency (ms,95%)" not in text
    # The 99th is not the 95th: the figures differ for random reads on disks.
    p99 = float(text.split("99th percentile:")[1].split()[0])
    p95 = float(_sysbench_text("").split("95th percentile:")[1].split()[0])
    assert p99 > p95


def test_sysbench_prints_a_percentile_off_fios_list():
    text = _sysbench_text("--percentile=42")
    assert "         42th percentile:" in text and "latency (ms,42%):" in text


def test_sysbench_percentile_zero_disables_it_as_sysbench_does():
    text = _sysbench_text("--percentile=0")
    assert "         percentile stats:               disabled" in text
    assert "th percentile" not in text


@pytest.mark.parametrize("value", ["101", "-5"])
def test_sysbench_refuses_a_percentile_out_of_range(value):
    run = run_cli(["sim", "--sysbench", f"{SYSBENCH} --percentile={value}"])
    refused(run, f"Invalid value for --percentile: {value}")
    with pytest.raises(WorkloadError, match="Invalid value for --percentile"):
        parse_sysbench(f"{SYSBENCH} --percentile={value}")


def test_sysbench_0_4_refuses_percentile_zero():
    with pytest.raises(WorkloadError, match="Invalid value for percentile option: 0"):
        parse_sysbench("--test=fileio --file-test-mode=rndrd --percentile=0")


def test_sysbench_refuses_histogram_with_percentile_zero():
    with pytest.raises(WorkloadError, match="--histogram cannot be used with --percentile=0"):
        parse_sysbench(f"{SYSBENCH} --percentile=0 --histogram=on")
