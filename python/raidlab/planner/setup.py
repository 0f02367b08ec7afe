"""The exact commands that build a planned design, each with a line of why. The why is what the
user reads: it cites man pages, kernel files and documentation they have. What keeps the array running after it is built
(bitmap, boot, speed limits, monitoring) is in :mod:`.runbook`.

Sources: mkfs.xfs(8) and xfs(5) (su/sw, mount options; nobarrier was removed in Linux 4.19),
mkfs.ext4(8) (stride, stripe_width), sfdisk(8) and lvm.conf(5) (libfdisk's 1 MiB grain, LVM's
pe_start), the kernel's Documentation/block/ and Documentation/admin-guide/md.rst (schedulers,
read_ahead_kb, stripe_cache_size) and mdadm(8) (metadata 1.2, its 1 MiB-aligned data offset,
default chunk and layouts).

The stripe geometry (su/sw, stride/stripe_width) is read from :class:`raidlab.Array`'s
``io_min_bytes``/``io_opt_bytes`` — md's minimum_io_size/optimal_io_size for that exact array —
never derived from "N/2 data disks". For md raid10 with far or offset copies, and for near copies
on a device count that is not a multiple of them, md's optimal_io_size is chunk x raid_disks
(drivers/md/raid10.c, raid10_set_io_opt), and the output says so.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from raidlab.array import Array
from raidlab.layout import ext4_stripe_options
from raidlab.planner import runbook
from raidlab.planner.candidates import Design, DriveModel
from raidlab.stacked import StackedArray, inner_arrays, mdadm_commands
from raidlab.stripe_cache import MD_DEFAULT_STRIPE_CACHE, PAGE, planned_stripe_cache_size
from raidlab.units import human_bytes
from raidlab.workload import Workload

#: ext4 block size the stride/stripe_width are counted in (mkfs.ext4 -b 4096).
EXT4_BLOCK = 4096
MIB = 2**20


def scheduler_for(model: DriveModel) -> str:
    """none for NVMe (deep parallel hardware queues; a scheduler only costs CPU), mq-deadline
    for SATA/SAS SSDs and disks (it orders and batches requests for them)."""
    return "none" if model.nvme else "mq-deadline"


def member_placeholders(count: int) -> List[str]:
    """Placeholders for the drives, ``<disk1>`` ... ``<diskN>``: raidlab does not know the host's
    device names, and a shell refuses a line that still holds one (``<`` and ``>`` are
    redirections), so a runbook pasted unedited destroys nothing."""
    return [f"<disk{i}>" for i in range(1, count + 1)]


PLACEHOLDER_NOTE = ("Replace {first} ... {last} with the {count} drives' device paths (e.g. "
                    "/dev/disk/by-id/...), the same drive for the same placeholder in every command; "
                    "mdadm --create destroys what is on them. /dev/md0 and {mount} are names to "
                    "choose too.")


def textbook_data_disks(level: int, devices: int, copies: int) -> Optional[float]:
    """The data-disk count the usual rule gives (N, N-1, N-2, N/copies)."""
    return {0: devices, 4: devices - 1, 5: devices - 1, 6: devices - 2}.get(
        level, devices / copies if level == 10 else None)


def geometry(array: Array) -> Dict[str, Any]:
    """su/sw and stride/stripe_width from md's io_min/io_opt, and a note when they differ
    from the textbook data-disk count."""
    io_min, io_opt = array.io_min_bytes, array.io_opt_bytes
    if io_opt == 0 or io_min < EXT4_BLOCK:
        return {"io_min_bytes": io_min, "io_opt_bytes": io_opt, "su_bytes": None, "sw": None,
                "stride": None, "stripe_width": None, "note": None}
    sw = io_opt // io_min
    assert sw * io_min == io_opt, "md's io_opt is a whole number of chunks"
    textbook = textbook_data_disks(array.level, array.devices, array.copies)
    note = None
    if textbook is not None and textbook != sw:
        shown = f"{textbook:g}"
        if array.level == 10 and array.layout and array.layout[0] in "fo":
            why = (f"raid10 {array.layout} has near_copies = 1, so md sets optimal_io_size = "
                   f"chunk x raid_disks")
        else:
            why = (f"raid10 {array.layout} on {array.devices} devices (not a multiple of the "
                   f"{array.copies} near copies), so md sets optimal_io_size = chunk x raid_disks")
        note = (f"md reports io_opt = {human_bytes(io_opt)} = {sw} chunks for this array: {why} "
                f"(drivers/md/raid10.c). sw={sw} here, not the textbook N/{array.copies} = {shown}; "
                f"these are the values mkfs detects from /dev/md0 by itself.")
    return {"io_min_bytes": io_min, "io_opt_bytes": io_opt, "su_bytes": io_min, "sw": sw,
            "stride": io_min // EXT4_BLOCK, "stripe_width": io_opt // EXT4_BLOCK, "note": note}


def _kib(value: int) -> str:
    return f"{value // 1024}k"


def _mostly(workload: Workload, attribute: str) -> float:
    """A thread-weighted share over the workload's jobs (e.g. random_fraction)."""
    threads = sum(job.threads for job in workload.jobs)
    return sum(getattr(job, attribute) * job.threads for job in workload.jobs) / threads


