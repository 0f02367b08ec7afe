"""Reading the files a user names: the one reader every command uses.

Every file raidlab reads on a user's behalf (fio job files, drive and designs TOML files, DiskSim
configurations and traces, sfdisk and fio JSON, calibration sweeps) goes through
:func:`read_bytes`, so every kind of input gets the same guarantees:

- only a regular file is read: a directory, a character or block device (``/dev/zero``), a FIFO
  or a socket is refused from its ``stat`` before it is opened, so nothing blocks and no device
  is touched; the file is then opened with ``O_NONBLOCK`` and checked again through ``fstat``
  (it may have been swapped between the two calls);
- its size is capped per kind (:data:`LIMITS`); at most ``limit + 1`` bytes are read, so an
  input that grows while it is read ends too;
- text is strict UTF-8. fio itself reads job files as bytes (``fgets`` in ``init.c``) and only
  ASCII matters to its parser, but raidlab copies the job text into its JSON reports, which are
  UTF-8, so a file that is not UTF-8 is refused in one line naming the byte and its offset
  rather than decoded by guesswork;
- JSON and TOML documents are parsed with their nesting capped (:data:`MAX_NESTING`), so a
  deeply nested document is a one-line error rather than a ``RecursionError``.

Every refusal is a :class:`~raidlab.errors.ConfigError` (exit status 2) on one line.

While a command line runs (:func:`collecting_inputs`), every file read is noted
(:func:`note_input`), and :mod:`raidlab.outputs` never lets an output of the command replace one.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import stat
import sys
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from raidlab.errors import ConfigError
from raidlab.workload.units import decode_utf8

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on old Pythons
    import tomli as tomllib

_MIB = 1 << 20

#: Largest file accepted, per kind of input, in bytes. Real inputs are far smaller (a fio job
#: file is a few KiB, DiskSim's validation traces about 0.5 MB, fio's JSON of a long run with
#: ``--status-interval`` a few MB); the caps only stop runaway inputs.
LIMITS: Dict[str, int] = {
    "fio job file": 16 * _MIB,
    "drive file": 1 * _MIB,
    "designs file": 1 * _MIB,
    "DiskSim file": 16 * _MIB,
    "DiskSim trace": 64 * _MIB,
    "sfdisk dump": 16 * _MIB,
    "fio JSON": 64 * _MIB,
    "calibration sweep": 16 * _MIB,
    "sysfs attribute": 1 * _MIB,
    # raidlab sweep: a grid of a few hundred axis values is a few KiB
    "sweep file": 1 * _MIB,
    "controller file": 1 * _MIB,
    # a sweep store's own files (raidlab.sweep.storefiles): its mark is a few lines; a row file
    # holds at most grid.MAX_POINTS rows of about 50 columns, a few MB compressed
    "sweep store mark": 1 * _MIB,
    "sweep row file": 256 * _MIB,
}

#: (label, path) of each input the running command has read or was given; None while no command
#: line runs (the Python API notes none). A context variable: each thread starts with none.
_READ: "contextvars.ContextVar[Optional[List[Tuple[str, str]]]]" = contextvars.ContextVar(
    "raidlab_inputs_read", default=None)


@contextlib.contextmanager
def collecting_inputs() -> Iterator[None]:
    """Notes the inputs read inside the block (one command line's run); inside a block already
    noting them, the outer one goes on noting them."""
    if _READ.get() is not None:
        yield
        return
    token = _READ.set([])
    try:
        yield
    finally:
        _READ.reset(token)


def inputs_read() -> List[Tuple[str, str]]:
    """(label, path) of every input file the running command has read or was given (none
    outside a command line). :func:`read_bytes` notes each file it reads here."""
    read = _READ.get()
    return read if read is not None else []


def note_input(path: Union[str, "os.PathLike[str]"], label: str) -> None:
    """Notes that the running command reads ``path`` (so no output may replace it)."""
    read = _READ.get()
    if read is not None:
        read.append((label, os.fspath(path)))


#: Deepest nesting of arrays/objects (JSON) or arrays/tables (TOML) accepted. sfdisk's and
#: fio's documents nest about six levels; Python's own recursion limit is about 1000.
MAX_NESTING = 64

_KINDS_OF_FILE = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def path_argument(value: Any, what: str) -> str:
    """A path the Python API was given, as text: a ``str`` or an ``os.PathLike`` naming a text
    path; anything else (None, a number, bytes, a list) is a ConfigError naming ``what``."""
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(text, str) or not text or "\0" in text:
        raise ConfigError(f"{what} must be a path (a non-empty str or os.PathLike), got {_short(value)}")
    return text


#: The settings of a sweep or designs file that may name a file, and whether a value names one
#: (not a preset, not job text): a drive or controller FILE.toml / DiskSim file, a fio job file.
FILE_SETTINGS: Dict[str, Callable[[str], bool]] = {
    "drive": lambda value: value.endswith((".toml", ".parv", ".diskspecs")),
    "controller": lambda value: value.endswith(".toml"),
    "fio": lambda value: "\n" not in value,
}


def beside(key: str, value: Any, base: Optional[str]) -> Any:
    """A file that a sweep or designs file in directory ``base`` names relative to itself is read
    from beside it, always: a file of the same name in the working directory is never read instead."""
    if base is None or key not in FILE_SETTINGS or not isinstance(value, str) or not FILE_SETTINGS[key](value) \
            or os.path.isabs(value):
        return value
    return os.path.join(base, value)


def show_path(path: Union[str, "os.PathLike[str]"], limit: int = 200) -> str:
    """A path as it may appear in a one-line message: printable and bounded."""
    text = os.fspath(path)
    if not isinstance(text, str):
        text = os.fsdecode(text)
    if any(not ch.isprintable() for ch in text):
        text = repr(text)[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _not_regular(mode: int) -> Optional[str]:
    if stat.S_ISREG(mode):
        return None
    for test, what in _KINDS_OF_FILE:
        if test(mode):
            return what
    return "not a regular file"


def _refuse(kind: str, path: Any, why: str, error: type = ConfigError) -> Exception:
    return error(f"cannot read {kind} {show_path(path)}: {why}")


def read_bytes(path: Union[str, "os.PathLike[str]"], kind: str, error: type = ConfigError,
               record: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``LIMITS[kind]`` of them. Refusals
    are ``error`` (a :class:`~raidlab.errors.RaidlabError` subclass). ``record``: the file is a
    user's input that no output may replace (raidlab's own working files, such as a sweep
    store's rows, are not)."""
    limit = LIMITS[kind]

    def refuse(why: str) -> Exception:
        return _refuse(kind, path, why, error)

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        what = _not_regular(os.stat(path).st_mode)
        descriptor = os.open(path, flags) if what is None else -1
    except OSError as failure:
        raise refuse(failure.strerror or str(failure)) from None
    except ValueError:  # an embedded NUL
        raise refuse("the path contains a NUL byte") from None
    if what is not None:
        raise refuse(f"it is {what}, not a regular file")
    with os.fdopen(descriptor, "rb") as handle:
        what = _not_regular(os.fstat(handle.fileno()).st_mode)
        if what is not None:
            raise refuse(f"it is {what}, not a regular file")
        try:
            data = handle.read(limit + 1)
        except OSError as failure:
            raise refuse(failure.strerror or str(failure)) from None
    if len(data) > limit:
        raise refuse(f"it is larger than the {limit // _MIB} MiB limit for a {kind}")
    if record:  # outputs never replace an input
        note_input(path, f"the {kind} {show_path(path)}")
    return data


def decode(data: bytes, what: str, error: type = ConfigError) -> str:
    """``data`` as UTF-8 text, or a one-line ``error`` naming the first bad byte and its offset."""
    return decode_utf8(data, what, error)


def read_text(path: Union[str, "os.PathLike[str]"], kind: str, error: type = ConfigError) -> str:
    """The UTF-8 text of the regular file at ``path`` (see :func:`read_bytes`)."""
    return decode(read_bytes(path, kind, error), f"{kind} {show_path(path)}", error)


def read_stdin(kind: str) -> str:
    """Standard input as UTF-8 text, capped like a file of ``kind``."""
    limit = LIMITS[kind]
    stream = sys.stdin
    if stream is None:
        raise ConfigError(f"cannot read {kind} from stdin: there is no standard input")
    raw = getattr(stream, "buffer", None)
    try:
        data = raw.read(limit + 1) if raw is not None else stream.read(limit + 1)
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read {kind} from stdin: {error}") from None
    if len(data) > limit:
        raise ConfigError(f"{kind} on stdin is larger than the {limit // _MIB} MiB limit")
    return decode(data, f"{kind} on stdin") if isinstance(data, bytes) else data


def nesting(value: Any) -> int:
    """How deeply lists and dicts nest in ``value`` (iteratively, so any depth is safe)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            break
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return deepest


def _too_deep(what: str) -> ConfigError:
    return ConfigError(f"{what}: nested more than {MAX_NESTING} levels deep")


def _capped(load: Callable[[str], Any], text: str, what: str) -> Any:
    """``load(text)`` with its nesting capped (a parser's own recursion limit included)."""
    try:
        value = load(text)
    except RecursionError:
        raise _too_deep(what) from None
    if nesting(value) > MAX_NESTING:
        raise _too_deep(what)
    return value


def parse_json(text: str, what: str) -> Any:
    """A JSON document, with its nesting capped; errors name the line and column."""
    try:
        return _capped(json.loads, text, what)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{what}: not JSON ({error.msg} at line {error.lineno} column {error.colno})") from None


def parse_toml(text: str, what: str) -> Dict[str, Any]:
    """A TOML document, with its nesting capped."""
    try:
        return _capped(tomllib.loads, text, what)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{what}: {error}") from None


def read_toml(path: Union[str, "os.PathLike[str]"], kind: str) -> Dict[str, Any]:
    """The TOML document in the file at ``path``."""
    return parse_toml(read_text(path, kind), f"{kind} {show_path(path)}")


def finite_number(value: Any, where: str, minimum: Optional[float] = None) -> float:
    """A number read from a file: an int or float (not a bool) that is finite and, when
    ``minimum`` is given, at least that. ``where`` names the field in the message."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where} must be a number, got {type(value).__name__} {_short(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise ConfigError(f"{where} is too large ({_short(value)})") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ConfigError(f"{where} must be a finite number, got {_short(value)}")
    if minimum is not None and number < minimum:
        raise ConfigError(f"{where} must be at least {minimum:g}, got {_short(value)}")
    return number


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
