"""sysbench fileio options → :class:`~raidlab.workload.spec.Workload`.

Read as sysbench 1.0.20 (Debian bookworm's version) reads them; sources: akopytov/sysbench tag
1.0.20 ``src/tests/fileio/sb_fileio.c``, ``src/sysbench.c``, ``src/sb_options.c``.

Accepted forms: a bare option string (``--file-test-mode=rndrw --threads=16``), or a whole
command line (``sysbench fileio --file-test-mode=rndrw run``, or the 0.4 form
``sysbench --test=fileio --num-threads=16 ... run``). Options are ``--name=value``; booleans may
stand alone (``--file-fsync-all``) or take on/off/true/false/1/0. ``-`` and ``_`` are the same
inside names (``opt_name_cmp``). The last occurrence of an option wins.

A command in sysbench 0.4's spelling (``--test=fileio``, or ``--num-threads``/``--max-requests``/
``--max-time`` without any of 1.0's ``--threads``/``--events``/``--time``) is read as sysbench 0.4
ran it: 0.4's defaults, ``--max-requests=10000`` and ``--max-time=0`` (no time limit; sysbench
0.4.12 ``sysbench/sysbench.c`` ``args[]``: ``{"max-requests", ..., "10000"}``, ``{"max-time",
..., "0"}``), so a pasted 0.4 benchmark runs its requests to the end. A command that
mixes the spellings is read as 1.0.20 reads it: the 0.4 names are deprecated aliases that win
when set (``--num-threads`` only when above 1, the others when above 0), with 1.0.20's defaults
(``--time=10``, ``--events=0``).

How the spec models a run (``file_get_seq_request`` / ``file_get_rnd_request``):

- ``--file-num`` files of ``--file-total-size / --file-num`` bytes each (integer division), laid
  end to end in the region; ``files`` = the file count.
- Sequential modes (seqwr, seqrewr, seqrd): one cursor shared by all threads walks file 0 .. N-1
  and wraps (``sequential_cursor="shared"``); requests are ``--file-block-size`` ×
  ``--file-merged-requests`` (when above 0), clipped at the end of each file.
- Random modes (rndrd, rndwr, rndrw): offsets uniform over the whole set, rounded down to the
  block size; sysbench has no random map and uses the uniform generator whatever
  ``--rand-type`` says.
- rndrw: a request is a read while (reads+1)/(writes+1) < ``--file-rw-ratio``, so the long-run
  read share is r/(1+r) (1.5 → 0.6). The exact alternation is deterministic in sysbench; the spec
  keeps only the share.
- ``--file-fsync-freq=N``: after every N requests (reads included, over all threads), if
  anything was written, a round of one fsync per file over all files
  (``fsync_scope="all_files"``). ``--file-fsync-all``: every write is followed by a sync of its
  file, and ``--file-fsync-freq`` and ``--file-fsync-end`` are off (``fsync_scope="thread"``,
  ``fsync_every=1``). ``--file-fsync-end`` (default on) syncs all files at the end, except in
  the read-only modes. Read-only modes never sync.
- ``--file-io-mode=async`` keeps ``--file-async-backlog`` (128) requests in flight per thread;
  ``sync`` keeps one. ``mmap`` (page-cache copies and msync) is not modelled and refused.
- Without ``--file-extra-flags=direct`` sysbench opens its files without O_DIRECT, so its I/O
  goes through the host's page cache (``direct=False``; buffered, through the simulated page cache); with it,
  O_DIRECT bypasses the cache.
- ``--time`` (10 s) → ``runtime_ns`` with ``time_based``; ``--events`` → ``total_ios`` (every
  event counts, fsyncs included); both 0 would never end and is refused.
"""

from __future__ import annotations

import shlex
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from raidlab.workload.spec import SECTOR_BYTES, Distribution, Job, Workload, WorkloadError
from raidlab.workload.units import (
    decode_utf8,
    human_bytes,
    show,
    sysbench_float,
    sysbench_int,
    sysbench_size,
)

__all__ = ["parse_sysbench", "SUPPORTED_OPTIONS", "IGNORED_OPTIONS", "TEST_MODES"]

#: --file-test-mode values (sb_fileio.c file_prepare/file_init).
TEST_MODES = ("seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw")

