"""``--fio-binary X`` where X is not a working fio: one line, exit 2, never a hang or exit 70.

raidlab asks ``X --version`` before it runs a job; whatever X prints (bytes that are not UTF-8,
nothing, megabytes, a version and a failing status) or whatever X is (a directory, a file
without the execute bit, a script the kernel cannot run) ends in one ``raidlab: error:`` line.
"""

from __future__ import annotations

import os
import time

import pytest

from conftest import refused, run_bounded, run_cli
from raidlab.errors import ConfigError
from raidlab.measure import runner


def _script(tmp_path, body: str, mode: int = 0o755) -> str:
    path = tmp_path / "fake-fio"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(mode)
    return str(path)


def _measure(tmp_path, fio: str):
    return run_cli(["measure", "--target", str(tmp_path / "new.img"), "--preset", "wal", "--size", "1M",
                    "--runtime-s", "0.2", "--fio-binary", fio])


@pytest.mark.parametrize("body, fragment", [
    ("printf 'fio-3.33\\377\\376\\n'\n", "does not look like fio"),
    ("printf '\\377\\376garbage\\n'\n", "does not look like fio"),
    ("exit 0\n", "printed nothing"),
    ("echo fio-3.33; exit 3\n", "exit status 3"),
    ("echo 'fio-3.33' >&2; exit 1\n", "exit status 1"),
    ("kill -9 $$\n", "killed by signal 9"),
])
def test_a_fio_binary_whose_version_is_odd_is_one_line(tmp_path, body, fragment):
    refused(_measure(tmp_path, _script(tmp_path, body)), "--fio-binary", fragment)
    assert not (tmp_path / "new.img").exists()


def test_a_fio_binary_printing_endlessly_is_cut_short(tmp_path):
    fio = _script(tmp_path, "exec yes fio-3.33\n")
    started = time.monotonic()
    refused(_measure(tmp_path, fio), "--fio-binary", "printed more than")
    assert time.monotonic() - started < 8


def test_a_fio_binary_that_never_answers_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "VERSION_TIMEOUT_S", 0.5)
    # A child keeps the output pipe open after the shell is gone: the wait must not follow it.
    fio = _script(tmp_path, "sleep 30 &\nexec sleep 30\n")
    started = time.monotonic()
    refused(_measure(tmp_path, fio), "did not answer within 0.5 s")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("make", ["directory", "not executable", "no shebang", "unreadable script"])
def test_a_fio_binary_that_cannot_run_is_one_line(tmp_path, make):
    if make == "directory":
        fio = str(tmp_path / "fio-dir" / "")
        os.mkdir(fio)
    elif make == "not executable":
        fio = _script(tmp_path, "echo fio-3.33\n", 0o644)
    elif make == "no shebang":
        fio = str(tmp_path / "fake-fio")
        (tmp_path / "fake-fio").write_bytes(b"\x7fELF garbage")
        os.chmod(fio, 0o755)
    else:
        if os.geteuid() == 0:
            pytest.skip("root reads any file")
        fio = _script(tmp_path, "echo fio-3.33\n", 0o311)
    refused(_measure(tmp_path, fio), "fio")


def test_fio_version_reads_bytes_not_text(tmp_path):
    fio = _script(tmp_path, "printf 'fio-3.33\\n'\n")
    assert runner.fio_version(fio) == "fio-3.33"
    with pytest.raises(ConfigError, match="does not look like fio"):
        runner.fio_version(_script(tmp_path, "printf 'fio-3.3\\3773\\n'\n"))


def test_a_non_utf8_version_is_one_line_from_a_real_process(tmp_path):
    fio = _script(tmp_path, "printf '\\377fio\\n'\n")
    refused(run_bounded(["measure", "--target", str(tmp_path / "new.img"), "--preset", "wal",
                         "--size", "1M", "--fio-binary", fio]), "does not look like fio")
