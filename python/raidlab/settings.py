"""Every run setting's one declaration, and the reading of a value by it.

A run setting (``devices``, ``nr_requests``, ``ram_gib``, ``seed``, ...) is declared once, in the
core (``_core.run_settings()``: name, unit, kind, default, range or choices, meaning, the CLI's
help, the layer it belongs to, and whether it is part of the design or of the run's options).
Everything the Python side shows or takes is generated from that declaration:
:class:`raidlab.run.Design` and :class:`raidlab.run.Options` (their fields and defaults), the
``raidlab sim`` options and those other commands share (:mod:`raidlab.cli_types`), the keys of
designs and sweep files, the keyword arguments of :func:`raidlab.simulate`, and the check of
every value (:func:`convert`), whichever of these it arrives through.

Two choices are Python's registries, not the core's: ``controller`` (md, hw and the presets of
:mod:`raidlab.controllers`) and ``host`` (:mod:`raidlab.hosts`).

>>> BY_NAME["nr_requests"].default, BY_NAME["nr_requests"].max
(128, 65536)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from raidlab import _core, controllers, hosts
from raidlab.errors import ConfigError
from raidlab.numeric import boolean, number

#: Kinds of setting: how a value is read (``structured``: by a reader of its own below).
KINDS = ("int", "float", "bool", "choice", "text", "structured")


@dataclass(frozen=True)
class Setting:
    """One run setting's declaration."""

    name: str
    unit: str
    kind: str
    default: Any
    min: Any
    max: Any
    choices: Tuple[str, ...]
    doc: str
    cli_help: Optional[str]
    layer: str
    scope: str

    @property
    def option(self) -> str:
        """Its ``raidlab sim`` option: ``--nr-requests`` for ``nr_requests``."""
        return "--" + self.name.replace("_", "-")


#: Choices that are Python's registries: the controllers and hosts users can name.
_REGISTRIES: Dict[str, Tuple[str, ...]] = {"controller": controllers.NAMES, "host": hosts.NAMES}


def _from_core(row: Mapping[str, Any]) -> Setting:
    """A declaration as Python holds it: list defaults as tuples (a frozen dataclass's fields
    must be immutable), the registries' choices filled in. A kind this module cannot read is an
    error at import, not a value passed through unchecked."""
    if row["kind"] not in KINDS:
        raise ValueError(f"run setting {row['name']}: unknown kind {row['kind']!r} (known: {', '.join(KINDS)})")
    default = tuple(row["default"]) if isinstance(row["default"], list) else row["default"]
    choices = _REGISTRIES.get(row["name"], tuple(row["choices"] or ()))
    return Setting(row["name"], row["unit"], row["kind"], default, row["min"], row["max"], choices,
                   row["doc"], row["cli_help"], row["layer"], row["scope"])


#: Every run setting, in the order the core declares them (the design's, then the options').
SETTINGS: Tuple[Setting, ...] = tuple(_from_core(row) for row in _core.run_settings())
BY_NAME: Dict[str, Setting] = {s.name: s for s in SETTINGS}
DESIGN_KEYS: Tuple[str, ...] = tuple(s.name for s in SETTINGS if s.scope == "design")
OPTION_KEYS: Tuple[str, ...] = tuple(s.name for s in SETTINGS if s.scope == "options")
#: Every setting's default, by name.
DEFAULTS: Dict[str, Any] = {s.name: s.default for s in SETTINGS}
#: Settings whose values are (finite) real numbers.
FLOAT_KEYS: Tuple[str, ...] = tuple(s.name for s in SETTINGS if s.kind == "float")
#: Settings ``raidlab sim`` has an option for (the others: timeline from --fail/--replace/
#: --latent-error, and bounds only the API and files set).
CLI_KEYS: Tuple[str, ...] = tuple(s.name for s in SETTINGS if s.cli_help is not None)

_TYPES = {"int": int, "float": float, "bool": bool, "choice": str, "text": Optional[str], "structured": Any}


def declared(scope: str) -> Callable[[type], type]:
    """A class decorator: the class becomes a frozen dataclass whose fields are the settings of
    ``scope`` ("design" or "options"), in declaration order, each with its declared default
    (field metadata: doc, low, high, choices and the :class:`Setting`)."""
    def build(cls: type) -> type:
        chosen = [s for s in SETTINGS if s.scope == scope]
        cls.__annotations__ = {s.name: (Optional[float] if s.kind == "float" and s.default is None
                                        else _TYPES[s.kind]) for s in chosen}
        for s in chosen:
            setattr(cls, s.name, field(default=s.default, metadata={
                "doc": s.doc, "low": s.min, "high": s.max, "choices": s.choices, "setting": s}))
        return dataclass(frozen=True)(cls)
    return build


def convert(name: str, value: Any, where: str) -> Any:
    """``value`` checked against the declaration of setting ``name`` (a CLI option, a TOML value,
    a ``--sim-opt`` text and a Python keyword all arrive here)."""
    setting = BY_NAME[name]
    reader = _READERS.get(name)
    if reader is not None:
        return reader(value, where)
    if setting.kind == "bool":
        return boolean(name, value, where)
    if setting.choices:
        if str(value) not in setting.choices:
            raise ConfigError(f"{where}{name} {value!r}: expected one of {', '.join(setting.choices)}")
        return str(value)
    if setting.kind == "text":
        if not isinstance(value, str):
            raise ConfigError(f"{where}{name}={value!r} is not a {name} name")
        return value
    if setting.kind not in ("int", "float"):
        return value
    read = number(name, value, where, float if setting.kind == "float" else int)
    if not setting.min <= read <= setting.max:
        raise ConfigError(f"{where}{name}={value!r} is out of range {setting.min}..{setting.max}")
    return read


