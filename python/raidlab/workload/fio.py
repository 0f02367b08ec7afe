"""fio job files → :class:`~raidlab.workload.spec.Workload`, and back.

The reader follows fio-3.33, the version in Debian bookworm (research:
../shared/research/benchmark-tools.md §2; source: axboe/fio tag fio-3.33, ``init.c``
``__parse_jobs_ini``, ``parse.c``, ``options.c``, ``io_u.c``):

- INI text. ``;`` or ``#`` starts a comment anywhere on a line (``strip_blank_end``). A section
  whose name starts with ``global`` sets defaults for the jobs *below it* (a file may hold several
  and each adds to the defaults); any other ``[name]`` is a job that starts from the defaults so
  far, and its own options override them. Options apply in order, so the last spelling wins
  (``rwmixwrite=20`` after ``rwmixread=70`` means 80 % reads, as fio's callbacks do).
  ``kb_base`` is applied first (it has ``prio`` in the option table). Option names are
  case-sensitive and have fio's aliases (``readwrite``, ``blocksize``, ``ba``, ``io_limit``,
  ``fileoffset``, ``timeout``).
- All jobs of a file run at the same time; ``numjobs=N`` makes N threads of a job. With
  ``filename`` pointing at the array every clone walks the same region, so the spec's
  sequential cursor is per thread (fio keeps one position per clone and direction).
- Units as in :mod:`raidlab.workload.units` (``4k`` = 4096, ``4KiB`` = 4000 under the default
  ``kb_base=1024``; ``runtime=30`` is 30 s).
- Synchronous engines (sync, psync — fio's default on Linux —, vsync, pvsync, pvsync2) keep one
  I/O in flight whatever ``iodepth`` says; fio-3.33 prints "note: both iodepth >= 1 and
  synchronous I/O engine are selected, queue depth will be capped at 1" (backend.c). raidlab
  stores the capped depth and keeps a note. libaio without ``direct=1`` blocks on submission on
  most file systems (fio#512); raidlab simulates the depth asked for and notes it.
- ``direct=0`` (fio's default) and ``buffered=1`` go through the host's page cache
  (:mod:`raidlab_core` ``sim::pagecache``); ``invalidate=0`` starts with the file cached;
  ``fsync_on_close`` syncs at the end of the job like ``end_fsync``.
- ``bs``/``bssplit``/``blockalign``/``percentage_random``/``rate_iops`` take ``read,write[,trim]``
  values; a job that does both reads and writes must give both directions the same value,
  because the spec has one. A single value applies to every direction (fio copies it).
- ``bssplit`` (``options.c`` ``bssplit_ddir``; ``io_u.c`` ``get_next_buflen``): entries
  ``size/percent`` joined by ``:``; a missing (or 0) percentage shares what the others leave,
  in whole percent; whatever still falls short of 100 % is what fio gives the entry it tries
  last (the largest percentage, the later one on ties), so raidlab adds it there. fio rounds
  every drawn size down to a multiple of the smallest size, so sizes that are not multiples of
  it are refused rather than silently changed.
- ``rate_iops`` caps each direction separately in fio (HOWTO ``rate_iops=int[,int][,int]``;
  one value applies to reads and writes each; io_u.c ``rate_ddir`` issues the other direction
  while one is ahead of its cap). A job that reads and writes with both caps binding therefore
  does ``read`` reads and ``write`` writes a second whatever ``rwmixread`` says (fio-3.33,
  ioengine=null: ``rate_iops=200`` with ``rwmixread=70`` ran 200 reads and 200 writes a
  second). raidlab runs it as one cap of read + write IOPS with the caps' read share, and notes
  when that differs from ``rwmixread``; a mixed job that caps only one direction is refused.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from raidlab.workload import fio_options, fio_stream
from raidlab.workload.spec import SECTOR_BYTES, Distribution, Job, Workload, WorkloadError
from raidlab.workload.units import (
    MAX_INT,
    fio_bool,
    fio_count,
    fio_iec_note,
    fio_size,
    decode_utf8,
    fio_time_ns,
    human_bytes,
    show,
)

__all__ = [
    "parse_fio",
    "parse_fio_file",
    "render_fio",
    "SUPPORTED_OPTIONS",
    "IGNORED_OPTIONS",
    "ACCEPTED_OPTIONS",
    "SYNC_ENGINES",
    "ASYNC_ENGINES",
]

#: Engines that do one I/O at a time per thread (FIO_SYNCIO in engines/sync.c, fio-3.33).
SYNC_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2")
#: Engines that keep ``iodepth`` I/Os in flight.
ASYNC_ENGINES = ("libaio", "io_uring", "posixaio")
#: fio's default engine on Linux (os/os-linux.h FIO_PREFERRED_ENGINE).
DEFAULT_ENGINE = "psync"

#: Options raidlab reads and models, by canonical name.
SUPPORTED_OPTIONS = (
    "rw",
    "bs",
    "bssplit",
    "blockalign",
    "rwmixread",
    "rwmixwrite",
    "percentage_random",
    "percentage_sequential",
    "iodepth",
    "numjobs",
    "ioengine",
    "size",
    "io_size",
    "offset",
    "runtime",
    "time_based",
    "ramp_time",
    "number_ios",
    "random_distribution",
    "rate_iops",
    "rate_process",
    "fsync",
    "fdatasync",
    "end_fsync",
    "direct",
    "buffered",
    "invalidate",
    "fsync_on_close",
    "kb_base",
    "name",
    # issue 20: steady state (fio steadystate.c)
    "ss",
    "ss_dur",
    "ss_ramp",
)

#: Options accepted without effect: they change naming, reporting, data contents or seeding,
#: not the timing or placement of I/O as raidlab models it. ``norandommap`` and
#: ``random_generator`` are here because raidlab always draws offsets independently
#: (as fio does with ``norandommap``); ``filename`` because the target is the simulated array
#: (several files, ``a:b``, are refused).
IGNORED_OPTIONS = (
    "description",
    "filename",
    "directory",
    "group_reporting",
    "new_group",
    "thread",
    "randrepeat",
    "allrandrepeat",
    "randseed",
    "norandommap",
    "random_generator",
    "refill_buffers",
    "scramble_buffers",
    "zero_buffers",
    "buffer_compress_percentage",
    "dedupe_percentage",
    "per_job_logs",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "write_hist_log",
    "log_avg_msec",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
)

_ALIASES = {
    "readwrite": "rw",
    "blocksize": "bs",
    "ba": "blockalign",
    "io_limit": "io_size",
    "fileoffset": "offset",
    "timeout": "runtime",
}
_ALIASES.update({k: v for k, v in fio_options._ALIASES.items()})  # issue 22's options

#: Every job option name raidlab accepts (modelled, accepted without effect, or an alias of one):
#: the one list the unknown-option error draws its "did you mean" from and ``raidlab
#: fio-options`` prints.
ACCEPTED_OPTIONS = tuple(sorted(
    set(SUPPORTED_OPTIONS) | set(IGNORED_OPTIONS) | set(fio_options.STREAM_OPTIONS)
    | fio_options.NO_EFFECT_OPTIONS | set(_ALIASES)
))
#: Where the unknown-option error sends the user for the whole list.
OPTION_LIST_COMMAND = "raidlab fio-options"

# Known fio options raidlab refuses, with the reason (everything else unknown gets the list).
_REFUSED = {
    "nrfiles": "splits a job over several files; raidlab reads one file (the array) per fio job",
    "nr_files": "splits a job over several files; raidlab reads one file (the array) per fio job",
    "offset_increment": "gives each clone its own region; write one job per region instead",
    "stonewall": "runs jobs one after another; raidlab runs all jobs of a file at the same time",
    "wait_for_previous": "runs jobs one after another; raidlab runs all jobs of a file at the same time",
    "loops": "repeats the job; use time_based with a runtime, or io_size",
    "thinktime": "(pauses between I/Os) is not modelled",
    "thinktime_blocks": "(pauses between I/Os) is not modelled",
    "thinktime_spin": "(pauses between I/Os) is not modelled",
    "startdelay": "is not modelled; all jobs start together",
    "rate": "(a bandwidth cap) is not modelled; use rate_iops",
    "rate_min": "is not modelled; use rate_iops",
    "rate_iops_min": "is not modelled; use rate_iops",
    "bsrange": "draws sizes from a range; list them with bssplit instead",
    "blocksize_range": "draws sizes from a range; list them with bssplit instead",
    "sync": "(O_SYNC/O_DSYNC writes) is not modelled; use fsync=1 or fdatasync=1",
    "include": "is not supported; paste the included options into the job file",
    "filesize": "is not modelled; use size",
    "zonemode": "(zoned I/O) is not modelled",
    "verify": "is not modelled",
    "iodepth_batch": "(submission batching) is not modelled",
    "iodepth_batch_submit": "(submission batching) is not modelled",
    "iodepth_low": "(submission batching) is not modelled",
    "latency_target": "(a queue-depth search) is not modelled",
    "unified_rw_reporting": "is not modelled",
}
# fio command-line options that are not job options (fio's l_opts in init.c).
_CLI_ONLY = ("output-format", "output", "minimal", "showcmd", "parse-only", "section", "status-interval")

_VALID_RW = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")
_TRIM_RW = ("trim", "randtrim", "trimwrite", "randtrimwrite")

_READ, _WRITE = 0, 1
_BSSPLIT_MAX = 64  # BSSPLIT_MAX in fio's options.h
_FLOAT = re.compile(r"[+]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,3})?")
_MAX_SECTION_NAME = 255  # fio reads section names with "%255[^\n]"


@dataclass
class _Option:
    name: str  # as written
    key: str  # canonical
    value: Optional[str]
    line: int


@dataclass
class _Section:
    name: str
    line: int
    is_global: bool
    options: List[_Option]


def _where(line: int) -> str:
    return f"fio job file line {line}"


def _read_sections(text: str) -> List[_Section]:
    """Splits the INI text into sections, with fio's comment and blank-line rules."""
    sections: List[_Section] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if "\x00" in raw:
            raise WorkloadError(f"{_where(number)}: contains a NUL byte")
        # strip_blank_end (parse.c) cuts the line at the first ';' and then at the first '#'.
        line = raw
        for mark in (";", "#"):
            cut = line.find(mark)
            if cut >= 0:
                line = line[:cut]
        line = line.strip(" \t\r\n\v\f")
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise WorkloadError(f"{_where(number)}: bad section header {show(line)!r} (expected [name])")
            name = line[1:-1].strip()
            if not name or "[" in name or "]" in name:
                raise WorkloadError(f"{_where(number)}: bad section header {show(line)!r} (expected [name])")
            if len(name) > _MAX_SECTION_NAME:
                raise WorkloadError(f"{_where(number)}: section name is longer than {_MAX_SECTION_NAME} characters")
            # init.c: global = !strncmp(name, "global", 6)
            sections.append(_Section(name, number, name.startswith("global"), []))
            continue
        if line.startswith("include ") or line == "include":
            raise WorkloadError(f"{_where(number)}: include {_REFUSED['include']}")
        if not sections:
            raise WorkloadError(f"{_where(number)}: option {show(line)!r} is outside of a [job] section")
        if "=" in line:
            name, value = line.split("=", 1)
            name, value = name.strip(), value.strip()
        else:
            name, value = line, None
        if not name:
            raise WorkloadError(f"{_where(number)}: {show(line)!r} has no option name")
        sections[-1].options.append(_Option(name, _ALIASES.get(name, name), value, number))
    return sections


