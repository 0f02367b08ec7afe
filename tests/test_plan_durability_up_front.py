"""plan refuses a --durability target no candidate design can meet before simulating any."""

from __future__ import annotations

import time

from conftest import refused, run_cli


# ---- plan: durability targets no design can meet ----

def test_plan_refuses_an_unreachable_durability_before_simulating():
    start = time.monotonic()
    run = run_cli(["plan", "--capacity-tb", "1", "--preset", "oltp-innodb", "--durability", "1e-300"])
    refused(run, "--durability 1e-300", "no candidate design")
    assert time.monotonic() - start < 10
