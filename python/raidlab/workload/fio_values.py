"""How each fio option's value is read: one parser per grammar, named in the option table.

Every parser takes the job being built and one option as written (``name``, canonical ``key``,
``value``, ``line``) and stores what it read in the job's slots, under the option's canonical
name unless it says otherwise; :mod:`raidlab.workload.fio_options` names the parser of each
option, and the job's fields are made from the slots where the job is built
(:mod:`raidlab.workload.fio` for the core set, :mod:`raidlab.workload.fio_stream` for the rest).

Units, ranges and grammars follow fio-3.33 (HOWTO.rst; ``options.c`` for each option's type and
range, ``parse.c`` for numbers and lists, ``io_u.c`` for how sizes are drawn):

- ``thinktime``, ``thinktime_spin`` and ``flow_sleep`` are µs for a bare number (``options.c``:
  ``is_time``, ``OPT_UNIT_USEC``); ``runtime`` and the other times are seconds.
- ``startdelay`` and ``filesize`` take a range ``a-b`` (``init.c`` ``setup_random_seeds`` draws
  the delay in it; fio draws each file's size in it): raidlab takes the middle, and says so.
- ``bs``, ``blockalign``, ``rate``, ``rate_iops``, ``bsrange`` and ``percentage_random`` take
  ``read,write[,trim]`` values; one value applies to every direction (fio copies it).
- ``bssplit`` (``options.c`` ``bssplit_ddir``; ``io_u.c`` ``get_next_buflen``): entries
  ``size/percent`` joined by ``:``; a missing (or 0) percentage shares what the others leave,
  in whole percent; whatever still falls short of 100 % is what fio gives the entry it tries
  last (the largest percentage, the later one on ties), so raidlab adds it there. fio rounds
  every drawn size down to a multiple of the smallest size, so sizes that are not multiples of
  it are refused rather than silently changed.
- ``rw=randread:N`` takes a new random offset every N I/Os (``rw_sequencer=sequential``);
  ``rw=read:N`` skips N bytes after each I/O.
- ``size``/``offset``/``io_size``/``offset_increment`` also count zones of ``zonesize``
  (``Nz``, HOWTO "zonemode"); ``size=N%`` is a share of the target.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from raidlab.workload.fio_engines import engine_class
from raidlab.workload.spec import SECTOR_BYTES, Distribution, WorkloadError
from raidlab.workload.units import (MAX_INT, fio_bool, fio_count, fio_iec_note, fio_size, fio_time_ns, human_bytes,
                                    is_decimal, show)

#: A parser: reads one option of a job file into the job being built.
Parser = Callable[[Any, Any], None]

_BSSPLIT_MAX = 64  # BSSPLIT_MAX in fio's options.h
_FLOAT = re.compile(r"[+]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,3})?")
#: fio reads section names with "%255[^\n]" (init.c), and a job's name= is held the same way.
MAX_NAME = 255
_VALID_RW = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")
_TRIM_RW = ("trim", "randtrim", "trimwrite", "randtrimwrite")


def where(line: int) -> str:
    return f"fio job file line {line}"


def _err(option, message: str) -> WorkloadError:
    return WorkloadError(f"{where(option.line)}: {message}")


def _located(option, call: Callable[[], Any]) -> Any:
    """``call()``, with a WorkloadError it raises placed on the option's line."""
    try:
        return call()
    except WorkloadError as error:
        raise _err(option, str(error)) from None


def need(option) -> str:
    if option.value is None or option.value.strip() == "":
        raise _err(option, f"option {option.name!r} needs a value")
    return option.value.strip()


def choice(raw: str) -> str:
    """An enumerated option's value as fio matches it: up to its first ':' or ',' (already one
    of the option's listed values, checked before its parser runs)."""
    return raw.split(":", 1)[0].split(",", 1)[0]


def _count(option, raw: str, kb: int) -> int:
    return _located(option, lambda: fio_count(option.name, raw, kb))


def _ranged_number(option, raw: str, kb: int, low: int, high: int) -> int:
    number = _count(option, raw, kb)
    if not low <= number <= high:
        raise _err(option, f"{option.name}={show(raw)} must be {low} to {high}")
    return number


