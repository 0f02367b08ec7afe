"""Shared helpers: run the CLI in-process or as a real subprocess, and load the md vectors."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Sequence

import pytest

from raidlab.cli import main

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Vectors recorded from real md live in the repository, in data/md-vectors (see data/README.md).
VECTORS_PATH = REPO_ROOT / "data" / "md-vectors" / "vectors.json"


@dataclass
class Run:
    """What one CLI run did."""

    status: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)

    @property
    def stderr_lines(self) -> List[str]:
        return self.stderr.splitlines()


def run_cli(args: Sequence[str]) -> Run:
    """Runs ``raidlab ARGS`` in this process through the console-script entry point."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return Run(status, out.getvalue(), err.getvalue())


def run_process(args: Sequence[str]) -> Run:
    """Runs ``python -m raidlab ARGS`` as a real process, with no stdin."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    done = subprocess.run(
        [sys.executable, "-m", "raidlab", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def load_vectors() -> list:
    """Every vector in data/md-vectors/vectors.json (a missing file is an error)."""
    if not VECTORS_PATH.is_file():
        raise FileNotFoundError(f"md vectors not found at {VECTORS_PATH}")
    return json.loads(VECTORS_PATH.read_text())


def vector_args(vector: dict) -> List[str]:
    """``raidlab layout`` arguments that describe a vector's array."""
    args = [
        "layout",
        "--json",
        "--level",
        str(vector["level"]),
        "--devices",
        str(vector["devices"]),
        "--chunk-kib",
        str(vector["chunk_kib"]),
        "--member-kib-list",
        ",".join(str(size) for size in vector["member_kib_list"]),
    ]
    if vector["layout"] is not None:
        args += ["--layout", vector["layout"]]
    return args


@pytest.fixture
def sentinel_fio(tmp_path):
    """A stand-in 'fio' that records being run: refusals must happen before fio starts."""
    marker = tmp_path / "fio-was-run"
    script = tmp_path / "fake-fio"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    script.chmod(0o755)
    return str(script), marker


def refused(run: Run, *fragments: str) -> None:
    """Exit status 2 and exactly one stderr line, ``raidlab: error: ...`` holding each fragment."""
    assert run.status == 2, (run.status, run.stderr)
    assert len(run.stderr_lines) == 1 and run.stderr.endswith("\n"), run.stderr
    line = run.stderr_lines[0]
    assert line.startswith("raidlab: error: "), line
    assert "Traceback" not in run.stderr and "internal error" not in line, line
    for fragment in fragments:
        assert fragment in line, (fragment, line)


def run_bounded(args: Sequence[str], seconds: float = 20, env: dict = None) -> Run:
    """``python -m raidlab ARGS`` in a process that must end within ``seconds`` (a hang fails)."""
    done = subprocess.run([sys.executable, "-m", "raidlab", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=seconds,
                          env=dict(os.environ, PYTHONWARNINGS="ignore", **(env or {})))
    return Run(done.returncode, done.stdout, done.stderr)
