"""raidlab plan: emitted geometry equals md's, the winner meets its targets, determinism,
parallelism that does not change the answer, monotonicity, and the textbook formulas."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import raidlab
from raidlab.planner import formulas
from raidlab.planner.candidates import Design, DriveModel
from raidlab.planner.setup import geometry, setup, planned_stripe_cache_size
from raidlab.workload import preset

from conftest import run_cli

try:
    from raidlab.reliability import loss_probability
    HAVE_RELIABILITY = callable(loss_probability)
except (ImportError, AttributeError):
    HAVE_RELIABILITY = False

#: A small, fast search: one 300 GB 10k disk model, two levels, one chunk, near copies only.
SMALL = ["--drive", "cheetah-10k7:150", "--levels", "5,10", "--chunks-kib", "64",
         "--raid10-layouts", "n2", "--max-drives", "8", "--sim-seconds", "0.5", "--preset", "oltp-innodb"]

DISK = DriveModel("test-disk", "cheetah-10k7", "hdd", False, 300_000_000_000, 100.0)
NVME = DriveModel("test-nvme", "nvme-tlc", "ssd", True, 7_680_000_000_000, 900.0)


def plan_json(args, capsys=None):
    run = run_cli(["plan", *args, "--json"])
    assert run.status == 0, run.stderr
    return run.json(), run.stdout


# -- su/sw equal md's io_min/io_opt --------------------------------------------------------------

LAYOUTS = {0: [None], 4: [None], 5: ["left-symmetric", "right-asymmetric", "parity-first"],
           6: ["left-symmetric", "right-symmetric"], 10: ["n2", "f2", "o2", "n3", "f3", "o3"]}
MIN_DEVICES = {0: 2, 4: 3, 5: 3, 6: 4, 10: 3}


@st.composite
def arrays(draw):
    level = draw(st.sampled_from(sorted(LAYOUTS)))
    layout = draw(st.sampled_from(LAYOUTS[level]))
    low = MIN_DEVICES[level]
    if layout and layout[1] == "3":
        low = 3
    devices = draw(st.integers(low, 24))
    chunk = draw(st.sampled_from([4, 8, 16, 32, 64, 128, 256, 512, 1024]))
    return raidlab.Array(level=level, devices=devices, layout=layout, chunk_kib=chunk, member_kib=1 << 20)


def emitted(array):
    """(su bytes, sw, stride, stripe-width) parsed back out of the setup's commands."""
    level = array.level
    design = Design("test-disk", level, array.layout if level in (5, 6, 10) else None, array.devices,
                    array.chunk_kib)
    commands = [c["command"] for c in setup(design, DISK, array, preset("oltp-innodb"))["commands"]]
    xfs = next(c for c in commands if c.startswith("mkfs.xfs"))
    ext4 = next(c for c in commands if c.startswith("mkfs.ext4"))
    su, sw = re.search(r"-d su=(\d+)k,sw=(\d+) ", xfs).groups()
    stride, width = re.search(r"-E stride=(\d+),stripe_width=(\d+) ", ext4).groups()
    return int(su) * 1024, int(sw), int(stride), int(width)


@settings(max_examples=150, deadline=None)
@given(arrays())
def test_su_sw_equal_md_io_min_and_io_opt(array):
    su, sw, stride, width = emitted(array)
    assert su == array.io_min_bytes
    assert su * sw == array.io_opt_bytes
    assert stride * 4096 == array.io_min_bytes
    assert width * 4096 == array.io_opt_bytes


@pytest.mark.parametrize("level,layout,devices,textbook_sw,md_sw", [
    (10, "f2", 4, 2, 4),      # far: near_copies = 1, md's io_opt = chunk x raid_disks
    (10, "o2", 6, 3, 6),      # offset, likewise
    (10, "n2", 5, None, 5),   # near copies on an odd count: N/2 = 2.5 is no whole number
    (10, "n2", 3, None, 3),
    (10, "n2", 4, 2, 2),      # the textbook case: md agrees
    (5, "left-symmetric", 6, 5, 5),
    (6, "left-symmetric", 8, 6, 6),
])
def test_raid10_far_offset_odd_follow_md_and_say_so(level, layout, devices, textbook_sw, md_sw):
    # Checked against the CLI that prints md's values: raidlab layout --json.
    run = run_cli(["layout", "--json", "--level", str(level), "--layout", layout, "--devices", str(devices),
                   "--chunk-kib", "256", "--rows", "0"])
    shown = run.json()
    array = raidlab.Array(level=level, layout=layout, devices=devices, chunk_kib=256, member_kib=1 << 20)
    su, sw, _, _ = emitted(array)
    assert (su, su * sw) == (shown["io_min_bytes"], shown["io_opt_bytes"])
    assert sw == md_sw
    note = geometry(array)["note"]
    if textbook_sw == md_sw:
        assert note is None
    else:
        assert note is not None and f"sw={md_sw}" in note and "not the textbook" in note


