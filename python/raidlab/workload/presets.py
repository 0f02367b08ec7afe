"""Named database workloads, each written as the fio job a DBA would run for it.

Each preset gives an I/O size, pattern, read share, sync behaviour and queue depth, and is one
fio job (e.g. ``rw=randrw rwmixread=70 bs=8k iodepth=16 direct=1``; a WAL: ``rw=write bs=8k
fdatasync=1 iodepth=1``). The run length, 60 s time based, is bench-fio's default runtime
(louwrentius/fio-plot, ``bench_fio`` ``--runtime``). Page sizes are engine facts, cited per preset;
the mixes and depths are planning assumptions, stated per preset below.

Concurrency is spelled as threads × depth 1 for the OLTP presets: a database session waits for
its own page read, so 16 sessions keep 16 I/Os in flight — the middle of an OLTP queue depth of
8–32 — and fio's default psync engine runs exactly that.
"""

from __future__ import annotations

from typing import Dict

from raidlab.workload.fio import parse_fio
from raidlab.workload.spec import Workload, WorkloadError

__all__ = ["PRESETS", "preset", "preset_fio_text"]

_JOBS: Dict[str, str] = {
    # InnoDB: 16 KiB pages (innodb_page_size's default; MySQL reference manual); O_DIRECT is
    # the usual recommendation and MariaDB's default (MDEV-24854); 70/30 random read/write (an
    # assumption, TPC-C-like); QD 8–32 → 16 × 1.
    # Not modelled: the doublewrite buffer's sequential stream and checkpoint fsyncs.
    "oltp-innodb": """\
[oltp-innodb]
rw=randrw
rwmixread=70
bs=16k
numjobs=16
iodepth=1
direct=1
runtime=60
time_based
""",
    # PostgreSQL: 8 KiB pages (BLCKSZ; PostgreSQL docs, "Database Page Layout"); random 70/30 as above; QD 8–32 → 16 × 1. PostgreSQL
    # itself reads and writes data files through the page cache and fsyncs at checkpoints;
    # direct=1 stands for "every I/O reaches the array".
    "oltp-postgres": """\
[oltp-postgres]
rw=randrw
rwmixread=70
bs=8k
numjobs=16
iodepth=1
direct=1
runtime=60
time_based
""",
    # WAL / redo: sequential appends, 0 % reads, fdatasync after every commit (fdatasync is
    # PostgreSQL's default wal_sync_method on Linux; InnoDB fsyncs its redo log per commit with
    # innodb_flush_log_at_trx_commit=1), QD 1, latency bound. 8 KiB = PostgreSQL's WAL
    # block (XLOG_BLCKSZ); as fio: rw=write bs=8k fdatasync=1 iodepth=1.
    "wal": """\
[wal]
rw=write
bs=8k
fdatasync=1
iodepth=1
runtime=60
time_based
""",
    # Backup / sequential scan: 256 KiB–1 MiB sequential reads, 100 % read, no syncs, QD 2–8
    # (an assumption); full-stripe friendly. 1 MiB at QD 4 through libaio with O_DIRECT.
    "backup-scan": """\
[backup-scan]
rw=read
bs=1m
ioengine=libaio
iodepth=4
direct=1
runtime=60
time_based
""",
    # The classic sequential tools, buffered (no direct=1: through the page cache).
    # bonnie++ -s SIZE -n 0 -f (bonnie++ 1.04 "Sequential Output, Block" then "Sequential Input,
    # Block"): write(2) and read(2) of 8 KiB chunks (bonnie.h: Chunk = 8192) over one file of
    # SIZE, by default twice RAM so the page cache cannot hold it; bonnie++ fsyncs the file
    # before closing it after writing. raidlab sizes the file at twice --ram-gib. The rewrite
    # phase (read, lseek back, write each chunk) and the per-character phases are not included;
    # the read phase is its own preset because raidlab runs the jobs of a workload together.
    "bonnie-seq": """\
[bonnie-seq]
rw=write
bs=8k
end_fsync=1
""",
    "bonnie-seq-read": """\
[bonnie-seq-read]
rw=read
bs=8k
""",
    # dd if=/dev/zero of=FILE bs=1M count=16384: 16 GiB in 1 MiB write(2) calls through the
    # page cache; dd returns when the last write is copied, so the figure is memory speed until
    # the dirty limit throttles it. conv=fdatasync makes dd call fdatasync(2) once at the end
    # (coreutils dd.c), so the time covers writing everything back.
    "dd-write": """\
[dd-write]
rw=write
bs=1m
size=16g
""",
    "dd-write-fdatasync": """\
[dd-write-fdatasync]
rw=write
bs=1m
size=16g
end_fsync=1
""",
    # echo 3 > /proc/sys/vm/drop_caches; dd if=FILE of=/dev/null bs=1M count=16384: 16 GiB in
    # 1 MiB read(2) calls from a cold page cache, readahead doing the I/O.
    "dd-read": """\
[dd-read]
rw=read
bs=1m
size=16g
""",
}

#: Preset name → one-line description.
PRESETS: Dict[str, str] = {
    "oltp-innodb": "MySQL/InnoDB data files: 16 KiB random, 70% reads, O_DIRECT, 16 sessions × QD1",
    "oltp-postgres": "PostgreSQL data files: 8 KiB random, 70% reads, 16 backends × QD1",
    "wal": "WAL/redo log: 8 KiB sequential writes, fdatasync after each, QD1",
    "backup-scan": "backup or full scan: 1 MiB sequential reads, QD4, O_DIRECT",
    "bonnie-seq": "bonnie++ -s 2xRAM block output: 8 KiB buffered writes of a file twice RAM, fsync at the end",
    "bonnie-seq-read": "bonnie++ -s 2xRAM block input: 8 KiB buffered reads of a file twice RAM",
    "dd-write": "dd if=/dev/zero of=F bs=1M count=16384: 16 GiB buffered 1 MiB writes",
    "dd-write-fdatasync": "dd ... bs=1M count=16384 conv=fdatasync: 16 GiB buffered, one fdatasync at the end",
    "dd-read": "dd if=F of=/dev/null bs=1M count=16384 after drop_caches: 16 GiB buffered reads",
}


def preset_fio_text(name: str) -> str:
    """The fio job file a preset stands for (run it with ``filename=`` set to a device)."""
    if name not in _JOBS:
        raise WorkloadError(f"unknown preset {name!r} (presets: {', '.join(sorted(PRESETS))})")
    return _JOBS[name]


def preset(name: str) -> Workload:
    """The named preset as a workload; its source is ``{"tool": "preset", "text": name}``."""
    if not isinstance(name, str):
        raise WorkloadError("a preset name must be a string")
    parsed = parse_fio(preset_fio_text(name))
    return Workload(parsed.jobs, "preset", name, parsed.notes)