# option -> value type, for the options raidlab models.
_MODELLED: Dict[str, str] = {
    "file-test-mode": "str",
    "file-num": "int",
    "file-block-size": "size",
    "file-total-size": "size",
    "file-io-mode": "str",
    "file-async-backlog": "int",
    "file-extra-flags": "list",
    "file-fsync-freq": "int",
    "file-fsync-all": "bool",
    "file-fsync-end": "bool",
    "file-fsync-mode": "str",
    "file-merged-requests": "int",
    "file-rw-ratio": "float",
    "threads": "int",
    "num-threads": "int",
    "events": "int",
    "max-requests": "int",
    "time": "int",
    "max-time": "int",
    "warmup-time": "int",  # sysbench master (1.1-dev); 1.0.20 does not know it
    "rate": "int",
    "tx-rate": "int",
    "test": "str",
}

# Options that change reports, seeding or checking, not the I/O raidlab models.
_IGNORED: Dict[str, str] = {
    "report-interval": "int",
    "report-checkpoints": "list",
    "percentile": "int",
    "histogram": "bool",
    "verbosity": "int",
    "debug": "bool",
    "validate": "bool",
    "forced-shutdown": "str",
    "thread-stack-size": "size",
    "rand-type": "str",  # fileio offsets are uniform whatever it says (file_get_rnd_request in sb_fileio.c)
    "rand-seed": "int",
    "rand-spec-iter": "int",
    "rand-spec-pct": "int",
    "rand-spec-res": "int",
    "rand-pareto-h": "float",
    "rand-init": "bool",  # 0.5
    "init-rng": "bool",  # 0.4
}

#: Options raidlab reads and models.
SUPPORTED_OPTIONS = tuple(_MODELLED)
#: Options accepted (and type-checked) without effect.
IGNORED_OPTIONS = tuple(_IGNORED)

# 1.0.20 defaults: fileio_args in sb_fileio.c, general_args in sysbench.c.
_DEFAULTS = {
    "file-num": "128",
    "file-block-size": "16384",
    "file-total-size": "2G",
    "file-io-mode": "sync",
    "file-async-backlog": "128",
    "file-extra-flags": "",
    "file-fsync-freq": "100",
    "file-fsync-all": "off",
    "file-fsync-end": "on",
    "file-fsync-mode": "fsync",
    "file-merged-requests": "0",
    "file-rw-ratio": "1.5",
    "threads": "1",
    "num-threads": "1",
    "events": "0",
    "max-requests": "0",
    "time": "10",
    "max-time": "0",
    "warmup-time": "0",
    "rate": "0",
    "tx-rate": "0",
}

_TRUE = ("on", "true", "1")
_FALSE = ("off", "false", "0")


def _tokens(text: Union[str, bytes, Sequence[str]]) -> Tuple[List[str], str]:
    if isinstance(text, bytes):
        text = decode_utf8(text, "the sysbench option string", WorkloadError)
    if isinstance(text, str):
        try:
            tokens = shlex.split(text.replace("\\\n", " "), posix=True)
        except ValueError as error:
            raise WorkloadError(f"cannot split the sysbench options: {error}") from None
        return tokens, text
    if isinstance(text, Sequence) and all(isinstance(token, str) for token in text):
        return list(text), shlex.join(text)
    raise WorkloadError("sysbench options must be a string or a list of strings")


def _bool(name: str, value: Optional[str]) -> bool:
    if value is None or value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise WorkloadError(f"invalid value for --{name}: {show(value)!r} (use on or off)")


def _check_type(name: str, kind: str, value: Optional[str]) -> None:
    """Type-checks one value the way sysbench would read it (raises WorkloadError)."""
    if kind == "bool":
        _bool(name, value)
        return
    if value is None or value == "":
        example = {"int": "N", "size": "16K", "float": "1.5", "str": "...", "list": "a,b"}[kind]
        raise WorkloadError(f"--{name} needs a value (--{name}={example})")
    if kind == "int":
        sysbench_int(name, value)
    elif kind == "size":
        sysbench_size(name, value)
    elif kind == "float":
        sysbench_float(name, value)


def _read_options(tokens: List[str]) -> Tuple[Dict[str, Optional[str]], List[str]]:
    """(``--name[=value]`` options by name, the other words), each option's value type checked."""
    values: Dict[str, Optional[str]] = {}
    positional: List[str] = []
    for token in tokens:
        if not token.startswith("--"):
            if token.startswith("-") and token != "-":
                raise WorkloadError(f"sysbench option {show(token)!r} must start with -- (e.g. --threads=16)")
            positional.append(token)
            continue
        name, has_value, value = token[2:].partition("=")
        name = name.replace("_", "-")
        if not name:
            raise WorkloadError(f"sysbench option {show(token)!r} has no name")
        if name in ("help", "version"):
            raise WorkloadError(f"--{name} prints text and runs nothing; raidlab needs the 'run' options")
        if name == "config-file":
            raise WorkloadError("--config-file is not supported; give its options on the command line")
        if (_MODELLED.get(name) or _IGNORED.get(name)) is None:
            raise WorkloadError(
                f"invalid sysbench option {show(token)!r} (raidlab supports: "
                + ", ".join(f"--{option}" for option in SUPPORTED_OPTIONS)
                + ")"
            )
        values[name] = value if has_value else None
    for name, value in values.items():
        _check_type(name, _MODELLED.get(name) or _IGNORED[name], value)
    return values, positional


