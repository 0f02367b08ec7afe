"""Fuzzing: whatever text or bytes the parsers get, they either return a valid workload or raise
WorkloadError with a one-line message, never anything else."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raidlab.workload import Workload, WorkloadError, parse_fio, parse_sysbench, render_fio
from raidlab.workload.fio import IGNORED_OPTIONS as FIO_IGNORED
from raidlab.workload.fio import SUPPORTED_OPTIONS as FIO_SUPPORTED
from raidlab.workload.sysbench import IGNORED_OPTIONS as SB_IGNORED
from raidlab.workload.sysbench import SUPPORTED_OPTIONS as SB_SUPPORTED

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(parse, value) -> None:
    """``parse(value)`` returns a consistent workload or raises a one-line WorkloadError."""
    try:
        workload = parse(value)
    except WorkloadError as error:
        message = str(error)
        assert message and "\n" not in message and "\r" not in message, repr(message)
        assert len(message) < 2000
        return
    assert isinstance(workload, Workload) and workload.jobs
    data = workload.to_dict()
    json.dumps(data)  # plain data only
    assert Workload.from_dict(data) == workload
    workload.describe()
    if workload.tool == "fio":
        # whatever was read back can be written back, or is refused with a WorkloadError
        try:
            text = render_fio(workload)
        except WorkloadError:
            return
        assert parse_fio(text).jobs == workload.jobs


# -- raw text and bytes ---------------------------------------------------------------------------


@FUZZ
@given(st.text())
def test_fio_arbitrary_text(text):
    check(parse_fio, text)


@FUZZ
@given(st.binary())
def test_fio_arbitrary_bytes(data):
    check(parse_fio, data)


@FUZZ
@given(st.text())
def test_sysbench_arbitrary_text(text):
    check(parse_sysbench, text)


@FUZZ
@given(st.binary())
def test_sysbench_arbitrary_bytes(data):
    check(parse_sysbench, data)


@FUZZ
@given(st.lists(st.text(max_size=30), max_size=8))
def test_sysbench_arbitrary_argument_lists(args):
    check(parse_sysbench, args)


# -- text that looks like the real thing, so the fuzzer gets past the first check ------------------

VALUE_PIECES = st.sampled_from(
    [
        "", "0", "1", "-1", "4k", "4K", "4KiB", "16k", "1m", "1M", "1g", "2G", "512", "1000", "0x200", "100%", "50%",
        "1.5", "30", "30s", "500ms", "2m", "1h", "10sec", "read", "write", "randread", "randwrite", "rw", "randrw",
        "trim", "randread:8", "4k/50:8k/30:64k", "4k/50:8k/60", "4k,8k", ",8k", "zipf:1.2", "zipf:1", "pareto:0.5",
        "normal:5", "normal:5:0.5", "zoned:50/50", "random", "libaio", "psync", "io_uring", "mmap", "poisson",
        "linear", "1024", "99999999999999999999999", "(1+1)", ":", "/", ",", "%", "\t", " ", "é", "\x00", "\u2028",
    ]
)


@st.composite
def fio_like(draw):
    names = st.sampled_from(list(FIO_SUPPORTED) + list(FIO_IGNORED) + ["readwrite", "ba", "io_limit", "nrfiles", "foo", "include"])
    lines = []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            lines.append(draw(st.sampled_from(["[global]", "[job]", "[j2]", "[", "[]", "[globalx]", "[a b]"])))
        elif kind == 1:
            lines.append(draw(st.sampled_from(["", "; c", "# c", "  ", "\r"])))
        elif kind == 2:
            lines.append(draw(names))
        else:
            value = "".join(draw(st.lists(VALUE_PIECES, min_size=1, max_size=3)))
            lines.append(f"{draw(names)}{draw(st.sampled_from(['=', ' = ']))}{value}")
    if draw(st.booleans()):
        lines.insert(0, "[job]")
    return "\n".join(lines)


@FUZZ
@given(fio_like())
def test_fio_like_text(text):
    check(parse_fio, text)


@st.composite
def sysbench_like(draw):
    names = st.sampled_from(list(SB_SUPPORTED) + list(SB_IGNORED) + ["file_test_mode", "foo", "help", "config-file"])
    values = st.sampled_from(
        ["", "0", "1", "-1", "16", "1.5", "inf", "nan", "2G", "16K", "1000", "2X", "on", "off", "maybe", "sync", "async",
         "mmap", "direct", "dsync", "direct,sync", "rndrw", "seqwr", "seqrd", "rndrd", "rndwr", "seqrewr", "fileio",
         "fdatasync", "99999999999", "'quoted'", "\"", "é"]
    )
    words = []
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.integers(0, 6))
        if kind == 0:
            words.append(draw(st.sampled_from(["sysbench", "fileio", "run", "prepare", "-t", "--", "oltp"])))
        elif kind == 1:
            words.append(f"--{draw(names)}")
        else:
            words.append(f"--{draw(names)}={draw(values)}")
    if draw(st.booleans()):
        words.append("--file-test-mode=" + draw(st.sampled_from(["rndrw", "seqwr", "rndrd"])))
    return " ".join(words)


@FUZZ
@given(sysbench_like())
def test_sysbench_like_text(text):
    check(parse_sysbench, text)
