"""The fuzz harness: arbitrary and mutated inputs on every Python input surface,
through the real command line (in-process, :func:`conftest.run_cli`).

Every run must end in success (exit 0) or in exactly one line ``raidlab: error: ...`` with exit
status 2 — never exit 1 (an internal error), a traceback, a hang. Surfaces: fio job files (as
files and as inline text), sysbench option strings, drive and designs TOML files, DiskSim
configurations and traces (``replay``), sfdisk JSON (``align``), fio JSON (``import``), and the
numbers of every float option. The parsers' own fuzzing (``parse_fio``/``parse_sysbench`` on
text and bytes) is in test_workload_fuzz.py; its strategies are reused here, not repeated.

Bounded time: each test has a fixed ``max_examples`` and a per-example ``deadline``. With
``CI=true`` the examples are fewer and derandomized (the same every run; the harness takes about
a minute); otherwise twice as many, random. ``RAIDLAB_FUZZ_SCALE=10`` multiplies the examples
for a deeper local search.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import math
import os
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any, List, Sequence

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO_ROOT, run_cli
from raidlab import _core
from raidlab.cli import cli
from raidlab.run import Design
from raidlab.workload import preset, render_fio
from raidlab.workload.presets import PRESETS
from test_workload_fuzz import fio_like, sysbench_like

CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
SCALE = float(os.environ.get("RAIDLAB_FUZZ_SCALE", "1"))
DISKSIM = REPO_ROOT / "data" / "disksim-valid"
#: Trace gaps (µs) the fuzzer draws: far past the core's 1 h cap per line and its nanosecond clock.
TRACE_GAP_MAX_US = 1e20


def fuzz(examples: int):
    """Settings for one surface: ``examples`` in CI, twice that locally (times SCALE)."""
    count = examples if CI else 2 * examples
    return settings(max_examples=max(1, int(count * SCALE)), deadline=timedelta(seconds=20),
                    derandomize=CI, database=None if CI else settings.default.database,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def ends_well(args: Sequence[str], findings: bool = False) -> int:
    """Runs ``raidlab ARGS``: exit 0, or exit 2 with exactly one ``raidlab: error:`` line (or,
    with ``findings``, exit 1 for a checker's finding: a report on stdout, nothing on stderr)."""
    run = run_cli(list(args))
    assert "Traceback" not in run.stderr, run.stderr
    assert run.status in ((0, 1, 2) if findings else (0, 2)), (args, run.status, run.stderr)
    if run.status == 1:
        assert run.stdout and not run.stderr, (args, run.stderr)
    if run.status == 2:
        lines = run.stderr_lines
        assert len(lines) == 1 and lines[0].startswith("raidlab: error: "), (args, run.stderr)
        assert "internal error" not in lines[0]
    elif "--json" in args:  # what is printed is strict JSON (no NaN, no Infinity)
        json.loads(run.stdout, parse_constant=_not_json)
    return run.status


def _not_json(constant: str) -> None:
    raise AssertionError(f"{constant} in a --json document")


SCRATCH = Path(tempfile.mkdtemp(prefix="raidlab-fuzz-"))
atexit.register(shutil.rmtree, SCRATCH, True)


def scratch(name: str, data: Any) -> str:
    """Writes ``data`` (text or bytes) to a scratch file and returns its path."""
    path = SCRATCH / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))
    return str(path)


# -- mutation: byte edits of a valid input ------------------------------------------------------

PIECES = [b"\xff", b"\x00", b"\xc3", b"[", b"]", b"=", b"\n", b"\r", b" ", b"#", b";", b"{", b"}", b'"',
          b",", b":", b"nan", b"inf", b"-1", b"0", b"1e400", b"99999999999999999999", b"%", b"k", b"\xe2\x80\xa8"]


