"""``measure`` stops a fio that never answers (on --version or in its run) and reads what a fio
writes bounded: malformed, FIFO or huge output is one short error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import refused, run_cli


# -- fio that never answers ---------------------------------------------------------------------


def _fake_fio(tmp_path: Path, version_ok: bool) -> Path:
    fake = tmp_path / "fio"
    answer = 'echo fio-3.33; exit 0' if version_ok else 'exec sleep 1000'
    fake.write_text(f'#!/bin/sh\nif [ "$1" = "--version" ]; then {answer}; fi\nexec sleep 1000\n')
    fake.chmod(0o755)
    return fake


def test_a_fio_that_hangs_on_version_is_stopped(tmp_path, monkeypatch):
    # Before: 'fio --version' had 30 s, past the 20 s any bad input must end within.
    from raidlab.measure import runner

    assert runner.VERSION_TIMEOUT_S <= 10
    monkeypatch.setattr(runner, "VERSION_TIMEOUT_S", 0.5)
    refused(run_cli(["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--size", "8M",
                     "--runtime-s", "0.2", "--fio-binary", str(_fake_fio(tmp_path, False))]),
            "--version did not answer within 0.5 s")


def test_a_fio_run_that_never_ends_is_stopped(tmp_path, monkeypatch):
    # Before: no deadline: a fio stuck in its run (a hung device, a binary that only looks like
    # fio) kept 'measure' waiting forever.
    from raidlab.measure import runner

    monkeypatch.setattr(runner, "RUN_GRACE_S", 0.5)
    refused(run_cli(["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--size", "8M",
                     "--runtime-s", "0.2", "--fio-binary", str(_fake_fio(tmp_path, True))]),
            "fio ran for 0.9 s", "stopped it")


def _posing_fio(tmp_path: Path, run: str) -> str:
    """A binary that answers --version as fio 3.33 does and then runs ``run`` (shell) with
    $OUT set to fio's --output= file."""
    fake = tmp_path / "fio"
    fake.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo fio-3.33; exit 0; fi\n'
                    'for a in "$@"; do case "$a" in --output=*) OUT="${a#--output=}";; esac; done\n'
                    f'{run}\n')
    fake.chmod(0o755)
    return str(fake)


@pytest.mark.parametrize("run, fragment", [
    ('echo \'{"jobs": "x"}\' > "$OUT"; exit 0', "it exited 0 but wrote no fio JSON output"),
    ('rm -f "$OUT"; mkfifo "$OUT"; exit 0', "it exited 0 but wrote no fio JSON output"),
    ('head -c 70000000 /dev/zero | tr "\\0" "{" > "$OUT"; exit 0', "it exited 0 but wrote no fio JSON output"),
    ('head -c 30000000 /dev/zero | tr "\\0" "x"; exit 3', "fio failed on"),
])
def test_what_fio_writes_is_read_bounded(tmp_path, run, fragment):
    # Before: '{"jobs": "x"}' was an internal error (AttributeError, exit 70); a FIFO in place of
    # the output file blocked forever; a huge output file or stdout was read whole into memory
    # (300 MB of output: 1.7 GB RSS) and quoted whole in the error line.
    run_ = run_cli(["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--size", "8M",
                    "--runtime-s", "0.2", "--fio-binary", _posing_fio(tmp_path, run)])
    refused(run_, fragment)
    assert len(run_.stderr) < 1000
