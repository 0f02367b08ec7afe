"""``raidlab fio-options``: every fio job option raidlab accepts, and what it does with each.

The list is :func:`raidlab.workload.fio_options.fates`, made from the one option table, whose
names are also the ones the unknown-option error suggests, so the two cannot disagree.
"""

from __future__ import annotations

import click

from raidlab.workload.fio_options import fates


@click.command("fio-options")
def fio_options_command() -> None:
    """List the fio job options raidlab accepts: modelled, accepted without effect, or aliases.

    Options not listed are refused in one line naming why (or the nearest listed names).
    """
    listing = fates()
    width = max(len(name) for name in listing)
    for name, fate in listing.items():
        click.echo(f"{name.ljust(width)}  {fate}")