def _buffered_sequential_writes(workload: Workload) -> bool:
    return any(job.read_fraction < 1 and job.random_fraction < 0.5 and not job.direct
               for job in workload.jobs)


def _create(add, design: Design, array: Array, names: List[str]) -> None:
    """mdadm --create, with the write-intent bitmap chosen explicitly."""
    create = [f"mdadm --create /dev/md0 --metadata=1.2 --level={design.level}",
              f"--raid-devices={design.devices}"]
    if design.chunk_kib:
        create.append(f"--chunk={design.chunk_kib}K")
    if design.layout:
        create.append(f"--layout={design.layout}")
    if design.spares:
        create.append(f"--spare-devices={design.spares}")
    create += runbook.bitmap_options(design.level)
    create.append(" ".join(names))
    layout_word = f" {design.layout}" if design.layout else ""
    member_bytes = min(array.member_kib_list) * 1024
    add(" ".join(create),
        f"raid{design.level}{layout_word}, {design.devices} members"
        + (f" + {design.spares} hot spare(s)" if design.spares else "")
        + (f", {design.chunk_kib} KiB chunk" if design.chunk_kib else "")
        + f": the design simulated. Metadata 1.2 (mdadm's default) puts the data at a 1 MiB-aligned "
          f"offset on each member, so whole disks need no partitions; usable "
          f"{array.capacity_bytes / 1e12:.3f} TB ({human_bytes(array.capacity_bytes)}). "
        + runbook.bitmap_why(design.level, member_bytes))


def _filesystems(add, notes: List[str], design: Design, geo: Dict[str, Any]) -> None:
    """mkfs.xfs and mkfs.ext4 with md's stripe geometry."""
    if geo["sw"] is None:
        add("mkfs.xfs /dev/md0",
            f"raid{design.level} has no stripe: md sets no minimum/optimal io size, so there is no "
            f"su/sw to give.")
        add("mkfs.ext4 -b 4096 /dev/md0", "likewise, no stride or stripe_width for a mirror.", "ext4")
        return
    su = _kib(geo["su_bytes"])
    add(f"mkfs.xfs -d su={su},sw={geo['sw']} /dev/md0",
        f"stripe unit = md's minimum_io_size ({human_bytes(geo['io_min_bytes'])}), stripe width = "
        f"optimal_io_size / su = {geo['sw']}: XFS aligns allocations to the chunk and mkfs would "
        f"detect exactly these values (xfsprogs libxfs/topology.c)."
        + (f" Note: {geo['note']}" if geo["note"] else ""))
    add(f"mkfs.ext4 -b 4096 -E {ext4_stripe_options(geo['stride'], geo['stripe_width'])} /dev/md0",
        "the same geometry for ext4 in 4 KiB blocks: stride = chunk / 4 KiB, stripe_width = "
        "optimal_io_size / 4 KiB; mballoc aligns allocations to it, which on parity RAID avoids "
        "read-modify-write (mke2fs(8)).", "ext4")
    if geo["su_bytes"] > 256 * 1024:
        notes.append(f"mkfs.xfs will say the log stripe unit ({geo['su_bytes']} bytes) is too large "
                     f"(maximum 256KiB) and use 32 KiB: expected and harmless (xfs_mkfs.c).")