def _unknown(option: _Option) -> WorkloadError:
    name = option.name
    where = _where(option.line)
    if option.key in fio_options.REFUSED_OPTIONS:
        return WorkloadError(f"{where}: fio option {name!r} {fio_options.REFUSED_OPTIONS[option.key]}")
    if name in _REFUSED:
        return WorkloadError(f"{where}: fio option {name!r} {_REFUSED[name]}")
    if name in _CLI_ONLY or name.lstrip("-") in _CLI_ONLY:
        return WorkloadError(f"{where}: {show(name)!r} is a fio command-line option, not a job file option")
    close = difflib.get_close_matches(name, ACCEPTED_OPTIONS, n=3, cutoff=0.75)
    guess = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    return WorkloadError(
        f"{where}: unknown option {show(name)!r}{guess}; raidlab accepts {len(ACCEPTED_OPTIONS)} fio options, "
        f"listed by {OPTION_LIST_COMMAND}"
    )


def _needs_value(option: _Option) -> str:
    if option.value is None or option.value == "":
        raise WorkloadError(f"{_where(option.line)}: option {option.name!r} needs a value")
    return option.value


def _split_directions(option: _Option, value: str) -> List[Optional[str]]:
    """``R,W[,T]`` → [read, write] (None = not given). One value applies to both (fio copies it)."""
    parts = value.split(",")
    if len(parts) > 1 and parts[-1].strip() == "":
        parts = parts[:-1]  # fio drops a trailing comma
    if len(parts) > 3:
        raise WorkloadError(f"{_where(option.line)}: {option.name}={show(value)} has more than read,write,trim values")
    parts = [part.strip() for part in parts]
    if len(parts) == 1:
        return [parts[0], parts[0]]
    return [parts[0] or None, parts[1] or None]


