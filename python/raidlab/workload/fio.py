"""fio job files → :class:`~raidlab.workload.spec.Workload`, and back.

The reader follows fio-3.33, the version in Debian bookworm (packages.debian.org/bookworm/fio;
source: axboe/fio tag fio-3.33, ``init.c`` ``__parse_jobs_ini``, ``parse.c``, ``options.c``,
``io_u.c``). What each option does is one table, :mod:`raidlab.workload.fio_options`; how each
value is read is :mod:`raidlab.workload.fio_values`.

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
  values; a single value applies to every direction (fio copies it). A job that does both
  reads and writes may give them different sizes (the writes draw from their own mix), but
  one ``blockalign`` and one ``percentage_random``, because the spec has one of each.
- ``bssplit``'s grammar and rounding: see :mod:`raidlab.workload.fio_values`.
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
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

from raidlab.workload import fio_options, fio_stream
from raidlab.workload.fio_engines import ASYNC_ENGINES, DEFAULT_ENGINE, SYNC_ENGINES
from raidlab.workload.fio_values import MAX_NAME, need, where as _where
from raidlab.workload.spec import Distribution, Job, Workload, WorkloadError
from raidlab.workload.units import MAX_INT, decode_utf8, human_bytes, show

__all__ = [
    "parse_fio",
    "render_fio",
    "SUPPORTED_OPTIONS",
    "IGNORED_OPTIONS",
    "ACCEPTED_OPTIONS",
    "SYNC_ENGINES",
    "ASYNC_ENGINES",
]

#: Options raidlab reads and models, by canonical name (from the one option table).
SUPPORTED_OPTIONS = tuple(o.name for o in fio_options.TABLE if o.status == fio_options.MODELLED)
#: Options accepted without effect on the simulated I/O, by canonical name.
IGNORED_OPTIONS = tuple(o.name for o in fio_options.TABLE if o.status == fio_options.NO_EFFECT)
#: Every job option name raidlab accepts (modelled, accepted without effect, or an alias of one):
#: the one list the unknown-option error draws its "did you mean" from and ``raidlab
#: fio-options`` prints.
ACCEPTED_OPTIONS = fio_options.ACCEPTED
#: Where the unknown-option error sends the user for the whole list.
OPTION_LIST_COMMAND = "raidlab fio-options"

_READ, _WRITE = 0, 1


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


def _section_header(line: str, number: int) -> _Section:
    if not line.endswith("]") or len(line) < 3:
        raise WorkloadError(f"{_where(number)}: bad section header {show(line)!r} (expected [name])")
    name = line[1:-1].strip()
    if not name or "[" in name or "]" in name:
        raise WorkloadError(f"{_where(number)}: bad section header {show(line)!r} (expected [name])")
    if len(name) > MAX_NAME:
        raise WorkloadError(f"{_where(number)}: section name is longer than {MAX_NAME} characters")
    # init.c: global = !strncmp(name, "global", 6)
    return _Section(name, number, name.startswith("global"), [])


def _option_line(line: str, number: int) -> _Option:
    if "=" in line:
        name, value = line.split("=", 1)
        name, value = name.strip(), value.strip()
    else:
        name, value = line, None
    if not name:
        raise WorkloadError(f"{_where(number)}: {show(line)!r} has no option name")
    return _Option(name, fio_options.canonical(name), value, number)


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
            sections.append(_section_header(line, number))
            continue
        if line.startswith("include ") or line == "include":
            raise WorkloadError(f"{_where(number)}: include {fio_options.lookup('include').note}")
        if not sections:
            raise WorkloadError(f"{_where(number)}: option {show(line)!r} is outside of a [job] section")
        sections[-1].options.append(_option_line(line, number))
    return sections


def _unknown(option: _Option) -> WorkloadError:
    """The error for an option raidlab refuses or does not know."""
    name = option.name
    where = _where(option.line)
    known = fio_options.lookup(option.key)
    if known is not None and known.status == fio_options.REFUSED:
        return WorkloadError(f"{where}: fio option {name!r} {known.note}")
    if name in fio_options.CLI_ONLY or name.lstrip("-") in fio_options.CLI_ONLY:
        return WorkloadError(f"{where}: {show(name)!r} is a fio command-line option, not a job file option")
    close = difflib.get_close_matches(name, ACCEPTED_OPTIONS, n=3, cutoff=0.75)
    guess = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    return WorkloadError(
        f"{where}: unknown option {show(name)!r}{guess}; raidlab accepts {len(ACCEPTED_OPTIONS)} fio options, "
        f"listed by {OPTION_LIST_COMMAND}"
    )


class _JobBuilder:
    """Applies one job's options (defaults from [global] first) in order, as fio does."""

    def __init__(self, section: _Section, options: List[_Option]) -> None:
        self.section = section
        self.name = section.name
        self.options = options
        self.notes: List[str] = []
        # slot -> (value, option that set it)
        self.slots: Dict[str, Tuple[object, _Option]] = {}
        #: Every problem found: all of them are reported at once, each with its line.
        self.errors: List[str] = []
        #: Accepted options that do not change the simulated I/O (one note per file).
        self.no_effect: List[str] = []

    # -- per-option parsing -------------------------------------------------------------------

    def apply(self) -> None:
        kb_base = 1024
        for option in self.options:  # kb_base has prio 1 in fio's option table: parsed first
            if option.key == "kb_base":
                value = need(option)
                if value not in ("1024", "1000"):
                    raise WorkloadError(f"{_where(option.line)}: kb_base={show(value)} must be 1024 or 1000")
                kb_base = int(value)
        self.kb_base = kb_base
        for option in self.options:
            try:
                self._apply_one(option)
            except WorkloadError as error:
                self.errors.append(str(error))

    def store(self, slot: str, value: object, option: _Option) -> None:
        """Keeps what an option's parser read (the later option replaces the earlier)."""
        self.slots[slot] = (value, option)

    def _apply_one(self, option: _Option) -> None:
        """Parses one option as its record in the option table says."""
        record = fio_options.lookup(option.key)
        if record is None or record.status == fio_options.REFUSED:
            raise _unknown(option)
        problem = fio_options.enumerated_problem(record.name, option.name, option.value)
        if problem:
            raise WorkloadError(f"{_where(option.line)}: {problem}")
        if record.status == fio_options.NO_EFFECT and not record.quiet:
            self.no_effect.append(record.name)
        if record.parse is not None:
            record.parse(self, option)

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

    def _block_mix(self, active: Sequence[int], random: bool) -> Tuple[Tuple[Tuple[int, int], ...], int, int]:
        """(the reads' block size mix, the alignment, the largest size of any direction).

        bssplit wins over bs for a direction it covers (fixup_options). A job that reads and
        writes with different sizes (``bs=r,w``, ``bssplit=r,w``) draws its writes' sizes from
        their own mix, kept in ``write_sizes`` for the job's ``write_block_sizes``."""
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
        return block_sizes, align, largest

    def _depth(self) -> Tuple[int, bool]:
        """(iodepth, direct): a synchronous engine keeps one I/O in flight (backend.c's note)."""
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
        return iodepth, direct

    def _runtime(self) -> Tuple[int, bool]:
        runtime = self.get("runtime", 0)
        time_based = self.get("time_based", False)
        if time_based and not runtime:
            # fixup_options: "fio: time_based requires a runtime/timeout setting", then turns it off.
            self.notes.append(f"{self.name}: time_based without a runtime is ignored, as fio does")
            time_based = False
        return runtime, time_based

    def _syncs(self, read_fraction: float) -> Dict[str, object]:
        """The job's fsync fields from fsync, fdatasync, end_fsync and fsync_on_close."""
        fsync, fdatasync = self.get("fsync", 0), self.get("fdatasync", 0)
        if fsync and fdatasync:
            raise self.fail("fsync and fdatasync are both set; raidlab models one kind per job")
        # fsync_on_close: fio syncs the file when it closes it, at the end of the job's pass
        # (file close in td_io_close_file); raidlab's one file per job closes when the job ends.
        end_fsync = self.get("end_fsync", False) or self.get("fsync_on_close", False)
        if read_fraction == 1.0:
            fsync = fdatasync = 0  # should_fsync: nothing is written, so nothing is synced
            end_fsync = False
        return dict(fsync_every=fsync or fdatasync, fsync_kind="fdatasync" if fdatasync else "fsync",
                    fsync_scope="thread", fsync_end=end_fsync)

    def build(self) -> Job:
        """The job, from the slots its options filled (the core set here, the rest in
        :func:`fio_stream.finish`)."""
        rw = self.get("rw", "read")
        random = rw.startswith("rand")
        percent_read = self.get("rwmix", 50)
        read_fraction = {"read": 1.0, "randread": 1.0, "write": 0.0, "randwrite": 0.0}.get(rw, percent_read / 100)
        active = [d for d, share in ((_READ, read_fraction), (_WRITE, 1.0 - read_fraction)) if share > 0]
        block_sizes, align, largest = self._block_mix(active, random)
        random_fraction = self.per_direction("percentage_random", 100, active) / 100 if random else 0.0
        iodepth, direct = self._depth()
        size = self.get("size", 0)
        if size and size < largest:
            raise self.fail(f"size={human_bytes(size)} is smaller than the block size {human_bytes(largest)}")
        runtime, time_based = self._runtime()
        rate, read_fraction = self._rate(read_fraction, percent_read)
        kwargs = fio_stream.finish(self, dict(
            name=self.name, threads=self.get("numjobs", 1), iodepth=iodepth, read_fraction=read_fraction,
            random_fraction=random_fraction, block_sizes=block_sizes, offset_bytes=self.get("offset", 0),
            size_bytes=size, files=1, sequential_cursor="per_thread",
            distribution=self.get("random_distribution", Distribution()), rate_iops=rate,
            arrival=self.get("rate_process", "linear"), **self._syncs(read_fraction),
            runtime_ns=runtime, ramp_ns=self.get("ramp_time", 0), time_based=time_based,
            number_ios=self.get("number_ios", 0), total_ios=0, io_bytes=self.get("io_size", 0), direct=direct,
            block_align_bytes=align, steady_state=self._steady(), invalidate=self.get("invalidate", True),
        ))
        try:
            return Job(**kwargs)
        except WorkloadError as error:
            raise WorkloadError(f"fio {error}") from None


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


def _render_checks(job: Job) -> None:
    """Refuses a job whose spec fio cannot express."""
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


def _render_pattern(job: Job, read_percent: int) -> List[str]:
    """rw, the mixes, the block sizes and their alignment, the depth and the threads."""
    lines = []
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
    return lines


def _render_extent(job: Job) -> List[str]:
    """Where and how long: offset, size, io_size, runtime, ramp, I/O count, steady state."""
    lines = []
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
    return lines


def _render_pacing(job: Job, read_percent: int) -> List[str]:
    """The offset distribution, the IOPS cap, the arrivals, the syncs and the page cache."""
    lines = []
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
                    f"job {job.name!r}: rate_iops={job.rate_iops} does not split into whole read and write "
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
    return lines


def _render_job(job: Job) -> List[str]:
    _render_checks(job)
    read_percent = _whole_percent(job, "read_fraction", job.read_fraction)
    return ([f"[{job.name}]"] + _render_pattern(job, read_percent) + _render_extent(job)
            + _render_pacing(job, read_percent) + fio_stream.render(job))


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
