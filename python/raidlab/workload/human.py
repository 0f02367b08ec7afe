"""Sizes and durations as people read them (``16 KiB``, ``500 ms``): the bottom of the workload
package, imported by the spec's one-line descriptions and by :mod:`raidlab.workload.units`."""

from __future__ import annotations


def human_bytes(size: int) -> str:
    """``16 KiB``, ``1 MiB``, ``1.5 MiB``, ``512 B``: binary units, as sysadmins read them."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB")
    value = float(size)
    index = 0
    while value >= 1024 and index < len(units) - 1:
        value /= 1024
        index += 1
    if value == int(value):
        return f"{int(value)} {units[index]}"
    return f"{value:.2f}".rstrip("0").rstrip(".") + f" {units[index]}"


def human_duration(nanos: int) -> str:
    """``60 s``, ``500 ms``, ``2 h``: whole hours, else whole seconds, else the finest unit needed."""
    for unit, size in (("h", 3600 * 10**9), ("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if nanos >= size and nanos % size == 0:
            return f"{nanos // size} {unit}"
    if nanos >= 10**9:
        return f"{nanos / 10**9:g} s"
    return f"{nanos} ns"
