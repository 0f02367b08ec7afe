"""What keeps a planned array alive after ``mdadm --create``: the write-intent bitmap, assembly at
boot (mdadm.conf, initramfs), the fstab line, md's resync speed limits, monitoring and scrubs.

Every entry is ``{"command", "why"}`` like the rest of the setup (:mod:`.setup`). The "why" text
is what the user reads, so it cites only documents they have (man pages, the kernel's md
documentation); where the facts come from is said here, in comments.

Sources:
- Write-intent bitmap: the kernel's Documentation/admin-guide/md.rst ("bitmap" section) and
  drivers/md/md-bitmap.c: before the first write to a clean bitmap chunk md sets its bit and
  writes the bitmap page out (to every member for an internal bitmap) and waits for that write;
  bits are cleared lazily, ``daemon_sleep`` (5 s, mdadm's DEFAULT_BITMAP_DELAY) after the region
  goes quiet. RAID1/10 writes are held (plugged) until the bitmap update is flushed
  (raid1_add_bio_to_plug). mdadm's internal bitmap chunk defaults to 64 MiB (super1.c
  add_internal_bitmap1); mdadm 3.3-4.3 added one by itself above 100 GiB members and mdadm
  4.4 asks interactively (none with --run), so the runbook says which one it wants.
- Resync speed: drivers/md/md.c md_do_sync/is_mddev_idle; sysctl_speed_limit_min = 1000 and
  sysctl_speed_limit_max = 200000 KiB/s per device (md.rst: "a per-device rate"); below min md
  never throttles, above max it sleeps, in between it yields to any other I/O on the members.
- Assembly and monitoring: mdadm(8) (--detail --scan, --monitor --scan --daemonise --mail),
  mdadm.conf(5) (MAILADDR); Debian/Ubuntu read /etc/mdadm/mdadm.conf and rebuild the initramfs
  with update-initramfs, RHEL/Fedora read /etc/mdadm.conf and use dracut.
- Scrubs: md.rst (sync_action "check", mismatch_cnt); Debian's mdadm package runs checkarray
  monthly (first Sunday) and RHEL's raid-check weekly (package cron files; worth checking on
  the host before adding another).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from raidlab.run import DEFAULTS
from raidlab.units import format_probability, human_bytes

#: md's resync speed limits by default, KiB/s per device (drivers/md/md.c), declared once in run.py.
MD_SPEED_LIMIT_MIN_KIB_S = DEFAULTS["speed_limit_min"]
MD_SPEED_LIMIT_MAX_KIB_S = DEFAULTS["speed_limit_max"]
#: Internal bitmap chunk the runbook asks for (mdadm's own default for internal bitmaps).
BITMAP_CHUNK_MIB = 64
#: How long md waits before clearing bits of regions that went quiet (mdadm's default).
BITMAP_DAEMON_SLEEP_S = 5

Add = Callable[..., None]  # add(command, why[, alternative])


def bitmap_options(level: int) -> List[str]:
    """The ``mdadm --create`` options for the write-intent bitmap: internal, 64 MiB chunks, for
    every level with redundancy. None for raid0: mdadm refuses any --bitmap there, even
    "none" ("bitmaps not meaningful with level", Create.c checks before it reads "none")."""
    if level == 0:
        return []
    return ["--bitmap=internal", f"--bitmap-chunk={BITMAP_CHUNK_MIB}M"]


def bitmap_why(level: int, member_bytes: int) -> str:
    """Why that bitmap, and what it costs on writes."""
    if level == 0:
        return ("No write-intent bitmap: raid0 has no redundancy to resync, and mdadm refuses one.")
    regions = max(member_bytes // (BITMAP_CHUNK_MIB * 2**20), 1)
    return (f"--bitmap=internal --bitmap-chunk={BITMAP_CHUNK_MIB}M: a write-intent bitmap, one bit per "
            f"{BITMAP_CHUNK_MIB} MiB of each member ({regions:,} regions here). After a crash or a "
            f"member that drops out and comes back, md resyncs only the regions marked dirty instead "
            f"of the whole {human_bytes(member_bytes)} member. Its write cost: the first write to a "
            f"clean region waits for an extra bitmap write to every member; the bit is cleared about "
            f"{BITMAP_DAEMON_SLEEP_S} s after the region goes quiet, so writes that keep hitting the "
            f"same regions pay it once, scattered writes across the array pay it more often (a larger "
            f"--bitmap-chunk means fewer such writes but more to resync). The simulated figures do not "
            f"include this cost. --bitmap=none saves it and makes every unclean shutdown a full resync "
            f"(md.rst, 'bitmap').")


def persist(add: Add, mount_point: str, xfs_options: str) -> None:
    """Assemble md0 at boot (mdadm.conf + initramfs) and mount it by filesystem UUID."""
    add("mdadm --detail --scan >> /etc/mdadm/mdadm.conf   # Debian/Ubuntu; RHEL/Fedora/SUSE: /etc/mdadm.conf",
        "records the array (its name and UUID) so it is assembled as /dev/md0 at every boot, whatever "
        "the members are called then; run it once, after the create, and check the file holds one "
        "ARRAY line for md0.")
    add("update-initramfs -u   # Debian/Ubuntu; RHEL/Fedora/SUSE: dracut -f",
        "the initramfs carries its own copy of mdadm.conf: rebuild it so early boot assembles md0 "
        "with the same name (without it the array can come up as /dev/md127).")
    add(f"echo \"UUID=$(blkid -s UUID -o value /dev/md0) {mount_point} xfs {xfs_options},nofail 0 0\" >> /etc/fstab",
        "mount by the filesystem's UUID (blkid reads it from the new filesystem), which stays the same "
        "when device names change; nofail lets the machine boot to repair a failed array. Check with: "
        f"mount -a && findmnt {mount_point}.")
    add(f"echo \"UUID=$(blkid -s UUID -o value /dev/md0) {mount_point} ext4 noatime,nofail 0 2\" >> /etc/fstab",
        "ext4's line: no inode64 (an XFS option ext4 refuses), and pass 2 so fsck checks it at boot.",
        "ext4")


def speed_limits(add: Add, limits: Dict[str, int], rebuild: Optional[Dict[str, Any]]) -> None:
    """Set md's resync speed limits, saying what they do to this array's rebuild time."""
    low, high = limits["speed_limit_min"], limits["speed_limit_max"]
    why = (f"md rebuilds, resyncs and scrubs each member at between speed_limit_min ({low:,} KiB/s) "
           f"and speed_limit_max ({high:,} KiB/s) per device: idle it runs at the lower of the "
           f"drive's streaming rate and speed_limit_max; while other I/O reaches the members it "
           f"yields to it, down to speed_limit_min, so under load the limits, not the drives, set "
           f"the rebuild time.")
    if rebuild is not None:
        why += " " + rebuild_sentence(rebuild, low)
    add(f"sysctl -w dev.raid.speed_limit_min={low} dev.raid.speed_limit_max={high}", why)
    add(f"printf 'dev.raid.speed_limit_min = {low}\\ndev.raid.speed_limit_max = {high}\\n' "
        f"> /etc/sysctl.d/90-md-resync.conf",
        "the same limits at every boot (sysctl.d(5)); the plan's rebuild times assume these values.")


def _hours(value: Optional[float]) -> str:
    if value is None:
        return "never (no progress)"
    return f"{value:,.1f} h" if value < 48 else f"{value:,.0f} h ({value / 24:,.0f} days)"


def rebuild_sentence(rebuild: Dict[str, Any], low: int) -> str:
    """The plan's rebuild estimate in terms of the speed limits."""
    member = human_bytes(rebuild["member_bytes"])
    parts = []
    idle = rebuild.get("idle")
    loss, loaded_loss = rebuild.get("loss_probability"), rebuild.get("loss_probability_under_load")
    years = rebuild.get("mission_years")
    if idle and idle.get("rate_kib_s"):
        parts.append(f"Simulated for this design: an idle rebuild of a {member} member runs at "
                     f"{idle['rate_kib_s']:,.0f} KiB/s, {_hours(idle.get('hours'))}, the repair time of its "
                     f"P(loss)" + (f" ({format_probability(loss)} over {years:g} y)" if loss is not None else ""))
    loaded = rebuild.get("loaded")
    if loaded and loaded.get("rate_kib_s"):
        parts.append(f"under the workload ({'the --min-iops load' if loaded.get('load') == 'min-iops' else 'full load'}) "
                     f"{loaded['rate_kib_s']:,.0f} KiB/s, {_hours(loaded.get('hours'))}, the plan's rebuild "
                     f"estimate" + (f" (P(loss) {format_probability(loaded_loss)} if every rebuild ran that long)"
                                    if loaded_loss is not None else ""))
    sentence = "; ".join(parts) + "." if parts else ""
    target = rebuild.get("target_hours")
    if target:
        needed = rebuild["member_bytes"] / 1024 / (target * 3600)
        if needed > low:
            sentence += (f" Rebuilding within {target:g} h under load needs about {needed:,.0f} KiB/s: "
                         f"raise speed_limit_min towards that and rerun the plan with --speed-limit-min "
                         f"to see what it costs the foreground I/O.")
    return sentence.strip()


