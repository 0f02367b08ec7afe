"""CLI commands beyond `layout`, one module each; `raidlab.cli` registers them."""

from __future__ import annotations

import click

from raidlab.errors import ConfigError


def write_output(path: str, text: str) -> None:
    """Writes a report or document to ``path`` (UTF-8, ending in a newline), or prints it when
    ``path`` is ``-``. A path that cannot be written is a one-line error (exit status 2)."""
    if path == "-":
        click.echo(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text if text.endswith("\n") else text + "\n")
    except OSError as error:
        raise ConfigError(f"cannot write {path}: {error.strerror}") from None
