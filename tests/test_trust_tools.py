"""Issue 21, section 4 (tools a new user trusts): align's exit status, plan's runbook, calibrate's
capacity, one format for probabilities, and plan's progress bar. Each test failed before its fix."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli, run_process

# sfdisk -J dumps: a DOS table at sector 63 (misaligned everywhere) and one at 2048.
DOS_63 = json.dumps({"partitiontable": {"label": "dos", "device": "/dev/sdb", "unit": "sectors",
                                        "sectorsize": 512, "partitions": [
                                            {"node": "/dev/sdb1", "start": 63, "size": 585871902}]}})
DOS_2048 = json.dumps({"partitiontable": {"label": "dos", "device": "/dev/sdc", "unit": "sectors",
                                          "sectorsize": 512, "partitions": [
                                              {"node": "/dev/sdc1", "start": 2048, "size": 585869312}]}})


def _dump(tmp_path, text):
    path = tmp_path / "dump.json"
    path.write_text(text)
    return str(path)


# -- 1. align: 0 aligned, 1 checked and misaligned, 2 bad input ---------------------------------


def test_align_exits_1_when_a_partition_is_misaligned(tmp_path):
    run = run_process(["align", _dump(tmp_path, DOS_63), "--chunk-kib", "64"])
    assert run.status == 1
    assert run.stderr == ""  # a finding, not an error
    assert "32256 bytes into a 64 KiB chunk" in run.stdout and "recreate it at sector 2048" in run.stdout


def test_align_exits_1_for_a_stripe_misaligned_partition_in_json_too(tmp_path):
    # 1 MiB is chunk-aligned but not a multiple of raid5 x4's 192 KiB stripe.
    run = run_process(["align", _dump(tmp_path, DOS_2048), "--level", "5", "--devices", "4",
                       "--chunk-kib", "64", "--json"])
    assert run.status == 1
    report = json.loads(run.stdout)
    assert report["aligned"] is False and report["partitions"][0]["status"] == "stripe-misaligned"


def test_align_exits_0_when_every_partition_is_aligned(tmp_path):
    run = run_process(["align", _dump(tmp_path, DOS_2048), "--chunk-kib", "64"])
    assert run.status == 0, run.stderr
    assert "Every partition is aligned" in run.stdout


def test_align_bad_input_is_still_2(tmp_path):
    run = run_process(["align", _dump(tmp_path, "{not json"), "--chunk-kib", "64"])
    assert run.status == 2
    assert run.stderr.splitlines() == [run.stderr.strip()] and "not JSON" in run.stderr


def test_align_help_documents_its_exit_statuses():
    run = run_cli(["align", "--help"])
    assert run.status == 0
    text = " ".join(run.stdout.split())
    assert "Exit status:" in text
    assert "0 every partition is aligned" in text
    assert "1 checked: at least one partition is misaligned" in text
    assert "2 bad input" in text


def test_an_internal_error_is_not_mistaken_for_findings(tmp_path, monkeypatch):
    from raidlab import align as aligner
    from raidlab import cli

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(aligner, "check", broken)
    run = run_cli(["align", _dump(tmp_path, DOS_2048), "--chunk-kib", "64"])
    assert run.status == cli.EXIT_INTERNAL == 70
    assert cli.EXIT_FINDINGS == 1 and cli.EXIT_USAGE == 2
    assert run.stderr_lines == ["raidlab: error: internal error (ZeroDivisionError): boom"]


# -- 3. calibrate: the drive's capacity, never a test file's size ---------------------------------


def test_calibrate_refuses_a_file_target_without_the_drive_capacity(tmp_path):
    target = tmp_path / "cal.bin"
    run = run_process(["calibrate", "--target", str(target), "--size", "64M", "--quick"])
    assert run.status == 2
    assert len(run.stderr_lines) == 1
    assert run.stderr_lines[0].startswith("raidlab: error: --target ")
    assert "its size is not a drive's capacity" in run.stderr and "--capacity-tb" in run.stderr
    assert not target.exists()  # refused before fio wrote anything


def test_calibrate_refuses_an_existing_file_too(tmp_path):
    target = tmp_path / "cal.bin"
    target.write_bytes(b"\0" * (32 << 20))
    run = run_cli(["calibrate", "--target", str(target), "--destroy-data", "--quick"])
    assert run.status == 2 and "is a regular file: its size is not a drive's capacity" in run.stderr
    assert target.read_bytes() == b"\0" * (32 << 20)


@pytest.mark.parametrize("value,words", [("nan", "not a finite number (the range is 0<x<=1000.0)"),
                                         ("-1", "not in the range 0<x<=1000.0"),
                                         ("0.00001", "smaller than the swept region")])
def test_calibrate_capacity_tb_out_of_range_is_one_line(tmp_path, value, words):
    run = run_cli(["calibrate", "--target", str(tmp_path / "x.bin"), "--size", "64M",
                   "--capacity-tb", value, "--quick"])
    assert run.status == 2 and len(run.stderr_lines) == 1, run.stderr
    assert words in run.stderr


def test_drive_capacity_decision():
    from raidlab.errors import ConfigError
    from raidlab.measure.calibrate import drive_capacity
    from raidlab.measure.safety import Target

    span = 64 << 20
    assert drive_capacity(Target("/tmp/f", "file", span), 0.96, span) == (
        960_000_000_000, "given with --capacity-tb")
    # A block device's size is the drive's (no sysfs entry for this made-up device number).
    assert drive_capacity(Target("/dev/sdz", "block", 4 * 10**12, "4095:4095"), None, span) == (
        4 * 10**12, "the size of block device /dev/sdz")
    with pytest.raises(ConfigError, match="is a new file: its size is not a drive's capacity"):
        drive_capacity(Target("/tmp/new", "missing"), None, span)


def test_drive_capacity_of_a_partition_is_its_disk(tmp_path, monkeypatch):
    from raidlab.measure import safety
    from raidlab.measure.calibrate import drive_capacity

    disk = tmp_path / "devices" / "sdb"
    (disk / "sdb1").mkdir(parents=True)
    (disk / "size").write_text("31251759104\n")  # 16 TB in 512-byte units
    (disk / "sdb1" / "partition").write_text("1\n")
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "8:17").symlink_to(disk / "sdb1")
    monkeypatch.setattr(safety, "SYS_DEV_BLOCK", str(tmp_path / "dev"))
    target = safety.Target("/dev/sdb1", "block", 10**12, "8:17")
    assert drive_capacity(target, None, 64 << 20) == (31251759104 * 512, "the disk holding partition /dev/sdb1")


def test_calibration_writes_the_drive_capacity_into_the_model():
    from raidlab.measure import calibrate as calibration
    from raidlab.measure import fit
    from raidlab.workload import Workload

    span = 64 << 20
    truth = {"kind": "empirical", "params": {"capacity_bytes": span, "read_mb_s": 500.0, "write_mb_s": 300.0}}
    observations = [fit.Observation.from_document(point, fit.single_drive_sim(
        truth, Workload((point.job(50_000_000),), "fio", ""), seed=3).to_dict())
        for point in calibration.sweep_points(True)]
    result = calibration.from_observations(observations, span, model="empirical", max_evals=3,
                                           capacity=(960_000_000_000, "given with --capacity-tb"))
    assert result.drive()["params"]["capacity_bytes"] == 960_000_000_000
    assert result.to_dict()["capacity_bytes"] == 960_000_000_000
    assert result.to_dict()["candidates"]["empirical"]["params"]["capacity_bytes"] == 960_000_000_000
    toml = result.to_toml()
    assert "\ncapacity_bytes = 960000000000\n" in toml
    assert "# capacity: 894.07 GiB (given with --capacity-tb)" in toml


# -- 4. one way to write a probability ----------------------------------------------------------


@pytest.mark.parametrize("p,text", [
    (0, "0 %"), (1, "100 %"), (0.5, "50 %"), (0.0552, "5.52 %"), (0.00123, "0.123 %"),
    (0.000123, "0.0123 %"), (9.38e-05, "9.38e-03 %"), (3.3e-07, "3.30e-05 %"), (1e-12, "1.00e-10 %"),
    (0.99999, "99.999 %"), (None, "-"), (float("nan"), "-"), (float("inf"), "-"),
])
def test_format_probability(p, text):
    from raidlab.units import format_probability

    assert format_probability(p) == text


def test_reliability_text_writes_every_probability_in_percent():
    from raidlab.units import format_probability

    # A day's repair, the figure's own (the default repair is the member's idle rebuild).
    args = ["reliability", "--level", "5", "--devices", "6", "--trials", "0", "--mttr-hours", "24"]
    doc = run_cli([*args, "--json"]).json()
    run = run_cli(args)
    assert run.status == 0, run.stderr
    row = next(line for line in run.stdout.splitlines() if line.startswith("P(array loss in 5 y)"))
    # 9.38e-05 as a fraction used to print as "9.380e-05" beside "6.49 %" one row below.
    assert doc["p_array_loss"] == pytest.approx(9.38e-05, rel=1e-3)
    assert format_probability(doc["p_array_loss"]) in row
    assert "9.38e-03 %" in row and "e-05" not in run.stdout
    sector = next(line for line in run.stdout.splitlines() if line.startswith("P(any sector lost"))
    assert format_probability(doc["p_sector_loss"]) in sector


def test_html_and_plan_tables_use_the_same_probability_format():
    from raidlab.commands.plan import _row
    from raidlab.report import html

    assert html._prob(3.3e-07) == "3.30e-05 %" and html._prob(None) == "–"

    class Design:
        name = "raid6 x6"

    class Evaluated:
        design, cost, capacity_bytes, iops = Design(), 6, 4 * 10**12, 1000.0
        result = {"optimal": {"p99_ms": 1.0}}
        degraded_iops, rebuild_hours, loss_probability, tolerance = 900.0, 10.0, 5.5e-03, 2

    row = _row(Evaluated(), False, None)
    assert row[-2] == "0.55 %"  # was "5.5e-03" (the basis follows it)


# -- 5. plan's progress: the shared bar, on a terminal only, never with --json -----------------

QUICK_PLAN = ["plan", "--capacity-tb", "0.1", "--preset", "oltp-postgres", "--drive", "x25e-slc",
              "--levels", "10", "--chunks-kib", "64", "--raid10-layouts", "n2", "--max-drives", "6",
              "--sim-seconds", "0.02", "--jobs", "1"]


def _stderr_on_a_terminal(args):
    """Runs ``python -m raidlab ARGS`` with stderr on a pseudo-terminal; (status, stdout, stderr)."""
    import os
    import pty
    import select
    import subprocess
    import sys

    master, slave = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "raidlab", *args], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            child.kill()
            raise AssertionError("no output from the child for 60 s")
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    out = child.stdout.read()
    child.stdout.close()
    return child.wait(timeout=60), out.decode(), seen.decode(errors="replace")


def test_plan_shows_the_shared_progress_bar_on_a_terminal():
    status, out, err = _stderr_on_a_terminal(QUICK_PLAN)
    assert status == 0, err
    assert "planning  [" in err and "100%" in err
    assert "Setup for" in out and "planning" not in out


def test_plan_shows_no_progress_bar_when_json_is_asked_for():
    status, out, err = _stderr_on_a_terminal(QUICK_PLAN + ["--json"])
    assert status == 0, err
    assert "planning" not in err and err.strip() == ""
    assert json.loads(out)["winner"].startswith("raid10 n2")


def test_plan_shows_no_progress_bar_when_stderr_is_a_pipe():
    run = run_process(QUICK_PLAN)
    assert run.status == 0, run.stderr
    assert run.stderr == ""


def test_progress_bar_counts_items():
    from raidlab.commands.progress import ProgressBar

    bar = ProgressBar(False, "x")
    assert bar.callback is None
    shown = []

    class Recorder(ProgressBar):
        def __call__(self, fraction):
            shown.append(fraction)

    tick = Recorder(False, "planning").counter(4)
    for count in (1, 2, 1):
        tick(count)
    assert shown == [0.25, 0.75, 1.0]


# -- 2. plan's runbook: boot, bitmap, speed limits, monitoring, placeholders, no private cites ----

PLAN = ["plan", "--capacity-tb", "1", "--drive", "cheetah-10k7", "--levels", "5", "--chunks-kib", "64",
        "--max-drives", "8", "--sim-seconds", "0.5", "--preset", "oltp-innodb", "--jobs", "1"]


def _runbook(design_args, workload="oltp-innodb"):
    import raidlab
    from raidlab.planner.candidates import Design, DriveModel
    from raidlab.planner.setup import render, setup
    from raidlab.workload import preset

    level, layout, devices, chunk, spares = design_args
    disk = DriveModel("test-disk", "cheetah-10k7", "hdd", False, 300_000_000_000, 100.0)
    array = raidlab.Array(level=level, devices=devices, layout=layout, chunk_kib=chunk or 512,
                          member_kib=1 << 20)
    out = setup(Design("d", level, layout, devices, chunk, spares=spares), disk, array, preset(workload))
    return out, "\n".join(render(out))


def test_runbook_survives_a_reboot_with_mdadm_conf_initramfs_and_fstab_by_uuid():
    out, text = _runbook((6, "left-symmetric", 6, 256, 0))
    commands = [c["command"] for c in out["commands"]]
    assert ("mdadm --detail --scan >> /etc/mdadm/mdadm.conf   # Debian/Ubuntu; RHEL/Fedora/SUSE: "
            "/etc/mdadm.conf") in commands
    assert "update-initramfs -u   # Debian/Ubuntu; RHEL/Fedora/SUSE: dracut -f" in commands
    assert ('echo "UUID=$(blkid -s UUID -o value /dev/md0) /srv/data xfs noatime,inode64,nofail 0 0" '
            ">> /etc/fstab") in commands
    # In order: create, then record the array, then rebuild the initramfs.
    order = [next(i for i, c in enumerate(commands) if c.startswith(word))
             for word in ("mdadm --create", "mdadm --detail --scan", "update-initramfs", "echo \"UUID=")]
    assert order == sorted(order)


def test_runbook_chooses_the_write_intent_bitmap_and_says_what_it_costs():
    out, text = _runbook((5, "left-symmetric", 4, 64, 0))
    create = out["commands"][0]
    assert "--bitmap=internal --bitmap-chunk=64M" in create["command"]
    assert "waits for an extra bitmap write to every member" in create["why"]
    assert "16 regions" in create["why"]  # 1 GiB members / 64 MiB
    assert "do not include this cost" in create["why"]
    raid0, _ = _runbook((0, None, 4, 64, 0))
    assert "--bitmap" not in raid0["commands"][0]["command"]  # mdadm refuses any bitmap on raid0
    assert "No write-intent bitmap" in raid0["commands"][0]["why"]
    assert not any("sync_action" in c["command"] or "speed_limit" in c["command"] for c in raid0["commands"])


def test_runbook_sets_speed_limits_and_monitors_and_scrubs():
    out, text = _runbook((10, "n2", 4, 64, 0))
    commands = [c["command"] for c in out["commands"]]
    assert "sysctl -w dev.raid.speed_limit_min=1000 dev.raid.speed_limit_max=200000" in commands
    assert any(c.startswith("printf 'dev.raid.speed_limit_min = 1000\\ndev.raid.speed_limit_max = 200000\\n'")
               and c.endswith("> /etc/sysctl.d/90-md-resync.conf") for c in commands)
    monitor = next(c for c in commands if "mdmonitor" in c)
    assert "MAILADDR root" in monitor and "mdadm --monitor --scan --daemonise --mail=root" in monitor
    assert "echo '0 1 1 * * root echo check > /sys/block/md0/md/sync_action' > /etc/cron.d/md0-scrub" in commands
    assert "checkarray" in text and "mismatch_cnt" in text


def test_runbook_uses_placeholders_not_real_device_names():
    out, text = _runbook((5, "left-symmetric", 6, 512, 1))
    assert text.startswith("# Replace <disk1> ... <disk7> with the 7 drives' device paths")
    assert "<disk1> <disk2> <disk3> <disk4> <disk5> <disk6> <disk7>" in out["commands"][0]["command"]
    assert "/dev/sd" not in text and "sdb" not in text and "nvme0n1" not in text


def test_runbook_cites_nothing_the_user_does_not_have():
    import re

    for design in ((5, "left-symmetric", 6, 512, 1), (10, "f2", 5, 64, 0), (1, None, 2, None, 0)):
        out, text = _runbook(design, "backup-scan")
        assert not re.search(r"research|shared/|§", text), text
    run = run_cli(PLAN)
    assert run.status == 0, run.stderr
    assert not re.search(r"research|shared/|§", run.stdout)


def test_plan_rebuild_estimate_runs_under_the_speed_limits_it_sets():
    default = run_cli(PLAN + ["--json"]).json()
    raised = run_cli(PLAN + ["--json", "--speed-limit-min", "20000", "--speed-limit-max", "50000"]).json()
    assert default["request"]["md_speed_limits"] == {"speed_limit_min_kib_s": 1000, "speed_limit_max_kib_s": 200000}
    assert raised["setup"]["speed_limits"] == {"speed_limit_min_kib_s": 20000, "speed_limit_max_kib_s": 50000}
    low, high = default["setup"]["rebuild"], raised["setup"]["rebuild"]
    # Under the full workload md drops to about speed_limit_min: the floor sets the rebuild time.
    assert 1000 <= low["loaded"]["rate_kib_s"] < 3000
    assert 20000 <= high["loaded"]["rate_kib_s"] < 25000
    assert high["loaded"]["hours"] == pytest.approx(high["member_bytes"] / 1024 / high["loaded"]["rate_kib_s"] / 3600,
                                                    rel=0.01)
    # Idle, the drive's streaming rate or speed_limit_max, whichever is lower, averaged over the
    # member's zones (about 69 MB/s on this disk's outer tracks, less inside).
    assert 45000 < low["idle"]["rate_kib_s"] < 65000
    # (md checks its speed after each 128 KiB it issued, so it overshoots the max a little.)
    assert 45000 < high["idle"]["rate_kib_s"] <= 50000 * 1.02
    # The table's rebuild hours are the same estimate, and the runbook says so with the same numbers.
    winner = next(d for d in raised["designs"] if d["name"] == raised["winner"])
    assert winner["rebuild"]["hours"] == high["loaded"]["hours"]
    sysctl = next(c for c in raised["setup"]["commands"] if c["command"].startswith("sysctl -w"))
    assert sysctl["command"] == "sysctl -w dev.raid.speed_limit_min=20000 dev.raid.speed_limit_max=50000"
    assert f"{high['loaded']['rate_kib_s']:,.0f} KiB/s" in sysctl["why"]


def test_plan_speed_limits_bad_input_is_one_line():
    run = run_cli(PLAN + ["--speed-limit-min", "5000", "--speed-limit-max", "4000"])
    assert run.status == 2 and len(run.stderr_lines) == 1
    assert "--speed-limit-min 5000 is above --speed-limit-max 4000" in run.stderr


def test_a_missed_rebuild_target_points_at_the_speed_limit():
    run = run_cli(PLAN + ["--max-rebuild-hours", "5"])
    assert run.status == 2 and len(run.stderr_lines) == 1
    assert "miss rebuild time" in run.stderr and "--speed-limit-min" in run.stderr


def test_a_closed_pipe_is_neither_a_finding_nor_a_bug(tmp_path, monkeypatch):
    # main's mapping of a BrokenPipeError that reaches it (click.main, or a direct invoke).
    from raidlab import cli

    def closed(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli.cli, "main", closed)
    monkeypatch.setattr(cli.cli, "invoke", closed)
    monkeypatch.setattr(cli, "_silence_stdout", lambda: None)
    assert cli.main(["align", _dump(tmp_path, DOS_2048)]) == cli.EXIT_BROKEN_PIPE == 141
