"""What a measurement target is, and whether raidlab may let fio write to it.

The rule: a workload that writes refuses a block device, a mounted device, or an
existing non-empty file unless the user says ``--destroy-data``; a read-only workload is always
allowed. Two refinements, each for a reason found while building this:

- A device that is mounted, used as swap, or held by another driver (md, dm/LVM, bcache: it
  has entries under ``/sys/dev/block/MAJ:MIN/holders``) is refused for writes even with
  ``--destroy-data``: writing under a live file system or array corrupts it and can take the
  machine down, which is more than "destroying data" on the target. The refusal says to
  unmount / release it first.
- fio *lays out* a regular file again whenever the file is shorter than the region a job asks
  for, and for any job that reads it does so by unlinking and truncating the file
  (``extend_file`` in fio-3.33 ``filesetup.c``: ``if (td_read(td) || ...) new_layout = 1`` →
  ``td_io_unlink_file`` then ``O_TRUNC``; verified with fio 3.33: a 1 MiB file read with
  ``size=8m`` lost its contents). So even a read-only workload must not ask for more than an
  existing non-empty file holds: :func:`region_for` caps the region at the file's size, and
  refuses a job whose own ``offset + size`` reaches past the end, unless ``--destroy-data``.

Everything is read from ``os.stat``, ``/proc/self/mountinfo`` (field 3 is the ``MAJ:MIN`` of the
mounted device; proc(5)), ``/proc/swaps`` and ``/sys/dev/block`` (sysfs-block ABI); nothing is
opened for writing here.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Tuple

from raidlab.errors import ConfigError
from raidlab.measure import fio_target
from raidlab.outputs import under_kernel_tree
from raidlab.units import human_bytes
from raidlab.workload import Workload

__all__ = ["Target", "inspect", "check_writes", "workload_writes", "region_for", "check_region"]

#: Where the kernel lists mounts and swap areas; overridable in tests.
MOUNTINFO = "/proc/self/mountinfo"
SWAPS = "/proc/swaps"
SYS_DEV_BLOCK = "/sys/dev/block"


@dataclass
class Target:
    """A measurement target as the kernel sees it right now."""

    path: str
    #: ``file``, ``missing`` (fio will create it), ``block``, ``char`` or ``directory``/``other``.
    kind: str
    #: Bytes in the file or device (0 when unknown: missing file, character device).
    size_bytes: int = 0
    #: ``MAJ:MIN`` of the device (block devices) or of the device holding the file.
    device: Optional[str] = None
    #: Why the device is in use (mounted at ..., swap, held by md127), empty when it is free.
    in_use: List[str] = field(default_factory=list)

    @property
    def is_device(self) -> bool:
        return self.kind in ("block", "char")

    def describe(self) -> str:
        if self.kind == "file":
            return f"file, {human_bytes(self.size_bytes)}"
        if self.kind == "missing":
            return "new file"
        if self.kind == "block":
            return f"block device, {human_bytes(self.size_bytes)}"
        return {"char": "character device", "directory": "directory"}.get(self.kind, self.kind)


def _block_size(path: str) -> int:
    """Size of a block device in bytes (seek to the end: needs only read access)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return 0
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    except OSError:
        return 0
    finally:
        os.close(fd)


def _sys_dir(device: str) -> Optional[Path]:
    path = Path(SYS_DEV_BLOCK) / device
    try:
        return path.resolve(strict=True)
    except OSError:
        return None


def _related_devices(device: str) -> List[str]:
    """The device itself and its partitions (their ``MAJ:MIN``), from sysfs."""
    devices = [device]
    base = _sys_dir(device)
    if base is None:
        return devices
    try:
        for child in base.iterdir():
            dev_file = child / "dev"
            if (child / "partition").is_file() and dev_file.is_file():
                devices.append(dev_file.read_text().strip())
    except OSError:
        pass
    return devices


def _in_use(device: str, path: str) -> List[str]:
    """Reasons a block device (or one of its partitions) is busy."""
    related = _related_devices(device)
    reasons: List[str] = []
    try:
        with open(MOUNTINFO) as handle:
            for line in handle:
                fields = line.split()
                # mountinfo: id parent MAJ:MIN root mount-point options ... - fstype source ...
                if len(fields) > 4 and fields[2] in related:
                    where = fields[4].replace("\\040", " ")
                    reasons.append(f"mounted at {where}")
    except OSError:
        pass
    try:
        with open(SWAPS) as handle:
            next(handle, None)
            for line in handle:
                name = line.split()[0] if line.split() else ""
                if name and os.path.exists(name):
                    try:
                        st = os.stat(name)
                    except OSError:
                        continue
                    if stat.S_ISBLK(st.st_mode) and f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" in related:
                        reasons.append(f"used as swap ({name})")
    except OSError:
        pass
    for dev in related:
        base = _sys_dir(dev)
        if base is None:
            continue
        try:
            holders = sorted(h.name for h in (base / "holders").iterdir())
        except OSError:
            holders = []
        if holders:
            reasons.append(f"held by {', '.join(holders)}")
    # One reason per kind is enough for a one-line message.
    unique: List[str] = []
    for reason in reasons:
        if reason not in unique:
            unique.append(reason)
    return unique


