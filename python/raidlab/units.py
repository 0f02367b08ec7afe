"""Byte counts in the binary units sysadmins read (KiB, MiB, GiB, ...)."""

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB")


def human_bytes(size_bytes: int) -> str:
    """``size_bytes`` in the largest binary unit it reaches: '3 GiB', '1.5 MiB', '512 B'.

    Exact values print as whole numbers; others with up to two decimals.
    """
    value = float(size_bytes)
    unit = 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    if value == int(value):
        return f"{int(value)} {_UNITS[unit]}"
    return f"{value:.2f}".rstrip("0").rstrip(".") + f" {_UNITS[unit]}"
