"""Issue 21, section 2 (the Python input side): every input a user gives ends in success or in
exactly one line ``raidlab: error: ...`` with exit status 2 — never a hang, a traceback or an
internal error. Each test here failed before the fix it names."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import click
import pytest

from conftest import REPO_ROOT, refused, run_bounded, run_cli
from raidlab.cli import cli
from raidlab.commands.numbers import FiniteFloat
from raidlab.inputs import LIMITS, MAX_NESTING

DISKSIM = REPO_ROOT / "data" / "disksim-valid"
JOB = "[j]\nrw=randread\nbs=4k\nsize=16m\n"
QUICK = ["--drive", "null", "--runtime-s", "0.01"]




# -- 1. one reader: only regular files, never blocking, capped, strict UTF-8 ------------------------


def _surfaces(path: str) -> List[List[str]]:
    """Every command line that reads a user file, reading ``path`` (a name ending .toml is
    needed where the suffix selects the kind of file)."""
    toml = path if path.endswith(".toml") else None
    lines = [["sim", "--fio", path, *QUICK],
             ["align", path],
             ["import", path],
             ["calibrate", "--sweep", path, "--out", "-"],
             ["replay", "--disksim", path, "trace"]]
    if toml:
        lines += [["sim", "--drive", toml, "--preset", "wal", "--runtime-s", "0.01"],
                  ["compare", "--designs", toml],
                  ["plan", "--capacity-tb", "1", "--preset", "wal", "--drive", toml]]
    return lines


@pytest.fixture
def special_files(tmp_path):
    """A FIFO and /dev/zero, each also under a .toml name (symlinks: the reader follows them)."""
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.toml"
    zero.symlink_to("/dev/zero")
    return {"FIFO": str(fifo), "character device": str(zero)}


@pytest.mark.parametrize("kind", ["FIFO", "character device"])
def test_fifos_and_devices_are_refused_without_blocking(special_files, kind):
    # Before: a FIFO blocked forever in open(); /dev/zero was read until memory ran out.
    for args in _surfaces(special_files[kind]):
        started = time.monotonic()
        refused(run_bounded(args), f"it is a {kind}, not a regular file")
        assert time.monotonic() - started < 20


def test_dev_zero_itself_is_refused():
    refused(run_bounded(["sim", "--fio", "/dev/zero", *QUICK]),
            "cannot read fio job file /dev/zero: it is a character device, not a regular file")


def test_a_directory_is_refused_by_name(tmp_path):
    for args in _surfaces(str(tmp_path)):
        refused(run_cli(args), "it is a directory, not a regular file")


def test_sizes_are_capped_per_kind(tmp_path):
    big = tmp_path / "big.fio"
    with open(big, "wb") as handle:
        handle.truncate(LIMITS["fio job file"] + 1)  # sparse: costs no disk
    refused(run_cli(["sim", "--fio", str(big), *QUICK]), "larger than the 16 MiB limit for a fio job file")
    trace = tmp_path / "big.trace"
    with open(trace, "wb") as handle:
        handle.truncate(LIMITS["DiskSim trace"] + 1)
    (tmp_path / "x.parv").write_text("")
    refused(run_cli(["replay", "--disksim", str(tmp_path / "x.parv"), str(trace)]),
            "larger than the 64 MiB limit for a DiskSim trace")


def test_a_file_at_the_cap_is_read(tmp_path):
    job = tmp_path / "padded.fio"
    text = JOB + ";" * (LIMITS["fio job file"] - len(JOB) - 1) + "\n"
    job.write_text(text)
    assert run_cli(["sim", "--fio", str(job), *QUICK]).status == 0


@pytest.mark.parametrize("args_of, content", [
    (lambda p: ["sim", "--fio", p, *QUICK], b"[j]\nrw=read\n; caf\xe9\n"),
    (lambda p: ["sim", "--drive", p, "--preset", "wal"], b'kind = "hdd"\n# caf\xe9\n'),
    (lambda p: ["compare", "--designs", p], b'[[design]]\nname = "caf\xe9"\n'),
    (lambda p: ["align", p], b'{"partitiontable": {"x": "caf\xe9"}}'),
    (lambda p: ["calibrate", "--sweep", p, "--out", "-"], b'{"sweep": "caf\xe9"}'),
])
def test_non_utf8_files_are_refused_with_the_byte_offset(tmp_path, args_of, content):
    # Before: UnicodeDecodeError, exit 1 (an internal error), or "not a text file" with no place.
    path = tmp_path / "input.toml"
    path.write_bytes(content)
    offset = content.index(b"\xe9")
    line = content[:offset].count(b"\n") + 1
    refused(run_cli(args_of(str(path))), f"is not UTF-8 text: byte 0xe9 at offset {offset} (line {line})")


def test_non_utf8_trace_is_refused(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_bytes(b"0.0 0 1000 8 1\n\xff\n")
    refused(run_cli(["replay", "--disksim", str(DISKSIM / "atlas10k.parv"), str(trace)]),
            "DiskSim trace", "byte 0xff at offset 15 (line 2)")


def test_a_fifo_named_by_a_disksim_file_is_refused(tmp_path):
    for name in ("atlas10k.parv", "atlas10k.diskspecs", "atlas10k.seek", "atlas10k.trace"):
        (tmp_path / name).symlink_to(DISKSIM / name)
    os.mkfifo(tmp_path / "atlas10k.model")
    refused(run_bounded(["replay", "--disksim", str(tmp_path / "atlas10k.parv"), str(tmp_path / "atlas10k.trace")]),
            "atlas10k.model: it is a FIFO, not a regular file")


def test_a_fifo_in_a_sysfs_copy_is_refused(tmp_path):
    # Before: align --sysfs-root read every attribute with open(), which blocks on a FIFO.
    queue = tmp_path / "block" / "sdx" / "queue"
    queue.mkdir(parents=True)
    os.mkfifo(queue / "logical_block_size")
    refused(run_bounded(["align", "--device", "sdx", "--sysfs-root", str(tmp_path)]),
            "cannot read sysfs attribute", "logical_block_size: it is a FIFO, not a regular file")


@pytest.mark.parametrize("text, fragment", [
    ("", "t.trace: trace has no requests"),
    ("# only a comment\n\n", "t.trace: trace has no requests"),
    ("W Hit 4583176 4 0 1\n", "t.trace: every measured service time is 0"),
    ("W Hit 4583176 4 663.0 1\nR Hit 100 4 1e300 5\n", "t.trace:2: service time '1e300' is not 0 to"),
])
def test_degenerate_traces_are_refused(tmp_path, text, fragment):
    # Before: exit 0 with "demerit: nan ms (nan %)", or Infinity in the --json document.
    trace = tmp_path / "t.trace"
    trace.write_text(text)
    refused(run_cli(["replay", "--disksim", str(DISKSIM / "atlas10k.parv"), str(trace), "--json"]), fragment)


# -- 2. numbers: finite and inside the declared range, on the command line and in files -------------


@pytest.mark.parametrize("args, option", [
    (["sim", "--preset", "wal", "--drive", "null", "--runtime-s", "nan"], "--runtime-s"),
    (["sim", "--preset", "wal", "--drive", "null", "--max-time-s", "nan"], "--max-time-s"),
    (["sim", "--preset", "wal", "--drive", "null", "--runtime-s", "inf"], "--runtime-s"),
    (["compare", "--runtime-s", "nan"], "--runtime-s"),
    (["plan", "--capacity-tb", "nan", "--preset", "wal"], "--capacity-tb"),
    (["plan", "--capacity-tb", "1", "--preset", "wal", "--min-iops", "nan"], "--min-iops"),
    (["plan", "--capacity-tb", "1", "--preset", "wal", "--budget", "-inf"], "--budget"),
    (["reliability", "--level", "5", "--devices", "4", "--afr-pct", "nan"], "--afr-pct"),
    (["reliability", "--level", "5", "--devices", "4", "--uber", "inf"], "--uber"),
    (["align", "-", "--io-kib", "nan"], "--io-kib"),
    (["replay", "--disksim", "x.parv", "t", "--published-ms", "nan"], "--published-ms"),
])
def test_nan_and_inf_are_refused_on_the_command_line(args, option):
    # Before: --max-time-s nan ran nothing and exited 0; --runtime-s nan was an internal error.
    refused(run_cli(args), f"Invalid value for '{option}'", "is not a finite number")


@pytest.mark.parametrize("args, option, shown", [
    (["plan", "--capacity-tb", "1e300", "--preset", "wal"], "--capacity-tb", "0<x<=1000000.0"),
    (["reliability", "--level", "5", "--devices", "4", "--afr-pct", "-1"], "--afr-pct", "0<x<100"),
    (["reliability", "--level", "5", "--devices", "4", "--capacity-tb", "-2"], "--capacity-tb", "0<x<=1000000.0"),
    (["reliability", "--level", "5", "--devices", "4", "--mission-years", "1e9"], "--mission-years", "0<x<=100"),
    (["plan", "--capacity-tb", "1", "--preset", "wal", "--durability", "1"], "--durability", "0<x<1"),
])
def test_out_of_range_numbers_name_the_range(args, option, shown):
    # Before: plan --capacity-tb 1e300 overflowed (exit 1); the others had no range in the message.
    refused(run_cli(args), f"Invalid value for '{option}'", shown)


@pytest.mark.parametrize("option, fragment", [
    ("runtime_s=1e400", "--sim-opt runtime_s=inf is not a finite number"),
    ("runtime_s=nan", "--sim-opt runtime_s=nan is not a finite number"),
    ("speed_limit_min=5.5", "--sim-opt speed_limit_min=5.5 is not a whole number"),
    ("rebuild_priority=1000", "--sim-opt rebuild_priority=1000 is out of range 1..100"),
    ("seed=\u0661", "--sim-opt seed='\u0661' is not a whole number"),
    ("cache_mib=1_0", "--sim-opt cache_mib='1_0' is not a whole number"),
    ("devices=5", "--sim-opt devices: set by reliability's own options"),
    ("level=6", "--sim-opt level: set by reliability's own options"),
])
def test_sim_options_take_the_sim_declarations(option, fragment):
    # Before: runtime_s=1e400 simulated forever; nan ran and blamed the run time; 5.5 became 5;
    # '\u0661' and '1_0' were read as numbers by int(); devices=5 was an internal TypeError (exit 70).
    refused(run_bounded(["reliability", "--level", "5", "--devices", "4", "--trials", "0",
                         "--rebuild-from-sim", "--drive", "null", "--sim-opt", option]), fragment)


def test_every_float_option_is_finite_and_bounded():
    """The one declaration: every float option of every command is a FiniteFloat with both ends."""
    checked = 0
    for name, command in cli.commands.items():
        for param in command.params:
            if isinstance(param.type, click.types.FloatParamType):
                assert isinstance(param.type, FiniteFloat), f"{name} --{param.name} is {param.type!r}"
                assert param.type.min is not None and param.type.max is not None, f"{name} --{param.name}"
                checked += 1
    assert checked >= 25


@pytest.mark.parametrize("line, fragment", [
    ("capacity_bytes = nan", "'capacity_bytes' must be a finite number, got nan"),
    ("capacity_bytes = -inf", "'capacity_bytes' must be a finite number, got -inf"),
    ("rpm = 1" + "0" * 400, "'rpm' is too large"),
    ('rpm = "fast"', "'rpm' must be a number, got str 'fast'"),
])
def test_drive_file_numbers_are_finite(tmp_path, line, fragment):
    # Before: NaN and inf reached the core, a 400-digit integer raised OverflowError (exit 1).
    drive = tmp_path / "d.toml"
    drive.write_text(f'kind = "hdd"\n{line}\n')
    refused(run_cli(["sim", "--drive", str(drive), "--preset", "wal", "--runtime-s", "0.01"]), fragment)


# -- 3. designs files: the document's shape is checked -----------------------------------------------


@pytest.mark.parametrize("text, fragment", [
    ("[[defaults]]\ndrive = 'null'\n[[design]]\nlevel = 5\n",
     "[defaults] must be one table, written [defaults], not [[defaults]]"),
    ("[[desing]]\nlevel = 5\n[[design]]\nlevel = 10\n",
     "unknown table [desing] (did you mean [[design]]?)"),
    ("[default]\ndrive = 'null'\n[[design]]\nlevel = 5\n", "unknown table [default] (did you mean [defaults]?)"),
    ("[[design]]\nlevel = 5\nchunk_kb = 64\n", "design 'design1': unknown key 'chunk_kb' (did you mean 'chunk_kib'?)"),
    ("[defaults]\ndrvie = 'null'\n[[design]]\nlevel = 5\n", "[defaults]: unknown key 'drvie' (did you mean 'drive'?)"),
    ("[[design]]\nname = 'a'\ndevices = '4'\n", "design 'a': 'devices' must be an integer, got a string '4'"),
    ("[[design]]\nbbu = 1\n", "'bbu' must be a boolean, got an integer 1"),
    ("[[design]]\nchunk_kib = 3\n", "'chunk_kib': 3 is not in the range 4<=x<=1048576"),
    ("[[design]]\ncontroller = 'raid'\n", "'controller': 'raid' is not one of 'md', 'hw'"),
    ("[design]\nlevel = 5\n", "[design] must be an array of tables, written [[design]]"),
    ("[[design]]\nlevel = 5\n[[workload]]\nnmae = 'x'\npreset = 'wal'\n",
     "[[workload]] 1: unknown key 'nmae' (did you mean 'name'?)"),
    ("[[design]]\nlevel = 5\n[[workload]]\npreset = 7\n", "[[workload]] 1: 'preset' must be a string"),
    ("x = " + "[" * 200 + "]" * 200 + "\n", "nested more than 64 levels deep"),
    ("x = " + "[" * 50_000 + "]" * 50_000 + "\n", "nested more than 64 levels deep"),
])
def test_designs_file_shape_is_checked(tmp_path, text, fragment):
    # Before: [[defaults]] was an internal error (exit 1); misspelt tables were silently ignored.
    designs = tmp_path / "designs.toml"
    designs.write_text(text)
    refused(run_cli(["compare", "--designs", str(designs)]), f"designs file {designs}", fragment)


def test_a_valid_designs_file_still_runs(tmp_path):
    designs = tmp_path / "designs.toml"
    designs.write_text("[defaults]\ndrive = 'null'\ncontroller = 'md'\n[[design]]\nname = 'r5'\nlevel = 'raid5'\n"
                       "devices = 4\nchunk_kib = 64\nbbu = false\n[[workload]]\nname = 'w'\npreset = 'wal'\n")
    run = run_cli(["compare", "--designs", str(designs), "--states", "optimal", "--runtime-s", "0.01"])
    assert run.status == 0, run.stderr
    assert "r5" in run.stdout


# -- 4. JSON: nesting capped at the loading root; fio JSON fields validated by path -------------------


def test_deeply_nested_sfdisk_json_is_refused(tmp_path):
    # Before: RecursionError, exit 1.
    dump = tmp_path / "deep.json"
    dump.write_text("[" * 100_000 + "]" * 100_000)
    refused(run_cli(["align", str(dump)]), f"nested more than {MAX_NESTING} levels deep")
    shallow = tmp_path / "shallow.json"
    shallow.write_text('{"partitiontable": {"x": ' + "[" * 80 + "]" * 80 + "}}")
    refused(run_cli(["align", str(shallow)]), f"nested more than {MAX_NESTING} levels deep")


def test_deeply_nested_fio_json_is_refused(tmp_path):
    doc = tmp_path / "deep.json"
    doc.write_text('{"jobs": [{"x": ' + "[" * 900 + "]" * 900 + "}]}")
    refused(run_cli(["import", str(doc)]), f"nested more than {MAX_NESTING} levels deep")
    deeper = tmp_path / "deeper.json"
    deeper.write_text('{"jobs": ' + "[" * 100_000 + "]" * 100_000 + "}")
    refused(run_cli(["import", str(deeper)]), f"nested more than {MAX_NESTING} levels deep")


def _fio_doc(**read) -> dict:
    stats = {"io_bytes": 4096, "bw_bytes": 4096, "bw": 4, "iops": 1.0, "runtime": 1000, "total_ios": 1,
             "clat_ns": {"min": 1, "max": 2, "mean": 1.5, "N": 1, "percentile": {"50.000000": 1}}}
    stats.update(read)
    # fio writes every direction's section; an idle one counts zeros.
    idle = {"io_bytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}
    return {"fio version": "fio-3.33", "jobs": [{"jobname": "j", "read": stats, "write": idle}]}


@pytest.mark.parametrize("doc, fragment", [
    ('{"jobs": [{"read": {"iops": NaN, "total_ios": 1}}]}', "jobs[0].read.iops is NaN, which is not a JSON number"),
    (json.dumps(_fio_doc(iops=-5)), "jobs[0].read.iops must be a finite number of at least 0, got -5"),
    (json.dumps(_fio_doc(iops=1e400)), "jobs[0].read.iops is Infinity, which is not a JSON number"),
    ('{"jobs": [{"usr_cpu": -Infinity}]}', "jobs[0].usr_cpu is -Infinity, which is not a JSON number"),
    (json.dumps(_fio_doc(clat_ns={"percentile": {"50.000000": "fast"}})),
     'jobs[0].read.clat_ns.percentile.50.000000 is not a number (got "fast")'),
    (json.dumps(_fio_doc(runtime=None)), "jobs[0].read.runtime is not a number (got null)"),
    (json.dumps({"jobs": [{"read": {"total_ios": 1}}], "disk_util": [{"name": "sda", "queue_depth_mean": "x"}]}),
     "disk_util[0].queue_depth_mean is not a number"),
    (json.dumps({**_fio_doc(), "raidlab": {"simulated_ns": 5, "seed": 1, "version": "x"}}),
     "raidlab.truncated is missing"),
    (json.dumps({**_fio_doc(), "raidlab": {"simulated_ns": 5, "events": 1, "seed": 1, "version": "x",
                                           "truncated": None}, "rebuild": {"member": 0, "extrapolated": False}}),
     "rebuild.start_s is not a number"),
])
def test_fio_json_fields_are_checked_by_path(tmp_path, doc, fragment):
    # Before: NaN and negative IOPS were imported; missing or mistyped fields were exit 1.
    path = tmp_path / "run.json"
    path.write_text(doc)
    refused(run_cli(["import", str(path)]), "fio JSON: " + fragment)


def test_calibration_sweep_numbers_are_checked(tmp_path):
    row = {"rw": "randread", "bs": 4096, "iodepth": 1, "iops": float("nan"), "bw_bytes": 1, "lat_mean_ns": 1,
           "lat_min_ns": 1, "percentiles": {}, "sync_mean_ns": 0, "runtime_s": 1}
    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps({"sweep": [row], "span_bytes": 1 << 30}))
    refused(run_cli(["calibrate", "--sweep", str(sweep), "--out", str(tmp_path / "d.toml")]),
            "sweep[0].iops must be a finite number, got nan")
    row["iops"], row["bs"] = 1, "big"
    sweep.write_text(json.dumps({"sweep": [row], "span_bytes": 1 << 30}))
    refused(run_cli(["calibrate", "--sweep", str(sweep), "--out", str(tmp_path / "d.toml")]),
            "sweep[0].bs must be a number, got str 'big'")


# -- 5. --fio: an existing path always wins --------------------------------------------------------


def test_fio_path_with_brackets_is_a_path(tmp_path):
    # Before: any value holding '[' was parsed as inline job text.
    folder = tmp_path / "jobs[1]"
    folder.mkdir()
    job = folder / "oltp[a].fio"
    job.write_text(JOB)
    run = run_cli(["sim", "--fio", str(job), *QUICK, "--json"])
    assert run.status == 0, run.stderr
    assert run.json()["raidlab"]["config"]["workload"]["source"]["text"] == JOB


def test_fio_inline_text_needs_a_newline():
    assert run_cli(["sim", "--fio", JOB, *QUICK]).status == 0
    refused(run_cli(["sim", "--fio", "[j]", *QUICK]), "cannot read fio job file [j]: No such file or directory")


# -- 6. Ctrl-C: one line, status 130 -------------------------------------------------------------


def _children(pid: int) -> List[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to see the pool start")
def test_plan_with_jobs_answers_ctrl_c_with_one_line():
    # Before: click turned Ctrl-C into "aborted" (exit 1) after an empty line; workers could
    # print their own KeyboardInterrupt tracebacks.
    process = subprocess.Popen([sys.executable, "-m", "raidlab", "plan", "--capacity-tb", "40", "--preset",
                                "oltp-innodb", "--jobs", "2", "--max-drives", "24"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(_children(process.pid)) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert process.poll() is None, "the plan ended before it could be interrupted"
        time.sleep(1.0)  # well inside the simulations
        os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole process group
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert err == "raidlab: error: interrupted\n"


def test_import_says_when_fio_reports_a_failed_job_no_io_or_trims(tmp_path):
    """A review found a job with fio's error 5, a run where fio started nothing and a trim job
    all imported as clean tables with nothing said."""
    def imported(doc: dict) -> str:
        path = tmp_path / "run.json"
        path.write_text(json.dumps(doc))
        run = run_cli(["import", str(path)])
        assert run.status == 0, run.stderr
        as_json = run_cli(["import", str(path), "--json"])
        # The table lists the notes; with --json, they go to stderr.
        assert [line[len("note: "):] for line in run.stdout.splitlines() if line.startswith("note: ")] == \
            [line.split(f"{path}: ", 1)[1] for line in as_json.stderr.splitlines()]
        return run.stdout

    assert "note:" not in imported(_fio_doc())  # a clean run: nothing to say
    failed = _fio_doc()
    failed["jobs"][0]["error"] = 5
    assert "job 'j' ended with fio error 5 (Input/output error)" in imported(failed)
    nothing = _fio_doc(total_ios=0, io_bytes=0, bw_bytes=0, bw=0, iops=0.0)
    assert "job 'j' did no I/O" in imported(nothing)
    trims = _fio_doc()
    trims["jobs"][0]["trim"] = {"io_bytes": 8192, "bw_bytes": 8192, "bw": 8, "iops": 2.0, "runtime": 1000,
                                "total_ios": 2, "clat_ns": {"min": 1, "max": 2, "mean": 1.5, "N": 2}}
    assert "job 'j' trimmed 2 times" in imported(trims)
    # The notes go with the document too (raidlab measure runs through the same import).
    from raidlab.measure import importer

    assert any("ended with fio error 5" in n for n in importer.to_document(failed)["raidlab"]["notes"])
    # A block's notes must be a list of lines (a string used to be printed a letter a line).
    failed["raidlab"] = {"source": "measured", "notes": "oops"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(failed))
    refused(run_cli(["import", str(path)]), "raidlab.notes is not a list of strings")