def _check_dev_path(path: str) -> None:
    """A path under /dev must be an existing device node: fio would create a mistyped
    ``/dev/sdz1`` as a regular file there (in RAM, on devtmpfs) and measure that instead.
    Character devices (``/dev/null``, ``/dev/full``) stay allowed under the rules of
    :func:`check_writes`; regular files, directories and missing paths are refused."""
    if not under_kernel_tree(path):
        return
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ConfigError(f"target {path} does not exist; raidlab never creates files under /dev, "
                          "/proc or /sys (is the device name mistyped?)") from None
    except OSError as error:
        raise ConfigError(f"target {path}: {error.strerror}") from None
    if not (stat.S_ISBLK(mode) or stat.S_ISCHR(mode)):
        raise ConfigError(f"target {path} is under /dev, /proc or /sys but is not a device; "
                          "give a block device, or a file elsewhere")


def inspect(path: str) -> Target:
    """Looks at ``path`` without changing anything. ``path`` is first made the absolute name fio
    will open (:func:`raidlab.measure.fio_target.resolve`, which refuses a name fio would read
    as another): that is the name checked here and the name in :attr:`Target.path`."""
    path = fio_target.resolve(path).path
    _check_dev_path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        parent = os.path.dirname(os.path.abspath(path)) or "/"
        if not os.path.isdir(parent):
            raise ConfigError(f"target {path}: directory {parent} does not exist") from None
        return Target(path, "missing")
    except OSError as error:
        raise ConfigError(f"target {path}: {error.strerror}") from None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        device = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        return Target(path, "file", st.st_size, device)
    if stat.S_ISBLK(mode):
        device = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        return Target(path, "block", _block_size(path), device, _in_use(device, path))
    if stat.S_ISCHR(mode):
        device = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        return Target(path, "char", 0, device)
    if stat.S_ISDIR(mode):
        return Target(path, "directory")
    return Target(path, "other")


def workload_writes(workload: Workload) -> bool:
    """True if any job writes (a data write or an fsync)."""
    return any(job.read_fraction < 1.0 or job.fsync_every or job.fsync_end for job in workload.jobs)


def check_writes(target: Target, writes: bool, destroy_data: bool) -> None:
    """Raises :class:`ConfigError` (one line, saying why) if the run may not go ahead."""
    if target.kind == "directory":
        raise ConfigError(f"target {target.path} is a directory; give a file (new or existing) or a device")
    if target.kind == "other":
        raise ConfigError(f"target {target.path} is neither a file nor a device (a FIFO or socket?)")
    if not writes:
        return
    if target.kind == "block" and target.in_use:
        raise ConfigError(
            f"refusing to write to {target.path}: the device is {'; '.join(target.in_use)}; writing "
            "there would corrupt it even with --destroy-data (unmount or release it first)"
        )
    if destroy_data:
        return
    if target.kind == "block":
        raise ConfigError(
            f"refusing to write to block device {target.path} ({human_bytes(target.size_bytes)}): "
            "the workload writes and would destroy its data; add --destroy-data if that is what you want"
        )
    if target.kind == "char":
        raise ConfigError(
            f"refusing to write to character device {target.path}: the workload writes; "
            "add --destroy-data if that is what you want"
        )
    if target.kind == "file" and target.size_bytes > 0:
        raise ConfigError(
            f"refusing to write to {target.path}: it is an existing file with "
            f"{human_bytes(target.size_bytes)} of data that the workload would overwrite; "
            "add --destroy-data, or give a new file name"
        )


def region_for(target: Target, workload: Workload, size_bytes: Optional[int],
               destroy_data: bool, new_file_bytes: int) -> Tuple[Optional[int], List[str]]:
    """The ``size=`` raidlab puts in ``[global]`` for jobs that set none, and notes.

    - an existing non-empty file is never grown (see the module docstring): the region is at
      most the file (:func:`check_region` then refuses a job whose own region reaches past its
      end, unless ``--destroy-data``);
    - a new file (or an empty one) gets ``size_bytes``, else ``new_file_bytes``;
    - a block device defaults to the whole device (``None``: fio's own default);
    - a character device has no size, so one must be given.
    """
    notes: List[str] = []
    if target.kind == "file" and target.size_bytes > 0:
        have = target.size_bytes // 512 * 512
        if size_bytes is None:
            return have, notes
        if size_bytes > have and not destroy_data:
            notes.append(
                f"--size {human_bytes(size_bytes)} is more than {target.path} holds; measuring its "
                f"{human_bytes(have)} (fio would otherwise lay the file out again)"
            )
            return have, notes
        return size_bytes, notes
    if target.kind in ("file", "missing"):
        return (size_bytes if size_bytes is not None else new_file_bytes), notes
    if target.kind == "char":
        if size_bytes is None and any(job.size_bytes == 0 for job in workload.jobs):
            raise ConfigError(f"target {target.path} is a character device with no size; give --size")
        return size_bytes, notes
    return size_bytes, notes


def check_region(target: Target, workload: Workload, region: Optional[int], destroy_data: bool) -> None:
    """Refuses a job that would make fio lay out (rewrite) an existing non-empty file."""
    if target.kind != "file" or target.size_bytes == 0 or destroy_data:
        return
    for job in workload.jobs:
        end = job.offset_bytes + (job.size_bytes or region or 0)
        if end > target.size_bytes:
            raise ConfigError(
                f"job {job.name!r} covers {human_bytes(end)} but {target.path} holds "
                f"{human_bytes(target.size_bytes)}; fio would lay the file out again and destroy "
                "its contents (add --destroy-data, or a smaller size)"
            )
