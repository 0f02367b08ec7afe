"""The one place a measurement target becomes the ``filename=`` fio opens, or is refused.

raidlab checks a target (:mod:`raidlab.measure.safety`) and then hands its name to fio in a job
file. fio 3.33 does not read an option line literally, so a name is only safe when fio, after
all of its rewriting, opens the very path raidlab inspected. What fio does to the line
``filename=VALUE`` (fio-3.33 sources; each verified with /usr/bin/fio 3.33 by writing a job whose
filename held the character and listing the file fio created):

- it reads the job file line by line (``fgets``): a newline in the name starts a new option line
  (init.c ``__parse_jobs_ini``);
- ``strip_blank_end`` (parse.c) cuts the line at the first ``;`` and then at the first ``#``
  (anywhere, not only at the start) and strips every trailing byte for which ``isspace`` or
  ``iscntrl`` holds (blank, tab, CR, VT, FF, control characters, DEL); ``strip_blank_front``
  strips leading blanks of the line and again of the value (options.c ``str_filename_cb``);
- ``fio_option_dup_subs`` (options.c) replaces ``${VAR}`` (``${`` and any later ``}``) with the
  environment variable, or with nothing; HOWTO "Environment variables";
- ``fio_keyword_replace`` (options.c) replaces ``$pagesize``, ``$mb_memory`` and ``$ncpus``
  anywhere in the line, and then hands a line with ``+ - * /`` to ``bc`` through a shell;
- ``get_next_str`` (options.c) splits the value into several files at each ``:``: ``\\:`` is a
  literal colon (the backslash right before a colon is removed) and any other backslash is kept
  as it is; a leading ``:`` is dropped; HOWTO ``filename``;
- the value may hold at most ``PATH_MAX - 1`` = 4095 bytes (``maxlen`` of the option, and the
  ``file_name[PATH_MAX]`` buffer of filesetup.c ``add_file``);
- fio runs in a scratch directory (:mod:`raidlab.measure.runner`) and ``-`` means stdin/stdout
  (HOWTO ``filename``), so the name written is always absolute.

So :func:`resolve` makes the name absolute (without normalising ``..``: the kernel resolves it as
it would have), refuses the shapes fio rewrites (and control characters anywhere, which no
one-line message can show, and names that are not UTF-8, which the UTF-8 job file cannot
carry), and escapes each ``:`` as ``\\:`` — fio's one documented escape. :func:`fio_reads` is a
model of the rewriting above; :func:`resolve` checks its own answer against it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

from raidlab.errors import ConfigError
from raidlab.inputs import show_path

__all__ = ["FioName", "resolve", "fio_reads", "VALUE_MAX_BYTES", "FIO_KEYWORDS"]

#: fio's ``PATH_MAX`` minus the terminating NUL (options.c: the filename option's maxlen).
VALUE_MAX_BYTES = 4095
#: Words fio replaces with a number in any option value (options.c ``fio_keywords``).
FIO_KEYWORDS = ("$pagesize", "$mb_memory", "$ncpus")
#: ``isspace`` or ``iscntrl`` in the C locale: what fio strips from the end of a line.
_C_BLANK = frozenset(" \t\n\v\f\r\x7f" + "".join(map(chr, range(32))))


@dataclass(frozen=True)
class FioName:
    """A target as raidlab checks it (``path``) and as the job file spells it (``value``)."""

    path: str
    value: str


def _as_text(target: object, what: str) -> str:
    if isinstance(target, os.PathLike):
        target = os.fspath(target)
    if not isinstance(target, str):
        raise ConfigError(f"{what} must be a path (a string), not {type(target).__name__}")
    if not target.strip():
        raise ConfigError(f"{what} is empty: give a file (new or existing) or a block device")
    return target


def _absolute(target: str, what: str) -> str:
    if os.path.isabs(target):
        return target
    try:
        return os.path.join(os.getcwd(), target)
    except OSError as error:
        raise ConfigError(f"{what} {show_path(target)} is relative and the current directory is gone "
                          f"({error.strerror}); give an absolute path") from None


def _why_fio_rewrites(path: str) -> Optional[str]:
    """Why fio would not open ``path`` as written, or None."""
    if path.endswith("/"):
        return "it names a directory (it ends in '/'); give a file or a block device"
    if ".." in path.split("/"):
        # raidlab inspects the path as written, but fio creates missing directories before it
        # opens it: `missing/../file` was checked as a new file and then opened as `file`.
        return "it goes up a directory ('..'): give the path without it"
    if "\n" in path:
        return "a newline would start a new option line in fio's job file"
    for mark in (";", "#"):
        if mark in path:
            return f"fio cuts a filename at '{mark}' (its comment character), so it would open another file"
    if path[-1] in _C_BLANK:
        return "fio strips blanks and control characters from the end of a filename"
    start = path.find("${")
    if start >= 0 and "}" in path[start + 2:]:
        return f"fio replaces {path[start:path.index('}', start) + 1]} with an environment variable"
    for keyword in FIO_KEYWORDS:
        if keyword in path:
            return f"fio replaces {keyword} with a number"
    control = next((ch for ch in path if ch in _C_BLANK and ch != " "), None)
    if control is not None:
        return f"it holds a control character ({control!r}), which raidlab does not pass to fio"
    return None


def _check_bytes(path: str, value: str) -> None:
    if "\x00" in path:
        raise ConfigError("it holds a NUL character")
    try:
        encoded = value.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError("the name is not valid UTF-8 (raidlab writes fio's job file as UTF-8); "
                          "use a symlink with a UTF-8 name") from None
    if os.fsencode(path) != path.encode("utf-8"):
        raise ConfigError("the name is not spelled the same in UTF-8 and the file system encoding")
    if len(encoded) > VALUE_MAX_BYTES:
        raise ConfigError(f"the name is too long for fio ({len(encoded)} bytes with ':' escaped as "
                          f"'\\:'; fio takes at most {VALUE_MAX_BYTES})")


def resolve(target: object, what: str = "--target") -> FioName:
    """The absolute path raidlab inspects and the ``filename=`` value fio opens it by.

    Raises :class:`ConfigError` (one line, saying why) for a name fio would read as another.
    """
    text = _as_text(target, what)
    path = _absolute(text, what)
    value = path.replace(":", "\\:")
    try:
        _check_bytes(path, value)
        why = _why_fio_rewrites(path)
        if why is None and fio_reads(value, {}) != path:
            why = f"fio would open {show_path(fio_reads(value, {}))} instead"
    except ConfigError as error:
        why = str(error)
    if why is not None:
        raise ConfigError(f"{what} '{show_path(text)}': {why}")
    return FioName(path, value)


def _expand(value: str, environ: Mapping[str, str]) -> str:
    """fio's ``${VAR}`` and keyword substitution (options.c ``fio_option_dup_subs``,
    ``fio_keyword_replace``; the keywords stand for ``<kw>`` here, bc is not modelled)."""
    out, i = [], 0
    while i < len(value):
        close = value.find("}", i + 2) if value.startswith("${", i) else -1
        if close >= 0:
            out.append(environ.get(value[i + 2:close], ""))
            i = close + 1
        else:
            out.append(value[i])
            i += 1
    text = "".join(out)
    for keyword in FIO_KEYWORDS:
        text = text.replace(keyword, f"<{keyword[1:]}>")
    return text


def _first_name(value: str) -> str:
    """The first file of fio's ``a:b`` list (options.c ``get_next_str``)."""
    chars, i = list(value), 0
    start = 0
    while True:
        colon = next((k for k in range(i, len(chars)) if chars[k] == ":"), -1)
        if colon < 0:
            return "".join(chars[start:])
        if colon == start:
            start = i = colon + 1
            continue
        if chars[colon - 1] != "\\":
            return "".join(chars[start:colon])
        del chars[colon - 1]
        i = colon


def _strip(text: str) -> str:
    """parse.c ``strip_blank_front`` and ``strip_blank_end``: cut at ';', then at '#', then
    drop blanks in front and blanks and control characters at the end."""
    for mark in (";", "#"):
        text = text.split(mark, 1)[0]
    return text.lstrip(" \t\n\v\f\r").rstrip("".join(sorted(_C_BLANK)))


def fio_reads(value: str, environ: Optional[Mapping[str, str]] = None) -> str:
    """The first file fio 3.33 opens for the job-file line ``filename=value`` (a model of the
    rules in the module docstring; ``environ`` defaults to this process's environment)."""
    line = _strip(("filename=" + value).split("\n", 1)[0])
    text = _expand(line, os.environ if environ is None else environ)
    name = text.split("=", 1)[1] if "=" in text else ""
    return _first_name(_strip(name))  # str_filename_cb strips the value again
