"""Rebuild time from the simulator, for reliability models (``raidlab reliability
--rebuild-from-sim``): one member fails, a spare takes over at once, and the rebuild runs under
the foreground workload with md's speed limits (or a controller's rebuild rate). The duration
for the full member is extrapolated from the simulated rate when the run ends first."""

from __future__ import annotations

from typing import Any, Optional

import click

from raidlab.errors import ConfigError
from raidlab.sim import DEFAULT_MAX_SECTORS_KB, DEFAULT_NR_REQUESTS, build_config, resolve_workload, run_config

#: Options accepted through ``--sim-opt KEY=VALUE``, with their defaults.
SIM_OPTIONS = {
    "preset": None, "fio": None, "sysbench": None, "controller": "md", "scheduler": "mq-deadline",
    "runtime_s": "30", "speed_limit_min": "1000", "speed_limit_max": "200000",
    "rebuild_priority": "30", "seed": "1",
}


def _number(key: str, value: Any, kind=float):
    """``--sim-opt KEY=VALUE`` takes what ``raidlab sim --KEY`` takes: the value goes through
    that option's own declaration (type and range; finite for floats)."""
    from raidlab.commands.sim import sim_command  # the options' one declaration

    param = next(p for p in sim_command.params if p.name == key)
    try:
        return kind(param.type.convert(str(value), param, None))
    except click.BadParameter as error:
        raise ConfigError(f"--sim-opt {key}={value!r}: {error.message}") from None


def simulated_rebuild_hours(*, level: str, devices: int, layout: Optional[str], chunk_kib: Optional[int],
                            capacity_bytes: int, drive: Optional[str], **options: Any) -> float:
    """Hours to rebuild one member of ``capacity_bytes`` under the given foreground workload
    (an idle array when no workload option is given)."""
    unknown = set(options) - set(SIM_OPTIONS)
    if unknown:
        raise ConfigError(f"unknown --sim-opt key(s) {', '.join(sorted(unknown))}; expected {', '.join(SIM_OPTIONS)}")
    opts = {**SIM_OPTIONS, **options}
    given = {k: opts[k] for k in ("preset", "fio", "sysbench") if opts[k] is not None}
    workload = resolve_workload(**given) if given else None
    runtime_s = _number("runtime_s", opts["runtime_s"])
    if workload is not None:
        workload = workload.with_runtime_ns(int(runtime_s * 1e9))
    drive_choice = {"preset": drive or "nearline-7200", "params": {"capacity_bytes": float(capacity_bytes)}}
    config = build_config(
        level=level, devices=devices, layout=layout, chunk_kib=chunk_kib, drive=drive_choice,
        controller=_number("controller", opts["controller"], str), cache_mib=256, bbu=True,
        read_ahead=False, stripe_cache_size=256, rmw_level=1,
        scheduler=_number("scheduler", opts["scheduler"], str), nr_requests=DEFAULT_NR_REQUESTS,
        max_sectors_kb=DEFAULT_MAX_SECTORS_KB, failed=(0,), workload=workload,
        seed=_number("seed", opts["seed"], int), max_time_s=runtime_s, max_events=2_000_000_000,
        spare=True, speed_limit_min=_number("speed_limit_min", opts["speed_limit_min"], int),
        speed_limit_max=_number("speed_limit_max", opts["speed_limit_max"], int),
        rebuild_priority_pct=_number("rebuild_priority", opts["rebuild_priority"], int))
    rebuild = run_config(config, workload).to_dict()["rebuild"]
    if not rebuild or not rebuild["duration_s"]:
        raise ConfigError("the simulated rebuild made no progress; give it a longer runtime_s")
    return rebuild["duration_s"] / 3600
