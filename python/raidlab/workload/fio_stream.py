"""fio options that shape the I/O stream (issue 22): parsing them, and fitting them into a job.

The tables of what is modelled, mapped, noted or refused are in :mod:`fio_options`; this module
reads the values (fio-3.33's units and defaults, from HOWTO.rst and ``options.c``) and turns
them into :class:`~raidlab.workload.spec.Job` fields. Facts per option:

- ``thinktime`` and ``thinktime_spin`` are µs for a bare number (``options.c``: ``is_time``,
  ``OPT_UNIT_USEC``); fio spins ``thinktime_spin`` of the ``thinktime`` and sleeps the rest, so
  the pause is ``max(thinktime, thinktime_spin)`` (backend.c ``handle_thinktime``).
- ``startdelay`` is seconds for a bare number; a range ``a-b`` is a random delay in it
  (``init.c`` ``setup_random_seeds``): raidlab takes the middle, and says so.
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

from typing import Any, Dict, List, Optional, Tuple

from raidlab.workload import fio_options
from raidlab.workload.spec import SECTOR_BYTES, Workload, WorkloadError
from raidlab.workload.units import (MAX_INT, fio_bool, fio_count, fio_size, fio_time_ns, human_bytes, is_decimal,
                                    show)

_FLAGS = ("stonewall", "wait_for_previous", "new_group", "group_reporting", "blocksize_unaligned",
          "fill_device")


def _choice(raw: str) -> str:
    """An enumerated option's value as fio matches it: up to its first ':' or ',' (already one
    of :data:`fio_options.ENUMERATED`'s, checked in :func:`apply`)."""
    return raw.split(":", 1)[0].split(",", 1)[0]


def _where(option) -> str:
    return f"fio job file line {option.line}"


def _err(option, message: str) -> WorkloadError:
    return WorkloadError(f"{_where(option)}: {message}")


def _flag(option) -> bool:
    try:
        return fio_bool(option.name, option.value, flag=True)
    except WorkloadError as error:
        raise _err(option, str(error)) from None


def _time_us(option, raw: str) -> int:
    """A time whose bare numbers are µs (thinktime), in ns."""
    text = raw.strip()
    if is_decimal(text):
        return int(text) * 1000
    try:
        return fio_time_ns(option.name, text)
    except WorkloadError as error:
        raise _err(option, str(error)) from None


def _size(option, raw: str, kb: int) -> int:
    try:
        return fio_count(option.name, raw, kb)
    except WorkloadError as error:
        raise _err(option, str(error)) from None


def _need(option) -> str:
    if option.value is None or option.value.strip() == "":
        raise _err(option, f"option {option.name!r} needs a value")
    return option.value.strip()


def _directions(option, raw: str) -> List[Optional[str]]:
    parts = [p.strip() for p in raw.split(",")]
    if len(parts) > 1 and parts[-1] == "":
        parts = parts[:-1]
    if len(parts) > 3:
        raise _err(option, f"{option.name}={show(raw)} has more than read,write,trim values")
    if len(parts) == 1:
        return [parts[0], parts[0]]
    return [parts[0] or None, parts[1] or None]


def _zones(builder, option, raw: str) -> Optional[int]:
    """``Nz`` (N zones of ``zonesize``) for size/offset/io_size, or None for other spellings."""
    text = raw.strip()
    if not (text.endswith("z") and is_decimal(text[:-1])):
        return None
    zone = builder.get("s_zonesize")
    if not zone:
        raise _err(option, f"{option.name}={show(raw)} counts zones but no zonesize is set")
    return int(text[:-1]) * zone


