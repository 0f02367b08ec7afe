"""Hardware RAID controllers: every parameter the simulator's controller model reads (declared
once, by the core: unit, the generic controller's value, range, meaning; ``_core.controller_settings()``)
and presets of real controllers, each value with its source.

``--controller NAME`` picks ``md`` (Linux md), ``hw`` (the generic controller: a cache and no
ceilings), a preset below, or a controller TOML file::

    preset = "perc4e-di"        # optional: start from a preset (else from hw)
    commands_per_drive = 8      # any parameter of `raidlab controllers --params`

and ``--controller-opt KEY=VALUE`` (repeatable) overrides single parameters. The core reads the
result (crates/raidlab-core/src/sim/controller).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from raidlab import _core
from raidlab.errors import ConfigError
from raidlab.inputs import read_toml
from raidlab.numeric import boolean, number


@dataclass(frozen=True)
class Param:
    name: str
    unit: str
    default: Any
    low: Optional[float] = None
    high: Optional[float] = None
    choices: Tuple[str, ...] = ()
    doc: str = ""


def _declared() -> Tuple[Param, ...]:
    """Every controller parameter as the core declares it (``_core.controller_settings()``)."""
    return tuple(Param(row["name"], row["unit"], row["default"], row["min"], row["max"],
                       tuple(row["choices"] or ()), row["doc"]) for row in _core.controller_settings())


#: Every controller parameter; `default` is the generic controller's (`hw`). 0 = no limit.
PARAMS: Tuple[Param, ...] = _declared()
BY_NAME: Dict[str, Param] = {p.name: p for p in PARAMS}

_ULTRA320 = ("Ultra320 SCSI: 320 MB/s per channel shared by the drives on it (SCSI Parallel "
             "Interface-4, T10 1365D)")
_MEGARAID_MBOX = "Linux drivers/scsi/megaraid/megaraid_mbox.[ch]"
_LSI_320_MANUAL = ("LSI MegaRAID SCSI 320-0/320-x user's guide: firmware 'up to 255 simultaneous "
                   "commands with elevator sorting and concatenation of requests per SCSI channel'; "
                   "default read policy Normal (no read-ahead)")
_PCIE1_X8 = "PCIe 1.x x8: 8 lanes x 250 MB/s per direction after 8b/10b coding"
_XBIT_5805 = ("X-bit labs, Adaptec RAID ASR-5805 review: dual-core 1.2 GHz processor, 512 MB cache, "
              "PCIe x8, optional BBU")
_XBIT_1680 = ("X-bit labs, Areca ARC-1680ix-16 review (2009): Intel IOP348 1.2 GHz, 512 MB DDR2-533 "
              "ECC module, PCIe x8")
_X25E_TESTS = ("published Intel X25-E RAID0 tests on Adaptec 5-series (IOP348): sequential reads "
               "saturate near 700 MB/s with 8 drives, 4 drives already close")

#: name -> description and {parameter: (value, source)}; parameters not named keep hw's value.
PRESETS: Dict[str, Dict[str, Any]] = {
    "perc4e-di": {
        "description": "Dell PERC 4e/Di (LSI MegaRAID SCSI 320-2E class, 2005): embedded in the "
                       "PowerEdge 2850; 256 MB battery-backed cache, two Ultra320 channels",
        "params": {
            "cache_mib": (256, "Dell PowerEdge 2850 technical guide: PERC 4e/Di with 256 MB battery-backed cache"),
            "bbu": (True, "PowerEdge 2850: battery-backed cache standard with PERC 4e/Di"),
            "write_policy": ("write-back", "MegaRAID default write policy with a working battery"),
            "read_ahead_policy": ("none", _LSI_320_MANUAL),
            "read_cache_pct": (0.0, "MegaRAID default cache policy Direct I/O: reads are not kept in the cache"),
            "command_order": ("elevator", _LSI_320_MANUAL),
            "commands_total": (255, _LSI_320_MANUAL),
            "host_queue_depth": (64, _MEGARAID_MBOX + ": MBOX_DEF_CMD_PER_LUN 64 (cmd_per_lun, the "
                                                       "logical drive's queue depth); can_queue "
                                                       "MBOX_MAX_SCSI_CMDS 128 for the whole adapter"),
            "channels": (1, "PowerEdge 2850 backplane in its default 1x6 mode: all six drives on "
                            "one channel (2x3 split optional)"),
            "channel_mb_s": (320.0, _ULTRA320),
            "rebuild_rate_pct": (30, "LSI MegaRAID / Dell PERC default rebuild rate 30%"),
            "drive_write_cache": ("off", "MegaRAID user's guide: write caching not recommended for the "
                                         "physical drives (data loss on power failure); off by default"),
        },
    },
    "adaptec-5805": {
        "description": "Adaptec RAID 5805 (5-series unified serial, 2009): IOP348-class dual-core "
                       "1.2 GHz, 512 MB cache, 8 SAS/SATA 3 Gb/s ports, PCIe x8",
        "params": {
            "cache_mib": (512, _XBIT_5805),
            "bbu": (True, _XBIT_5805 + " (with the optional BBU fitted)"),
            "read_ahead_policy": ("adaptive", "Adaptec Storage Manager: read caching 'dynamic' by default"),
            "host_link_mb_s": (2000.0, _PCIE1_X8),
            "cache_memory_mb_s": (1400.0, "effective data-path ceiling from " + _X25E_TESTS
                                          + "; a read crosses cache memory twice, so 2 x 700 MB/s"),
            "command_order": ("elevator", "assumed: firmware sorts queued commands (not published)"),
            "drive_write_cache": ("off", "Adaptec default: drive write cache disabled behind the controller cache"),
        },
    },
    "areca-1680": {
        "description": "Areca ARC-1680 (2008/09): Intel IOP348 1.2 GHz, 512 MB DDR2-533, 8 SAS "
                       "3 Gb/s ports, PCIe x8; same processor as the Adaptec 5-series, other firmware",
        "params": {
            "cache_mib": (512, _XBIT_1680),
            "bbu": (True, "optional Areca battery backup module fitted"),
            "read_ahead_policy": ("adaptive", "Areca McRAID: volume cache mode write-back, read-ahead on sequential reads"),
            "host_link_mb_s": (2000.0, _PCIE1_X8),
            "cache_memory_mb_s": (4264.0, _XBIT_1680 + ": DDR2-533 x 64-bit = 4264 MB/s peak"),
            "command_order": ("elevator", "assumed: firmware sorts queued commands (not published)"),
            "drive_write_cache": ("off", "controller default: drive write caches disabled"),
        },
    },
    "megaraid-9361": {
        "description": "Broadcom/LSI MegaRAID SAS 9361-8i class (SAS3108, 12 Gb/s SAS, PCIe 3.0 x8, "
                       "1-2 GB cache with CacheVault)",
        "params": {
            "cache_mib": (1024, "Broadcom MegaRAID SAS 9361-8i product brief: 1 GB or 2 GB DDR3 cache"),
            "bbu": (True, "CacheVault flash backup (CVM02) protects the cache"),
            "read_ahead_policy": ("none", "MegaRAID 6.x+ firmware: default read policy No Read Ahead"),
            "host_link_mb_s": (7880.0, "PCIe 3.0 x8: 8 lanes x 985 MB/s after 128b/130b coding"),
            "command_iops": (1_000_000, "Broadcom SAS3108 product brief: over 1 million IOPS"),
            "host_queue_depth": (256, "Linux drivers/scsi/megaraid/megaraid_sas.h: "
                                      "MEGASAS_DEFAULT_CMD_PER_LUN 256 (cmd_per_lun)"),
            "command_order": ("elevator", "assumed: firmware sorts queued commands (not published)"),
            "drive_write_cache": ("off", "MegaRAID default: drive cache 'unchanged'/off behind a protected cache"),
        },
    },
    "hba": {
        "description": "A plain SAS HBA (e.g. LSI SAS2008/SAS3008 in IT mode): pass-through for Linux md; "
                       "no cache, no RAID; the drives keep their own write cache setting",
        "kind": "md",
        "params": {
            "cache_mib": (0, "HBA in IT mode: no cache"),
            "drive_write_cache": ("on", "pass-through: the drive's own default (on for SATA/SAS drives)"),
        },
    },
}

KINDS = ("md", "hw")
NAMES: Tuple[str, ...] = KINDS + tuple(PRESETS)


def check_value(name: str, value: Any, where: str = "") -> Any:
    """``value`` checked against parameter ``name``'s declaration (text from the CLI too)."""
    param = BY_NAME.get(name)
    if param is None:
        raise ConfigError(f"{where}unknown controller parameter {name!r}; expected one of "
                          f"{', '.join(BY_NAME)}")
    if param.choices:
        text = str(value).strip().lower()
        if param.unit == "" and isinstance(value, bool):
            text = "on" if value else "off"
        if text not in param.choices:
            raise ConfigError(f"{where}controller {name}={value!r}: expected one of {', '.join(param.choices)}")
        return text
    if isinstance(param.default, bool):
        return boolean(name, value, where + "controller ")
    kind = float if isinstance(param.default, float) else int
    read = number(name, value, where + "controller ", kind)
    if not param.low <= read <= param.high:
        raise ConfigError(f"{where}controller {name}={value!r} is out of range {param.low:g}..{param.high:g}")
    return read


