"""Number, size and time spellings of fio and sysbench, read the way each tool reads them.

Every parser here raises :class:`~raidlab.workload.spec.WorkloadError` with a one-line message
that names the option and the value, never a bare ``ValueError``.

fio (``parse.c`` at tag fio-3.33, ``str_to_decimal`` / ``__get_mult_bytes`` / ``get_mult_time``;
HOWTO.rst "Parameter types"):

- sizes take ``k m g t p`` (optionally followed by ``b``) as powers of ``kb_base``, which is 1024
  by default. In that default "compatibility" mode fio *inverts* the IEC spellings: ``4KiB`` is
  4 * 1000 bytes (``kb_base=1000`` swaps both back). A bare number or a ``b`` suffix is bytes;
  ``0x`` introduces hexadecimal. fio silently reads ``1.5g`` as 1 byte and ``4 k`` as 4 bytes;
  raidlab refuses both rather than guess.
- times: a bare number is seconds for ``runtime``/``ramp_time`` (``is_seconds``); suffixes
  ``us``/``usec``, ``ms``/``msec``, ``s``, ``m`` (minutes), ``h``, ``d``. fio reads unknown
  suffixes such as ``30sec`` as microseconds; raidlab refuses them.

sysbench (``sb_options.c`` at tag 1.0.20, ``sb_opt_to_int`` / ``sb_opt_to_size``):

- integers are ``strtol`` base 10 and must be the whole value, within a C ``int``.
- sizes are digits followed by an optional ``K M G T`` (any case, always powers of 1024);
  sysbench ignores whatever follows the suffix letter, so ``2GB`` and ``16KiB`` are accepted,
  and raidlab accepts exactly those ``B``/``iB`` tails.
"""

from __future__ import annotations

import math
import re
from typing import Optional, Tuple

from raidlab.workload.human import human_bytes, human_duration  # noqa: F401 (re-exported: raidlab reads them here)
from raidlab.workload.spec import WorkloadError

#: Largest byte count or count raidlab accepts: the Rust core reads these as u64, and fio
#: itself stores them in signed 64-bit integers (``long long``).
MAX_INT = (1 << 63) - 1
#: sysbench's INT options are C ints (``sb_opt_to_int`` rejects values above INT_MAX).
C_INT_MAX = (1 << 31) - 1

# fio: digits (or 0x-hex), then an optional unit with no space in between.
_FIO_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]{1,16}|[0-9]{1,20})([A-Za-z%]*)")
_FIO_TIME = re.compile(r"([0-9]{1,20})([A-Za-z]*)")
# fio unit spellings, lower-cased: name -> (power, is_iec). "b" alone means bytes.
_FIO_SIZE_UNITS = {
    "": (0, False),
    "b": (0, False),
    "k": (1, False),
    "kb": (1, False),
    "kib": (1, True),
    "m": (2, False),
    "mb": (2, False),
    "mib": (2, True),
    "g": (3, False),
    "gb": (3, False),
    "gib": (3, True),
    "t": (4, False),
    "tb": (4, False),
    "tib": (4, True),
    "p": (5, False),
    "pb": (5, False),
    "pib": (5, True),
}
# fio time units in microseconds (fio stores times in usec); get_mult_time, fio-3.33.
_FIO_TIME_UNITS_US = {
    "us": 1,
    "usec": 1,
    "ms": 1_000,
    "msec": 1_000,
    "s": 1_000_000,
    "m": 60 * 1_000_000,
    "h": 3600 * 1_000_000,
    "d": 86400 * 1_000_000,
}

_SB_INT = re.compile(r"\s*[+-]?[0-9]{1,19}")
_SB_SIZE = re.compile(r"([0-9]{1,20})(?:([KMGTkmgt])(?:[bB]|[iI][bB])?)?")
_SB_FLOAT = re.compile(r"\s*[+]?(?:[0-9]{1,30}(?:\.[0-9]{0,30})?|\.[0-9]{1,30})(?:[eE][+-]?[0-9]{1,3})?")