def _sector_multiple(option: _Option, raw: str, number: int, kb_base: int, what: str = "") -> None:
    if number % SECTOR_BYTES:
        raise WorkloadError(
            f"{_where(option.line)}: {option.name}={show(raw)}{what} is not a multiple of {SECTOR_BYTES}"
            + fio_iec_note(raw, kb_base)
        )


def _block_size(option: _Option, raw: str, kb_base: int) -> int:
    try:
        number = fio_count(option.name, raw, kb_base)
    except WorkloadError as error:
        raise WorkloadError(f"{_where(option.line)}: {error}") from None
    if number == 0:
        raise WorkloadError(f"{_where(option.line)}: {option.name}={show(raw)} must be at least {SECTOR_BYTES}")
    shown = "" if raw.strip().isdigit() else f" ({number} bytes)"
    _sector_multiple(option, raw, number, kb_base, shown)
    return number


def _parse_bssplit(option: _Option, raw: str, kb_base: int) -> Tuple[Tuple[Tuple[int, int], ...], int]:
    """One direction's ``bssplit`` → (((bytes, percent), ...), smallest size).

    The percentages add up to 100, as fio draws them; entries left with 0 % are dropped, but
    the smallest size still counts them, because fio's min_bs (the default blockalign) does.
    """
    where = _where(option.line)
    entries = raw.split(":")
    if len(entries) > _BSSPLIT_MAX:
        raise WorkloadError(f"{where}: bssplit has more than {_BSSPLIT_MAX} entries (fio's limit)")
    sizes: List[int] = []
    percents: List[Optional[int]] = []
    for entry in entries:
        entry = entry.strip()
        if not entry:
            raise WorkloadError(f"{where}: bssplit={show(raw)} has an empty entry (expected size/percent:...)")
        if "/" in entry:
            size_text, percent_text = entry.split("/", 1)
            percent_text = percent_text.strip()
            if not re.fullmatch(r"[0-9]{1,3}", percent_text):
                raise WorkloadError(
                    f"{where}: bssplit entry {show(entry)!r} needs a whole percentage after '/' (e.g. 4k/50)"
                )
            percent = int(percent_text)
            if percent > 100:
                raise WorkloadError(f"{where}: bssplit entry {show(entry)!r} has a percentage over 100")
            # bssplit_ddir: a 0 percentage counts as missing (it shares the remainder).
            percents.append(percent or None)
        else:
            size_text = entry
            percents.append(None)
        sizes.append(_block_size(_Option("bssplit", "bssplit", None, option.line), size_text.strip(), kb_base))
    given = sum(p for p in percents if p is not None)
    if given > 100:
        raise WorkloadError(f"{where}: bssplit percentages add up to {given}%, more than 100%")
    if len(sizes) == 1:
        weights = [100]  # one size is used for every I/O (min_bs == max_bs)
    else:
        missing = percents.count(None)
        share = (100 - given) // missing if missing else 0
        weights = [share if p is None else p for p in percents]
        shortfall = 100 - sum(weights)
        if shortfall:
            # get_next_buflen walks the entries in ascending-percentage order (stable sort) and
            # falls through to the last non-zero one, which therefore takes the remainder.
            last = max((w, i) for i, w in enumerate(weights))[1]
            weights[last] += shortfall
    smallest = min(sizes)
    for size, weight in zip(sizes, weights):
        if weight and size % smallest:
            raise WorkloadError(
                f"{where}: bssplit size {human_bytes(size)} is not a multiple of the smallest size "
                f"{human_bytes(smallest)} (fio would round it down to {human_bytes(size - size % smallest)})"
            )
    merged: Dict[int, int] = {}
    for size, weight in zip(sizes, weights):
        if weight:
            merged[size] = merged.get(size, 0) + weight
    return tuple(merged.items()), smallest