def _as_given(value: Any, where: str) -> Any:
    """A value read later by its own reader (a level by the core's parser, a drive by
    :func:`raidlab.drives.resolve_drive`)."""
    return value


def _controller(value: Any, where: str) -> str:
    if str(value).endswith(".toml"):
        return str(value)
    if str(value) not in controllers.NAMES:
        raise ConfigError(f"{where}controller {value!r}: expected one of {', '.join(controllers.NAMES)} "
                          "or a controller FILE.toml")
    return str(value)


def _controller_opts(value: Any, where: str) -> Tuple[Tuple[str, Any], ...]:
    """Controller parameters: a mapping, or KEY=VALUE texts; each checked by its declaration."""
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif not isinstance(value, (str, list, tuple)):
        raise ConfigError(f"{where}controller_opts={value!r:.40}: expected KEY=VALUE texts or a table")
    else:
        pairs = [_pair(item, where) for item in ([value] if isinstance(value, str) else list(value))]
    return tuple((str(k), controllers.check_value(str(k), v, where)) for k, v in pairs)


def _pair(item: Any, where: str) -> Tuple[Any, Any]:
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return tuple(item)
    key, sep, text = str(item).partition("=")
    if not sep:
        raise ConfigError(f"{where}--controller-opt {item!r}: expected KEY=VALUE")
    return key.strip(), text.strip()


def _members(value: Any, where: str) -> Tuple[int, ...]:
    """Member indices: a list of whole numbers, or their text "0,2"."""
    items = value.split(",") if isinstance(value, str) else value
    try:
        members = tuple(number("failed", item, where, int) for item in items)
    except TypeError:
        members = (-1,)
    if any(m < 0 for m in members):
        raise ConfigError(f"{where}failed={value!r} is not a list of member indices (from 0)")
    twice = sorted({m for m in members if members.count(m) > 1})
    if twice:
        raise ConfigError(f"{where}failed: member {twice[0]} is listed twice")
    return members


#: What a timeline event may do: fail a member, replace it, or give it a latent sector error
#: under its next read.
TIMELINE_ACTIONS = ("fail", "replace", "latent_error")


def _timeline(value: Any, where: str) -> Tuple[Dict[str, Any], ...]:
    """Scripted events: each a mapping ``{"action": "fail"|"replace"|"latent_error", "member": K,
    "at_s": T}``."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ConfigError(f"{where}timeline must be a list of events, got {type(value).__name__}")
    events = []
    for event in value:
        if not isinstance(event, Mapping) or set(event) != {"action", "member", "at_s"} \
                or event["action"] not in TIMELINE_ACTIONS:
            raise ConfigError(f"{where}timeline event {event!r:.80}: expected "
                              "{'action': 'fail', 'replace' or 'latent_error', 'member': K, 'at_s': T}")
        member = number("member", event["member"], f"{where}timeline ", int)
        at_s = number("at_s", event["at_s"], f"{where}timeline ", float)
        if member < 0 or at_s < 0:
            raise ConfigError(f"{where}timeline event {event!r:.80}: member and at_s must be at least 0")
        events.append({"action": event["action"], "member": member, "at_s": at_s})
    return tuple(events)


#: Longest a learn cycle may start after, or last: the simulator's bound (10^6 s).
LEARN_MAX_S = 1e6


def _bbu_learn(value: Any, where: str) -> Tuple[float, float]:
    """``START+DURATION`` in seconds (text, or a pair of numbers): when the learn cycle starts
    and how long it lasts."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        parts = list(value)
    elif isinstance(value, str) and value.count("+") == 1:
        parts = value.split("+")
    else:
        raise ConfigError(f"{where}--bbu-learn {value!r:.40}: expected START+DURATION in seconds, e.g. 30+60")
    start, duration = (number(f"bbu_learn {what}", part.strip() if isinstance(part, str) else part, where, float)
                       for what, part in zip(("start", "duration"), parts))
    if not (0 <= start <= LEARN_MAX_S and 0 < duration <= LEARN_MAX_S):
        raise ConfigError(f"{where}--bbu-learn {value!r:.40}: START must be 0 to {LEARN_MAX_S:g} s and DURATION "
                          f"above 0 up to {LEARN_MAX_S:g} s")
    return (start, duration)


#: The readers of settings whose values have a shape of their own.
_READERS: Dict[str, Callable[[Any, str], Any]] = {
    "level": _as_given, "drive": _as_given, "controller": _controller, "controller_opts": _controller_opts,
    "failed": _members, "timeline": _timeline, "bbu_learn": _bbu_learn,
}

#: A structured setting the core declares but no reader here reads would pass unchecked.
_UNREAD = [s.name for s in SETTINGS if s.kind == "structured" and s.name not in _READERS and not s.choices]
if _UNREAD:
    raise ImportError(f"run settings without a reader in raidlab.settings: {', '.join(_UNREAD)}")