def monitoring(add: Add, level: int, scrubbed: Sequence[str] = ("md0",)) -> None:
    """Mail on failures, and a monthly scrub of the arrays with redundancy (``scrubbed``: md0,
    or a stack's inner arrays: an outer raid0 has no sync_action check)."""
    add("echo 'MAILADDR root' >> /etc/mdadm/mdadm.conf && systemctl enable --now mdmonitor   "
        "# or: mdadm --monitor --scan --daemonise --mail=root",
        "a failed member is silent otherwise: mdadm's monitor mails MAILADDR on Fail, DegradedArray "
        "and SparesMissing events (RHEL/Fedora: /etc/mdadm.conf; Debian/Ubuntu start the monitor "
        "from the mdadm package). Test the mail path with: mdadm --monitor --scan --test --oneshot.")
    if level == 0:
        return
    if list(scrubbed) == ["md0"]:
        command = "echo '0 1 1 * * root echo check > /sys/block/md0/md/sync_action' > /etc/cron.d/md0-scrub"
        watch, lead = "/sys/block/md0/md/mismatch_cnt", ""
    else:
        names = " ".join(scrubbed)
        command = (f"echo '0 1 1 * * root for md in {names}; do echo check > /sys/block/$md/md/sync_action; "
                   f"done' > /etc/cron.d/md-scrub")
        watch = f"/sys/block/{{{','.join(scrubbed)}}}/md/mismatch_cnt"
        lead = "the inner arrays hold the redundancy, so they are scrubbed; "
    add(command,
        lead + "a monthly scrub reads every sector of every member so that unreadable sectors are found and "
        f"rewritten from redundancy while it still exists, not during a rebuild. Watch {watch} afterwards. "
        "It runs at the same speed limits as a rebuild. Debian/Ubuntu's mdadm package already schedules "
        "one (checkarray, first Sunday of the month) and RHEL's raid-check runs weekly, and some packages "
        "schedule it as a systemd timer: look in /etc/cron.d and at systemctl list-timers before adding this.")
