"""fio's options beyond the core set, fitted into a job; a file's jobs assembled into one workload.

Each option's record (status, parser, the Job fields it lands in) is in
:mod:`raidlab.workload.fio_options` and its value is read by :mod:`raidlab.workload.fio_values`;
here the values read become :class:`~raidlab.workload.spec.Job` fields (the core documents each
field in ``sim/workload.rs``). Facts per option (fio-3.33, HOWTO.rst and ``options.c``):

- ``thinktime``/``thinktime_spin``: fio spins ``thinktime_spin`` of the ``thinktime`` and
  sleeps the rest, so the pause is ``max(thinktime, thinktime_spin)`` (backend.c
  ``handle_thinktime``), after every ``thinktime_blocks`` I/Os.
- ``rate``/``rate_min`` are bytes per second per direction (``read,write[,trim]``); per thread.
- ``bsrange=a-b``: fio draws sizes uniformly between the bounds in steps of the smallest
  (``io_u.c`` ``get_next_buflen`` rounds down to ``min_bs`` unless ``blocksize_unaligned``).
- ``stonewall``/``wait_for_previous`` start a new group run after every earlier job; a job with
  ``wait_for=NAME`` runs after NAME (raidlab puts it in the group after NAME's);
  ``new_group`` (and ``stonewall``) start a reporting group for ``group_reporting``.
- ``sync=1`` (O_SYNC) / ``sync=dsync`` (O_DSYNC): with O_DIRECT the kernel marks each write
  REQ_FUA (block/fops.c ``dio_bio_write_op``); md has no FUA path in raidlab, so each write is
  followed by a flush, which is what md does with a FUA bio on members without FUA
  (block/blk-flush.c ``blk_insert_flush`` turns it into write + post-flush).
- ``rw=randread:N``: a new random offset every N I/Os, sequential in between (``rw_sequencer=
  sequential``, the default); raidlab draws each I/O random with probability 1/N.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Tuple

from raidlab.workload import fio_options
from raidlab.workload.spec import SECTOR_BYTES, Workload, WorkloadError
from raidlab.workload.units import human_bytes, show


# -- fitting the options into a job ------------------------------------------------------------


def _uniform_sizes(low: int, high: int, step: int) -> Tuple[Tuple[int, int], ...]:
    """``bsrange``: every multiple of ``step`` from ``low`` to ``high``, equally likely, as
    whole percentages (the largest remainders get the leftover points)."""
    count = (high - low) // step + 1 if high >= low else 0  # counted, not listed: it may be huge
    if count > 100:
        raise WorkloadError(f"bsrange {human_bytes(low)}-{human_bytes(high)} spans {count} sizes; "
                            "raidlab draws from at most 100")
    sizes = range(low, high + 1, step)
    base, extra = divmod(100, len(sizes))
    return tuple((size, base + (1 if index < extra else 0)) for index, size in enumerate(sizes))


def _active(kw: Dict[str, Any]) -> List[int]:
    share = kw["read_fraction"]
    return [d for d, s in ((0, share), (1, 1.0 - share)) if s > 0]


def _rate(builder, slot: str, kw: Dict[str, Any]) -> int:
    """A per-direction rate as the one per-thread cap (see fio.py's rate_iops rule)."""
    values = builder.get(slot)
    if values is None:
        return 0
    active = _active(kw)
    if len(active) == 1:
        return values[active[0]]
    read_cap, write_cap = values
    share = kw["read_fraction"]
    if read_cap and write_cap and abs(read_cap * (1 - share) - write_cap * share) <= 1e-9 * (read_cap + write_cap):
        return read_cap + write_cap
    if read_cap and write_cap:
        # fio caps each direction on its own; once both bind, the mix follows the caps.
        total = read_cap + write_cap
        builder.notes.append(f"{builder.name}: {slot}={read_cap},{write_cap} caps reads and writes apart; "
                             f"raidlab caps the job at {human_bytes(total)}/s with its rwmix")
        return total
    raise builder.fail(f"{slot} caps only one direction of a mixed job; raidlab caps both together "
                       "(give both, e.g. rate=1m,1m)")


def finish(builder, kw: Dict[str, Any]) -> Dict[str, Any]:
    """Adds the stream options' fields to the keyword arguments of a fio job."""
    get, name = builder.get, builder.name
    if getattr(builder, "write_sizes", ()):
        kw["write_block_sizes"] = builder.write_sizes
    _block_sizes(builder, kw)
    kw["start_delay_ns"] = get("startdelay", 0)
    think = max(get("thinktime", 0), get("thinktime_spin", 0))
    kw["think_ns"], kw["think_blocks"] = think, get("thinktime_blocks", 1)
    rate = _rate(builder, "rate", kw)
    if rate:
        kw["rate_bytes_per_s"] = rate
    for slot in ("rate_min", "rate_iops_min"):
        if get(slot):
            builder.notes.append(f"{name}: {slot} makes fio fail a job that falls below it; raidlab reports "
                                 "the rate reached and does not stop the job")
    kw["loops"] = get("loops", 1)
    kw["offset_increment_bytes"] = get("offset_increment", 0)
    _files(builder, kw)
    _sync(builder, kw)
    _depth(builder, kw)
    _verify(builder, kw)
    _sequencer(builder, kw)
    _zonemode(builder, kw)
    if get("zones") is not None and kw["random_fraction"] > 0:
        absolute, zones = get("zones")
        total = sum(z[0] for z in zones)
        kw["zones"] = tuple((z[0] / total, z[1], z[2]) for z in zones)
        kw["zones_absolute"] = absolute
    if get("flow"):
        kw["flow_id"], kw["flow_weight"] = get("flow_id", 0), get("flow")
        kw["flow_sleep_ns"] = get("flow_sleep", 0)
    if get("size_percent"):
        kw["size_percent"], kw["size_bytes"] = get("size_percent"), 0
    if get("fill_device"):
        kw["size_bytes"] = 0
        builder.notes.append(f"{name}: fill_device writes until the device is full: the whole array")
    return kw


def _block_sizes(builder, kw: Dict[str, Any]) -> None:
    ranges = builder.get("bsrange")
    if ranges is None or builder.get("bssplit") is not None:
        return
    chosen = [ranges[d] for d in _active(kw) if ranges[d] is not None]
    if not chosen:
        return
    unaligned = builder.get("blocksize_unaligned", False)
    mixes = [_range_mix(builder, low, high, unaligned) for low, high in chosen]
    kw["block_sizes"] = mixes[0]
    if len(mixes) == 2 and mixes[1] != mixes[0]:
        kw["write_block_sizes"] = mixes[1]
    low = min(low for low, _ in chosen)
    if kw["random_fraction"] == 0 or builder.get("blockalign") is None:
        kw["block_align_bytes"] = low if not unaligned else SECTOR_BYTES


def _range_mix(builder, low: int, high: int, unaligned: bool) -> Tuple[Tuple[int, int], ...]:
    step = SECTOR_BYTES if unaligned else low
    if unaligned and (high - low) // step >= 100:
        step = -(-(high - low) // 99 // SECTOR_BYTES) * SECTOR_BYTES
        builder.notes.append(f"{builder.name}: bsrange with blocksize_unaligned draws in {human_bytes(step)} steps")
    return _uniform_sizes(low, high - (high - low) % step, step)


def _files(builder, kw: Dict[str, Any]) -> None:
    files = builder.get("nrfiles", 1)
    filesize = builder.get("filesize")
    if filesize and not kw["size_bytes"] and not builder.get("size_percent"):
        kw["size_bytes"] = filesize * files
    if files > 1:
        kw["files"] = files
        service, ios = builder.get("file_service_type", ("roundrobin", 1))
        kw["file_service"] = {"sequential": 0, "roundrobin": 1}.get(service, 2)
        kw["file_service_ios"] = ios
        if service not in ("sequential", "roundrobin", "random"):
            builder.notes.append(f"{builder.name}: file_service_type={service} picks files by a {service} "
                                 "distribution in fio; raidlab picks them uniformly at random")
    if builder.get("openfiles"):
        builder.no_effect.append("openfiles")


def _sync(builder, kw: Dict[str, Any]) -> None:
    kind = builder.get("sync")
    if kind is None or kw["read_fraction"] == 1.0:
        return
    kw["fsync_every"], kw["fsync_kind"] = 1, kind
    builder.notes.append(f"{builder.name}: sync: each write is followed by a {kind} (O_SYNC/O_DSYNC writes "
                         "are FUA writes; md turns them into write + flush)")


def _depth(builder, kw: Dict[str, Any]) -> None:
    depth = kw["iodepth"]
    low = builder.get("iodepth_low")
    complete_min = builder.get("iodepth_batch_complete_min")
    marks = [m for m in (low, depth - complete_min if complete_min else None) if m is not None]
    mark = min(marks) if marks else depth
    if 0 <= mark < depth and depth > 1:
        kw["iodepth_low"] = mark
    if builder.get("io_submit_mode") is not None:
        builder.no_effect.append("io_submit_mode")


def _verify(builder, kw: Dict[str, Any]) -> None:
    if not builder.get("verify") or not builder.get("do_verify", True):
        return
    if builder.get("verify_only"):
        kw["read_fraction"] = 1.0
        builder.notes.append(f"{builder.name}: verify_only reads back what the job would write, without writing")
        return
    if kw["read_fraction"] == 1.0:
        return
    kw["verify"] = True
    if builder.get("verify_backlog"):
        builder.notes.append(f"{builder.name}: verify_backlog interleaves the read-back in fio; raidlab reads "
                             "back after the writes (the same I/O, in another order)")
    if kw["time_based"]:
        builder.notes.append(f"{builder.name}: a time-based job spends its runtime writing; fio verifies only "
                             "what it wrote before the runtime ended, and so does raidlab")


def _sequencer(builder, kw: Dict[str, Any]) -> None:
    postfix = builder.get("rw_postfix")
    if not postfix:
        return
    if kw["random_fraction"] > 0:
        if postfix < 1:
            raise builder.fail("rw=...:N needs N of at least 1 for a random job")
        if builder.get("rw_sequencer") == "identical":
            builder.notes.append(f"{builder.name}: rw_sequencer=identical repeats each random offset {postfix} "
                                 "times in fio; raidlab draws a new random offset with probability 1/N and "
                                 "otherwise continues sequentially")
        kw["random_fraction"] = kw["random_fraction"] / postfix
        builder.notes.append(f"{builder.name}: rw=...:{postfix} draws a new random offset every {postfix} I/Os in "
                             f"fio; raidlab draws each I/O at random with probability 1/{postfix}")
        return
    kw["seq_skip_bytes"] = postfix


def _zonemode(builder, kw: Dict[str, Any]) -> None:
    mode = builder.get("zonemode", "none")
    if mode == "strided":
        zone, skip = builder.get("zonesize", 0), builder.get("zoneskip", 0)
        if zone and skip:
            kw["zone_bytes"], kw["zone_skip_bytes"] = zone, skip
    elif mode == "zbd":
        zone = builder.get("zonesize")
        if not zone:
            raise builder.fail("zonemode=zbd on a regular device needs zonesize (fio: 'Specifying the zone size "
                               "is mandatory')")
        kw["zbd_zone_bytes"] = zone
        kw["zbd_max_open_zones"] = builder.get("max_open_zones", 0)
        builder.notes.append(f"{builder.name}: zonemode=zbd: raidlab's members are conventional, so fio emulates "
                             f"zones of {human_bytes(zone)}: random writes go to write pointers; reads assume "
                             "the zones hold data")


def assemble(builders, errors: List[str], text: str) -> Workload:
    """The workload of a file's jobs: stonewall groups, reporting groups, one error for all."""
    jobs, notes, no_effect = [], [], []
    groups, report_groups, reporting = [], [], []
    group = report = 0
    group_of = {}  # each job name's first built job's stonewall group
    for index, builder in enumerate(builders):
        get = builder.get
        if index and (get("stonewall") or get("wait_for_previous")):
            group += 1
        own_group = group
        waited = get("wait_for")
        if waited is not None:
            # backend.c: a wait_for job starts when that job is done; the jobs after it that
            # wait for nothing still start with their stonewall group.
            if waited not in group_of:
                errors.append(f"fio job {show(builder.name)!r}: wait_for={show(waited)} names no earlier job")
            else:
                own_group = max(group, group_of[waited] + 1)
        if index and (get("new_group") or get("stonewall") or get("wait_for_previous")):
            report += 1
        try:
            job = builder.build()
        except WorkloadError as error:
            errors.append(str(error))
            continue
        groups.append(own_group)
        group_of.setdefault(builder.name, own_group)
        report_groups.append(report)
        reporting.append(bool(get("group_reporting", False)))
        jobs.append(job)
        notes.extend(builder.notes)
        no_effect.extend(builder.no_effect)
    if errors:
        unique = list(dict.fromkeys(errors))
        if len(unique) == 1:
            raise WorkloadError(unique[0])
        shown = [e[len("fio job file "):] if e.startswith("fio job file line") else e for e in unique]
        shown = [e.split(" (raidlab supports: ")[0] for e in shown]
        raise WorkloadError(f"fio job file: {len(unique)} problems: " + "; ".join(shown))
    jobs = [replace(job, group=g) if g else job for job, g in zip(jobs, groups)]
    notes = _merge_notes(notes, [job.name for job in jobs])
    notes.extend(fio_options.no_effect_note(sorted(set(no_effect))))
    own = tuple({o.name: o.value or "" for o in b.section.options if o.key != "name"} for b in builders)
    last = builders[-1]
    shared = {o.name: o.value or "" for o in last.options[:len(last.options) - len(last.section.options)]}
    return Workload(tuple(jobs), "fio", text, tuple(notes), tuple(report_groups), tuple(reporting), own, shared)


def _merge_notes(notes: List[str], names: List[str]) -> List[str]:
    """One note per message: "a, b, c: message" rather than one per job."""
    by_text: Dict[str, List[str]] = {}
    for note in notes:
        name = next((n for n in names if note.startswith(f"{n}: ")), None)
        text = note[len(name) + 2:] if name is not None else note
        who = by_text.setdefault(text, [])
        if name is not None and name not in who:
            who.append(name)
    merged = []
    for text, who in by_text.items():
        if not who:
            merged.append(text)
        elif len(who) <= 3:
            merged.append(f"{', '.join(who)}: {text}")
        else:
            merged.append(f"{who[0]} and {len(who) - 1} more jobs: {text}")
    return merged


def render(job) -> List[str]:
    """fio spellings of a job's stream fields (for :func:`raidlab.workload.fio.render_fio`);
    fields with no spelling raidlab writes are refused rather than dropped."""
    lines: List[str] = []
    unwritable = [name for name in ("seq_skip_bytes", "zones", "write_block_sizes", "group", "zbd_zone_bytes")
                  if getattr(job, name)]
    if unwritable:
        raise WorkloadError(f"job {job.name!r}: {', '.join(unwritable)} have no fio spelling raidlab writes")
    if job.start_delay_ns:
        lines.append(f"startdelay={-(-job.start_delay_ns // 1000)}us")
    if job.think_ns:
        lines.append(f"thinktime={-(-job.think_ns // 1000)}")
        if job.think_blocks != 1:
            lines.append(f"thinktime_blocks={job.think_blocks}")
    if job.rate_bytes_per_s:
        lines.append(f"rate={job.rate_bytes_per_s}")
    if job.loops != 1:
        lines.append(f"loops={job.loops}")
    if job.offset_increment_bytes:
        lines.append(f"offset_increment={job.offset_increment_bytes}")
    if job.iodepth_low:
        lines.append(f"iodepth_low={job.iodepth_low}")
    if job.size_percent:
        lines.append(f"size={job.size_percent}%")
    if job.verify:
        lines.append("verify=crc32c")
    if job.zone_bytes and job.zone_skip_bytes:
        lines += ["zonemode=strided", f"zonesize={job.zone_bytes}", f"zoneskip={job.zone_skip_bytes}"]
    if job.files > 1:
        kind = ("sequential", "roundrobin", "random")[job.file_service]
        lines.append(f"nrfiles={job.files}")
        lines.append(f"file_service_type={kind}:{job.file_service_ios}")
    if job.flow_weight:
        lines += [f"flow={job.flow_weight}", f"flow_id={job.flow_id}"]
        if job.flow_sleep_ns:
            lines.append(f"flow_sleep={-(-job.flow_sleep_ns // 1000)}")
    return lines