def _parse_distribution(option: _Option, raw: str) -> Distribution:
    where = _where(option.line)
    kind, _, rest = raw.partition(":")
    kind = kind.strip()
    if kind in ("zoned", "zoned_abs"):
        raise WorkloadError(f"{where}: random_distribution={kind} is not modelled (use zipf, pareto or normal)")
    names = {"random": "uniform", "zipf": "zipf", "pareto": "pareto", "normal": "normal"}
    if kind not in names:
        raise WorkloadError(
            f"{where}: random_distribution={show(raw)} is not one of random, zipf:θ, pareto:h, normal:dev"
        )
    if kind == "random":
        if rest:
            raise WorkloadError(f"{where}: random_distribution=random takes no parameter")
        return Distribution()
    # FIO_DEF_ZIPF 1.1 and FIO_DEF_PARETO 0.2 (fio.h); normal defaults to a deviation of 0.
    default = {"zipf": 1.1, "pareto": 0.2, "normal": 0.0}[kind]
    if ":" in rest:
        raise WorkloadError(f"{where}: random_distribution={show(raw)}: the ':center' form is not modelled")
    if rest.strip() == "":
        value = default
        if ":" in raw:
            raise WorkloadError(f"{where}: random_distribution={show(raw)} has an empty parameter")
    else:
        if not _FLOAT.fullmatch(rest.strip()):
            raise WorkloadError(f"{where}: random_distribution={show(raw)}: {show(rest)!r} is not a non-negative number")
        value = float(rest)
    try:
        return Distribution(names[kind], value)
    except WorkloadError as error:
        raise WorkloadError(f"{where}: random_distribution={show(raw)}: {error}") from None


def _int_in(option: _Option, raw: str, kb_base: int, low: int, high: int) -> int:
    try:
        number = fio_count(option.name, raw, kb_base)
    except WorkloadError as error:
        raise WorkloadError(f"{_where(option.line)}: {error}") from None
    if number < low or number > high:
        raise WorkloadError(f"{_where(option.line)}: {option.name}={show(raw)} must be {low} to {high}")
    return number


