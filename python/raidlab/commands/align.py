"""`raidlab align`: check partition starts against an array's chunk, stripe and 4 KiB sectors.
Read-only: it reads an sfdisk -J dump or sysfs, and never writes anything."""

from __future__ import annotations

import json
import sys
from typing import Optional

import click

from raidlab import align as aligner
from raidlab.array import DEFAULT_CHUNK_KIB, Array
from raidlab.cli_types import finite, whole
from raidlab.errors import ConfigError
from raidlab.inputs import read_stdin, read_text, show_path


def _geometry(topology: aligner.Topology, level: Optional[str], devices: Optional[int],
              layout: Optional[str], chunk_kib: Optional[int]) -> None:
    """The array's chunk and stripe from the options (md-exact through raidlab.Array); they
    replace what sysfs reported, with a note when they differ."""
    if level is None and (devices is not None or layout is not None):
        raise click.UsageError("--devices and --layout describe an array: give --level too")
    if level is not None:
        if devices is None:
            raise click.UsageError("--level needs --devices")
        array = Array(level=level, devices=devices, layout=layout,
                      chunk_kib=chunk_kib if chunk_kib is not None else DEFAULT_CHUNK_KIB)
        chunk = array.io_min_bytes if array.io_opt_bytes else None
        stripe = array.io_opt_bytes or None
        what = f"raid{array.level}" + (f" {array.layout}" if array.layout else "") + f" x{array.devices}"
        if chunk_kib is None and array.level != 1:
            topology.notes.append(f"chunk not given: mdadm's default {DEFAULT_CHUNK_KIB} KiB assumed")
    elif chunk_kib is not None:
        if chunk_kib < 4 or chunk_kib & (chunk_kib - 1):
            raise ConfigError(f"--chunk-kib {chunk_kib}: a chunk is a power of two of at least 4 KiB")
        chunk, stripe, what = chunk_kib * 1024, None, f"{chunk_kib} KiB chunk"
    else:
        return
    if topology.chunk is not None and (topology.chunk, topology.stripe) != (chunk, stripe):
        topology.notes.append(f"the device reports chunk {topology.chunk} / stripe {topology.stripe} bytes; "
                              f"checking against the given {what} instead")
    topology.chunk, topology.stripe = chunk, stripe
    topology.notes.append(f"geometry from the options: {what} (io_min {chunk}, io_opt {stripe})")


#: align's exit statuses, as linters use them (cli.EXIT_FINDINGS, EXIT_USAGE).
EXIT_ALIGNED, EXIT_MISALIGNED = 0, 1

_EPILOG = """\b
Exit status:
  0  every partition is aligned (physical block, and chunk and stripe when known)
  1  checked: at least one partition is misaligned or stripe-misaligned (the report says how to fix it)
  2  bad input: one line 'raidlab: error: ...' on stderr, nothing checked"""


@click.command("align", epilog=_EPILOG)
@click.argument("dump", required=False, metavar="[SFDISK_JSON|-]")
@click.option("--device", metavar="DEV", help="Read the partitions and topology of DEV from sysfs instead "
              "(read-only), e.g. sda, md0, nvme0n1.")
@click.option("--sysfs-root", default="/sys", show_default=True, metavar="DIR",
              help="Where sysfs is mounted (for checking a copy).")
@click.option("--level", metavar="LEVEL", help="The array's RAID level (with --devices): its chunk and stripe "
              "come from raidlab's md-exact io_min/io_opt.")
@click.option("--devices", type=whole(1, 64), help="Members of the array.")
@click.option("--layout", metavar="NAME", help="mdadm layout name [default: mdadm's].")
@click.option("--chunk-kib", type=whole(1, 1 << 20), help="Chunk size in KiB (alone: a hardware RAID "
              "LUN's strip size).")
@click.option("--logical-block-bytes", type=whole(), help="Logical sector size, for a dump without 'sectorsize'.")
@click.option("--physical-block-bytes", type=whole(), help=f"Physical block size for a dump "
              f"[default: {aligner.DEFAULT_PHYSICAL}, or the logical size if larger].")
@click.option("--io-kib", type=finite(0.5, 1 << 20), default=16, show_default=True,
              help="I/O size whose chunk straddling is counted (e.g. 16 for InnoDB pages, 8 for PostgreSQL).")
@click.option("--io-align-kib", type=finite(0.5, 1 << 20),
              help="Where those I/Os start: multiples of this inside the partition [default: the I/O size].")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def align_command(dump, device, sysfs_root, level, devices, layout, chunk_kib, logical_block_bytes,
                  physical_block_bytes, io_kib, io_align_kib, as_json) -> int:
    """Check partition starts against the array's chunk, its stripe and 4 KiB physical sectors.

    Reads 'sfdisk -J DEVICE' output from a file or stdin (-), or the live topology of --device
    from sysfs; reports each start's misalignment in bytes, the kernel's alignment_offset, the
    exact fraction of --io-kib I/Os that straddle a chunk, and the start sector that fixes it.
    Nothing is ever written. Exits 1 when a partition is misaligned (see below).
    """
    if dump is not None and device is not None:
        raise click.UsageError("give an sfdisk dump or --device, not both")
    if device is not None:
        table, topology = aligner.read_sysfs(device, sysfs_root)
        if logical_block_bytes is not None or physical_block_bytes is not None:
            raise click.UsageError("--logical/--physical-block-bytes are for dumps; sysfs has the real values")
    else:
        if dump is None:
            if sys.stdin is None or sys.stdin.isatty():
                raise click.UsageError("give an sfdisk -J dump (a file, or - for stdin) or --device DEV")
            dump = "-"
        if dump == "-":
            text, name = read_stdin("sfdisk dump"), "stdin"
        else:
            text, name = read_text(dump, "sfdisk dump"), show_path(dump)
        table = aligner.parse_sfdisk_json(text, name, logical_block_bytes)
        logical = table.partitions[0].unit
        if physical_block_bytes is None:
            physical = max(aligner.DEFAULT_PHYSICAL, logical)
        else:
            physical = physical_block_bytes
            if physical < logical or physical & (physical - 1):
                raise ConfigError(f"--physical-block-bytes {physical}: a power of two no smaller than the "
                                  f"logical sector ({logical})")
        topology = aligner.Topology(logical=logical, physical=physical, source=table.source)
        if physical_block_bytes is None:
            topology.notes.append(f"physical block assumed {physical} bytes (sfdisk dumps do not carry it; "
                                  "--physical-block-bytes sets it)")
    _geometry(topology, level, devices, layout, chunk_kib)
    io_bytes = int(round(io_kib * 1024))
    align_bytes = int(round(io_align_kib * 1024)) if io_align_kib is not None else None
    report = aligner.check(table, topology, io_bytes, align_bytes)
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(aligner.render(report))
    return EXIT_ALIGNED if report["aligned"] else EXIT_MISALIGNED
