"""The :class:`Array` users build: an md array described the way mdadm is told about it.

All RAID knowledge (validation, capacity, the map) is in the Rust core; this module only
normalises arguments (device count versus member sizes, plain integers) and documents the API.
"""

from __future__ import annotations

import operator
from typing import Iterable, List, Optional, Sequence, Tuple, Union

from raidlab import _core
from raidlab.errors import ArrayError, LayoutError

#: mdadm's default chunk in KiB (mdadm.h ``DEFAULT_CHUNK``).
DEFAULT_CHUNK_KIB: int = _core.DEFAULT_CHUNK_KIB
#: The member data-area size used when none is given: 1 GiB, in KiB.
DEFAULT_MEMBER_KIB: int = 1024 * 1024
#: The most members raidlab models in one array.
MAX_DEVICES: int = _core.MAX_DEVICES

_U64_LIMIT = 1 << 64

#: One map cell: a logical chunk number, "P", "Q", or None for space md leaves unused.
MapCell = Union[int, str, None]


def _whole_number(name: str, value: object) -> int:
    """``value`` as a non-negative int that fits the core's u64, or ArrayError."""
    if isinstance(value, bool):
        raise ArrayError(f"{name} must be a whole number, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise ArrayError(f"{name} must be a whole number, got {value!r}") from None
    if not 0 <= number < _U64_LIMIT:
        raise ArrayError(f"{name} must be a whole number from 0 to 2^64-1, got {number}")
    return number


def _member_sizes_kib(
    devices: Optional[int],
    member_kib: Optional[int],
    member_kib_list: Optional[Sequence[int]],
) -> List[int]:
    """Reconciles the device count with the member sizes into one size per member, in KiB."""
    if member_kib is not None and member_kib_list is not None:
        raise ArrayError("give either one member size for all members or a list of sizes, not both")
    if devices is not None:
        devices = _whole_number("devices", devices)
    if member_kib_list is not None:
        if isinstance(member_kib_list, (str, bytes)) or not isinstance(member_kib_list, Iterable):
            raise ArrayError("member_kib_list must be a list of sizes in KiB")
        sizes = [_whole_number("member size", size) for size in member_kib_list]
        if devices is not None and devices != len(sizes):
            raise ArrayError(f"{devices} devices requested but {len(sizes)} member sizes given")
        return sizes
    if devices is None:
        raise ArrayError("give the number of devices or a list of member sizes")
    if devices > MAX_DEVICES:
        raise ArrayError(
            f"raidlab models at most {MAX_DEVICES} devices in one array, got {devices}"
        )
    if member_kib is None:
        return [DEFAULT_MEMBER_KIB] * devices
    size_kib = _whole_number("member size", member_kib)
    return [size_kib] * devices


class Array:
    """A Linux md array, validated as md and mdadm would validate it.

    :param level: md's level, as a number (0, 1, 4, 5, 6, 10) or a name ("raid5", "mirror").
    :param devices: the number of members; may be omitted when ``member_kib_list`` is given,
        and must match it when both are.
    :param chunk_kib: the chunk size in KiB (mdadm's default 512). For raid1, which has no
        chunks, it is only the granularity of :meth:`map_table`.
    :param layout: an mdadm layout name ("left-symmetric", "n2", "f2", "original", ...), or
        None for mdadm's default for the level. raid1 takes none.
    :param member_kib: the data-area size of every member in KiB (default 1 GiB).
    :param member_kib_list: one data-area size per member, in KiB, in device-role order.
    :raises ArrayError: for arrays md would refuse.
    :raises LayoutError: for a layout unknown or invalid for the level.
    """

    __slots__ = ("_core",)

    def __init__(
        self,
        level: Union[int, str],
        devices: Optional[int] = None,
        chunk_kib: int = DEFAULT_CHUNK_KIB,
        layout: Optional[str] = None,
        member_kib: Optional[int] = None,
        member_kib_list: Optional[Sequence[int]] = None,
    ) -> None:
        if isinstance(level, bool) or not isinstance(level, (int, str)):
            raise ArrayError(f"level must be a number or a name such as 'raid5', got {level!r}")
        if layout is not None and not isinstance(layout, str):
            raise ArrayError(f"layout must be a name such as 'left-symmetric', got {layout!r}")
        # The core's messages quote these names and must stay one line.
        if not str(level).isprintable():
            raise ArrayError(f"unknown RAID level {str(level)!r}")
        if layout is not None and not layout.isprintable():
            raise LayoutError(f"unknown layout {layout!r}")
        sizes_kib = _member_sizes_kib(devices, member_kib, member_kib_list)
        chunk_kib = _whole_number("chunk_kib", chunk_kib)
        self._core = _core.CoreArray(str(level), layout, chunk_kib, sizes_kib)

    @property
    def level(self) -> int:
        """md's level number: 0, 1, 4, 5, 6 or 10."""
        return self._core.level

    @property
    def layout(self) -> Optional[str]:
        """The layout's md name ("left-symmetric", "n2", "original", ...); None for raid1."""
        return self._core.layout

    @property
    def devices(self) -> int:
        """The number of members."""
        return self._core.devices

    @property
    def chunk_kib(self) -> int:
        """The chunk size in KiB."""
        return self._core.chunk_kib

    @property
    def member_kib_list(self) -> Tuple[int, ...]:
        """Each member's data-area size in KiB, as given."""
        return tuple(self._core.member_kib_list)

    @property
    def capacity_bytes(self) -> int:
        """The array's size in bytes, as md reports it."""
        return self._core.capacity_bytes

    @property
    def io_min_bytes(self) -> int:
        """The block device's ``minimum_io_size`` md sets, in bytes."""
        return self._core.io_min_bytes

    @property
    def io_opt_bytes(self) -> int:
        """The block device's ``optimal_io_size`` md sets, in bytes (0: none)."""
        return self._core.io_opt_bytes

    @property
    def copies(self) -> int:
        """Copies of each data chunk: 1 for raid0/4/5/6, the mirror count for raid1/10."""
        return self._core.copies

    @property
    def member_chunks(self) -> Tuple[int, ...]:
        """Whole chunks in each member's data area: the length of each map column."""
        return tuple(self._core.member_chunks())

    def map_table(self, rows: Optional[int] = None) -> List[List[MapCell]]:
        """What md stores in each chunk of each member.

        One list per member (device-role order), one entry per chunk of the member's data area
        from its start: the logical chunk number (array offset // chunk size), ``"P"``, ``"Q"``,
        or None for space md leaves unused. Every copy appears (raid1 mirrors, raid10 copies).

        :param rows: only the first ``rows`` entries of each member (default: all).
        """
        return self._core.map_table(None if rows is None else _whole_number("rows", rows))

    def q_log_coeff(self, rows: Optional[int] = None) -> List[List[Optional[int]]]:
        """raid6 only: the Q coefficient exponent of every data cell.

        Same shape as :meth:`map_table`; each data cell holds the e for which it contributes
        g^e * D to its row's Q (GF(2^8), polynomial 0x11d, g = 2); other cells hold None.

        :raises RequestError: for levels other than raid6.
        """
        return self._core.q_log_coeff(None if rows is None else _whole_number("rows", rows))

    def raid0_zones(self) -> List[Tuple[int, int, Tuple[int, ...]]]:
        """raid0 only (empty otherwise): md's zones as ``(start_row, end_row, members)``.

        Rows are member chunks, ``end_row`` is exclusive, ``members`` the devices the zone
        stripes across. Members of equal size give one zone.
        """
        return [(start, end, tuple(members)) for start, end, members in self._core.raid0_zones()]

    def __repr__(self) -> str:
        layout = f", layout={self.layout!r}" if self.layout is not None else ""
        return (
            f"raidlab.Array(level={self.level}{layout}, devices={self.devices}, "
            f"chunk_kib={self.chunk_kib}, member_kib_list={list(self.member_kib_list)!r})"
        )
