"""CLI commands beyond `layout`, one module each; `raidlab.cli` registers them."""

from __future__ import annotations

from typing import Callable

import click

from raidlab import outputs
from raidlab.run import DEFAULTS, cli_type


def write_output(path: str, text: str) -> None:
    """Writes a report or document to ``path`` (UTF-8, ending in a newline), or prints it when
    ``path`` is ``-``. Every file goes through :mod:`raidlab.outputs` (never a device, FIFO or the
    measured target; an existing file only if raidlab wrote it or with --force; atomically);
    a refusal or a path that cannot be written is a one-line error (exit status 2)."""
    if path == outputs.STDOUT:
        click.echo(text)
        return
    outputs.write_text(path, text if text.endswith("\n") else text + "\n")


def stacked_options(command: Callable) -> Callable:
    """The stacked-array options of a simulating command (declared once in raidlab.run.Design)."""
    command = click.option("--outer-chunk-kib", "outer_chunk_kib", type=cli_type("outer_chunk_kib"),
                           default=DEFAULTS["outer_chunk_kib"], show_default=True,
                           help="Stacked levels: chunk of the outer raid0 in KiB (--chunk-kib is the inner arrays').")(command)
    command = click.option("--inner-devices", "inner_devices", type=cli_type("inner_devices"),
                           default=DEFAULTS["inner_devices"], show_default=True,
                           help="Stacked levels (1+0, 5+0, 6+0, 0+1): members of each inner array "
                                "(0: raid1 pairs for 1+0, two inner arrays otherwise).")(command)
    return command
