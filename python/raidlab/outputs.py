"""Every file raidlab writes goes through here, and only with the user's consent.

The rules, checked for every output option before a command does any work and
again at the moment each file is written:

- ``-`` is stdout and always allowed.
- A report is a regular file. Block and character devices, FIFOs and sockets are refused,
  whatever symlink leads to them (the type is read with ``os.stat``, which follows symlinks,
  before anything is opened, so a FIFO never blocks). Nothing is written under ``/dev``,
  ``/proc`` or ``/sys`` (a mistyped ``/dev/sdz1`` must not become a regular file there).
- The measured ``--target`` of ``measure``/``calibrate`` is never an output, and two outputs of
  one command are never the same file (compared by resolved path, and by ``(st_dev, st_ino)``
  when the file exists, so hard links count too).
- An existing non-empty file is replaced only when raidlab wrote it, or with ``--force``.
  "raidlab wrote it" is read from the file's contents (:func:`is_raidlab_output`):

  - JSON: a top-level object with a ``raidlab`` object (every JSON document raidlab writes has
    one: sim, compare, plan, measure, import, calibrate, and the fio JSON kept by ``measure
    --fio-output``); a list of such objects (``import --json`` of several files); or a top-level
    ``raidlab_version`` string (calibrate documents from before they carried the object).
  - HTML: ``<meta name="generator" content="raidlab`` in the first 64 KiB.
  - TOML (``calibrate --out``): the first line starts
    ``# raidlab drive model fitted by 'raidlab calibrate'``.
  - CSV (``compare --csv``): the header line is exactly :data:`COMPARE_CSV_COLUMNS`.
  - PNG: a ``tEXt`` chunk ``Software`` whose text starts ``raidlab``, ahead of the image data
    (written through matplotlib's ``metadata``; PNG spec 2nd ed. §11.3.4.2 lists ``Software``
    among the predefined keywords).
  - fio logs (``--log-prefix``): every line is ``msec, value, ddir, 0, 0`` and the set's
    ``PREFIX_rebuild.1.log`` exists with direction 2 on every line. fio's own logs share the
    line format (``bs`` is 0 with ``log_avg_msec``) but fio never names one ``_rebuild`` (its
    HOWTO: write_bw_log, write_lat_log, write_iops_log, write_hist_log give _bw, _lat, _slat,
    _clat, _iops, _clat_hist), so a user's fio logs are never taken for raidlab's.

  An empty existing regular file may be overwritten (nothing is lost).
- Writes are atomic: the bytes go to a new temporary file in the destination's directory
  (``O_CREAT|O_EXCL``, never following a symlink), are fsynced, and replace the destination
  with ``os.replace`` (rename(2): atomic within a file system), so a crash never leaves half a
  report and a write can never land inside a device node. A symlink to a regular file is
  followed: the file it names is replaced, the link stays.

Commands declare their outputs with :func:`raidlab.commands.consent.writes_files`, which also adds
``--force`` and holds the command's :class:`Consent` while it runs (:func:`consenting`); outside a
command (the Python API) every write has the default consent: no ``--force``.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from raidlab import _core
from raidlab.errors import ConfigError
from raidlab.inputs import inputs_read

__all__ = ["STDOUT", "Consent", "consenting", "check_file", "write_text", "write_bytes",
           "write_files", "make_directory", "figure_png", "is_raidlab_output", "under_kernel_tree"]

STDOUT = "-"
#: Kernel file systems: nothing raidlab writes belongs there.
KERNEL_TREES = ("/dev", "/proc", "/sys")
#: What ``--png`` charts carry in their ``Software`` text chunk.
PNG_SOFTWARE = f"raidlab {_core.__version__}"
_SNIFF_BYTES = 64 * 1024
#: A JSON file larger than this is not read to see whether raidlab wrote it (--force replaces it).
_JSON_LIMIT_BYTES = 64 * 1024 * 1024
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_HTML_MARK = b'<meta name="generator" content="raidlab'
_TOML_MARK = b"# raidlab drive model fitted by 'raidlab calibrate'"
_LOG_LINE = re.compile(rb"[0-9]+, -?[0-9]+, [012], 0, 0")
_REBUILD_LINE = re.compile(rb"[0-9]+, -?[0-9]+, 2, 0, 0")
#: The fio logs ``--log-prefix PREFIX`` writes, ``PREFIX_NAME.1.log`` each (raidlab.report.timeline).
LOG_NAMES = ("iops", "clat", "clat_p99", "rebuild")
#: compare --csv's header line (commands/compare.py writes it; a CSV starting so is raidlab's).
COMPARE_CSV_COLUMNS = ("design", "controller", "chunk_kib", "state", "workload", "iops", "mib_s",
                       "read_latency_ms_p50", "read_latency_ms_p99", "write_latency_ms_p50",
                       "write_latency_ms_p99", "capacity_bytes", "rebuild_hours", "basis")
Pathish = Union[str, os.PathLike]

def _refuse(option: str, path: Pathish, why: str) -> ConfigError:
    return ConfigError(f"refusing to write {option} {path}: {why}")


def under_kernel_tree(path: Pathish) -> bool:
    """True if ``path`` (as given, or once symlinks are resolved) is under /dev, /proc or /sys."""
    for candidate in (os.path.abspath(path), os.path.realpath(path)):
        if any(candidate == root or candidate.startswith(root + "/") for root in KERNEL_TREES):
            return True
    return False


def _special(mode: int) -> Optional[str]:
    """What a non-regular file is, or None for a regular file."""
    kinds = ((stat.S_ISBLK, "a block device"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISDIR, "a directory"))
    for test, name in kinds:
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def _stdout_hint(path: Pathish) -> str:
    shown = os.path.abspath(path)
    if shown in ("/dev/stdout", "/dev/stderr") or shown.startswith(("/dev/fd/", "/proc/self/fd/")):
        return "; give - to print to stdout"
    return ""


def _stat(path: Pathish, option: str, verb: str = "write") -> Optional[os.stat_result]:
    """``os.stat`` (following symlinks), None when nothing is there; other errors are one line."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigError(f"cannot {verb} {option} {path}: {error.strerror}") from None


