"""What ``raidlab layout`` shows: the JSON document and the text report with a stripe diagram.

The diagram draws members as columns and member chunks as rows, labelled as in the md
documentation's pictures: ``D<n>`` for array chunk n, ``P`` and ``Q`` for parity, ``-`` for space
md leaves unused (blank past a member's end).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from raidlab._core import MAX_MAP_ENTRIES
from raidlab.array import Array, MapCell
from raidlab.errors import ConfigError
from raidlab.units import human_bytes

#: Stripe rows the text diagram shows unless told otherwise.
DEFAULT_DIAGRAM_ROWS = 8

#: Block size mkfs.ext4 is assumed to use when converting io hints to stride/stripe_width.
EXT4_BLOCK_BYTES = 4096


def json_document(array: Array) -> Dict[str, object]:
    """The ``--json`` document: geometry, io hints and the full map (plus Q exponents for raid6).

    :raises ConfigError: when the map has more than ``MAX_MAP_ENTRIES`` cells (checked before
        any is built).
    """
    chunks = array.member_chunks
    if sum(chunks) > MAX_MAP_ENTRIES:
        raise ConfigError(
            f"layout --json: the full chunk map has {sum(chunks)} cells ({array.devices} members, up to "
            f"{max(chunks)} chunks each), more than the limit of {MAX_MAP_ENTRIES}; draw the first rows "
            "as text (layout --rows N, without --json) or use a larger --chunk-kib")
    document: Dict[str, object] = {
        "level": array.level,
        "layout": array.layout,
        "devices": array.devices,
        "chunk_kib": array.chunk_kib,
        "capacity_bytes": array.capacity_bytes,
        "io_min_bytes": array.io_min_bytes,
        "io_opt_bytes": array.io_opt_bytes,
        "map": array.map_table(),
    }
    if array.level == 6:
        document["q_log_coeff"] = array.q_log_coeff()
    return document


def mkfs_hints(array: Array) -> List[Tuple[str, str]]:
    """What mkfs would take from the array's io hints, as (tool, options) pairs.

    mkfs.xfs reads minimum_io_size as the stripe unit (su) and optimal_io_size / su as the
    stripe width (sw); mkfs.ext4 takes the same in filesystem blocks (stride, stripe_width).
    Arrays without a stripe (raid1) give no hints.
    """
    return _mkfs_hints(array.io_min_bytes, array.io_opt_bytes)


def _mkfs_hints(io_min: int, io_opt: int) -> List[Tuple[str, str]]:
    """mkfs_hints from md's minimum_io_size and optimal_io_size (bytes)."""
    if io_opt == 0 or io_min < EXT4_BLOCK_BYTES:
        return [("mkfs", "no stripe geometry to align to")]
    width = io_opt // io_min
    stride_blocks = io_min // EXT4_BLOCK_BYTES
    return [
        ("mkfs.xfs", f"-d su={io_min // 1024}k,sw={width}"),
        (
            "mkfs.ext4",
            f"-E {ext4_stripe_options(stride_blocks, stride_blocks * width)}"
            f"  ({EXT4_BLOCK_BYTES // 1024} KiB blocks)",
        ),
    ]


def ext4_stripe_options(stride: int, stripe_width: int) -> str:
    """mkfs.ext4's ``-E`` value for a stripe, in the one spelling raidlab prints everywhere:
    mke2fs(8) documents ``stride=`` and ``stripe_width=`` (e2fsprogs misc/mke2fs.c
    ``parse_extended_opts`` also accepts ``stripe-width``)."""
    return f"stride={stride},stripe_width={stripe_width}"


def _member_sizes_line(member_kib_list: Sequence[int]) -> str:
    if len(set(member_kib_list)) == 1:
        size = member_kib_list[0]
        human = human_bytes(size * 1024)
        return f"{size} KiB each" if human == f"{size} KiB" else f"{size} KiB ({human}) each"
    return ", ".join(str(size) for size in member_kib_list) + " KiB"


def header_lines(array: Array) -> List[str]:
    """The report's key/value header: geometry, capacity, io hints and mkfs options."""
    chunk = f"{array.chunk_kib} KiB"
    if array.level == 1:
        chunk += " (map granularity only: raid1 has no chunks)"
    copies = f" ({array.copies} copies of each chunk)" if array.copies > 1 else ""
    rows = [
        ("level", f"raid{array.level}"),
        ("layout", (array.layout or "none") + copies),
        ("devices", str(array.devices)),
        ("chunk", chunk),
        ("member size", _member_sizes_line(array.member_kib_list)),
        ("capacity", f"{array.capacity_bytes} bytes ({human_bytes(array.capacity_bytes)})"),
        ("io_min", f"{array.io_min_bytes} bytes ({human_bytes(array.io_min_bytes)})"),
        ("io_opt", f"{array.io_opt_bytes} bytes ({human_bytes(array.io_opt_bytes)})"),
    ]
    rows += mkfs_hints(array)
    width = max(len(key) for key, _ in rows)
    return [f"{key.ljust(width)}  {value}" for key, value in rows]


