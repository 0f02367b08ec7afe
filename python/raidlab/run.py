"""One run: a design (the array and what drives it), a workload and run options.

Every command that simulates (``sim``, ``compare``, ``reliability --rebuild-from-sim``, ``plan``)
and the Python API (:func:`raidlab.simulate`) describe a run with one :class:`RunSpec` and build
it with one function, :func:`build_run`, from plain ``name -> value`` settings: CLI options, a
``[[design]]`` entry of a designs file, ``--sim-opt KEY=VALUE`` pairs or keyword arguments. So a
setting has one name, one default and one range everywhere, declared once below.

>>> spec = build_run({"level": "raid6", "devices": 4, "drive": "null", "preset": "wal"})
>>> spec.design.label()
'raid6 x4 default layout, chunk 512 KiB, null, md, mq-deadline'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, Dict, Mapping, Optional, Tuple

from raidlab import _core
from raidlab.drives import DriveSpec, resolve_drive
from raidlab.errors import ArrayError, ConfigError
from raidlab.stacked import check_counts, is_stacked
from raidlab.workload import Workload
from raidlab.workload.units import is_decimal

#: Setting names that choose the workload (exactly one, or none for an idle array).
WORKLOAD_KEYS = ("fio", "sysbench", "preset")
from raidlab.controllers import NAMES as CONTROLLERS  # md, hw and the presets (raidlab controllers)
from raidlab.hosts import NAMES as HOSTS  # issue 24: instance presets (raidlab hosts)
SCHEDULERS = ("none", "mq-deadline", "cfq")


def _setting(default: Any, doc: str, low: Optional[float] = None, high: Optional[float] = None,
             choices: Tuple[str, ...] = ()) -> Any:
    """A setting's one declaration: default, range (or choices) and meaning."""
    return field(default=default, metadata={"doc": doc, "low": low, "high": high, "choices": choices})