def _same(first: Pathish, second: Pathish) -> bool:
    """The same file: the same resolved path, or the same (device, inode) when both exist."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        a, b = os.stat(first), os.stat(second)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


@dataclass
class Consent:
    """What the user allowed for one command: ``--force``, the paths raidlab must not write
    (the measured ``--target``), and which option each output path came from."""

    force: bool = False
    protected: List[Tuple[str, str]] = field(default_factory=list)
    options: Dict[str, str] = field(default_factory=dict)
    written: Dict[str, str] = field(default_factory=dict)

    def option_for(self, path: Pathish) -> str:
        text = os.fspath(path)
        if text in self.options:
            return self.options[text]
        real = os.path.realpath(text)
        return next((o for p, o in self.options.items() if os.path.realpath(p) == real), "output")


#: The consent of the command running in this thread (a context variable: each thread starts
#: with none).
_CONSENT: "contextvars.ContextVar[Optional[Consent]]" = contextvars.ContextVar("raidlab_output_consent",
                                                                             default=None)


def current() -> Consent:
    """The consent of the running command (a default one outside the CLI: no --force)."""
    consent = _CONSENT.get()
    return consent if consent is not None else Consent()


@contextlib.contextmanager
def consenting(consent: Consent) -> Iterator[Consent]:
    """Makes ``consent`` the running command's for the block."""
    token = _CONSENT.set(consent)
    try:
        yield consent
    finally:
        _CONSENT.reset(token)


def _protected_why(label: str) -> str:
    if label == "--target":
        return "it is the measured --target"
    return f"it is {label}, an input of this command (an output never replaces an input, even with --force)"


def _directory_ending(path: Pathish) -> Optional[str]:
    """How ``path`` says it is a directory (a trailing ``/``, ``.`` or ``..``), or None: such a
    path never names a file (POSIX path resolution), even where nothing exists yet."""
    text = os.fspath(path)
    base = os.path.basename(text)
    if base not in ("", ".", ".."):
        return None
    return "/" + base if "/" in text else base


