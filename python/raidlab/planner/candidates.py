"""Candidate designs for ``raidlab plan``: drive models, enumeration, and the cheap prunes.

A design is one md array: a drive model, a level, a layout, a device count, a chunk size and
hot spares. Enumeration is exhaustive over the choices the user allows; capacity, budget and the
drive limit are checked here, before anything is simulated, because they cost nothing.

Capacity is md-exact: each member gives md its size minus the data offset mdadm 1.2 leaves in
front of the data (``raidlab._core.member_data_kib``, mdadm super1.c), and
:class:`raidlab.Array` turns member sizes into the array size md reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from raidlab import _core
from raidlab.array import MAX_DEVICES, Array
from raidlab.errors import ConfigError
from raidlab.drives import preset_table, resolve_drive
from raidlab.numeric import real_text
from raidlab.stacked import FAULT_TOLERANCE, planner_array

#: Levels the planner considers unless told otherwise. raid0 only when asked (no redundancy).
DEFAULT_LEVELS = (1, 5, 6, 10)
#: Chunk sizes tried: a small, a middle and mdadm's default (mdadm.h DEFAULT_CHUNK 512).
DEFAULT_CHUNKS_KIB = (64, 256, 512)
#: md raid10 layouts tried: near (mdadm's default n2), offset and far (md(4), RAID10).
DEFAULT_RAID10_LAYOUTS = ("n2", "o2", "f2")
#: raid5/6 layout: mdadm's default, left-symmetric (mdadm Create.c default_layout).
PARITY_LAYOUT = "left-symmetric"
DEFAULT_MAX_DRIVES = 12

#: The fewest members the planner builds each level with. raid1 is the 2-drive mirror only
#: (more copies buy no capacity); raid10 starts at 3 (md(4): raid10 takes an odd number of devices;
#: 2 drives are raid1's case).
MIN_DEVICES = {0: 2, 1: 2, 5: 3, 6: 4, 10: 3}
MAX_DEVICES_FOR = {1: 2}
#: Stacked levels: two inner arrays of the smallest inner level.
MIN_DEVICES.update({"1+0": 4, "5+0": 6, "6+0": 8})

#: Decimal terabyte, as drives and capacity targets are sold.
TB = 10**12


@dataclass(frozen=True)
class DriveModel:
    """A drive the planner may buy: how to simulate it, its size and its price."""

    name: str
    choice: Any  # what raidlab.drives.resolve_drive takes: a preset name or a core drive dict
    kind: str  # hdd | ssd | null
    nvme: bool
    capacity_bytes: int
    price: Optional[float]

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "nvme": self.nvme,
                "capacity_bytes": self.capacity_bytes, "price": self.price}


def _split_price(text: str) -> Tuple[str, Optional[float]]:
    """``NAME[:PRICE]``; a path may itself hold ':' so only a numeric tail is a price."""
    name, sep, tail = text.rpartition(":")
    if not sep:
        return text, None
    price = real_text(tail)
    if price is None:
        return text, None
    if not math.isfinite(price) or price <= 0:
        raise ConfigError(f"--drive {text!r}: the price must be a positive number")
    return name, price


def parse_drive(text: str) -> DriveModel:
    """One ``--drive NAME[:PRICE]``: any drive ``raidlab sim --drive`` takes (a preset, a drive
    TOML file or a DiskSim model; :func:`raidlab.drives.resolve_drive`)."""
    name, price = _split_price(text.strip())
    drive = resolve_drive(name, "--drive")
    if name in preset_table():
        return DriveModel(name, name, drive.kind, "nvme" in drive.interface.lower(), drive.capacity_bytes, price)
    nvme = "nvme" in drive.interface.lower() or "nvme" in Path(name).stem.lower()
    return DriveModel(Path(name).stem, drive.choice, drive.kind, nvme, drive.capacity_bytes, price)


def default_drives() -> List[DriveModel]:
    """Every real preset in the catalog (not the 'null' test device), without prices."""
    return [parse_drive(name) for name, p in preset_table().items() if p["kind"] != "null"]


@dataclass(frozen=True)
class Design:
    """One md array the planner can build. ``chunk_kib`` is None for raid1 (no chunks)."""

    drive: str
    level: int
    layout: Optional[str]
    devices: int
    chunk_kib: Optional[int]
    spares: int = 0

    @property
    def name(self) -> str:
        layout = f" {self.layout}" if self.layout else ""
        chunk = f" {self.chunk_kib}K" if self.chunk_kib else ""
        spares = f"+{self.spares}s" if self.spares else ""
        return f"raid{self.level}{layout} x{self.devices}{spares}{chunk} {self.drive}"

    @property
    def drives(self) -> int:
        return self.devices + self.spares

    def family(self) -> Tuple[Any, ...]:
        """Everything but the device count: the planner grows a family one drive at a time."""
        return (self.drive, self.level, self.layout or "", self.chunk_kib or 0)

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "drive": self.drive, "level": self.level, "layout": self.layout,
                "devices": self.devices, "chunk_kib": self.chunk_kib, "spares": self.spares}


def member_kib(model: DriveModel, design: Design) -> int:
    """The data area md gets from one member: the drive less mdadm's data offset (1.2 metadata),
    by the core's one rule, as the simulator sizes its members (``_core.member_data_kib``)."""
    return _core.member_data_kib(True, str(design.level), design.devices, model.capacity_bytes,
                                 design.chunk_kib or 0)


