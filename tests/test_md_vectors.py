"""``raidlab layout --json`` reproduces every array recorded from the real Linux md driver."""

from __future__ import annotations

import pytest

from conftest import load_vectors, run_cli, run_process, vector_args

VECTORS = load_vectors()
JSON_KEYS = {"level", "layout", "devices", "chunk_kib", "capacity_bytes", "io_min_bytes",
             "io_opt_bytes", "map"}
# mdadm's default layout names, for vectors recorded without --layout.
DEFAULT_LAYOUT = {0: "original", 1: None, 4: "parity-last", 5: "left-symmetric",
                  6: "left-symmetric", 10: "n2"}


def check_against_vector(document: dict, vector: dict) -> None:
    expected_keys = JSON_KEYS | ({"q_log_coeff"} if vector["level"] == 6 else set())
    assert set(document) == expected_keys
    assert document["level"] == vector["level"]
    assert document["layout"] == (vector["layout"] or DEFAULT_LAYOUT[vector["level"]])
    assert document["devices"] == vector["devices"]
    assert document["chunk_kib"] == vector["chunk_kib"]
    assert document["capacity_bytes"] == vector["md"]["array_bytes"]
    assert document["io_min_bytes"] == vector["md"]["io_min_bytes"]
    assert document["io_opt_bytes"] == vector["md"]["io_opt_bytes"]
    assert document["map"] == vector["map"]
    if vector["level"] == 6:
        assert document["q_log_coeff"] == vector["q_log_coeff"]


def test_the_full_vector_set_is_there():
    assert len(VECTORS) >= 90
    assert {v["level"] for v in VECTORS} == {0, 1, 4, 5, 6, 10}


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector_in_process(vector):
    run = run_cli(vector_args(vector))
    assert run.status == 0, run.stderr
    check_against_vector(run.json(), vector)


def _one_vector_per_level() -> list:
    chosen = {}
    for vector in VECTORS:
        # Prefer the richest vector of each level: unequal members, then the most devices.
        key = vector["level"]
        rank = (len(set(vector["member_kib_list"])), vector["devices"])
        if key not in chosen or rank > chosen[key][0]:
            chosen[key] = (rank, vector)
    return [vector for _, (_, vector) in sorted(chosen.items(), key=lambda item: item[0])]


@pytest.mark.parametrize("vector", _one_vector_per_level(), ids=lambda v: v["id"])
def test_vector_through_a_real_process(vector):
    run = run_process(vector_args(vector))
    assert run.status == 0, run.stderr
    assert run.stderr == ""
    check_against_vector(run.json(), vector)