def resolve(name: str, overrides: Mapping[str, Any] = (), where: str = "") -> Tuple[str, Dict[str, Any]]:
    """(kind "md"/"hw", every parameter's value) for ``--controller NAME`` (a kind, a preset or a
    TOML file) with ``overrides`` applied."""
    values = {p.name: p.default for p in PARAMS}
    kind = "hw"
    preset = name
    if str(name).endswith(".toml"):
        preset, file_values = _from_file(str(name), where)
    else:
        file_values = {}
    if preset == "md":
        kind = "md"
    elif preset in PRESETS:
        kind = PRESETS[preset].get("kind", "hw")
        values.update({k: v for k, (v, _) in PRESETS[preset]["params"].items()})
    elif preset != "hw":
        raise ConfigError(f"{where}--controller {name!r}: expected one of {', '.join(NAMES)} or a FILE.toml")
    for key, value in {**file_values, **dict(overrides)}.items():
        values[key] = check_value(key, value, where)
    return kind, values


def _from_file(path: str, where: str) -> Tuple[str, Dict[str, Any]]:
    data = read_toml(path, "controller file")
    preset = data.pop("preset", "hw")
    if preset not in NAMES:
        raise ConfigError(f"{where}controller file {path}: preset {preset!r} is not one of {', '.join(NAMES)}")
    return str(preset), data


