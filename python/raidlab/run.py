"""One run: a design (the array and what drives it), a workload and run options.

Every command that simulates (``sim``, ``compare``, ``reliability --rebuild-from-sim``, ``plan``)
and the Python API (:func:`raidlab.simulate`) describe a run with one :class:`RunSpec` and build
it with one function, :func:`build_run`, from plain ``name -> value`` settings: CLI options, a
``[[design]]`` entry of a designs file, ``--sim-opt KEY=VALUE`` pairs or keyword arguments. So a
setting has one name, one default and one range everywhere, declared once in the core
(:mod:`raidlab.settings`).

>>> spec = build_run({"level": "raid6", "devices": 4, "drive": "null", "preset": "wal"})
>>> spec.design.label()
'raid6 x4 default layout, chunk 512 KiB, null, md, mq-deadline'
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Dict, Mapping, Optional, Tuple

from raidlab import _core, controllers, hosts
from raidlab.drives import DriveSpec, resolve_drive
from raidlab.errors import ArrayError, ConfigError
from raidlab.settings import (DEFAULTS, DESIGN_KEYS as _DESIGN_KEYS, FLOAT_KEYS as _FLOAT_KEYS,
                              OPTION_KEYS as _OPTION_KEYS, TIMELINE_ACTIONS, convert as _convert, declared)
from raidlab.stacked import check_counts, is_stacked
from raidlab.workload import Workload, parse_fio, parse_sysbench, preset as workload_preset
from raidlab.workload.units import is_decimal
from raidlab.workload_files import parse_fio_file

#: Setting names that choose the workload (exactly one, or none for an idle array).
WORKLOAD_KEYS = ("fio", "sysbench", "preset")


@declared("design")
class Design:
    """The array and everything below the host: what a design in ``compare`` varies. Its fields
    are the run settings the core declares with scope "design" (:mod:`raidlab.settings`)."""

    def controller_values(self) -> Tuple[str, Dict[str, Any]]:
        """(kind, every controller parameter): the preset or file, then ``controller_opts``, then
        the legacy --cache-mib/--bbu/--rebuild-priority where they differ from the generic default."""
        kind, values = controllers.resolve(self.controller, dict(self.controller_opts))
        for name, key in (("cache_mib", "cache_mib"), ("bbu", "bbu"), ("rebuild_priority", "rebuild_rate_pct")):
            if getattr(self, name) != DEFAULTS[name]:
                values[key] = getattr(self, name)
        if self.drive_write_cache != "default":
            values["drive_write_cache"] = self.drive_write_cache
        if self.drive_queue_depth:
            values["drive_queue_depth"] = self.drive_queue_depth
        if self.bbu_learn_policy != "default":
            values["bbu_learn_policy"] = self.bbu_learn_policy
        return kind, values

    def write_cache_note(self) -> str:
        """What the drives' write caches are, for the run's header line."""
        kind, values = self.controller_values()
        if self.drive.kind != "hdd":
            # Only the HDD model has a write cache a controller or hdparm switches; an SSD's
            # buffer, a cloud volume and the null drive have no such setting.
            return f"{self.drive.kind} drive: no write cache setting"
        if self.drive_write_cache == "default" and kind == "md":
            return "drive write cache: the drive's default"
        return f"drive write cache {values['drive_write_cache']}"

    def label(self) -> str:
        """"raid5 x6 default layout, chunk 512 KiB, cheetah-10k7, md, mq-deadline"."""
        stack = ""
        if not is_decimal(str(self.level)):  # a stack: "raid5+0 x8 (inner arrays of 4) ..."
            inner = f"inner arrays of {self.inner_devices}" if self.inner_devices else "default inner arrays"
            stack = f" ({inner}, outer chunk {self.outer_chunk_kib} KiB)"
        return (f"raid{self.level} x{self.devices}{stack} {self.layout or 'default layout'}, chunk {self.chunk_kib} KiB, "
                f"{self.drive.name}{self.partition_note()}, {self.controller}, {self.scheduler}"
                + (f", host {self.host}" if self.host else ""))

    def partition_note(self) -> str:
        """" (partition 30 GiB)" when members are a partition, else nothing."""
        return f" (partition {self.partition_gib:g} GiB)" if self.partition_gib else ""

    def member_bytes(self) -> int:
        """Bytes of each member device: the partition, or the whole drive."""
        whole = self.drive.capacity_bytes
        return min(whole, partition_bytes(self.partition_gib)) if self.partition_gib else whole



@declared("options")
class Options:
    """How the run goes: seed, bounds, and the failures it plays out. Its fields are the run
    settings the core declares with scope "options" (:mod:`raidlab.settings`)."""


#: Every setting's name: the design's, the options', then the workload's.
KNOWN_KEYS = _DESIGN_KEYS + _OPTION_KEYS + WORKLOAD_KEYS


def check_bbu_learn(design: "Design", options: "Options") -> None:
    """A learn cycle is a battery's: only a hardware controller with a battery-backed cache has one."""
    if options.bbu_learn is None:
        return
    kind, values = design.controller_values()
    if kind != "hw" or not values["bbu"] or not values["cache_mib"]:
        why = ("the array is Linux md's, with no controller cache" if kind == "md" else
               "its cache has no BBU (--bbu)" if not values["bbu"] else "it has no cache (--cache-mib 0)")
        raise ConfigError(f"--bbu-learn needs a hardware controller with a battery-backed cache; "
                          f"controller {design.controller}: {why}")
