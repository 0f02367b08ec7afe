"""Every command that simulates builds one ``raidlab.run.RunSpec`` the same way, so a design run by
compare and by sim gets the same defaults, level names are normalised once, every setting has one
default, and bad settings are one line from every source."""

from __future__ import annotations

import csv
import io

import pytest

import raidlab
from conftest import run_cli

NULL_DESIGN = ["--level", "5", "--devices", "4", "--drive", "null"]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# --- one run type: compare and sim agree on defaults -------------------------------------


def test_a_design_compare_and_sim_both_run_gets_the_same_defaults(tmp_path):
    from raidlab.run import DEFAULTS

    designs = _write(tmp_path, "d.toml", '[[design]]\nname = "r5"\nlevel = 5\ndevices = 4\ndrive = "null"\n')
    compared = run_cli(["compare", "--designs", designs, "--preset", "wal", "--runtime-s", "0.05",
                        "--states", "optimal", "--json", "-"])
    assert compared.status == 0, compared.stderr
    entry = compared.json()["runs"][0]
    assert (entry["controller"], entry["chunk_kib"]) == ("md", 512)
    compare_config = entry["document"]["raidlab"]["config"]
    simulated = run_cli(["sim", *NULL_DESIGN, "--preset", "wal", "--runtime-s", "0.05", "--json"])
    assert simulated.status == 0, simulated.stderr
    sim_config = simulated.json()["raidlab"]["config"]
    # Not the classic's hardware controller and 64 KiB chunk: the defaults every command shares.
    assert compare_config["controller"] == sim_config["controller"]
    assert compare_config["controller"]["kind"] == "md" == DEFAULTS["controller"]
    assert compare_config["array"] == sim_config["array"]
    assert compare_config["array"]["chunk_kib"] == 512 == DEFAULTS["chunk_kib"]
    # The one difference is what compare reports, not what it runs: it keeps each second's
    # latencies, for percentiles over the steady state it finds.
    assert compare_config.pop("latency_by_second") is True and "latency_by_second" not in sim_config
    assert compare_config == {**sim_config, "workload": compare_config["workload"]}


def test_the_classic_says_its_controller_and_chunk_and_the_table_shows_them():
    from raidlab.compare import classic

    designs, _ = classic()
    for design in designs:
        assert design.settings["controller"] == "hw" and design.settings["chunk_kib"] == 64
    run = run_cli(["compare", "--preset", "wal", "--runtime-s", "0.05", "--states", "optimal"])
    assert run.status == 0, run.stderr
    header = run.stdout.splitlines()[0].split()
    assert header[:5] == ["design", "controller", "chunk", "KiB", "state"]
    rows = [line.split() for line in run.stdout.splitlines() if line.startswith(("RAID5 ", "RAID10 "))]
    assert [(r[0], r[1], r[2]) for r in rows] == [("RAID5", "hw", "64"), ("RAID10", "hw", "64")]


def test_compare_latency_columns_say_their_direction(tmp_path):
    designs = _write(tmp_path, "d.toml", '[[design]]\nname = "r5"\nlevel = 5\ndevices = 4\ndrive = "null"\n')
    args = ["compare", "--designs", designs, "--preset", "oltp-innodb", "--runtime-s", "0.05",
            "--states", "optimal"]
    table = run_cli(args)
    assert table.status == 0, table.stderr
    header = table.stdout.splitlines()[0]
    for column in ("read p50 ms", "read p99 ms", "write p50 ms", "write p99 ms"):
        assert column in header
    assert " p99 ms" not in header.replace("read p99 ms", "").replace("write p99 ms", "")
    csv_run = run_cli([*args, "--csv", "-"])
    row = next(csv.DictReader(io.StringIO(csv_run.stdout)))
    doc = run_cli([*args, "--json", "-"]).json()["runs"][0]["document"]
    for direction in ("read", "write"):
        p99_ns = doc["jobs"][0][direction]["clat_ns"]["percentile"]["99.000000"]
        assert float(row[f"{direction}_latency_ms_p99"]) == pytest.approx(p99_ns / 1e6, abs=1e-3)
    assert row["controller"] == "md" and row["chunk_kib"] == "512"
    # A write-only workload has no read latency: '-' in the table, empty in the CSV.
    wal = run_cli(["compare", "--designs", designs, "--preset", "wal", "--runtime-s", "0.05",
                   "--states", "optimal", "--csv", "-"])
    row = next(csv.DictReader(io.StringIO(wal.stdout)))
    assert row["read_latency_ms_p99"] == "" and float(row["write_latency_ms_p99"]) > 0


def test_level_names_are_normalised_once():
    run = run_cli(["sim", "--level", "raid6", "--devices", "4", "--drive", "null", "--preset", "wal",
                   "--runtime-s", "0.02"])
    assert run.status == 0, run.stderr
    assert run.stdout.startswith("raid6 x4 ") and "raidraid" not in run.stdout
    doc = run_cli(["sim", "--level", "raid6", "--devices", "4", "--drive", "null", "--preset", "wal",
                   "--runtime-s", "0.02", "--json"]).json()
    assert doc["raidlab"]["config"]["array"]["level"] == "6"
    from raidlab.run import build_run

    spec = build_run({"level": "mirror", "devices": 2, "drive": "null", "preset": "wal"})
    assert spec.design.level == "1" and spec.design.label().startswith("raid1 x2 ")


def test_every_setting_has_one_default_and_the_api_uses_it():
    from raidlab.run import DEFAULTS, build_run

    spec = build_run({"preset": "wal"})
    assert (spec.design.level, spec.design.devices, spec.design.chunk_kib, spec.design.controller,
            spec.design.drive.name, spec.options.seed, spec.options.max_time_s) == (
        "5", 6, 512, "md", "cheetah-10k7", 1, 3600.0)
    result = raidlab.simulate(level=10, devices=4, drive="null", preset="wal", runtime_s=0.02)
    assert result.config["controller"]["kind"] == DEFAULTS["controller"]
    assert result.config["array"]["chunk_kib"] == DEFAULTS["chunk_kib"]


def test_bad_settings_are_one_line_from_every_source(tmp_path):
    from raidlab.run import build_run

    with pytest.raises(raidlab.RaidlabError, match="unknown setting"):
        build_run({"preset": "wal", "warp": 9})
    with pytest.raises(raidlab.RaidlabError, match="controller 'raid'"):
        build_run({"preset": "wal", "controller": "raid"})
    base = dict(level=5, devices=4, drive="null", preset="wal", runtime_s=0.01)
    for bad, message in ((dict(failed=5), "failed=5 is not a list of member indices"),
                         (dict(layout=5), "layout=5 is not a layout name"),
                         (dict(bbu="maybe"), "bbu='maybe' is not true or false"),
                         (dict(runtime_s=float("nan")), "runtime_s=nan is not a finite number"),
                         (dict(stripe_cache_size=5), "stripe_cache_size=5 is out of range 17..32768")):
        with pytest.raises(raidlab.RaidlabError, match=message):
            raidlab.simulate(**{**base, **bad})
    designs = _write(tmp_path, "d.toml", '[[design]]\nname = "x"\nchunk_kib = 64.5\n')
    run = run_cli(["compare", "--designs", designs, "--preset", "wal"])
    assert run.status == 2 and len(run.stderr_lines) == 1
    assert "design 'x': 'chunk_kib' must be an integer, got a number 64.5" in run.stderr