def _mount(add, geo: Dict[str, Any], workload: Workload, mount_point: str) -> str:
    """The mount lines; returns the XFS mount options (for fstab)."""
    xfs_options = ["noatime", "inode64"]
    alloc_why = ""
    if geo["sw"] is not None and _buffered_sequential_writes(workload):
        allocsize = min(1 << max(12, math.ceil(math.log2(geo["io_opt_bytes"]))), 2**30)
        xfs_options.append(f"allocsize={_kib(allocsize)}")
        alloc_why = (f" allocsize={_kib(allocsize)} (the full stripe rounded up to a power of two; "
                     f"XFS takes 4 KiB..1 GiB powers of two) preallocates whole stripes for the "
                     f"workload's buffered sequential writes.")
    options = ",".join(xfs_options)
    add(f"mount -o {options} /dev/md0 {mount_point}",
        "noatime: reads do not turn into inode writes. inode64: inodes anywhere on the volume (the "
        "default since Linux 3.7; stated for old kernels)." + alloc_why +
        " No nobarrier: XFS removed it in Linux 4.19 and the mount would fail.")
    add(f"mount -o noatime /dev/md0 {mount_point}",
        "ext4 reads the stride/stripe_width from its superblock; no barrier options: flushes are "
        "what make fsync durable.", "ext4")
    return options


