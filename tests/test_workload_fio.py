"""fio job files → workload spec: every supported option, inheritance, errors, round trips."""

from __future__ import annotations

import json
import textwrap

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from raidlab.workload import (
    PRESETS,
    Distribution,
    Job,
    Workload,
    WorkloadError,
    parse_fio,
    parse_sysbench,
    preset,
    preset_fio_text,
    render_fio,
)
from raidlab.workload.fio import ACCEPTED_OPTIONS, IGNORED_OPTIONS, SUPPORTED_OPTIONS
from raidlab.workload.fio_options import ENUMERATED
from raidlab.workload_files import parse_fio_file
from raidlab._core import MAX_OUTSTANDING_IOS

KiB, MiB, GiB = 1024, 1024**2, 1024**3
SECOND = 10**9


def job_of(*lines: str, header: str = "[job]") -> Job:
    """Parses one job made of ``lines`` and returns it."""
    workload = parse_fio("\n".join([header, *lines]) + "\n")
    assert len(workload.jobs) == 1
    return workload.jobs[0]


def error_of(text: str) -> str:
    with pytest.raises(WorkloadError) as caught:
        parse_fio(text)
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message, message
    assert message.strip() == message and message
    return message


# -- defaults -------------------------------------------------------------------------------------


def test_defaults_are_fio_3_33_defaults():
    job = job_of()
    assert job.to_dict() == {
        "name": "job",
        "threads": 1,
        "iodepth": 1,
        "read_fraction": 1.0,  # rw=read
        "random_fraction": 0.0,
        "block_sizes": [[4096, 100]],  # bs=4096
        "offset_bytes": 0,
        "size_bytes": 0,
        "files": 1,
        "sequential_cursor": "per_thread",
        "distribution": {"kind": "uniform"},
        "rate_iops": 0,
        "arrival": "linear",
        "fsync_every": 0,
        "fsync_kind": "fsync",
        "fsync_scope": "thread",
        "fsync_end": False,
        "runtime_ns": 0,
        "ramp_ns": 0,
        "time_based": False,
        "number_ios": 0,
        "total_ios": 0,
        "io_bytes": 0,
        "direct": False,
        "block_align_bytes": 4096,
        "invalidate": True,
    }


# -- one test per supported option ---------------------------------------------------------------


@pytest.mark.parametrize(
    "line, read, random",
    [
        ("rw=read", 1.0, 0.0),
        ("rw=write", 0.0, 0.0),
        ("rw=randread", 1.0, 1.0),
        ("rw=randwrite", 0.0, 1.0),
        ("rw=rw", 0.5, 0.0),
        ("rw=readwrite", 0.5, 0.0),
        ("rw=randrw", 0.5, 1.0),
        ("readwrite=randwrite", 0.0, 1.0),
    ],
)
def test_rw(line, read, random):
    job = job_of(line)
    assert (job.read_fraction, job.random_fraction) == (read, random)


@pytest.mark.parametrize(
    "lines, read",
    [
        (["rw=randrw", "rwmixread=70"], 0.7),
        (["rw=randrw", "rwmixwrite=30"], 0.7),
        (["rw=rw", "rwmixread=0"], 0.0),
        (["rw=rw", "rwmixread=100"], 1.0),
        (["rw=randrw", "rwmixread=70", "rwmixwrite=10"], 0.9),  # the later one wins
        (["rw=randrw", "rwmixwrite=10", "rwmixread=70"], 0.7),
        (["rw=randread", "rwmixread=20"], 1.0),  # a read-only mode ignores the mix
    ],
)
def test_rwmix(lines, read):
    assert job_of(*lines).read_fraction == read


@pytest.mark.parametrize(
    "lines, random",
    [
        (["rw=randrw", "percentage_random=30"], 0.3),
        (["rw=randread", "percentage_random=0"], 0.0),
        (["rw=randread", "percentage_sequential=30"], 0.7),
        (["rw=read", "percentage_random=30"], 0.0),  # only random modes draw random offsets
        (["rw=randwrite", "percentage_random=40,90"], 0.9),  # the write value for a write job
    ],
)
def test_percentage_random(lines, random):
    assert job_of(*lines).random_fraction == random


@pytest.mark.parametrize(
    "value, size",
    [
        ("4096", 4096),
        ("4k", 4096),
        ("4K", 4096),
        ("4kb", 4096),
        ("16k", 16 * KiB),
        ("1m", MiB),
        ("1M", MiB),
        ("2mb", 2 * MiB),
        ("512b", 512),
        ("0x1000", 4096),
        ("8k,", 8 * KiB),  # fio drops a trailing comma
        ("8k,8k", 8 * KiB),
    ],
)
def test_bs(value, size):
    job = job_of(f"bs={value}")
    assert job.block_sizes == ((size, 100),)
    assert job.block_align_bytes == size


def test_bs_aliases_and_directions():
    assert job_of("blocksize=8k").block_sizes == ((8192, 100),)
    assert job_of("rw=randread", "bs=4k,64k").block_sizes == ((4096, 100),)
    assert job_of("rw=randwrite", "bs=4k,64k").block_sizes == ((65536, 100),)
    assert job_of("rw=randwrite", "bs=,64k").block_sizes == ((65536, 100),)
    assert job_of("rw=randread", "bs=,64k").block_sizes == ((4096, 100),)  # read keeps the default


def test_bs_that_differs_per_direction_gives_writes_their_own_sizes():
    # bs=r,w is modelled (the writes draw from write_block_sizes).
    job = job_of("rw=randrw", "bs=4k,64k")
    assert job.block_sizes == ((4096, 100),) and job.write_block_sizes == ((65536, 100),)