def core_params(values: Mapping[str, Any]) -> Dict[str, Any]:
    """The parameters in the form the core's glue reads (``controller.hw``)."""
    skip = ("cache_mib", "bbu", "rebuild_rate_pct", "drive_write_cache", "drive_queue_depth")
    return {k: v for k, v in values.items() if k not in skip}


def listing() -> List[Dict[str, Any]]:
    """Every controller: name, description and each parameter with its value and source."""
    generic = {p.name: {"value": p.default, "unit": p.unit, "source": "generic controller default"} for p in PARAMS}
    rows = [{"name": "md", "description": "Linux md (software RAID) on the drives' own links", "params": {}},
            {"name": "hw", "description": "Generic hardware RAID controller: a cache, no ceilings",
             "params": generic}]
    for name, preset in PRESETS.items():
        params = {}
        # A pass-through preset (kind md) has no cache, battery or firmware of its own: it lists
        # only what it sets, not the hardware controller's defaults (an HBA showed bbu = True).
        applies = [p for p in PARAMS if preset.get("kind", "hw") == "hw" or p.name in preset["params"]]
        for p in applies:
            value, source = preset["params"].get(p.name, (p.default, "not published: generic value (no limit)"
                                                          if p.default in (0, 0.0) else "generic controller default"))
            params[p.name] = {"value": value, "unit": p.unit, "source": source}
        rows.append({"name": name, "description": preset["description"], "kind": preset.get("kind", "hw"),
                     "params": params})
    return rows