@dataclass(frozen=True)
class Design:
    """The array and everything below the host: what a design in ``compare`` varies."""

    level: str = _setting("5", "RAID level: 0, 1, 4, 5, 6, 10 (also raid5, mirror, stripe, ...)")
    devices: int = _setting(6, "Members in the array", 1, 64)
    layout: Optional[str] = _setting(None, "mdadm layout name (None: mdadm's default)")
    chunk_kib: int = _setting(_core.DEFAULT_CHUNK_KIB, "Chunk size in KiB, a power of two (mdadm "
                              "DEFAULT_CHUNK since 3.1, declared by the core)", 4, 1 << 20)
    drive: Any = _setting("cheetah-10k7", "Drive model: a preset, a drive FILE.toml, a DiskSim "
                                          "NAME.parv/.diskspecs, or a drive dict")
    controller: str = _setting("md", "Linux md, the generic hardware RAID controller (hw), a controller "
                                     "preset (raidlab controllers) or a controller FILE.toml", choices=CONTROLLERS)
    cache_mib: int = _setting(256, "Hardware controller cache, MiB", 0, 1 << 20)
    bbu: bool = _setting(True, "Hardware controller cache is battery-backed (write-back)")
    read_ahead: bool = _setting(False, "Hardware controller read-ahead")
    scheduler: str = _setting("mq-deadline", "I/O scheduler on each member", choices=SCHEDULERS)
    stripe_cache_size: int = _setting(256, "md raid5/6 stripe_cache_size, 4 KiB rows (md NR_STRIPES)",
                                      17, 32768)
    rmw_level: int = _setting(1, "md rmw_level: 0 never read-modify-write, 1 when cheaper, 2 also on ties",
                              0, 2)
    group_thread_cnt: int = _setting(0, "md group_thread_cnt: worker threads handling stripe heads beside "
                                        "raid5d (raises raid5d's CPU ceiling)", 0, 8192)
    skip_copy: bool = _setting(False, "md skip_copy: written pages are not copied into the stripe cache")
    preread_bypass_threshold: int = _setting(1, "md preread_bypass_threshold: full-stripe writes that may pass "
                                                "a head waiting to pre-read (0 to stripe_cache_size)", 0, 32768)
    nr_requests: int = _setting(128, "Block-layer queue size (BLKDEV_DEFAULT_RQ): requests queued and at the driver, "
                                     "per member under md, on the logical drive behind a controller", 1, 65536)
    max_sectors_kb: int = _setting(1280, "Largest merged request per member, KiB (BLK_DEF_MAX_SECTORS)",
                                   4, 1 << 20)
    speed_limit_min: int = _setting(1000, "md speed_limit_min, KiB/s per device", 1, 10**9)
    speed_limit_max: int = _setting(200000, "md speed_limit_max, KiB/s per device", 1, 10**9)
    rebuild_priority: int = _setting(30, "Hardware controller rebuild rate: percent of drive time "
                                         "under load", 1, 100)
    # The host's page cache (buffered I/O: fio direct=0, sysbench without O_DIRECT). The vm
    # sysctls' defaults are the kernel's (mm/page-writeback.c: vm_dirty_ratio 20,
    # dirty_background_ratio 10, dirty_expire_interval 30 s, dirty_writeback_interval 5 s).
    ram_gib: float = _setting(64.0, "Host RAM the page cache may use, GiB: Linux's dirtyable memory (free plus "
                                    "file pages), the installed RAM less what the kernel and processes hold, "
                                    "e.g. a database's shared buffers (default: a typical database/storage "
                                    "server, 2 sockets x 4 channels x 8 GiB DIMMs; set your own)", 0.015625, 1 << 20)
    dirty_ratio: int = _setting(20, "vm.dirty_ratio: writers wait above this percent of that memory dirty", 1, 100)
    dirty_background_ratio: int = _setting(10, "vm.dirty_background_ratio: background writeback starts above "
                                               "this percent of that memory dirty", 0, 100)
    dirty_expire_centisecs: int = _setting(3000, "vm.dirty_expire_centisecs: dirty data older than this is "
                                                 "written back by the periodic flush", 1, 10**7)
    dirty_writeback_centisecs: int = _setting(500, "vm.dirty_writeback_centisecs: the flusher's period", 1, 10**7)
    read_ahead_kb: int = _setting(0, "read_ahead_kb of the array (0: the kernel's: 128 KiB, md raid4/5/6 and "
                                     "raid10 at least two full stripes)", 0, 1 << 20)

    # ---- issue 20: queues below the scheduler, the drives' write cache, controller parameters ----
    drive_queue_depth: int = _setting(0, "Commands each drive accepts, TCQ/NCQ (0: the drive model's own, "
                                         "or the controller preset's)", 0, 65536)
    drive_write_cache: str = _setting("default", "The drives' write caches: on, off, or default (off behind a "
                                                 "hardware controller, the drive's own under md)",
                                      choices=("default", "on", "off"))
    controller_opts: Tuple[Tuple[str, Any], ...] = _setting((), "Controller parameters over the preset's "
                                                                "(KEY=VALUE; raidlab controllers --params)")

    # ---- issue 24: the host's (cloud instance's) limits on its volumes; the BBU learn policy ----
    host: Optional[str] = _setting(None, "Host/instance preset whose EBS IOPS and bandwidth (baseline, burst) "
                                         "cap the sum of its volume members (raidlab hosts; None: no host limit)",
                                   choices=HOSTS)
    host_credits_pct: float = _setting(100.0, "The host's EBS burst credits at the start, % of its buckets "
                                              "(CloudWatch EBSIOBalance%; 0: it has burst already today)", 0.0, 100.0)
    bbu_learn_policy: str = _setting("default", "The controller's write policy during a BBU learn cycle: "
                                                "write-through (LSI/Dell PERC default), write-back, or default "
                                                "(the controller's bbu_learn_policy)",
                                     choices=("default", "write-through", "write-back"))
    # ---- issue 24 §2: stacked arrays (--level 1+0, 5+0, 6+0, 0+1: md arrays over md arrays) ----
    # --layout and --chunk-kib are the inner arrays'; the outer raid0 has its own chunk.
    inner_devices: int = _setting(0, "Members of each inner array of a stacked level (0: raid1 pairs for 1+0, "
                                     "two inner arrays for 5+0, 6+0 and 0+1)", 0, 64)
    outer_chunk_kib: int = _setting(_core.DEFAULT_CHUNK_KIB, "Chunk of the outer raid0 of a stacked level "
                                                             "(1+0, 5+0, 6+0), KiB, a power of two", 4, 1 << 20)
    # ---- issue 19 (orderings): members that are a partition at the start of each drive ----
    # Published md benchmarks often build the array on a small partition (ilsistemista.net's
    # raid10 layouts: 100 GiB of 1 TB drives; helmundwalter.de's raid5 vs raid10: 30 GB of 16 TB),
    # which bounds the seeks between a far layout's two copies (md(4): far copies sit half a
    # member further on).
    partition_gib: float = _setting(0.0, "Members are a partition of this size at the start of each drive, "
                                         "GiB (0: the whole drive)", 0.0, float(1 << 24))

    def controller_values(self) -> Tuple[str, Dict[str, Any]]:
        """(kind, every controller parameter): the preset or file, then ``controller_opts``, then
        the legacy --cache-mib/--bbu/--rebuild-priority where they differ from the generic default."""
        from raidlab import controllers

        kind, values = controllers.resolve(self.controller, dict(self.controller_opts))
        for name, key in (("cache_mib", "cache_mib"), ("bbu", "bbu"), ("rebuild_priority", "rebuild_rate_pct")):
            if getattr(self, name) != DESIGN_DEFAULTS[name]:
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
        if not is_decimal(str(self.level)):  # issue 24 §2: "raid5+0 x8 (inner arrays of 4) ..."
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