def _queues(add, design: Design, model: DriveModel, array: Array, workload: Workload,
            names: List[str]) -> int:
    """Scheduler on the members, stripe cache and read-ahead on md0; returns read_ahead_kb."""
    scheduler = scheduler_for(model)
    add(f"for d in {' '.join(names)}; do n=$(basename \"$(readlink -f \"$d\")\"); "
        f"echo {scheduler} > /sys/block/$n/queue/scheduler; done",
        ("NVMe: 'none' — the drive has deep parallel queues and a scheduler only costs CPU"
         if model.nvme else
         "mq-deadline on the members (md0 is bio-based and always shows 'none'): it merges and "
         "sorts requests for the disks and caps how long reads wait behind writes")
        + " (readlink turns a /dev/disk/by-id path into the kernel's name). Persist with a udev rule: "
        + "ACTION==\"add|change\", KERNEL==\"" + ("nvme*n1" if model.nvme else "sd*")
        + f"\", ATTR{{queue/scheduler}}=\"{scheduler}\".")
    if design.level in (4, 5, 6):
        entries = planned_stripe_cache_size(design.devices)
        memory = entries * PAGE * design.devices
        add(f"echo {entries} > /sys/block/md0/md/stripe_cache_size",
            f"md's default is {MD_DEFAULT_STRIPE_CACHE} stripes; every small write goes through this "
            f"cache (read-modify-write), so more entries keep more writes in flight and let md "
            f"gather full stripes. Memory: {entries} x 4 KiB x {design.devices} devices = "
            f"{human_bytes(memory)} (md.rst). The simulation used this value. Not persistent: set it "
            f"again at boot (udev rule on md0, ATTR{{md/stripe_cache_size}}).")
    kernel_default = max(2 * array.io_opt_bytes // 1024, 128)
    if _mostly(workload, "random_fraction") >= 0.5:
        value = 128
        why = (f"random I/O gains nothing from read-ahead and a big window drags whole stripes into "
               f"the page cache; the kernel's default for md0 is max(2 x io_opt, 128 KiB) = "
               f"{kernel_default} KiB (block/blk-settings.c). O_DIRECT I/O bypasses read-ahead either way.")
    else:
        value = max(kernel_default, 1024)
        why = (f"sequential reads: at least two full stripes ({2 * array.io_opt_bytes // 1024} KiB) "
               f"and 1 MiB, so each read-ahead window keeps every member busy; the kernel default is "
               f"{kernel_default} KiB (block/blk-settings.c). blockdev --setra counts 512-byte sectors.")
    add(f"echo {value} > /sys/block/md0/queue/read_ahead_kb", why)
    return value


def _partition(add, notes: List[str], array: Array) -> int:
    """How to partition md0 if it must be; returns the aligned start sector."""
    stripe = array.io_opt_bytes or array.io_min_bytes or PAGE
    grain = math.lcm(MIB, max(stripe, PAGE)) if array.io_opt_bytes else MIB
    start = grain // 512
    add(f"printf 'label: gpt\\nstart={start}\\n' | sfdisk /dev/md0",
        f"best: mkfs on /dev/md0 itself (offset 0 is aligned to everything); partition it only if "
        f"you must, before mkfs, and then give /dev/md0p1 instead of /dev/md0 to every command "
        f"below (mkfs, mount, blkid). A partition on md0 must "
        + (f"start on a multiple of 1 MiB and of the full stripe ({human_bytes(stripe)}): sector {start} "
           f"= {human_bytes(grain)}." if array.io_opt_bytes else
           f"start on a multiple of 1 MiB (a mirror has no stripe): sector {start}.")
        + f" Members: use whole disks, or start partitions at sector 2048 (1 MiB, "
        f"a multiple of 4 KiB physical sectors; md's chunk grid begins at its data offset).",
        "partition")
    if array.io_opt_bytes:
        notes.append(f"LVM on md0: pvcreate --dataalignment {array.io_opt_bytes // 1024}k /dev/md0 "
                     f"puts the first extent on a full stripe.")
    return start


def default_limits() -> Dict[str, int]:
    """md's own resync speed limits, KiB/s per device."""
    return {"speed_limit_min": runbook.MD_SPEED_LIMIT_MIN_KIB_S,
            "speed_limit_max": runbook.MD_SPEED_LIMIT_MAX_KIB_S}


def _create_stack(add, array: StackedArray, names: List[str]) -> None:
    """The create step of a stack (inner arrays first, then the outer one over them), and the
    inner arrays' stripe caches; the planner's own mkfs steps follow."""
    for step in mdadm_commands(array.geo, names, runbook.bitmap_options):
        if not step["command"].startswith("mkfs"):
            add(step["command"], step["why"])
    if array.geo["inner_level"] in (5, 6):
        per = array.geo["inner_devices"]
        entries = planned_stripe_cache_size(per)
        inner = " ".join(inner_arrays(array.geo["sets"]))
        add(f"for md in {inner}; do echo {entries} > /sys/block/$md/md/stripe_cache_size; done",
            f"each inner raid{array.geo['inner_level']} has its own stripe cache (md's default 256 stripes): "
            f"{entries} x 4 KiB x {per} devices each. Not persistent: set it again at boot.")


def setup(design: Design, model: DriveModel, array: Array, workload: Workload,
          mount_point: str = "/srv/data", limits: Optional[Dict[str, int]] = None,
          rebuild: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Commands, each ``{"command", "why"}``, plus notes, for the design: build it, make it
    survive a reboot, tune it, and watch it. ``limits`` are the md resync speed limits the plan
    simulated (md's defaults if None); ``rebuild`` its rebuild estimate (see runbook.py)."""
    commands: List[Dict[str, str]] = []
    notes: List[str] = []

    def add(command: str, why: str, alternative: Optional[str] = None) -> None:
        entry = {"command": command, "why": why}
        if alternative:
            entry["alternative"] = alternative
        commands.append(entry)

    limits = limits or default_limits()
    names = member_placeholders(design.drives)
    stacked = isinstance(design.level, str)  # md arrays over md arrays (1+0, 5+0, 6+0, 0+1)
    if stacked:
        _create_stack(add, array, names)
    else:
        _create(add, design, array, names)
    start = _partition(add, notes, array)
    geo = geometry(array)
    _filesystems(add, notes, design, geo)
    xfs_options = _mount(add, geo, workload, mount_point)
    runbook.persist(add, mount_point, xfs_options)
    read_ahead = _queues(add, design, model, array, workload, names)
    if design.level != 0:
        runbook.speed_limits(add, limits, rebuild)
    runbook.monitoring(add, design.level, inner_arrays(array.geo["sets"]) if stacked else ("md0",))
    placeholders = PLACEHOLDER_NOTE.format(first=names[0], last=names[-1], count=len(names),
                                           mount=mount_point)
    return {"geometry": geo, "placeholders": placeholders, "commands": commands, "notes": notes,
            "scheduler": scheduler_for(model),
            "stripe_cache_size": planned_stripe_cache_size(design.devices) if design.level in (4, 5, 6) else None,
            "read_ahead_kb": read_ahead, "partition_start_sector": start, "speed_limits": dict(limits),
            "rebuild": rebuild}
