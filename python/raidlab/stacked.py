"""Stacked md arrays: raid1+0, raid5+0, raid6+0 and raid0+1 built as md arrays
over md arrays, the way people build them with mdadm (inner arrays first, then the outer array
over /dev/md0 /dev/md1 ...). The core models them (crates/raidlab-core/src/layout/stack.rs,
plan/stacked.rs); this module holds what the Python side needs: the geometry and the mdadm
commands that build one.

Physical member K (``--fail K@T``, ``--failed K``) is member ``K % per_set`` of inner array
``K // per_set``: for ``--level 1+0 --devices 4``, drives 0 and 1 are /dev/md0's pair, 2 and 3
/dev/md1's.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from raidlab import _core
from raidlab.array import Array
from raidlab.errors import ConfigError, DataLossError
from raidlab.layout import ext4_stripe_options

#: The stacked levels, by canonical name.
STACKED_LEVELS = ("1+0", "5+0", "6+0", "0+1")


def is_stacked(level: Any) -> bool:
    """Whether ``level`` (a normalised level text) names a stack."""
    text = str(level)
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        return False  # not a name the core can read: normalise_level refuses it
    return _core.parse_stacked_level(text) is not None


def stacked_arrays(level: str, devices: int, chunk_kib: int, layout: Optional[str], member_kib: int,
                   inner_devices: int, outer_chunk_kib: int) -> Tuple[Dict[str, Any], Array, Array]:
    """(the core's stacked geometry, one inner array, the outer array over the inner ones).

    Every inner array is the same md array over its own drives (``layout`` is theirs); the
    outer array's members are the inner arrays' data past mdadm's 1.2 data offset, as mdadm
    builds it over /dev/md1 .... Raises ConfigError for counts md would not build as the level
    promises.
    """
    name = _core.parse_stacked_level(str(level))
    check_counts(name, devices, inner_devices, where="layout: ")
    geo = dict(_core.stacked_geometry({
        "level": name, "layout": layout, "chunk_kib": chunk_kib, "devices": devices,
        "member_kib": member_kib, "inner_devices": inner_devices, "outer_chunk_kib": outer_chunk_kib}))
    inner = Array(level=geo["inner_level"], devices=geo["inner_devices"], chunk_kib=geo["inner_chunk_kib"],
                  layout=geo["inner_layout"], member_kib=member_kib)
    outer_kib = (inner.capacity_bytes - geo["outer_offset_sectors"] * 512) // 1024
    outer = Array(level=geo["outer_level"], devices=geo["sets"], chunk_kib=geo["outer_chunk_kib"],
                  member_kib=outer_kib)
    if outer.capacity_bytes != geo["capacity_bytes"]:  # pragma: no cover - the core and md disagree
        raise AssertionError((outer.capacity_bytes, geo["capacity_bytes"]))
    return geo, inner, outer


#: Fewest drives of each inner level: md's minimums (raid5 of 2 as mdadm creates it, raid6 of 4),
#: and 2 for raid0 and raid1, whose one-drive arrays mdadm creates only with --force and which
#: would make a raid0+1 of one-disk halves (a plain mirror) or a raid1+0 of one-disk "pairs".
_INNER_MIN = {0: 2, 1: 2, 5: 2, 6: 4}


def check_counts(level: str, devices: int, inner_devices: int, where: str = "") -> None:
    """Refuses a stack whose device count does not make what the help promises (one line naming
    the valid counts): raid1 pairs for 1+0 and two equal inner arrays otherwise, each of at least
    its level's fewest drives; with --inner-devices N, 2 or more whole inner arrays of N. The core
    splits any count it can divide (3 drives made a raid0+1 of three one-disk halves)."""
    inner = int(str(level).split("+")[0])  # "0+1": raid0 inner arrays under an outer raid1
    least = _INNER_MIN[inner]
    name = f"raid{level} of {devices} devices"
    if inner_devices:
        if inner_devices < least:
            raise ConfigError(f"{where}{name} with --inner-devices {inner_devices}: an inner raid{inner} needs at "
                              f"least {least} drives")
        valid = range(2 * inner_devices, _core.MAX_DEVICES + 1, inner_devices)
        why = f"2 or more inner raid{inner} arrays of {inner_devices} (--inner-devices)"
    else:
        valid = range(2 * least, _core.MAX_DEVICES + 1, 2)
        why = ("raid1 pairs, 2 or more" if inner == 1 else
               f"two inner raid{inner} arrays of equal size, each of {least} or more drives")
    if devices not in valid:
        counts = ", ".join(str(n) for n in list(valid)[:3])
        upto = f", ... up to {valid[-1]}" if len(valid) > 3 else ""
        raise ConfigError(f"{where}{name}: the array is {why}; valid counts are {counts or 'none'}{upto}"
                          + ("" if inner_devices else " (or give --inner-devices)"))


def geometry(design: Any, member_kib: int) -> Dict[str, Any]:
    """The stack's geometry from the core: sets, inner devices, chunks, the outer array's data
    offset on each inner array, capacity and the stacked io_min/io_opt."""
    return dict(_core.stacked_geometry({
        "level": design.level, "layout": design.layout, "chunk_kib": design.chunk_kib,
        "devices": design.devices, "member_kib": member_kib, "inner_devices": design.inner_devices,
        "outer_chunk_kib": design.outer_chunk_kib}))


def mdadm_commands(geo: Dict[str, Any], disks: List[str], bitmap: Callable[[int], List[str]] = lambda level: []
                   ) -> List[Dict[str, str]]:
    """The mdadm commands that build the stack over ``disks`` (physical members in order), each
    with a line of why: every inner array (``mdadm --create /dev/md1 ...`` with its level, layout
    and chunk), then the outer array over them as /dev/md0 (so what the filesystem sits on keeps
    the usual name), then the filesystem aligned to the stacked geometry. ``bitmap(level)`` gives
    the write-intent bitmap options for an array of that level."""
    per, sets = geo["inner_devices"], geo["sets"]
    inner_names = [f"/dev/md{1 + i}" for i in range(sets)]
    steps = []
    for i, name in enumerate(inner_names):
        members = " ".join(disks[i * per:(i + 1) * per])
        layout = f" --layout={geo['inner_layout']}" if geo["inner_layout"] and geo["inner_level"] != 0 else ""
        chunk = "" if geo["inner_level"] == 1 else f" --chunk={geo['inner_chunk_kib']}K"
        options = "".join(f" {o}" for o in bitmap(geo["inner_level"]))
        steps.append({"command": f"mdadm --create {name} --metadata=1.2 --level={geo['inner_level']} "
                                 f"--raid-devices={per}{layout}{chunk}{options} {members}",
                      "why": f"inner array {i + 1} of {sets}: raid{geo['inner_level']} of {per} drives, with its "
                             "own md settings, recovery and (raid5/6) stripe cache (mdadm(8) --create)"})
    chunk = "" if geo["outer_level"] == 1 else f" --chunk={geo['outer_chunk_kib']}K"
    options = "".join(f" {o}" for o in bitmap(geo["outer_level"]))
    steps.append({"command": f"mdadm --create /dev/md0 --metadata=1.2 --level={geo['outer_level']} "
                             f"--raid-devices={sets}{chunk}{options} {' '.join(inner_names)}",
                  "why": f"the outer raid{geo['outer_level']} over the inner arrays makes raid{geo['name']}, "
                         f"{geo['capacity_bytes'] / 1e12:.3f} TB usable; its data starts "
                         f"{geo['outer_offset_sectors'] * 512 // 2**20} MiB into each inner array (mdadm's 1.2 "
                         "data offset, as on a disk)"})
    io_min, io_opt = geo["io_min_bytes"], geo["io_opt_bytes"]
    if io_opt and io_min >= 4096 and io_opt % io_min == 0:
        steps.append({"command": f"mkfs.xfs -d su={io_min // 1024}k,sw={io_opt // io_min} /dev/md0",
                      "why": f"stripe unit and width from md0's minimum_io_size {io_min} and optimal_io_size "
                             f"{io_opt} bytes, which md stacks from both levels (block/blk-settings.c "
                             "blk_stack_limits: the larger io_min, the least common multiple of io_opt)"})
        steps.append({"command": f"mkfs.ext4 -b 4096 -E {ext4_stripe_options(io_min // 4096, io_opt // 4096)} /dev/md0",
                      "why": "the same geometry in ext4's 4 KiB blocks (mke2fs(8) -E stride, stripe_width)"})
    return steps


# ---- data loss: which inner array died ----

def _inner_runs_with(level: int, per: int) -> int:
    """Failed drives an inner md array of ``level`` and ``per`` drives still runs with: raid0
    none, raid1 all but one (raid1.c ``raid1_run`` needs one working mirror), raid5 one and
    raid6 two (raid5.c ``has_failed``: degraded > max_degraded)."""
    return {0: 0, 1: per - 1, 4: 1, 5: 1, 6: 2}[level]


def loss_message(array: Dict[str, Any], failed: List[int]) -> Optional[str]:
    """Why a stack loses data with physical members ``failed``, naming the inner array(s) that
    cannot run and their drives (the core's own message names only the outer array), or None
    when no inner array died (the core's message then stands)."""
    geo = dict(_core.stacked_geometry({**array, "member_kib": _NOMINAL_MEMBER_KIB}))
    per, sets, inner = geo["inner_devices"], geo["sets"], geo["inner_level"]
    down = {s: [m for m in sorted(set(failed)) if m // per == s] for s in range(sets)}
    dead = [s for s in range(sets) if len(down[s]) > _inner_runs_with(inner, per)]
    if not dead:
        return None
    name = f"raid{geo['name']}"

    def drives(members: List[int]) -> str:
        return ", ".join(str(m) for m in members)

    if geo["outer_level"] == 1:
        if len(dead) < sets:
            return None
        lost = "; ".join(f"md{1 + s}: {drives(down[s])}" for s in dead)
        return (f"{name} cannot run with members {sorted(set(failed))} failed: every inner raid{inner} has lost a "
                f"drive ({lost}) and the outer raid1 md0 needs one of them whole: data is lost")
    first = dead[0]
    also = f" ({', '.join(f'md{1 + s}' for s in dead[1:])} too)" if len(dead) > 1 else ""
    return (f"{name} cannot run with members {sorted(set(failed))} failed: inner array md{1 + first} (raid{inner} "
            f"of drives {drives(range(first * per, (first + 1) * per))}) has drives {drives(down[first])} failed, "
            f"and a raid{inner} of {per} runs with at most {_inner_runs_with(inner, per)} failed{also}; the outer "
            f"raid{geo['outer_level']} md0 needs every inner array: data is lost")


#: Any member size serves loss_message: which drives form which inner array does not depend on it.
_NOMINAL_MEMBER_KIB = 1 << 20


def core_simulation(config: Dict[str, Any]) -> Any:
    """``_core.CoreSimulation(config)``, with a stack's data loss named by its inner array."""
    try:
        return _core.CoreSimulation(config)
    except DataLossError as lost:
        array = config.get("array") or {}
        if not is_stacked(array.get("level")):
            raise
        message = loss_message(array, list(config.get("failed") or ()))
        if message is None:
            raise
        raise DataLossError(message) from None


# ---- the planner (raidlab plan --levels ...,1+0,5+0,6+0) ----

#: The stacked levels the planner builds (raid0+1 is left out: a replaced drive means creating
#: its raid0 half again, a rebuild raidlab does not model), their fewest drives (two inner
#: arrays of the smallest inner level: pairs, raid5 of 3, raid6 of 4) and the failures each
#: survives whatever drives fail.
PLANNER_MIN_DEVICES = {"1+0": 4, "5+0": 6, "6+0": 8}
FAULT_TOLERANCE = {"1+0": 1, "5+0": 1, "6+0": 2, "0+1": 1}


class StackedArray:
    """What the planner reads of a :class:`raidlab.Array`, for a stack (from the core)."""

    def __init__(self, geo: Dict[str, Any], devices: int, member_kib: int, chunk_kib: int) -> None:
        self.geo = geo
        self.level = geo["name"]
        self.layout = None
        self.devices = devices
        self.chunk_kib = chunk_kib
        self.copies = geo["copies"]
        self.capacity_bytes = geo["capacity_bytes"]
        self.io_min_bytes = geo["io_min_bytes"]
        self.io_opt_bytes = geo["io_opt_bytes"]
        self.member_kib_list = [member_kib] * devices


def planner_array(level: str, devices: int, chunk_kib: int, member_kib: int) -> StackedArray:
    """The planner's stacked design (inner arrays at their default size, the same chunk at both
    levels) as the planner reads arrays."""
    geo = dict(_core.stacked_geometry({"level": level, "layout": None, "chunk_kib": chunk_kib, "devices": devices,
                                       "member_kib": member_kib, "outer_chunk_kib": chunk_kib}))
    return StackedArray(geo, devices, member_kib, chunk_kib)


def inner_arrays(sets: int) -> List[str]:
    """The inner arrays' names, md1 ... mdN (md0 is the outer one): the ones a scrub checks,
    as they hold the redundancy (an outer raid0 has no sync_action check)."""
    return [f"md{1 + i}" for i in range(sets)]
