"""Ctrl-C during a parallel plan ends in one line ``raidlab: error: interrupted`` and status 130,
with no worker tracebacks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest


# -- Ctrl-C: one line, status 130 -------------------------------------------------------------


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
