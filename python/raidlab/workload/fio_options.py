"""The one table of fio job options: one record per option, as fio's own ``options.c`` keeps.

Each :class:`FioOption` holds the option's name, its aliases, its status (modelled, accepted
without effect, or refused), the reason or note shown to users, fio's list of valid values for
an enumerated option, the parser that reads its value (:mod:`raidlab.workload.fio_values`) and
the :class:`~raidlab.workload.spec.Job` (or :class:`~raidlab.workload.spec.Workload`) fields it
lands in. Everything else is derived from :data:`TABLE`: the job-file parser's dispatch
(:func:`lookup`), the names the unknown-option error suggests and ``raidlab fio-options`` lists
(:data:`ACCEPTED`, :func:`fates`), the note about options without effect
(:func:`no_effect_note`) and fio's check of enumerated values (:func:`enumerated_problem`).

To add a fio option: one record here (a parser from ``fio_values`` or a new one there), and,
if it is modelled, the lines that turn its slot into its Job fields where the job is built
(``fio.py`` ``_JobBuilder.build`` for the core set, ``fio_stream.finish`` for the others).

Sources: fio's HOWTO.rst and ``options.c`` (fio-3.33, the installed version; axboe/fio master
agrees for everything here), ``init.c`` (``l_opts``: the command-line-only options), ``parse.c``
(``str_match_len``), ``backend.c`` (``handle_thinktime``; ``run_threads`` for ``stonewall``
and ``wait_for``), ``io_u.c`` (``get_next_buflen`` for ``bsrange``), ``rate-submit.c``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

from raidlab.workload import fio_values as v
from raidlab.workload.fio_engines import ENGINE_MAP, ENGINE_REFUSED, engine_class
from raidlab.workload.units import MAX_INT

__all__ = ["ACCEPTED", "ALIASES", "CLI_ONLY", "ENGINE_MAP", "ENGINE_REFUSED", "ENUMERATED", "FioOption",
           "MODELLED", "NO_EFFECT", "REFUSED", "TABLE", "engine_class", "enumerated_problem", "fates", "lookup",
           "no_effect_note"]

MODELLED, NO_EFFECT, REFUSED = "modelled", "no effect", "refused"


@dataclass(frozen=True)
class FioOption:
    """One fio job option and what raidlab does with it."""

    name: str
    status: str
    #: Reads the value into the job being built (modelled options; a no-effect one may check it).
    parse: Optional[v.Parser] = None
    #: The Job (or Workload) fields the option ends up in.
    lands: Tuple[str, ...] = ()
    aliases: Tuple[str, ...] = ()
    #: fio's valid values of an enumerated option (``posval`` in options.c).
    values: Tuple[str, ...] = ()
    #: Refused: the reason, shown after the option's name. No effect: the note shown instead of
    #: the plain "has no effect" (the option shapes I/O in fio, in a part raidlab leaves out).
    note: str = ""
    #: No effect and not worth a note (it only names things).
    quiet: bool = False


def _modelled(name: str, parse: v.Parser, *lands: str, aliases: Tuple[str, ...] = (),
              values: Tuple[str, ...] = ()) -> FioOption:
    return FioOption(name, MODELLED, parse, lands, aliases, values)


def _no_effect(names: str, **fields) -> Tuple[FioOption, ...]:
    return tuple(FioOption(name, NO_EFFECT, **fields) for name in names.split())


def _refused(name: str, reason: str) -> FioOption:
    return FioOption(name, REFUSED, note=reason)


_MEM = ("malloc", "shm", "shmhuge", "mmap", "mmapshared", "mmaphuge")
_DEPTH = v.ranged(0, 65536)
_COUNT = v.ranged(0, MAX_INT)
_ONE_TO_A_MILLION = v.ranged(1, 1_000_000)
_FLOW = v.ranged(0, 1 << 31)
_CHECKED = v.checked_text(0, MAX_INT)

#: The options that make the core of a job: what it reads and writes, how much, how deep.
_CORE = (
    _modelled("rw", v.rw, "read_fraction", "random_fraction", "seq_skip_bytes", aliases=("readwrite",)),
    _modelled("bs", v.block_sizes, "block_sizes", "write_block_sizes", aliases=("blocksize",)),
    _modelled("bssplit", v.bssplit, "block_sizes", "write_block_sizes"),
    _modelled("blockalign", v.block_sizes, "block_align_bytes", aliases=("ba",)),
    _modelled("rwmixread", v.mix_percent, "read_fraction"),
    _modelled("rwmixwrite", v.mix_percent, "read_fraction"),
    _modelled("percentage_random", v.random_percent, "random_fraction"),
    _modelled("percentage_sequential", v.random_percent, "random_fraction"),
    _modelled("iodepth", v.ranged(1, 65536), "iodepth"),
    _modelled("numjobs", v.ranged(1, 4096), "threads"),
    _modelled("ioengine", v.ioengine, "iodepth"),
    _modelled("size", v.region, "size_bytes", "size_percent"),
    _modelled("io_size", v.region, "io_bytes", aliases=("io_limit",)),
    _modelled("offset", v.region, "offset_bytes", aliases=("fileoffset",)),
    _modelled("runtime", v.duration, "runtime_ns", aliases=("timeout",)),
    _modelled("time_based", v.flag, "time_based"),
    _modelled("ramp_time", v.duration, "ramp_ns"),
    _modelled("number_ios", _COUNT, "number_ios"),
    _modelled("random_distribution", v.random_distribution, "distribution", "zones", "zones_absolute"),
    _modelled("rate_iops", v.iops_caps, "rate_iops", "read_fraction"),
    _modelled("rate_process", v.enumerated, "arrival", values=("linear", "poisson")),
    _modelled("fsync", _COUNT, "fsync_every", "fsync_kind"),
    _modelled("fdatasync", _COUNT, "fsync_every", "fsync_kind"),
    _modelled("end_fsync", v.boolean, "fsync_end"),
    _modelled("fsync_on_close", v.boolean, "fsync_end"),
    _modelled("direct", v.boolean, "direct"),
    _modelled("buffered", v.buffered, "direct"),
    _modelled("invalidate", v.boolean, "invalidate"),
    # Read before every other option of the job (it has prio 1 in fio's table): it sets how
    # the sizes of the others are read.
    _modelled("kb_base", v.ignore),
    _modelled("name", v.job_name, "name"),
    # steady state (fio steadystate.c)
    _modelled("ss", v.steady_state, "steady_state", aliases=("steadystate",)),
    _modelled("ss_dur", v.duration, "steady_state", aliases=("steadystate_duration",)),
    _modelled("ss_ramp", v.duration, "steady_state", aliases=("steadystate_ramp_time",)),
)

#: The options that change when or where a job's I/O is issued (the core documents each in
#: ``sim/workload.rs``). Those that land only in ``notes`` are read and checked, then noted:
#: ``rate_min``, ``rate_iops_min`` and ``verify_backlog`` with what raidlab does instead.
#: Four are read and checked and taken by nothing yet, though fio uses each on a part raidlab
#: simulates: ``openfiles`` and ``io_submit_mode`` (noted as having no effect), ``zonerange`` and
#: ``zonecapacity`` (not noted); tests/test_fio_option_table.py lists what fio does with each.
_STREAM = (
    _modelled("startdelay", v.startdelay, "start_delay_ns"),
    _modelled("stonewall", v.flag, "group", "report_groups"),
    _modelled("wait_for_previous", v.flag, "group", "report_groups"),
    _modelled("wait_for", v.text, "group"),
    _modelled("new_group", v.flag, "report_groups"),
    _modelled("group_reporting", v.flag, "reporting"),
    # the pause is max(thinktime, thinktime_spin): fio spins part of it and sleeps the rest
    _modelled("thinktime", v.microseconds, "think_ns"),
    _modelled("thinktime_spin", v.microseconds, "think_ns"),
    _modelled("thinktime_blocks", _ONE_TO_A_MILLION, "think_blocks"),
    _modelled("rate", v.byte_rates, "rate_bytes_per_s", "read_fraction"),
    _modelled("rate_min", v.byte_rates, "notes", aliases=("ratemin",)),
    _modelled("rate_iops_min", _CHECKED, "notes"),
    _modelled("bsrange", v.size_ranges, "block_sizes", "write_block_sizes", "block_align_bytes",
              aliases=("blocksize_range",)),
    _modelled("blocksize_unaligned", v.flag, "block_sizes", "block_align_bytes", aliases=("bs_unaligned",)),
    _modelled("offset_increment", v.offset_increment, "offset_increment_bytes"),
    _modelled("loops", _ONE_TO_A_MILLION, "loops"),
    _modelled("nrfiles", _ONE_TO_A_MILLION, "files", aliases=("nr_files",)),
    _modelled("filesize", v.filesize, "size_bytes"),
    _modelled("file_service_type", v.file_service_type, "file_service", "file_service_ios", aliases=("file_service",),
              values=("random", "zipf", "pareto", "normal", "gauss", "roundrobin", "sequential")),
    _modelled("openfiles", _ONE_TO_A_MILLION, "notes", aliases=("open_files",)),
    _modelled("sync", v.sync, "fsync_every", "fsync_kind", values=("none", "0", "sync", "1", "dsync")),
    _modelled("iodepth_batch_complete_min", _DEPTH, "iodepth_low", aliases=("iodepth_batch_complete",)),
    _modelled("iodepth_low", _DEPTH, "iodepth_low"),
    _modelled("io_submit_mode", v.enumerated, "notes", values=("inline", "offload")),
    _modelled("verify", v.verify, "verify",
              values=("0", "md5", "crc64", "crc32", "crc32c-intel", "crc32c", "crc16", "crc7", "sha1", "sha256",
                      "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "xxhash", "meta", "pattern", "null")),
    _modelled("do_verify", v.boolean_value, "verify"),
    _modelled("verify_backlog", _COUNT, "notes"),
    _modelled("verify_only", v.boolean_value, "read_fraction"),
    _modelled("zonemode", v.enumerated, "zone_bytes", "zone_skip_bytes", "zbd_zone_bytes",
              values=("none", "strided", "zbd")),
    _modelled("zonesize", v.sector_size, "zone_bytes", "zbd_zone_bytes"),
    _modelled("zoneskip", v.sector_size, "zone_skip_bytes"),
    # read and checked, taken by nothing yet: fio strides zonerange + zoneskip from zone to zone
    # (io_u.c setup_strided_zone_mode), raidlab zonesize + zoneskip; fio writes an emulated zbd
    # zone up to zonecapacity (zbd.c init_zone_info), raidlab to its end
    _modelled("zonerange", v.sector_size),
    _modelled("zonecapacity", v.sector_size),
    _modelled("max_open_zones", v.ranged(0, 1 << 20), "zbd_max_open_zones"),
    _modelled("fill_device", v.flag, "size_bytes", aliases=("fill_fs",)),
    _modelled("flow", _FLOW, "flow_weight"),
    _modelled("flow_id", _FLOW, "flow_id"),
    _modelled("flow_sleep", v.microseconds, "flow_sleep_ns"),
    _modelled("rw_sequencer", v.enumerated, "random_fraction", values=("sequential", "identical")),
)

_LATENCY_TARGET = ("latency_target (fio searches for the deepest queue that meets it) is not modelled: "
                   "the job runs at its full iodepth")
_ZONE_RESET = ("with zonemode=zbd raidlab resets a zone when it fills (fio's zone reset thresholds are not "
               "modelled)")

#: Options that change data contents, CPU, memory placement, logging, reporting or error
#: handling only: the I/O stream raidlab simulates is the same with or without them. Offsets
#: are always drawn independently (as fio does with ``norandommap``), so the random map and
#: generator options are here too.
_NO_EFFECT = (
    # naming the job and its target (the target is the simulated array, one file per job)
    *_no_effect("description directory", quiet=True),
    FioOption("filename", NO_EFFECT, v.one_file, quiet=True),
    *_no_effect("filename_format unique_filename"),
    FioOption("thread", NO_EFFECT, aliases=("threads",)),
    FioOption("lockfile", NO_EFFECT, values=("none", "exclusive", "readwrite")),
    # seeding and the random map
    *_no_effect("randrepeat allrandrepeat randseed norandommap softrandommap"),
    FioOption("random_generator", NO_EFFECT, values=("tausworthe", "lfsr", "tausworthe64")),
    # data contents
    *_no_effect("refill_buffers scramble_buffers zero_buffers buffer_pattern buffer_compress_percentage "
                "buffer_compress_chunk compress_percentage compress_chunk dedupe_percentage"),
    FioOption("dedupe_mode", NO_EFFECT, values=("repeat", "working_set")),
    *_no_effect("dedupe_working_set_percentage dedupe_global"),
    # logging and reporting
    *_no_effect("per_job_logs write_bw_log write_iops_log write_lat_log write_hist_log log_avg_msec "
                "log_hist_msec log_hist_coarseness log_max_value log_offset log_prio log_compression "
                "log_store_compressed log_unix_epoch log_alternate_epoch log_entries "
                "clat_percentiles lat_percentiles slat_percentiles percentile_list significant_figures "
                "disable_lat disable_clat disable_slat disable_bw_measurement stats block_error_percentiles"),
    FioOption("unified_rw_reporting", NO_EFFECT, values=("none", "mixed", "both", "0", "1", "2")),
    FioOption("unit_base", NO_EFFECT, values=("0", "8", "1")),
    # clocks, CPUs, memory and priorities
    *_no_effect("gtod_reduce gtod_cpu"),
    FioOption("clocksource", NO_EFFECT, values=("gettimeofday", "clock_gettime", "cpu")),
    *_no_effect("cpus_allowed cpumask cpuload cpuchunks numa_cpu_nodes numa_mem_policy nice prio prioclass "
                "cmdprio cmdprio_class cmdprio_percentage cmdprio_bssplit cmdprio_hint priohint"),
    FioOption("cpus_allowed_policy", NO_EFFECT, values=("shared", "split")),
    FioOption("mem", NO_EFFECT, values=_MEM),
    FioOption("iomem", NO_EFFECT, values=_MEM),
    *_no_effect("iomem_align mem_align hugepage-size lockmem uid gid"),
    # stopping on errors
    *_no_effect("exitall exitall_on_error error_dump ignore_error skip_bad"),
    FioOption("exit_what", NO_EFFECT, values=("group", "stonewall", "all")),
    FioOption("continue_on_error", NO_EFFECT, values=("none", "read", "write", "io", "verify", "all", "0", "1")),
    # what verification checks (verify itself is modelled: it reads back what was written)
    *_no_effect("verify_pattern verify_interval verify_offset verify_fatal verify_dump verify_async "
                "verify_async_cpus verify_state_save verify_state_load verify_header_seed "
                "verify_write_sequence experimental_verify"),
    # laying out and removing files (the array needs no layout)
    *_no_effect("create_serialize create_fsync create_on_open create_only allow_file_create "
                "allow_mounted_write unlink unlink_each_loop"),
    FioOption("fallocate", NO_EFFECT, values=("none", "native", "posix", "keep", "truncate", "0", "1")),
    FioOption("overwrite", NO_EFFECT,
              note="overwrite only makes fio lay a file out before the job; the array needs no layout"),
    FioOption("pre_read", NO_EFFECT,
              note="pre_read reads the file into the page cache before the job; it is not simulated"),
    FioOption("profile", NO_EFFECT, values=("tiobench", "act")),
    *_no_effect("replay_no_stall read_beyond_wp job_max_open_zones ignore_zone_limits latency_run"),
    *_no_effect("zone_reset_threshold zone_reset_frequency", note=_ZONE_RESET),
    FioOption("ioscheduler", NO_EFFECT, note="ioscheduler is set on the members with raidlab's --scheduler"),
    # how many I/Os one io_submit or io_getevents call takes: fio commits what it has queued
    # before it waits (ioengines.c td_io_getevents), and raidlab's host spends no time in calls
    FioOption("iodepth_batch_submit", NO_EFFECT, _CHECKED, aliases=("iodepth_batch",)),
    FioOption("iodepth_batch_complete_max", NO_EFFECT, _CHECKED),
    # backend.c check_min_rate is the only reader of rate_cycle
    FioOption("rate_cycle", NO_EFFECT, _CHECKED,
              note="rate_cycle only sets the window over which fio checks rate_min and rate_iops_min, "
                   "which raidlab does not enforce"),
    *_no_effect("latency_target latency_window latency_percentile", note=_LATENCY_TARGET),
)

#: Options that shape the I/O in ways raidlab does not model, refused with the reason.
_REFUSED = (
    _refused("read_iolog", "replays a fio I/O log, which raidlab does not read"),
    _refused("write_iolog", "records an I/O log, which raidlab does not write"),
    _refused("replay_redirect", "redirects the devices of a replayed fio I/O log (read_iolog), which raidlab "
                                "does not read"),
    *(_refused(name, "(trims mixed into a write job) is not modelled")
      for name in ("trim_percentage", "trim_backlog", "trim_verify_zero")),
    _refused("rate_ignore_thinktime", "is not modelled (the rate counts the think time, fio's default)"),
    _refused("thinktime_iotime", "is not modelled"),
    _refused("number_ios_per_file", "is not modelled"),
    # an ``include FILE`` line (init.c) as well as an option of that name
    _refused("include", "is not supported; paste the included options into the job file"),
)

#: Every fio job option raidlab knows, one record each.
TABLE: Tuple[FioOption, ...] = _CORE + _STREAM + _NO_EFFECT + _REFUSED

#: Canonical name of every alias.
ALIASES: Dict[str, str] = {alias: option.name for option in TABLE for alias in option.aliases}
_BY_NAME: Dict[str, FioOption] = {option.name: option for option in TABLE}

#: Every job option name raidlab accepts (modelled or without effect, or an alias of one),
#: sorted: the names the unknown-option error suggests from and ``raidlab fio-options`` lists.
ACCEPTED: Tuple[str, ...] = tuple(sorted(
    name for option in TABLE if option.status != REFUSED for name in (option.name, *option.aliases)))

#: fio's enumerated options and their valid values (as ``fio --cmdhelp=NAME`` prints them under
#: "valid values"), for the options raidlab accepts and does not parse with a grammar of its
#: own (rw, ioengine, random_distribution, ss and kb_base are). fio refuses anything else
#: ("failed parsing NAME=VALUE"); so does raidlab, in :func:`enumerated_problem`, whether the
#: option shapes the simulated I/O or not.
ENUMERATED: Dict[str, Tuple[str, ...]] = {option.name: option.values for option in TABLE if option.values}

#: fio command-line options that are not job options (fio's ``l_opts`` in init.c).
CLI_ONLY = ("output-format", "output", "minimal", "showcmd", "parse-only", "section", "status-interval")


def canonical(name: str) -> str:
    return ALIASES.get(name, name)


def lookup(name: str) -> Optional[FioOption]:
    """The record of an option by its name or an alias (None for an option raidlab does not know)."""
    return _BY_NAME.get(canonical(name))


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
    if v.choice(text) in valid:
        return None
    return f"failed parsing {name}={text} (valid values: {', '.join(valid)})"


def no_effect_note(names: Iterable[str]) -> List[str]:
    """The notes for the options without effect used in a file: one for the plain ones, one per
    distinct note of the others."""
    names = list(names)
    plain = sorted(n for n in names if not _BY_NAME[n].note)
    notes = sorted({_BY_NAME[n].note for n in names if _BY_NAME[n].note})
    parts = []
    if plain:
        verb = "has" if len(plain) == 1 else "have"
        parts.append(f"fio option{'s' if len(plain) > 1 else ''} {', '.join(plain)} {verb} no effect on the simulated I/O")
    return parts + notes


def fates() -> Dict[str, str]:
    """Each accepted option name -> what raidlab does with it (modelled, no effect, alias)."""
    said = {MODELLED: "modelled", NO_EFFECT: "accepted, no effect on the simulated I/O"}
    return {name: f"alias of {ALIASES[name]}" if name in ALIASES else said[_BY_NAME[name].status]
            for name in ACCEPTED}
