"""Numbers on the command line and in files: ASCII decimal digits only, finite, inside the range the
option declares (the models' own ranges, up to the u64 limit for whole numbers); anything else is
one ``raidlab: error:`` line with exit status 2."""

from __future__ import annotations

import click
import pytest

from conftest import refused, run_bounded, run_cli
from raidlab.cli import cli
from raidlab.cli_types import FiniteFloat

QUICK = ["--drive", "null", "--runtime-s", "0.01"]


# -- numbers: finite and inside the declared range, on the command line and in files -------------


@pytest.mark.parametrize("args, option", [
    (["sim", "--preset", "wal", "--drive", "null", "--runtime-s", "nan"], "--runtime-s"),
    (["sim", "--preset", "wal", "--drive", "null", "--max-time-s", "nan"], "--max-time-s"),
    (["sim", "--preset", "wal", "--drive", "null", "--runtime-s", "inf"], "--runtime-s"),
    (["compare", "--runtime-s", "nan"], "--runtime-s"),
    (["plan", "--capacity-tb", "nan", "--preset", "wal"], "--capacity-tb"),
    (["plan", "--capacity-tb", "1", "--preset", "wal", "--min-iops", "nan"], "--min-iops"),
    (["plan", "--capacity-tb", "1", "--preset", "wal", "--budget", "-inf"], "--budget"),
    (["reliability", "--level", "5", "--devices", "4", "--afr-pct", "nan"], "--afr-pct"),
    (["reliability", "--level", "5", "--devices", "4", "--uber", "inf"], "--uber"),
    (["align", "-", "--io-kib", "nan"], "--io-kib"),
    (["replay", "--disksim", "x.parv", "t", "--published-ms", "nan"], "--published-ms"),
])
def test_nan_and_inf_are_refused_on_the_command_line(args, option):
    # Before: --max-time-s nan ran nothing and exited 0; --runtime-s nan was an internal error.
    refused(run_cli(args), f"Invalid value for '{option}'", "is not a finite number")


@pytest.mark.parametrize("args, option, shown", [
    (["plan", "--capacity-tb", "1e300", "--preset", "wal"], "--capacity-tb", "0<x<=1000000.0"),
    (["reliability", "--level", "5", "--devices", "4", "--afr-pct", "-1"], "--afr-pct", "0<x<100"),
    (["reliability", "--level", "5", "--devices", "4", "--capacity-tb", "-2"], "--capacity-tb", "0<x<=1000000.0"),
    (["reliability", "--level", "5", "--devices", "4", "--mission-years", "1e9"], "--mission-years", "0<x<=100"),
    (["plan", "--capacity-tb", "1", "--preset", "wal", "--durability", "1"], "--durability", "0<x<1"),
])
def test_out_of_range_numbers_name_the_range(args, option, shown):
    # Before: plan --capacity-tb 1e300 overflowed (exit 1); the others had no range in the message.
    refused(run_cli(args), f"Invalid value for '{option}'", shown)


@pytest.mark.parametrize("option, fragment", [
    ("runtime_s=1e400", "--sim-opt runtime_s=inf is not a finite number"),
    ("runtime_s=nan", "--sim-opt runtime_s=nan is not a finite number"),
    ("speed_limit_min=5.5", "--sim-opt speed_limit_min=5.5 is not a whole number"),
    ("rebuild_priority=1000", "--sim-opt rebuild_priority=1000 is out of range 1..100"),
    ("seed=\u0661", "--sim-opt seed='\u0661' is not a whole number"),
    ("cache_mib=1_0", "--sim-opt cache_mib='1_0' is not a whole number"),
    ("devices=5", "--sim-opt devices: set by reliability's own options"),
    ("level=6", "--sim-opt level: set by reliability's own options"),
])
def test_sim_options_take_the_sim_declarations(option, fragment):
    # Before: runtime_s=1e400 simulated forever; nan ran and blamed the run time; 5.5 became 5;
    # '\u0661' and '1_0' were read as numbers by int(); devices=5 was an internal TypeError (exit 70).
    refused(run_bounded(["reliability", "--level", "5", "--devices", "4", "--trials", "0",
                         "--rebuild-from-sim", "--drive", "null", "--sim-opt", option]), fragment)