def test_mirror_has_no_stripe_geometry():
    array = raidlab.Array(level=1, devices=2, member_kib=1 << 20)
    commands = [c["command"] for c in setup(Design("d", 1, None, 2, None), DISK, array,
                                            preset("oltp-innodb"))["commands"]]
    assert "mkfs.xfs /dev/md0" in commands
    assert not any("su=" in c or "stride=" in c for c in commands)


def test_setup_lines_for_parity_raid_on_disks_and_nvme():
    array = raidlab.Array(level=5, devices=6, chunk_kib=512, member_kib=1 << 20)
    out = setup(Design("d", 5, "left-symmetric", 6, 512, spares=1), DISK, array, preset("backup-scan"))
    text = "\n".join(c["command"] for c in out["commands"])
    assert ("mdadm --create /dev/md0 --metadata=1.2 --level=5 --raid-devices=6 --chunk=512K "
            "--layout=left-symmetric --spare-devices=1 --bitmap=internal --bitmap-chunk=64M "
            "<disk1> <disk2> <disk3> <disk4> <disk5> <disk6> <disk7>") in text
    assert "mkfs.xfs -d su=512k,sw=5 /dev/md0" in text
    assert "mkfs.ext4 -b 4096 -E stride=128,stripe_width=640 /dev/md0" in text
    assert "echo mq-deadline > /sys/block/$n/queue/scheduler" in text
    assert "nobarrier" not in text and "barrier=0" not in text
    assert f"echo {planned_stripe_cache_size(6)} > /sys/block/md0/md/stripe_cache_size" in text
    cache_why = next(c["why"] for c in out["commands"] if "stripe_cache_size" in c["command"])
    assert "4096 x 4 KiB x 6 devices = 96 MiB" in cache_why
    # Sequential reads: read-ahead of at least two full stripes (2 x 2.5 MiB).
    assert "echo 5120 > /sys/block/md0/queue/read_ahead_kb" in text
    # A partition on md0 starts on a multiple of 1 MiB and of the 2.5 MiB stripe: 5 MiB.
    assert "start=10240" in text
    assert any("log stripe unit" in note for note in out["notes"])
    nvme = setup(Design("n", 10, "n2", 4, 64), NVME,
                 raidlab.Array(level=10, devices=4, chunk_kib=64, member_kib=1 << 20), preset("oltp-innodb"))
    text = "\n".join(c["command"] for c in nvme["commands"])
    assert "<disk1> <disk2> <disk3> <disk4>" in text and "echo none > /sys/block/$n/queue/scheduler" in text
    assert "stripe_cache_size" not in text
    assert "echo 128 > /sys/block/md0/queue/read_ahead_kb" in text


def test_stripe_cache_memory_stays_bounded():
    assert planned_stripe_cache_size(6) == 4096
    assert all(planned_stripe_cache_size(n) * 4096 * n <= 256 * 2**20 for n in range(3, 65))
    assert planned_stripe_cache_size(64) >= 256


# -- a small plan end to end ----------------------------------------------------------------------