@dataclass(frozen=True)
class Options:
    """How the run goes: seed, bounds, and the failures it plays out."""

    seed: int = _setting(1, "Seed of the run: same inputs and seed give identical output", 0, 2**64 - 1)
    runtime_s: Optional[float] = _setting(None, "Overrides the workload's own run time, s", 0.001,
                                          _core.MAX_SIM_TIME_S)
    max_time_s: float = _setting(3600.0, "Bound on simulated time, s", 0.001, _core.MAX_SIM_TIME_S)
    max_events: int = _setting(2_000_000_000, "Bound on simulated events", 1, 2**63 - 1)
    failed: Tuple[int, ...] = _setting((), "Members failed from the start (indices from 0)")
    timeline: Tuple[Dict[str, Any], ...] = _setting((), "Scripted failures and replacements")
    spare: bool = _setting(False, "A hot spare: rebuild starts as soon as a member fails")
    rebuild_start_pct: float = _setting(0.0, "Where in the member a rebuild starts, % (the part below counts "
                                        "as rebuilt): the rebuild's rate at inner, slower zones", 0.0, 99.9)
    # ---- issue 24 ----
    bbu_learn: Optional[Tuple[float, float]] = _setting(None, "A BBU learn cycle START+DURATION, seconds (e.g. "
                                                              "30+60): a hardware controller with a battery-"
                                                              "backed cache runs its learn policy meanwhile")

    # ---- issue 24 §3: drives that misbehave in arrays ----
    command_timeout_s: float = _setting(30.0, "The host's command timeout per member, s: a drive still recovering "
                                              "a sector then is dropped (Linux SCSI default 30 s, "
                                              "/sys/block/sdX/device/timeout; 0: none)", 0.0, 1e6)

    # ---- latency percentiles over the steady state ----
    latency_by_second: bool = _setting(False, "Keep each second's read and write latency distributions, so that "
                                              "the report's steady_state section gives latency percentiles over "
                                              "the steady state too (compare and plan set it; a few KiB a job and second)")


#: Settings whose values are (finite) real numbers; the rest are whole numbers, names or flags.
_FLOAT_KEYS = ("runtime_s", "max_time_s", "rebuild_start_pct", "ram_gib", "host_credits_pct", "partition_gib", "command_timeout_s")
#: Every setting's default, by name (for CLI options and docs).
DEFAULTS: Dict[str, Any] = {f.name: f.default for cls in (Design, Options) for f in fields(cls)}
DESIGN_DEFAULTS = DEFAULTS
_DESIGN_KEYS = tuple(f.name for f in fields(Design))
_OPTION_KEYS = tuple(f.name for f in fields(Options))
KNOWN_KEYS = _DESIGN_KEYS + _OPTION_KEYS + WORKLOAD_KEYS


