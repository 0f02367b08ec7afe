"""A JSON document written before the recorded configuration used the declared names says
``rebuild.hot_spare`` where a new one says ``rebuild.spare``: both import, and the run's
description says "hot spare" for either."""

import json

import pytest

import raidlab
from raidlab.measure.importer import load
from raidlab.report.describe import describe_array, run_label


@pytest.fixture(scope="module")
def document():
    return raidlab.simulate(level="5", devices=4, drive="null", preset="wal", failed="1", spare=True,
                            runtime_s=0.02).to_dict()


def _as_old(document):
    old = json.loads(json.dumps(document))
    rebuild = old["raidlab"]["config"]["rebuild"]
    rebuild["hot_spare"] = rebuild.pop("spare")
    return old


@pytest.mark.parametrize("written", ["now", "before the rename"])
def test_a_spare_is_described_under_either_name(tmp_path, document, written):
    doc = document if written == "now" else _as_old(document)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    loaded = load(str(path))
    assert "hot spare" in describe_array(loaded["raidlab"]["config"])
    assert run_label(loaded).endswith(" spare")


def test_an_old_spare_that_is_not_a_flag_is_refused(tmp_path, document):
    old = _as_old(document)
    old["raidlab"]["config"]["rebuild"]["hot_spare"] = "yes"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(old))
    with pytest.raises(raidlab.RaidlabError):
        load(str(path))