def test_kb_base():
    # fio's default kb_base=1024 is a compatibility mode: k/m/g are powers of 1024 and the IEC
    # spellings KiB/MiB/... are powers of 1000 (parse.c __get_mult_bytes, fio-3.33).
    assert job_of("size=64MiB").size_bytes == 64_000_000
    assert job_of("size=64m").size_bytes == 64 * MiB
    assert job_of("size=512k").size_bytes == 512 * KiB
    assert job_of("kb_base=1000", "size=512k").size_bytes == 512_000
    assert job_of("kb_base=1000", "size=4GiB").size_bytes == 4 * GiB
    assert job_of("kb_base=1000", "bs=4KiB").block_sizes == ((4096, 100),)
    message = error_of("[j]\nbs=4KiB\n")
    assert message == (
        "fio job file line 2: bs=4KiB (4000 bytes) is not a multiple of 512 (fio's default kb_base=1024 "
        "reads KiB/MiB/... as powers of 1000; write 4k, or set kb_base=1000)"
    )
    # kb_base applies before every other option, wherever it is written (prio in options.c)
    assert error_of("[j]\nbs=4k\nkb_base=1000\n") == "fio job file line 2: bs=4k (4000 bytes) is not a multiple of 512"
    assert error_of("[j]\nsize=2MiB\n").startswith("fio job file line 2: size=2MiB (2000000 bytes) is not a multiple of 512")
    assert error_of("[j]\nkb_base=999\n") == "fio job file line 2: kb_base=999 must be 1024 or 1000"


@pytest.mark.parametrize(
    "value, expected",
    [
        ("4k/50:8k/30:64k/20", ((4096, 50), (8192, 30), (65536, 20))),
        ("4k/50:8k/30:64k", ((4096, 50), (8192, 30), (65536, 20))),  # the blank takes the rest
        ("4k/40:8k:64k", ((4096, 40), (8192, 30), (65536, 30))),  # blanks share it evenly
        ("4k:8k:16k:32k", ((4096, 25), (8192, 25), (16384, 25), (32768, 25))),
        ("4k:8k:16k", ((4096, 33), (8192, 33), (16384, 34))),  # fio's last entry takes 33+1
        ("4k/10:8k/10", ((4096, 10), (8192, 90))),  # the shortfall goes where fio falls through
        ("4k/60:8k/10:16k/10", ((4096, 80), (8192, 10), (16384, 10))),
        ("8k", ((8192, 100),)),
        ("8k/30", ((8192, 100),)),  # one size is used for every I/O
        ("4k/0:8k/100", ((8192, 100),)),  # 0 % counts as blank: nothing is left for it
        ("4k/50:4k/50", ((4096, 100),)),
        (" 4k/50 : 16k/50 ", ((4096, 50), (16384, 50))),
        ("4k/50:8k/50,4k/50:8k/50", ((4096, 50), (8192, 50))),
    ],
)
def test_bssplit(value, expected):
    job = job_of("rw=randrw", f"bssplit={value}")
    assert job.block_sizes == expected
    assert sum(weight for _, weight in job.block_sizes) == 100


def test_bssplit_alignment_and_directions():
    # fio's default blockalign is the smallest size, even one that got 0 %.
    assert job_of("rw=randread", "bssplit=4k/0:8k/100").block_align_bytes == 4096
    assert job_of("rw=randread", "bssplit=8k/50:64k/50").block_align_bytes == 8192
    assert job_of("rw=randread", "bssplit=8k/50:64k/50,16k").block_sizes == ((8192, 50), (65536, 50))
    assert job_of("rw=randwrite", "bssplit=8k/50:64k/50,16k").block_sizes == ((16384, 100),)
    # bssplit wins over bs for the directions it covers; an empty direction keeps bs
    assert job_of("rw=randread", "bs=64k", "bssplit=8k").block_sizes == ((8192, 100),)
    assert job_of("rw=randwrite", "bs=64k", "bssplit=8k,").block_sizes == ((65536, 100),)


@pytest.mark.parametrize(
    "value, start",
    [
        ("4k/60:8k/50", "fio job file line 3: bssplit percentages add up to 110%, more than 100%"),
        ("4k/50:6k/50", "fio job file line 3: bssplit size 6 KiB is not a multiple of the smallest size 4 KiB"),
        ("4k/50::8k/50", "fio job file line 3: bssplit=4k/50::8k/50 has an empty entry"),
        ("4k/x", "fio job file line 3: bssplit entry '4k/x' needs a whole percentage"),
        ("4k/101:8k", "fio job file line 3: bssplit entry '4k/101' has a percentage over 100"),
        ("1000/50:2000/50", "fio job file line 3: bssplit=1000 is not a multiple of 512"),
        (":".join(["4k"] * 65), "fio job file line 3: bssplit has more than 64 entries"),
    ],
)
def test_bssplit_errors(value, start):
    assert error_of(f"[j]\nrw=randrw\nbssplit={value}\n").startswith(start)


def test_bssplit_per_direction_gives_writes_their_own_mix():
    job = job_of("rw=randrw", "bssplit=4k/50:8k/50,16k")
    assert job.block_sizes == ((4096, 50), (8192, 50)) and job.write_block_sizes == ((16384, 100),)


def test_blockalign():
    assert job_of("rw=randread", "bs=4k", "blockalign=16k").block_align_bytes == 16384
    assert job_of("rw=randread", "bs=4k", "ba=8k").block_align_bytes == 8192
    workload = parse_fio("[seq]\nrw=read\nbs=4k\nblockalign=16k\n")
    assert workload.jobs[0].block_align_bytes == 4096  # fio ignores it for sequential jobs
    assert "blockalign only applies to random I/O" in workload.notes[0]


