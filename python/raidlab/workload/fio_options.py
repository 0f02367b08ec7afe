"""fio's options beyond the core set (issue 22): what raidlab models, maps, notes or refuses.

Sources: fio's HOWTO.rst and ``options.c`` (fio-3.33, the installed version; axboe/fio master
agrees for everything here), ``backend.c`` (``handle_thinktime``, ``run_threads`` for
``stonewall``/``wait_for``), ``io_u.c`` (``get_next_buflen`` for ``bsrange``), ``rate-submit.c``.

Every option here falls in one of four tables:

- :data:`STREAM_OPTIONS`: change when or where I/O is issued; parsed into a job's stream fields
  (``sim/workload.rs`` documents each in the core).
- :data:`NO_EFFECT_OPTIONS`: change only data contents, CPU placement, logging, reporting or
  error handling; accepted with the note "has no effect on the simulated I/O".
- :data:`ENGINE_MAP`: engines whose I/O pattern is the same as psync (one I/O at a time) or
  libaio (``iodepth`` in flight) run as that, with a note; :data:`ENGINE_REFUSED` name why the
  others cannot run (network, object store, no block I/O at all).
- :data:`REFUSED_OPTIONS`: shape the I/O in ways raidlab does not model; refused with the reason.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

__all__ = ["STREAM_OPTIONS", "NO_EFFECT_OPTIONS", "ENGINE_MAP", "ENGINE_REFUSED", "REFUSED_OPTIONS",
           "ENUMERATED", "engine_class", "enumerated_problem", "no_effect_note"]

#: Options raidlab models (beyond fio.SUPPORTED_OPTIONS), by canonical name.
STREAM_OPTIONS = (
    "startdelay", "stonewall", "wait_for_previous", "wait_for", "new_group",
    "thinktime", "thinktime_blocks", "thinktime_spin",
    "rate", "rate_min", "rate_iops_min", "rate_cycle",
    "bsrange", "blocksize_unaligned",
    "offset_increment", "loops",
    "nrfiles", "filesize", "file_service_type", "openfiles",
    "sync",
    "iodepth_batch_submit", "iodepth_batch_complete_min", "iodepth_batch_complete_max", "iodepth_low",
    "io_submit_mode",
    "verify", "do_verify", "verify_backlog", "verify_only",
    "zonemode", "zonesize", "zoneskip", "zonerange", "zonecapacity",
    "fill_device", "group_reporting", "max_open_zones", "random_distribution",
    "flow", "flow_id", "flow_sleep", "rw_sequencer",
)

_ALIASES = {
    "ratemin": "rate_min",
    "blocksize_range": "bsrange",
    "bs_unaligned": "blocksize_unaligned",
    "nr_files": "nrfiles",
    "file_service": "file_service_type",
    "open_files": "openfiles",
    "iodepth_batch": "iodepth_batch_submit",
    "iodepth_batch_complete": "iodepth_batch_complete_min",
    "fill_fs": "fill_device",
    "threads": "thread",
    # fio's long names of the steady-state options (issue 20 models ss, ss_dur, ss_ramp)
    "steadystate": "ss",
    "steadystate_duration": "ss_dur",
    "steadystate_ramp_time": "ss_ramp",
}

#: Options that change data contents, CPU, memory placement, logging, reporting or error
#: handling only: the I/O stream raidlab simulates is the same with or without them.
NO_EFFECT_OPTIONS = frozenset("""
    description filename directory filename_format unique_filename thread threads lockfile
    randrepeat allrandrepeat randseed norandommap softrandommap random_generator
    refill_buffers scramble_buffers zero_buffers buffer_pattern buffer_compress_percentage
    buffer_compress_chunk compress_percentage compress_chunk dedupe_percentage dedupe_mode
    dedupe_working_set_percentage dedupe_global
    per_job_logs write_bw_log write_iops_log write_lat_log write_hist_log log_avg_msec
    log_hist_msec log_hist_coarseness log_max_value log_offset log_prio log_compression
    log_store_compressed log_unix_epoch log_alternate_epoch log_entries
    clat_percentiles lat_percentiles slat_percentiles percentile_list significant_figures
    disable_lat disable_clat disable_slat disable_bw_measurement stats unified_rw_reporting
    gtod_reduce gtod_cpu clocksource cpus_allowed cpus_allowed_policy cpumask cpuload cpuchunks
    numa_cpu_nodes numa_mem_policy nice prio prioclass cmdprio cmdprio_class cmdprio_percentage
    cmdprio_bssplit cmdprio_hint priohint
    exitall exitall_on_error exit_what error_dump ignore_error continue_on_error
    verify_pattern verify_interval verify_offset verify_fatal verify_dump verify_async
    verify_async_cpus verify_state_save verify_state_load verify_header_seed verify_write_sequence
    experimental_verify create_serialize create_fsync create_on_open create_only allow_file_create
    allow_mounted_write pre_read unlink unlink_each_loop overwrite fallocate iomem mem
    iomem_align mem_align hugepage-size lockmem kb_base unit_base uid gid profile
    replay_no_stall read_beyond_wp zone_reset_threshold zone_reset_frequency
    job_max_open_zones ignore_zone_limits ioscheduler
    latency_target latency_window latency_percentile latency_run
    block_error_percentiles skip_bad
