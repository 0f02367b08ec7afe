"""The one drive resolver: every option or setting that names a drive takes the same forms.

A drive is named by a preset (``raidlab drives``), a drive TOML file (``NAME.toml``, see
:func:`load_drive`), a DiskSim configuration (``NAME.parv`` / ``NAME.diskspecs``),
or, from Python, the drive dict the core reads. :func:`resolve_drive` turns any of them into a
:class:`DriveSpec`: the core's drive dict plus what commands ask about a drive (its kind,
interface and capacity), so ``sim``, ``compare``, ``plan`` and ``reliability --rebuild-from-sim``
accept and refuse exactly the same names.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Union

from raidlab import _core, disksim, inputs
from raidlab.errors import ConfigError
from raidlab.schema import ANY, TABLE, Key, check_table, did_you_mean

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


# -- the drive table: one schema for every place a drive is written as a table -------------------

#: The kinds of drive model the core builds (``raidlab drives --params KIND`` lists each one's).
KINDS = ("hdd", "ssd", "null", "empirical", "volume")

#: A drive table's own keys, as ``raidlab.simulate(drive={...})``, a sweep file's or a designs
#: file's ``drive = {...}`` and a drive FILE.toml write it. Beside them a table takes any parameter
#: of its kind by name, flat (``rpm = 15000``, as in a drive file) or in ``params``: the same
#: override either way, never dropped.
DRIVE_TABLE: Dict[str, Key] = {
    "kind": Key((str,), "the model: " + ", ".join(KINDS)),
    "preset": Key((str,), "a preset to start from ('raidlab drives'); a kind given beside it must be its kind"),
    "params": Key(TABLE, "parameters of the model by name (raidlab drives --params KIND)"),
    "name": Key((str,), "what reports call the drive"),
    "disksim": Key((str,), "an imported DiskSim model's entry (raidlab.disksim.drive_choice)"),
    "files": Key(TABLE, "the DiskSim model's files: name = text"),
}
#: The keys of an imported DiskSim model: its parameters come from its files, not from a table.
DISKSIM_TABLE = {key: DRIVE_TABLE[key] for key in ("disksim", "files", "name")}


def _parameter(value: Any, what: str) -> float:
    """A drive parameter's value: a finite number; a boolean is 1 or 0 (``write_cache = true``).
    Its range is the core's to check (it names the range)."""
    return inputs.finite_number(float(value) if isinstance(value, bool) else value, what)


@functools.lru_cache(maxsize=None)
def parameter_keys(kind: str) -> Dict[str, Key]:
    """The parameters a drive of ``kind`` reads, as the core declares them (name, unit, default,
    range, meaning)."""
    return {name: Key(ANY, f"{doc} ({unit}, {low:g}..{high:g})", "a number", _parameter)
            for name, unit, _default, low, high, doc in _core.drive_parameters(kind)}


def _kind_of(head: Mapping[str, Any], where: str) -> str:
    """The kind a checked table's parameters belong to: its preset's, else its own."""
    kind = head.get("kind")
    if kind is not None and kind not in KINDS:
        raise ConfigError(f"{where}unknown drive kind {kind!r}{did_you_mean(kind, KINDS)}; "
                          f"expected {', '.join(KINDS)}")
    if "preset" in head:
        preset = preset_table().get(head["preset"])
        if preset is None:
            raise _unknown(head["preset"], where.rstrip(": "))
        if kind is not None and kind != preset["kind"]:
            raise ConfigError(f'{where}preset = "{head["preset"]}" is of kind "{preset["kind"]}", '
                              f'not kind = "{kind}"; give one of them')
        return str(preset["kind"])
    if kind is None:
        raise ConfigError(f'{where}needs kind = "{KINDS[0]}"|"{KINDS[1]}"|... ({", ".join(KINDS)}) '
                          'or preset = "NAME" (raidlab drives)')
    return kind


def _disksim_table(table: Mapping[str, Any], where: str) -> Dict[str, Any]:
    choice = check_table(table, DISKSIM_TABLE, where, expected_keys="a DiskSim model takes disksim, files "
                         "and name; its parameters come from its files")
    files = choice.get("files")
    if files is None or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise ConfigError(f"{where}'files' must be a table of file name = text beside 'disksim'")
    return dict(choice)


