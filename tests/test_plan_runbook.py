"""``plan``'s runbook: survives a reboot (mdadm.conf, initramfs, fstab by UUID), chooses the
write-intent bitmap and says its cost, sets speed limits, monitors and scrubs, uses placeholders,
cites nothing the user lacks; the rebuild estimate runs under the speed limits it sets."""

from __future__ import annotations

import pytest

from conftest import run_cli


# -- plan's runbook: boot, bitmap, speed limits, monitoring, placeholders, no private cites ----

PLAN = ["plan", "--capacity-tb", "1", "--drive", "cheetah-10k7", "--levels", "5", "--chunks-kib", "64",
        "--max-drives", "8", "--sim-seconds", "0.5", "--preset", "oltp-innodb", "--jobs", "1"]


def _runbook(design_args, workload="oltp-innodb"):
    import raidlab
    from raidlab.planner.candidates import Design, DriveModel
    from raidlab.planner.setup import setup
    from raidlab.report.setup_script import render
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
    assert default["request"]["md_speed_limits"] == {"speed_limit_min": 1000, "speed_limit_max": 200000}
    assert raised["setup"]["speed_limits"] == {"speed_limit_min": 20000, "speed_limit_max": 50000}
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
