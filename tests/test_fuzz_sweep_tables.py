"""Fuzzing the tables of raidlab.schema: random drive tables and sweep files (zips, grids, drive
tables in them) end in success or in one ``raidlab: error:`` line with exit 2 on the command
line, and in success or a :class:`raidlab.RaidlabError` from Python: never a raw TypeError,
AttributeError or StopIteration, never exit 70.

Examples are bounded as in test_fuzz_inputs.py: fewer and derandomized under ``CI=true``, scaled
by ``RAIDLAB_FUZZ_SCALE``.
"""

from __future__ import annotations

import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

import raidlab
from test_fuzz_inputs import DRIVE_KEYS, SCRATCH, TOML_VALUES, ends_well, fuzz, scratch

pytest.importorskip("pyarrow")

#: Key names a drive table is given: its own, every kind's parameters, and near misses.
#: (A drive table's own keys are drawn as often as all the parameters together.)
OWN = ["kind", "preset", "params", "name", "disksim", "files"]
NAMES = st.one_of(st.sampled_from(OWN), st.sampled_from(DRIVE_KEYS + ["rmp", "knid", "param", "Kind", "", "a.b"]))
WORDS = st.sampled_from(["hdd", "ssd", "null", "empirical", "volume", "tape", "cheetah-10k7", "x25e-slc", "null", "nope", "", "a.parv"])
SCALARS = st.one_of(WORDS, st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([15000, 1e12, 0.5, 7200]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=2),
                                                       st.dictionaries(NAMES, inner, max_size=3)), max_leaves=6)
QUICK = {"preset": "wal", "runtime_s": 0.002, "max_time_s": 0.05, "level": 1, "devices": 2}


HEADS = st.sampled_from([{}, {"kind": "hdd"}, {"kind": "ssd"}, {"kind": "null"}, {"preset": "x25e-slc"},
                         {"preset": "cheetah-10k7", "kind": "hdd"}])


@fuzz(150)
@given(HEADS, st.dictionaries(NAMES, VALUES, max_size=4))
def test_any_drive_table_from_python_runs_or_is_a_raidlab_error(head, table):
    try:
        raidlab.simulate(drive={**head, **table}, **QUICK)
    except raidlab.RaidlabError as error:
        assert "\n" not in str(error).strip()


def _toml_table(draw) -> str:
    """A TOML inline drive table of random keys and values (keys quoted: any name is valid TOML)."""
    items = [f'"{draw(NAMES)}" = {draw(TOML_VALUES)}' for _ in range(draw(st.integers(0, 3)))]
    head = draw(st.sampled_from(['kind = "hdd"', 'kind = "null"', 'preset = "x25e-slc"', 'kind = "hhd"', ""]))
    return "{" + ", ".join(([head] if head else []) + items) + "}"


@st.composite
def sweep_toml(draw) -> str:
    """[sweep] fixed settings, then a [grid], [[zip]] tables (empty ones too), [[include]]s and
    drive tables as fixed settings or axis values; now and then a misspelt key or table."""
    lines = ["[sweep]", 'preset = "wal"', "runtime_s = 0.002", "max_time_s = 0.05", "level = 1"]
    lines += [draw(st.sampled_from(['drive = "null"', 'drive = "null"', f"drive = {_toml_table(draw)}",
                                    'mode = "zip"', "mode = 3", "devcies = 2"]))]
    axes = st.sampled_from(["devices = [2, 3]", "seed = [1, 2]", "seed = []", "seed = 5",
                            f"drive = [{_toml_table(draw)}, \"null\"]", "chunk_kb = [64]"])
    sections = ["[grid]"] if draw(st.booleans()) else []
    sections += ["[[zip]]"] * draw(st.integers(0, 2)) + ["[[include]]"] * draw(st.integers(0, 1))
    sections += [draw(st.sampled_from(["[girds]", "[[zip]]"]))] if draw(st.integers(0, 4)) == 0 else []
    for header in sections:
        lines.append(header)
        lines += [draw(axes) for _ in range(draw(st.integers(0, 2)))]
    return "\n".join(lines) + "\n"


@fuzz(60)
@given(sweep_toml())
def test_any_sweep_file_with_drive_tables_runs_or_is_one_line(text):
    store = tempfile.mkdtemp(dir=SCRATCH)
    ends_well(["sweep", scratch("sweep.toml", text), "--out", f"{store}/store", "--jobs", "1"])
