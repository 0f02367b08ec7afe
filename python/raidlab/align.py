"""Partition alignment against an array's chunk and stripe: ``raidlab align``.

Reads a partition table as ``sfdisk -J`` prints it, or — read-only — a device's topology and
partitions from sysfs, and checks every partition start against

- the physical block (4 KiB on 512e and 4Kn drives): mandatory, or the drive itself does
  read-modify-write;
- the array's chunk (md's minimum_io_size): an I/O that crosses a chunk boundary becomes two
  member I/Os (two read-modify-writes on parity RAID);
- the array's full stripe (md's optimal_io_size): what parity RAID needs for full-stripe writes;
- 1 MiB, the partitioning tools' default grain (informational).

Sources: the rule and the kernel's own
``alignment_offset`` formula (block/blk-settings.c ``queue_limit_alignment_offset``:
``(g + disk_alignment_offset - start_bytes mod g) mod g`` with ``g = max(physical_block_size,
io_min)``); sysfs ``start`` is always in 512-byte units whatever the logical sector size
(block/partitions/core.c); ``sfdisk -J`` starts are in logical sectors and its ``sectorsize``
exists only in newer util-linux (never assume 512); bogus topology (io_opt 33553920 from USB
bridges, io_opt not a multiple of io_min, io_min equal to the physical block meaning "no
topology"); libfdisk's 1 MiB default grain; Percona's "one page per chunk straddles" rule.

Nothing here writes anywhere: sysfs files are only opened for reading.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from raidlab.errors import ConfigError
from raidlab.inputs import parse_json, read_text, show_path
from raidlab.report import table as tables
from raidlab.terminal import printable
from raidlab.workload.units import is_decimal

SECTOR = 512
MIB = 2**20
#: optimal_io_size some USB bridges report (0xFFFF sectors): not a real stripe (util-linux#1221).
BOGUS_IO_OPT = 33553920
#: Physical block assumed for an sfdisk dump, which does not carry it: 4 KiB is what 512e and
#: 4Kn drives have, and 4 KiB alignment is the rule every partitioning tool follows.
DEFAULT_PHYSICAL = 4096


@dataclass
class Topology:
    """What a partition start is checked against (all in bytes; None = not known)."""

    logical: int
    physical: int
    chunk: Optional[int] = None  # io_min of the array
    stripe: Optional[int] = None  # io_opt of the array
    alignment_offset: int = 0  # the whole device's, from sysfs
    source: str = ""
    notes: List[str] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return {"logical_block_bytes": self.logical, "physical_block_bytes": self.physical,
                "chunk_bytes": self.chunk, "stripe_bytes": self.stripe,
                "alignment_offset": self.alignment_offset, "source": self.source, "notes": self.notes}


@dataclass
class Partition:
    node: str
    start: int  # in ``unit`` bytes
    size: int  # in ``unit`` bytes
    unit: int  # bytes per start/size unit: the logical sector (sfdisk) or 512 (sysfs)

    @property
    def start_bytes(self) -> int:
        return self.start * self.unit


@dataclass
class Table:
    device: str
    label: Optional[str]
    partitions: List[Partition]
    source: str


# -- exact arithmetic ------------------------------------------------------------------------


def straddle_fraction(offset: int, io_bytes: int, align_bytes: int, boundary: int) -> Fraction:
    """The exact share of I/Os that cross a boundary.

    I/Os of ``io_bytes`` sit at ``offset + k * align_bytes`` (k = 0, 1, 2, ...: e.g. database
    pages at page-aligned file offsets inside a partition that starts ``offset`` bytes into the
    array); boundaries are at multiples of ``boundary`` (the chunk). An I/O at position p crosses
    one iff ``p mod boundary > boundary - io_bytes``. Over one period, ``p mod boundary`` takes
    the ``boundary / g`` values ``o, o + g, o + 2g, ...`` once each, where ``g =
    gcd(align_bytes, boundary)`` and ``o = offset mod g``. Counting those above
    ``boundary - io_bytes`` gives the fraction; it is exact over whole periods and the limit for
    I/Os spread uniformly. (Derived here; the special case io = align dividing the chunk gives
    Percona's rule: 0 when aligned, io/chunk when not — 16 KiB pages on a 64 KiB
    chunk: 1/4.) An I/O larger than the boundary always crosses one.
    """
    if min(io_bytes, align_bytes, boundary) <= 0:
        raise ValueError("sizes must be positive")
    if io_bytes > boundary:
        return Fraction(1)
    g = math.gcd(align_bytes, boundary)
    o = offset % g
    period = boundary // g
    # smallest j with o + j*g >= boundary - io_bytes + 1
    j_min = -((-(boundary - io_bytes + 1 - o)) // g)
    j_min = min(max(j_min, 0), period)
    return Fraction(period - j_min, period)


def kernel_alignment_offset(start_bytes: int, physical: int, io_min: Optional[int],
                            disk_alignment_offset: int = 0) -> int:
    """What the kernel reports in /sys/block/X/XN/alignment_offset for a partition starting at
    ``start_bytes`` (block/blk-settings.c queue_limit_alignment_offset)."""
    granularity = max(physical, io_min or 0)
    return (granularity + disk_alignment_offset - start_bytes % granularity) % granularity


def _lcm(*values: Optional[int]) -> int:
    result = 1
    for value in values:
        if value:
            result = math.lcm(result, value)
    return result


# -- reading sfdisk -J ------------------------------------------------------------------------


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{what} must be a whole number, got {value!r}")
    return value


def _block_size(value: Any, what: str, low: int = 512) -> int:
    number = _whole(value, what)
    if number < low or number > 1 << 20 or number & (number - 1):
        raise ConfigError(f"{what} must be a power of two from {low} bytes, got {value!r}")
    return number


def parse_sfdisk_json(text: str, name: str = "sfdisk dump",
                      logical_block_bytes: Optional[int] = None) -> Table:
    """A table from ``sfdisk -J DEVICE`` output. Starts are in logical sectors: the dump's
    ``sectorsize`` if present, else ``logical_block_bytes`` (required then)."""
    document = parse_json(text, name)
    table = document.get("partitiontable") if isinstance(document, dict) else None
    if not isinstance(table, dict):
        raise ConfigError(f"{name}: no 'partitiontable' object (expected the output of sfdisk -J DEVICE)")
    unit = table.get("unit", "sectors")
    if unit != "sectors":
        raise ConfigError(f"{name}: unit {unit!r} is not 'sectors'")
    if "sectorsize" in table:
        sector = _block_size(table["sectorsize"], f"{name}: sectorsize")
        if logical_block_bytes is not None and logical_block_bytes != sector:
            raise ConfigError(f"{name}: sectorsize {sector} disagrees with --logical-block-bytes {logical_block_bytes}")
    elif logical_block_bytes is not None:
        sector = _block_size(logical_block_bytes, "--logical-block-bytes")
    else:
        raise ConfigError(f"{name} has no 'sectorsize' (older util-linux): give --logical-block-bytes "
                          "(cat /sys/block/DEV/queue/logical_block_size)")
    partitions = table.get("partitions")
    if not isinstance(partitions, list) or not partitions:
        raise ConfigError(f"{name}: no 'partitions' list to check")
    result = []
    for number, entry in enumerate(partitions, start=1):
        if not isinstance(entry, dict):
            raise ConfigError(f"{name}: partition {number} is not an object")
        for key in ("start", "size"):
            if key not in entry:
                raise ConfigError(f"{name}: partition {number} has no '{key}'")
        node = entry.get("node", f"partition {number}")
        if not isinstance(node, str):
            raise ConfigError(f"{name}: partition {number}: 'node' must be a string")
        start = _whole(entry["start"], f"{name}: {node} start")
        size = _whole(entry["size"], f"{name}: {node} size")
        result.append(Partition(node, start, size, sector))
    device = table.get("device", "")
    label = table.get("label")
    return Table(device if isinstance(device, str) else "", label if isinstance(label, str) else None,
                 result, f"sfdisk -J ({name})")


# -- reading sysfs (read-only) ----------------------------------------------------------------


def _read(path: Path) -> str:
    """A sysfs attribute (read-only, always), through the one reader: ``--sysfs-root`` may point
    anywhere, so a FIFO or a device there is refused rather than blocking."""
    return read_text(path, "sysfs attribute").strip()


def _read_int(path: Path) -> int:
    """A sysfs number: ASCII digits, with a minus sign only for the -1 of alignment_offset (the
    kernel prints these with %u/%d; ``int()`` would also take ``2_048``, ``+2048`` or other
    scripts' digits, which no kernel writes)."""
    text = _read(path)
    if not is_decimal(text[1:] if text.startswith("-") else text):
        raise ConfigError(f"{path}: expected a number, found {text[:40]!r}")
    return int(text)


def read_sysfs(device: str, root: str = "/sys") -> Tuple[Table, Topology]:
    """A device's partitions and topology from ``ROOT/block/DEV`` (sysfs starts are 512-byte
    units, block/partitions/core.c). md arrays also give their level, disks and chunk. A path
    the system cannot even look up (a name over NAME_MAX) is a one-line error."""
    try:
        return _read_sysfs(device, root)
    except OSError as error:
        raise ConfigError(f"cannot read sysfs for {show_path(device)} under {show_path(root)}: "
                          f"{error.strerror or error}") from None


def _read_sysfs(device: str, root: str) -> Tuple[Table, Topology]:
    name = os.path.basename(device.rstrip("/"))
    if not name or name in (".", ".."):
        raise ConfigError(f"{device!r} is not a device name")
    base = Path(root) / "block" / name
    if not base.is_dir():
        raise ConfigError(f"no {base}: give a whole disk or array (e.g. sda, md0, nvme0n1), not a partition")
    queue = base / "queue"
    logical = _block_size(_read_int(queue / "logical_block_size"), f"{queue / 'logical_block_size'}")
    physical = _block_size(_read_int(queue / "physical_block_size"), f"{queue / 'physical_block_size'}", logical)
    topology = Topology(logical=logical, physical=physical, source=f"sysfs {base}")
    io_min = _whole(_read_int(queue / "minimum_io_size"), f"{queue / 'minimum_io_size'}")
    io_opt = _whole(_read_int(queue / "optimal_io_size"), f"{queue / 'optimal_io_size'}")
    if (base / "alignment_offset").exists():
        offset = _read_int(base / "alignment_offset")
        topology.alignment_offset = max(offset, 0)
        if offset < 0:
            topology.notes.append("the device reports alignment_offset -1: its stacked layers disagree (misaligned)")
    if io_min > topology.physical:
        topology.chunk = io_min
    else:
        topology.notes.append(f"minimum_io_size {io_min} = physical block: the device reports no chunk")
    if io_opt == BOGUS_IO_OPT:
        topology.notes.append(f"optimal_io_size {io_opt} is the bogus value USB bridges report; ignored")
    elif io_opt and topology.chunk and io_opt % topology.chunk == 0:
        topology.stripe = io_opt
    elif io_opt:
        topology.notes.append(f"optimal_io_size {io_opt} is not a multiple of minimum_io_size {io_min}; ignored")
    md = base / "md"
    if (md / "level").exists():
        level = _read(md / "level")
        disks = _read(md / "raid_disks") if (md / "raid_disks").exists() else "?"
        chunk = _read(md / "chunk_size") if (md / "chunk_size").exists() else "?"
        topology.notes.append(f"md array: {level}, {disks} disks, chunk_size {chunk} bytes")
    partitions = []
    for child in sorted(base.iterdir(), key=lambda p: (len(p.name), p.name)):
        if child.is_dir() and (child / "partition").exists() and (child / "start").exists():
            start = _whole(_read_int(child / "start"), f"{child / 'start'}")
            size = _whole(_read_int(child / "size"), f"{child / 'size'}") if (child / "size").exists() else 0
            partitions.append(Partition(f"/dev/{child.name}", start, size, SECTOR))
    if not partitions:
        raise ConfigError(f"{name} has no partitions to check")
    return Table(f"/dev/{name}", None, partitions, f"sysfs {base}"), topology


# -- the check ------------------------------------------------------------------------------


def _pct(fraction: Fraction) -> str:
    value = float(fraction) * 100
    return f"{value:.1f}%" if value not in (0, 100) else f"{value:.0f}%"


def check_partition(partition: Partition, topology: Topology, io_bytes: int,
                    align_bytes: int) -> Dict[str, Any]:
    """Every check for one partition, and its fix."""
    start = partition.start_bytes
    off = {"physical": start % topology.physical, "mib": start % MIB,
           "chunk": start % topology.chunk if topology.chunk else None,
           "stripe": start % topology.stripe if topology.stripe else None}
    if off["physical"] or off["chunk"]:
        status = "misaligned"
    elif off["stripe"]:
        status = "stripe-misaligned"
    else:
        status = "aligned"
    straddle: Dict[str, Any] = {}
    for key, boundary in (("physical", topology.physical), ("chunk", topology.chunk),
                          ("stripe", topology.stripe)):
        if not boundary:
            continue
        now = straddle_fraction(start, io_bytes, align_bytes, boundary)
        aligned = straddle_fraction(0, io_bytes, align_bytes, boundary)
        straddle[key] = {"fraction": str(now), "value": float(now),
                         "if_aligned": str(aligned), "if_aligned_value": float(aligned)}
    fix = None
    if status != "aligned":
        grain = _lcm(MIB, topology.physical, topology.logical, topology.chunk, topology.stripe)
        new_bytes = -(-start // grain) * grain
        end_bytes = start + partition.size * partition.unit
        new_start = new_bytes // partition.unit
        fix = {"start": new_start, "start_bytes": new_bytes, "unit_bytes": partition.unit,
               "grain_bytes": grain,
               "size": max(end_bytes - new_bytes, 0) // partition.unit if partition.size else None,
               "logical_start": new_bytes // topology.logical}
    return {
        "node": partition.node, "start": partition.start, "unit_bytes": partition.unit,
        "start_bytes": start, "size": partition.size, "status": status,
        "misalignment_bytes": off,
        "kernel_alignment_offset": kernel_alignment_offset(start, topology.physical, topology.chunk,
                                                           topology.alignment_offset),
        "straddle": straddle, "fix": fix,
    }


def check(table: Table, topology: Topology, io_bytes: int, align_bytes: Optional[int] = None) -> Dict[str, Any]:
    """The whole report as a JSON-ready dict."""
    if io_bytes <= 0 or io_bytes % SECTOR:
        raise ConfigError("the I/O size must be a positive multiple of 512 bytes")
    align_bytes = align_bytes or io_bytes
    if align_bytes <= 0 or align_bytes % SECTOR:
        raise ConfigError("the I/O alignment must be a positive multiple of 512 bytes")
    if topology.physical < topology.logical:
        raise ConfigError(f"physical block {topology.physical} is smaller than the logical block {topology.logical}")
    rows = [check_partition(p, topology, io_bytes, align_bytes) for p in table.partitions]
    return {"device": table.device, "label": table.label, "source": table.source,
            "topology": topology.to_dict(), "io_bytes": io_bytes, "io_align_bytes": align_bytes,
            "partitions": rows, "aligned": all(r["status"] == "aligned" for r in rows)}


def _size(value: Optional[int]) -> str:
    if value is None:
        return "-"
    if value % MIB == 0:
        return f"{value // MIB} MiB"
    if value % 1024 == 0:
        return f"{value // 1024} KiB"
    return f"{value} B"


def render(report: Dict[str, Any]) -> str:
    """The text report: a table, then a sentence per partition that needs fixing."""
    topo = report["topology"]
    io = report["io_bytes"]
    head = (f"raidlab align: {report['device'] or 'device'} ({report['source']}"
            + (f", {report['label']}" if report["label"] else "") + f"): logical {topo['logical_block_bytes']} B, "
            f"physical {topo['physical_block_bytes']} B, chunk {_size(topo['chunk_bytes'])}, "
            f"stripe {_size(topo['stripe_bytes'])}; I/O {_size(io)}"
            + (f" at {_size(report['io_align_bytes'])} steps" if report["io_align_bytes"] != io else ""))
    lines = [head] + [f"note: {note}" for note in topo["notes"]]
    unit = report["partitions"][0]["unit_bytes"] if report["partitions"] else SECTOR
    headers = ["partition", f"start ({unit} B)", "bytes", "4K off", "chunk off", "stripe off",
               "kernel align", f"straddle {_size(io)}", "status", "fix start"]
    rows = []
    for row in report["partitions"]:
        off = row["misalignment_bytes"]
        chunk_straddle = row["straddle"].get("chunk") or row["straddle"]["physical"]
        rows.append([row["node"], row["start"], row["start_bytes"], off["physical"],
                     "-" if off["chunk"] is None else off["chunk"],
                     "-" if off["stripe"] is None else off["stripe"], row["kernel_alignment_offset"],
                     _pct(Fraction(chunk_straddle["fraction"])), row["status"],
                     row["fix"]["start"] if row["fix"] else "-"])
    lines += ["", *tables.render(headers, rows).split("\n"), ""]
    for row in report["partitions"]:
        off = row["misalignment_bytes"]
        if row["status"] == "aligned":
            continue
        parts = []
        if off["physical"]:
            parts.append(f"{off['physical']} bytes past a {topo['physical_block_bytes']}-byte physical block "
                         f"(writes smaller than a block make the drive read-modify-write)")
        if off["chunk"]:
            parts.append(f"{off['chunk']} bytes into a {_size(topo['chunk_bytes'])} chunk")
        if off["stripe"]:
            parts.append(f"{off['stripe']} bytes into a {_size(topo['stripe_bytes'])} stripe "
                         f"(full-stripe writes become partial: read-modify-write on parity RAID)")
        sentence = f"{row['node']} starts at byte {row['start_bytes']}: " + "; ".join(parts) + "."
        chunk = row["straddle"].get("chunk")
        if chunk and chunk["value"] > chunk["if_aligned_value"]:
            sentence += (f" {_pct(Fraction(chunk['fraction']))} of {_size(io)} I/Os (exactly {chunk['fraction']}) "
                         f"straddle two chunks — two member I/Os each — against "
                         f"{_pct(Fraction(chunk['if_aligned']))} if aligned.")
        fix = row["fix"]
        sentence += (f" Fix: recreate it at sector {fix['start']} ({fix['unit_bytes']}-byte units; byte "
                     f"{fix['start_bytes']}, a multiple of {_size(fix['grain_bytes'])})")
        if fix["size"] is not None:
            sentence += f" with size {fix['size']} to keep its end"
        if fix["unit_bytes"] != topo["logical_block_bytes"]:
            sentence += f" — logical sector {fix['logical_start']} for fdisk/sfdisk"
        sentence += "; the data must be copied off and back."
        lines.append(sentence)
    if report["aligned"]:
        lines.append("Every partition is aligned to the physical block"
                     + (", the chunk" if topo["chunk_bytes"] else "")
                     + (" and the stripe" if topo["stripe_bytes"] else "") + ".")
    if not topo["chunk_bytes"]:
        lines.append("No chunk known: give --level/--devices/--chunk-kib (or --chunk-kib for a hardware "
                     "RAID LUN) to check against the array.")
    # Device, partition and md names come from sysfs or a dump: shown with controls escaped.
    return "\n".join(printable(line) for line in lines)
