"""``plan`` shows the shared progress bar on a terminal only, never with --json or when stderr is a
pipe; the bar counts items."""

from __future__ import annotations

import json

from conftest import run_process


# -- plan's progress: the shared bar, on a terminal only, never with --json -----------------

QUICK_PLAN = ["plan", "--capacity-tb", "0.1", "--preset", "oltp-postgres", "--drive", "x25e-slc",
              "--levels", "10", "--chunks-kib", "64", "--raid10-layouts", "n2", "--max-drives", "6",
              "--sim-seconds", "0.02", "--jobs", "1"]


def _stderr_on_a_terminal(args):
    """Runs ``python -m raidlab ARGS`` with stderr on a pseudo-terminal; (status, stdout, stderr)."""
    import os
    import pty
    import select
    import subprocess
    import sys

    master, slave = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "raidlab", *args], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            child.kill()
            raise AssertionError("no output from the child for 60 s")
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    out = child.stdout.read()
    child.stdout.close()
    return child.wait(timeout=60), out.decode(), seen.decode(errors="replace")


def test_plan_shows_the_shared_progress_bar_on_a_terminal():
    status, out, err = _stderr_on_a_terminal(QUICK_PLAN)
    assert status == 0, err
    assert "planning  [" in err and "100%" in err
    assert "Setup for" in out and "planning" not in out


def test_plan_shows_no_progress_bar_when_json_is_asked_for():
    status, out, err = _stderr_on_a_terminal(QUICK_PLAN + ["--json"])
    assert status == 0, err
    assert "planning" not in err and err.strip() == ""
    assert json.loads(out)["winner"].startswith("raid10 n2")


def test_plan_shows_no_progress_bar_when_stderr_is_a_pipe():
    run = run_process(QUICK_PLAN)
    assert run.status == 0, run.stderr
    assert run.stderr == ""


def test_progress_bar_counts_items():
    from raidlab.commands.progress import ProgressBar

    bar = ProgressBar(False, "x")
    assert bar.callback is None
    shown = []

    class Recorder(ProgressBar):
        def __call__(self, fraction):
            shown.append(fraction)

    tick = Recorder(False, "planning").counter(4)
    for count in (1, 2, 1):
        tick(count)
    assert shown == [0.25, 0.75, 1.0]
