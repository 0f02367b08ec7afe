"""``raidlab layout`` text report, help, version and JSON shape."""

from __future__ import annotations

import pytest

from conftest import run_cli, run_process

RAID5_LS_4 = ["layout", "--level", "5", "--devices", "4", "--chunk-kib", "64",
              "--layout", "left-symmetric"]


def diagram_rows(text: str) -> dict:
    """Maps row number to its labels, from the lines of the first stripe diagram."""
    rows = {}
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["row", "disk0"])
    for line in lines[start + 1:]:
        fields = line.split()
        if line.startswith("---"):  # a raid0 zone separator
            continue
        if not fields or not fields[0].isdigit():
            break
        rows[int(fields[0])] = fields[1:]
    return rows


def test_raid5_left_symmetric_matches_the_md_picture():
    # md's left-symmetric: P starts on the last disk and moves left; data starts after P.
    run = run_cli(RAID5_LS_4)
    assert run.status == 0, run.stderr
    rows = diagram_rows(run.stdout)
    assert rows[0] == ["D0", "D1", "D2", "P"]
    assert rows[1] == ["D4", "D5", "P", "D3"]
    assert rows[2] == ["D8", "P", "D6", "D7"]
    assert rows[3] == ["P", "D9", "D10", "D11"]
    assert rows[4] == ["D12", "D13", "D14", "P"]
    assert len(rows) == 8  # the default --rows


def test_default_layout_is_left_symmetric():
    assert diagram_rows(run_cli(RAID5_LS_4[:-2]).stdout) == diagram_rows(run_cli(RAID5_LS_4).stdout)


def test_header_has_geometry_capacity_and_mkfs_hints():
    text = run_cli(RAID5_LS_4 + ["--member-kib", "6144"]).stdout
    assert "raid5" in text and "left-symmetric" in text
    assert "18874368 bytes (18 MiB)" in text
    assert "65536 bytes (64 KiB)" in text  # io_min
    assert "196608 bytes (192 KiB)" in text  # io_opt
    assert "su=64k,sw=3" in text
    assert "stride=16,stripe_width=48" in text


def test_default_member_size_is_one_gib():
    text = run_cli(["layout", "--level", "5", "--devices", "4"]).stdout
    assert "1048576 KiB (1 GiB) each" in text
    assert "512 KiB" in text  # mdadm's default chunk


def test_rows_option():
    assert len(diagram_rows(run_cli(RAID5_LS_4 + ["--rows", "3"]).stdout)) == 3
    assert len(diagram_rows(run_cli(RAID5_LS_4 + ["--rows", "20"]).stdout)) == 20
    small = run_cli(RAID5_LS_4 + ["--member-kib", "256", "--rows", "100"]).stdout
    assert len(diagram_rows(small)) == 4  # only 4 chunk rows exist
    assert run_cli(RAID5_LS_4 + ["--rows", "0"]).status == 0


def test_raid6_shows_p_q_and_q_coefficients():
    run = run_cli(["layout", "--level", "6", "--devices", "4", "--chunk-kib", "64", "--q-coeff"])
    assert run.status == 0
    rows = diagram_rows(run.stdout)
    assert rows[0] == ["Q", "D0", "D1", "P"]  # left-symmetric raid6: Q follows P, wrapping
    assert "Q coefficients" in run.stdout
    assert "g^0" in run.stdout and "g^1" in run.stdout


def test_raid10_and_raid1_show_every_copy():
    near = diagram_rows(run_cli(["layout", "--level", "10", "--devices", "4",
                                 "--chunk-kib", "64"]).stdout)
    assert near[0] == ["D0", "D0", "D1", "D1"]
    mirror = diagram_rows(run_cli(["layout", "--level", "1", "--devices", "3",
                                   "--chunk-kib", "64"]).stdout)
    assert mirror[5] == ["D5", "D5", "D5"]


def test_raid0_zones_are_noted_and_drawn():
    args = ["layout", "--level", "0", "--chunk-kib", "64", "--member-kib-list", "7168,11264,15360"]
    text = run_cli(args).stdout
    assert "zone 1: rows 112-175 across disk1, disk2" in text
    crossing = run_cli(args + ["--rows", "114"]).stdout
    assert "--- zone 1 starts: disk1, disk2 ---" in crossing
    assert diagram_rows(crossing)[112] == ["D336", "D337"]


def test_devices_may_be_omitted_with_a_member_list():
    run = run_cli(["layout", "--level", "5", "--chunk-kib", "64", "--json",
                   "--member-kib-list", "6144,10240,14336"])
    assert run.status == 0
    assert run.json()["devices"] == 3
    matching = run_cli(["layout", "--level", "5", "--chunk-kib", "64", "--json", "--devices", "3",
                        "--member-kib-list", "6144,10240,14336"])
    assert matching.json() == run.json()


@pytest.mark.parametrize(
    "level, layout",
    [("0", "original"), ("1", None), ("4", "parity-last"), ("5", "left-symmetric"),
     ("6", "left-symmetric"), ("10", "n2")],
)
def test_json_shape_and_default_layouts(level, layout):
    run = run_cli(["layout", "--level", level, "--devices", "4", "--chunk-kib", "64",
                   "--member-kib", "1024", "--json"])
    assert run.status == 0, run.stderr
    document = run.json()
    keys = ["level", "layout", "devices", "chunk_kib", "capacity_bytes", "io_min_bytes",
            "io_opt_bytes", "map"]
    assert list(document) == keys + (["q_log_coeff"] if level == "6" else [])
    assert document["level"] == int(level)
    assert document["layout"] == layout
    assert document["chunk_kib"] == 64
    assert len(document["map"]) == 4
    assert all(len(column) == 16 for column in document["map"])
    cells = {type(cell) for column in document["map"] for cell in column}
    assert cells <= {int, str, type(None)}


def test_level_names_are_accepted():
    assert run_cli(["layout", "--level", "raid5", "--devices", "3", "--json"]).json()["level"] == 5
    assert run_cli(["layout", "--level", "mirror", "--devices", "2", "--json"]).json()["level"] == 1


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["layout", "--help"], ["layout", "-h"]])
def test_help_on_every_command(args):
    run = run_cli(args)
    assert run.status == 0
    assert run.stderr == ""
    assert "Usage: raidlab" in run.stdout


def test_layout_help_names_defaults_and_layouts():
    text = run_cli(["layout", "--help"]).stdout
    for words in ("--member-kib-list", "--json", "--rows", "1048576", "left-symmetric",
                  "parity-last", "n2", "original", "512"):
        assert words in text


def test_bare_group_shows_help():
    run = run_cli([])
    assert run.status == 0
    assert "layout" in run.stdout


def test_version():
    import raidlab

    run = run_cli(["--version"])
    assert run.status == 0
    assert raidlab.__version__ in run.stdout


def test_console_entry_and_module_entry_agree():
    run = run_process(RAID5_LS_4)
    assert run.status == 0 and run.stderr == ""
    assert run.stdout == run_cli(RAID5_LS_4).stdout