def test_small_plan_winner_meets_every_target():
    targets = {"min_iops": 900, "max_p99_ms": 120, "min_degraded_iops": 500, "max_rebuild_hours": 100}
    doc, _ = plan_json(["--capacity-tb", "1", *SMALL, "--min-iops", "900", "--max-p99-ms", "120",
                        "--min-degraded-iops", "500", "--max-rebuild-hours", "100", "--jobs", "1"])
    winner = next(d for d in doc["designs"] if d["name"] == doc["winner"])
    assert winner["feasible"] and winner["pareto"]
    assert winner["capacity_bytes"] >= 10**12
    assert winner["optimal"]["iops"] >= targets["min_iops"]
    assert winner["optimal"]["p99_ms"] <= targets["max_p99_ms"]
    assert winner["degraded"]["iops"] >= targets["min_degraded_iops"]
    assert winner["rebuild"]["hours"] <= targets["max_rebuild_hours"]
    # Nothing cheaper meets the targets.
    assert all(not d["feasible"] for d in doc["designs"] if d["cost"] < winner["cost"])
    assert doc["pareto"][0] == doc["winner"]
    assert any(line.startswith("Binding constraint") for line in doc["explanation"])
    # The emitted geometry is the winner's md geometry.
    array = raidlab.Array(level=winner["level"], devices=winner["devices"], layout=winner["layout"],
                          chunk_kib=winner["chunk_kib"], member_kib=1 << 20)
    assert doc["setup"]["geometry"]["su_bytes"] == array.io_min_bytes
    assert doc["setup"]["geometry"]["su_bytes"] * doc["setup"]["geometry"]["sw"] == array.io_opt_bytes


def test_text_output_shows_front_reasons_and_setup():
    run = run_cli(["plan", "--capacity-tb", "1", *SMALL, "--min-iops", "900", "--jobs", "1"])
    assert run.status == 0, run.stderr
    out = run.stdout
    for expected in ("Pareto front", "Why:", "wins: the cheapest", "Binding constraint: IOPS",
                     "Calculator check", "Setup for", "mdadm --create /dev/md0", "mkfs.xfs -d su=64k",
                     "mount -o noatime,inode64"):
        assert expected in out, expected


def test_same_seed_same_json_and_jobs_do_not_matter():
    args = ["--capacity-tb", "0.8", *SMALL, "--min-iops", "800", "--seed", "7"]
    _, first = plan_json([*args, "--jobs", "1"])
    _, again = plan_json([*args, "--jobs", "1"])
    _, parallel = plan_json([*args, "--jobs", "2"])
    assert first == again == parallel
    _, other_seed = plan_json(["--capacity-tb", "0.8", *SMALL, "--min-iops", "800", "--seed", "8", "--jobs", "1"])
    assert json.loads(other_seed)["raidlab"]["seed"] == 8


@pytest.mark.parametrize("args,words", [
    (["--min-iops", "1000000"], "no design meets the targets"),
    (["--max-p99-ms", "0.01"], "no design meets the targets"),
    (["--capacity-tb", "100"], "no design holds 100 TB"),
    (["--budget", "300"], "over budget"),
    (["--durability", "1e-12"], "--durability 1e-12 cannot be met"),  # refused before simulating
    (["--durability", "2"], "is not in the range 0<x<1"),
    (["--drive", "no-such-drive"], "unknown drive model"),
    (["--levels", "7"], "unknown RAID level"),
    (["--levels", "4"], "not raid4"),
    (["--chunks-kib", "48"], "power of two"),
    (["--raid10-layouts", "x9"], "--raid10-layouts"),
    (["--min-iops", "-5"], "is not in the range 0<x<="),
])
def test_impossible_or_bad_requests_are_one_line_exit_2(args, words):
    base = ["plan", "--capacity-tb", "1", *SMALL]
    if "--capacity-tb" in args:
        base = ["plan", *SMALL]
    if "--drive" in args:
        base = [a for a in base if a not in ("--drive", "cheetah-10k7:150")]
    if "--durability" in args and args[1] == "1e-12" and not HAVE_RELIABILITY:
        words = "durability targets need raidlab.reliability"
    run = run_cli([*base, *args, "--jobs", "1"])
    assert run.status == 2, run.stdout
    assert len(run.stderr_lines) == 1 and run.stderr_lines[0].startswith("raidlab: error: ")
    assert words in run.stderr, run.stderr


def test_durability_target_uses_reliability_or_says_it_is_missing():
    args = ["plan", "--capacity-tb", "0.6", *SMALL, "--min-iops", "700", "--durability", "1e-3",
            "--mission-years", "5", "--jobs", "1", "--json"]
    run = run_cli(args)
    if not HAVE_RELIABILITY:
        assert run.status == 2
        assert run.stderr.strip() == "raidlab: error: durability targets need raidlab.reliability"
        return
    assert run.status == 0, run.stderr
    doc = run.json()
    winner = next(d for d in doc["designs"] if d["name"] == doc["winner"])
    assert 0 < winner["loss_probability"] <= 1e-3
    assert doc["request"]["targets"]["max_loss_probability"] == 1e-3


