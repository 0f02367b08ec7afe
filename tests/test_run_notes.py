"""What a run does that the user did not ask for (clipped jobs, bounded or cut runtimes, the parser's
notes) is said on stderr and recorded in the JSON; a plain run has no notes."""

from __future__ import annotations

from conftest import run_cli

NULL_DESIGN = ["--level", "5", "--devices", "4", "--drive", "null"]


def _notes(stderr: str):
    return [line for line in stderr.splitlines() if line.startswith("raidlab: note: ")]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# --- notes: said on stderr and recorded in the JSON --------------------------------------


PSYNC_JOB = "[j]\nrw=randread\nioengine=psync\niodepth=32\nruntime=1\n"


def test_sim_says_the_parsers_notes(tmp_path):
    job = _write(tmp_path, "j.fio", PSYNC_JOB)
    run = run_cli(["sim", *NULL_DESIGN, "--fio", job, "--runtime-s", "0.02", "--json"])
    assert run.status == 0, run.stderr
    note = "j: iodepth=32 is capped at 1 by the psync engine; use ioengine=libaio or io_uring for a deeper queue"
    assert _notes(run.stderr) == [f"raidlab: note: {note}"]
    assert run.json()["raidlab"]["notes"] == [note]


def test_a_job_larger_than_the_array_is_said_to_be_clipped(tmp_path):
    small = _write(tmp_path, "small.toml", 'kind = "ssd"\ncapacity_bytes = 1e9\n')
    job = _write(tmp_path, "big.fio", "[big]\nrw=randread\nioengine=libaio\ndirect=1\niodepth=4\n"
                                      "runtime=1\nsize=10g\n")
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", small, "--fio", job,
                   "--runtime-s", "0.05", "--json"])
    assert run.status == 0, run.stderr
    # the array as simulated: md's members less mdadm's data offset
    note = ("job 'big': size 10 GiB is larger than the array (2993160192 bytes, 2.79 GiB); the "
            "simulator clips the job's region to the array's end, so it covers 2.79 GiB")
    assert run.json()["raidlab"]["notes"] == [note]
    assert _notes(run.stderr) == [f"raidlab: note: {note}"]


def test_a_job_with_no_size_and_no_runtime_is_said_to_stop_at_the_bound(tmp_path):
    job = _write(tmp_path, "open.fio", "[open]\nrw=randread\nioengine=libaio\ndirect=1\niodepth=4\n")
    run = run_cli(["sim", *NULL_DESIGN, "--fio", job, "--max-time-s", "0.05", "--json"])
    assert run.status == 0, run.stderr
    assert run.json()["raidlab"]["simulated_ns"] == 50_000_000
    note = ("the workload has no runtime and was still running when the run stopped at the 0.05 s "
            "bound on simulated time (--max-time-s); job(s) 'open' have no size and no runtime, so "
            "each would cover the whole array")
    assert run.json()["raidlab"]["notes"] == [note]
    assert _notes(run.stderr) == [f"raidlab: note: {note}"]


def test_a_runtime_beyond_the_bound_is_said_to_be_cut(tmp_path):
    # One I/O per second, so the default 3600 s bound is cheap to reach.
    job = _write(tmp_path, "slow.fio", "[slow]\nrw=randread\nrate_iops=1\nruntime=10\n")
    run = run_cli(["sim", *NULL_DESIGN, "--fio", job, "--runtime-s", "1e6", "--json"])
    assert run.status == 0, run.stderr
    doc = run.json()
    assert doc["raidlab"]["simulated_ns"] == 3600 * 10**9
    note = ("the workload runs for 1000000 s but simulated time is bounded at 3600 s "
            "(--max-time-s): the run stops at 3600 s")
    assert doc["raidlab"]["notes"] == [note]
    assert _notes(run.stderr) == [f"raidlab: note: {note}"]


def test_a_plain_run_has_no_notes():
    run = run_cli(["sim", *NULL_DESIGN, "--preset", "wal", "--runtime-s", "0.02", "--json"])
    assert run.status == 0 and run.stderr == ""
    assert run.json()["raidlab"]["notes"] == []


def test_compare_says_the_same_notes(tmp_path):
    job = _write(tmp_path, "j.fio", PSYNC_JOB)
    designs = _write(tmp_path, "d.toml", '[[design]]\nname = "r5"\nlevel = 5\ndevices = 4\ndrive = "null"\n')
    run = run_cli(["compare", "--designs", designs, "--fio", job, "--runtime-s", "0.02",
                   "--states", "optimal,degraded", "--json", "-"])
    assert run.status == 0, run.stderr
    note = "j: iodepth=32 is capped at 1 by the psync engine; use ioengine=libaio or io_uring for a deeper queue"
    assert _notes(run.stderr) == [f"raidlab: note: r5 · randread: {note}"]
    assert [r["document"]["raidlab"]["notes"] for r in run.json()["runs"]] == [[note], [note]]