@pytest.mark.parametrize(
    "lines, depth, note",
    [
        (["iodepth=32"], 1, "iodepth=32 is capped at 1 by the psync engine (fio's default)"),
        (["ioengine=sync", "iodepth=8"], 1, "capped at 1 by the sync engine"),
        (["ioengine=pvsync2", "iodepth=8"], 1, "capped at 1 by the pvsync2 engine"),
        (["ioengine=libaio", "iodepth=32", "direct=1"], 32, None),
        (["ioengine=io_uring", "iodepth=64", "direct=1"], 64, None),
        (["ioengine=posixaio", "iodepth=4", "direct=1"], 4, None),
        (["ioengine=libaio", "iodepth=1k", "direct=1"], 1024, None),  # FIO_OPT_INT takes size suffixes
        (["ioengine=libaio", "iodepth=8"], 8, "libaio without direct=1"),
    ],
)
def test_iodepth_and_engines(lines, depth, note):
    workload = parse_fio("[j]\n" + "\n".join(lines) + "\n")
    assert workload.jobs[0].iodepth == depth
    if note is None:
        assert workload.notes == ()
    else:
        assert len(workload.notes) == 1 and note in workload.notes[0]


def test_numjobs():
    assert job_of("numjobs=16").threads == 16
    assert error_of("[j]\nnumjobs=0\n") == "fio job file line 2: numjobs=0 must be 1 to 4096"
    assert error_of("[j]\nnumjobs=5000\n") == "fio job file line 2: numjobs=5000 must be 1 to 4096"
    assert error_of("[j]\niodepth=0\n") == "fio job file line 2: iodepth=0 must be 1 to 65536"
    assert error_of("[j]\niodepth=70000\n") == "fio job file line 2: iodepth=70000 must be 1 to 65536"


@pytest.mark.parametrize(
    "lines, field, value",
    [
        (["size=10g"], "size_bytes", 10 * GiB),
        (["size=100%"], "size_bytes", 0),
        (["size=0"], "size_bytes", 0),
        (["offset=1m"], "offset_bytes", MiB),
        (["fileoffset=4k"], "offset_bytes", 4096),
        (["offset=0%"], "offset_bytes", 0),
        (["io_size=5g"], "io_bytes", 5 * GiB),
        (["io_limit=100m"], "io_bytes", 100 * MiB),
        (["io_size=1000"], "io_bytes", 1000),  # an amount, not a place: any byte count
        (["number_ios=1000"], "number_ios", 1000),
        (["number_ios=1k"], "number_ios", 1024),
        (["runtime=30"], "runtime_ns", 30 * SECOND),
        (["runtime=30s"], "runtime_ns", 30 * SECOND),
        (["runtime=2m"], "runtime_ns", 120 * SECOND),
        (["runtime=1h"], "runtime_ns", 3600 * SECOND),
        (["runtime=1d"], "runtime_ns", 86400 * SECOND),
        (["runtime=500ms"], "runtime_ns", SECOND // 2),
        (["runtime=250us"], "runtime_ns", 250_000),
        (["runtime=5MSEC"], "runtime_ns", 5_000_000),
        (["timeout=10"], "runtime_ns", 10 * SECOND),
        (["ramp_time=5"], "ramp_ns", 5 * SECOND),
        (["ramp_time=1500ms"], "ramp_ns", 1500 * 10**6),
        (["runtime=10", "time_based"], "time_based", True),
        (["runtime=10", "time_based=1"], "time_based", True),
        (["runtime=10", "time_based=0"], "time_based", False),
        (["direct=1"], "direct", True),
        (["direct=0"], "direct", False),
        (["buffered=0"], "direct", True),
        (["direct=1", "buffered=1"], "direct", False),
        (["rate_process=poisson"], "arrival", "poisson"),
        (["rate_process=linear"], "arrival", "linear"),
        (["rate_iops=500"], "rate_iops", 500),
        (["rw=randwrite", "rate_iops=100,400"], "rate_iops", 400),
        (["rw=randrw", "rwmixread=70", "rate_iops=700,300"], "rate_iops", 1000),
        (["rw=randrw", "rwmixread=50", "rate_iops=200"], "rate_iops", 400),  # 200 each way
        (["rw=write", "fsync=8"], "fsync_every", 8),
        (["rw=write", "fdatasync=1"], "fsync_kind", "fdatasync"),
        (["rw=write", "fsync=1"], "fsync_kind", "fsync"),
        (["rw=write", "end_fsync=1"], "fsync_end", True),
        (["rw=read", "fsync=8"], "fsync_every", 0),  # nothing written, nothing synced
        (["rw=read", "end_fsync=1"], "fsync_end", False),
        (["name=renamed"], "name", "renamed"),
    ],
)
def test_option_values(lines, field, value):
    assert getattr(job_of(*lines), field) == value


def test_fsync_fields_together():
    job = job_of("rw=randwrite", "fdatasync=4", "end_fsync=1")
    assert (job.fsync_every, job.fsync_kind, job.fsync_scope, job.fsync_end) == (4, "fdatasync", "thread", True)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("random", Distribution()),
        ("zipf", Distribution("zipf", 1.1)),  # FIO_DEF_ZIPF
        ("zipf:1.2", Distribution("zipf", 1.2)),
        ("zipf:0.8", Distribution("zipf", 0.8)),
        ("pareto", Distribution("pareto", 0.2)),  # FIO_DEF_PARETO
        ("pareto:0.9", Distribution("pareto", 0.9)),
        ("normal", Distribution("normal", 0.0)),
        ("normal:5", Distribution("normal", 5.0)),
        ("normal:12.5", Distribution("normal", 12.5)),
    ],
)
def test_random_distribution(value, expected):
    job = job_of("rw=randread", f"random_distribution={value}")
    assert job.distribution == expected


def test_distribution_dicts():
    assert Distribution("zipf", 1.2).to_dict() == {"kind": "zipf", "theta": 1.2}
    assert Distribution("pareto", 0.3).to_dict() == {"kind": "pareto", "h": 0.3}
    assert Distribution("normal", 5).to_dict() == {"kind": "normal", "stddev_pct": 5.0}
    assert Distribution().to_dict() == {"kind": "uniform"}


