"""Fuzz: for any ``--target`` name, raidlab refuses it or fio opens exactly the path it checked.

The invariant, over names built from the characters fio rewrites (``; # $ { } \\ :``, blanks,
CR, newlines, control characters, NUL, non-ASCII): either ``raidlab measure`` refuses the name
(exit 2, one ``raidlab: error:`` line; a :class:`ConfigError` from the API), or the job file's
``filename=`` value, read by fio's rules (:func:`raidlab.measure.fio_target.fio_reads`), is the
very path :func:`raidlab.measure.safety.inspect` inspected, the name made absolute in the
current directory. With fio installed, the model of fio's rules is itself checked against
``fio --parse-only --debug=file`` (fio prints ``add file NAME`` for each file it will open).

Bounded time: fixed ``max_examples`` (fewer and derandomized under ``CI=true``, times
``RAIDLAB_FUZZ_SCALE``), as tests/test_fuzz_inputs.py does; the real-fio checks run a handful.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from raidlab.errors import ConfigError
from raidlab.measure import fio_target, jobfile, safety
from raidlab.terminal import printable
from raidlab.workload import parse_fio

CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
SCALE = float(os.environ.get("RAIDLAB_FUZZ_SCALE", "1"))
FIO = shutil.which("fio")
#: Environment for the real fio (and the model): ${VICTIM} names a file that must not be hit.
FIO_ENV = {"VICTIM": "/victim", "HOME": "/home-dir", "EMPTY": ""}


def bounded(examples: int):
    count = examples if CI else 2 * examples
    return settings(max_examples=max(1, int(count * SCALE)), deadline=timedelta(seconds=20),
                    derandomize=CI, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


PIECES = [";", "#", "$", "{", "}", "${", "${VICTIM}", "${}", "$ncpus", "$pagesize", "\\", "\\:", ":",
          " ", "\t", "\r", "\n", "\x01", "\x7f", "\x00", "é", "\udcff", "\u0085", "=", ",", "-", "'",
          "[", "]", "a", "b", "x.img", ".", "..", "/", "include", "filename="]
names = st.one_of(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join),
    st.text(alphabet=";#${}\\: \t\r\n\x01ab.-=é", min_size=1, max_size=12),
)

WORKLOAD = parse_fio("[w]\nrw=randwrite\nbs=4k\nsize=64k\n")


def _value(job_text: str) -> str:
    lines = [line for line in job_text.split("\n") if line.startswith("filename=")]
    assert len(lines) == 1, job_text
    return lines[0][len("filename="):]


@bounded(150)
@given(name=names)
def test_a_target_is_refused_or_fio_opens_the_path_inspected(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    checked = name if os.path.isabs(name) else os.path.join(str(tmp_path), name)
    try:
        target = safety.inspect(name)
    except ConfigError as error:
        assert "\n" not in str(error) and str(error)
        return
    assert target.path == checked
    value = _value(jobfile.job_file(WORKLOAD, target.path, 65536))
    assert fio_target.fio_reads(value, FIO_ENV) == checked
    assert fio_target.fio_reads(value, {}) == checked


@bounded(60)
@given(name=names)
@example(name="$\x85")  # a C1 control character: printed escaped
def test_the_cli_refuses_a_target_or_writes_the_checked_path(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = run_cli(["measure", "--target", name, "--fio", "[w]\nrw=read\nbs=4k\nsize=64k\n", "--dry-run"])
    assert run.status in (0, 2), (run.status, run.stderr)
    if run.status == 2:
        assert len(run.stderr_lines) == 1 and run.stderr.startswith("raidlab: error: "), run.stderr
        return
    checked = name if os.path.isabs(name) else os.path.join(str(tmp_path), name)
    value = fio_target.resolve(name).value
    if printable(value) != value:
        # The terminal shows a control character in a name as its escape (raidlab.terminal):
        # the printed job spells the value escaped, not as the bytes fio is given.
        assert _value(run.stdout) == printable(value)
    else:
        assert fio_target.fio_reads(_value(run.stdout), FIO_ENV) == checked
    assert sorted(os.listdir(tmp_path)) == []


def _fio_opens(value: str, where: str):
    """The first file fio 3.33 would open for ``filename=value``, from its parse-only debug log
    (None when fio refuses the job)."""
    job = os.path.join(where, "job.fio")
    with open(job, "wb") as handle:
        handle.write(b"[global]\nfilename=" + value.encode("utf-8", "surrogateescape")
                     + b"\nsize=4k\n\n[j]\nrw=read\nioengine=sync\n")
    done = subprocess.run([FIO, "--parse-only", "--debug=file", job], cwd=where, capture_output=True,
                          timeout=30, stdin=subprocess.DEVNULL, env=dict(FIO_ENV, PATH=os.environ["PATH"]))
    for line in done.stdout.split(b"\n"):
        head, sep, name = line.partition(b" add file ")
        if sep and done.returncode == 0:
            return os.fsdecode(name)
    return None


@pytest.mark.skipif(FIO is None, reason="fio is not installed (make deps installs it)")
@bounded(12)
@given(value=names)
def test_the_model_of_fio_matches_the_real_fio(value):
    # bc (run by fio for a keyword next to + - * /) is not modelled: such values are refused.
    assume(not any(keyword in value for keyword in fio_target.FIO_KEYWORDS) and "\x00" not in value)
    with tempfile.TemporaryDirectory(prefix="raidlab-fio-model-") as where:
        opened = _fio_opens("/x/" + value, where)
        assume(opened is not None)
        assert opened == fio_target.fio_reads("/x/" + value, FIO_ENV)
        assert os.listdir(where) == ["job.fio"]


@pytest.mark.skipif(FIO is None, reason="fio is not installed (make deps installs it)")
@bounded(12)
@given(name=names)
def test_the_real_fio_opens_a_resolved_target_as_is(name):
    with tempfile.TemporaryDirectory(prefix="raidlab-fio-name-") as where:
        try:
            resolved = fio_target.resolve(os.path.join(where, name))
        except ConfigError:
            return
        assert _fio_opens(resolved.value, where) == resolved.path