def check_timeline(options: "Options") -> None:
    """Each member's scripted events must make sense in time order: a fail of a working member,
    a replace of a failed one (members in ``failed`` start failed). Without this, a replace of a
    working member or a second fail of a failed one did nothing, silently. With ``spare`` the
    rules are a hot spare's (:func:`_check_spare_timeline`)."""
    if options.spare:
        _check_spare_timeline(options)
        return
    failed = set(options.failed)
    for event in sorted(options.timeline, key=lambda e: e["at_s"]):
        member, at_s, action = event["member"], event["at_s"], event["action"]
        if action == "latent_error":
            if member in failed:
                raise ConfigError(f"--latent-error {member}@{at_s:g}s: member {member} is failed then; "
                                  "a latent error needs a working member")
            continue
        if action == "fail" and member in failed:
            raise ConfigError(f"--fail {member}@{at_s:g}s: member {member} is already failed then "
                              f"(failed {'from the start' if member in options.failed else 'earlier'}, "
                              "not replaced since)")
        if action == "replace" and member not in failed:
            raise ConfigError(f"--replace {member}@{at_s:g}s: member {member} is working then; "
                              "a replacement follows a --fail (or --failed) of the same member")
        (failed.add if action == "fail" else failed.discard)(member)


def _check_spare_timeline(options: "Options") -> None:
    """``spare`` is md's one hot spare (mdadm --spare-devices=1): the first member to fail (or
    the first in ``failed``) is rebuilt onto it at once. What one spare cannot do is refused:
    a second failure (md would have no spare left, and the simulator would rebuild the member
    as if it had another, after the first rebuild), a failure of the slot the spare took (the
    simulator skipped it while the rebuild ran), and any --replace: of the spare's slot there
    is nothing to replace, and of a working member md would hot-replace it onto the spare
    (mdadm --replace, want_replacement), which the simulator does not model."""
    if len(options.failed) > 1:
        raise ConfigError(f"--failed {','.join(map(str, options.failed))} with --spare: the one hot spare "
                          f"takes member {options.failed[0]}'s slot; member {options.failed[1]} would need a "
                          "second spare, which md would not have (drop --spare, or fail one member)")
    took = (options.failed[0], 0.0) if options.failed else None  # (member, when) the spare took
    for event in sorted(options.timeline, key=lambda e: e["at_s"]):
        member, at_s, action = event["member"], event["at_s"], event["action"]
        spare_slot = took is not None and took[0] == member
        if action == "latent_error":
            continue
        if action == "fail" and took is None:
            took = (member, at_s)
            continue
        option = f"--{action} {member}@{at_s:g}s"
        taken = f"the hot spare took member {took[0]}'s slot at {took[1]:g}s" if took else ""
        if action == "fail":
            raise ConfigError(f"{option}: {taken}; this failure would need a second spare, which --spare "
                              "(one hot spare, as mdadm --spare-devices=1) does not give")
        if spare_slot:
            raise ConfigError(f"{option}: {taken}; there is nothing to replace (--replace is for runs "
                              "without --spare)")
        raise ConfigError(f"{option}: member {member} is working then; with a hot spare md would copy it "
                          "onto the spare while it serves (a hot replace, mdadm --replace), which raidlab "
                          "does not model")