@pytest.mark.parametrize(
    "value, start",
    [
        ("zipf:1", "random_distribution=zipf:1: zipf theta 1 must be positive and not 1.0"),
        ("zipf:1.0", "random_distribution=zipf:1.0: zipf theta 1 must be positive and not 1.0"),
        ("pareto:1.5", "random_distribution=pareto:1.5: pareto h 1.5 must be between 0 and 1"),
        ("normal:100", "random_distribution=normal:100: normal stddev 100% must be at least 0 and below 100"),
        ("zipf:1.2:0.5", "random_distribution=zipf:1.2:0.5: the ':center' form is not modelled"),
        ("gauss", "random_distribution=gauss is not one of random, zipf:θ, pareto:h, normal:dev"),
        ("zipf:abc", "random_distribution=zipf:abc: 'abc' is not a non-negative number"),
        ("pareto:-0.5", "random_distribution=pareto:-0.5: '-0.5' is not a non-negative number"),
        ("random:3", "random_distribution=random takes no parameter"),
    ],
)
def test_random_distribution_errors(value, start):
    assert error_of(f"[j]\nrw=randread\nrandom_distribution={value}\n").startswith("fio job file line 3: " + start)


def test_rate_iops_capping_one_direction_of_a_mixed_job_is_refused():
    message = error_of("[m]\nrw=randrw\nrwmixread=70\nrate_iops=500,0\n")
    assert message.startswith("fio job 'm': rate_iops=500,0 caps reads only")
    assert "e.g. rate_iops=700,300 for 1000 IOPS" in message
    assert "caps writes only" in error_of("[m]\nrw=randrw\nrate_iops=,500\n")
    assert job_of("rw=randrw", "rate_iops=500,").rate_iops == 1000  # a trailing comma is dropped


def test_fsync_and_fdatasync_together_are_refused():
    assert error_of("[w]\nrw=write\nfsync=1\nfdatasync=1\n") == (
        "fio job 'w': fsync and fdatasync are both set; raidlab models one kind per job"
    )


def test_time_based_without_runtime_is_ignored_like_fio():
    workload = parse_fio("[j]\ntime_based\n")
    assert workload.jobs[0].time_based is False
    assert "time_based without a runtime is ignored" in workload.notes[0]


# -- sections and inheritance ---------------------------------------------------------------------


def test_global_inheritance_and_overrides():
    text = textwrap.dedent(
        """\
        ; a comment
        # another comment
        [global]
        ioengine=libaio
        direct=1
        bs=16k   ; trailing comment
        iodepth=8
        runtime=60
        time_based
        size=10g

        [reader]
        rw=randread
        numjobs=4

        [writer]
        rw=randwrite
        bs=64k
        iodepth=2

        [global]
        iodepth=32

        [late]
        rw=read
        """
    )
    workload = parse_fio(text)
    reader, writer, late = workload.jobs
    assert [job.name for job in workload.jobs] == ["reader", "writer", "late"]
    assert (reader.block_sizes, reader.iodepth, reader.threads) == (((16384, 100),), 8, 4)
    assert (reader.direct, reader.runtime_ns, reader.time_based, reader.size_bytes) == (True, 60 * SECOND, True, 10 * GiB)
    assert (writer.block_sizes, writer.iodepth, writer.read_fraction) == (((65536, 100),), 2, 0.0)
    # the second [global] adds to the defaults for the jobs below it only
    assert (late.iodepth, late.block_sizes, late.random_fraction) == (32, ((16384, 100),), 0.0)
    assert workload.tool == "fio" and workload.text == text
    assert workload.describe().startswith("[reader] randread, 16 KiB, 4 threads × QD8, direct")


def test_global_section_prefix_and_job_names():
    workload = parse_fio("[globalfoo]\nbs=8k\n[job one]\n[job one]\nname=second\n")
    assert [job.name for job in workload.jobs] == ["job one", "second"]
    assert workload.jobs[0].block_sizes == ((8192, 100),)
    # name= in [global] does not rename the jobs (fio sets each job's name from its section)
    assert parse_fio("[global]\nname=x\n[a]\n").jobs[0].name == "a"


def test_whitespace_and_crlf():
    job = parse_fio("  [ j ]  \r\n   bs = 8k \r\n\trw =randwrite\r\n").jobs[0]
    assert (job.name, job.block_sizes, job.read_fraction) == ("j", ((8192, 100),), 0.0)


def test_ignored_options_change_nothing():
    plain = job_of("rw=randread")
    # An enumerated option takes one of fio's values (fio refuses "1" for random_generator).
    lines = [f"{name}={ENUMERATED[name][0] if name in ENUMERATED else 1}" for name in IGNORED_OPTIONS
             if name != "filename"] + ["filename=/dev/md0", "thread"]
    assert job_of("rw=randread", *lines) == plain


