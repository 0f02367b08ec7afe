"""fio options whose value is one of a list (verify, clocksource, fallocate, ...) refuse any
other value in fio's words, whether or not the option shapes the simulated I/O."""

from __future__ import annotations

import pytest

from raidlab.errors import WorkloadError
from raidlab.workload import parse_fio

from conftest import refused, run_cli


# ---- fio's enumerated options ----

@pytest.mark.parametrize("option, valid", [
    ("verify=bogus", "0, md5, crc64"),
    ("verify=none", "0, md5, crc64"),
    ("clocksource=bogus", "gettimeofday, clock_gettime, cpu"),
    ("random_generator=lfsr2", "tausworthe, lfsr, tausworthe64"),
    ("fallocate=maybe", "none, native, posix"),
    ("continue_on_error=sometimes", "none, read, write"),
    ("mem=heap", "malloc, shm"),
    ("lockfile=shared", "none, exclusive, readwrite"),
    ("exit_what=some", "group, stonewall, all"),
    ("rw_sequencer=backwards", "sequential, identical"),
    ("io_submit_mode=later", "inline, offload"),
])
def test_fio_refuses_a_value_outside_an_enumerated_options_list(option, valid):
    name, _, value = option.partition("=")
    job = f"[j]\nrw=randwrite\nbs=4k\nsize=1m\n{option}\n"
    with pytest.raises(WorkloadError, match=f"failed parsing {name}={value}") as error:
        parse_fio(job)
    assert f"valid values: {valid}" in str(error.value)


def test_fio_accepts_enumerated_values_with_a_suffix_as_fio_does(tmp_path):
    workload = parse_fio("[j]\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c-intel\nlockfile=exclusive:4\n"
                         "clocksource=cpu\n")
    assert workload.jobs[0].name == "j"
    path = tmp_path / "bogus.fio"
    path.write_text("[j]\nrw=randwrite\nbs=4k\nsize=1m\nverify=bogus\n")
    refused(run_cli(["sim", "--fio", str(path)]), "failed parsing verify=bogus")
