"""One way to write a probability (in percent) in the reliability text, the HTML and plan's tables."""

from __future__ import annotations

import pytest

from conftest import run_cli


# -- one way to write a probability ----------------------------------------------------------


@pytest.mark.parametrize("p,text", [
    (0, "0 %"), (1, "100 %"), (0.5, "50 %"), (0.0552, "5.52 %"), (0.00123, "0.123 %"),
    (0.000123, "0.0123 %"), (9.38e-05, "9.38e-03 %"), (3.3e-07, "3.30e-05 %"), (1e-12, "1.00e-10 %"),
    (0.99999, "99.999 %"), (None, "-"), (float("nan"), "-"), (float("inf"), "-"),
])
def test_format_probability(p, text):
    from raidlab.units import format_probability

    assert format_probability(p) == text


def test_reliability_text_writes_every_probability_in_percent():
    from raidlab.units import format_probability

    # A day's repair, the figure's own (the default repair is the member's idle rebuild).
    args = ["reliability", "--level", "5", "--devices", "6", "--trials", "0", "--mttr-hours", "24"]
    doc = run_cli([*args, "--json"]).json()
    run = run_cli(args)
    assert run.status == 0, run.stderr
    row = next(line for line in run.stdout.splitlines() if line.startswith("P(array loss in 5 y)"))
    # 9.38e-05 as a fraction used to print as "9.380e-05" beside "6.49 %" one row below.
    assert doc["p_array_loss"] == pytest.approx(9.38e-05, rel=1e-3)
    assert format_probability(doc["p_array_loss"]) in row
    assert "9.38e-03 %" in row and "e-05" not in run.stdout
    sector = next(line for line in run.stdout.splitlines() if line.startswith("P(any sector lost"))
    assert format_probability(doc["p_sector_loss"]) in sector


def test_html_and_plan_tables_use_the_same_probability_format():
    from raidlab.commands.plan import _row
    from raidlab.report import html

    assert html._prob(3.3e-07) == "3.30e-05 %" and html._prob(None) == "–"

    class Design:
        name = "raid6 x6"

    class Evaluated:
        design, cost, capacity_bytes, iops = Design(), 6, 4 * 10**12, 1000.0
        result = {"optimal": {"p99_ms": 1.0}}
        degraded_iops, rebuild_hours, loss_probability, tolerance = 900.0, 10.0, 5.5e-03, 2

    row = _row(Evaluated(), False, None)
    assert row[-2] == "0.55 %"  # was "5.5e-03" (the basis follows it)