class _JobBuilder:
    """Applies one job's options (defaults from [global] first) in order, as fio does."""

    def __init__(self, section: _Section, options: List[_Option]) -> None:
        self.section = section
        self.name = section.name
        self.options = options
        self.notes: List[str] = []
        # slot -> (value, option that set it)
        self.slots: Dict[str, Tuple[object, _Option]] = {}
        #: Every problem found (issue 22: all of them are reported at once, each with its line).
        self.errors: List[str] = []
        #: Accepted options that do not change the simulated I/O (one note per file).
        self.no_effect: List[str] = []

    # -- per-option parsing -------------------------------------------------------------------

    def apply(self) -> None:
        kb_base = 1024
        for option in self.options:  # kb_base has prio 1 in fio's option table: parsed first
            if option.key == "kb_base":
                value = _needs_value(option)
                if value not in ("1024", "1000"):
                    raise WorkloadError(f"{_where(option.line)}: kb_base={show(value)} must be 1024 or 1000")
                kb_base = int(value)
        self.kb_base = kb_base
        for option in self.options:
            try:
                self._apply_one(option)
            except WorkloadError as error:
                self.errors.append(str(error))

    def _set(self, slot: str, value: object, option: _Option) -> None:
        self.slots[slot] = (value, option)

    def _apply_one(self, option: _Option) -> None:
        key, where, kb = option.key, _where(option.line), self.kb_base
        if fio_stream.apply(self, option):
            return
        if key in IGNORED_OPTIONS:
            if key == "filename" and option.value and re.search(r"(?<!\\):", option.value):
                raise WorkloadError(
                    f"{where}: filename={show(option.value)} names several files (':'); "
                    "raidlab reads one file (the array) per fio job"
                )
            return
        if key not in SUPPORTED_OPTIONS:
            raise _unknown(option)
        if key == "kb_base":
            return
        if key == "time_based":
            self._set(key, fio_bool(option.name, option.value, flag=True), option)
            return
        if key in ("direct", "buffered", "end_fsync", "invalidate", "fsync_on_close"):
            try:
                flag = fio_bool(option.name, option.value)
            except WorkloadError as error:
                raise WorkloadError(f"{where}: {error}") from None
            if key == "buffered":
                key, flag = "direct", not flag
            self._set(key, flag, option)
            return
        raw = _needs_value(option)
        if key == "rw":
            mode, _, postfix = raw.partition(":")
            mode = mode.strip()
            if mode in _TRIM_RW:
                raise WorkloadError(f"{where}: rw={mode}: trim is not modelled")
            if mode not in _VALID_RW:
                raise WorkloadError(
                    f"{where}: rw={show(raw)} is not one of read, write, randread, randwrite, rw, randrw"
                )
            if ":" in raw:
                raise WorkloadError(
                    f"{where}: rw={show(raw)}: the ':{show(postfix)}' suffix (rw_sequencer) is not modelled"
                )
            self._set("rw", "rw" if mode == "readwrite" else mode, option)
        elif key in ("rwmixread", "rwmixwrite"):
            percent = _int_in(option, raw, kb, 0, 100)
            self._set("rwmix", percent if key == "rwmixread" else 100 - percent, option)
        elif key in ("percentage_random", "percentage_sequential"):
            values = []
            for part in _split_directions(option, raw):
                if part is None:
                    values.append(None)
                    continue
                percent = _int_in(option, part, kb, 0, 100)
                values.append(percent if key == "percentage_random" else 100 - percent)
            self._set("percentage_random", values, option)
        elif key == "bs":
            values = [None if part is None else _block_size(option, part, kb) for part in _split_directions(option, raw)]
            self._set(key, values, option)
        elif key == "blockalign":
            values = [None if part is None else _block_size(option, part, kb) for part in _split_directions(option, raw)]
            self._set(key, values, option)
        elif key == "bssplit":
            # str_split_parse: read,write[,trim]; an empty direction keeps bs.
            parts = raw.split(",")
            if len(parts) > 3:
                raise WorkloadError(f"{where}: bssplit={show(raw)} has more than read,write,trim mixes")
            if len(parts) == 1:
                parts = [parts[0], parts[0]]
            values = [
                None if part.strip() == "" else _parse_bssplit(option, part.strip(), kb) for part in parts[:2]
            ]
            self._set(key, values, option)
        elif key == "iodepth":
            self._set(key, _int_in(option, raw, kb, 1, 65536), option)
        elif key == "numjobs":
            self._set(key, _int_in(option, raw, kb, 1, 4096), option)
        elif key == "ioengine":
            engine = raw.strip()
            kind, why = fio_options.engine_class(engine)
            if kind is None:
                raise WorkloadError(f"{where}: ioengine={show(engine)} {why}")
            if why:
                self.notes.append(f"{self.name}: {why}")
            self._set(key, engine, option)
            self._set("engine_kind", kind, option)
        elif key in ("size", "offset", "io_size"):
            try:
                number, percent = fio_size(option.name, raw, kb, allow_percent=True)
            except WorkloadError as error:
                raise WorkloadError(f"{where}: {error}") from None
            if percent:
                whole = {"size": 100, "offset": 0}.get(key)
                if number != whole:
                    hint = {"size": "size=100%", "offset": "offset=0%"}.get(key)
                    also = f" ({hint} is accepted)" if hint else ""
                    raise WorkloadError(
                        f"{where}: {option.name}={show(raw)} is a share of the target; raidlab needs bytes{also}"
                    )
                number = 0
            if key != "io_size":
                shown = "" if raw.strip().isdigit() else f" ({number} bytes)"
                _sector_multiple(option, raw, number, kb, shown)
            self._set(key, number, option)
        elif key == "ss":
            self._set(key, _parse_steady(option, raw, where), option)
        elif key in ("runtime", "ramp_time", "ss_dur", "ss_ramp"):
            try:
                self._set(key, fio_time_ns(option.name, raw), option)
            except WorkloadError as error:
                raise WorkloadError(f"{where}: {error}") from None
        elif key == "number_ios":
            self._set(key, _int_in(option, raw, kb, 0, MAX_INT), option)
        elif key == "random_distribution":
            self._set(key, _parse_distribution(option, raw), option)
        elif key == "rate_iops":
            values = [
                0 if part is None else _int_in(option, part, kb, 0, MAX_INT) for part in _split_directions(option, raw)
            ]
            self._set(key, values, option)
        elif key == "rate_process":
            self._set(key, raw.strip().split(":", 1)[0].split(",", 1)[0], option)  # fio_options.ENUMERATED
        elif key in ("fsync", "fdatasync"):
            self._set(key, _int_in(option, raw, kb, 0, MAX_INT), option)
        elif key == "name":
            # A job's own name= renames it; in [global] fio overwrites it with each section name.
            if any(own is option for own in self.section.options):
                if len(raw) > _MAX_SECTION_NAME:
                    raise WorkloadError(f"{where}: name is longer than {_MAX_SECTION_NAME} characters")
                self.name = raw
        else:  # pragma: no cover - every supported option is handled above
            raise AssertionError(key)

    # -- assembling the job ---------------------------------------------------------------------

    def get(self, slot: str, default: object = None) -> object:
        return self.slots[slot][0] if slot in self.slots else default

    def fail(self, message: str) -> WorkloadError:
        return WorkloadError(f"fio job {show(self.name)!r}: {message}")

    def per_direction(self, slot: str, default: object, active: Sequence[int]) -> object:
        """The one value the active directions share (None entries fall back to ``default``)."""
        values = self.get(slot)
        if values is None:
            return default
        chosen = [default if values[d] is None else values[d] for d in active]
        if any(value != chosen[0] for value in chosen):
            option = self.slots[slot][1]
            raise self.fail(
                f"{option.name}={show(option.value)} gives reads and writes different values; "
                "raidlab models one value for both directions (split the job in two)"
            )
        return chosen[0]

    def _rate(self, read_fraction: float, percent_read: int) -> Tuple[int, float]:
        """(the job's one IOPS cap, its read share) from ``rate_iops``. fio paces reads and
        writes each at their own cap (io_u.c ``rate_ddir``), so a mixed job whose caps both bind
        does ``read`` reads and ``write`` writes a second: one cap of their sum with their read
        share, noted when it is not ``rwmixread``'s."""
        rates = self.get("rate_iops")
        if rates is None:
            return 0, read_fraction
        if read_fraction in (0.0, 1.0):
            rate = rates[_READ] if read_fraction == 1.0 else rates[_WRITE]
        else:
            read_cap, write_cap = rates
            option = self.slots["rate_iops"][1]
            if bool(read_cap) != bool(write_cap):
                capped = "reads" if read_cap else "writes"
                raise self.fail(
                    f"rate_iops={show(option.value)} caps {capped} only, so fio runs the other direction "
                    "unpaced in the time left; raidlab models one cap per job: cap both directions "
                    f"(e.g. rate_iops={10 * percent_read},{1000 - 10 * percent_read} for 1000 IOPS) or split the job"
                )
            rate = read_cap + write_cap
            if rate and read_cap * (100 - percent_read) != write_cap * percent_read:
                read_fraction = read_cap / rate
                self.notes.append(
                    f"{self.name}: rate_iops={show(option.value)} paces reads at {read_cap} and writes at {write_cap} "
                    f"IOPS each, as fio does, so once both caps bind the job runs {rate} IOPS at "
                    f"{100 * read_fraction:.3g} % reads, not rwmixread={percent_read}; raidlab simulates that mix"
                )
        if rate > MAX_INT:
            raise self.fail("rate_iops is too large")
        return rate, read_fraction

    def _steady(self):
        """fio's ss/ss_dur/ss_ramp as the spec holds them (None without ss)."""
        ss = self.get("ss")
        if ss is None:
            if self.get("ss_dur") is not None or self.get("ss_ramp") is not None:
                raise self.fail("ss_dur and ss_ramp need ss (e.g. ss=iops_slope:0.1%)")
            return None
        duration = self.get("ss_dur")
        if not duration or duration < 1_000_000_000:
            raise self.fail("ss needs ss_dur of at least 1 s (the window it judges), e.g. ss_dur=60")
        metric, limit, percent = ss
        return (metric, limit, percent, duration, self.get("ss_ramp", 0))

    def build(self) -> Job:
        rw = self.get("rw", "read")
        random = rw.startswith("rand")
        percent_read = self.get("rwmix", 50)
        if rw in ("read", "randread"):
            read_fraction = 1.0
        elif rw in ("write", "randwrite"):
            read_fraction = 0.0
        else:
            read_fraction = percent_read / 100
        active = [d for d, share in ((_READ, read_fraction), (_WRITE, 1.0 - read_fraction)) if share > 0]

        # Block sizes: bssplit wins over bs for a direction it covers (fixup_options).
        bs = self.get("bs") or [None, None]
        split = self.get("bssplit") or [None, None]
        per_dir = []
        for d in (_READ, _WRITE):
            if split[d] is not None:
                per_dir.append(split[d])
            else:
                size = bs[d] if bs[d] is not None else 4096
                per_dir.append((((size, 100),), size))
        chosen = [per_dir[d] for d in active]
        # bs=r,w / bssplit=r,w (issue 22): a job that reads and writes with different sizes
        # draws its writes' sizes from their own mix (write_block_sizes).
        self.write_sizes = chosen[1][0] if len(chosen) == 2 and chosen[1] != chosen[0] else ()
        if self.write_sizes:
            smallest = min(chosen[0][1], chosen[1][1])
            chosen = [(chosen[0][0], smallest)]
        block_sizes, smallest = chosen[0]
        largest = max(size for size, _ in block_sizes + tuple(self.write_sizes))

        align = self.per_direction("blockalign", smallest, active)
        if not random:
            # fixup_options: sequential jobs align to the smallest block size whatever ba says.
            if align != smallest:
                self.notes.append(f"{self.name}: blockalign only applies to random I/O; fio ignores it here")
            align = smallest

        random_fraction = self.per_direction("percentage_random", 100, active) / 100 if random else 0.0

        engine = self.get("ioengine", DEFAULT_ENGINE)
        iodepth = self.get("iodepth", 1)
        if (engine in SYNC_ENGINES or self.get("engine_kind") == "sync") and iodepth > 1:
            self.notes.append(
                f"{self.name}: iodepth={iodepth} is capped at 1 by the {engine} engine"
                + (" (fio's default)" if "ioengine" not in self.slots else "")
                + "; use ioengine=libaio or io_uring for a deeper queue"
            )
            iodepth = 1
        direct = self.get("direct", False)
        if engine == "libaio" and iodepth > 1 and not direct:
            self.notes.append(
                f"{self.name}: libaio without direct=1 usually blocks on submission (fio#512); "
                f"raidlab still simulates iodepth={iodepth}"
            )

        size = self.get("size", 0)
        if size and size < largest:
            raise self.fail(f"size={human_bytes(size)} is smaller than the block size {human_bytes(largest)}")

        runtime = self.get("runtime", 0)
        time_based = self.get("time_based", False)
        if time_based and not runtime:
            # fixup_options: "fio: time_based requires a runtime/timeout setting", then turns it off.
            self.notes.append(f"{self.name}: time_based without a runtime is ignored, as fio does")
            time_based = False

        rate, read_fraction = self._rate(read_fraction, percent_read)

        fsync, fdatasync = self.get("fsync", 0), self.get("fdatasync", 0)
        if fsync and fdatasync:
            raise self.fail("fsync and fdatasync are both set; raidlab models one kind per job")
        # fsync_on_close: fio syncs the file when it closes it, at the end of the job's pass
        # (file close in td_io_close_file); raidlab's one file per job closes when the job ends.
        end_fsync = self.get("end_fsync", False) or self.get("fsync_on_close", False)
        if read_fraction == 1.0:
            fsync = fdatasync = 0  # should_fsync: nothing is written, so nothing is synced
            end_fsync = False

        kwargs = fio_stream.finish(self, dict(
                name=self.name,
                threads=self.get("numjobs", 1),
                iodepth=iodepth,
                read_fraction=read_fraction,
                random_fraction=random_fraction,
                block_sizes=block_sizes,
                offset_bytes=self.get("offset", 0),
                size_bytes=size,
                files=1,
                sequential_cursor="per_thread",
                distribution=self.get("random_distribution", Distribution()),
                rate_iops=rate,
                arrival=self.get("rate_process", "linear"),
                fsync_every=fsync or fdatasync,
                fsync_kind="fdatasync" if fdatasync else "fsync",
                fsync_scope="thread",
                fsync_end=end_fsync,
                runtime_ns=runtime,
                ramp_ns=self.get("ramp_time", 0),
                time_based=time_based,
                number_ios=self.get("number_ios", 0),
                total_ios=0,
                io_bytes=self.get("io_size", 0),
                direct=direct,
                block_align_bytes=align,
                steady_state=self._steady(),
                invalidate=self.get("invalidate", True),
            ))
        try:
            return Job(**kwargs)
        except WorkloadError as error:
            raise WorkloadError(f"fio {error}") from None


