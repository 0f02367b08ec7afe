"""The one drive resolver: every option or setting that names a drive takes the same forms.

A drive is named by a preset (``raidlab drives``), a drive TOML file (``NAME.toml``, see
:func:`raidlab.sim.load_drive`), a DiskSim configuration (``NAME.parv`` / ``NAME.diskspecs``),
or, from Python, the drive dict the core reads. :func:`resolve_drive` turns any of them into a
:class:`DriveSpec`: the core's drive dict plus what commands ask about a drive (its kind,
interface and capacity), so ``sim``, ``compare``, ``plan`` and ``reliability --rebuild-from-sim``
accept and refuse exactly the same names.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Dict

from raidlab import _core
from raidlab.errors import ConfigError

#: How a drive may be named, for messages and option help.
DRIVE_FORMS = "a preset from 'raidlab drives', a drive FILE.toml, or a DiskSim FILE.parv/.diskspecs"


@dataclass(frozen=True)
class DriveSpec:
    """A resolved drive: ``choice`` is the core's drive dict; ``name`` is what the user named."""

    name: str
    choice: Dict[str, Any]
    kind: str
    interface: str
    capacity_bytes: int

    @property
    def fixed_capacity(self) -> bool:
        """A DiskSim model's size comes from its geometry and cannot be set."""
        return "disksim" in self.choice

    def with_capacity(self, capacity_bytes: int, where: str = "--drive") -> "DriveSpec":
        """The same model with members of ``capacity_bytes`` (e.g. reliability's --capacity-tb)."""
        if self.fixed_capacity:
            raise ConfigError(f"{where} {self.name}: a DiskSim model's capacity is fixed by its geometry; "
                              "give a preset or a drive .toml to size it")
        params = {**self.choice.get("params", {}), "capacity_bytes": float(capacity_bytes)}
        return DriveSpec(self.name, {**self.choice, "params": params}, self.kind, self.interface,
                         int(capacity_bytes))


@functools.lru_cache(maxsize=None)
def preset_table() -> Dict[str, Dict[str, Any]]:
    """The drive presets by name, as the core describes them (read-only). The core builds
    every preset's model to describe it (~5 ms): once per process, not once per drive
    resolved (a sweep or a plan resolves thousands)."""
    return {p["name"]: p for p in _core.drive_presets()}



def _unknown(name: str, where: str) -> ConfigError:
    return ConfigError(f"{where} {name!r}: unknown drive model; give {DRIVE_FORMS} "
                       f"(presets: {', '.join(preset_table())})")


def _from_choice(name: str, choice: Dict[str, Any], where: str) -> DriveSpec:
    """Kind, interface and capacity of a core drive dict (preset, kind + params, or DiskSim)."""
    params = choice.get("params") or {}
    if "disksim" in choice:
        files = choice.get("files") or {}
        imported = _core.disksim_import(str(choice["disksim"]), lambda file: files[file])
        return DriveSpec(name, choice, "hdd", str(imported["interface"]), int(imported["capacity_bytes"]))
    if "preset" in choice:
        preset = preset_table().get(str(choice["preset"]))
        if preset is None:
            raise _unknown(str(choice["preset"]), where)
        capacity = params.get("capacity_bytes", preset["capacity_bytes"])
        return DriveSpec(name, choice, preset["kind"], preset["interface"], int(capacity))
    kind = str(choice.get("kind", ""))
    try:
        declared = {row[0]: row[2] for row in _core.drive_parameters(kind)}
    except Exception:  # noqa: BLE001 - the core names the kinds it knows
        raise ConfigError(f"{where} {name}: unknown drive kind {kind!r}; expected hdd, ssd, null or empirical") from None
    return DriveSpec(name, choice, kind, "", int(params.get("capacity_bytes", declared.get("capacity_bytes", 0))))


def resolve_drive(drive: Any, where: str = "--drive") -> DriveSpec:
    """A :class:`DriveSpec` from any way of naming a drive (see the module docstring);
    ``where`` names the option or setting in messages."""
    if isinstance(drive, DriveSpec):
        return drive
    if isinstance(drive, dict):
        name = str(drive.get("preset") or drive.get("name") or drive.get("disksim") or drive.get("kind") or "custom drive")
        return _from_choice(name, drive, where)
    if not isinstance(drive, str) or not drive.strip():
        raise ConfigError(f"{where}: {drive!r} is not a drive; give {DRIVE_FORMS}")
    from raidlab.sim import load_drive

    if drive in preset_table():
        return _from_choice(drive, {"preset": drive}, where)
    if not drive.endswith((".toml", ".parv", ".diskspecs")):
        raise _unknown(drive, where)
    return _from_choice(drive, load_drive(drive), where)
