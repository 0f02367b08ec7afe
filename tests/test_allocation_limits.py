"""User numbers that size allocations (the layout map, outstanding host I/Os, jobs, the run's
time bound) are bounded by the core's limits and refused fast, in one line."""

from __future__ import annotations

import pytest

from conftest import run_process


# --- user numbers that size allocations are bounded, with a fast one-line error -----------------

def _fast_one_line(args, fragment, seconds=10.0):
    import time
    start = time.monotonic()
    run = run_process(args)
    elapsed = time.monotonic() - start
    assert run.status == 2, run.stderr
    assert len(run.stderr_lines) == 1 and run.stderr_lines[0].startswith("raidlab: error: "), run.stderr
    assert fragment in run.stderr, run.stderr
    assert elapsed < seconds, f"took {elapsed:.1f} s"
    assert run.stdout == ""


def test_layout_json_of_a_huge_map_is_refused_naming_the_limit():
    _fast_one_line(["layout", "--json", "--level", "0", "--devices", "64", "--member-kib", "1073741824"],
                   "the full chunk map has 134217728 cells (64 members, up to 2097152 chunks each), "
                   "more than the limit of 2097152; draw the first rows as text (layout --rows N")


def test_layout_rows_past_the_limit_is_refused():
    _fast_one_line(["layout", "--level", "0", "--devices", "64", "--member-kib", "1073741824",
                    "--rows", "100000000"], "more than the limit of 2097152: ask for fewer rows")


def test_layout_json_below_the_limit_still_prints_the_map():
    run = run_process(["layout", "--json", "--level", "5", "--devices", "4", "--member-kib", "8192"])
    assert run.status == 0
    assert [len(column) for column in run.json()["map"]] == [16] * 4


@pytest.mark.parametrize("job, fragment", [
    ("numjobs=4096\niodepth=65536\n", "up to 268435456 host I/Os outstanding (numjobs × iodepth summed over "
                                      "its jobs), more than the limit of 1048576"),
    ("numjobs=2048\niodepth=1024\n", "up to 2097152 host I/Os outstanding"),
])
def test_outstanding_host_ios_are_capped(tmp_path, job, fragment):
    path = tmp_path / "big.fio"
    path.write_text(f"[big]\nrw=randread\nbs=4k\ndirect=1\nioengine=libaio\nruntime=1\ntime_based=1\n{job}")
    _fast_one_line(["sim", "--fio", str(path)], fragment)


def test_too_many_jobs_are_refused(tmp_path):
    path = tmp_path / "many.fio"
    path.write_text("[global]\nrw=randread\nbs=4k\nruntime=1\n" + "".join(f"[j{i}]\n" for i in range(1025)))
    _fast_one_line(["sim", "--fio", str(path)], "the workload has 1025 jobs, more than the limit of 1024")


def test_max_time_is_capped_at_the_cores_limit():
    _fast_one_line(["sim", "--preset", "wal", "--max-time-s", "1e7"], "0.001<=x<=1000000")


def test_the_python_bounds_are_the_cores():
    from raidlab import _core
    from raidlab.workload import spec
    assert (spec.MAX_JOBS, spec.MAX_THREADS_TOTAL, spec.MAX_OUTSTANDING_IOS) == (
        _core.MAX_JOBS, _core.MAX_THREADS_TOTAL, _core.MAX_OUTSTANDING_IOS) == (1024, 65536, 1 << 20)
