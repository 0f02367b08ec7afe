"""The textbook RAID calculator, for checking the simulation against what DBAs already know.

Formulas as the usual calculators and guides give them (wmarow strcalc, Scott
Lowe/TechRepublic 2010, virtualtarzan, the Dell EMC community thread, tengel's papyri note,
Gerasimatos 2013), and md's own small-write cost from drivers/md/raid5.c (rmw vs rcw):

- per-disk random IOPS of a disk: ``1 / (t_seek + t_rot)``, ``t_rot = 0.5 * 60 / rpm``;
- write penalty P (back-end I/Os per small front-end write): raid0 1, raid1/raid10 = copies,
  raid5 4, raid6 6;
- front-end IOPS an array delivers (the "harmonic" form): ``N * IOPS_disk / (R + W * P)``;
- back-end IOPS a workload needs: ``FE * R + FE * W * P``, disks = ceil(BE / IOPS_disk);
- the naive "functional IOPS" ``raw * (R + W / P)`` that some calculators print (over-states);
- md's refinement: a write touching k of d data chunks costs ``min(k + p, d - k) + k + p``
  member I/Os (reads for the cheaper of read-modify-write and reconstruct-write, then the
  writes), so small arrays pay less than 4/6.
"""

from __future__ import annotations

import math


def disk_iops(seek_ms: float, rpm: float) -> float:
    """Random IOPS of one disk from its average seek and spindle speed."""
    rotation_ms = 0.5 * 60_000 / rpm
    return 1000.0 / (seek_ms + rotation_ms)


def write_penalty(level: int, copies: int = 2) -> int:
    """Back-end I/Os per small random front-end write."""
    if level == 0:
        return 1
    if level in (1, 10):
        return copies
    if level in (4, 5):
        return 4
    if level == 6:
        return 6
    raise ValueError(f"no write penalty for raid{level}")


def array_iops(devices: int, per_disk_iops: float, write_fraction: float, penalty: float) -> float:
    """Front-end IOPS: N * IOPS_disk / (R + W * P)."""
    return devices * per_disk_iops / ((1 - write_fraction) + write_fraction * penalty)


def naive_iops(devices: int, per_disk_iops: float, write_fraction: float, penalty: float) -> float:
    """The legacy 'functional IOPS' raw * (R + W / P) — shown only to say it over-states."""
    return devices * per_disk_iops * ((1 - write_fraction) + write_fraction / penalty)


def backend_iops(frontend_iops: float, write_fraction: float, penalty: float) -> float:
    """Back-end IOPS a front-end load needs: FE * R + FE * W * P."""
    return frontend_iops * (1 - write_fraction) + frontend_iops * write_fraction * penalty


def disks_needed(frontend_iops: float, write_fraction: float, penalty: float, per_disk_iops: float,
                 even: bool = False) -> int:
    """Disks to carry a front-end load; ``even`` rounds up to an even count (mirrors)."""
    disks = math.ceil(round(backend_iops(frontend_iops, write_fraction, penalty) / per_disk_iops, 9))
    return disks + (disks % 2) if even else disks


def md_write_cost(level: int, devices: int, chunks_written: int = 1) -> int:
    """Member I/Os md spends on a write touching ``chunks_written`` data chunks of one stripe of a
    raid4/5/6 array: min(k + p, d - k) reads + (k + p) writes (raid5.c; a full stripe: d + p)."""
    parity = 2 if level == 6 else 1
    data = devices - parity
    k = chunks_written
    if not 1 <= k <= data:
        raise ValueError(f"a stripe of raid{level} x{devices} has {data} data chunks")
    return min(k + parity, data - k) + k + parity


def md_write_penalty(level: int, devices: int, copies: int = 2) -> int:
    """The small-write penalty md really pays for this array (the textbook value for mirrors)."""
    if level in (4, 5, 6):
        return md_write_cost(level, devices, 1)
    return write_penalty(level, copies)