def is_decimal(text: str) -> bool:
    """Whether ``text`` is a run of ASCII digits, the only digits ``int()`` and fio's and
    sysbench's own parsers agree on (``str.isdigit`` also takes superscripts such as ``²``,
    which ``int()`` refuses, and other scripts' digits, which it reads)."""
    return text.isascii() and text.isdigit()


def decode_utf8(data: bytes, what: str, error: type) -> str:
    """``data`` as UTF-8 text, or a one-line ``error`` naming the first bad byte, its offset and
    its line (``raidlab.inputs`` reads every user file through this). A leading byte-order
    mark (EF BB BF, which Windows editors write) is dropped: it marks the encoding and is not
    part of the text (Unicode 15 §23.8), so ``\ufeff[[design]]`` is not an invalid statement."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as failure:
        line = data.count(b"\n", 0, failure.start) + 1
        raise error(f"{what} is not UTF-8 text: byte 0x{data[failure.start]:02x} at offset "
                    f"{failure.start} (line {line}); save it as UTF-8") from None


def show(value: object, limit: int = 60) -> str:
    """``value`` as it may appear inside a one-line message: printable, bounded in length."""
    text = str(value)
    if any(not ch.isprintable() for ch in text):
        text = repr(text)[1:-1]
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def fio_size(
    option: str,
    value: str,
    kb_base: int = 1024,
    allow_percent: bool = False,
) -> Tuple[int, bool]:
    """Reads a fio size (``4k``, ``1m``, ``0x1000``, ``50%``) as fio-3.33 does.

    Returns ``(number, is_percent)``: bytes, or the percentage itself when the value ends in
    ``%`` and ``allow_percent`` is set (fio keeps percentages of the file or device size).
    """
    text = value.strip()
    shown = f"{option}={show(value)}"
    if text.startswith("-"):
        raise WorkloadError(f"{shown} must not be negative")
    if text.startswith("("):
        raise WorkloadError(f"{shown}: fio arithmetic expressions are not supported; give a number")
    match = _FIO_NUMBER.fullmatch(text)
    if match is None:
        if re.fullmatch(r"[0-9]+\.[0-9]*[A-Za-z%]*", text):
            raise WorkloadError(
                f"{shown}: fio takes whole numbers only (it would read {show(text)} as "
                f"{text.split('.')[0]}); use a smaller unit, e.g. 1536m for 1.5g"
            )
        raise WorkloadError(f"{shown} is not a size (examples: 4096, 4k, 1m, 2g)")
    digits, unit = match.groups()
    hexadecimal = digits[:2].lower() == "0x"
    if hexadecimal and unit:
        # strtoll reads the hex digits and fio then finds no unit after the "0x" prefix, so
        # 0x10k is 16 bytes to fio: refused rather than guessed.
        raise WorkloadError(f"{shown}: a hexadecimal value takes no unit")
    number = int(digits, 16) if hexadecimal else int(digits)
    if unit == "%":
        if not allow_percent:
            raise WorkloadError(f"{shown}: a percentage is not allowed here")
        if number > 100:
            raise WorkloadError(f"{shown}: a percentage must be 0 to 100")
        return number, True
    spelled = unit.lower()
    if spelled not in _FIO_SIZE_UNITS:
        raise WorkloadError(
            f"{shown}: unknown size unit {show(unit)!r} (fio takes k, m, g, t, p, "
            "optionally followed by b, or KiB/MiB/...)"
        )
    power, iec = _FIO_SIZE_UNITS[spelled]
    # kb_base=1024 (the default) is fio's compatibility mode: SI spellings mean powers of 1024
    # and IEC spellings (KiB) mean powers of 1000; kb_base=1000 gives the "true" units.
    if iec:
        base = 1000 if kb_base == 1024 else 1024
    else:
        base = kb_base
    number *= base**power
    if number > MAX_INT:
        raise WorkloadError(f"{shown} is too large")
    return number, False


def fio_iec_note(value: str, kb_base: int) -> str:
    """A hint for values like ``4KiB`` that fio's default kb_base reads as powers of 1000."""
    if kb_base == 1024 and re.search(r"[kmgtpKMGTP][iI][bB]\s*$", value.strip()):
        return " (fio's default kb_base=1024 reads KiB/MiB/... as powers of 1000; write 4k, or set kb_base=1000)"
    return ""