def check_file(path: Pathish, option: str, consent: Optional[Consent] = None,
               protect: Sequence[Tuple[str, str]] = ()) -> Optional[os.stat_result]:
    """Raises :class:`ConfigError` unless ``path`` may be written now; returns its stat (or None)."""
    consent = consent if consent is not None else current()
    if not os.fspath(path):
        raise ConfigError(f"cannot write {option}: the path is empty")
    ending = _directory_ending(path)
    if ending is not None:  # `--json o/` wrote a file named o
        raise _refuse(option, path, f"it names a directory (it ends in {ending!r}); give a file name")
    found = _stat(path, option)
    if found is not None:
        kind = _special(found.st_mode)
        if kind is not None:
            real = os.path.realpath(path)
            linked = real != os.path.abspath(path) and os.path.exists(real)
            shown = f"{kind} ({real})" if linked else kind
            raise _refuse(option, path, f"it is {shown}" + _stdout_hint(path))
    if under_kernel_tree(path):
        raise _refuse(option, path, "raidlab writes no files under /dev, /proc or /sys "
                                    "(a mistyped device name?)" + _stdout_hint(path))
    for label, guarded in list(consent.protected) + list(protect) + inputs_read():
        if guarded and _same(path, guarded):
            raise _refuse(option, path, _protected_why(label))
    other = consent.written.get(os.path.realpath(path))
    if other is not None and other != option:
        raise _refuse(option, path, f"{other} writes the same file")
    if found is None:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ConfigError(f"cannot write {option} {path}: directory {parent} does not exist")
    elif found.st_size > 0 and not consent.force and not is_raidlab_output(path):
        raise _refuse(option, path, "it is an existing file raidlab did not write "
                                    "(add --force to replace it)")
    return found


def _atomic_write(path: Pathish, data: bytes, option: str, found: Optional[os.stat_result]) -> None:
    final = os.path.realpath(path)
    directory, name = os.path.split(final)
    if found is not None:
        mode = stat.S_IMODE(found.st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    except OSError as error:
        raise ConfigError(f"cannot write {option} {path}: {error.strerror}") from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(temporary, final)
    except OSError as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise ConfigError(f"cannot write {option} {path}: {error.strerror}") from None


def write_bytes(path: Pathish, data: bytes, option: Optional[str] = None,
                protect: Sequence[Tuple[str, str]] = ()) -> Path:
    """Writes ``data`` to ``path`` atomically after :func:`check_file`."""
    consent = current()
    option = option or consent.option_for(path)
    found = check_file(path, option, consent, protect)
    _atomic_write(path, data, option, found)
    consent.written[os.path.realpath(path)] = option
    return Path(path)


def write_text(path: Pathish, text: str, option: Optional[str] = None,
               protect: Sequence[Tuple[str, str]] = ()) -> Path:
    """Writes UTF-8 ``text`` to ``path`` atomically after :func:`check_file`."""
    return write_bytes(path, text.encode("utf-8"), option, protect)


def write_files(files: Sequence[Tuple[Pathish, bytes]], option: str) -> List[Path]:
    """Writes several files of one option: all are checked before the first is written."""
    consent = current()
    for path, _ in files:
        check_file(path, option, consent)
    return [write_bytes(path, data, option) for path, data in files]


def make_directory(path: Pathish, option: str) -> Path:
    """The directory an option writes files into, created if missing (its parent must exist,
    as a file's directory must: a mistyped parent is not created as a tree of directories)."""
    _check_directory(path, option)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"cannot create {option} {path}: {error.strerror}") from None
    return Path(path)