def test_every_float_option_is_finite_and_bounded():
    """The one declaration: every float option of every command is a FiniteFloat with both ends."""
    checked = 0
    for name, command in cli.commands.items():
        for param in command.params:
            if isinstance(param.type, click.types.FloatParamType):
                assert isinstance(param.type, FiniteFloat), f"{name} --{param.name} is {param.type!r}"
                assert param.type.min is not None and param.type.max is not None, f"{name} --{param.name}"
                checked += 1
    assert checked >= 25


@pytest.mark.parametrize("line, fragment", [
    ("capacity_bytes = nan", "'capacity_bytes' must be a finite number, got nan"),
    ("capacity_bytes = -inf", "'capacity_bytes' must be a finite number, got -inf"),
    ("rpm = 1" + "0" * 400, "'rpm' is too large"),
    ('rpm = "fast"', "'rpm' must be a number, got str 'fast'"),
])
def test_drive_file_numbers_are_finite(tmp_path, line, fragment):
    # Before: NaN and inf reached the core, a 400-digit integer raised OverflowError (exit 1).
    drive = tmp_path / "d.toml"
    drive.write_text(f'kind = "hdd"\n{line}\n')
    refused(run_cli(["sim", "--drive", str(drive), "--preset", "wal", "--runtime-s", "0.01"]), fragment)


# -- one number grammar: ASCII decimal digits ----------------------------------------------------


@pytest.mark.parametrize("args, option", [
    (["sim", "--preset", "wal", *QUICK, "--devices", "\u0661\u0662"], "--devices"),
    (["sim", "--preset", "wal", *QUICK, "--chunk-kib", "1_024"], "--chunk-kib"),
    (["sim", "--preset", "wal", "--drive", "null", "--runtime-s", "1_0"], "--runtime-s"),
    (["sim", "--preset", "wal", "--drive", "null", "--runtime-s", "\u0661"], "--runtime-s"),
    (["sim", "--preset", "wal", *QUICK, "--seed", "\u0667"], "--seed"),
    (["sim", "--preset", "wal", *QUICK, "--failed", "\u0661"], "--failed"),
    (["reliability", "--level", "5", "--devices", "\u0664"], "--devices"),
    (["reliability", "--level", "5", "--devices", "4", "--trials", "1_000"], "--trials"),
    (["plan", "--capacity-tb", "1", "--preset", "wal", "--top", "\u0665"], "--top"),
    (["compare", "--seed", "1_0"], "--seed"),
    (["align", "--level", "5", "--devices", "\u0664"], "--devices"),
])
def test_numbers_are_ascii_decimal(args, option):
    # Before: click's INT/FLOAT call int()/float(), which take other scripts' digits ('١٢' ran
    # a 12-member array) and '_' separators ('1_024' ran with chunk 1024), silently.
    refused(run_cli(args), f"Invalid value for '{option}'" if option != "--failed" else "--failed")


@pytest.mark.parametrize("event, fragment", [
    ("\u0661@1", "expected MEMBER@TIME"),
    ("0@1_0", "'1_0' is not a time"),
    ("99999999999999999999@1", "member 99999999999999999999 does not exist (an array has at most 64 members)"),
])
def test_scripted_events_read_ascii_numbers(event, fragment):
    # Before: '١@1' failed member 1; '0@1_0' failed it at 10 s; a 20-digit member gave
    # "configuration field 'member' has the wrong type".
    refused(run_cli(["sim", "--preset", "wal", *QUICK, "--fail", event]), fragment)


@pytest.mark.parametrize("option, value, shown", [
    ("--uber", "0.5", "0<=x<0.001"),
    ("--lse-per-disk-year", "1000000", "0<=x<=8760"),
])
def test_reliability_option_ranges_are_the_models(option, value, shown):
    # Before: the options took up to 1 and 1e6 and the core then refused the value in its own
    # unit ("latent sector error rate must be between 0 and 1 per disk-hour, got 114.15...").
    refused(run_cli(["reliability", "--level", "5", "--devices", "4", option, value]),
            f"Invalid value for '{option}'", shown)


@pytest.mark.parametrize("option", ["--limit", "--seed"])
def test_whole_numbers_stop_at_the_u64_limit(option):
    # Before: replay --seed 2**64 (or a 22-digit --limit) was an internal error (OverflowError:
    # int too big to convert, exit 70).
    from conftest import REPO_ROOT

    data = REPO_ROOT / "data" / "disksim-valid"
    refused(run_cli(["replay", str(data / "atlas10k.trace"), "--disksim", str(data / "atlas10k.parv"),
                     option, str(2**64)]), f"Invalid value for '{option}'", "18446744073709551615")