def directions(option, raw: str) -> List[Optional[str]]:
    """``R,W[,T]`` → [read, write] (None = not given). One value applies to both (fio copies it)."""
    parts = [part.strip() for part in raw.split(",")]
    if len(parts) > 1 and parts[-1] == "":
        parts = parts[:-1]  # fio drops a trailing comma
    if len(parts) > 3:
        raise _err(option, f"{option.name}={show(raw)} has more than read,write,trim values")
    if len(parts) == 1:
        return [parts[0], parts[0]]
    return [parts[0] or None, parts[1] or None]


# -- parsers that store a number, a flag or the text as given -----------------------------------


def ranged(low: int, high: int) -> Parser:
    """A whole number from ``low`` to ``high`` (fio's ``minval``/``maxval``)."""
    def parse(builder, option) -> None:
        builder.store(option.key, _ranged_number(option, need(option), builder.kb_base, low, high), option)
    return parse


def flag(builder, option) -> None:
    """A FIO_OPT_STR_SET option: bare, or 0/1."""
    builder.store(option.key, _located(option, lambda: fio_bool(option.name, option.value, flag=True)), option)


def boolean(builder, option) -> None:
    """A FIO_OPT_BOOL option: 0 or 1, never bare (fio: "Option direct requires an argument")."""
    builder.store(option.key, _located(option, lambda: fio_bool(option.name, option.value)), option)


def boolean_value(builder, option) -> None:
    """0 or 1 after ``=``; bare or empty, it needs a value (``do_verify``, ``verify_only``)."""
    need(option)
    flag(builder, option)


def buffered(builder, option) -> None:
    """``buffered`` is the opposite of ``direct`` (stored as ``direct``)."""
    builder.store("direct", not _located(option, lambda: fio_bool(option.name, option.value)), option)


def enumerated(builder, option) -> None:
    """One of the option's listed values (checked already), as fio matches it."""
    builder.store(option.key, choice(need(option)), option)


def text(builder, option) -> None:
    builder.store(option.key, need(option), option)


def checked_text(low: int, high: int) -> Parser:
    """The text as given, once its first (read) value is a number from ``low`` to ``high``."""
    def parse(builder, option) -> None:
        raw = need(option)
        _ranged_number(option, raw.split(",")[0], builder.kb_base, low, high)
        builder.store(option.key, raw, option)
    return parse


def ignore(builder, option) -> None:
    """Read before every other option (``kb_base``), or read by nothing."""


def one_file(builder, option) -> None:
    """``filename``: the target is the simulated array, so several files (``a:b``) are refused."""
    if option.value and re.search(r"(?<!\\):", option.value):
        raise _err(option, f"filename={show(option.value)} names several files (':'); "
                           "raidlab reads one file (the array) per fio job")


def job_name(builder, option) -> None:
    """A job's own name= renames it; in [global] fio overwrites it with each section name."""
    raw = need(option)
    if any(own is option for own in builder.section.options):
        if len(raw) > MAX_NAME:
            raise _err(option, f"name is longer than {MAX_NAME} characters")
        builder.name = raw


# -- times --------------------------------------------------------------------------------------


def duration(builder, option) -> None:
    """A time whose bare numbers are seconds, in ns."""
    raw = need(option)
    builder.store(option.key, _located(option, lambda: fio_time_ns(option.name, raw)), option)


def _time_us(option, raw: str) -> int:
    """A time whose bare numbers are µs, in ns."""
    if is_decimal(raw):
        return int(raw) * 1000
    return _located(option, lambda: fio_time_ns(option.name, raw))


def microseconds(builder, option) -> None:
    builder.store(option.key, _time_us(option, need(option)), option)