def check_timeline_played(options: "Options", raw: Mapping[str, Any]) -> None:
    """After a run: every scripted replace started its rebuild. The simulator rebuilds one
    member at a time and skips a replace while another rebuild runs (md would keep the new disk
    as a spare until the running recovery ends), so a run where that happened is refused rather
    than reported as if the event had played. A fail of the member being rebuilt is modelled
    (the recovery is aborted, ``rebuilds[i].aborted_ns``); events after the run's end are notes
    (:func:`raidlab.notes.events_after_the_end`)."""
    rebuilds = raw.get("rebuilds") or []
    for event in sorted(options.timeline, key=lambda e: e["at_s"]):
        member, at_ns = event["member"], round(event["at_s"] * 1e9)
        if at_ns > raw["end_ns"] or event["action"] != "replace":
            continue
        busy = [r for r in rebuilds if r["start_ns"] <= at_ns and _ends_after(r, at_ns)
                and not (r["member"] == member and r["start_ns"] == at_ns)]  # not the rebuild it started
        if busy:
            r = busy[0]
            ended = (f"it ended at {r['end_ns'] / 1e9:g}s" if r["end_ns"] is not None
                     else "it had not ended when the run did")
            raise ConfigError(f"--replace {member}@{event['at_s']:g}s: member {r['member']}'s rebuild (from "
                              f"{r['start_ns'] / 1e9:g}s) was still running then; raidlab rebuilds one member "
                              f"at a time and does not model a second replacement queued behind it ({ended})")


def _ends_after(rebuild: Mapping[str, Any], at_ns: int) -> bool:
    """Whether a rebuild of the core's result was still running at ``at_ns``."""
    end = rebuild["aborted_ns"] if rebuild.get("aborted_ns") is not None else rebuild["end_ns"]
    return end is None or end >= at_ns


def normalise_level(level: Any) -> str:
    """The level's number as text ("raid6", "6" and 6 all give "6"): the one place level names
    are read (the core's parser, which knows mdadm's names). A stacked level gives its name
    ("raid50" and "5+0" give "5+0"; "10" stays md's raid10)."""
    text = str(level)
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):  # not text the core can take (bytes undecoded)
        raise ArrayError(f"unknown RAID level {text.encode('utf-8', 'backslashreplace').decode()!r}")
    stacked = _core.parse_stacked_level(text)
    return stacked if stacked else str(_core.parse_level(text))


@dataclass(frozen=True)
class RunSpec:
    """One simulation: a design, a workload (None: an idle array) and run options."""

    design: Design
    workload: Optional[Workload]
    options: Options

    def config(self) -> Dict[str, Any]:
        """The core's configuration dict (also recorded in every report as ``raidlab.config``):
        grouped by layer, each run setting under its declared name and in its declared unit
        (the glue converts to the core's units)."""
        d, o = self.design, self.options
        kind, values = d.controller_values()
        workload = (self.workload.to_dict() if self.workload is not None
                    else {"jobs": [], "source": {"tool": "idle", "text": ""}})
        return {
            "seed": int(o.seed),
            "array": {"level": d.level, "layout": d.layout, "devices": d.devices, "chunk_kib": d.chunk_kib,
                      "partition_gib": float(d.partition_gib),
                      # A stacked level's inner arrays and outer chunk (only then, so
                      # every other run's recorded configuration stays as it was).
                      **({"inner_devices": d.inner_devices, "outer_chunk_kib": d.outer_chunk_kib}
                         if not is_decimal(str(d.level)) else {})},
            "failed": list(o.failed),
            "drive": d.drive.choice,
            "controller": {"kind": kind, "stripe_cache_size": d.stripe_cache_size,
                           "rmw_level": d.rmw_level, "group_thread_cnt": d.group_thread_cnt,
                           "skip_copy": d.skip_copy, "preread_bypass_threshold": d.preread_bypass_threshold,
                           "cache_mib": values["cache_mib"], "bbu": values["bbu"],
                           "read_ahead": d.read_ahead, "name": d.controller,
                           "hw": controllers.core_params(values),
                           # Only with a learn cycle, so every other run's configuration stays as it was.
                           **({"bbu_learn": [float(t) for t in o.bbu_learn]} if o.bbu_learn is not None else {})},
            "scheduler": d.scheduler,
            "nr_requests": d.nr_requests,
            "max_sectors_kb": d.max_sectors_kb,
            "workload": workload,
            "max_time_s": float(o.max_time_s),
            "max_events": int(o.max_events),
            "timeline": sorted(o.timeline, key=lambda e: e["at_s"]),
            "rebuild": {"speed_limit_min": d.speed_limit_min, "speed_limit_max": d.speed_limit_max,
                        "spare": o.spare, "rebuild_priority": values["rebuild_rate_pct"],
                        "rebuild_start_pct": float(o.rebuild_start_pct)},
            "drive_queue_depth": values["drive_queue_depth"],
            "drive_write_cache": ("default" if kind == "md" and d.drive_write_cache == "default"
                                  else values["drive_write_cache"]),
            "page_cache": self.page_cache_config(),
            "host": self.host_config(),
            "command_timeout_s": float(o.command_timeout_s),
            # Only when asked, so every other run's recorded configuration stays as it was.
            **({"latency_by_second": True} if o.latency_by_second else {}),
        }

    def page_cache_config(self) -> Dict[str, Any]:
        """The host's page cache (used by buffered jobs only), each setting under its declared
        name and in its declared unit; the glue converts to the core's bytes and nanoseconds."""
        d = self.design
        return {"ram_gib": float(d.ram_gib), "dirty_ratio": d.dirty_ratio,
                "dirty_background_ratio": d.dirty_background_ratio, "dirty_bytes": 0,
                "dirty_background_bytes": 0, "dirty_expire_centisecs": d.dirty_expire_centisecs,
                "dirty_writeback_centisecs": d.dirty_writeback_centisecs, "read_ahead_kb": d.read_ahead_kb}

    def host_config(self) -> Optional[Dict[str, Any]]:
        """The host preset's EBS limits (None: no host) and the credit balance its buckets start
        with, under the setting's declared name (``host_credits_pct``)."""
        limits = hosts.limits(self.design.host, self.design.host_credits_pct)
        if limits is None:
            return None
        return {**{k: v for k, v in limits.items() if k != "credits_pct"},
                "host_credits_pct": limits["credits_pct"]}

    def page_cache_note(self) -> str:
        """"page cache 64 GiB" when any job is buffered, else nothing: each job's own description
        already says direct or buffered (the header said "direct" twice)."""
        if self.workload is None or all(job.direct for job in self.workload.jobs):
            return ""
        return f"page cache {self.design.ram_gib:g} GiB"

    def title(self) -> str:
        """The design and the workload in one line (the head of ``raidlab sim``'s table)."""
        if self.workload is None:
            return f"{self.design.label()} | {self.design.write_cache_note()} | idle"
        cache = self.page_cache_note()
        return (f"{self.design.label()} | {self.design.write_cache_note()} | "
                f"{self.workload.describe()}" + (f" | {cache}" if cache else ""))