def array_for(design: Design, model: DriveModel) -> Array:
    """The design as a raidlab.Array with full-size members (md-exact capacity and io hints)."""
    if isinstance(design.level, str):  # a stack
        return planner_array(design.level, design.devices, design.chunk_kib, member_kib(model, design))
    kwargs: Dict[str, Any] = {"level": design.level, "devices": design.devices,
                              "layout": design.layout, "member_kib": member_kib(model, design)}
    if design.chunk_kib:
        kwargs["chunk_kib"] = design.chunk_kib
    return Array(**kwargs)


def fault_tolerance(design: Design, copies: int) -> int:
    """Member failures the array survives whatever members fail (RAID5 1, RAID6 2,
    RAID1 N-1, RAID10 copies-1 guaranteed: one per parity or extra copy)."""
    if isinstance(design.level, str):  # a stack
        return FAULT_TOLERANCE[design.level]
    return {0: 0, 1: design.devices - 1, 4: 1, 5: 1, 6: 2}.get(design.level, copies - 1)


@dataclass
class Enumeration:
    """Designs that passed the cheap checks, grouped into families, and what was pruned."""

    families: List[List[Design]]
    capacity: Dict[Design, int] = field(default_factory=dict)
    considered: int = 0
    pruned: Dict[str, int] = field(default_factory=lambda: {"capacity": 0, "budget": 0})


def enumerate_designs(models: Sequence[DriveModel], levels: Sequence[int], chunks: Sequence[int],
                      raid10_layouts: Sequence[str], max_drives: int, spares: int,
                      capacity_bytes: int, budget: Optional[float]) -> Enumeration:
    """Every design within the drive limit, minus those too small or too expensive."""
    result = Enumeration(families=[])
    for model in models:
        for level in sorted(set(levels), key=lambda level: (isinstance(level, str), str(level).zfill(2))):
            if level == 10:
                layouts: Sequence[Optional[str]] = list(raid10_layouts)
            elif level in (5, 6):
                layouts = [PARITY_LAYOUT]
            else:
                layouts = [None]
            level_chunks: Sequence[Optional[int]] = [None] if level == 1 else list(chunks)
            top = min(max_drives - spares, MAX_DEVICES_FOR.get(level, MAX_DEVICES))
            # A stack grows by whole inner arrays' worth: two drives at a time.
            step = 2 if isinstance(level, str) else 1
            for layout in layouts:
                for chunk in level_chunks:
                    family = []
                    for devices in range(MIN_DEVICES[level], top + 1, step):
                        design = Design(model.name, level, layout, devices, chunk, spares)
                        result.considered += 1
                        if model.price is not None and budget is not None and design.drives * model.price > budget:
                            result.pruned["budget"] += 1
                            continue
                        capacity = array_for(design, model).capacity_bytes
                        if capacity < capacity_bytes:
                            result.pruned["capacity"] += 1
                            continue
                        result.capacity[design] = capacity
                        family.append(design)
                    if family:
                        result.families.append(family)
    return result


def check_models(models: Sequence[DriveModel], budget: Optional[float]) -> None:
    """Prices must be given for every model or none (costs must compare); a budget needs them."""
    names = [m.name for m in models]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"--drive {duplicates[0]} is given twice")
    priced = [m.price is not None for m in models]
    if any(priced) and not all(priced):
        missing = [m.name for m in models if m.price is None]
        raise ConfigError(f"give a price for every --drive or for none (no price for {', '.join(missing)})")
    if budget is not None and not all(priced):
        raise ConfigError("--budget needs a price per drive: --drive NAME:PRICE")
    for model in models:
        if model.capacity_bytes <= 0:
            raise ConfigError(f"drive {model.name} has no capacity")