def cli_type(name: str) -> Any:
    """The click type of setting ``name``'s option, from its declaration (range or choices)."""
    import click

    meta = next(f for cls in (Design, Options) for f in fields(cls) if f.name == name).metadata
    if meta["choices"]:
        return click.Choice(list(meta["choices"]))
    if name in _FLOAT_KEYS:
        from raidlab.commands.numbers import finite

        return finite(meta["low"], meta["high"])
    from raidlab.commands.numbers import whole

    return whole(meta["low"], meta["high"])


def _convert(name: str, value: Any, where: str) -> Any:
    """``value`` checked against the declaration of setting ``name`` (a CLI option, a TOML value
    or a ``--sim-opt`` text all arrive here)."""
    spec = next(f for cls in (Design, Options) for f in fields(cls) if f.name == name)
    meta, default = spec.metadata, spec.default
    if name == "controller" and str(value).endswith(".toml"):
        return str(value)
    if name == "controller":
        if str(value) not in meta["choices"]:
            raise ConfigError(f"{where}controller {value!r}: expected one of {', '.join(meta['choices'])} "
                              "or a controller FILE.toml")
        return str(value)
    if name == "controller_opts":
        return _controller_opts(value, where)
    if isinstance(default, bool):
        return _boolean(name, value, where)
    if meta["choices"]:
        if str(value) not in meta["choices"]:
            raise ConfigError(f"{where}{name} {value!r}: expected one of {', '.join(meta['choices'])}")
        return str(value)
    if name == "layout":
        if not isinstance(value, str):
            raise ConfigError(f"{where}layout={value!r} is not a layout name")
        return value
    if name == "failed":
        return _members(value, where)
    if name == "timeline":
        return _timeline(value, where)
    if name == "bbu_learn":
        return _bbu_learn(value, where)
    if name in _FLOAT_KEYS:
        number = _number(name, value, where, float)
    elif isinstance(default, int):
        number = _number(name, value, where, int)
    else:
        return value
    if not meta["low"] <= number <= meta["high"]:
        raise ConfigError(f"{where}{name}={value!r} is out of range {meta['low']}..{meta['high']}")
    return number


def _controller_opts(value: Any, where: str) -> Tuple[Tuple[str, Any], ...]:
    """Controller parameters: a mapping, or KEY=VALUE texts; each checked by its declaration."""
    from raidlab import controllers

    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif not isinstance(value, (str, list, tuple)):
        raise ConfigError(f"{where}controller_opts={value!r:.40}: expected KEY=VALUE texts or a table")
    else:
        items = [value] if isinstance(value, str) else list(value)
        pairs = []
        for item in items:
            if isinstance(item, (tuple, list)) and len(item) == 2:
                pairs.append(tuple(item))
                continue
            key, sep, text = str(item).partition("=")
            if not sep:
                raise ConfigError(f"{where}--controller-opt {item!r}: expected KEY=VALUE")
            pairs.append((key.strip(), text.strip()))
    return tuple((str(k), controllers.check_value(str(k), v, where)) for k, v in pairs)


def _number(name: str, value: Any, where: str, kind: type) -> Any:
    from raidlab.commands.numbers import real_text, whole_text

    if isinstance(value, str):  # text (a --sim-opt value): ASCII decimal only, as on the CLI
        exact = whole_text(value) if kind is int else None
        if exact is not None:
            return exact  # exact, even past float precision (seeds)
        number = real_text(value)
        number = math.nan if number is None else number
    else:
        try:
            number = float(value) if not isinstance(value, bool) else math.nan
        except (TypeError, ValueError, OverflowError):
            number = math.nan
    if not math.isfinite(number) or (kind is int and number != int(number)):
        what = "a whole number" if kind is int else "a finite number"
        raise ConfigError(f"{where}{name}={value!r} is not {what}")
    return int(value) if kind is int and isinstance(value, int) else kind(number)


