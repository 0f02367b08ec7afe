"""Text for a terminal: the one place user-supplied names are made safe to print.

Job names, disk names, file names, sysfs partition names and the words of an error message come
from files and command lines that someone else may have written. A control character in them
would act on the reader's terminal instead of being shown (ESC c resets it, ESC ] 0; sets its
title, CSI sequences move the cursor and recolour or hide text), and a bidirectional override
reorders what is shown after it. Every renderer of terminal text (tables, summaries, notes,
``raidlab: error:`` lines, align's report, the progress bar's label) passes such text through
:func:`printable`, which shows each of these characters as Python writes it in a string literal
(``\\x1b``, ``\\u202e``), so the name stays readable and nothing reaches the terminal raw.
JSON output keeps the raw string (JSON escapes control characters itself); HTML goes through
:func:`raidlab.report.svg.esc`, which uses this too.

Escaped: C0 controls (U+0000-U+001F), DEL and the C1 controls (U+007F-U+009F: a terminal may take
U+009B as CSI), lone surrogates (a file name that is not UTF-8 reaches Python as U+DC80-U+DCFF and
cannot be encoded for the terminal), the line and paragraph separators U+2028/U+2029, and the
bidirectional formatting characters of Unicode's UAX #9 §2 (U+061C, U+200E, U+200F,
U+202A-U+202E, U+2066-U+2069). Everything else, other scripts and emoji included, is shown as is.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: "re.Match[str]") -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def printable(text: object, keep: str = "") -> str:
    """``text`` (``str()`` of it) with every unsafe character shown as its escape; the characters
    in ``keep`` (e.g. ``"\\n"`` for a block of lines) are left alone. Applying it twice changes
    nothing more than applying it once."""
    value = text if isinstance(text, str) else str(text)
    if not keep:
        return _UNSAFE.sub(_escape, value)
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m), value)