@st.composite
def mutated(draw, bases: Sequence[bytes]) -> bytes:
    """One of ``bases`` with a few bytes replaced, inserted or deleted."""
    data = bytearray(draw(st.sampled_from(list(bases))))
    for _ in range(draw(st.integers(1, 6))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        kind = draw(st.integers(0, 2))
        if kind == 0:
            data[at:at + 1] = draw(st.sampled_from(PIECES))
        elif kind == 1:
            data[at:at] = draw(st.one_of(st.sampled_from(PIECES), st.binary(max_size=4)))
        else:
            del data[at:at + draw(st.integers(1, 16))]
    return bytes(data)


# -- fio job files and sysbench strings ---------------------------------------------------------

SIM = ["--drive", "null", "--level", "10", "--devices", "4", "--runtime-s", "0.002", "--max-time-s", "0.05"]
FIO_BASES = [render_fio(preset(name)).encode() for name in PRESETS] + [
    b"[global]\nioengine=libaio\ndirect=1\n[oltp]\nrw=randrw\nrwmixread=70\nbs=16k\niodepth=8\nnumjobs=4\n"
    b"size=64m\nruntime=1\ntime_based\n",
    b"[seq]\nrw=write\nbs=1m\nsize=16m\nfsync=4\n",
]


@fuzz(300)
@given(st.one_of(st.binary(max_size=600), mutated(FIO_BASES), fio_like().map(str.encode)))
def test_fio_job_files(data):
    ends_well(["sim", "--fio", scratch("job.fio", data), *SIM])


@fuzz(150)
@given(st.one_of(mutated(FIO_BASES), fio_like().map(str.encode)).map(lambda b: b.decode("utf-8", "replace")))
def test_fio_inline_job_text(text):
    ends_well(["sim", "--fio", text + "\n", *SIM])


@fuzz(200)
@given(st.one_of(sysbench_like(), st.text(max_size=120)))
def test_sysbench_strings(text):
    ends_well(["sim", "--sysbench", text, *SIM])


# -- drive and designs TOML files -------------------------------------------------------------------

TOML_VALUES = st.one_of(
    st.sampled_from(["nan", "-nan", "inf", "-inf", "0", "-1", "1e300", "1" + "0" * 40, "1.5", '"x"', "true",
                     "[1, 2]", "{a = 1}", "1979-05-27", '"hdd"', '"cheetah-10k7"', "0x10", "1_000"]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-2**70, 2**70).map(str),
)
DRIVE_KEYS = sorted({row[0] for kind in ("hdd", "ssd", "null") for row in _core.drive_parameters(kind)})


@st.composite
def drive_toml(draw) -> str:
    lines = []
    head = draw(st.sampled_from(['kind = "hdd"', 'kind = "ssd"', 'kind = "null"', 'kind = "tape"',
                                 'preset = "cheetah-10k7"', 'preset = "nope"', "kind = 3", ""]))
    lines.append(head)
    names = st.sampled_from(DRIVE_KEYS + ["rmp", "capacity", "kind", "[x]"])
    for _ in range(draw(st.integers(0, 5))):
        lines.append(f"{draw(names)} = {draw(TOML_VALUES)}")
    return "\n".join(lines) + "\n"


DRIVE_BASES = [b'kind = "hdd"\nrpm = 7200\ncapacity_bytes = 4e12\n', b'preset = "cheetah-10k7"\ncache_mib = 8\n']


@fuzz(250)
@given(st.one_of(drive_toml().map(str.encode), mutated(DRIVE_BASES), st.binary(max_size=200)))
def test_drive_files(data):
    ends_well(["sim", "--drive", scratch("drive.toml", data), "--preset", "wal", "--level", "1",
               "--devices", "2", "--runtime-s", "0.002", "--max-time-s", "0.05"])


DESIGN_VALUES = st.one_of(TOML_VALUES, st.sampled_from(
    ['"raid5"', "5", "10", "6", "2", "4", "64", '"md"', '"hw"', "false", '"null"', '"none"', '"n2"', '"f2"']))


@st.composite
def designs_toml(draw) -> str:
    keys = st.sampled_from([f.name for f in dataclasses.fields(Design)] + ["name", "chunk_kb", "devcies", "fio", "preset"])
    parts = []
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(["[defaults]", "[[defaults]]", "[default]"])))
        parts += [f"{draw(keys)} = {draw(DESIGN_VALUES)}" for _ in range(draw(st.integers(0, 2)))]
    for _ in range(draw(st.integers(0, 2))):
        parts.append(draw(st.sampled_from(["[[design]]", "[[design]]", "[design]", "[[desing]]"])))
        parts += [f"{draw(keys)} = {draw(DESIGN_VALUES)}" for _ in range(draw(st.integers(0, 3)))]
    parts.append("[[workload]]")
    parts.append(draw(st.sampled_from(['preset = "wal"', 'preset = "nope"', "preset = 3", 'sysbench = "--x"',
                                       'fio = "[j]\\nrw=read\\nsize=1m\\n"', 'name = "w"'])))
    return "\n".join(parts) + "\n"


@fuzz(120)
@given(designs_toml())
def test_designs_files(text):
    ends_well(["compare", "--designs", scratch("designs.toml", text), "--states", "optimal",
               "--runtime-s", "0.01"])


@fuzz(150)
@given(st.one_of(st.binary(max_size=300), mutated([b'[defaults]\ndrive = "null"\n[[design]]\nlevel = 5\n'])))
def test_designs_files_raw(data):
    ends_well(["compare", "--designs", scratch("designs.toml", data), "--states", "optimal",
               "--runtime-s", "0.01"])