def _members(value: Any, where: str) -> Tuple[int, ...]:
    """Member indices: a list of whole numbers, or their text "0,2"."""
    items = value.split(",") if isinstance(value, str) else value
    try:
        members = tuple(_number("failed", item, where, int) for item in items)
    except TypeError:
        members = (-1,)
    if any(m < 0 for m in members):
        raise ConfigError(f"{where}failed={value!r} is not a list of member indices (from 0)")
    twice = sorted({m for m in members if members.count(m) > 1})
    if twice:
        raise ConfigError(f"{where}failed: member {twice[0]} is listed twice")
    return members


def _timeline(value: Any, where: str) -> Tuple[Dict[str, Any], ...]:
    """Scripted events: each a mapping ``{"action": "fail"|"replace"|"latent_error", "member": K,
    "at_s": T}`` (issue 24 §3: a latent sector error under the member's next read)."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ConfigError(f"{where}timeline must be a list of events, got {type(value).__name__}")
    events = []
    for event in value:
        if not isinstance(event, Mapping) or set(event) != {"action", "member", "at_s"} \
                or event["action"] not in TIMELINE_ACTIONS:
            raise ConfigError(f"{where}timeline event {event!r:.80}: expected "
                              "{'action': 'fail', 'replace' or 'latent_error', 'member': K, 'at_s': T}")
        member = _number("member", event["member"], f"{where}timeline ", int)
        at_s = _number("at_s", event["at_s"], f"{where}timeline ", float)
        if member < 0 or at_s < 0:
            raise ConfigError(f"{where}timeline event {event!r:.80}: member and at_s must be at least 0")
        events.append({"action": event["action"], "member": member, "at_s": at_s})
    return tuple(events)


#: Longest a learn cycle may start after, or last: the simulator's bound (10^6 s).
_LEARN_MAX_S = 1e6


def _bbu_learn(value: Any, where: str) -> Tuple[float, float]:
    """``START+DURATION`` in seconds (text, or a pair of numbers): when the learn cycle starts
    and how long it lasts."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        parts = list(value)
    elif isinstance(value, str) and value.count("+") == 1:
        parts = value.split("+")
    else:
        raise ConfigError(f"{where}--bbu-learn {value!r:.40}: expected START+DURATION in seconds, e.g. 30+60")
    start = _number("bbu_learn start", parts[0].strip() if isinstance(parts[0], str) else parts[0], where, float)
    duration = _number("bbu_learn duration", parts[1].strip() if isinstance(parts[1], str) else parts[1], where, float)
    if not (0 <= start <= _LEARN_MAX_S and 0 < duration <= _LEARN_MAX_S):
        raise ConfigError(f"{where}--bbu-learn {value!r:.40}: START must be 0 to {_LEARN_MAX_S:g} s and DURATION "
                          f"above 0 up to {_LEARN_MAX_S:g} s")
    return (start, duration)


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
#: What a timeline event may do (issue 24 §3 added latent_error).
TIMELINE_ACTIONS = ("fail", "replace", "latent_error")


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


