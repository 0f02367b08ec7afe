"""fio's own example job files (tests/data/fio-examples, copied from axboe/fio) in `raidlab sim`.

What must hold: of the examples fio accepts (``fio --parse-only``) that use a block or
file I/O engine, at least 90 % run; the rest are refused in one line saying what is not
modelled; every other example is refused in one line with exit status 2. Each run is bounded
(``--runtime-s`` caps every job, a null drive answers in 1 µs), so the whole file stays fast.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from raidlab.workload.fio_options import ENGINE_MAP

EXAMPLES = Path(__file__).resolve().parent / "data" / "fio-examples"
#: Examples fio accepts and raidlab refuses, with the words the one line must carry.
EXPECTED_REFUSALS = {
    "enospc-pressure.fio": "rw=randtrim: discard (trim) to the members is not modelled",
    "zbd-rand-write-trim-gc.fio": "rw=randtrim: discard (trim) to the members is not modelled",
}


def manifest():
    rows = {}
    for line in (EXAMPLES / "MANIFEST.tsv").read_text().splitlines():
        if line.startswith("#"):
            continue
        name, accepted, engines = line.split("\t")
        rows[name] = (accepted == "yes", [] if engines == "-" else engines.split(","))
    return rows


def block_engine_example(name: str) -> bool:
    accepted, engines = manifest()[name]
    return accepted and all(engine in ENGINE_MAP for engine in engines)


def simulate(name: str):
    return run_cli(["sim", "--drive", "null", "--level", "5", "--devices", "8", "--fio", str(EXAMPLES / name),
                    "--runtime-s", "0.02", "--max-time-s", "200", "--json"])


def test_the_manifest_lists_every_example_and_fio_agrees_with_it():
    names = sorted(p.name for p in EXAMPLES.glob("*.fio"))
    assert sorted(manifest()) == names and len(names) == 107
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed (make deps installs it); the manifest was recorded with fio-3.33")
    for name in names:
        done = subprocess.run(["fio", "--parse-only", name], cwd=EXAMPLES, capture_output=True, timeout=30)
        assert (done.returncode == 0) == manifest()[name][0], name


def test_at_least_90_percent_of_the_block_engine_examples_run_and_the_rest_say_why():
    block = [name for name in sorted(manifest()) if block_engine_example(name)]
    assert len(block) == 43
    ran, refused = [], {}
    for name in block:
        run = simulate(name)
        if run.status == 0:
            document = run.json()
            assert document["jobs"], name
            moved = any(job["read"]["total_ios"] + job["write"]["total_ios"] for job in document["jobs"])
            # The Poisson 50 IOPS job's first arrival (exponential, mean 20 ms) falls after the
            # 20 ms here (a linear rate, like 1mbs_clients' 1250 B/s, issues its first I/O at once).
            assert moved == (name != "poisson-rate-submission.fio"), name
            ran.append(name)
        else:
            assert run.status == 2 and len(run.stderr_lines) == 1 or all(
                line.startswith("raidlab: note:") for line in run.stderr_lines[:-1]), (name, run.stderr)
            refused[name] = run.stderr_lines[-1]
    assert len(ran) / len(block) >= 0.9, refused
    assert sorted(refused) == sorted(EXPECTED_REFUSALS)
    for name, line in refused.items():
        assert line.startswith("raidlab: error: ") and EXPECTED_REFUSALS[name] in line, line


def test_every_other_example_is_refused_in_one_line_with_exit_status_2():
    others = [name for name in sorted(manifest()) if not block_engine_example(name)]
    assert len(others) == 64
    for name in others:
        run = simulate(name)
        assert run.status == 2, name
        assert len(run.stderr_lines) == 1 and run.stderr_lines[0].startswith("raidlab: error: "), (name, run.stderr)
        assert run.stdout == ""


def test_a_network_engine_is_refused_naming_why():
    run = simulate("netio.fio")
    assert "ioengine=net talks to a network service, not to a local block device" in run.stderr
    run = simulate("rbd.fio")
    assert "ioengine=rbd talks to an object store, not to a block device" in run.stderr