def ram_bytes(ram_gib: float) -> int:
    """RAM in bytes, whole 4 KiB pages: the core's conversion of ``ram_gib``."""
    return _core.ram_bytes(float(ram_gib))


def partition_bytes(partition_gib: float) -> int:
    """A partition's bytes, whole 1 MiB units (parted's default alignment); 0: the whole drive.
    The core's conversion of ``partition_gib``."""
    return _core.partition_bytes(float(partition_gib))


#: Presets sized by the host's RAM: bonnie++ writes a file of twice RAM by default so that the
#: page cache cannot hold it (bonnie++ -s, "default is twice the size of RAM").
_RAM_SIZED_PRESETS = ("bonnie-seq", "bonnie-seq-read")


def _size_by_ram(workload: Optional[Workload], preset: Any, ram_gib: float) -> Optional[Workload]:
    if workload is None or preset not in _RAM_SIZED_PRESETS:
        return workload
    size = 2 * ram_bytes(ram_gib)
    return replace(workload, jobs=tuple(replace(job, size_bytes=size) for job in workload.jobs))


def _checked(settings: Mapping[str, Any], keys: Tuple[str, ...], where: str) -> Dict[str, Any]:
    """The settings given (None = not given) among ``keys``, each checked; others refused."""
    given = {k: v for k, v in settings.items() if v is not None}
    unknown = sorted(set(given) - set(keys))
    if unknown:
        raise ConfigError(f"{where}unknown setting(s) {', '.join(unknown)}; expected {', '.join(keys)}")
    return {k: (given[k] if k in WORKLOAD_KEYS else _convert(k, given[k], where)) for k in keys if k in given}


def _check_stack_options(given: Mapping[str, Any], where: str) -> None:
    """--inner-devices and --outer-chunk-kib belong to stacked levels."""
    if not is_decimal(str(given.get("level", DEFAULTS["level"]))):
        return
    for name in ("inner_devices", "outer_chunk_kib"):
        if given.get(name, DEFAULTS[name]) != DEFAULTS[name]:
            raise ConfigError(f"{where}{name}={given[name]}: only a stacked level (1+0, 5+0, 6+0, 0+1) has "
                              f"inner arrays and an outer chunk, not raid{given.get('level', DEFAULTS['level'])}")


#: The workload of an idle array (a rebuild with no foreground I/O).
IDLE = None


#: What ``--fio`` takes, for every command's help (see :func:`fio_workload`).
FIO_FORMS = ("JOB.fio is a job file's path (an existing path is always read as a file) or, when it "
             "holds a newline, the job text itself.")