def _check_command(values: Dict[str, Optional[str]], positional: List[str]) -> None:
    """The test must be fileio and the command run (``[TEST] [COMMAND]`` or ``--test=``)."""
    test = values.get("test")
    if positional and positional[0] not in ("run", "prepare", "cleanup", "help"):
        test = positional.pop(0)
    command = positional.pop(0) if positional else None
    if positional:
        raise WorkloadError(f"Unrecognized command line argument: {show(positional[0])}")
    if test is not None and test != "fileio":
        raise WorkloadError(f"raidlab reads the sysbench fileio test only, not {show(test)!r}")
    if command is not None and command != "run":
        if command in ("prepare", "cleanup", "help"):
            raise WorkloadError(
                f"'sysbench fileio {command}' is not a workload to simulate; give the options of 'run'"
            )
        raise WorkloadError(f"unknown sysbench command {show(command)!r} (expected run)")


def _dialect(values: Dict[str, Optional[str]], notes: List[str]) -> bool:
    """Whether the options are sysbench 0.4's (then its defaults are filled in), with a note on
    the deprecated spellings read."""
    deprecated = [name for name in ("num-threads", "max-requests", "max-time", "tx-rate") if name in values]
    dialect_04 = ("test" in values or bool(deprecated)) and not any(
        name in values for name in ("threads", "events", "time", "rate"))
    if dialect_04:
        notes.append("read " + ", ".join(f"--{name}" for name in deprecated or ["test"])
                     + " as sysbench 0.4 does, with 0.4's defaults --max-requests=10000 and --max-time=0 "
                     "(no time limit)")
        values.setdefault("max-requests", "10000")
        values.setdefault("time", "0")
    elif deprecated:
        notes.append(
            "read " + ", ".join(f"--{name}" for name in deprecated) + " as sysbench 1.0.20 does "
            "(deprecated aliases with 1.0 defaults: --time=10, --events=0)"
        )
    return dialect_04


def _run_length(get: Callable[[str], str]) -> Tuple[int, int, int, int]:
    """(threads, events, seconds, warmup seconds); sysbench.c init(): a deprecated alias wins
    when it is set above its default."""
    old_threads = sysbench_int("num-threads", get("num-threads"))
    threads = old_threads if old_threads > 1 else sysbench_int("threads", get("threads"))
    if threads <= 0:
        raise WorkloadError(f"Invalid value for --threads: {threads}.")
    old_events = sysbench_int("max-requests", get("max-requests"))
    events = old_events if old_events > 0 else sysbench_int("events", get("events"))
    old_time = sysbench_int("max-time", get("max-time"))
    seconds = old_time if old_time > 0 else sysbench_int("time", get("time"))
    if events < 0:
        raise WorkloadError(f"Invalid value for --events: {events}.")
    if seconds < 0:
        raise WorkloadError(f"Invalid value for --time: {seconds}.")
    if events == 0 and seconds == 0:
        raise WorkloadError(
            "both --time and --events are 0, so sysbench would run an endless test; set one of them"
        )
    warmup = sysbench_int("warmup-time", get("warmup-time"))
    if warmup < 0:
        raise WorkloadError(f"Invalid value for --warmup-time: {warmup}.")
    old_rate = sysbench_int("tx-rate", get("tx-rate"))
    rate = old_rate if old_rate > 0 else sysbench_int("rate", get("rate"))
    if rate:
        raise WorkloadError(
            "--rate (open-loop events through one queue shared by all threads) is not modelled; "
            "drop it for a closed-loop run"
        )
    return threads, events, seconds, warmup