def test_durability_without_reliability_is_one_line(monkeypatch):
    monkeypatch.delattr(raidlab.reliability, "loss_probability")  # a reliability without the loss model
    run = run_cli(["plan", "--capacity-tb", "0.6", *SMALL, "--durability", "1e-3", "--jobs", "1"])
    assert run.status == 2
    assert run.stderr == "raidlab: error: durability targets need raidlab.reliability\n"
    # Without a durability target the plan still runs, ranking risk by failures survived.
    doc, _ = plan_json(["--capacity-tb", "0.6", *SMALL, "--jobs", "1"])
    assert doc["request"]["risk"] == "failures survived, then rebuild hours"
    assert all(d["loss_probability"] is None for d in doc["designs"])


def test_prices_for_all_or_none():
    run = run_cli(["plan", "--capacity-tb", "1", "--preset", "wal", "--drive", "cheetah-10k7:100",
                   "--drive", "x25e-slc"])
    assert run.status == 2 and "price for every --drive" in run.stderr


# -- monotonicity -----------------------------------------------------------------------------


def winner_of(args):
    doc, _ = plan_json([*SMALL, *args, "--jobs", "1", "--extra", "0"])
    return next(d for d in doc["designs"] if d["name"] == doc["winner"])


def test_more_capacity_never_fewer_drives():
    drives = [winner_of(["--capacity-tb", str(tb), "--min-iops", "700"])["devices"] for tb in (0.3, 0.6, 0.9, 1.2)]
    assert drives == sorted(drives)


def test_stricter_latency_never_slower_winner():
    p99s = []
    # 68 ms: the tightest these designs meet since md's read balancing counts writes in flight
    # (raid10 n2 x6 reaches 67.0 ms; x8 reached 54.4 ms when only reads counted).
    targets = (200, 100, 70, 68)
    for target in targets:
        p99s.append(winner_of(["--capacity-tb", "0.6", "--max-p99-ms", str(target)])["optimal"]["p99_ms"])
    assert all(p <= t for p, t in zip(p99s, targets))
    assert p99s == sorted(p99s, reverse=True)


# -- worked examples of the textbook formulas (published calculators' cases, each naming its source)


def test_write_penalty_worked_examples():
    # A: 5 x 180 IOPS, RAID5, 16 % writes (tengel papyri): harmonic 608.1, naive 792.
    assert formulas.array_iops(5, 180, 0.16, 4) == pytest.approx(608.1, abs=0.05)
    assert formulas.naive_iops(5, 180, 0.16, 4) == pytest.approx(792)
    # A2: 10 % and 5 % writes.
    assert formulas.array_iops(5, 180, 0.10, 4) == pytest.approx(692.3, abs=0.05)
    assert formulas.array_iops(5, 180, 0.05, 4) == pytest.approx(782.6, abs=0.05)
    assert formulas.naive_iops(5, 180, 0.10, 4) == pytest.approx(832.5)
    assert formulas.naive_iops(5, 180, 0.05, 4) == pytest.approx(866.25)
    # A3: 8 x 180, RAID10, 16 % writes.
    assert formulas.array_iops(8, 180, 0.16, formulas.write_penalty(10)) == pytest.approx(1241.4, abs=0.05)
    assert formulas.naive_iops(8, 180, 0.16, 2) == pytest.approx(1324.8)
    # B: RAID10, 2 groups x 8 disks x 180, 70/30 (Gerasimatos): naive 2448, harmonic 2215.4.
    assert formulas.naive_iops(16, 180, 0.30, 2) == pytest.approx(2448)
    assert formulas.array_iops(16, 180, 0.30, 2) == pytest.approx(2215.4, abs=0.05)
    # C: 1000 front-end IOPS, 50/50 (virtualtarzan): back end and disks at 180 IOPS each.
    assert formulas.backend_iops(1000, 0.5, formulas.write_penalty(5)) == 2500
    assert formulas.backend_iops(1000, 0.5, formulas.write_penalty(6)) == 3500
    assert formulas.backend_iops(1000, 0.5, formulas.write_penalty(10)) == 1500
    assert formulas.disks_needed(1000, 0.5, 4, 180) == 14
    assert formulas.disks_needed(1000, 0.5, 6, 180) == 20
    assert formulas.disks_needed(1000, 0.5, 2, 180, even=True) == 10
    # C2: 400 front-end IOPS, 35 % reads: RAID1 660, RAID6 1700.
    assert formulas.backend_iops(400, 0.65, formulas.write_penalty(1)) == pytest.approx(660)
    assert formulas.backend_iops(400, 0.65, formulas.write_penalty(6)) == pytest.approx(1700)
    # E: 10k RPM (3 ms rotation) with 4.45 ms seek: 134 IOPS (Lowe); 15k/3.5 ms 181.8; 7.2k/8.5 ms 78.9.
    assert formulas.disk_iops(4.45, 10_000) == pytest.approx(134.2, abs=0.05)
    assert formulas.disk_iops(3.5, 15_000) == pytest.approx(181.8, abs=0.05)
    assert formulas.disk_iops(8.5, 7_200) == pytest.approx(78.9, abs=0.05)