def cell_label(cell: MapCell) -> str:
    """A map cell as the md docs draw it: D<n>, P, Q, or '-' for unused space."""
    if cell is None:
        return "-"
    if isinstance(cell, int):
        return f"D{cell}"
    return cell


def _grid(
    columns: Sequence[Sequence[object]],
    rows: int,
    label: Callable[[object], str],
    separators: Dict[int, str],
    headers: Optional[Sequence[str]] = None,
) -> List[str]:
    """Rows of a member-per-column table; cells past a member's end are blank. Columns are
    headed ``disk0``, ``disk1``, ... unless ``headers`` names them."""
    cells = [
        [label(column[row]) if row < len(column) else "" for column in columns]
        for row in range(rows)
    ]
    headers = list(headers) if headers is not None else [f"disk{member}" for member in range(len(columns))]
    width = max([len(h) for h in headers] + [len(c) for line in cells for c in line])
    row_width = max(3, len(str(max(rows - 1, 0))))
    lines = ["row".rjust(row_width) + "  " + "  ".join(h.ljust(width) for h in headers).rstrip()]
    for row, line in enumerate(cells):
        if row in separators:
            lines.append(separators[row])
        padded = "  ".join(cell.ljust(width) for cell in line).rstrip()
        lines.append(str(row).rjust(row_width) + "  " + padded)
    return lines


def _zone_notes(array: Array) -> Tuple[List[str], Dict[int, str]]:
    """raid0 with unequal members: a note per zone, and separator lines for the diagram."""
    zones = array.raid0_zones()
    if len(zones) < 2:
        return [], {}
    notes = ["raid0 zones (md stripes each zone across the members still holding space):"]
    separators = {}
    for number, (start, end, members) in enumerate(zones):
        disks = ", ".join(f"disk{m}" for m in members)
        notes.append(f"  zone {number}: rows {start}-{end - 1} across {disks}")
        if number > 0:
            separators[start] = f"--- zone {number} starts: {disks} ---"
    return notes, separators


def _legend(array: Array) -> str:
    """What the diagram's labels mean for this level."""
    parts = ["Dn = array chunk n"]
    if array.copies > 1:
        parts[0] += " (every copy shown)"
    if array.level in (4, 5):
        parts.append("P = parity")
    elif array.level == 6:
        parts.append("P, Q = parity and syndrome")
    parts.append("- = unused")
    return "; ".join(parts)


def render_text(array: Array, rows: int = DEFAULT_DIAGRAM_ROWS, show_q: bool = False) -> str:
    """The full text report: header, stripe diagram of the first ``rows`` rows, notes.

    :param show_q: for raid6, add a second grid with each data cell's Q coefficient exponent.
    """
    lines = header_lines(array) + [""]
    lines += diagram_lines(array, rows, show_q)
    return "\n".join(lines) + "\n"


def diagram_lines(array: Array, rows: int, show_q: bool = False, title: str = "stripe map",
                  headers: Optional[Sequence[str]] = None, offset: str = "member offset") -> List[str]:
    """The stripe diagram of ``array``'s first ``rows`` rows (and raid6's Q grid with
    ``show_q``), its columns named by ``headers`` (disk0, disk1, ... by default)."""
    lines: List[str] = []
    total_rows = max(array.member_chunks)
    shown = min(rows, total_rows)
    zone_notes, separators = _zone_notes(array)
    if shown:
        lines.append(f"{title}: rows 0-{shown - 1} of {total_rows}")
    else:
        lines.append(f"{title}: 0 of {total_rows} rows shown")
    lines.append(f"(row r = {offset} r x {array.chunk_kib} KiB; {_legend(array)})")
    if shown:
        table = array.map_table(rows=shown)
        lines += _grid(table, shown, cell_label, separators, headers)
        if shown < total_rows:
            lines.append(f"... {total_rows - shown} more rows (--rows N shows more)")
    lines += zone_notes
    if show_q and array.level != 6:
        lines.append("(Q coefficients exist only for raid6)")
    if show_q and array.level == 6 and shown:
        lines.append("")
        lines.append("Q coefficients: data cell D adds g^e * D to its row's Q (g = 2 in GF(2^8))")
        coefficients = array.q_log_coeff(rows=shown)
        roles = array.map_table(rows=shown)
        merged: List[List[object]] = [
            [e if e is not None else role for e, role in zip(q_column, role_column)]
            for q_column, role_column in zip(coefficients, roles)
        ]
        lines += _grid(merged, shown, _q_label, {}, headers)
    return lines