def _file_set(values: Dict[str, Optional[str]], get: Callable[[str], str]) -> Dict[str, Any]:
    """The files and the test mode, read as sb_fileio.c file_prepare() does, in its order."""
    files = sysbench_int("file-num", get("file-num"))
    if files <= 0:
        raise WorkloadError(f"Invalid value for file-num: {files}")
    total = sysbench_size("file-total-size", get("file-total-size"))
    if total <= 0:
        raise WorkloadError(f"Invalid value for file-total-size: {total}")
    mode = values.get("file-test-mode")
    if mode is None:
        raise WorkloadError("Missing required argument: --file-test-mode (one of " + ", ".join(TEST_MODES) + ")")
    if mode not in TEST_MODES:
        raise WorkloadError(f"Invalid IO operations mode: {show(mode)} (expected one of {', '.join(TEST_MODES)})")
    io_mode = get("file-io-mode")
    if io_mode in ("mmap", "fastmmap", "slowmmap"):
        raise WorkloadError(
            f"--file-io-mode={io_mode} (copies through a memory mapping, msync instead of fsync) is not modelled; "
            "use sync or async"
        )
    if io_mode not in ("sync", "async"):
        raise WorkloadError(f"unknown I/O mode: {show(io_mode)} (expected sync or async)")
    merged = sysbench_int("file-merged-requests", get("file-merged-requests"))
    if merged < 0:
        raise WorkloadError(f"Invalid value for file-merged-requests: {merged}.")
    block = sysbench_size("file-block-size", get("file-block-size"))
    if block <= 0:
        raise WorkloadError(f"Invalid value for file-block-size: {block}.")
    if block % SECTOR_BYTES:
        raise WorkloadError(f"--file-block-size={show(get('file-block-size'))} is not a multiple of {SECTOR_BYTES}")
    return dict(files=files, total=total, file_size=total // files, mode=mode, io_mode=io_mode, merged=merged,
                block=block, direct="direct" in _extra_flags(get))


def _extra_flags(get: Callable[[str], str]) -> List[str]:
    flags = [flag for flag in get("file-extra-flags").split(",") if flag]  # strtok skips empty items
    for flag in flags:
        if flag in ("sync", "dsync"):
            raise WorkloadError(
                f"--file-extra-flags={flag} (O_{flag.upper()} writes) is not modelled; "
                "use --file-fsync-all with --file-fsync-mode=fdatasync"
            )
        if flag != "direct":
            raise WorkloadError(f"Invalid value for file-extra-flags: {show(flag)} (expected direct)")
    return flags


def _syncs(get: Callable[[str], str]) -> Tuple[int, bool, bool, str]:
    """(--file-fsync-freq, --file-fsync-end, --file-fsync-all, --file-fsync-mode)."""
    freq = sysbench_int("file-fsync-freq", get("file-fsync-freq"))
    if freq < 0:
        raise WorkloadError(f"Invalid value for file-fsync-freq: {freq}.")
    fsync_end = _bool("file-fsync-end", get("file-fsync-end"))
    fsync_all = _bool("file-fsync-all", get("file-fsync-all"))
    fsync_mode = get("file-fsync-mode")
    if fsync_mode not in ("fsync", "fdatasync"):
        raise WorkloadError(f"Invalid fsync mode: {show(fsync_mode)}. (expected fsync or fdatasync)")
    return freq, fsync_end, fsync_all, fsync_mode


def _check_file_size(fileset: Dict[str, Any], notes: List[str]) -> None:
    files, total, file_size, block = fileset["files"], fileset["total"], fileset["file_size"], fileset["block"]
    if file_size == 0:
        raise WorkloadError(f"--file-total-size={human_bytes(total)} leaves nothing for each of {files} files")
    if file_size % SECTOR_BYTES:
        raise WorkloadError(
            f"each file would be {file_size} bytes (--file-total-size / --file-num), not a multiple of {SECTOR_BYTES}"
        )
    if block > file_size:
        raise WorkloadError(
            f"--file-block-size={human_bytes(block)} is larger than each file ({human_bytes(file_size)})"
        )
    if file_size * files != total:
        notes.append(
            f"--file-total-size is not a multiple of --file-num: each file is {file_size} bytes and the last "
            f"{total - file_size * files} bytes are left out"
        )


def _depth(fileset: Dict[str, Any], get: Callable[[str], str], notes: List[str]) -> int:
    """1 in sync mode; --file-async-backlog I/Os in flight in async mode."""
    if fileset["io_mode"] != "async":
        return 1
    backlog = sysbench_int("file-async-backlog", get("file-async-backlog"))
    if backlog <= 0:
        raise WorkloadError(f"Invalid value for file-async-backlog: {backlog}")
    if backlog > 65536:
        raise WorkloadError(f"--file-async-backlog={backlog} is more than raidlab's limit of 65536")
    # sb_fileio.c file_submit_or_wait (sysbench 0.4 and 1.0.20 alike): return after io_submit
    # unless the backlog is full, then io_getevents for one completion.
    notes.append("sysbench async mode: an event ends when io_submit returns, or after one completion once "
                 "--file-async-backlog requests are in flight (sysbench's sb_fileio.c file_submit_or_wait), "
                 "so its event latency is mostly submission time")
    return backlog


