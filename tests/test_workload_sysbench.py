"""sysbench fileio options → workload spec (sysbench 1.0.20 semantics, 0.4 spellings too)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raidlab.workload import Workload, WorkloadError, parse_sysbench
from raidlab.workload.sysbench import IGNORED_OPTIONS, SUPPORTED_OPTIONS

MiB, GiB = 1024**2, 1024**3
SECOND = 10**9


def job_of(text):
    workload = parse_sysbench(text)
    assert len(workload.jobs) == 1
    return workload.jobs[0]


def error_of(text) -> str:
    with pytest.raises(WorkloadError) as caught:
        parse_sysbench(text)
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message, message
    assert message
    return message


def test_rw_ratio_is_a_ratio_not_a_percentage():
    # (reads+1)/(writes+1) < ratio decides each request, so reads settle at r/(1+r) (sysbench's fileio request loop).
    assert job_of("--file-test-mode=rndrw --file-rw-ratio=1.5").read_fraction == 0.6
    assert job_of("--file-test-mode=rndrw").read_fraction == 0.6  # 1.5 is the default
    assert job_of("--file-test-mode=rndrw --file-rw-ratio=1").read_fraction == 0.5
    assert job_of("--file-test-mode=rndrw --file-rw-ratio=4").read_fraction == 0.8
    assert job_of("--file-test-mode=rndrw --file-rw-ratio=0").read_fraction == 0.0
    assert job_of("--file-test-mode=rndrw --file-rw-ratio=2.333").read_fraction == 2.333 / 3.333


def test_defaults_of_sysbench_1_0_20():
    job = job_of("--file-test-mode=rndrw")
    assert job.to_dict() == {
        "name": "sysbench-rndrw",
        "threads": 1,
        "iodepth": 1,
        "read_fraction": 0.6,
        "random_fraction": 1.0,
        "block_sizes": [[16384, 100]],
        "offset_bytes": 0,
        "size_bytes": 2 * GiB,
        "files": 128,
        "sequential_cursor": "shared",
        "distribution": {"kind": "uniform"},
        "rate_iops": 0,
        "arrival": "linear",
        "fsync_every": 100,
        "fsync_kind": "fsync",
        "fsync_scope": "all_files",
        "fsync_end": True,
        "runtime_ns": 10 * SECOND,
        "ramp_ns": 0,
        "time_based": True,
        "number_ios": 0,
        "total_ios": 0,
        "io_bytes": 0,
        "direct": False,
        "block_align_bytes": 16384,
        "invalidate": True,
    }


@pytest.mark.parametrize(
    "mode, read, random, fsync_every, fsync_end",
    [
        ("seqwr", 0.0, 0.0, 100, True),
        ("seqrewr", 0.0, 0.0, 100, True),
        ("seqrd", 1.0, 0.0, 0, False),  # read-only modes never sync
        ("rndrd", 1.0, 1.0, 0, False),
        ("rndwr", 0.0, 1.0, 100, True),
        ("rndrw", 0.6, 1.0, 100, True),
    ],
)
def test_test_modes(mode, read, random, fsync_every, fsync_end):
    job = job_of(f"--file-test-mode={mode}")
    assert (job.read_fraction, job.random_fraction) == (read, random)
    assert (job.fsync_every, job.fsync_end) == (fsync_every, fsync_end)
    assert job.sequential_cursor == "shared"
    assert job.name == f"sysbench-{mode}"


def test_old_and_new_spellings_give_the_same_spec():
    old = parse_sysbench(
        "sysbench --test=fileio --num-threads=16 --max-requests=5000 --max-time=60 "
        "--file-total-size=3G --file-test-mode=rndrw run"
    )
    new = parse_sysbench(
        "sysbench fileio --threads=16 --events=5000 --time=60 --file-total-size=3G --file-test-mode=rndrw run"
    )
    assert old.jobs == new.jobs
    assert old.to_dict()["jobs"] == new.to_dict()["jobs"]
    job = new.jobs[0]
    assert (job.threads, job.total_ios, job.runtime_ns, job.size_bytes) == (16, 5000, 60 * SECOND, 3 * GiB)
    assert "--num-threads, --max-requests, --max-time" in old.notes[0]
    assert new.notes == ()
    # underscores are dashes to sysbench (opt_name_cmp)
    assert parse_sysbench("--file_test_mode=rndrw --num_threads=16 --file_total_size=3G --max_time=60 --events=5000").jobs == new.jobs


@pytest.mark.parametrize(
    "options, threads, events, seconds",
    [
        ("--num-threads=1 --threads=8", 8, 0, 10),  # the alias only wins above its default
        ("--threads=8 --num-threads=4", 4, 0, 10),
        ("--max-time=0 --time=5", 1, 0, 5),
        ("--max-time=7 --time=5", 1, 0, 7),
        ("--max-requests=0 --events=9", 1, 9, 10),
        ("--max-requests=3 --events=9", 1, 3, 10),
        ("--time=0 --events=100", 1, 100, 0),
        ("--threads=2 --threads=3", 3, 0, 10),  # the last occurrence wins
    ],
)
def test_deprecated_aliases_follow_1_0_20(options, threads, events, seconds):
    job = job_of(f"--file-test-mode=rndrd {options}")
    assert (job.threads, job.total_ios, job.runtime_ns, job.time_based) == (threads, events, seconds * SECOND, seconds > 0)


def test_fsync_options():
    job = job_of("--file-test-mode=rndwr --file-fsync-all")
    assert (job.fsync_every, job.fsync_scope, job.fsync_end) == (1, "thread", False)  # fsync-all turns the others off
    job = job_of("--file-test-mode=rndwr --file-fsync-all=on --file-fsync-freq=7 --file-fsync-end=on")
    assert (job.fsync_every, job.fsync_scope, job.fsync_end) == (1, "thread", False)
    job = job_of("--file-test-mode=rndwr --file-fsync-all=off --file-fsync-freq=7")
    assert (job.fsync_every, job.fsync_scope, job.fsync_end) == (7, "all_files", True)
    job = job_of("--file-test-mode=seqwr --file-fsync-freq=0 --file-fsync-end=off")
    assert (job.fsync_every, job.fsync_end) == (0, False)
    for false in ("off", "false", "0"):
        assert job_of(f"--file-test-mode=rndwr --file-fsync-end={false}").fsync_end is False
    for true in ("on", "true", "1"):
        assert job_of(f"--file-test-mode=rndwr --file-fsync-end={true}").fsync_end is True
    assert job_of("--file-test-mode=rndwr --file-fsync-mode=fdatasync").fsync_kind == "fdatasync"
    assert job_of("--file-test-mode=rndwr --file-fsync-mode=fsync").fsync_kind == "fsync"


def test_io_modes_and_flags():
    assert job_of("--file-test-mode=rndrd --file-io-mode=async").iodepth == 128
    workload = parse_sysbench("--file-test-mode=rndrd --file-io-mode=async --file-async-backlog=32")
    assert workload.jobs[0].iodepth == 32
    assert "event latency is mostly submission time" in workload.notes[0]
    assert job_of("--file-test-mode=rndrd --file-async-backlog=32").iodepth == 1  # only for async
    assert job_of("--file-test-mode=rndrd --file-io-mode=sync").iodepth == 1
    assert job_of("--file-test-mode=rndrd --file-extra-flags=direct").direct is True
    assert job_of("--file-test-mode=rndrd --file-extra-flags=direct,").direct is True
    assert job_of("--file-test-mode=rndrd").direct is False


@pytest.mark.parametrize(
    "options, files, total, block",
    [
        ("--file-total-size=64M --file-num=4 --file-block-size=4K", 4, 64 * MiB, 4096),
        ("--file-total-size=2g --file-num=1", 1, 2 * GiB, 16384),
        ("--file-total-size=2GB", 128, 2 * GiB, 16384),
        ("--file-total-size=2048M", 128, 2 * GiB, 16384),
        ("--file-total-size=1T --file-num=64", 64, 1024 * GiB, 16384),
        ("--file-block-size=16KiB", 128, 2 * GiB, 16384),
        ("--file-block-size=1m --file-num=16", 16, 2 * GiB, MiB),
        ("--file-total-size=1536M --file-num=3", 3, 1536 * MiB, 16384),
    ],
)
def test_sizes(options, files, total, block):
    workload = parse_sysbench(f"--file-test-mode=rndrd {options}")
    job = workload.jobs[0]
    per_file = job.size_bytes // job.files
    assert (job.files, job.block_sizes, job.block_align_bytes) == (files, ((block, 100),), block)
    assert job.size_bytes == per_file * files == total
    assert workload.notes == ()


def test_total_size_not_divisible_by_file_count_drops_the_tail():
    # file size = total / num in integer division (sb_fileio.c); the tail belongs to no file.
    workload = parse_sysbench("--file-test-mode=rndrd --file-total-size=1048577 --file-num=2")
    job = workload.jobs[0]
    assert (job.files, job.size_bytes) == (2, 1048576)
    assert workload.notes == (
        "--file-total-size is not a multiple of --file-num: each file is 524288 bytes and the last 1 bytes are left out",
    )


def test_merged_requests_only_change_sequential_modes():
    assert job_of("--file-test-mode=seqrd --file-merged-requests=4").block_sizes == ((65536, 100),)
    assert job_of("--file-test-mode=seqrd --file-merged-requests=4").block_align_bytes == 16384
    assert job_of("--file-test-mode=rndrd --file-merged-requests=4").block_sizes == ((16384, 100),)


def test_forms_of_the_command_line():
    plain = parse_sysbench("--file-test-mode=rndrw --threads=4").jobs
    for text in (
        "sysbench fileio --file-test-mode=rndrw --threads=4 run",
        "/usr/bin/sysbench fileio --file-test-mode=rndrw --threads=4 run",
        "sysbench --test=fileio --file-test-mode=rndrw --threads=4 run",
        "fileio --file-test-mode=rndrw --threads=4",
        "--file-test-mode=rndrw --threads=4 run",
        "sysbench fileio \\\n  --file-test-mode=rndrw \\\n  --threads=4 \\\n  run",
        "sysbench fileio --file-test-mode='rndrw' --threads=\"4\" run",
        b"--file-test-mode=rndrw --threads=4",
        ["--file-test-mode=rndrw", "--threads=4"],
        ("sysbench", "fileio", "--file-test-mode=rndrw", "--threads=4", "run"),
    ):
        assert parse_sysbench(text).jobs == plain, text
    workload = parse_sysbench(["--file-test-mode=rndrw", "--threads=4"])
    assert workload.to_dict()["source"] == {"tool": "sysbench", "text": "--file-test-mode=rndrw --threads=4"}


def test_ignored_options_change_nothing():
    plain = parse_sysbench("--file-test-mode=rndrw").jobs
    noisy = (
        "--file-test-mode=rndrw --report-interval=1 --percentile=99 --histogram --histogram=off "
        "--verbosity=5 --debug=on --validate=off --forced-shutdown=off --thread-stack-size=64K "
        "--rand-type=pareto --rand-seed=42 --rand-spec-iter=12 --rand-spec-pct=1 --rand-spec-res=75 "
        "--rand-pareto-h=0.2 --rand-init=on --init-rng=on --report-checkpoints=10,20"
    )
    assert parse_sysbench(noisy).jobs == plain
    assert set(IGNORED_OPTIONS) & set(SUPPORTED_OPTIONS) == set()


def test_warmup_time_is_a_ramp():
    job = job_of("--file-test-mode=rndrw --warmup-time=5 --time=60")
    assert (job.ramp_ns, job.runtime_ns) == (5 * SECOND, 60 * SECOND)


def test_describe():
    assert parse_sysbench("--file-test-mode=rndrw --threads=16 --file-extra-flags=direct").describe() == (
        "randrw 60/40, 16 KiB, 16 threads × QD1, direct, 128 files, fsync of all files every 100 requests, "
        "fsync at end, over 2 GiB, for 10 s"
    )
    assert parse_sysbench("--file-test-mode=seqrd --threads=4 --file-num=8 --time=0 --events=1000").describe() == (
        "read, 16 KiB, 4 threads × QD1, buffered, 8 files, one shared sequential cursor, over 2 GiB, "
        "1000 events in total"
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "sysbench options are empty (expected e.g. --file-test-mode=rndrw)"),
        ("sysbench", "sysbench options are empty (expected e.g. --file-test-mode=rndrw)"),
        ("--threads=4", "Missing required argument: --file-test-mode (one of seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw)"),
        ("--file-test-mode=rndxx", "Invalid IO operations mode: rndxx (expected one of seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw)"),
        ("--file-test-mode=rndrw --foo=1", None),
        ("--file-test-mode=rndrw --threads 16", "--threads needs a value (--threads=N)"),
        ("--file-test-mode=rndrw --threads=", "--threads needs a value (--threads=N)"),
        ("--file-test-mode=rndrw -t 16", "sysbench option '-t' must start with -- (e.g. --threads=16)"),
        ("--file-test-mode=rndrw --threads=abc", "Invalid value for the 'threads' option: 'abc' (not an integer)"),
        ("--file-test-mode=rndrw --threads=1.5", "Invalid value for the 'threads' option: '1.5' (not an integer)"),
        ("--file-test-mode=rndrw --threads=99999999999", "Invalid value for the 'threads' option: '99999999999' (out of range)"),
        ("--file-test-mode=rndrw --threads=0", "Invalid value for --threads: 0."),
        ("--file-test-mode=rndrw --threads=-2", "Invalid value for --threads: -2."),
        ("--file-test-mode=rndrw --threads=5000", "sysbench job 'sysbench-rndrw': threads=5000 must be at most 4096"),
        ("--file-test-mode=rndrw --events=-1", "Invalid value for --events: -1."),
        ("--file-test-mode=rndrw --time=0", "both --time and --events are 0, so sysbench would run an endless test; set one of them"),
        ("--file-test-mode=rndrw --max-time=0 --time=0", "both --time and --events are 0, so sysbench would run an endless test; set one of them"),
        ("--file-test-mode=rndrw --time=10s", "Invalid value for the 'time' option: '10s' (not an integer)"),
        ("--file-test-mode=rndrw --warmup-time=-1", "Invalid value for --warmup-time: -1."),
        ("--file-test-mode=rndrw --rate=100", "--rate (open-loop events through one queue shared by all threads) is not modelled; drop it for a closed-loop run"),
        ("--file-test-mode=rndrw --tx-rate=100", "--rate (open-loop events through one queue shared by all threads) is not modelled; drop it for a closed-loop run"),
        ("--file-test-mode=rndrw --file-num=0", "Invalid value for file-num: 0"),
        ("--file-test-mode=rndrw --file-total-size=0", "Invalid value for file-total-size: 0"),
        ("--file-test-mode=rndrw --file-total-size=2X", "--file-total-size=2X is not a size (sysbench takes digits with an optional K, M, G or T, e.g. 16K, 2G)"),
        ("--file-test-mode=rndrw --file-total-size=1.5G", "--file-total-size=1.5G is not a size (sysbench takes digits with an optional K, M, G or T, e.g. 16K, 2G)"),
        ("--file-test-mode=rndrw --file-block-size=0", "Invalid value for file-block-size: 0."),
        ("--file-test-mode=rndrw --file-block-size=1000", "--file-block-size=1000 is not a multiple of 512"),
        ("--file-test-mode=rndrw --file-block-size=32M --file-total-size=1G", "--file-block-size=32 MiB is larger than each file (8 MiB)"),
        ("--file-test-mode=rndrw --file-total-size=1000M --file-num=3", "each file would be 349525333 bytes (--file-total-size / --file-num), not a multiple of 512"),
        ("--file-test-mode=rndrw --file-total-size=100 --file-num=128", "--file-total-size=100 B leaves nothing for each of 128 files"),
        ("--file-test-mode=rndrw --file-merged-requests=-1", "Invalid value for file-merged-requests: -1."),
        ("--file-test-mode=rndrw --file-fsync-freq=-1", "Invalid value for file-fsync-freq: -1."),
        ("--file-test-mode=rndrw --file-fsync-all=maybe", "invalid value for --file-fsync-all: 'maybe' (use on or off)"),
        ("--file-test-mode=rndrw --file-fsync-mode=fsyncall", "Invalid fsync mode: fsyncall. (expected fsync or fdatasync)"),
        ("--file-test-mode=rndrw --file-rw-ratio=-1", "Invalid value for --file-rw-ratio: '-1' (not a non-negative number)"),
        ("--file-test-mode=rndrw --file-rw-ratio=inf", "Invalid value for --file-rw-ratio: 'inf' (not a non-negative number)"),
        ("--file-test-mode=rndrw --file-rw-ratio=1e999", "Invalid value for --file-rw-ratio: '1e999' (not finite)"),
        ("--file-test-mode=rndrw --file-io-mode=mmap", "--file-io-mode=mmap (copies through a memory mapping, msync instead of fsync) is not modelled; use sync or async"),
        ("--file-test-mode=rndrw --file-io-mode=fastmmap", "--file-io-mode=fastmmap (copies through a memory mapping, msync instead of fsync) is not modelled; use sync or async"),
        ("--file-test-mode=rndrw --file-io-mode=turbo", "unknown I/O mode: turbo (expected sync or async)"),
        ("--file-test-mode=rndrw --file-io-mode=async --file-async-backlog=0", "Invalid value for file-async-backlog: 0"),
        ("--file-test-mode=rndrw --file-io-mode=async --file-async-backlog=100000", "--file-async-backlog=100000 is more than raidlab's limit of 65536"),
        ("--file-test-mode=rndrw --file-extra-flags=dsync", "--file-extra-flags=dsync (O_DSYNC writes) is not modelled; use --file-fsync-all with --file-fsync-mode=fdatasync"),
        ("--file-test-mode=rndrw --file-extra-flags=direct,sync", "--file-extra-flags=sync (O_SYNC writes) is not modelled; use --file-fsync-all with --file-fsync-mode=fdatasync"),
        ("--file-test-mode=rndrw --file-extra-flags=odirect", "Invalid value for file-extra-flags: odirect (expected direct)"),
        ("sysbench fileio --file-test-mode=rndrw prepare", "'sysbench fileio prepare' is not a workload to simulate; give the options of 'run'"),
        ("sysbench fileio --file-test-mode=rndrw cleanup", "'sysbench fileio cleanup' is not a workload to simulate; give the options of 'run'"),
        ("sysbench fileio --file-test-mode=rndrw go", "unknown sysbench command 'go' (expected run)"),
        ("sysbench fileio --file-test-mode=rndrw run now", "Unrecognized command line argument: now"),
        ("sysbench oltp_read_write --threads=4 run", "raidlab reads the sysbench fileio test only, not 'oltp_read_write'"),
        ("sysbench --test=cpu run", "raidlab reads the sysbench fileio test only, not 'cpu'"),
        ("sysbench fileio --help", "--help prints text and runs nothing; raidlab needs the 'run' options"),
        ("--config-file=x.cfg", "--config-file is not supported; give its options on the command line"),
        ("--file-test-mode='rndrw", "cannot split the sysbench options: No closing quotation"),
        (b"--file-test-mode=\xff", "the sysbench option string is not UTF-8 text: byte 0xff at offset 17 (line 1); save it as UTF-8"),
        (["--file-test-mode=rndrw", 3], "sysbench options must be a string or a list of strings"),
        (42, "sysbench options must be a string or a list of strings"),
        ("--=3", "sysbench option '--=3' has no name"),
    ],
)
def test_errors_are_one_line(text, expected):
    message = error_of(text)
    if expected is None:
        assert message.startswith("invalid sysbench option '--foo=1' (raidlab supports: --file-test-mode, --file-num,")
        assert message.endswith("--rate, --tx-rate, --test)")
    else:
        assert message == expected


def test_workload_source_and_dict_round_trip():
    text = "sysbench fileio --file-test-mode=seqwr --threads=2 run"
    workload = parse_sysbench(text)
    assert workload.to_dict()["source"] == {"tool": "sysbench", "text": text}
    assert Workload.from_dict(workload.to_dict()) == workload


# -- properties ----------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    mode=st.sampled_from(["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"]),
    threads=st.integers(1, 4096),
    files=st.sampled_from([1, 2, 3, 8, 128, 1000]),
    file_mib=st.integers(1, 64),
    block_kib=st.sampled_from([1, 4, 16, 64, 1024]),
    ratio=st.floats(0, 1000, allow_nan=False, allow_infinity=False),
    freq=st.integers(0, 10_000),
    events=st.integers(0, 10**9),
    seconds=st.integers(0, 10**6),
    old=st.booleans(),
    upper=st.booleans(),
)
def test_properties_of_valid_options(mode, threads, files, file_mib, block_kib, ratio, freq, events, seconds, old, upper):
    if events == 0 and seconds == 0:
        seconds = 1
    total = files * file_mib * MiB
    size = f"{total // MiB}{'M' if upper else 'm'}"
    spellings = (
        f"--num-threads={threads} --max-requests={events} --max-time={seconds}"
        if old and threads > 1 and events > 0 and seconds > 0
        else f"--threads={threads} --events={events} --time={seconds}"
    )
    text = (
        f"--file-test-mode={mode} {spellings} --file-num={files} --file-total-size={size} "
        f"--file-block-size={block_kib}K --file-rw-ratio={ratio!r} --file-fsync-freq={freq}"
    )
    if block_kib * 1024 > file_mib * MiB:
        assert "is larger than each file" in error_of(text)
        return
    job = job_of(text)
    assert job.threads == threads and job.files == files and job.size_bytes == total
    assert job.block_sizes == ((block_kib * 1024, 100),) and job.block_align_bytes == block_kib * 1024
    assert job.total_ios == events and job.runtime_ns == seconds * SECOND and job.time_based == (seconds > 0)
    assert job.random_fraction == (1.0 if mode.startswith("rnd") else 0.0)
    expected_read = {"seqrd": 1.0, "rndrd": 1.0, "rndrw": ratio / (1 + ratio)}.get(mode, 0.0)
    assert job.read_fraction == expected_read
    writes = expected_read < 1.0
    assert job.fsync_every == (freq if writes else 0)
    assert job.fsync_end == writes
    assert job.sequential_cursor == "shared" and job.iodepth == 1