def _q_label(cell: object) -> str:
    """A Q-coefficient grid cell: g^e for data, the role letter for parity, '-' for unused."""
    if cell is None:
        return "-"
    if isinstance(cell, int):
        return f"g^{cell}"
    return str(cell)



# ---- stacked levels (1+0, 5+0, 6+0, 0+1): an outer md array over inner md arrays ----

def _inner_members(geo: Dict[str, Any]) -> List[List[int]]:
    """Each inner array's physical drives: inner array i holds drives i*N .. i*N+N-1."""
    per = geo["inner_devices"]
    return [list(range(i * per, (i + 1) * per)) for i in range(geo["sets"])]


def stacked_json(geo: Dict[str, Any], inner: Array, outer: Array) -> Dict[str, object]:
    """The ``--json`` document of a stack: its geometry, each inner array's drives, the outer
    array's map over the inner arrays and the inner arrays' (shared) map over their drives."""
    return {
        "level": geo["name"],
        "devices": geo["sets"] * geo["inner_devices"],
        "capacity_bytes": geo["capacity_bytes"],
        "io_min_bytes": geo["io_min_bytes"],
        "io_opt_bytes": geo["io_opt_bytes"],
        "outer_offset_bytes": geo["outer_offset_sectors"] * 512,
        "inner_arrays": [{"name": f"md{1 + i}", "members": members}
                         for i, members in enumerate(_inner_members(geo))],
        "outer": {"name": "md0", **json_document(outer)},
        "inner": json_document(inner),
    }


def stacked_header(geo: Dict[str, Any], inner: Array) -> List[str]:
    """The key/value header of a stack: levels, arrays, chunks, capacity, io hints, mkfs."""
    sets, per = geo["sets"], geo["inner_devices"]
    inner_name = f"raid{geo['inner_level']}" + (f" {inner.layout}" if inner.layout else "")
    chunks = f"inner {geo['inner_chunk_kib']} KiB, outer {geo['outer_chunk_kib']} KiB"
    if geo["outer_level"] == 1:
        chunks = f"inner {geo['inner_chunk_kib']} KiB (the outer raid1 has none)"
    rows = [
        ("level", f"raid{geo['name']}: outer raid{geo['outer_level']} md0 over {sets} inner {inner_name} arrays"),
        ("devices", f"{sets * per} ({sets} inner arrays of {per})"),
        ("chunk", chunks),
        ("member size", _member_sizes_line(inner.member_kib_list)),
        ("outer offset", f"{geo['outer_offset_sectors'] * 512 // 2**20} MiB into each inner array (mdadm 1.2 data offset)"),
        ("capacity", f"{geo['capacity_bytes']} bytes ({human_bytes(geo['capacity_bytes'])})"),
        ("io_min", f"{geo['io_min_bytes']} bytes ({human_bytes(geo['io_min_bytes'])})"),
        ("io_opt", f"{geo['io_opt_bytes']} bytes ({human_bytes(geo['io_opt_bytes'])})"),
    ]
    rows += _mkfs_hints(geo["io_min_bytes"], geo["io_opt_bytes"])
    rows += [("" if i else "inner arrays", f"md{1 + i} = " + ", ".join(f"disk{m}" for m in members))
             for i, members in enumerate(_inner_members(geo))]
    width = max(len(key) for key, _ in rows)
    return [f"{key.ljust(width)}  {value}" for key, value in rows]


def stacked_text(geo: Dict[str, Any], inner: Array, outer: Array, rows: int = DEFAULT_DIAGRAM_ROWS,
                 show_q: bool = False) -> str:
    """The text report of a stack: header, the outer array's chunk map over the inner arrays,
    then each inner array's stripe diagram over its drives."""
    lines = stacked_header(geo, inner) + [""]
    names = [f"md{1 + i}" for i in range(geo["sets"])]
    lines += diagram_lines(outer, rows, title=f"outer raid{geo['outer_level']} md0 over {', '.join(names)}",
                           headers=names, offset="offset past the outer data offset")
    for name, members in zip(names, _inner_members(geo)):
        lines.append("")
        lines += diagram_lines(inner, rows, show_q, title=f"inner array {name}",
                               headers=[f"disk{m}" for m in members])
    return "\n".join(lines) + "\n"
