"""The commands' side of :mod:`raidlab.outputs`: :func:`writes_files` declares a command's output
options, adds ``--force``, checks every output before the command does any work, and makes the
command's :class:`~raidlab.outputs.Consent` the one every write checks while it runs."""

from __future__ import annotations

import functools
import os
from typing import Dict, Optional

import click

from raidlab.errors import ConfigError
from raidlab.inputs import collecting_inputs, note_input
from raidlab.outputs import STDOUT, Consent, check_declared, consenting, log_files

__all__ = ["FORCE_HELP", "writes_files"]

FORCE_HELP = ("Replace existing files that raidlab did not write. Outputs still never go to a "
              "device, FIFO, socket, /dev, /proc, /sys or the measured --target.")


def _option_name(context: click.Context, name: str) -> str:
    for param in context.command.params:
        if param.name == name and param.opts:
            return max(param.opts, key=len)
    return "--" + name.replace("_", "-")


def _declared(context: click.Context, values: Dict[str, object], kinds: Dict[str, str]):
    """(option, path, kind) of every output the user gave, with --log-prefix expanded. Two
    outputs to standard output would interleave there: refused."""
    to_stdout = [_option_name(context, name) for name in kinds if values.get(name) == STDOUT]
    if len(to_stdout) > 1:
        raise ConfigError(f"{' and '.join(to_stdout)} both write to standard output ('-'), where they "
                          "would run together; give all but one of them a file")
    for name, kind in kinds.items():
        value = values.get(name)
        if value is None or value == STDOUT:
            continue
        option = _option_name(context, name)
        if not str(value).strip():  # was skipped: the report the user asked for never appeared
            raise ConfigError(f"cannot write {option}: the path is empty")
        paths = log_files(str(value)) if kind == "log-prefix" else [str(value)]
        for path in paths:
            yield option, path, "dir" if kind == "dir" else "file"


def _param_name(context: click.Context, name: str) -> str:
    param = next((p for p in context.command.params if p.name == name), None)
    if isinstance(param, click.Argument):
        return param.human_readable_name.rstrip(".")
    return _option_name(context, name)


def _note_given_files(context: click.Context, values: Dict[str, object], outputs: set) -> None:
    """Every other option or argument whose value names an existing file is an input: no
    output of the command may replace it (``import X.json --json X.json``, ``--html JOB.fio``)."""
    for name, value in values.items():
        if name in outputs:
            continue
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, str) and item and item != STDOUT and os.path.isfile(item):
                note_input(item, f"the file given to {_param_name(context, name)}")


def writes_files(target: Optional[str] = "target", **kinds: str):
    """Declares a command's output options (parameter name -> ``file``, ``dir`` or
    ``log-prefix``), adds ``--force``, and checks them all before the command does any work.
    ``target`` names the parameter holding the measured target, which is never an output."""

    def decorate(function):
        @functools.wraps(function)
        def run(*args, force: bool = False, **values):
            context = click.get_current_context()
            consent = Consent(force=force)
            guarded = values.get(target) if target else None
            if guarded:
                consent.protected.append(("--target", str(guarded)))
            with collecting_inputs():  # the command line's own scope, or this command's when run alone
                _note_given_files(context, values, set(kinds) | {target})
                check_declared(_declared(context, values, kinds), consent)
                with consenting(consent):
                    return function(*args, **values)

        return click.option("--force", is_flag=True, help=FORCE_HELP)(run)

    return decorate
