"""Stacked md arrays through the CLI: raid1+0, raid5+0, raid6+0 and raid0+1 run on
``raidlab sim`` (and compare, through the one build_run), member I/O per host write is each inner
md's, failures addressed to physical drives lose data exactly when the stack says so, and
``raidlab reliability`` knows the stack's structure."""

from __future__ import annotations

import json

import pytest

import raidlab

from raidlab.cli import main
from raidlab.run import build_run, normalise_level
from raidlab.stacked import geometry, mdadm_commands

RANDOM_4K_WRITES = """
[w]
ioengine=libaio
direct=1
rw=randwrite
bs=4k
iodepth=8
size=8g
number_ios=2000
"""


@pytest.fixture
def writes(tmp_path):
    path = tmp_path / "w.fio"
    path.write_text(RANDOM_4K_WRITES)
    return str(path)


def sim(args, capsys):
    status = main(["sim", *args, "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)


def cost_per_host_write(doc):
    """(member reads, member writes) per host write, from the disk_util section."""
    host = doc["jobs"][0]["write"]["total_ios"]
    members = [d for d in doc["disk_util"] if d["name"].startswith("member")]
    reads = sum(d["read_ios"] for d in members)
    writes = sum(d["write_ios"] for d in members)
    return reads / host, writes / host


@pytest.mark.parametrize("level, devices, extra, expected", [
    ("1+0", 4, [], (0.0, 2.0)),
    ("raid50", 10, ["--inner-devices", "5"], (2.0, 2.0)),
    ("6+0", 8, [], (1.0, 3.0)),
    ("0+1", 4, [], (0.0, 2.0)),
])
def test_each_stacked_level_runs_with_the_inner_md_cost_of_a_4k_write(level, devices, extra, expected, writes, capsys):
    doc = sim(["--level", level, "--devices", str(devices), *extra, "--drive", "cheetah-10k7",
               "--fio", writes], capsys)
    assert doc["jobs"][0]["write"]["total_ios"] == 2000
    # (Inner raid5/6 writes go through each inner md's stripe cache: the odd write whose row is
    # still cached from another reads or writes a little less.)
    assert cost_per_host_write(doc) == pytest.approx(expected, abs=0.03)
    assert doc["data_loss"] is None


def test_two_failures_in_one_pair_are_data_loss_and_in_two_pairs_are_not(writes, capsys):
    same = sim(["--level", "1+0", "--devices", "4", "--drive", "cheetah-10k7", "--fio", writes,
                "--fail", "0@0.05s", "--fail", "1@0.1s"], capsys)
    assert {k: same["data_loss"][k] for k in ("at_s", "failed_members")} == {"at_s": 0.1, "failed_members": [0, 1]}
    assert "inner array md1 (raid1 of drives 0, 1)" in same["data_loss"]["why"]
    other = sim(["--level", "1+0", "--devices", "4", "--drive", "cheetah-10k7", "--fio", writes,
                 "--fail", "0@0.05s", "--fail", "2@0.1s"], capsys)
    assert other["data_loss"] is None
    assert other["jobs"][0]["write"]["total_ios"] == 2000
    assert [p["name"] for p in other["phases"]] == ["optimal", "degraded"]


def test_levels_and_options_are_declared_once_and_refused_in_one_line(capsys):
    assert normalise_level("raid1+0") == "1+0" and normalise_level("60") == "6+0"
    assert normalise_level("raid10") == "10"
    spec = build_run({"level": "5+0", "devices": 8, "inner_devices": 4, "outer_chunk_kib": 256,
                      "drive": "null", "preset": "wal"})
    assert spec.config()["array"] == {"level": "5+0", "layout": None, "devices": 8, "chunk_kib": 512,
                                      "partition_gib": 0.0, "inner_devices": 4, "outer_chunk_kib": 256}
    assert spec.design.label().startswith("raid5+0 x8 (inner arrays of 4, outer chunk 256 KiB) default layout")
    for args, message in [
        (["--level", "6+0", "--devices", "4"], "raid6+0 of 4 devices: the array is two inner raid6 arrays of equal size, each of 4 or more drives; valid counts are 8, 10, 12"),
        (["--level", "1+0", "--devices", "5"], "raid1+0 of 5 devices: the array is raid1 pairs, 2 or more; valid counts are 4, 6, 8"),
        (["--level", "1+0", "--devices", "4", "--controller", "hw"], "a stacked level is md over md arrays"),
        (["--level", "0+1", "--devices", "4", "--failed", "0", "--replace", "0@1s"], "that rebuild is not modelled"),
        (["--level", "1+0", "--devices", "4", "--outer-chunk-kib", "3"], "outer-chunk-kib"),
        (["--level", "5", "--devices", "4", "--inner-devices", "2"], "inner_devices=2: only a stacked level"),
    ]:
        status = main(["sim", *args, "--drive", "null", "--preset", "wal", "--runtime-s", "0.1"])
        err = capsys.readouterr().err
        assert status == 2, err
        assert len(err.strip().splitlines()) == 1 and err.startswith("raidlab: error: "), err
        assert message in err, err


def test_compare_runs_stacked_designs_through_the_same_builder(tmp_path, capsys):
    designs = tmp_path / "d.toml"
    designs.write_text('[[design]]\nname = "r10"\nlevel = "10"\ndevices = 4\ndrive = "null"\n'
                       '[[design]]\nname = "r1+0"\nlevel = "1+0"\ndevices = 4\ndrive = "null"\n')
    status = main(["compare", "--designs", str(designs), "--preset", "wal", "--runtime-s", "0.2", "--json", "-"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "r1+0" in captured.out


def test_reliability_of_raid1_0_is_md_raid10_n2s_pairs_and_raid0_1_is_worse(capsys):
    def mttdl(*args):
        assert main(["reliability", *args, "--trials", "0", "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    stacked = mttdl("--level", "1+0", "--devices", "4")
    md_n2 = mttdl("--level", "10", "--layout", "n2", "--devices", "4")
    raid01 = mttdl("--level", "0+1", "--devices", "4")
    assert stacked["mttdl_years"] == pytest.approx(md_n2["mttdl_years"], rel=1e-9)
    assert 0.45 < raid01["mttdl_years"] / stacked["mttdl_years"] < 0.55
    # After one failure, 1 of the 3 survivors would lose a raid1+0 (the partner), 2 a raid0+1.
    assert stacked["layout"]["second_failure_loss_fraction"] == pytest.approx(1 / 3)
    assert raid01["layout"]["second_failure_loss_fraction"] == pytest.approx(2 / 3)
    assert (stacked["layout"]["level"], stacked["layout"]["failures_to_lose_data"]) == ("1+0", 2)


def test_setup_commands_build_the_inner_arrays_then_the_outer_one():
    spec = build_run({"level": "5+0", "devices": 8, "inner_devices": 4, "chunk_kib": 64,
                      "outer_chunk_kib": 128, "drive": "null", "preset": "wal"})
    geo = geometry(spec.design, 1 << 30)
    steps = [s["command"] for s in mdadm_commands(geo, [f"<disk{i}>" for i in range(1, 9)])]
    assert steps[0] == ("mdadm --create /dev/md1 --metadata=1.2 --level=5 --raid-devices=4 --layout=left-symmetric "
                        "--chunk=64K <disk1> <disk2> <disk3> <disk4>")
    assert steps[1].startswith("mdadm --create /dev/md2 ") and steps[1].endswith("<disk5> <disk6> <disk7> <disk8>")
    assert steps[2] == "mdadm --create /dev/md0 --metadata=1.2 --level=0 --raid-devices=2 --chunk=128K /dev/md1 /dev/md2"
    # io_min 128 KiB (the outer chunk), io_opt lcm(2 × 128 KiB, 3 × 64 KiB) = 768 KiB.
    assert steps[3] == "mkfs.xfs -d su=128k,sw=6 /dev/md0"
    assert steps[4] == "mkfs.ext4 -b 4096 -E stride=32,stripe_width=192 /dev/md0"


def test_plan_considers_stacked_levels_and_prints_their_setup(capsys):
    status = main(["plan", "--capacity-tb", "1", "--preset", "oltp-postgres", "--levels", "1+0,raid50",
                   "--drive", "cheetah-10k7", "--max-drives", "8", "--chunks-kib", "64", "--sim-seconds", "0.3",
                   "--jobs", "1", "--json", "-"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    doc = json.loads(captured.out)
    assert doc["request"]["levels"] == ["1+0", "5+0"]
    names = [d["name"] for d in doc["designs"]]
    assert "raid5+0 x6 64K cheetah-10k7" in names and "raid1+0 x8 64K cheetah-10k7" in names
    assert doc["winner"] == "raid5+0 x6 64K cheetah-10k7"
    commands = [c["command"] for c in doc["setup"]["commands"]]
    assert commands[2] == "mdadm --create /dev/md0 --metadata=1.2 --level=0 --raid-devices=2 --chunk=64K /dev/md1 /dev/md2"
    assert commands[0].startswith("mdadm --create /dev/md1 --metadata=1.2 --level=5 --raid-devices=3 ")
    assert "mkfs.xfs -d su=64k,sw=2 /dev/md0" in commands
    # The scrub runs on the inner arrays, which hold the redundancy.
    assert any("for md in md1 md2; do echo check" in c for c in commands)
    scrub_why = next(c["why"] for c in doc["setup"]["commands"] if "echo check" in c["command"])
    assert "/sys/block/{md1,md2}/md/mismatch_cnt" in scrub_why and "md0/md/mismatch_cnt" not in scrub_why
    assert doc["calculator"]["penalty"] == 3  # a 4 KiB write to a raid5 of 3: rcw, 1 read + 2 writes


def test_a_sweep_stores_a_stack_by_name_beside_mds_levels(tmp_path, capsys):
    """A stack has no md level number: its row leaves `level` empty and names the stack in
    `stacked_level`; md's raid10 keeps its number. Each row's figures are raidlab sim's."""
    grid = tmp_path / "s.toml"
    grid.write_text('[sweep]\nruntime_s = 0.2\npreset = "oltp-postgres"\ndrive = "nvme-tlc"\ndevices = 4\n'
                    '[grid]\nlevel = ["10", "1+0", "5+0"]\n'
                    '[[exclude]]\nlevel = "5+0"\n'
                    '[[include]]\nlevel = "5+0"\ndevices = 6\ninner_devices = 3\n')
    store = tmp_path / "out"
    assert main(["sweep", str(grid), "--out", str(store), "--jobs", "1"]) == 0, capsys.readouterr().err
    frame = raidlab.load_sweep(store)
    frame.index = frame.stacked_level.fillna("md")
    assert sorted(frame.index) == ["1+0", "5+0", "md"]
    assert frame.level["md"] == 10 and frame.level[["1+0", "5+0"]].isna().all()
    assert frame.inner_devices.to_dict() == {"md": 0, "1+0": 0, "5+0": 3}
    assert frame.devices.to_dict() == {"md": 4, "1+0": 4, "5+0": 6}
    capsys.readouterr()
    assert main(["sim", "--level", "5+0", "--devices", "6", "--inner-devices", "3", "--drive", "nvme-tlc",
                 "--preset", "oltp-postgres", "--runtime-s", "0.2", "--json"]) == 0
    job = json.loads(capsys.readouterr().out)["jobs"][0]
    row = frame.loc["5+0"]
    assert row.read_iops == job["read"]["iops"] and row.write_iops == job["write"]["iops"]
    assert (store / "json" / f"{row.key}.json").exists()
