"""fio's I/O engines: which ones raidlab runs, as what, and why the others cannot run.

Sources: fio-3.33 ``engines/*.c`` (``FIO_SYNCIO`` marks the engines that do one I/O at a time),
``os/os-linux.h`` (``FIO_PREFERRED_ENGINE``) and HOWTO.rst's ``ioengine`` section.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

__all__ = ["ASYNC_ENGINES", "DEFAULT_ENGINE", "ENGINE_MAP", "ENGINE_REFUSED", "SYNC_ENGINES", "engine_class"]

#: Engines that do one I/O at a time per thread (FIO_SYNCIO in engines/sync.c, fio-3.33).
SYNC_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2")
#: Engines that keep ``iodepth`` I/Os in flight.
ASYNC_ENGINES = ("libaio", "io_uring", "posixaio")
#: fio's default engine on Linux (os/os-linux.h FIO_PREFERRED_ENGINE).
DEFAULT_ENGINE = "psync"

#: Engines that move data the way psync (one I/O at a time) or libaio (``iodepth`` in flight)
#: does, and what raidlab runs them as, with the note shown when it is not the engine itself.
ENGINE_MAP: Dict[str, Tuple[str, str]] = {
    **{name: ("sync", "") for name in SYNC_ENGINES},
    **{name: ("async", "") for name in ASYNC_ENGINES},
    "null": ("async", "ioengine=null does no I/O in fio; raidlab sends its pattern to the array as libaio would"),
    "mmap": ("sync", "ioengine=mmap copies through a mapping one I/O at a time; simulated as psync"),
    "splice": ("sync", "ioengine=splice moves one I/O at a time through a pipe; simulated as psync"),
    "libzbc": ("sync", "ioengine=libzbc issues one I/O at a time; simulated as psync"),
    "dev-dax": ("sync", "ioengine=dev-dax copies to persistent memory one I/O at a time; simulated as psync"),
    "libpmem": ("sync", "ioengine=libpmem copies to persistent memory one I/O at a time; simulated as psync"),
    "solarisaio": ("async", "ioengine=solarisaio simulated as libaio"),
    "windowsaio": ("async", "ioengine=windowsaio simulated as libaio"),
}

#: Engines raidlab cannot run, and why (one line each).
ENGINE_REFUSED = {
    **{name: "talks to a network service, not to a local block device"
       for name in ("net", "netsplice", "rdma", "libiscsi", "nbd", "nfs", "gfapi", "gfapi_async",
                    "libhdfs", "ime_psync", "ime_psyncv", "ime_aio", "dfs", "libcufile", "libblkio")},
    **{name: "talks to an object store, not to a block device"
       for name in ("rbd", "rados", "http")},
    **{name: "does no block I/O (CPU, memory or programs)"
       for name in ("cpuio", "exec", "page_fault", "cpp_null", "external")},
    **{name: "issues file-system metadata operations, not reads and writes"
       for name in ("filecreate", "filestat", "filedelete", "dircreate", "dirstat", "dirdelete",
                    "ftruncate", "falloc", "e4defrag")},
    "sg": "sends SCSI commands straight to the device (passthrough), not block reads and writes",
    "io_uring_cmd": "sends NVMe commands straight to the device (passthrough), not block reads and writes",
    "mtd": "drives raw MTD flash (erase blocks), which raidlab's members are not",
    "xnvme": "is a user-space NVMe driver stack raidlab does not model",
    "spdk": "is a user-space NVMe driver stack raidlab does not model",
}


def engine_class(engine: str) -> Tuple[Optional[str], str]:
    """(``"sync"``/``"async"``, note) for an engine raidlab runs, or (None, why not)."""
    if engine in ENGINE_MAP:
        return ENGINE_MAP[engine]
    if engine.startswith("external:") or engine.startswith("/"):
        return None, "is an external engine raidlab cannot load"
    reason = ENGINE_REFUSED.get(engine)
    return None, reason or "is not an engine raidlab knows"