def test_unknown_option_error_counts_the_accepted_list():
    message = error_of("[j]\nfoo=1\n")
    assert message == (
        f"fio job file line 2: unknown option 'foo'; raidlab accepts {len(ACCEPTED_OPTIONS)} fio options, "
        "listed by raidlab fio-options"
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "fio job file has no sections (expected [global] and [job] sections)"),
        ("; only a comment\n", "fio job file has no sections (expected [global] and [job] sections)"),
        ("[global]\nbs=4k\n", "fio job file defines no jobs (only [global] sections)"),
        ("bs=4k\n[j]\n", "fio job file line 1: option 'bs=4k' is outside of a [job] section"),
        ("[j\nbs=4k\n", "fio job file line 1: bad section header '[j' (expected [name])"),
        ("[]\n", "fio job file line 1: bad section header '[]' (expected [name])"),
        ("[j]\n=4k\n", "fio job file line 2: '=4k' has no option name"),
        ("[j]\nbs=1000\n", "fio job file line 2: bs=1000 is not a multiple of 512"),
        ("[j]\nbs=0\n", "fio job file line 2: bs=0 must be at least 512"),
        ("[j]\nbs=-4k\n", "fio job file line 2: bs=-4k must not be negative"),
        ("[j]\nbs=4 k\n", "fio job file line 2: bs=4 k is not a size (examples: 4096, 4k, 1m, 2g)"),
        ("[j]\nbs=1.5k\n", "fio job file line 2: bs=1.5k: fio takes whole numbers only (it would read 1.5k as 1); use a smaller unit, e.g. 1536m for 1.5g"),
        ("[j]\nbs=4q\n", "fio job file line 2: bs=4q: unknown size unit 'q' (fio takes k, m, g, t, p, optionally followed by b, or KiB/MiB/...)"),
        ("[j]\nbs\n", "fio job file line 2: option 'bs' needs a value"),
        ("[j]\nbs=\n", "fio job file line 2: option 'bs' needs a value"),
        ("[j]\nbs=4k,8k,16k,32k\n", "fio job file line 2: bs=4k,8k,16k,32k has more than read,write,trim values"),
        ("[j]\noffset=10%\n", "fio job file line 2: offset=10% is a share of the target; raidlab needs bytes (offset=0% is accepted)"),
        ("[j]\nio_size=50%\n", "fio job file line 2: io_size=50% is a share of the target; raidlab needs bytes"),
        ("[j]\nsize=150%\n", "fio job file line 2: size=150%: a percentage must be 0 to 100"),
        ("[j]\nsize=-1\n", "fio job file line 2: size=-1 must not be negative"),
        ("[j]\nsize=1000\n", "fio job file line 2: size=1000 is not a multiple of 512"),
        ("[j]\noffset=100\n", "fio job file line 2: offset=100 is not a multiple of 512"),
        ("[j]\nbs=8k\nsize=4k\n", "fio job 'j': size=4 KiB is smaller than the block size 8 KiB"),
        ("[j]\nsize=0x10k\n", "fio job file line 2: size=0x10k: a hexadecimal value takes no unit"),
        ("[j]\nsize=(1+1)*1m\n", "fio job file line 2: size=(1+1)*1m: fio arithmetic expressions are not supported; give a number"),
        ("[j]\nsize=99999999999999999999\n", "fio job file line 2: size=99999999999999999999 is too large"),
        ("[j]\nruntime=30sec\n", "fio job file line 2: runtime=30sec: unknown time unit 'sec' (fio takes us, ms, s, m, h, d)"),
        ("[j]\nruntime=1.5s\n", "fio job file line 2: runtime=1.5s: fio takes whole numbers only; use a smaller unit, e.g. 1500ms"),
        ("[j]\nruntime=-5\n", "fio job file line 2: runtime=-5 must not be negative"),
        ("[j]\nramp_time=soon\n", "fio job file line 2: ramp_time=soon is not a time (examples: 30, 30s, 500ms, 2m, 1h)"),
        ("[j]\ndirect\n", "fio job file line 2: option 'direct' needs a value (direct=1 or direct=0); fio rejects it bare"),
        ("[j]\ndirect=yes\n", "fio job file line 2: direct=yes must be 0 or 1"),
        ("[j]\ntime_based=2\n", "fio job file line 2: time_based=2 must be 0 or 1"),
        ("[j]\nrw=trim\n", "fio job file line 2: rw=trim: discard (trim) to the members is not modelled"),
        ("[j]\nrw=randtrimwrite\n", "fio job file line 2: rw=randtrimwrite: discard (trim) to the members is not modelled"),
        ("[j]\nioengine=rbd\n", "fio job file line 2: ioengine=rbd talks to an object store, not to a block device"),
        ("[j]\nsize=50g%\n", "fio job file line 2: size=50g%: unknown size unit 'g%' (fio takes k, m, g, t, p, optionally followed by b, or KiB/MiB/...)"),
        ("[j]\nrw=sideways\n", "fio job file line 2: rw=sideways is not one of read, write, randread, randwrite, rw, randrw"),
        ("[j]\nrwmixread=101\n", "fio job file line 2: rwmixread=101 must be 0 to 100"),
        ("[j]\nrwmixread=-1\n", "fio job file line 2: rwmixread=-1 must not be negative"),
        ("[j]\npercentage_random=120\n", "fio job file line 2: percentage_random=120 must be 0 to 100"),
        ("[j]\niodepth=-1\n", "fio job file line 2: iodepth=-1 must not be negative"),
        ("[j]\niodepth=lots\n", "fio job file line 2: iodepth=lots is not a size (examples: 4096, 4k, 1m, 2g)"),
        ("[j]\niodepth=50%\n", "fio job file line 2: iodepth=50%: a percentage is not allowed here"),
        ("[j]\nrate_process=bursty\n", "fio job file line 2: failed parsing rate_process=bursty (valid values: linear, poisson)"),
        ("[j]\nfilename=/dev/sdb:/dev/sdc\n", "fio job file line 2: filename=/dev/sdb:/dev/sdc names several files (':'); raidlab reads one file (the array) per fio job"),
        ("[j]\noutput-format=json\n", "fio job file line 2: 'output-format' is a fio command-line option, not a job file option"),
        ("[j]\ninclude other.fio\n", "fio job file line 2: include is not supported; paste the included options into the job file"),
        ("[j]\nBS=4k\n", None),  # option names are case-sensitive in fio
        ("[j]\nbs=4k\x00\n", "fio job file line 2: contains a NUL byte"),
    ],
)
def test_errors_are_one_line(text, expected):
    message = error_of(text)
    if expected is None:
        assert message.startswith("fio job file line 2: unknown option 'BS'")
    elif expected.startswith("fio"):
        assert message == expected
    else:
        assert message.endswith(expected)


def test_a_trailing_global_section_is_checked_too():
    assert error_of("[j]\n[global]\nfoo=1\n").startswith("fio job file line 3: unknown option 'foo'")


def test_errors_name_the_line_of_a_global_option():
    message = error_of("[global]\nbs=4k\nbs=3000\n\n[a]\n")
    assert message == "fio job file line 3: bs=3000 is not a multiple of 512"


