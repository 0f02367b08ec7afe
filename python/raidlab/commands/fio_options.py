"""``raidlab fio-options``: every fio job option raidlab accepts, and what it does with each.

The list is :data:`raidlab.workload.fio.ACCEPTED_OPTIONS`, the same one the unknown-option
error draws its "did you mean" from, so the two cannot disagree.
"""

from __future__ import annotations

from typing import Dict

import click

from raidlab.workload import fio, fio_options


def fates() -> Dict[str, str]:
    """Each accepted option name -> what raidlab does with it (modelled, no effect, alias)."""
    aliases = {**fio._ALIASES}
    result = {}
    for name in fio.ACCEPTED_OPTIONS:
        if name in aliases and aliases[name] != name:
            result[name] = f"alias of {aliases[name]}"
        elif name in fio.SUPPORTED_OPTIONS or name in fio_options.STREAM_OPTIONS:
            result[name] = "modelled"
        else:
            result[name] = "accepted, no effect on the simulated I/O"
    return result


@click.command("fio-options")
def fio_options_command() -> None:
    """List the fio job options raidlab accepts: modelled, accepted without effect, or aliases.

    Options not listed are refused in one line naming why (or the nearest listed names).
    """
    listing = fates()
    width = max(len(name) for name in listing)
    for name, fate in listing.items():
        click.echo(f"{name.ljust(width)}  {fate}")
