"""The reliability Monte Carlo keeps the AFR asked for whatever the Weibull shape, agrees with the
Markov chain at shape 1, stops on Ctrl-C with one line and status 130, and reports progress
without changing its answer."""

from __future__ import annotations

import pytest

from conftest import run_process


# --- the Weibull Monte Carlo keeps the AFR asked for --------------------------------------------

@pytest.mark.parametrize("shape", ["0.8", "1.12", "2"])
def test_the_weibull_monte_carlo_keeps_the_afr_whatever_its_shape(shape):
    # raid0 of 4 loses data within a year with 1 - (1 - AFR)^4, for any shape, when the AFR is
    # held (the killed-process estimator is exact for raid0). Holding the mean gave 0.6x at 1.12.
    run = run_process(["reliability", "--level", "0", "--devices", "4", "--capacity-tb", "1", "--afr-pct", "5",
                       "--mission-years", "1", "--weibull-shape", shape, "--trials", "100", "--json"])
    assert run.status == 0, run.stderr
    document = run.json()
    want = 1 - 0.95 ** 4
    assert document["monte_carlo"]["p_array_loss"]["mean"] == pytest.approx(want, rel=1e-9)
    assert document["p_array_loss"] == pytest.approx(want, rel=1e-9)
    assert "first year with the AFR's probability" in document["monte_carlo"]["model"]


def test_shape_one_monte_carlo_agrees_with_the_chain_on_raid5():
    run = run_process(["reliability", "--level", "5", "--devices", "8", "--capacity-tb", "16", "--afr-pct", "5",
                       "--mission-years", "5", "--weibull-shape", "1", "--repair-dist", "exponential",
                       "--trials", "20000", "--json"])
    assert run.status == 0, run.stderr
    document = run.json()
    low, high = document["monte_carlo"]["p_array_loss"]["ci95"]
    mc = document["monte_carlo"]["p_array_loss"]
    # within 2.576 standard errors (99 %), and the 95 % interval is tight
    assert abs(mc["mean"] - document["p_array_loss"]) < 2.576 * mc["std_error"], (document["p_array_loss"], mc)
    assert high - low < 0.1 * mc["mean"]


# --- Ctrl-C stops the reliability Monte Carlo; progress does not change its answer -------------

def test_ctrl_c_stops_the_monte_carlo_with_one_line_and_130():
    import os
    import signal
    import subprocess
    import sys
    import time
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    process = subprocess.Popen(
        [sys.executable, "-m", "raidlab", "reliability", "--level", "6", "--devices", "8",
         "--trials", "100000000"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(1.0)
    assert process.poll() is None, "the run should still be going (10^8 trials take minutes)"
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("SIGINT ignored: the Monte Carlo kept running")
    assert time.monotonic() - sent < 5.0
    assert (process.returncode, err, out) == (130, "raidlab: error: interrupted\n", "")


def test_progress_reports_do_not_change_the_monte_carlo():
    from raidlab import reliability
    calls = []
    with_progress = reliability.analyze(level=6, devices=8, trials=1000, seed=3,
                                        progress=lambda done, total: calls.append((done, total)))
    without = reliability.analyze(level=6, devices=8, trials=1000, seed=3)
    assert with_progress.to_dict() == without.to_dict()
    assert calls == [(256, 1000), (512, 1000), (768, 1000), (1000, 1000)]


def test_an_exception_in_the_progress_callback_stops_the_monte_carlo():
    from raidlab import reliability

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        reliability.analyze(level=6, devices=8, trials=100000, progress=stop)