def test_bytes_and_files(tmp_path):
    path = tmp_path / "job.fio"
    path.write_text("[j]\nrw=randwrite\nbs=8k\n")
    workload = parse_fio_file(path)
    assert workload.jobs[0].block_sizes == ((8192, 100),)
    assert parse_fio_file(str(path)) == workload
    assert parse_fio(b"[j]\nrw=randwrite\nbs=8k\n") == workload
    with pytest.raises(WorkloadError, match=r"^cannot read fio job file .*missing\.fio: No such file or directory$"):
        parse_fio_file(tmp_path / "missing.fio")
    with pytest.raises(WorkloadError, match=r"^fio job file is not UTF-8 text: byte 0xff at offset 4 \(line 2\)"):
        parse_fio(b"[j]\n\xff\n")
    with pytest.raises(WorkloadError, match="^fio job file must be text, not int$"):
        parse_fio(3)  # type: ignore[arg-type]


# -- the dict the Rust core reads, describe(), presets ---------------------------------------------


SPEC_KEYS = [
    "name", "threads", "iodepth", "read_fraction", "random_fraction", "block_sizes", "offset_bytes",
    "size_bytes", "files", "sequential_cursor", "distribution", "rate_iops", "arrival", "fsync_every",
    "fsync_kind", "fsync_scope", "fsync_end", "runtime_ns", "ramp_ns", "time_based", "number_ios",
    "total_ios", "io_bytes", "direct", "block_align_bytes", "invalidate",
]


def check_plain_shape(data: dict) -> None:
    assert list(data) == ["jobs", "source"]
    assert set(data["source"]) == {"tool", "text"}
    for job in data["jobs"]:
        assert list(job) == SPEC_KEYS
        for key in ("threads", "iodepth", "offset_bytes", "size_bytes", "files", "rate_iops", "fsync_every",
                    "runtime_ns", "ramp_ns", "number_ios", "total_ios", "io_bytes", "block_align_bytes"):
            assert type(job[key]) is int, key
        for key in ("read_fraction", "random_fraction"):
            assert type(job[key]) is float, key
        for key in ("fsync_end", "time_based", "direct", "invalidate"):
            assert type(job[key]) is bool, key
        assert all(type(size) is int and type(weight) is int for size, weight in job["block_sizes"])
    assert json.loads(json.dumps(data)) == data


def test_to_dict_shape_and_inverse():
    workload = parse_fio(
        "[a]\nrw=randrw\nrwmixread=70\nbssplit=4k/50:64k/50\nrandom_distribution=zipf:1.2\nfsync=4\n"
        "[b]\nrw=read\nbs=1m\n"
    )
    data = workload.to_dict()
    check_plain_shape(data)
    assert data["jobs"][0]["distribution"] == {"kind": "zipf", "theta": 1.2}
    assert data["source"] == {"tool": "fio", "text": workload.text}
    assert Workload.from_dict(data) == workload
    check_plain_shape(parse_sysbench("--file-test-mode=rndrw").to_dict())


def test_describe():
    workload = parse_fio(
        "[global]\nbs=16k\ndirect=1\n[oltp]\nrw=randrw\nrwmixread=70\nnumjobs=16\n"
    )
    assert workload.describe() == "randrw 70/30, 16 KiB, 16 threads × QD1, direct"
    assert job_of("rw=rw", "rwmixread=60").describe() == "rw 60/40, 4 KiB, 1 thread × QD1, buffered"
    assert job_of("rw=randwrite", "percentage_random=25", "fdatasync=1").describe() == (
        "25% randwrite, 4 KiB, 1 thread × QD1, buffered, fdatasync after each write"
    )
    assert job_of(
        "rw=randread", "bssplit=4k/80:64k/20", "ioengine=libaio", "iodepth=32", "direct=1",
        "random_distribution=pareto:0.3", "runtime=2m", "time_based", "ramp_time=10", "rate_iops=800",
        "rate_process=poisson", "size=1g",
    ).describe() == (
        "randread, 4 KiB 80% + 64 KiB 20%, 1 thread × QD32, direct, pareto h=0.3, capped at 800 IOPS/thread "
        "(poisson), over 1 GiB, for 120 s after 10 s ramp"
    )


def test_presets():
    assert sorted(PRESETS) == ["backup-scan", "bonnie-seq", "bonnie-seq-read", "dd-read", "dd-write",
                               "dd-write-fdatasync", "oltp-innodb", "oltp-postgres", "wal"]
    innodb = preset("oltp-innodb")
    assert innodb.describe() == "randrw 70/30, 16 KiB, 16 threads × QD1, direct, for 60 s"
    assert innodb.to_dict()["source"] == {"tool": "preset", "text": "oltp-innodb"}
    (job,) = innodb.jobs
    assert (job.read_fraction, job.random_fraction, job.block_sizes, job.direct) == (0.7, 1.0, ((16384, 100),), True)
    (pg,) = preset("oltp-postgres").jobs
    assert (pg.read_fraction, pg.random_fraction, pg.block_sizes, pg.threads, pg.iodepth) == (0.7, 1.0, ((8192, 100),), 16, 1)
    (wal,) = preset("wal").jobs
    assert (wal.read_fraction, wal.random_fraction, wal.block_sizes) == (0.0, 0.0, ((8192, 100),))
    assert (wal.fsync_every, wal.fsync_kind, wal.fsync_scope, wal.iodepth, wal.threads) == (1, "fdatasync", "thread", 1, 1)
    (scan,) = preset("backup-scan").jobs
    assert (scan.read_fraction, scan.random_fraction, scan.block_sizes, scan.iodepth) == (1.0, 0.0, ((MiB, 100),), 4)
    for name in PRESETS:
        workload = preset(name)
        assert workload.notes == ()
        if name.startswith(("bonnie", "dd-")):  # the sequential tools run once over their file
            assert workload.jobs[0].runtime_ns == 0 and not workload.jobs[0].time_based
        else:
            assert workload.jobs[0].runtime_ns == 60 * SECOND and workload.jobs[0].time_based
        assert parse_fio(render_fio(workload)).jobs == workload.jobs
        assert parse_fio(preset_fio_text(name)).jobs == workload.jobs
    with pytest.raises(WorkloadError) as caught:
        preset("oltp")
    assert str(caught.value) == ("unknown preset 'oltp' (presets: backup-scan, bonnie-seq, bonnie-seq-read, dd-read, dd-write, "
                                 "dd-write-fdatasync, oltp-innodb, oltp-postgres, wal)")