def _parse_steady(option: Any, raw: str, where: str) -> Tuple[str, float, bool]:
    """``ss=METRIC:LIMIT[%]`` (fio steadystate.c: iops, iops_slope, bw, bw_slope)."""
    metric, sep, limit = raw.strip().partition(":")
    metric = metric.strip().lower()
    if not sep or metric not in ("iops", "iops_slope", "bw", "bw_slope"):
        raise WorkloadError(f"{where}: ss={show(raw)} must be iops, iops_slope, bw or bw_slope, a colon and "
                            "a limit, e.g. ss=iops_slope:0.1%")
    limit = limit.strip()
    percent = limit.endswith("%")
    try:
        value = float(limit[:-1] if percent else limit)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise WorkloadError(f"{where}: ss={show(raw)}: the limit must be a number >= 0 (with % for a share)")
    return metric, value, percent


def _as_text(text: Union[str, bytes], what: str) -> str:
    if isinstance(text, bytes):
        return decode_utf8(text, what, WorkloadError)
    if not isinstance(text, str):
        raise WorkloadError(f"{what} must be text, not {type(text).__name__}")
    return text


def parse_fio(text: Union[str, bytes]) -> Workload:
    """Reads a fio job file's text into a :class:`Workload` (one spec job per fio job section).

    >>> w = parse_fio("[global]\\nbs=16k\\ndirect=1\\n[oltp]\\nrw=randrw\\nrwmixread=70\\nnumjobs=16\\n")
    >>> w.describe()
    'randrw 70/30, 16 KiB, 16 threads × QD1, direct'
    """
    text = _as_text(text, "fio job file")
    sections = _read_sections(text)
    if not sections:
        raise WorkloadError("fio job file has no sections (expected [global] and [job] sections)")
    defaults: List[_Option] = []
    builders: List[_JobBuilder] = []
    errors: List[str] = []
    for section in sections:
        builder = _JobBuilder(section, defaults + section.options)
        builder.apply()
        errors.extend(builder.errors)
        if section.is_global:
            # Checked now, as fio parses each section when it ends, so a bad option in a
            # [global] that no job follows is still reported.
            defaults.extend(section.options)
            continue
        builders.append(builder)
    if not builders and not errors:
        raise WorkloadError("fio job file defines no jobs (only [global] sections)")
    return fio_stream.assemble(builders, errors, text)


