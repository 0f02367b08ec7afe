"""The click side of the library's declarations: the types of number options, and every run
setting's option, generated from its declaration (:mod:`raidlab.settings`).

click's own FLOAT takes ``nan``, ``inf`` and ``1e999`` (Python's ``float()`` does), and
``click.FloatRange`` lets NaN through because every comparison with NaN is false, so a
``--max-time-s nan`` used to run nothing at all and ``--capacity-tb 1e300`` overflowed later.
Every float option of the CLI is declared with :func:`finite`, which gives its range once, and
every whole-number option with :func:`whole`; both read ASCII decimal only
(:mod:`raidlab.numeric`).

A command that takes run settings declares them by name: ``@setting_options("devices",
"chunk_kib")`` gives ``--devices`` and ``--chunk-kib`` with the declared type, range, default and
help; :data:`_FORMS` holds what only the command line has (a metavar, a ``--x/--no-x`` pair,
a repeatable option).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Optional

import click

from raidlab import controllers
from raidlab.numeric import MAX_WHOLE, real_text, whole_text
from raidlab.settings import BY_NAME, Setting


class WholeRange(click.IntRange):
    """A whole number in ASCII decimal digits within ``[low, high]`` (None: unbounded)."""

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a whole number", param, ctx)
        if not isinstance(value, int):
            number = whole_text(str(value))
            if number is None:
                self.fail(f"{str(value)[:40]!r} is not a whole number (ASCII digits 0-9)", param, ctx)
            value = number
        if self.max == MAX_WHOLE and value > MAX_WHOLE:
            self.fail(f"{value} is above {MAX_WHOLE}, the largest whole number raidlab takes", param, ctx)
        return super().convert(value, param, ctx)

    def _describe_range(self) -> str:
        """The range as help shows it; the u64 ceiling every count has is no limit worth reading."""
        if self.max == MAX_WHOLE and self.min is not None:
            return f"x>={self.min}"
        return super()._describe_range()


def whole(low: Optional[int] = 0, high: Optional[int] = MAX_WHOLE) -> WholeRange:
    """The type of a whole-number option, from ``low`` (0 unless given) to ``high`` (the u64
    limit unless given: a 22-digit --limit was an OverflowError in the glue)."""
    return WholeRange(low, high)


class FiniteFloat(click.FloatRange):
    """A finite float within ``[low, high]`` (either end open if asked)."""

    def __init__(self, low: float, high: float, low_open: bool = False, high_open: bool = False) -> None:
        super().__init__(low, high, min_open=low_open, max_open=high_open)

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a number", param, ctx)
        try:
            number = float(value) if isinstance(value, (int, float)) else real_text(str(value))
        except (TypeError, ValueError, OverflowError):
            number = None
        if number is None:
            self.fail(f"{str(value)[:40]!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{str(value)[:40]!r} is not a finite number (the range is {self._describe_range()})",
                      param, ctx)
        return super().convert(number, param, ctx)


def finite(low: float, high: float, low_open: bool = False, high_open: bool = False) -> FiniteFloat:
    """The type of a float option: finite, from ``low`` to ``high``."""
    return FiniteFloat(low, high, low_open, high_open)


class ControllerChoice(click.Choice):
    """``--controller``: a name of :data:`raidlab.controllers.NAMES` or a FILE.toml."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and value.endswith(".toml"):
            return value
        return super().convert(value, param, ctx)


def _type(setting: Setting, low: Any = None, high: Any = None) -> Any:
    """The click type of ``setting``'s option (None: click's text); ``low``/``high`` narrow it."""
    low = setting.min if low is None else low
    high = setting.max if high is None else high
    if setting.name == "controller":
        return ControllerChoice(list(controllers.NAMES))
    if setting.choices:
        return click.Choice(list(setting.choices))
    if setting.kind == "float":
        return finite(low, high)
    if setting.kind == "int":
        return whole(low, high)
    return None


def cli_type(name: str) -> Any:
    """The click type of setting ``name``'s option, from its declaration (range or choices)."""
    return _type(BY_NAME[name])


#: What only the command line has: a metavar, an option name other than the setting's
#: (repeatable --controller-opt), a lone flag instead of a --x/--no-x pair.
_FORMS: Dict[str, Dict[str, Any]] = {
    "layout": {"metavar": "NAME"},
    "drive": {"metavar": "PRESET|FILE.toml|FILE.parv"},
    "controller": {"metavar": "NAME|FILE.toml"},
    "controller_opts": {"flag": "--controller-opt", "multiple": True, "metavar": "KEY=VALUE"},
    "host": {"metavar": "NAME"},
    "bbu_learn": {"metavar": "START+DURATION"},
    "failed": {"metavar": "K[,K...]"},
    "rebuild_priority": {"metavar": "PCT"},
    "spare": {"lone_flag": True},
}

#: ``help=`` left out: the declaration's cli_help.
_DECLARED = object()


def setting_option(name: str, *, help: Any = _DECLARED, low: Any = None, high: Any = None,
                   **extra: Any) -> Callable[[Callable], Callable]:
    """The click option of run setting ``name``: its declared type, range, default and help.
    A command may narrow the range (``low``/``high``, inside the declared one), word the help
    for its own context (``help=``, None for none) or give click keywords of its own
    (``required=True``, ``default=None``, ``metavar=``), which win over the generated ones."""
    setting = BY_NAME[name]
    if (low is not None and low < setting.min) or (high is not None and high > setting.max):
        raise ValueError(f"{name}: {low}..{high} is outside the declared range {setting.min}..{setting.max}")
    form = dict(_FORMS.get(name, {}))
    flag = form.pop("flag", setting.option)
    keywords: Dict[str, Any] = {"help": setting.cli_help if help is _DECLARED else help}
    if form.pop("lone_flag", False):
        return click.option(flag, name, is_flag=True, **{**keywords, **extra})
    if setting.kind == "bool":
        flag = f"{flag}/--no-{flag[2:]}"
    elif not form.get("multiple"):
        keywords["type"] = _type(setting, low, high)
    if not form.get("multiple") and setting.default not in (None, ()):
        keywords.update(default=setting.default, show_default=True)  # () is "none given"
    return click.option(flag, name, **{**form, **keywords, **extra})


def setting_options(*names: str) -> Callable[[Callable], Callable]:
    """The options of run settings ``names``, shown in that order in ``--help``."""
    def apply(command: Callable) -> Callable:
        for name in reversed(names):
            command = setting_option(name)(command)
        return command
    return apply
