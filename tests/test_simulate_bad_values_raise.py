"""``raidlab.simulate`` refuses bad values (wrong types, malformed timelines, non-ASCII numbers)
with a RaidlabError naming the value."""

from __future__ import annotations

import pytest


# -- the Python API raises RaidlabError for bad values ---------------------------------------------


@pytest.mark.parametrize("settings, fragment", [
    ({"fio": 5}, "fio must be a job file's path or the job text, got int"),
    ({"fio": b"[j]\nrw=read\n"}, "got bytes"),
    ({"workload": "wal"}, "workload must be a raidlab Workload, got str"),
    ({"preset": "wal", "timeline": [{"x": 1}]}, "timeline event"),
    ({"preset": "wal", "timeline": "0@1"}, "timeline must be a list of events"),
    ({"preset": "wal", "timeline": [{"action": "fail", "member": 0, "at_s": "nan"}]}, "not a finite number"),
    ({"preset": "wal", "seed": "\u0661"}, "seed='\u0661' is not a whole number"),
])
def test_simulate_refuses_bad_values_with_raidlab_errors(settings, fragment):
    # Before: TypeError (fio=5, bytes), AttributeError (workload='wal'), KeyError/TypeError
    # (malformed timelines), and seed='١' ran with seed 1.
    import raidlab

    with pytest.raises(raidlab.RaidlabError) as raised:
        raidlab.simulate(runtime_s=0.01, drive="null", **settings)
    assert fragment in str(raised.value)
