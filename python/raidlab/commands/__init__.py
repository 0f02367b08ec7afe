"""CLI commands beyond `layout`, one module each; `raidlab.cli` registers them."""

from __future__ import annotations

import click

from raidlab import outputs
from raidlab.cli_types import setting_options


def write_output(path: str, text: str) -> None:
    """Writes a report or document to ``path`` (UTF-8, ending in a newline), or prints it when
    ``path`` is ``-``. Every file goes through :mod:`raidlab.outputs` (never a device, FIFO or the
    measured target; an existing file only if raidlab wrote it or with --force; atomically);
    a refusal or a path that cannot be written is a one-line error (exit status 2)."""
    if path == outputs.STDOUT:
        click.echo(text)
        return
    outputs.write_text(path, text if text.endswith("\n") else text + "\n")


#: The stacked-array options of a simulating command, from their declarations (raidlab.settings).
stacked_options = setting_options("inner_devices", "outer_chunk_kib")