def fio_workload(fio: str) -> Workload:
    """``--fio``'s value: the path of a job file, or the job text itself.

    A value that names an existing file (or anything else that exists) is always read as a file,
    whatever characters it holds (``jobs[1]/oltp.fio`` is a path). Only a value that does not
    exist and holds a newline is job text: a job needs a section line and an option line.
    """
    try:
        os.stat(fio)
        exists = True
    except (OSError, ValueError):  # missing, a name too long for a path, or a NUL in it
        exists = False
    if exists or "\n" not in fio:
        return parse_fio_file(fio)
    return parse_fio(fio)


def resolve_workload(fio: Optional[str] = None, sysbench: Optional[str] = None,
                     preset: Optional[str] = None, workload: Optional[Workload] = None,
                     allow_idle: bool = False) -> Optional[Workload]:
    """Exactly one of a fio job file (path or text), sysbench options, a preset or a Workload;
    none at all means an idle array when ``allow_idle`` (a failure timeline runs on its own)."""
    given = [w for w in (fio, sysbench, preset, workload) if w is not None]
    if not given and allow_idle:
        return IDLE
    if len(given) != 1:
        raise ConfigError("give exactly one workload: --fio JOB, --sysbench \"OPTIONS\" or --preset NAME")
    if workload is not None:
        return workload
    if fio is not None:
        if not isinstance(fio, (str, os.PathLike)):
            raise ConfigError(f"fio must be a job file's path or the job text, got {type(fio).__name__}")
        return fio_workload(os.fspath(fio) if not isinstance(fio, str) else fio)
    if sysbench is not None:
        return parse_sysbench(sysbench)
    return workload_preset(preset)


def build_design(settings: Mapping[str, Any], where: str = "") -> Design:
    """A :class:`Design` from design settings only (a ``[[design]]`` entry of a designs file)."""
    given = _checked(settings, _DESIGN_KEYS, where)
    if "level" in given:
        given["level"] = normalise_level(given["level"])
    _check_stack_options(given, where)
    if is_stacked(given.get("level", DEFAULTS["level"])):
        check_counts(given["level"], given.get("devices", DEFAULTS["devices"]),
                     given.get("inner_devices", DEFAULTS["inner_devices"]), where)
    given["drive"] = resolve_drive(given.get("drive", DEFAULTS["drive"]), f"{where}drive" if where else "--drive")
    return Design(**given)


def build_run(settings: Mapping[str, Any], *, workload: Optional[Workload] = None, where: str = "",
              allow_idle: bool = False) -> RunSpec:
    """The one builder of a :class:`RunSpec`, from ``name -> value`` settings (names from
    :data:`KNOWN_KEYS`; a value of None means "not given": the declared default).

    The workload is ``workload`` or the one of ``fio``/``sysbench``/``preset`` in the settings;
    none is an idle array when ``allow_idle`` or when the settings script failures. ``runtime_s``
    replaces the workload's run time; on an idle array it bounds the simulated time. ``where``
    prefixes error messages (e.g. "designs file d.toml, design 'x': ").
    """
    if workload is not None and not isinstance(workload, Workload):
        raise ConfigError(f"{where}workload must be a raidlab Workload, got {type(workload).__name__}")
    given = _checked(settings, KNOWN_KEYS, where)
    design = build_design({k: v for k, v in given.items() if k in _DESIGN_KEYS}, where)
    chosen = {k: given[k] for k in _OPTION_KEYS if k in given}
    options = Options(**{**chosen, "timeline": tuple(chosen.get("timeline", ()))})
    check_timeline(options)
    check_bbu_learn(design, options)
    idle_ok = allow_idle or bool(options.timeline) or (options.spare and bool(options.failed))
    workload_given = {k: given[k] for k in WORKLOAD_KEYS if k in given}
    if workload is None or workload_given:
        workload = resolve_workload(workload=workload, allow_idle=idle_ok, **workload_given)
    workload = _size_by_ram(workload, workload_given.get("preset"), design.ram_gib)
    if workload is not None and workload.report_interval_s and workload.percentile not in (0, 50, 95, 99):
        # sysbench's interval lines show --percentile; the series keeps only p50/p95/p99 of
        # each second unless the run keeps each second's distributions.
        options = replace(options, latency_by_second=True)
    if options.runtime_s is not None:
        if workload is not None:
            workload = workload.with_runtime_ns(int(options.runtime_s * 1e9))
        else:
            options = replace(options, max_time_s=options.runtime_s)
    return RunSpec(design, workload, options)


__all__ = ["Design", "Options", "RunSpec", "DEFAULTS", "KNOWN_KEYS", "build_design", "build_run", "normalise_level",
           "resolve_drive", "DriveSpec"]