def apply(builder, option) -> bool:
    """Parses one of issue 22's options into ``builder``; False if it is not one of them."""
    key = fio_options.canonical(option.key)
    problem = fio_options.enumerated_problem(key, option.name, option.value)
    if problem:
        raise _err(option, problem)
    if key in fio_options.NO_EFFECT_OPTIONS:
        from raidlab.workload.fio import IGNORED_OPTIONS

        if key in IGNORED_OPTIONS and key not in ("group_reporting", "new_group"):
            if key not in ("filename", "directory", "description"):
                builder.no_effect.append(key)
            return False
        if key not in _FLAGS:
            builder.no_effect.append(key)
            return True
    if key in ("rw", "size", "offset", "io_size") and option.value:
        return _core_override(builder, option, key)
    if key == "random_distribution":
        if not (option.value or "").strip().startswith("zoned"):
            return False
        builder._set("s_zones", _zoned(builder, option, option.value.strip()), option)
        builder.slots.pop("random_distribution", None)
        return True
    if key not in fio_options.STREAM_OPTIONS:
        return False
    if key in _FLAGS:
        builder._set("s_" + key, _flag(option), option)
        return True
    raw = _need(option)
    kb = builder.kb_base
    if key == "startdelay":
        low, _, high = raw.partition("-")
        first = _time_s(option, low)
        last = _time_s(option, high) if high else first
        if last < first:
            raise _err(option, f"startdelay={show(raw)}: the range runs backwards")
        if high:
            builder.notes.append(f"{builder.name}: startdelay={raw} is a random delay in fio; raidlab waits "
                                 "the middle of the range")
        builder._set("s_startdelay", (first + last) // 2, option)
    elif key in ("thinktime", "thinktime_spin"):
        builder._set("s_" + key, _time_us(option, raw), option)
    elif key in ("thinktime_blocks", "loops", "nrfiles", "openfiles"):
        builder._set("s_" + key, _ranged(option, raw, kb, 1, 1_000_000), option)
    elif key in ("rate", "rate_min"):
        values = [0 if part is None else _size(option, part, kb) for part in _directions(option, raw)]
        builder._set("s_" + key, values, option)
    elif key in ("rate_iops_min", "rate_cycle", "iodepth_batch_submit", "iodepth_batch_complete_max"):
        _ranged(option, raw.split(",")[0], kb, 0, MAX_INT)
        builder._set("s_" + key, raw, option)
    elif key in ("flow", "flow_id"):
        builder._set("s_" + key, _ranged(option, raw, kb, 0, 1 << 31), option)
    elif key == "flow_sleep":
        builder._set("s_flow_sleep", _time_us(option, raw), option)
    elif key == "rw_sequencer":
        builder._set("s_rw_sequencer", _choice(raw), option)  # sequential or identical (fio_options.ENUMERATED)
    elif key == "max_open_zones":
        builder._set("s_max_open_zones", _ranged(option, raw, kb, 0, 1 << 20), option)
    elif key in ("iodepth_low", "iodepth_batch_complete_min"):
        builder._set("s_" + key, _ranged(option, raw, kb, 0, 65536), option)
    elif key == "bsrange":
        builder._set("s_bsrange", [None if p is None else _range(option, p, kb) for p in _directions(option, raw)],
                     option)
    elif key == "offset_increment":
        number = _zones(builder, option, raw)
        builder._set("s_offset_increment", number if number is not None else _size(option, raw, kb), option)
    else:
        _apply_more(builder, option, key, raw, kb)
    return True


def _apply_more(builder, option, key: str, raw: str, kb: int) -> None:
    if key == "wait_for":
        builder._set("s_wait_for", raw, option)
    elif key == "filesize":
        low, _, high = raw.partition("-")
        first = _size(option, low, kb)
        last = _size(option, high, kb) if high else first
        if high:
            builder.notes.append(f"{builder.name}: filesize={raw} draws file sizes in fio; raidlab gives every "
                                 "file the middle of the range")
        builder._set("s_filesize", (first + last) // 2, option)
    elif key == "file_service_type":
        kind, _, count = raw.partition(":")  # kind: one of fio_options.ENUMERATED's
        ios = _ranged(option, count, kb, 1, 1 << 31) if count and kind in ("roundrobin", "sequential", "random") else 1
        builder._set("s_file_service_type", (kind, ios), option)
    elif key == "sync":
        value = _choice(raw)
        builder._set("s_sync", {"0": None, "none": None, "1": "fsync", "sync": "fsync", "dsync": "fdatasync"}[value],
                     option)
    elif key == "io_submit_mode":
        builder._set("s_io_submit_mode", _choice(raw), option)  # inline or offload (fio_options.ENUMERATED)
    elif key == "verify":
        builder._set("s_verify", _choice(raw) != "0", option)  # "0" is fio's "no verification"
    elif key in ("do_verify", "verify_only"):
        builder._set("s_" + key, _flag(option), option)
    elif key == "verify_backlog":
        builder._set("s_verify_backlog", _ranged(option, raw, kb, 0, MAX_INT), option)
    elif key == "zonemode":
        builder._set("s_zonemode", _choice(raw), option)  # none, strided or zbd (fio_options.ENUMERATED)
    elif key in ("zonesize", "zoneskip", "zonerange", "zonecapacity"):
        number = _size(option, raw, kb)
        if number % SECTOR_BYTES:
            raise _err(option, f"{option.name}={show(raw)} is not a multiple of {SECTOR_BYTES}")
        builder._set("s_" + key, number, option)
    else:  # pragma: no cover - every stream option is handled
        raise AssertionError(key)


def _zoned(builder, option, raw: str) -> Tuple[bool, Tuple[Tuple[float, int, int], ...]]:
    """``zoned:A/S:A/S...`` (S in % of the region) or ``zoned_abs:A/SIZE:...`` → (absolute,
    ((share, start, end), ...)) with start/end in millionths of the region or in bytes
    (options.c ``parse_zoned_distribution``; one mix for every direction)."""
    kind, _, rest = raw.partition(":")
    if kind not in ("zoned", "zoned_abs"):
        raise _err(option, f"random_distribution={show(raw)} is not one of random, zipf, pareto, normal, zoned, zoned_abs")
    mixes = [m for m in rest.split(",") if m.strip()]
    if not mixes or any(m != mixes[0] for m in mixes):
        raise _err(option, f"random_distribution={show(raw)}: raidlab takes one zone list for all directions")
    absolute, zones, start, shares = kind == "zoned_abs", [], 0, 0
    entries = mixes[0].split(":")
    for number, entry in enumerate(entries):
        share_text, sep, size_text = entry.partition("/")
        if not sep or not is_decimal(share_text.strip()):
            raise _err(option, f"random_distribution zone {show(entry)!r} must be ACCESS%/SIZE (e.g. 60/10)")
        share = int(share_text)
        if size_text.strip() == "" and number == len(entries) - 1 and not absolute:
            size = 1_000_000 - start  # an empty last size takes the rest of the region
        elif absolute:
            size = _size(option, size_text, builder.kb_base)
        else:
            if not is_decimal(size_text.strip()):
                raise _err(option, f"random_distribution zone {show(entry)!r}: the size is a whole percentage")
            size = int(size_text) * 10_000
        zones.append((share / 100, start, start + size))
        start, shares = start + size, shares + share
    if shares != 100:
        raise _err(option, f"random_distribution={show(raw)}: the access shares add up to {shares}%, not 100%")
    if not absolute and start > 1_000_000:
        raise _err(option, f"random_distribution={show(raw)}: the zone sizes add up to more than 100%")
    return absolute, tuple(z for z in zones if z[2] > z[1] and z[0] > 0)


def _time_s(option, raw: str) -> int:
    try:
        return fio_time_ns(option.name, raw)
    except WorkloadError as error:
        raise _err(option, str(error)) from None


def _ranged(option, raw: str, kb: int, low: int, high: int) -> int:
    number = _size(option, raw, kb)
    if not low <= number <= high:
        raise _err(option, f"{option.name}={show(raw)} must be {low} to {high}")
    return number


def _range(option, raw: str, kb: int) -> Tuple[int, int]:
    low, sep, high = raw.partition("-")
    if not sep:
        raise _err(option, f"{option.name}={show(raw)} is not a range (e.g. 4k-64k)")
    first, last = _size(option, low, kb), _size(option, high, kb)
    if first == 0 or first > last:
        raise _err(option, f"{option.name}={show(raw)} must run from a size above 0 up")
    if first % SECTOR_BYTES:
        raise _err(option, f"{option.name}={show(raw)}: {human_bytes(first)} is not a multiple of {SECTOR_BYTES}")
    return first, last


def _core_override(builder, option, key: str) -> bool:
    """``rw=MODE:N``, trim modes, ``size=N%`` and ``Nz`` zone counts; False leaves the rest."""
    raw = option.value.strip()
    if key == "rw":
        mode, sep, postfix = raw.partition(":")
        mode = mode.strip()
        if mode in ("trim", "randtrim", "trimwrite", "randtrimwrite"):
            raise _err(option, f"rw={mode}: discard (trim) to the members is not modelled")
        if not sep:
            return False
        builder._set("rw", "rw" if mode == "readwrite" else mode, option)
        if mode not in ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"):
            raise _err(option, f"rw={show(raw)} is not one of read, write, randread, randwrite, rw, randrw")
        text = postfix.strip()
        negative = text.startswith("-")
        number = _size(option, text.lstrip("-"), builder.kb_base)
        builder._set("s_rw_postfix", -number if negative else number, option)
        return True
    zones = _zones(builder, option, raw)
    if zones is not None:
        builder._set(key, zones, option)
        return True
    if key == "size" and raw.endswith("%"):
        try:
            number, _ = fio_size(option.name, raw, builder.kb_base, allow_percent=True)
        except WorkloadError as error:
            raise _err(option, str(error)) from None
        if not 1 <= number <= 100:
            raise _err(option, f"size={show(raw)} must be 1% to 100%")
        builder._set("size", 0, option)
        builder._set("s_size_percent", number if number < 100 else 0, option)
        return True
    return False


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
        builder.notes.append(f"{builder.name}: {slot[2:]}={read_cap},{write_cap} caps reads and writes apart; "
                             f"raidlab caps the job at {human_bytes(total)}/s with its rwmix")
        return total
    raise builder.fail(f"{slot[2:]} caps only one direction of a mixed job; raidlab caps both together "
                       "(give both, e.g. rate=1m,1m)")


def finish(builder, kw: Dict[str, Any]) -> Dict[str, Any]:
    """Adds the stream options' fields to the keyword arguments of a fio job."""
    get, name = builder.get, builder.name
    if getattr(builder, "write_sizes", ()):
        kw["write_block_sizes"] = builder.write_sizes
    _block_sizes(builder, kw)
    kw["start_delay_ns"] = get("s_startdelay", 0)
    think = max(get("s_thinktime", 0), get("s_thinktime_spin", 0))
    kw["think_ns"], kw["think_blocks"] = think, get("s_thinktime_blocks", 1)
    rate = _rate(builder, "s_rate", kw)
    if rate:
        kw["rate_bytes_per_s"] = rate
        kw["arrival"] = kw["arrival"]
    for slot in ("s_rate_min", "s_rate_iops_min"):
        if get(slot):
            builder.notes.append(f"{name}: {slot[2:]} makes fio fail a job that falls below it; raidlab reports "
                                 "the rate reached and does not stop the job")
    kw["loops"] = get("s_loops", 1)
    kw["offset_increment_bytes"] = get("s_offset_increment", 0)
    _files(builder, kw)
    _sync(builder, kw)
    _depth(builder, kw)
    _verify(builder, kw)
    _sequencer(builder, kw)
    _zonemode(builder, kw)
    if get("s_zones") is not None and kw["random_fraction"] > 0:
        absolute, zones = get("s_zones")
        total = sum(z[0] for z in zones)
        kw["zones"] = tuple((z[0] / total, z[1], z[2]) for z in zones)
        kw["zones_absolute"] = absolute
    if get("s_flow"):
        kw["flow_id"], kw["flow_weight"] = get("s_flow_id", 0), get("s_flow")
        kw["flow_sleep_ns"] = get("s_flow_sleep", 0)
    if get("s_size_percent"):
        kw["size_percent"], kw["size_bytes"] = get("s_size_percent"), 0
    if get("s_fill_device"):
        kw["size_bytes"] = 0
        builder.notes.append(f"{name}: fill_device writes until the device is full: the whole array")
    return kw


def _block_sizes(builder, kw: Dict[str, Any]) -> None:
    ranges = builder.get("s_bsrange")
    if ranges is None or builder.get("bssplit") is not None:
        return
    chosen = [ranges[d] for d in _active(kw) if ranges[d] is not None]
    if not chosen:
        return
    unaligned = builder.get("s_blocksize_unaligned", False)
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
    files = builder.get("s_nrfiles", 1)
    filesize = builder.get("s_filesize")
    if filesize and not kw["size_bytes"] and not builder.get("s_size_percent"):
        kw["size_bytes"] = filesize * files
    if files > 1:
        kw["files"] = files
        service, ios = builder.get("s_file_service_type", ("roundrobin", 1))
        kw["file_service"] = {"sequential": 0, "roundrobin": 1}.get(service, 2)
        kw["file_service_ios"] = ios
        if service not in ("sequential", "roundrobin", "random"):
            builder.notes.append(f"{builder.name}: file_service_type={service} picks files by a {service} "
                                 "distribution in fio; raidlab picks them uniformly at random")
    if builder.get("s_openfiles"):
        builder.no_effect.append("openfiles")


def _sync(builder, kw: Dict[str, Any]) -> None:
    kind = builder.get("s_sync")
    if kind is None or kw["read_fraction"] == 1.0:
        return
    kw["fsync_every"], kw["fsync_kind"] = 1, kind
    builder.notes.append(f"{builder.name}: sync: each write is followed by a {kind} (O_SYNC/O_DSYNC writes "
                         "are FUA writes; md turns them into write + flush)")


def _depth(builder, kw: Dict[str, Any]) -> None:
    depth = kw["iodepth"]
    low = builder.get("s_iodepth_low")
    complete_min = builder.get("s_iodepth_batch_complete_min")
    marks = [m for m in (low, depth - complete_min if complete_min else None) if m is not None]
    mark = min(marks) if marks else depth
    if 0 <= mark < depth and depth > 1:
        kw["iodepth_low"] = mark
    for slot in ("s_iodepth_batch_submit", "s_iodepth_batch_complete_max", "s_io_submit_mode"):
        if builder.get(slot) is not None:
            builder.no_effect.append(slot[2:])


def _verify(builder, kw: Dict[str, Any]) -> None:
    if not builder.get("s_verify") or not builder.get("s_do_verify", True):
        return
    if builder.get("s_verify_only"):
        kw["read_fraction"] = 1.0
        builder.notes.append(f"{builder.name}: verify_only reads back what the job would write, without writing")
        return
    if kw["read_fraction"] == 1.0:
        return
    kw["verify"] = True
    if builder.get("s_verify_backlog"):
        builder.notes.append(f"{builder.name}: verify_backlog interleaves the read-back in fio; raidlab reads "
                             "back after the writes (the same I/O, in another order)")
    if kw["time_based"]:
        builder.notes.append(f"{builder.name}: a time-based job spends its runtime writing; fio verifies only "
                             "what it wrote before the runtime ended, and so does raidlab")


def _sequencer(builder, kw: Dict[str, Any]) -> None:
    postfix = builder.get("s_rw_postfix")
    if not postfix:
        return
    if kw["random_fraction"] > 0:
        if postfix < 1:
            raise builder.fail("rw=...:N needs N of at least 1 for a random job")
        if builder.get("s_rw_sequencer") == "identical":
            builder.notes.append(f"{builder.name}: rw_sequencer=identical repeats each random offset {postfix} "
                                 "times in fio; raidlab draws a new random offset with probability 1/N and "
                                 "otherwise continues sequentially")
        kw["random_fraction"] = kw["random_fraction"] / postfix
        builder.notes.append(f"{builder.name}: rw=...:{postfix} draws a new random offset every {postfix} I/Os in "
                             f"fio; raidlab draws each I/O at random with probability 1/{postfix}")
        return
    kw["seq_skip_bytes"] = postfix


def _zonemode(builder, kw: Dict[str, Any]) -> None:
    mode = builder.get("s_zonemode", "none")
    if mode == "strided":
        zone, skip = builder.get("s_zonesize", 0), builder.get("s_zoneskip", 0)
        if zone and skip:
            kw["zone_bytes"], kw["zone_skip_bytes"] = zone, skip
    elif mode == "zbd":
        zone = builder.get("s_zonesize")
        if not zone:
            raise builder.fail("zonemode=zbd on a regular device needs zonesize (fio: 'Specifying the zone size "
                               "is mandatory')")
        kw["zbd_zone_bytes"] = zone
        kw["zbd_max_open_zones"] = builder.get("s_max_open_zones", 0)
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
        if index and (get("s_stonewall") or get("s_wait_for_previous")):
            group += 1
        own_group = group
        waited = get("s_wait_for")
        if waited is not None:
            # backend.c: a wait_for job starts when that job is done; the jobs after it that
            # wait for nothing still start with their stonewall group.
            if waited not in group_of:
                errors.append(f"fio job {show(builder.name)!r}: wait_for={show(waited)} names no earlier job")
            else:
                own_group = max(group, group_of[waited] + 1)
        if index and (get("s_new_group") or get("s_stonewall") or get("s_wait_for_previous")):
            report += 1
        try:
            job = builder.build()
        except WorkloadError as error:
            errors.append(str(error))
            continue
        groups.append(own_group)
        group_of.setdefault(builder.name, own_group)
        report_groups.append(report)
        reporting.append(bool(get("s_group_reporting", False)))
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
    from dataclasses import replace

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