def startdelay(builder, option) -> None:
    raw = need(option)
    low, _, high = raw.partition("-")
    first = _located(option, lambda: fio_time_ns(option.name, low))
    last = _located(option, lambda: fio_time_ns(option.name, high)) if high else first
    if last < first:
        raise _err(option, f"startdelay={show(raw)}: the range runs backwards")
    if high:
        builder.notes.append(f"{builder.name}: startdelay={raw} is a random delay in fio; raidlab waits "
                             "the middle of the range")
    builder.store(option.key, (first + last) // 2, option)


# -- sizes ---------------------------------------------------------------------------------------


def _sector_multiple(option, raw: str, number: int, kb_base: int, what: str = "") -> None:
    if number % SECTOR_BYTES:
        raise _err(option, f"{option.name}={show(raw)}{what} is not a multiple of {SECTOR_BYTES}"
                           + fio_iec_note(raw, kb_base))


def _block_size(option, raw: str, kb_base: int) -> int:
    number = _count(option, raw, kb_base)
    if number == 0:
        raise _err(option, f"{option.name}={show(raw)} must be at least {SECTOR_BYTES}")
    shown = "" if raw.strip().isdigit() else f" ({number} bytes)"
    _sector_multiple(option, raw, number, kb_base, shown)
    return number


def block_sizes(builder, option) -> None:
    """``bs``/``blockalign``: a block size per direction."""
    parts = directions(option, need(option))
    builder.store(option.key, [None if part is None else _block_size(option, part, builder.kb_base)
                               for part in parts], option)


def _zones(builder, option, raw: str) -> Optional[int]:
    """``Nz`` (N zones of ``zonesize``), or None for other spellings."""
    text = raw.strip()
    if not (text.endswith("z") and is_decimal(text[:-1])):
        return None
    zone = builder.get("zonesize")
    if not zone:
        raise _err(option, f"{option.name}={show(raw)} counts zones but no zonesize is set")
    return int(text[:-1]) * zone


def _size_share(builder, option, raw: str) -> None:
    """``size=N%``: a share of the target (100 % is all of it)."""
    number, _ = _located(option, lambda: fio_size(option.name, raw, builder.kb_base, allow_percent=True))
    if not 1 <= number <= 100:
        raise _err(option, f"size={show(raw)} must be 1% to 100%")
    builder.store("size", 0, option)
    builder.store("size_percent", number if number < 100 else 0, option)


def region(builder, option) -> None:
    """``size``/``offset``/``io_size``: bytes, ``Nz`` zones, ``size=N%`` or ``offset=0%``."""
    raw = need(option)
    zones = _zones(builder, option, raw)
    if zones is not None:
        builder.store(option.key, zones, option)
        return
    if option.key == "size" and raw.endswith("%"):
        _size_share(builder, option, raw)
        return
    kb = builder.kb_base
    number, percent = _located(option, lambda: fio_size(option.name, raw, kb, allow_percent=True))
    if percent:
        if option.key != "offset" or number != 0:
            also = " (offset=0% is accepted)" if option.key == "offset" else ""
            raise _err(option, f"{option.name}={show(raw)} is a share of the target; raidlab needs bytes{also}")
        number = 0
    if option.key != "io_size":
        shown = "" if raw.strip().isdigit() else f" ({number} bytes)"
        _sector_multiple(option, raw, number, kb, shown)
    builder.store(option.key, number, option)


def offset_increment(builder, option) -> None:
    raw = need(option)
    number = _zones(builder, option, raw)
    builder.store(option.key, number if number is not None else _count(option, raw, builder.kb_base), option)


def sector_size(builder, option) -> None:
    """A size that must be a whole number of sectors (the zone options)."""
    raw = need(option)
    number = _count(option, raw, builder.kb_base)
    if number % SECTOR_BYTES:
        raise _err(option, f"{option.name}={show(raw)} is not a multiple of {SECTOR_BYTES}")
    builder.store(option.key, number, option)


def filesize(builder, option) -> None:
    raw = need(option)
    low, _, high = raw.partition("-")
    first = _count(option, low, builder.kb_base)
    last = _count(option, high, builder.kb_base) if high else first
    if high:
        builder.notes.append(f"{builder.name}: filesize={raw} draws file sizes in fio; raidlab gives every "
                             "file the middle of the range")
    builder.store(option.key, (first + last) // 2, option)


def byte_rates(builder, option) -> None:
    """``rate``/``rate_min``: bytes per second per direction."""
    parts = directions(option, need(option))
    builder.store(option.key, [0 if part is None else _count(option, part, builder.kb_base) for part in parts],
                  option)


def iops_caps(builder, option) -> None:
    """``rate_iops``: I/Os per second per direction."""
    parts = directions(option, need(option))
    builder.store(option.key, [0 if part is None else _ranged_number(option, part, builder.kb_base, 0, MAX_INT)
                               for part in parts], option)


def _size_range(option, raw: str, kb: int) -> Tuple[int, int]:
    low, sep, high = raw.partition("-")
    if not sep:
        raise _err(option, f"{option.name}={show(raw)} is not a range (e.g. 4k-64k)")
    first, last = _count(option, low, kb), _count(option, high, kb)
    if first == 0 or first > last:
        raise _err(option, f"{option.name}={show(raw)} must run from a size above 0 up")
    if first % SECTOR_BYTES:
        raise _err(option, f"{option.name}={show(raw)}: {human_bytes(first)} is not a multiple of {SECTOR_BYTES}")
    return first, last


def size_ranges(builder, option) -> None:
    """``bsrange``: a ``low-high`` block size range per direction."""
    parts = directions(option, need(option))
    builder.store(option.key, [None if part is None else _size_range(option, part, builder.kb_base)
                               for part in parts], option)


def _bssplit_entries(option, raw: str, kb_base: int) -> Tuple[List[int], List[Optional[int]]]:
    """``size/percent:...`` → (sizes, percentages with None for a missing or 0 one)."""
    entries = raw.split(":")
    if len(entries) > _BSSPLIT_MAX:
        raise _err(option, f"bssplit has more than {_BSSPLIT_MAX} entries (fio's limit)")
    sizes: List[int] = []
    percents: List[Optional[int]] = []
    for entry in entries:
        entry = entry.strip()
        if not entry:
            raise _err(option, f"bssplit={show(raw)} has an empty entry (expected size/percent:...)")
        size_text, slash, percent_text = entry.partition("/")
        percent_text = percent_text.strip()
        if slash and not re.fullmatch(r"[0-9]{1,3}", percent_text):
            raise _err(option, f"bssplit entry {show(entry)!r} needs a whole percentage after '/' (e.g. 4k/50)")
        if slash and int(percent_text) > 100:
            raise _err(option, f"bssplit entry {show(entry)!r} has a percentage over 100")
        # bssplit_ddir: a 0 percentage counts as missing (it shares the remainder).
        percents.append(int(percent_text) or None if slash else None)
        sizes.append(_block_size(option, size_text.strip(), kb_base))
    return sizes, percents


def _bssplit_weights(option, percents: List[Optional[int]]) -> List[int]:
    given = sum(p for p in percents if p is not None)
    if given > 100:
        raise _err(option, f"bssplit percentages add up to {given}%, more than 100%")
    if len(percents) == 1:
        return [100]  # one size is used for every I/O (min_bs == max_bs)
    missing = percents.count(None)
    share = (100 - given) // missing if missing else 0
    weights = [share if p is None else p for p in percents]
    shortfall = 100 - sum(weights)
    if shortfall:
        # get_next_buflen walks the entries in ascending-percentage order (stable sort) and
        # falls through to the last non-zero one, which therefore takes the remainder.
        last = max((w, i) for i, w in enumerate(weights))[1]
        weights[last] += shortfall
    return weights


def _bssplit_mix(option, raw: str, kb_base: int) -> Tuple[Tuple[Tuple[int, int], ...], int]:
    """One direction's ``bssplit`` → (((bytes, percent), ...), smallest size).

    The percentages add up to 100, as fio draws them; entries left with 0 % are dropped, but
    the smallest size still counts them, because fio's min_bs (the default blockalign) does.
    """
    sizes, percents = _bssplit_entries(option, raw, kb_base)
    weights = _bssplit_weights(option, percents)
    smallest = min(sizes)
    for size, weight in zip(sizes, weights):
        if weight and size % smallest:
            raise _err(option, f"bssplit size {human_bytes(size)} is not a multiple of the smallest size "
                               f"{human_bytes(smallest)} (fio would round it down to "
                               f"{human_bytes(size - size % smallest)})")
    merged: Dict[int, int] = {}
    for size, weight in zip(sizes, weights):
        if weight:
            merged[size] = merged.get(size, 0) + weight
    return tuple(merged.items()), smallest


def bssplit(builder, option) -> None:
    """``read,write[,trim]`` mixes (str_split_parse); an empty direction keeps bs."""
    raw = need(option)
    parts = raw.split(",")
    if len(parts) > 3:
        raise _err(option, f"bssplit={show(raw)} has more than read,write,trim mixes")
    if len(parts) == 1:
        parts = [parts[0], parts[0]]
    builder.store(option.key, [None if part.strip() == "" else _bssplit_mix(option, part.strip(), builder.kb_base)
                               for part in parts[:2]], option)


# -- the I/O pattern -----------------------------------------------------------------------------


def _rw_postfix(builder, option, mode: str, postfix: str) -> None:
    """``rw=MODE:N``: N I/Os per random offset (random modes) or N bytes skipped (sequential)."""
    raw = option.value.strip()
    builder.store("rw", "rw" if mode == "readwrite" else mode, option)
    if mode not in _VALID_RW:
        raise _err(option, f"rw={show(raw)} is not one of read, write, randread, randwrite, rw, randrw")
    text = postfix.strip()
    number = _count(option, text.lstrip("-"), builder.kb_base)
    builder.store("rw_postfix", -number if text.startswith("-") else number, option)


def rw(builder, option) -> None:
    raw = need(option)
    mode, sep, postfix = raw.partition(":")
    mode = mode.strip()
    if mode in _TRIM_RW:
        raise _err(option, f"rw={mode}: discard (trim) to the members is not modelled")
    if sep:
        _rw_postfix(builder, option, mode, postfix)
        return
    if mode not in _VALID_RW:
        raise _err(option, f"rw={show(raw)} is not one of read, write, randread, randwrite, rw, randrw")
    builder.store("rw", "rw" if mode == "readwrite" else mode, option)


def mix_percent(builder, option) -> None:
    """``rwmixread``/``rwmixwrite``: the read percentage, stored as ``rwmix``."""
    percent = _ranged_number(option, need(option), builder.kb_base, 0, 100)
    builder.store("rwmix", percent if option.key == "rwmixread" else 100 - percent, option)


def random_percent(builder, option) -> None:
    """``percentage_random``/``percentage_sequential`` per direction, stored as the random share."""
    values: List[Optional[int]] = []
    for part in directions(option, need(option)):
        percent = None if part is None else _ranged_number(option, part, builder.kb_base, 0, 100)
        if percent is not None and option.key == "percentage_sequential":
            percent = 100 - percent
        values.append(percent)
    builder.store("percentage_random", values, option)


def ioengine(builder, option) -> None:
    engine = need(option).strip()
    kind, why = engine_class(engine)
    if kind is None:
        raise _err(option, f"ioengine={show(engine)} {why}")
    if why:
        builder.notes.append(f"{builder.name}: {why}")
    builder.store("ioengine", engine, option)
    builder.store("engine_kind", kind, option)


def steady_state(builder, option) -> None:
    """``ss=METRIC:LIMIT[%]`` (fio steadystate.c: iops, iops_slope, bw, bw_slope)."""
    raw = need(option)
    metric, sep, limit = raw.strip().partition(":")
    metric = metric.strip().lower()
    if not sep or metric not in ("iops", "iops_slope", "bw", "bw_slope"):
        raise _err(option, f"ss={show(raw)} must be iops, iops_slope, bw or bw_slope, a colon and "
                           "a limit, e.g. ss=iops_slope:0.1%")
    limit = limit.strip()
    percent = limit.endswith("%")
    try:
        value = float(limit[:-1] if percent else limit)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise _err(option, f"ss={show(raw)}: the limit must be a number >= 0 (with % for a share)")
    builder.store(option.key, (metric, value, percent), option)


def _distribution(option, raw: str) -> Distribution:
    """``random``, ``zipf[:θ]``, ``pareto[:h]`` or ``normal[:dev]``."""
    kind, _, rest = raw.partition(":")
    kind = kind.strip()
    names = {"random": "uniform", "zipf": "zipf", "pareto": "pareto", "normal": "normal"}
    if kind not in names:
        raise _err(option, f"random_distribution={show(raw)} is not one of random, zipf:θ, pareto:h, normal:dev")
    if kind == "random":
        if rest:
            raise _err(option, "random_distribution=random takes no parameter")
        return Distribution()
    if ":" in rest:
        raise _err(option, f"random_distribution={show(raw)}: the ':center' form is not modelled")
    if rest.strip() == "":
        if ":" in raw:
            raise _err(option, f"random_distribution={show(raw)} has an empty parameter")
        # FIO_DEF_ZIPF 1.1 and FIO_DEF_PARETO 0.2 (fio.h); normal defaults to a deviation of 0.
        return Distribution(names[kind], {"zipf": 1.1, "pareto": 0.2, "normal": 0.0}[kind])
    if not _FLOAT.fullmatch(rest.strip()):
        raise _err(option, f"random_distribution={show(raw)}: {show(rest)!r} is not a non-negative number")
    try:
        return Distribution(names[kind], float(rest))
    except WorkloadError as error:
        raise _err(option, f"random_distribution={show(raw)}: {error}") from None


def _zone_mix(option, raw: str, mix: str, absolute: bool, kb: int) -> Tuple[Tuple[float, int, int], ...]:
    zones, start, shares = [], 0, 0
    entries = mix.split(":")
    for number, entry in enumerate(entries):
        share_text, sep, size_text = entry.partition("/")
        if not sep or not is_decimal(share_text.strip()):
            raise _err(option, f"random_distribution zone {show(entry)!r} must be ACCESS%/SIZE (e.g. 60/10)")
        share = int(share_text)
        if size_text.strip() == "" and number == len(entries) - 1 and not absolute:
            size = 1_000_000 - start  # an empty last size takes the rest of the region
        elif absolute:
            size = _count(option, size_text, kb)
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
    return tuple(z for z in zones if z[2] > z[1] and z[0] > 0)


def _zoned(builder, option, raw: str) -> Tuple[bool, Tuple[Tuple[float, int, int], ...]]:
    """``zoned:A/S:A/S...`` (S in % of the region) or ``zoned_abs:A/SIZE:...`` → (absolute,
    ((share, start, end), ...)) with start/end in millionths of the region or in bytes
    (options.c ``parse_zoned_distribution``; one mix for every direction)."""
    kind, _, rest = raw.partition(":")
    if kind not in ("zoned", "zoned_abs"):
        raise _err(option, f"random_distribution={show(raw)} is not one of random, zipf, pareto, normal, zoned, "
                           "zoned_abs")
    mixes = [m for m in rest.split(",") if m.strip()]
    if not mixes or any(m != mixes[0] for m in mixes):
        raise _err(option, f"random_distribution={show(raw)}: raidlab takes one zone list for all directions")
    absolute = kind == "zoned_abs"
    return absolute, _zone_mix(option, raw, mixes[0], absolute, builder.kb_base)


def random_distribution(builder, option) -> None:
    """A distribution of offsets (stored as ``random_distribution``) or zones of the region
    (stored as ``zones``); the later spelling replaces the earlier."""
    raw = need(option)
    if raw.startswith("zoned"):
        builder.store("zones", _zoned(builder, option, raw), option)
        builder.slots.pop("random_distribution", None)
    else:
        builder.store(option.key, _distribution(option, raw), option)


def file_service_type(builder, option) -> None:
    kind, _, count = need(option).partition(":")  # kind: one of the option's listed values
    ios = (_ranged_number(option, count, builder.kb_base, 1, 1 << 31)
           if count and kind in ("roundrobin", "sequential", "random") else 1)
    builder.store(option.key, (kind, ios), option)


def sync(builder, option) -> None:
    """``sync``: none, O_SYNC (each write then an fsync) or O_DSYNC (then an fdatasync)."""
    value = choice(need(option))
    builder.store(option.key, {"0": None, "none": None, "1": "fsync", "sync": "fsync", "dsync": "fdatasync"}[value],
                  option)


def verify(builder, option) -> None:
    builder.store(option.key, choice(need(option)) != "0", option)  # "0" is fio's "no verification"
