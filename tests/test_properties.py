"""Property test: any (level, devices, layout, chunk, member sizes) either yields a consistent map
or is refused with exit status 2 and one line on stderr."""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli

PARITY_LAYOUTS = ["left-asymmetric", "right-asymmetric", "left-symmetric", "right-symmetric",
                  "parity-first", "parity-last"]
RAID6_ONLY_LAYOUTS = ["ddf-zero-restart", "ddf-N-restart", "ddf-N-continue", "left-asymmetric-6",
                      "right-asymmetric-6", "left-symmetric-6", "right-symmetric-6",
                      "parity-first-6"]
RAID10_LAYOUTS = ["n2", "n3", "n4", "f2", "f3", "o2", "o3"]
LAYOUTS = {
    0: [None, "original", "alternate"],
    1: [None],
    4: [None, "parity-last"],
    5: [None] + PARITY_LAYOUTS,
    6: [None] + PARITY_LAYOUTS + RAID6_ONLY_LAYOUTS,
    10: [None] + RAID10_LAYOUTS,
}
ALL_LAYOUT_NAMES = sorted({name for names in LAYOUTS.values() for name in names if name})


@st.composite
def arrays(draw):
    """Mostly plausible arrays, with some layouts, chunks and sizes md would refuse."""
    level = draw(st.sampled_from(sorted(LAYOUTS)))
    layout = draw(st.one_of(st.sampled_from(LAYOUTS[level]), st.sampled_from(ALL_LAYOUT_NAMES))
                  if draw(st.integers(0, 9)) == 0 else st.sampled_from(LAYOUTS[level]))
    devices = draw(st.integers(1, 8))
    chunk_kib = draw(st.sampled_from([4, 8, 16, 32, 64, 128, 256, 512])
                     | st.sampled_from([0, 2, 3, 48, 96]))
    sizes = st.integers(0, 8192) | st.sampled_from([4, 1024, 4096, 6144, 7168])
    if draw(st.booleans()):
        member_kib_list = [draw(sizes)] * devices
    else:
        member_kib_list = draw(st.lists(sizes, min_size=devices, max_size=devices))
    return level, layout, chunk_kib, member_kib_list


def expected_copies(level: int, devices: int, layout) -> int:
    if level == 1:
        return devices
    if level == 10:
        return int(re.search(r"\d+", layout or "n2").group())
    return 1


def check_consistent(document: dict, level: int, chunk_kib: int, member_kib_list) -> None:
    devices = len(member_kib_list)
    assert document["level"] == level
    assert document["devices"] == devices
    table = document["map"]
    # One entry per whole chunk of each member's (4 KiB-page-rounded) data area.
    assert [len(column) for column in table] == [
        (size // 4 * 4) // chunk_kib for size in member_kib_list
    ]
    chunk_bytes = chunk_kib * 1024
    whole_chunks = document["capacity_bytes"] // chunk_bytes
    # md refuses arrays that hold no whole chunk, except raid1, whose "chunk" is map granularity.
    assert whole_chunks > 0 or level == 1
    copies = expected_copies(level, devices, document["layout"])
    counts = Counter(cell for column in table for cell in column if isinstance(cell, int))
    for chunk in range(whole_chunks):
        assert counts[chunk] == copies, (chunk, counts[chunk], copies)
    # Only a trailing partial chunk (raid1's capacity is not chunk-rounded) may appear beyond.
    assert all(chunk < -(-document["capacity_bytes"] // chunk_bytes) for chunk in counts)
    labels = {cell for column in table for cell in column if isinstance(cell, str)}
    assert labels <= {0: set(), 1: set(), 10: set(), 4: {"P"}, 5: {"P"}, 6: {"P", "Q"}}[level]
    if level in (4, 5, 6):
        rows = min(len(column) for column in table)
        for row in range(rows):
            cells = [column[row] for column in table]
            if any(isinstance(cell, int) for cell in cells):
                assert cells.count("P") == 1
                assert cells.count("Q") == (1 if level == 6 else 0)
                data_cells = sum(isinstance(cell, int) for cell in cells)
                assert data_cells == devices - (2 if level == 6 else 1)
    if level == 6:
        q = document["q_log_coeff"]
        assert [len(column) for column in q] == [len(column) for column in table]
        for q_column, column in zip(q, table):
            for exponent, cell in zip(q_column, column):
                assert (exponent is not None) == isinstance(cell, int)
        ddf = document["layout"].startswith("ddf-")
        for row in range(min(len(column) for column in q)):
            members = [m for m, column in enumerate(q) if column[row] is not None]
            exponents = [q[m][row] for m in members]
            if exponents:
                # md numbers Q slots 0..k-1; DDF runs the syndrome over raw disk numbers.
                if ddf:
                    assert exponents == members
                else:
                    assert sorted(exponents) == list(range(devices - 2))
    else:
        assert "q_log_coeff" not in document


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays())
def test_any_array_is_mapped_consistently_or_refused_in_one_line(case):
    level, layout, chunk_kib, member_kib_list = case
    args = ["layout", "--json", "--level", str(level), "--chunk-kib", str(chunk_kib),
            "--member-kib-list", ",".join(map(str, member_kib_list))]
    if layout is not None:
        args += ["--layout", layout]
    run = run_cli(args)
    if run.status == 0:
        check_consistent(run.json(), level, chunk_kib, member_kib_list)
    else:
        assert run.status == 2, run.stderr
        assert run.stdout == ""
        assert len(run.stderr_lines) == 1 and run.stderr_lines[0].startswith("raidlab: error: ")
        assert "Traceback" not in run.stderr


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=6))
def test_arbitrary_arguments_never_trace_back(words):
    run = run_cli(["layout", *words])
    assert run.status in (0, 2)
    assert "Traceback" not in run.stderr
    if run.status == 2:
        assert len(run.stderr_lines) == 1