def _check_directory(path: Pathish, option: str) -> None:
    found = _stat(path, option, "create")
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise ConfigError(f"cannot create {option} {path}: it exists and is not a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if found is None and not os.path.isdir(parent):
        raise ConfigError(f"cannot create {option} {path}: directory {parent} does not exist")
    if under_kernel_tree(path):
        raise _refuse(option, path, "raidlab writes no files under /dev, /proc or /sys")


def figure_png(figure, dpi: int) -> bytes:
    """A matplotlib figure as PNG bytes that say raidlab made them (see :func:`is_raidlab_output`)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, metadata={"Software": PNG_SOFTWARE})
    return buffer.getvalue()


# -- "raidlab wrote this file" ------------------------------------------------------------------


def _head(path: Pathish, limit: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return b""


def _json_is_ours(path: Pathish) -> bool:
    try:
        if os.stat(path).st_size > _JSON_LIMIT_BYTES:
            return False
        value = json.loads(_head(path, _JSON_LIMIT_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return False

    def marked(document) -> bool:
        return isinstance(document, dict) and (isinstance(document.get("raidlab"), dict)
                                               or isinstance(document.get("raidlab_version"), str))

    if isinstance(value, list):
        return bool(value) and all(marked(item) for item in value)
    return marked(value)


def _png_is_ours(head: bytes) -> bool:
    """A ``tEXt`` chunk ``Software\\0raidlab ...`` before the image data (PNG spec §5.3, §11.3.4.3)."""
    offset = len(_PNG_SIGNATURE)
    while offset + 8 <= len(head):
        length = int.from_bytes(head[offset:offset + 4], "big")
        kind = head[offset + 4:offset + 8]
        data = head[offset + 8:offset + 8 + length]
        if kind == b"IDAT" or len(data) < length:
            return False
        if kind == b"tEXt" and data.startswith(b"Software\0raidlab"):
            return True
        offset += 12 + length
    return False


def _log_lines_match(path: Pathish, pattern: "re.Pattern[bytes]") -> bool:
    try:
        if os.stat(path).st_size > _JSON_LIMIT_BYTES:
            return False
        lines = _head(path, _JSON_LIMIT_BYTES).splitlines()
    except OSError:
        return False
    return bool(lines) and all(pattern.fullmatch(line) for line in lines)


def _log_is_ours(path: Pathish) -> bool:
    text = os.fspath(path)
    prefixes = [text[:-len(f"_{name}.1.log")] for name in LOG_NAMES if text.endswith(f"_{name}.1.log")]
    if not prefixes or not _log_lines_match(path, _LOG_LINE):
        return False
    return any(_log_lines_match(f"{prefix}_rebuild.1.log", _REBUILD_LINE) for prefix in prefixes)


def _csv_is_ours(first_line: bytes) -> bool:
    """The header line compare --csv writes."""
    return first_line.rstrip(b"\r") == ",".join(COMPARE_CSV_COLUMNS).encode()


def is_raidlab_output(path: Pathish) -> bool:
    """True if the regular file at ``path`` is one raidlab wrote (see the module docstring)."""
    head = _head(path, _SNIFF_BYTES)
    if head.startswith(_PNG_SIGNATURE):
        return _png_is_ours(head)
    if head.lstrip()[:1] in (b"{", b"["):
        return _json_is_ours(path)
    first_line = head.split(b"\n", 1)[0]
    if _HTML_MARK in head or first_line.startswith(_TOML_MARK) or _csv_is_ours(first_line):
        return True
    return os.fspath(path).endswith(".1.log") and _log_is_ours(path)


# -- the files an option writes, and all of a command's outputs checked at once ---------------


def log_files(prefix: str) -> List[str]:
    """The files ``--log-prefix PREFIX`` writes (see :func:`raidlab.report.timeline.write_fio_logs`)."""
    return [f"{prefix}_{name}.1.log" for name in LOG_NAMES]


def check_declared(outputs: Iterable[Tuple[str, str, str]], consent: Consent) -> None:
    """Every output at once, before the command runs: types, target, duplicates, consent."""
    seen: List[Tuple[str, str]] = []
    for option, path, kind in outputs:
        for other_option, other in seen:
            if _same(path, other):
                raise _refuse(option, path, f"{other_option} writes the same file")
        seen.append((option, path))
        consent.options.setdefault(path, option)
        if kind == "dir":
            _check_directory(path, option)
        else:
            check_file(path, option, consent)