def test_render_refuses_what_fio_cannot_say():
    sysbench = parse_sysbench("--file-test-mode=rndrw")
    # nrfiles is modelled, so the sysbench job stops at its fsync rounds instead.
    with pytest.raises(WorkloadError, match=r"^job 'sysbench-rndrw': fsync rounds over all files have no fio spelling"):
        render_fio(sysbench)
    odd = Workload((Job("odd", read_fraction=2 / 3, random_fraction=1.0),), "fio", "")
    with pytest.raises(WorkloadError, match="is not a whole percentage, which fio needs$"):
        render_fio(odd)


def test_spec_validation_messages():
    with pytest.raises(WorkloadError, match=r"^job 'x': block size 1000 is not a multiple of 512$"):
        Job("x", block_sizes=((1000, 100),))
    with pytest.raises(WorkloadError, match=r"^job 'x': block size weights are percentages and must add up to 100, not 90$"):
        Job("x", block_sizes=((4096, 90),))
    with pytest.raises(WorkloadError, match=r"^job 'x': time_based needs a runtime$"):
        Job("x", time_based=True)
    with pytest.raises(WorkloadError, match=r"^job 'x': threads=0 must be at least 1$"):
        Job("x", threads=0)
    with pytest.raises(WorkloadError, match=r"^job 'x': read_fraction=1.5 must be between 0 and 1$"):
        Job("x", read_fraction=1.5)
    with pytest.raises(WorkloadError, match=r"^job 'x': iodepth must be an integer, not bool$"):
        Job("x", iodepth=True)
    with pytest.raises(WorkloadError, match=r"^a workload must be an object with exactly 'jobs' and 'source'$"):
        Workload.from_dict({"jobs": []})


# -- property: a random valid job, written as fio text (in varied spellings), reads back the same ---


def size_spellings(number: int):
    """Every way fio-3.33 (kb_base=1024) spells ``number`` bytes."""
    spellings = [str(number), f"{number}b", hex(number)]
    for power, letters in ((1, "k"), (2, "m"), (3, "g")):
        unit = 1024**power
        if number % unit == 0:
            for suffix in (letters, letters.upper(), letters + "b", letters.upper() + "B"):
                spellings.append(f"{number // unit}{suffix}")
    return st.sampled_from(spellings)