def _job(fileset: Dict[str, Any], run_length: Tuple[int, int, int, int], syncs: Tuple[int, bool, bool, str],
         read_fraction: float, iodepth: int) -> Job:
    threads, events, seconds, warmup = run_length
    freq, fsync_end, fsync_all, fsync_mode = syncs
    mode, block, merged = fileset["mode"], fileset["block"], fileset["merged"]
    random = mode.startswith("rnd")
    if fsync_all:
        fsync_every, scope, end = 1, "thread", False
    else:
        fsync_every, scope, end = freq, "all_files", fsync_end
    if read_fraction == 1.0:  # nothing is written, so nothing is synced
        fsync_every, end = 0, False
    try:
        return Job(
            name=f"sysbench-{mode}", threads=threads, iodepth=iodepth, read_fraction=read_fraction,
            random_fraction=1.0 if random else 0.0,
            block_sizes=((block * merged if (merged > 0 and not random) else block, 100),),
            offset_bytes=0, size_bytes=fileset["file_size"] * fileset["files"], files=fileset["files"],
            sequential_cursor="shared", distribution=Distribution(), rate_iops=0, arrival="linear",
            fsync_every=fsync_every, fsync_kind=fsync_mode, fsync_scope=scope, fsync_end=end,
            runtime_ns=seconds * 10**9, ramp_ns=warmup * 10**9, time_based=seconds > 0, number_ios=0,
            total_ios=events, io_bytes=0, direct=fileset["direct"], block_align_bytes=block,
        )
    except WorkloadError as error:
        raise WorkloadError(f"sysbench {error}") from None


def parse_sysbench(text: Union[str, bytes, Sequence[str]]) -> Workload:
    """Reads sysbench fileio options (or a whole ``sysbench fileio ... run`` line).

    >>> parse_sysbench("--file-test-mode=rndrw --file-rw-ratio=1.5 --threads=16").jobs[0].read_fraction
    0.6
    """
    tokens, source = _tokens(text)
    if tokens and (tokens[0] == "sysbench" or tokens[0].endswith("/sysbench")):
        tokens = tokens[1:]
    if not tokens:
        raise WorkloadError("sysbench options are empty (expected e.g. --file-test-mode=rndrw)")
    values, positional = _read_options(tokens)
    _check_command(values, positional)

    def get(name: str) -> str:
        value = values.get(name)
        if name in values and value is None:
            return "on"  # a bare boolean
        return value if value is not None else _DEFAULTS[name]

    notes: List[str] = []
    percentile = _percentile(values, _dialect(values, notes))
    run_length = _run_length(get)
    fileset = _file_set(values, get)
    syncs = _syncs(get)
    ratio = sysbench_float("file-rw-ratio", get("file-rw-ratio"))
    _check_file_size(fileset, notes)
    mode = fileset["mode"]
    read_fraction = {"seqrd": 1.0, "rndrd": 1.0, "rndrw": ratio / (1.0 + ratio)}.get(mode, 0.0)
    job = _job(fileset, run_length, syncs, read_fraction, _depth(fileset, get, notes))
    # --report-interval=N: the per-interval lines sysbench prints (0 = none).
    interval = int(values.get("report-interval") or 0)
    return Workload((job,), "sysbench", source, tuple(notes), report_interval_s=interval, percentile=percentile)


def _percentile(values: Dict[str, Optional[str]], dialect_04: bool) -> int:
    """``--percentile`` as sysbench reads it (default 95). sysbench 1.0.20 takes 0 to 100, 0
    turning percentiles off, and refuses ``--histogram`` with 0 (src/sb_logger.c
    ``oper_handler_init``); sysbench 0.4 takes 1 to 100 (sysbench/sb_logger.c
    ``oper_handler_init``, "Invalid value for percentile option"). The wording is theirs."""
    value = values.get("percentile")
    percentile = 95 if value is None else sysbench_int("percentile", value)
    if dialect_04 and not 1 <= percentile <= 100:
        raise WorkloadError(f"Invalid value for percentile option: {percentile}")
    if not 0 <= percentile <= 100:
        raise WorkloadError(f"Invalid value for --percentile: {percentile}")
    if percentile == 0 and "histogram" in values and _bool("histogram", values["histogram"]):
        raise WorkloadError("--histogram cannot be used with --percentile=0")
    return percentile