def drive_table(table: Any, where: str) -> Dict[str, Any]:
    """The core's drive dict from a drive table (see :data:`DRIVE_TABLE`), checked in one place:
    unknown keys are refused with the nearest name, wrong types with the key named; parameters
    given flat and in ``params`` become one ``params`` (a parameter given in both is refused)."""
    where = f"{where}: " if where and not where.endswith(" ") else where
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}a drive table must be a table of key = value, got {type(table).__name__}")
    if "disksim" in table:
        return _disksim_table(table, where)
    head = check_table({k: v for k, v in table.items() if k in DRIVE_TABLE}, DRIVE_TABLE, where)
    if "kind" not in head and "preset" not in head:  # no kind to read parameters of: a misspelt key?
        check_table(table, DRIVE_TABLE, where)
    kind = _kind_of(head, where)
    declared = parameter_keys(kind)
    listing = (f"expected {', '.join(k for k in DRIVE_TABLE if k not in DISKSIM_TABLE)}, name or a "
               f"parameter of kind {kind} (raidlab drives --params {kind})")
    flat = check_table({k: v for k, v in table.items() if k not in head}, declared, where, expected_keys=listing)
    nested = check_table(head.get("params", {}), declared, f"{where}params: ", expected_keys=listing)
    both = sorted(flat.keys() & nested.keys())
    if both:
        raise ConfigError(f"{where}'{both[0]}' is given both beside kind and in params; give it once")
    choice = {key: head[key] for key in ("preset", "kind", "name") if key in head}
    return {**choice, "params": {**nested, **flat}}


def _from_choice(name: str, choice: Dict[str, Any], where: str) -> DriveSpec:
    """Kind, interface and capacity of a checked core drive dict (preset, kind + params, or DiskSim)."""
    params = choice.get("params") or {}
    if "disksim" in choice:
        files = choice.get("files") or {}
        imported = _core.disksim_import(str(choice["disksim"]), lambda file: files[file])
        return DriveSpec(name, choice, "hdd", str(imported["interface"]), int(imported["capacity_bytes"]))
    if "preset" in choice:
        preset = preset_table()[choice["preset"]]
        capacity = params.get("capacity_bytes", preset["capacity_bytes"])
        return DriveSpec(name, choice, preset["kind"], preset["interface"], int(capacity))
    kind = choice["kind"]
    declared = {row[0]: row[2] for row in _core.drive_parameters(kind)}
    return DriveSpec(name, choice, kind, "", int(params.get("capacity_bytes", declared.get("capacity_bytes", 0))))


def load_drive(drive: Union[str, Path, Mapping[str, Any]]) -> Dict[str, Any]:
    """A drive choice for the core: a preset name, a TOML file path, or a drive table.

    A TOML file is a drive table (:data:`DRIVE_TABLE`): ``kind = "hdd"|"ssd"|...`` or
    ``preset = "NAME"`` (to start from a preset) and any parameters of that model by name (see
    ``raidlab drives --params``), checked as every drive table is. A DiskSim ``.parv`` or
    ``.diskspecs`` file is imported (:mod:`raidlab.disksim`).
    """
    if isinstance(drive, Mapping):
        return drive_table(drive, "drive")
    text = str(drive)
    if text.endswith((".parv", ".diskspecs")):
        return disksim.drive_choice(text)
    if text.endswith(".toml"):
        return drive_table(inputs.read_toml(text, "drive file"), f"drive file {inputs.show_path(text)}")
    return {"preset": text}


def resolve_drive(drive: Any, where: str = "--drive") -> DriveSpec:
    """A :class:`DriveSpec` from any way of naming a drive (see the module docstring);
    ``where`` names the option or setting in messages."""
    if isinstance(drive, DriveSpec):
        return drive
    if isinstance(drive, Mapping):
        choice = drive_table(drive, where)
        name = str(choice.get("preset") or choice.get("name") or choice.get("disksim") or choice.get("kind"))
        return _from_choice(name, choice, where)
    if not isinstance(drive, str) or not drive.strip():
        raise ConfigError(f"{where}: {drive!r} is not a drive; give {DRIVE_FORMS}")
    if drive in preset_table():
        return _from_choice(drive, {"preset": drive}, where)
    if not drive.endswith((".toml", ".parv", ".diskspecs")):
        raise _unknown(drive, where)
    return _from_choice(drive, load_drive(drive), where)