""".split())

#: Options of NO_EFFECT_OPTIONS whose note says more than "no effect" (they do shape I/O in
#: fio, but raidlab leaves that part out and says so).
_PARTIAL_NOTES = {
    "latency_target": "latency_target (fio searches for the deepest queue that meets it) is not modelled: "
                      "the job runs at its full iodepth",
    "latency_window": "latency_target (fio searches for the deepest queue that meets it) is not modelled: "
                      "the job runs at its full iodepth",
    "latency_percentile": "latency_target (fio searches for the deepest queue that meets it) is not "
                          "modelled: the job runs at its full iodepth",
    "ioscheduler": "ioscheduler is set on the members with raidlab's --scheduler",
    "overwrite": "overwrite only makes fio lay a file out before the job; the array needs no layout",
    "pre_read": "pre_read reads the file into the page cache before the job; it is not simulated",
    "zone_reset_threshold": "with zonemode=zbd raidlab resets a zone when it fills (fio's zone reset "
                            "thresholds are not modelled)",
    "zone_reset_frequency": "with zonemode=zbd raidlab resets a zone when it fills (fio's zone reset "
                            "thresholds are not modelled)",
}

#: Engines that move data the way psync (one I/O at a time) or libaio (``iodepth`` in flight)
#: does, and what raidlab runs them as.
ENGINE_MAP: Dict[str, Tuple[str, str]] = {
    "sync": ("sync", ""),
    "psync": ("sync", ""),
    "vsync": ("sync", ""),
    "pvsync": ("sync", ""),
    "pvsync2": ("sync", ""),
    "libaio": ("async", ""),
    "io_uring": ("async", ""),
    "posixaio": ("async", ""),
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

#: Options that shape the I/O in ways raidlab does not model (refused with the reason).
REFUSED_OPTIONS = {
    "read_iolog": "replays an I/O log; use raidlab replay",
    "write_iolog": "records an I/O log, which raidlab does not write",
    "replay_redirect": "replays an I/O log; use raidlab replay",
    "trim_percentage": "(trims mixed into a write job) is not modelled",
    "trim_backlog": "(trims mixed into a write job) is not modelled",
    "trim_verify_zero": "(trims mixed into a write job) is not modelled",
    "rate_ignore_thinktime": "is not modelled (the rate counts the think time, fio's default)",
    "thinktime_iotime": "is not modelled",
    "number_ios_per_file": "is not modelled",
}


#: fio's options whose value is one of a list (``posval`` in fio-3.33's options.c, as ``fio
#: --cmdhelp=NAME`` prints them under "valid values"), for the options raidlab accepts and does
#: not parse with a grammar of its own (rw, ioengine, random_distribution, ss and kb_base are).
#: fio refuses anything else ("failed parsing NAME=VALUE"); so does raidlab, in
#: :func:`enumerated_problem`, whether the option shapes the simulated I/O or not.
_MEM = ("malloc", "shm", "shmhuge", "mmap", "mmapshared", "mmaphuge")
ENUMERATED: Dict[str, Tuple[str, ...]] = {
    "verify": ("0", "md5", "crc64", "crc32", "crc32c-intel", "crc32c", "crc16", "crc7", "sha1", "sha256",
               "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "xxhash", "meta", "pattern", "null"),
    "clocksource": ("gettimeofday", "clock_gettime", "cpu"),
    "continue_on_error": ("none", "read", "write", "io", "verify", "all", "0", "1"),
    "cpus_allowed_policy": ("shared", "split"),
    "dedupe_mode": ("repeat", "working_set"),
    "exit_what": ("group", "stonewall", "all"),
    "fallocate": ("none", "native", "posix", "keep", "truncate", "0", "1"),
    "file_service_type": ("random", "zipf", "pareto", "normal", "gauss", "roundrobin", "sequential"),
    "io_submit_mode": ("inline", "offload"),
    "lockfile": ("none", "exclusive", "readwrite"),
    "mem": _MEM,
    "iomem": _MEM,
    "profile": ("tiobench", "act"),
    "random_generator": ("tausworthe", "lfsr", "tausworthe64"),
    "rate_process": ("linear", "poisson"),
    "rw_sequencer": ("sequential", "identical"),
    "sync": ("none", "0", "sync", "1", "dsync"),
    "unified_rw_reporting": ("none", "mixed", "both", "0", "1", "2"),
    "unit_base": ("0", "8", "1"),
    "zonemode": ("none", "strided", "zbd"),
}


def enumerated_problem(key: str, name: str, value: Optional[str]) -> Optional[str]:
    """Why fio would refuse ``name=value`` for an enumerated option ``key``, in fio's words, or
    None. fio compares the value up to its first ':' or ',' with each listed one, exactly and
    case-sensitively (parse.c ``opt_len`` and ``str_match_len``), so ``lockfile=exclusive:4``
    passes and ``verify=MD5`` does not."""
    valid = ENUMERATED.get(key)
    if valid is None:
        return None
    text = (value or "").strip()
    if not text:
        return f"option {name} requires an argument"
    head = text.split(":", 1)[0].split(",", 1)[0]
    if head in valid:
        return None
    return f"failed parsing {name}={text} (valid values: {', '.join(valid)})"


def canonical(name: str) -> str:
    return _ALIASES.get(name, name)


def engine_class(engine: str) -> Tuple[Optional[str], str]:
    """(``"sync"``/``"async"``, note) for an engine raidlab runs, or (None, why not)."""
    if engine in ENGINE_MAP:
        return ENGINE_MAP[engine]
    if engine.startswith("external:") or engine.startswith("/"):
        return None, "is an external engine raidlab cannot load"
    reason = ENGINE_REFUSED.get(engine)
    return None, reason or "is not an engine raidlab knows"


def no_effect_note(names) -> str:
    """The one note for every accepted option without effect in a file."""
    plain = sorted(n for n in names if n not in _PARTIAL_NOTES)
    notes = sorted({_PARTIAL_NOTES[n] for n in names if n in _PARTIAL_NOTES})
    parts = []
    if plain:
        verb = "has" if len(plain) == 1 else "have"
        parts.append(f"fio option{'s' if len(plain) > 1 else ''} {', '.join(plain)} {verb} no effect on the simulated I/O")
    return parts + notes
