"""One drive resolver: a drive name, a drive TOML file or a DiskSim model means the same in sim,
compare, plan and reliability (rebuild from sim), and an unknown drive is refused the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

import raidlab
from conftest import run_cli


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# --- one drive resolver ------------------------------------------------------------------


def _reliability_hours(drive: str) -> float:
    run = run_cli(["reliability", "--level", "5", "--devices", "4", "--capacity-tb", "2",
                   "--rebuild-from-sim", "--drive", drive, "--sim-opt", "runtime_s=5",
                   "--trials", "0", "--json"])
    assert run.status == 0, run.stderr
    return run.json()["inputs"]["repair"]["rebuild_hours"]


def test_reliability_rebuild_from_sim_takes_a_drive_toml_file(tmp_path):
    toml = _write(tmp_path, "mine.toml", 'preset = "nearline-7200"\n')
    from_file = _reliability_hours(toml)
    assert from_file == _reliability_hours("nearline-7200")
    assert 1.0 < from_file < 10.0
    slower = _write(tmp_path, "slow.toml", 'preset = "nearline-7200"\nrpm = 3600\n')
    # Slower media, slower rebuild. Not twice as slow: md's raid5 recovery refills its stripe
    # cache in bursts with a jiffy's sleep between (raid5_sync_request), so a 7200-RPM drive
    # idles between bursts and a 3600-RPM one barely does (4.1 h against 6.1 h).
    assert _reliability_hours(slower) > from_file * 1.2


@pytest.mark.parametrize("command", [
    ["sim", "--level", "5", "--devices", "4", "--preset", "wal", "--runtime-s", "0.02"],
    ["reliability", "--level", "5", "--devices", "4", "--rebuild-from-sim", "--trials", "0"],
    ["plan", "--capacity-tb", "0.1", "--preset", "wal", "--jobs", "1"],
])
def test_an_unknown_drive_is_refused_the_same_way_everywhere(command):
    run = run_cli([*command, "--drive", "no-such-drive"])
    assert run.status == 2 and len(run.stderr_lines) == 1
    assert "--drive 'no-such-drive': unknown drive model; give a preset from 'raidlab drives', " \
           "a drive FILE.toml, or a DiskSim FILE.parv/.diskspecs" in run.stderr


def test_one_drive_file_works_in_sim_compare_and_plan(tmp_path):
    toml = _write(tmp_path, "small.toml", 'kind = "ssd"\ncapacity_bytes = 100e9\n')
    sim = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", toml, "--preset", "wal",
                   "--runtime-s", "0.02", "--json"])
    assert sim.status == 0, sim.stderr
    assert sim.json()["raidlab"]["config"]["drive"] == {"kind": "ssd", "params": {"capacity_bytes": 100e9}}
    designs = _write(tmp_path, "d.toml", f'[[design]]\nname = "x"\nlevel = 5\ndevices = 4\ndrive = "{toml}"\n')
    compared = run_cli(["compare", "--designs", designs, "--preset", "wal", "--runtime-s", "0.02",
                        "--states", "optimal", "--json", "-"])
    assert compared.status == 0, compared.stderr
    # md's members less mdadm's data offset, as the simulated array is built
    sectors = 100_000_000_000 // 512
    member_kib = (sectors - raidlab._core.mdadm_data_offset_sectors(sectors, 512 * 2)) // 2
    expected = raidlab.Array(level=5, devices=4, chunk_kib=512, member_kib=member_kib)
    assert compared.json()["runs"][0]["capacity_bytes"] == expected.capacity_bytes
    planned = run_cli(["plan", "--capacity-tb", "0.2", "--drive", toml, "--preset", "wal", "--levels", "5",
                       "--chunks-kib", "64", "--max-drives", "4", "--sim-seconds", "0.05", "--jobs", "1",
                       "--json"])
    assert planned.status == 0, planned.stderr
    assert planned.json()["winner"] == "raid5 left-symmetric x4 64K small"


def test_a_disksim_model_keeps_its_own_size():
    from raidlab.drives import DriveSpec

    drive = DriveSpec("x.parv", {"disksim": "x.parv", "files": {}}, "hdd", "SCSI", 9 * 10**9)
    assert drive.fixed_capacity
    with pytest.raises(raidlab.RaidlabError, match="DiskSim model's capacity is fixed"):
        drive.with_capacity(10**12)


DISKSIM = Path(__file__).resolve().parents[1] / "data" / "disksim-valid" / "atlas10k.parv"


def test_reliability_takes_a_disksim_drive_as_sim_does():
    """The rebuild runs on the model as it is; its time scales to --capacity-tb at that rate. The
    zone-by-zone estimate (30 s at four mid-zone points) is checked against the whole rebuild of
    the model simulated to its end (3,603 s): within 3 % (measured: 1.2 %)."""
    sim = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", str(DISKSIM), "--failed", "0",
                   "--spare", "--runtime-s", "5000", "--max-time-s", "6000", "--json"])
    assert sim.status == 0, sim.stderr
    rebuild = sim.json()["rebuild"]
    assert not rebuild["extrapolated"]
    from raidlab.drives import resolve_drive

    drive_bytes = resolve_drive(str(DISKSIM)).capacity_bytes
    hours = _reliability_hours(str(DISKSIM))
    assert hours == pytest.approx(rebuild["duration_s"] * 2e12 / drive_bytes / 3600, rel=0.03)
    # sim's own estimate from 30 s of the same rebuild (0.8 % of the member): this rebuild is
    # bound by its requests, not the media (2.5 MB/s per member on a drive streaming 20+), so
    # its rate barely falls on the inner tracks (measured 3,646 s, 1.2 % long; scaling the whole
    # rate by the zones' media rates said 4,032 s).
    short = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", str(DISKSIM), "--failed", "0",
                     "--spare", "--runtime-s", "30", "--json"])
    assert short.status == 0, short.stderr
    estimate = short.json()["rebuild"]
    assert estimate["extrapolated_by"] == "zone rates"
    assert estimate["duration_s"] == pytest.approx(rebuild["duration_s"], rel=0.03)


def test_sim_opt_takes_any_run_setting():
    from raidlab.rebuild import SIM_OPTIONS, simulated_rebuild_hours

    assert {"stripe_cache_size", "nr_requests", "preset", "seed", "runtime_s"} <= set(SIM_OPTIONS)
    base = dict(level="5", devices=4, layout=None, chunk_kib=512, capacity_bytes=10**12,
                drive="nearline-7200", runtime_s=2)
    assert simulated_rebuild_hours(**base, stripe_cache_size=4096) > 0
    with pytest.raises(raidlab.RaidlabError, match="--sim-opt stripe_cache_size=5 is out of range 17..32768"):
        simulated_rebuild_hours(**base, stripe_cache_size=5)