def fio_count(option: str, value: str, kb_base: int = 1024) -> int:
    """A fio integer option (iodepth, numjobs, rwmixread, ...).

    fio parses FIO_OPT_INT values with the size parser, so ``iodepth=1k`` is 1024; percentages
    make no sense here and are refused.
    """
    number, _ = fio_size(option, value, kb_base, allow_percent=False)
    return number


def fio_time_ns(option: str, value: str) -> int:
    """A fio time (``runtime``, ``ramp_time``) in nanoseconds; a bare number is seconds."""
    text = value.strip()
    shown = f"{option}={show(value)}"
    if text.startswith("-"):
        raise WorkloadError(f"{shown} must not be negative")
    match = _FIO_TIME.fullmatch(text)
    if match is None:
        if re.fullmatch(r"[0-9]+\.[0-9]*[A-Za-z]*", text):
            raise WorkloadError(f"{shown}: fio takes whole numbers only; use a smaller unit, e.g. 1500ms")
        raise WorkloadError(f"{shown} is not a time (examples: 30, 30s, 500ms, 2m, 1h)")
    digits, unit = match.groups()
    spelled = unit.lower()
    if spelled == "":
        micros = 1_000_000  # is_seconds: a bare number is seconds for runtime and ramp_time
    elif spelled in _FIO_TIME_UNITS_US:
        micros = _FIO_TIME_UNITS_US[spelled]
    else:
        raise WorkloadError(f"{shown}: unknown time unit {show(unit)!r} (fio takes us, ms, s, m, h, d)")
    nanos = int(digits) * micros * 1000
    if nanos > MAX_INT:
        raise WorkloadError(f"{shown} is too long")
    return nanos


def fio_bool(option: str, value: Optional[str], flag: bool = False) -> bool:
    """A fio boolean: ``0`` or ``1``.

    ``flag`` options (FIO_OPT_STR_SET, e.g. ``time_based``) may also stand alone; plain
    booleans such as ``direct`` may not: fio-3.33 answers "Option direct requires an argument".
    """
    if value is None:
        if flag:
            return True
        raise WorkloadError(f"option {option!r} needs a value ({option}=1 or {option}=0); fio rejects it bare")
    text = value.strip()
    if text in ("0", "1"):
        return text == "1"
    raise WorkloadError(f"{option}={show(value)} must be 0 or 1")


def sysbench_int(option: str, value: str) -> int:
    """A sysbench INT option: the whole value must be a base-10 integer within a C int."""
    if not _SB_INT.fullmatch(value):
        raise WorkloadError(f"Invalid value for the '{option}' option: {show(value)!r} (not an integer)")
    number = int(value.strip())
    if number > C_INT_MAX or number < -C_INT_MAX - 1:
        raise WorkloadError(f"Invalid value for the '{option}' option: {show(value)!r} (out of range)")
    return number


def sysbench_size(option: str, value: str) -> int:
    """A sysbench SIZE: digits then an optional K/M/G/T (powers of 1024, any case)."""
    match = _SB_SIZE.fullmatch(value.strip())
    if match is None:
        raise WorkloadError(
            f"--{option}={show(value)} is not a size (sysbench takes digits with an optional "
            "K, M, G or T, e.g. 16K, 2G)"
        )
    digits, unit = match.groups()
    number = int(digits)
    if unit:
        number *= 1024 ** ("KMGT".index(unit.upper()) + 1)
    if number > MAX_INT:
        raise WorkloadError(f"--{option}={show(value)} is too large")
    return number


def sysbench_float(option: str, value: str) -> float:
    """A sysbench DOUBLE (``--file-rw-ratio``): a finite, non-negative decimal number."""
    if not _SB_FLOAT.fullmatch(value):
        raise WorkloadError(f"Invalid value for --{option}: {show(value)!r} (not a non-negative number)")
    number = float(value)
    if not math.isfinite(number):
        raise WorkloadError(f"Invalid value for --{option}: {show(value)!r} (not finite)")
    return number