def parse_fio_file(path: Union[str, "os.PathLike[str]"]) -> Workload:
    """Reads the fio job file at ``path`` (see :func:`parse_fio`)."""
    from raidlab.inputs import read_bytes, show_path  # the one reader (needs the extension)

    data = read_bytes(path, "fio job file", WorkloadError)
    return parse_fio(decode_utf8(data, f"fio job file {show_path(path)}", WorkloadError))


# -- writing fio job files ------------------------------------------------------------------


def _whole_percent(job: Job, field: str, fraction: float) -> int:
    percent = round(fraction * 100)
    if percent / 100 != fraction:
        raise WorkloadError(f"job {job.name!r}: {field}={fraction!r} is not a whole percentage, which fio needs")
    return percent


def _size_text(number: int) -> str:
    for unit, size in (("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
        if number and number % size == 0:
            return f"{number // size}{unit}"
    return str(number)


def _time_text(job: Job, field: str, nanos: int) -> str:
    if nanos % 1000:
        raise WorkloadError(f"job {job.name!r}: {field}={nanos} ns is finer than fio's microseconds")
    micros = nanos // 1000
    if micros % 1_000_000 == 0:
        return f"{micros // 1_000_000}s"
    if micros % 1000 == 0:
        return f"{micros // 1000}ms"
    return f"{micros}us"


def _render_job(job: Job) -> List[str]:
    name = job.name
    if (
        name.startswith("global")
        or any(ch in name for ch in "[];#\n\r")
        or name != name.strip()
        or not name.isprintable()
    ):
        raise WorkloadError(f"job {name!r}: the name cannot be written as a fio section header")
    if job.files != 1 and job.size_bytes == 0:
        raise WorkloadError(f"job {name!r}: files={job.files} over the whole target has no fio spelling (nrfiles "
                            "needs a size)")
    if job.sequential_cursor != "per_thread" and job.threads > 1 and job.random_fraction < 1:
        raise WorkloadError(f"job {name!r}: a shared sequential cursor has no fio spelling")
    if job.fsync_every and job.fsync_scope != "thread":
        raise WorkloadError(f"job {name!r}: fsync rounds over all files have no fio spelling")
    if job.total_ios:
        raise WorkloadError(f"job {name!r}: total_ios (a cap over all threads) has no fio spelling")
    lines = [f"[{name}]"]
    read_percent = _whole_percent(job, "read_fraction", job.read_fraction)
    random_percent = _whole_percent(job, "random_fraction", job.random_fraction)
    smallest = min(size for size, _ in job.block_sizes)
    # A random mode is needed for a non-default alignment even when no I/O is random.
    random = random_percent > 0 or job.block_align_bytes != smallest
    prefix = "rand" if random else ""
    if read_percent == 100:
        lines.append(f"rw={prefix}read")
    elif read_percent == 0:
        lines.append(f"rw={prefix}write")
    else:
        lines.append(f"rw={prefix}rw")
        lines.append(f"rwmixread={read_percent}")
    if random and random_percent != 100:
        lines.append(f"percentage_random={random_percent}")
    if len(job.block_sizes) == 1:
        lines.append(f"bs={_size_text(job.block_sizes[0][0])}")
    else:
        lines.append("bssplit=" + ":".join(f"{_size_text(s)}/{w}" for s, w in job.block_sizes))
    if job.block_align_bytes != smallest:
        lines.append(f"blockalign={_size_text(job.block_align_bytes)}")
    if job.iodepth > 1:
        lines.append("ioengine=libaio")
        lines.append(f"iodepth={job.iodepth}")
    if job.threads > 1:
        lines.append(f"numjobs={job.threads}")
    if job.offset_bytes:
        lines.append(f"offset={_size_text(job.offset_bytes)}")
    if job.size_bytes:
        lines.append(f"size={_size_text(job.size_bytes)}")
    if job.io_bytes:
        lines.append(f"io_size={_size_text(job.io_bytes)}")
    if job.runtime_ns:
        lines.append(f"runtime={_time_text(job, 'runtime_ns', job.runtime_ns)}")
    if job.time_based:
        lines.append("time_based")
    if job.ramp_ns:
        lines.append(f"ramp_time={_time_text(job, 'ramp_ns', job.ramp_ns)}")
    if job.number_ios:
        lines.append(f"number_ios={job.number_ios}")
    if job.steady_state is not None:
        metric, limit, percent, duration_ns, ramp_ns = job.steady_state
        lines.append(f"ss={metric}:{limit!r}{'%' if percent else ''}")
        lines.append(f"ss_dur={_time_text(job, 'ss_dur', duration_ns)}")
        if ramp_ns:
            lines.append(f"ss_ramp={_time_text(job, 'ss_ramp', ramp_ns)}")
    dist = job.distribution
    if dist.kind != "uniform":
        lines.append(f"random_distribution={dist.kind}:{dist.value!r}")
    if job.rate_iops:
        if read_percent in (0, 100):
            lines.append(f"rate_iops={job.rate_iops}")
        else:
            reads = job.rate_iops * read_percent
            if reads % 100:
                raise WorkloadError(
                    f"job {name!r}: rate_iops={job.rate_iops} does not split into whole read and write "
                    f"caps at {read_percent}% reads"
                )
            lines.append(f"rate_iops={reads // 100},{job.rate_iops - reads // 100}")
    if job.arrival != "linear":
        lines.append(f"rate_process={job.arrival}")
    if job.fsync_every:
        lines.append(f"{job.fsync_kind}={job.fsync_every}")
    if job.fsync_end:
        lines.append("end_fsync=1")
    if job.direct:
        lines.append("direct=1")
    elif not job.invalidate:
        lines.append("invalidate=0")
    return lines + fio_stream.render(job)


def render_fio(workload: Workload) -> str:
    """A fio-3.33 job file that :func:`parse_fio` reads back to the same jobs.

    Raises :class:`WorkloadError` for specs fio cannot express (several files, a shared
    sequential cursor, fsync rounds over all files, a total event cap, fractions that are not
    whole percentages). The target (``filename=``) is left for the caller to add.
    """
    blocks = []
    for job in workload.jobs:
        blocks.append("\n".join(_render_job(job)))
    return "\n\n".join(blocks) + "\n"