def _boolean(name: str, value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise ConfigError(f"{where}{name}={value!r} is not true or false")


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
        """The core's configuration dict (also recorded in every report)."""
        from raidlab import controllers, hosts

        d, o = self.design, self.options
        kind, values = d.controller_values()
        workload = (self.workload.to_dict() if self.workload is not None
                    else {"jobs": [], "source": {"tool": "idle", "text": ""}})
        return {
            "seed": int(o.seed),
            "array": {"level": d.level, "layout": d.layout, "devices": d.devices, "chunk_kib": d.chunk_kib,
                      # issue 24 §2: a stacked level's inner arrays and outer chunk (only then, so
                      # every other run's recorded configuration stays as it was).
                      "partition_bytes": partition_bytes(d.partition_gib),
                      # issue 24 §2: a stacked level's inner arrays and outer chunk (only then, so
                      # every other run's recorded configuration stays as it was).
                      **({"inner_devices": d.inner_devices, "outer_chunk_kib": d.outer_chunk_kib}
                         if not is_decimal(str(d.level)) else {})},
            "failed": list(o.failed),
            "drive": d.drive.choice,
            "controller": {"kind": kind, "stripe_cache_entries": d.stripe_cache_size,
                           "rmw_level": d.rmw_level, "group_thread_cnt": d.group_thread_cnt,
                           "skip_copy": d.skip_copy, "preread_bypass_threshold": d.preread_bypass_threshold,
                           "cache_mib": values["cache_mib"], "bbu": values["bbu"],
                           "read_ahead": d.read_ahead, "name": d.controller,
                           "hw": {**controllers.core_params(values), **self.bbu_learn_params()}},
            "scheduler": d.scheduler,
            "nr_requests": d.nr_requests,
            "max_sectors_kb": d.max_sectors_kb,
            "workload": workload,
            "max_time_s": float(o.max_time_s),
            "max_events": int(o.max_events),
            "timeline": sorted(o.timeline, key=lambda e: e["at_s"]),
            "rebuild": {"speed_limit_min_kib_s": d.speed_limit_min, "speed_limit_max_kib_s": d.speed_limit_max,
                        "hot_spare": o.spare, "hw_priority_pct": values["rebuild_rate_pct"],
                        "start_ppm": round(o.rebuild_start_pct * 10_000)},
            "drive_queue_depth": values["drive_queue_depth"],
            "drive_write_cache": (None if kind == "md" and d.drive_write_cache == "default"
                                  else values["drive_write_cache"] == "on"),
            "page_cache": self.page_cache_config(),
            "host": hosts.limits(d.host, d.host_credits_pct),
            "command_timeout_s": float(o.command_timeout_s),
            # Only when asked, so every other run's recorded configuration stays as it was.
            **({"latency_by_second": True} if o.latency_by_second else {}),
        }

    def bbu_learn_params(self) -> Dict[str, Any]:
        """The learn cycle's start and duration as the controller's glue reads them (issue 24)."""
        if self.options.bbu_learn is None:
            return {}
        start_s, duration_s = self.options.bbu_learn
        return {"bbu_learn_start_s": float(start_s), "bbu_learn_duration_s": float(duration_s)}

    def page_cache_config(self) -> Dict[str, Any]:
        """The host's page cache as the core takes it (used by buffered jobs only)."""
        d = self.design
        return {"ram_bytes": ram_bytes(d.ram_gib), "dirty_ratio_pct": d.dirty_ratio,
                "dirty_background_ratio_pct": d.dirty_background_ratio, "dirty_bytes": 0,
                "dirty_background_bytes": 0, "dirty_expire_ns": d.dirty_expire_centisecs * 10_000_000,
                "dirty_writeback_ns": d.dirty_writeback_centisecs * 10_000_000, "read_ahead_kib": d.read_ahead_kb}

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
    """RAM in bytes, whole 4 KiB pages."""
    return int(ram_gib * (1 << 30)) // 4096 * 4096


def partition_bytes(partition_gib: float) -> int:
    """A partition's bytes, whole 1 MiB units (parted's default alignment); 0: the whole drive."""
    return int(partition_gib * (1 << 30)) >> 20 << 20


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
    """--inner-devices and --outer-chunk-kib belong to stacked levels (issue 24 §2)."""
    if not is_decimal(str(given.get("level", DEFAULTS["level"]))):
        return
    for name in ("inner_devices", "outer_chunk_kib"):
        if given.get(name, DEFAULTS[name]) != DEFAULTS[name]:
            raise ConfigError(f"{where}{name}={given[name]}: only a stacked level (1+0, 5+0, 6+0, 0+1) has "
                              f"inner arrays and an outer chunk, not raid{given.get('level', DEFAULTS['level'])}")


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
    from raidlab.sim import resolve_workload

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


__all__ = ["Design", "Options", "RunSpec", "DEFAULTS", "KNOWN_KEYS", "build_design", "build_run", "cli_type", "normalise_level",
           "resolve_drive", "DriveSpec"]