def test_md_small_write_cost_is_cheaper_on_small_arrays():
    # raid5.c: min(k + p, d - k) reads + k + p writes. RAID5 N=3 -> 3, N>=4 -> 4;
    # RAID6 N=4 -> 4, N=5 -> 5, N>=6 -> 6; a full stripe costs d + p.
    assert [formulas.md_write_cost(5, n) for n in (3, 4, 6, 12)] == [3, 4, 4, 4]
    assert [formulas.md_write_cost(6, n) for n in (4, 5, 6, 12)] == [4, 5, 6, 6]
    assert formulas.md_write_cost(5, 6, 5) == 6 and formulas.md_write_cost(6, 6, 4) == 6


def test_pareto_front_in_html_and_png(tmp_path):
    html = tmp_path / "plan.html"
    pngs = tmp_path / "pngs"
    run = run_cli(["plan", "--capacity-tb", "1", *SMALL, "--min-iops", "900", "--jobs", "1",
                   "--html", str(html), "--png", str(pngs)])
    assert run.status == 0, run.stderr
    text = html.read_text()
    assert "Pareto" in text and "<svg" in text
    data = (pngs / "pareto.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_the_setup_script_runs_top_to_bottom_with_the_choices_commented_out():
    """The script once had mkfs.xfs and mkfs.ext4 back to back (ext4 would win, fstab says
    xfs) and the sfdisk of md0 after mkfs, mount and fstab (it would wreck the new filesystem)."""
    from raidlab.report.setup_script import render

    out = setup(Design("d", 5, "left-symmetric", 6, 512, spares=1), DISK,
                raidlab.Array(level=5, devices=6, chunk_kib=512, member_kib=1 << 20), preset("oltp-innodb"))
    lines = render(out)
    runnable = [line for line in lines if not line.startswith("#")]
    assert not any("mkfs.ext4" in line or "sfdisk" in line for line in runnable)
    assert sum(line.startswith("mkfs.") for line in runnable) == 1
    assert sum(line.startswith("mount ") for line in runnable) == 1
    fstab = [line for line in lines if "/etc/fstab" in line and "blkid" in line]
    assert [line.startswith("#") for line in fstab] == [False, True]
    assert " xfs noatime,inode64" in fstab[0] and " ext4 noatime,nofail 0 2" in fstab[1] and "inode64" not in fstab[1]
    position = {key: next(i for i, line in enumerate(lines) if key in line)
                for key in ("mdadm --create", "sfdisk /dev/md0", "mkfs.xfs", "mkfs.ext4", "/etc/fstab")}
    assert position["mdadm --create"] < position["sfdisk /dev/md0"] < position["mkfs.xfs"] < position["/etc/fstab"]
    assert "# ext4 instead of XFS: mkfs.ext4 -b 4096 -E stride=128,stripe_width=640 /dev/md0" in lines
    assert "# only if md0 must be partitioned: printf 'label: gpt\\nstart=10240\\n' | sfdisk /dev/md0" in lines
    # The JSON keeps the commands whole and says which are choices.
    kind = {key: next(c.get("alternative") for c in out["commands"] if key in c["command"])
            for key in ("mkfs.ext4", "mkfs.xfs", "sfdisk")}
    assert kind == {"mkfs.ext4": "ext4", "mkfs.xfs": None, "sfdisk": "partition"}
