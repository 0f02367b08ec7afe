"""Every run setting is declared once, by the core (``_core.run_settings()``), and everything
users meet is generated from that one declaration: the ``raidlab sim`` options (name, type,
range, default, help), the keys of designs and sweep files, the keyword arguments of
``raidlab.simulate`` and the fields of ``raidlab.run.Design``/``Options``. A second declaration
in Python (a ``_setting(...)`` default, a hand-written click option) is how two copies came to
disagree (``nr_requests`` 128 here, 256 in the core), so the sources are checked too.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import re

import click
import pytest

import raidlab
from raidlab import _core
from raidlab.cli import cli
from raidlab.errors import ConfigError

PACKAGE = pathlib.Path(raidlab.__file__).parent
DECLARED = list(_core.run_settings())
BY_NAME = {row["name"]: row for row in DECLARED}
WORKLOAD_KEYS = ["fio", "sysbench", "preset"]

#: Options that share a run setting's name but are something else: (file, option) -> what it is.
NOT_THE_SETTING = {
    ("commands/reliability.py", "--seed"): "the Monte Carlo's seed, not a simulation's",
    ("commands/replay.py", "--seed"): "the seed of the platter's starting angle in a trace replay",
    ("commands/calibrate.py", "--runtime-s"): "seconds of each measured fio point",
    ("commands/plan.py", "--drive"): "candidate drives, repeatable NAME[:PRICE]",
}
#: Hand-written options of run settings in commands that do not simulate (layout, align,
#: reliability, measure); their owner is moving them to raidlab.cli_types.setting_option (this
#: set only shrinks: an entry whose option is gone fails the test below).
KNOWN_OFFENDERS = {
    *(("cli.py", flag) for flag in ("--level", "--devices", "--chunk-kib", "--layout")),
    *(("commands/align.py", flag) for flag in ("--level", "--devices", "--chunk-kib", "--layout")),
    *(("commands/reliability.py", flag) for flag in ("--level", "--devices", "--layout", "--chunk-kib", "--drive",
                                                     "--command-timeout-s")),
    ("commands/measure.py", "--runtime-s"),
}


def _option_flags(path: pathlib.Path):
    """The first flag of every ``click.option("--x", ...)`` call in a source file."""
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "option"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "click" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value.split("/")[0], node.lineno


def test_the_core_declares_each_setting_once():
    names = [row["name"] for row in DECLARED]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert {row["scope"] for row in DECLARED} == {"design", "options"}


def test_no_python_file_declares_a_setting_of_its_own():
    options = {"--" + name.replace("_", "-") for name in BY_NAME}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        if re.search(r"(?<![\w.])_setting\(", path.read_text()):
            found.append(f"{where}: a _setting(...) declaration")
        for flag, line in _option_flags(path):
            if flag in options and (where, flag) not in NOT_THE_SETTING and (where, flag) not in KNOWN_OFFENDERS:
                found.append(f"{where}:{line}: click.option({flag!r}) written by hand")
    assert not found, "settings declared outside the core:\n" + "\n".join(found)


def test_the_exceptions_name_options_that_still_exist():
    present = {(str(path.relative_to(PACKAGE)), flag) for path in PACKAGE.rglob("*.py") for flag, _ in _option_flags(path)}
    stale = sorted((set(NOT_THE_SETTING) | KNOWN_OFFENDERS) - present)
    assert not stale, f"remove from NOT_THE_SETTING/KNOWN_OFFENDERS (the option is gone): {stale}"


def test_design_and_options_fields_are_the_declared_settings_in_order():
    from raidlab.run import Design, Options

    for cls, scope in ((Design, "design"), (Options, "options")):
        declared = [row for row in DECLARED if row["scope"] == scope]
        assert [f.name for f in dataclasses.fields(cls)] == [row["name"] for row in declared]
        for f, row in zip(dataclasses.fields(cls), declared):
            expected = tuple(row["default"]) if isinstance(row["default"], (list, tuple)) else row["default"]
            assert f.default == expected and type(f.default) is type(expected), f.name


def _sim_params():
    return {param.name: param for param in cli.commands["sim"].params if isinstance(param, click.Option)}


def test_the_sim_options_are_exactly_the_declared_cli_settings():
    params = _sim_params()
    # the default the option gives when not used (click 8.5 keeps an UNSET sentinel in .default
    # for a flag declared without one; get_default resolves it as click does when parsing)
    context = click.Context(cli.commands["sim"])
    cli_settings = [row for row in DECLARED if row["cli_help"] is not None]
    settings_in_sim = {name for name in params if name in BY_NAME}
    assert settings_in_sim == {row["name"] for row in cli_settings}
    for row in cli_settings:
        param = params[row["name"]]
        assert param.help == row["cli_help"], row["name"]
        if row["default"] not in (None, ()):
            assert param.get_default(context) == row["default"], row["name"]
        if row["kind"] in ("int", "float"):
            assert (param.type.min, param.type.max) == (row["min"], row["max"]), row["name"]
        if row["kind"] == "choice":
            assert list(param.type.choices) == list(row["choices"]), row["name"]


def test_a_designs_file_takes_exactly_the_declared_design_settings(tmp_path):
    from raidlab.compare import load_designs

    path = tmp_path / "d.toml"
    path.write_text('[[design]]\nname = "a"\nnot_a_setting = 1\n')
    with pytest.raises(ConfigError) as error:
        load_designs(str(path))
    expected = error.value.args[0].split("expected one of ", 1)[1].split(", ")
    assert expected == ["name"] + [row["name"] for row in DECLARED if row["scope"] == "design"]


def test_a_sweep_file_takes_exactly_the_declared_settings():
    from raidlab.sweep import grid

    assert set(grid.SETTINGS) == set(BY_NAME) | set(WORKLOAD_KEYS) | set(grid.EVENT_KEYS)


def test_simulate_takes_exactly_the_declared_settings_as_keywords():
    with pytest.raises(ConfigError) as error:
        raidlab.simulate(not_a_setting=1, drive="null", preset="wal")
    expected = error.value.args[0].split("expected ", 1)[1].split(", ")
    assert expected == [row["name"] for row in DECLARED] + WORKLOAD_KEYS


@pytest.mark.parametrize("name", ["nr_requests", "max_events"])
def test_a_run_records_the_declared_default(name):
    result = raidlab.simulate(level=1, devices=2, drive="null", preset="wal", runtime_s=0.01)
    assert result.config[name] == BY_NAME[name]["default"]


def test_every_command_option_of_a_run_setting_keeps_its_declared_default_and_range():
    """compare and plan word some help for their own context and compare narrows --runtime-s, but
    no command may give a run setting another default or a range past the declared one."""
    commands = {"cli.py": "layout"}  # the file that declares each command, where not commands/NAME.py
    skip = {(commands.get(path, pathlib.Path(path).stem), flag) for (path, flag) in [*NOT_THE_SETTING, *KNOWN_OFFENDERS]}
    for command_name, command in cli.commands.items():
        for param in command.params:
            setting = BY_NAME.get(param.name)
            if not isinstance(param, click.Option) or setting is None or param.multiple:
                continue
            if (command_name, param.opts[0]) in skip:
                continue  # not the setting, or written by hand (align's --chunk-kib takes 1..3 KiB too)
            where = f"raidlab {command_name} {param.opts[0]}"
            given = param.default is not None and type(param.default).__name__ != "Sentinel"  # click's UNSET
            if given:
                assert param.default == setting["default"], where
            if setting["kind"] in ("int", "float") and isinstance(param.type, click.types._NumberRangeBase):
                assert setting["min"] <= param.type.min and param.type.max <= setting["max"], where
