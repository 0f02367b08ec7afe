"""``raidlab drives``, ``raidlab controllers`` and ``raidlab hosts``: what raidlab models.

Each lists its presets in a table that fits a terminal (the figures a user compares presets
by); ``NAME`` shows one preset whole, every parameter with its source; ``--json`` gives all of
it. Descriptions and sources are the presets' own (the core's drive catalog,
:mod:`raidlab.controllers`, :mod:`raidlab.hosts`).
"""

from __future__ import annotations

import json
import textwrap
from typing import Any, Dict, List, Optional

import click

from raidlab import _core, controllers, hosts
from raidlab.errors import ConfigError
from raidlab.report import table

#: Width descriptions and sources are wrapped to.
WIDTH = 100


def _wrapped(label: str, text: str) -> str:
    """``label: text`` wrapped to :data:`WIDTH`, continuation lines indented."""
    return textwrap.fill(f"{label}: {text}", WIDTH, subsequent_indent="    ")


def _chosen(listing: List[Dict[str, Any]], name: Optional[str], what: str, as_json: bool
            ) -> Optional[List[Dict[str, Any]]]:
    """The entries to show as a table: every one, or the one called ``name`` (an unknown name is
    a one-line error naming them all). With ``as_json`` they are printed here and None returned."""
    if name is not None:
        named = [entry for entry in listing if entry["name"] == name]
        if not named:
            raise ConfigError(f"unknown {what} {name!r}; expected one of "
                              f"{', '.join(entry['name'] for entry in listing)}")
        listing = named
    if as_json:
        click.echo(json.dumps(listing[0] if name is not None else listing, indent=2))
        return None
    return listing


def _parameters(kind: str, as_json: bool) -> None:
    """Every parameter a drive model reads, from the core's declarations."""
    declared = _core.drive_parameters(kind)
    if as_json:
        click.echo(json.dumps([dict(zip(("name", "unit", "default", "min", "max", "doc"), d)) for d in declared], indent=2))
        return
    rows = [[name, unit, f"{default:g}", f"{low:g}..{high:g}", doc] for name, unit, default, low, high, doc in declared]
    click.echo(table.render(["parameter", "unit", "default", "range", "meaning"], rows))


@click.command("drives")
@click.argument("name", required=False)
@click.option("--params", "params_kind", type=click.Choice(["hdd", "ssd", "null", "empirical"]),
              help="List the parameters a drive TOML file may set for this kind of model.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def drives_command(name: Optional[str], params_kind: Optional[str], as_json: bool) -> None:
    """List the drive presets (name, kind, rpm, capacity, interface); NAME shows one preset with
    its description and source.

    A drive TOML file names a preset (preset = "cheetah-10k7") or a kind (kind = "hdd") and sets
    any parameter listed by --params KIND.
    """
    if params_kind:
        _parameters(params_kind, as_json)
        return
    presets = _chosen(_core.drive_presets(), name, "drive preset", as_json)
    if presets is None:
        return
    rows = [[p["name"], p["kind"], p["rpm"] or "-", f"{p['capacity_bytes'] / 1e9:.0f} GB", p["interface"]]
            for p in presets]
    click.echo(table.render(["name", "kind", "rpm", "capacity", "interface"], rows))
    if name is None:
        click.echo("\nraidlab drives NAME: a preset's description and source; --params KIND: what a drive file sets")
        return
    click.echo("")
    click.echo(_wrapped("description", presets[0]["description"]))
    click.echo(_wrapped("source", presets[0]["source"]))


def _controller_row(entry: Dict[str, Any]) -> List[Any]:
    """The figures presets differ by: cache, battery, queue depths, ceilings (``-``: none)."""
    params = entry["params"]

    def shown(key: str) -> str:
        value = params.get(key, {}).get("value")
        if value in (None, 0, 0.0):
            return "-"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, (int, float)):
            return f"{value:.0f}" if float(value).is_integer() else f"{value:g}"
        return str(value)

    return [entry["name"], entry.get("kind", "hw" if entry["name"] != "md" else "md"), shown("cache_mib"),
            shown("bbu"), shown("host_queue_depth"), shown("commands_per_drive"), shown("command_iops"),
            shown("host_link_mb_s"), shown("drive_write_cache")]


@click.command("controllers")
@click.argument("name", required=False)
@click.option("--params", "params", is_flag=True, help="List the parameters a controller FILE.toml or "
                                                      "--controller-opt may set.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def controllers_command(name: Optional[str], params: bool, as_json: bool) -> None:
    """List the RAID controllers: md, hw and presets of real ones, with the figures they differ by;
    NAME shows one with every parameter and its source."""
    if params:
        _controller_parameters(controllers.PARAMS, as_json)
        return
    listing = _chosen(controllers.listing(), name, "controller", as_json)
    if listing is None:
        return
    click.echo(table.render(["name", "kind", "cache MiB", "BBU", "host QD", "cmds/drive", "IOPS cap", "link MB/s",
                             "drive cache"], [_controller_row(c) for c in listing]))
    if name is None:
        click.echo("\nraidlab controllers NAME: every parameter of one with its source; --params: what a file sets")
        return
    entry = listing[0]
    click.echo("")
    click.echo(_wrapped("description", entry["description"]))
    for key, p in entry["params"].items():
        unit = f" {p['unit']}" if p["unit"] and p["unit"] != "bool" else ""
        click.echo(_wrapped(f"  {key} = {p['value']}{unit}", p["source"]))


def _controller_parameters(declared: Any, as_json: bool) -> None:
    """Every parameter a controller file or --controller-opt may set, with unit, default and range."""
    rows = [{"name": p.name, "unit": p.unit, "default": p.default,
             "range": list(p.choices) if p.choices else ([p.low, p.high] if p.low is not None else None),
             "doc": p.doc} for p in declared]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    click.echo(table.render(["parameter", "unit", "hw", "range", "meaning"],
                            [[r["name"], r["unit"], str(r["default"]), _range_text(r["range"]), r["doc"]] for r in rows]))


def _range_text(declared: Optional[List[Any]]) -> str:
    """``a/b/c`` for choices, ``low..high`` for numbers, ``-`` for none."""
    if not declared:
        return "-"
    if isinstance(declared[0], str):
        return "/".join(map(str, declared))
    return f"{declared[0]:g}..{declared[1]:g}"


@click.command("hosts")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def hosts_command(as_json: bool) -> None:
    """List the host (cloud instance) presets: their EBS IOPS and bandwidth limits with sources."""
    listing = hosts.listing()
    if as_json:
        click.echo(json.dumps(listing, indent=2))
        return
    rows = [[h["name"], f"{h['limits']['baseline_iops']:g}", f"{h['limits']['burst_iops']:g}",
             f"{h['limits']['baseline_mb_s']:g}", f"{h['limits']['burst_mb_s']:g}",
             f"{h['limits']['burst_minutes']:g}"] for h in listing]
    click.echo(table.render(["host", "IOPS", "burst IOPS", "MB/s", "burst MB/s", "burst min"], rows))
    click.echo(f"source: {hosts.AWS_EBS_OPTIMIZED}")