def time_spellings(nanos: int):
    micros = nanos // 1000
    spellings = [f"{micros}us", f"{micros}usec"]
    if micros % 1000 == 0:
        spellings += [f"{micros // 1000}ms", f"{micros // 1000}MSEC"]
    if micros % 10**6 == 0:
        spellings += [str(micros // 10**6), f"{micros // 10**6}s"]
    if micros % (60 * 10**6) == 0:
        spellings.append(f"{micros // (60 * 10**6)}m")
    if micros % (3600 * 10**6) == 0:
        spellings.append(f"{micros // (3600 * 10**6)}h")
    return st.sampled_from(spellings)


SECTORS = st.integers(1, 512).map(lambda n: n * 512)


@st.composite
def fio_jobs(draw, name: str):
    """A job that fio can express (whole percentages, one file, per-thread cursor)."""
    mixed = draw(st.booleans())
    read_percent = draw(st.integers(1, 99)) if mixed else draw(st.sampled_from([0, 100]))
    random_percent = draw(st.sampled_from([0, 100]) | st.integers(0, 100))
    base = draw(st.sampled_from([512, 4096, 8192, 16384]))
    count = draw(st.integers(1, 4))
    sizes = sorted(set(base * draw(st.sampled_from([1, 2, 4, 8, 16, 32])) for _ in range(count)))
    if len(sizes) == 1:
        block_sizes = ((sizes[0], 100),)
    else:
        cuts = sorted(draw(st.lists(st.integers(1, 99), min_size=len(sizes) - 1, max_size=len(sizes) - 1, unique=True)))
        weights = [b - a for a, b in zip([0] + cuts, cuts + [100])]
        block_sizes = tuple(zip(sizes, weights))
    smallest, largest = min(sizes), max(sizes)
    align = smallest * draw(st.sampled_from([1, 1, 2, 4])) if random_percent or draw(st.booleans()) else smallest
    runtime = draw(st.sampled_from([0, 10**6, 5 * 10**8, 30 * SECOND, 120 * SECOND, 3600 * SECOND]))
    writes = read_percent < 100
    kind = draw(st.sampled_from(["uniform", "zipf", "pareto", "normal"]))
    value = {
        "uniform": 0.0,
        "zipf": draw(st.sampled_from([0.5, 1.1, 1.2, 2.0])),
        "pareto": draw(st.sampled_from([0.1, 0.2, 0.9])),
        "normal": draw(st.sampled_from([0.0, 5.0, 12.5])),
    }[kind]
    rate = draw(st.sampled_from([0, 100, 1000, 2500])) if mixed else draw(st.sampled_from([0, 1, 777]))
    fsync_every = draw(st.sampled_from([0, 1, 8])) if writes else 0
    return Job(
        name=name,
        threads=draw(st.sampled_from([1, 2, 16, 4096])),
        iodepth=draw(st.sampled_from([1, 4, 32, 65536])),
        read_fraction=read_percent / 100,
        random_fraction=random_percent / 100,
        block_sizes=block_sizes,
        offset_bytes=draw(st.sampled_from([0, 512, 1 << 20, 3 << 30])),
        size_bytes=draw(st.sampled_from([0, largest, 1 << 30, 10 * (1 << 30) + 512])),
        distribution=Distribution(kind, value),
        rate_iops=rate,
        arrival=draw(st.sampled_from(["linear", "poisson"])),
        fsync_every=fsync_every,
        fsync_kind=draw(st.sampled_from(["fsync", "fdatasync"])) if fsync_every else "fsync",
        fsync_end=writes and draw(st.booleans()),
        runtime_ns=runtime,
        ramp_ns=draw(st.sampled_from([0, SECOND, 1500 * 10**6])),
        time_based=bool(runtime) and draw(st.booleans()),
        number_ios=draw(st.sampled_from([0, 1, 1000])),
        io_bytes=draw(st.sampled_from([0, 1000, 1 << 30])),
        direct=draw(st.booleans()),
        block_align_bytes=align,
    )


@st.composite
def messy_fio_text(draw, workload: Workload):
    """``render_fio`` output re-spelled: sizes and times in other units, options moved to a
    [global] section when every job shares them, comments, spacing and alias names."""
    rendered = [block.split("\n") for block in render_fio(workload).strip().split("\n\n")]
    aliases = {"rw": "readwrite", "bs": "blocksize", "io_size": "io_limit", "offset": "fileoffset", "runtime": "timeout"}
    size_keys = ("bs", "offset", "size", "io_size", "blockalign")
    bodies = []
    for block in rendered:
        body = []
        for line in block[1:]:
            key, _, value = line.partition("=")
            if key in size_keys and "," not in value:
                number = {"k": 1024, "m": 1024**2, "g": 1024**3}.get(value[-1], 1)
                value = draw(size_spellings(int(value[:-1] if number > 1 else value) * number))
            elif key in ("runtime", "ramp_time"):
                nanos = parse_fio(f"[t]\n{key}={value}\n").jobs[0].to_dict()["runtime_ns" if key == "runtime" else "ramp_ns"]
                value = draw(time_spellings(nanos))
            if key == "time_based" and draw(st.booleans()):
                line = "time_based=1"
            elif key in aliases and draw(st.booleans()):
                line = f"{aliases[key]}={value}"
            elif value:
                line = f"{key}{draw(st.sampled_from(['=', ' = ', '= ']))}{value}"
            if draw(st.integers(0, 5)) == 0:
                line += draw(st.sampled_from(["  ; note", " # note", "\t#"]))
            body.append(line)
        bodies.append(body)
    # Options every job spells the same way may live in [global] instead.
    shared = set(bodies[0]).intersection(*bodies[1:]) if bodies else set()
    lifted = sorted(line for line in shared if draw(st.booleans()))
    out = []
    if lifted:
        out += ["[global]", *lifted, ""]
    for block, body in zip(rendered, bodies):
        out.append(block[0])
        out += [line for line in body if line not in lifted]
        if draw(st.booleans()):
            out.append(draw(st.sampled_from(["", "; comment", "   ", "# [not a section]"])))
    return "\n".join(out) + draw(st.sampled_from(["", "\n"]))


@st.composite
def workloads(draw):
    count = draw(st.integers(1, 3))
    names = draw(st.lists(st.sampled_from(["a", "job1", "oltp data", "w-2", "x.y"]), min_size=count, max_size=count, unique=True))
    jobs = tuple(draw(fio_jobs(name)) for name in names)
    # The core bounds host I/Os outstanding over the whole workload (numjobs × iodepth summed).
    assume(sum(job.threads * job.iodepth for job in jobs) <= MAX_OUTSTANDING_IOS)
    return Workload(jobs, "fio", "")


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_round_trip_render_then_parse(data):
    workload = data.draw(workloads())
    text = data.draw(messy_fio_text(workload))
    parsed = parse_fio(text)
    assert parsed.jobs == workload.jobs, text
    assert parsed.text == text
    # and through the plain dict the Rust core reads
    assert Workload.from_dict(parsed.to_dict()) == parsed


# -- the error class, run-time overrides, and importing without the Rust extension -----------------


def test_workload_error_is_a_value_error_and_a_raidlab_error_when_built():
    assert issubclass(WorkloadError, ValueError)
    errors = pytest.importorskip("raidlab.errors")
    if hasattr(errors, "WorkloadError"):
        assert issubclass(WorkloadError, errors.WorkloadError)
        assert issubclass(WorkloadError, errors.RaidlabError)
    assert str(WorkloadError("two\nlines\r")) == "two lines "


def test_with_runtime_ns():
    timed = preset("oltp-innodb").with_runtime_ns(5 * SECOND)
    assert (timed.jobs[0].runtime_ns, timed.jobs[0].time_based) == (5 * SECOND, True)
    assert timed.tool == "preset" and timed.text == "oltp-innodb"
    untimed = preset("oltp-innodb").with_runtime_ns(0)
    assert (untimed.jobs[0].runtime_ns, untimed.jobs[0].time_based) == (0, False)
    sized = parse_fio("[j]\nsize=1g\n").with_runtime_ns(SECOND)
    assert (sized.jobs[0].runtime_ns, sized.jobs[0].time_based) == (SECOND, False)


def test_pure_python_without_the_extension(tmp_path):
    """The workload package imports and works with no raidlab._core at all."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import raidlab.workload

    package = tmp_path / "raidlab"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copytree(Path(raidlab.workload.__file__).parent, package / "workload")
    script = (
        "import sys, raidlab.workload as w\n"
        "assert 'raidlab._core' not in sys.modules\n"
        "assert w.WorkloadError.__mro__[1] is ValueError\n"
        "print(w.parse_fio('[j]\\nrw=randrw\\nbs=16k\\n').describe())\n"
        "try:\n    w.parse_sysbench('--bogus')\nexcept ValueError as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "randrw 50/50, 16 KiB, 1 thread × QD1, buffered"
    assert done.stdout.splitlines()[1].startswith("invalid sysbench option '--bogus'")
