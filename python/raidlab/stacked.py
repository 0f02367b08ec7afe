"""Stacked md arrays (issue 24 §2): raid1+0, raid5+0, raid6+0 and raid0+1 built as md arrays
over md arrays, the way people build them with mdadm (inner arrays first, then the outer array
over /dev/md0 /dev/md1 ...). The core models them (crates/raidlab-core/src/layout/stack.rs,
plan/stacked.rs); this module holds what the Python side needs: the CLI options, the geometry,
and the mdadm commands that build one.

Physical member K (``--fail K@T``, ``--failed K``) is member ``K % per_set`` of inner array
``K // per_set``: for ``--level 1+0 --devices 4``, drives 0 and 1 are /dev/md0's pair, 2 and 3
/dev/md1's.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

import click

from raidlab import _core

#: The stacked levels, by canonical name.
STACKED_LEVELS = ("1+0", "5+0", "6+0", "0+1")


def is_stacked(level: Any) -> bool:
    """Whether ``level`` (a normalised level text) names a stack."""
    return _core.parse_stacked_level(str(level)) is not None


def options(command: Callable) -> Callable:
    """The stacked-array options of a simulating command (declared once in raidlab.run.Design)."""
    from raidlab.run import DEFAULTS, cli_type

    command = click.option("--outer-chunk-kib", "outer_chunk_kib", type=cli_type("outer_chunk_kib"),
                           default=DEFAULTS["outer_chunk_kib"], show_default=True,
                           help="Stacked levels: chunk of the outer raid0 in KiB (--chunk-kib is the inner arrays').")(command)
    command = click.option("--inner-devices", "inner_devices", type=cli_type("inner_devices"),
                           default=DEFAULTS["inner_devices"], show_default=True,
                           help="Stacked levels (1+0, 5+0, 6+0, 0+1): members of each inner array "
                                "(0: raid1 pairs for 1+0, two inner arrays otherwise).")(command)
    return command


def geometry(design: Any, member_kib: int) -> Dict[str, Any]:
    """The stack's geometry from the core: sets, inner devices, chunks, the outer array's data
    offset on each inner array, capacity and the stacked io_min/io_opt."""
    return dict(_core.stacked_geometry({
        "level": design.level, "layout": design.layout, "chunk_kib": design.chunk_kib,
        "devices": design.devices, "member_kib": member_kib, "inner_devices": design.inner_devices,
        "outer_chunk_kib": design.outer_chunk_kib}))


def mdadm_commands(geo: Dict[str, Any], disks: List[str], first_md: int = 0) -> List[Dict[str, str]]:
    """The mdadm commands that build the stack over ``disks`` (physical members in order), each
    with a line of why: every inner array (``mdadm --create`` with its level, layout and chunk),
    then the outer array over them, then the filesystem aligned to the outer geometry."""
    per, sets = geo["inner_devices"], geo["sets"]
    inner_names = [f"/dev/md{first_md + i}" for i in range(sets)]
    outer_name = f"/dev/md{first_md + sets}"
    steps = []
    for i, name in enumerate(inner_names):
        members = " ".join(disks[i * per:(i + 1) * per])
        layout = f" --layout={geo['inner_layout']}" if geo["inner_layout"] else ""
        chunk = "" if geo["inner_level"] == 1 else f" --chunk={geo['inner_chunk_kib']}K"
        steps.append({"command": f"mdadm --create {name} --level={geo['inner_level']} --raid-devices={per}{layout}"
                                 f"{chunk} {members}",
                      "why": f"inner array {i + 1} of {sets}: raid{geo['inner_level']} of {per} drives "
                             "(mdadm(8) --create; metadata 1.2 by default)"})
    chunk = "" if geo["outer_level"] == 1 else f" --chunk={geo['outer_chunk_kib']}K"
    steps.append({"command": f"mdadm --create {outer_name} --level={geo['outer_level']} --raid-devices={sets}"
                             f"{chunk} {' '.join(inner_names)}",
                  "why": f"the outer raid{geo['outer_level']} over the inner arrays: raid{geo['name']} "
                         f"(its data starts {geo['outer_offset_sectors'] * 512 // 2**20} MiB into each inner array, "
                         "mdadm's 1.2 data offset)"})
    io_min, io_opt = geo["io_min_bytes"], geo["io_opt_bytes"]
    if io_opt and io_min >= 4096 and io_opt % io_min == 0:
        sw = io_opt // io_min
        steps.append({"command": f"mkfs.xfs -d su={io_min // 1024}k,sw={sw} {outer_name}",
                      "why": f"stripe unit and width from {outer_name}'s minimum_io_size {io_min} and "
                             f"optimal_io_size {io_opt} bytes, which md stacks from both levels "
                             "(block/blk-settings.c blk_stack_limits: the larger io_min, the lcm of io_opt)"})
        steps.append({"command": f"mkfs.ext4 -b 4096 -E stride={io_min // 4096},stripe-width={io_opt // 4096} {outer_name}",
                      "why": "the same geometry in ext4's 4 KiB blocks (mke2fs(8) -E stride, stripe_width)"})
    return steps