# -- DiskSim configurations and traces --------------------------------------------------------------



@st.composite
def trace_text(draw) -> str:
    numbers = st.one_of(st.integers(-5, 20_000_000).map(str),
                        st.floats(-1, TRACE_GAP_MAX_US).map(repr),
                        st.sampled_from(["nan", "inf", "1e300", "-0", "x", ""]))
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        fields = [draw(st.sampled_from(["R", "W", "r", "X"])), draw(st.sampled_from(["Hit", "Miss", "hit"])),
                  draw(numbers), draw(numbers), draw(numbers), draw(numbers)]
        lines.append(" ".join(fields[: draw(st.integers(0, 7))]))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@fuzz(200)
@given(st.one_of(trace_text().map(str.encode), st.binary(max_size=200)))
def test_disksim_traces(data):
    ends_well(["replay", "--disksim", str(DISKSIM / "atlas10k.parv"), scratch("t.trace", data),
               "--limit", "20", "--json"])


@fuzz(150)
@given(mutated([(DISKSIM / "atlas10k.diskspecs").read_bytes()] if DISKSIM else [b""]))
def test_disksim_configurations(data):
    folder = SCRATCH / "disksim"
    folder.mkdir(exist_ok=True)
    for name in ("atlas10k.model", "atlas10k.seek"):
        if not (folder / name).exists():
            (folder / name).write_bytes((DISKSIM / name).read_bytes())
    (folder / "atlas10k.diskspecs").write_bytes(data)
    trace = scratch("short.trace", b"W Hit 4583176 4 663.0 45422.0\nR Miss 3962268 12 6657.0 64047.0\n")
    ends_well(["replay", "--disksim", str(folder / "atlas10k.diskspecs"), trace, "--json"])


def test_huge_trace_gap():
    # Was a core panic ('time ran backwards'): a gap past the u64 nanosecond clock.
    trace = scratch("gap.trace", b"W Hit 4583176 4 663.0 1e20\nR Hit 100 4 1 1e20\n")
    assert ends_well(["replay", "--disksim", str(DISKSIM / "atlas10k.parv"), trace, "--json"]) == 2


# -- JSON: sfdisk dumps (align) and fio output (import) ---------------------------------------------

JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.text(max_size=8),
                        st.floats(allow_nan=True, allow_infinity=True))
JSON_TREES = st.recursive(JSON_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=12)


@st.composite
def replaced(draw, base: Any, keys: Sequence[str]) -> Any:
    """``base`` (a JSON value) with the values at a few random paths replaced by random JSON, and
    sometimes a key from ``keys`` added to an object on the way."""
    document = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        node = document
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            parent = node
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
            node = node[key]
        if isinstance(node, dict) and draw(st.booleans()):
            node[draw(st.sampled_from(list(keys)))] = draw(JSON_TREES)
        elif node is not document:
            parent[key] = draw(JSON_TREES)
    return document


SFDISK = {"partitiontable": {"label": "gpt", "id": "A", "device": "/dev/sda", "unit": "sectors",
                             "first-lba": 34, "last-lba": 1953525134, "sectorsize": 512,
                             "partitions": [{"node": "/dev/sda1", "start": 2048, "size": 1953523087,
                                             "type": "0FC63DAF-8483-4772-8E79-3D69D8477DE4"}]}}
SFDISK_KEYS = ["partitiontable", "unit", "sectorsize", "partitions", "start", "size", "node", "label", "device"]


@fuzz(250)
@given(st.one_of(replaced(SFDISK, SFDISK_KEYS).map(lambda d: json.dumps(d).encode()),
                 JSON_TREES.map(lambda d: json.dumps(d).encode()),
                 mutated([json.dumps(SFDISK).encode()]), st.binary(max_size=100)),
       st.sampled_from([[], ["--chunk-kib", "64"], ["--level", "5", "--devices", "4"], ["--json"]]))
def test_sfdisk_json(data, options):
    ends_well(["align", scratch("dump.json", data), *options], findings=True)


FIO_STATS = {"io_bytes": 65536, "io_kbytes": 64, "bw_bytes": 65536, "bw": 64, "iops": 16.0, "runtime": 1000,
             "total_ios": 16, "short_ios": 0, "drop_ios": 0,
             "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
             "clat_ns": {"min": 100, "max": 900, "mean": 500.0, "stddev": 1.0, "N": 16,
                         "percentile": {"50.000000": 500, "99.000000": 900, "99.900000": 900}},
             "lat_ns": {"min": 100, "max": 900, "mean": 500.0, "stddev": 1.0, "N": 16}}
