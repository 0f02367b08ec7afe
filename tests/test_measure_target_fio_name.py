"""The name fio opens for ``--target`` is the name raidlab's safety check inspected.

raidlab writes the target into the job file as ``filename=...``, and fio 3.33 does not read
that line literally (init.c ``__parse_jobs_ini``, parse.c ``strip_blank_end``, options.c
``fio_option_dup_subs``, ``fio_keyword_replace`` and ``get_next_str``): it cuts the value at
``;`` or ``#``, strips blanks and control characters at both ends, expands ``${VAR}`` and
``$pagesize``/``$mb_memory``/``$ncpus``, splits at ``:`` (``\\:`` escapes one; a backslash
elsewhere is literal), and a newline starts a new option line. Each shape here is refused before
fio starts, or escaped so that fio opens exactly the checked path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import refused, run_cli
from raidlab.errors import ConfigError
from raidlab.measure import jobfile, safety

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (make deps installs it)")

#: A workload that writes (so a target that already holds data must be refused).
WRITE_JOB = "[w]\nrw=randwrite\nbs=4k\nsize=64k\nio_size=64k\nioengine=sync\n"


def _resolve(target):
    from raidlab.measure import fio_target

    return fio_target.resolve(target)


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious" * 1024)
    return victim


def _measure(target: str, *extra: str):
    return run_cli(["measure", "--target", target, "--fio", WRITE_JOB, *extra])


def _filename_line(job_text: str) -> str:
    lines = [line for line in job_text.splitlines() if line.startswith("filename=")]
    assert len(lines) == 1, job_text
    return lines[0][len("filename="):]


@pytest.mark.parametrize("suffix, why", [
    (";x", "fio cuts a filename at ';'"),
    ("#x", "fio cuts a filename at '#'"),
    (" ", "fio strips blanks and control characters from the end"),
    ("\t", "fio strips blanks and control characters from the end"),
    ("\r", "fio strips blanks and control characters from the end"),
    ("\x7f", "fio strips blanks and control characters from the end"),
    ("\nrw=write", "a newline would start a new option line"),
])
def test_measure_refuses_a_target_fio_would_read_as_another_name(tmp_path, sentinel_fio, suffix, why):
    fake, marker = sentinel_fio
    victim = _victim(tmp_path)
    before = victim.read_bytes()
    refused(_measure(f"{victim}{suffix}", "--fio-binary", fake), "--target", why)
    refused(_measure(f"{victim}{suffix}", "--dry-run"), why)
    assert not marker.exists()
    assert victim.read_bytes() == before


def test_measure_refuses_a_target_fio_would_expand_from_the_environment(tmp_path, monkeypatch, sentinel_fio):
    fake, marker = sentinel_fio
    victim = _victim(tmp_path)
    monkeypatch.setenv("VICTIM", str(victim))
    monkeypatch.chdir(tmp_path)
    refused(_measure("${VICTIM}", "--fio-binary", fake), "--target", "fio replaces ${VICTIM}")
    refused(_measure(f"{tmp_path}/x${{}}y", "--dry-run"), "fio replaces ${}")
    assert not marker.exists()
    assert not (tmp_path / "${VICTIM}").exists()


@pytest.mark.parametrize("keyword", ["$pagesize", "$mb_memory", "$ncpus"])
def test_measure_refuses_a_target_holding_a_fio_keyword(tmp_path, keyword):
    # fio puts the number in its place (and runs bc when the value looks like arithmetic).
    refused(_measure(f"{tmp_path}/x{keyword}", "--dry-run"), f"fio replaces {keyword}")


def test_measure_refuses_control_characters_inside_a_target(tmp_path):
    refused(_measure(f"{tmp_path}/a\x01b", "--dry-run"), "control character")


def test_measure_refuses_a_target_that_is_not_utf8(tmp_path):
    # A name from a non-UTF-8 argv arrives with surrogate escapes; the job file is UTF-8 text.
    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/t\xff.img")
    refused(_measure(name, "--dry-run"), "not valid UTF-8")
    refused(_measure(name, "--json"), "not valid UTF-8")


def test_measure_refuses_a_target_too_long_for_fio(tmp_path):
    # Each ':' costs fio's '\:' escape: the value reaches fio's PATH_MAX (options.c
    # maxlen) while the path itself is still one the kernel takes.
    deep = tmp_path
    while len(str(deep)) < 3000:
        deep = deep / ("d:" * 60)
    deep.mkdir(parents=True)
    refused(_measure(str(deep / "t.img"), "--dry-run"), "too long for fio")


def test_calibrate_refuses_a_target_fio_would_cut(tmp_path, sentinel_fio):
    fake, marker = sentinel_fio
    victim = _victim(tmp_path)
    refused(run_cli(["calibrate", "--target", f"{victim};x", "--quick", "--capacity-tb", "1",
                     "--out", str(tmp_path / "d.toml"), "--fio-binary", fake]),
            "fio cuts a filename at ';'")
    assert not marker.exists() and not (tmp_path / "d.toml").exists()


def test_a_backslash_in_a_target_is_written_as_is(tmp_path):
    # fio's only escape is '\:' (get_next_str); a doubled backslash would name another file.
    target = f"{tmp_path}/a\\b"
    assert _resolve(target).value == target
    status = run_cli(["measure", "--target", target, "--preset", "wal", "--size", "1M", "--dry-run"])
    assert status.status == 0, status.stderr
    assert _filename_line(status.stdout) == target


def test_colons_are_escaped_and_a_backslash_before_one_survives(tmp_path):
    assert _resolve(f"{tmp_path}/a:b").value == f"{tmp_path}/a\\:b"
    # The path 'a\:b' (a real backslash, then a colon): fio drops the one backslash before ':'.
    assert _resolve(f"{tmp_path}/a\\:b").value == f"{tmp_path}/a\\\\:b"
    assert jobfile.escape_filename(f"{tmp_path}/x:") == f"{tmp_path}/x\\:"


def test_a_relative_target_is_written_as_the_absolute_path_checked(tmp_path, monkeypatch):
    # fio runs in a scratch directory: a relative name would be a file there, not the one checked.
    monkeypatch.chdir(tmp_path)
    run = run_cli(["measure", "--target", "new.img", "--preset", "wal", "--size", "1M", "--dry-run"])
    assert run.status == 0, run.stderr
    assert _filename_line(run.stdout) == f"{tmp_path}/new.img"
    assert safety.inspect("new.img").path == f"{tmp_path}/new.img"


def test_a_target_named_dash_is_a_file_not_fios_stdout(tmp_path, monkeypatch):
    # fio reads filename=- as stdin/stdout (HOWTO, filename).
    monkeypatch.chdir(tmp_path)
    assert _resolve("-").value == f"{tmp_path}/-"


@pytest.mark.parametrize("bad", [None, 5, b"/tmp/x", "/tmp/a\x00b", ["/tmp/x"]])
def test_measure_api_refuses_a_target_that_is_not_a_path_string(bad):
    from raidlab.measure import measure

    with pytest.raises(ConfigError, match="target"):
        measure(bad, preset="wal", size="1M", fio_binary="/bin/false")


def test_pathlib_targets_are_accepted(tmp_path):
    assert _resolve(tmp_path / "x.img").path == f"{tmp_path}/x.img"


@needs_fio
@pytest.mark.parametrize("suffix", [";x", "#x", " ", "\r"])
def test_real_fio_leaves_the_victim_untouched(tmp_path, suffix):
    victim = _victim(tmp_path)
    digest = hashlib.sha256(victim.read_bytes()).hexdigest()
    done = subprocess.run([sys.executable, "-m", "raidlab", "measure", "--target", f"{victim}{suffix}",
                           "--fio", WRITE_JOB, "--runtime-s", "0.2"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("raidlab: error: ") and done.stderr.count("\n") == 1
    assert hashlib.sha256(victim.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim"]


@needs_fio
def test_real_fio_writes_exactly_the_escaped_path(tmp_path, monkeypatch):
    # A relative name with a colon and backslashes: fio must create that very file here.
    monkeypatch.chdir(tmp_path)
    name = "o\\dd:na\\:me"
    done = subprocess.run([sys.executable, "-m", "raidlab", "measure", "--target", name, "--fio", WRITE_JOB,
                           "--json"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    assert (tmp_path / name).stat().st_size == 64 * 1024


def test_a_target_through_a_missing_directory_and_dotdot_is_refused(tmp_path):
    # Checked as a new file (nx does not exist), then fio created nx/ and opened nx/../victim:
    # the existing victim was overwritten without --destroy-data.
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious" * 1000)
    refused(_measure(f"{tmp_path}/nx/../victim", "--dry-run"), "goes up a directory ('..')")
    assert victim.read_bytes() == b"precious" * 1000 and not (tmp_path / "nx").exists()


def test_a_target_ending_in_a_slash_is_refused_before_fio_runs(tmp_path):
    refused(_measure(f"{tmp_path}/d/", "--dry-run"), "it names a directory")
    assert not (tmp_path / "d").exists()