FIO_DOC = {"fio version": "fio-3.33", "time": "Thu Jan  1 00:00:00 2026", "global options": {},
           "jobs": [{"jobname": "j", "groupid": 0, "error": 0, "elapsed": 1, "read": FIO_STATS, "write": FIO_STATS,
                     "sync": {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "N": 0}}}],
           "disk_util": [{"name": "sda", "read_ios": 16, "write_ios": 16, "util": 50.0}]}
FIO_KEYS = ["jobs", "client_stats", "disk_util", "raidlab", "read", "write", "sync", "trim", "iops", "clat_ns",
            "percentile", "N", "simulated_ns", "phases", "rebuild", "data_loss", "jobname", "fio version"]


@pytest.fixture(scope="module")
def simulated_doc():
    run = run_cli(["sim", "--preset", "wal", "--drive", "null", "--level", "5", "--devices", "4",
                   "--runtime-s", "0.3", "--fail", "1@0.1s", "--replace", "1@0.15s", "--json"])
    assert run.status == 0, run.stderr
    return run.json()


@fuzz(250)
@given(data=st.data())
def test_fio_json(simulated_doc, data):
    base = data.draw(st.sampled_from([FIO_DOC, simulated_doc]))
    text = data.draw(st.one_of(replaced(base, FIO_KEYS).map(lambda d: json.dumps(d)),
                               JSON_TREES.map(json.dumps), st.text(max_size=100)))
    prefix = data.draw(st.sampled_from(["", "fio: some error line\n", "$ fio --output-format=json\n"]))
    ends_well(["import", scratch("run.json", prefix + text), *data.draw(st.sampled_from([[], ["--json"]]))])


# -- numbers on the command line ----------------------------------------------------------------

NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "NaN", "-nan", "inf", "+inf", "-inf", "Infinity", "1e309", "-1e309", "1e-400", "-0",
                     "0", "0x10", "1_000", "", " 1 ", "١٢", "1e300", "-1", "0.5", "3", "100"]),
    st.integers(-10**30, 10**30).map(str),
    st.text(max_size=6),
)
FLOAT_OPTIONS = [(name, param) for name, command in sorted(cli.commands.items()) for param in command.params
                 if isinstance(param.type, click.types.FloatParamType)]


@fuzz(400)
@given(st.sampled_from(FLOAT_OPTIONS), NUMBER_TEXT)
def test_float_options_parse_to_finite_in_range_or_refuse(option, text):
    """Every float option of every command, parsed (not run: a plan takes seconds): a finite value
    inside its declared range, or a usage error (one line, exit 2, through raidlab.cli.main)."""
    name, param = option
    command = cli.commands[name]
    flag = param.opts[0]
    try:
        value = param.type.convert(text, param, None)
    except click.BadParameter:
        return
    assert isinstance(value, float) and math.isfinite(value), (name, flag, text, value)
    low, high = param.type.min, param.type.max
    assert low <= value <= high and not (param.type.min_open and value == low), (name, flag, text, value)
    assert not (param.type.max_open and value == high), (name, flag, text, value)
    assert command is not None


CHEAP_RUNS = {
    "sim": ["sim", "--preset", "wal", "--drive", "null", "--devices", "2", "--level", "1"],
    "reliability": ["reliability", "--level", "5", "--devices", "4", "--trials", "0"],
}


@fuzz(250)
@given(st.sampled_from([(n, p) for n, p in FLOAT_OPTIONS if n in CHEAP_RUNS]), NUMBER_TEXT)
def test_float_options_run(option, text):
    name, param = option
    args: List[str] = list(CHEAP_RUNS[name])
    if name == "sim" and param.name != "runtime_s":
        args += ["--runtime-s", "0.002"]
    if name == "sim" and param.name == "runtime_s":
        args += ["--max-time-s", "0.05"]
    ends_well(args + [f"{param.opts[0]}={text}"])


@fuzz(150)
@given(st.sampled_from(["runtime_s", "seed", "speed_limit_min", "speed_limit_max", "rebuild_priority",
                        "controller", "scheduler"]), NUMBER_TEXT)
def test_sim_opt_values(key, text):
    """``reliability --sim-opt KEY=VALUE`` (parsed, not run): the setting's declared value or one line."""
    from raidlab.errors import ConfigError
    from raidlab.run import _convert  # where every setting's value is checked against its declaration

    try:
        value = _convert(key, text, "--sim-opt ")
    except ConfigError as error:
        assert "\n" not in str(error)
        return
    assert isinstance(value, str) or math.isfinite(value), (key, text, value)
