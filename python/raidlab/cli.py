"""The ``raidlab`` command line.

Every error a user can cause ends the same way: one line ``raidlab: error: <message>`` on
stderr and exit status 2, never a traceback. :func:`main` is the console-script entry point.
"""

from __future__ import annotations

import json
import os
import sys
from typing import List, Optional, Sequence

import click

from raidlab import _core
from raidlab.array import DEFAULT_CHUNK_KIB, DEFAULT_MEMBER_KIB, Array
from raidlab.errors import RaidlabError
from raidlab.inputs import collecting_inputs
from raidlab.terminal import printable
from raidlab.workload.units import is_decimal
from raidlab.commands.compare import compare_command
from raidlab.commands.replay import replay_command
from raidlab.commands.catalog import controllers_command, drives_command, hosts_command
from raidlab.commands.sim import sim_command
from raidlab.commands.fio_options import fio_options_command
from raidlab.commands.reliability import reliability_command
from raidlab.commands.plan import plan_command
from raidlab.commands.align import align_command
from raidlab.commands.calibrate import calibrate_command
from raidlab.commands.measure import import_command, measure_command
from raidlab.layout import DEFAULT_DIAGRAM_ROWS, json_document, render_text, stacked_json, stacked_text
from raidlab.commands import stacked_options
from raidlab.stacked import is_stacked, stacked_arrays
# raidlab sweep
from raidlab.commands.sweep import sweep_command

#: Exit status of a check that ran and found a problem, as linters exit (``align``: a partition
#: is misaligned). A command returns it deliberately; it never means an error.
EXIT_FINDINGS = 1
#: Exit status for any input raidlab refuses (bad options, arrays md would refuse).
EXIT_USAGE = 2
#: Exit status for a bug in raidlab itself (reported in one line, too): sysexits.h's
#: EX_SOFTWARE, so that it cannot be mistaken for a check's findings (1) or bad input (2).
EXIT_INTERNAL = 70
#: Exit status when the reader of stdout went away (``raidlab ... | head``): what a shell reports
#: for a process that SIGPIPE ended (128 + 13); neither a finding nor a bug.
EXIT_BROKEN_PIPE = 141

_U64_LIMIT = 1 << 64
_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
# click >= 8.2 raises this (a UsageError) for a bare 'raidlab'; older clicks print help themselves.
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class WholeNumber(click.ParamType):
    """A plain non-negative integer (no sign, no units) that fits 64 bits."""

    name = "integer"

    def convert(self, value, param, ctx):  # type: ignore[override]
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            if not is_decimal(text):
                self.fail(f"{value!r} is not a whole number (0, 1, 2, ...)", param, ctx)
            number = int(text)
        if number >= _U64_LIMIT:
            self.fail(f"{value!r} is too large", param, ctx)
        return number


class KiBList(click.ParamType):
    """A comma-separated list of member sizes in KiB, e.g. ``6144,10240,14336``."""

    name = "KIB,KIB,..."

    def convert(self, value, param, ctx):  # type: ignore[override]
        if isinstance(value, (list, tuple)):
            return list(value)
        parts = [part.strip() for part in str(value).split(",")]
        if not all(is_decimal(part) for part in parts):
            self.fail(f"{value!r} is not a comma-separated list of whole KiB sizes", param, ctx)
        sizes = [int(part) for part in parts]
        if any(size >= _U64_LIMIT for size in sizes):
            self.fail(f"{value!r} has a size too large", param, ctx)
        return sizes


WHOLE_NUMBER = WholeNumber()
KIB_LIST = KiBList()


def _layout_epilog() -> str:
    r"""Layout names per level, from the core (the '\b' keeps click from rewrapping them)."""
    lines = ["\b", "Layouts (mdadm names):"]
    for level in ("0", "4", "5", "6", "10"):
        default = _core.default_layout(level)
        lines.append(f"  raid{level}: {_core.layout_choices(level)}  [default: {default}]")
    lines.append("  raid1: none")
    return "\n".join(lines)


@click.group(context_settings=_CONTEXT)
@click.version_option(_core.__version__, "-V", "--version", prog_name="raidlab")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """raidlab: a lab for RAID arrays — md-exact layouts, simulation, reliability, planning.

    Start with 'raidlab compare' (RAID5 vs RAID10 on the classic database benchmark).
    Run 'raidlab COMMAND --help' for a command's options.
    """
    # The files the command reads from here on are its inputs, which no output may replace
    # (raidlab.inputs notes them, raidlab.outputs checks them), until the command line ends.
    ctx.with_resource(collecting_inputs())


@cli.command("layout", epilog=_layout_epilog())
@click.option(
    "--level",
    required=True,
    metavar="LEVEL",
    help="RAID level: 0, 1, 4, 5, 6 or 10 (also raid5, mirror, stripe, ...), or a stack: 1+0, 5+0, 6+0, 0+1.",
)
@click.option(
    "--devices",
    type=WHOLE_NUMBER,
    help="Number of members. May be omitted with --member-kib-list (must match it if given).",
)
@click.option(
    "--chunk-kib",
    type=WHOLE_NUMBER,
    default=DEFAULT_CHUNK_KIB,
    show_default=True,
    help="Chunk size in KiB, a power of two of at least 4 (mdadm's default). "
    "For raid1 only the map's granularity.",
)
@click.option(
    "--layout",
    metavar="NAME",
    help="mdadm layout name. Default: mdadm's (left-symmetric for raid5/6, parity-last for "
    "raid4, n2 for raid10, original for raid0; raid1 has none).",
)
@click.option(
    "--member-kib",
    type=WHOLE_NUMBER,
    help=f"Data-area size of every member in KiB. [default: {DEFAULT_MEMBER_KIB} (1 GiB)]",
)
@click.option(
    "--member-kib-list",
    type=KIB_LIST,
    help="Comma-separated data-area size of each member in KiB, in device-role order, "
    "e.g. 6144,10240,14336.",
)
@click.option(
    "--rows",
    type=WHOLE_NUMBER,
    default=DEFAULT_DIAGRAM_ROWS,
    show_default=True,
    help="Stripe rows to draw in the text diagram.",
)
@click.option(
    "--q-coeff",
    is_flag=True,
    help="raid6: also draw each data cell's Q coefficient exponent (g^e).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a JSON document (level, layout, devices, chunk_kib, capacity_bytes, "
    "io_min_bytes, io_opt_bytes, map, and q_log_coeff for raid6) instead of text. "
    "Stacked levels: the geometry, inner_arrays (each one's drives), outer and inner (each such a document).",
)
@stacked_options
def layout_command(
    level: str,
    devices: Optional[int],
    chunk_kib: int,
    layout: Optional[str],
    member_kib: Optional[int],
    member_kib_list: Optional[List[int]],
    rows: int,
    q_coeff: bool,
    as_json: bool,
    inner_devices: int = 0,
    outer_chunk_kib: int = 512,
) -> None:
    """Show where md puts every chunk: capacity, io hints and a stripe diagram.

    Members are columns and member chunks are rows, labelled as in the md documentation:
    Dn is array chunk n, P and Q are parity, - is space md leaves unused. Every copy of a
    raid1/raid10 chunk is shown. With --json the full map is printed: one list per member,
    one entry per chunk of its data area (chunk number, "P", "Q" or null).
    """
    if member_kib is not None and member_kib_list is not None:
        raise click.UsageError("--member-kib and --member-kib-list cannot be used together")
    if devices is None and member_kib_list is None:
        raise click.UsageError("give --devices, or the member sizes with --member-kib-list")
    if is_stacked(level):  # 1+0, 5+0, 6+0, 0+1: the outer array's map and each inner array's
        _stacked_layout(level, devices, chunk_kib, layout, member_kib, member_kib_list, rows, q_coeff, as_json,
                        inner_devices, outer_chunk_kib)
        return
    array = Array(
        level=level,
        devices=devices,
        chunk_kib=chunk_kib,
        layout=layout,
        member_kib=member_kib,
        member_kib_list=member_kib_list,
    )
    if as_json:
        click.echo(json.dumps(json_document(array)))
    else:
        click.echo(render_text(array, rows=rows, show_q=q_coeff), nl=False)


def _stacked_layout(level, devices, chunk_kib, layout, member_kib, member_kib_list, rows, q_coeff, as_json,
                    inner_devices, outer_chunk_kib) -> None:
    """``raidlab layout`` of a stacked level (raidlab.stacked.stacked_arrays)."""
    if member_kib_list is not None or devices is None:
        raise click.UsageError(f"--level {level}: a stack takes --devices and one --member-kib for every drive")
    size = DEFAULT_MEMBER_KIB if member_kib is None else member_kib
    geo, inner, outer = stacked_arrays(level, devices, chunk_kib, layout, size,
                                       inner_devices, outer_chunk_kib)
    if as_json:
        click.echo(json.dumps(stacked_json(geo, inner, outer)))
    else:
        click.echo(stacked_text(geo, inner, outer, rows=rows, show_q=q_coeff), nl=False)


cli.add_command(compare_command)
cli.add_command(replay_command)
cli.add_command(sim_command)
cli.add_command(drives_command)
cli.add_command(controllers_command)
cli.add_command(hosts_command)
cli.add_command(reliability_command)
cli.add_command(plan_command)
cli.add_command(align_command)
cli.add_command(measure_command)
cli.add_command(import_command)
cli.add_command(calibrate_command)
cli.add_command(sweep_command)
cli.add_command(fio_options_command)


def _one_line(message: str) -> str:
    """Collapses any message to one line."""
    return " ".join(str(message).split()) or "unknown error"


def _error(message: str) -> None:
    # Messages quote the user's input: its control characters are shown, never sent.
    click.echo(f"raidlab: error: {printable(_one_line(message))}", err=True)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _invoke(args: List[str]) -> object:
    """Runs the command as ``click``'s ``main(standalone_mode=False)`` does, except that Ctrl-C
    stays a KeyboardInterrupt (click turns it into Abort after printing an empty line), so
    :func:`main` can answer it with one line and status 130."""
    try:
        with cli.make_context("raidlab", args) as ctx:
            return cli.invoke(ctx)
    except click.exceptions.Exit as done:  # --help, --version
        return done.exit_code


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line and returns the exit status: 0 ok, 1 a check's findings (returned
    by the command itself), 2 bad input, 70 a bug in raidlab, 130 interrupted, 141 stdout's
    reader went away."""
    try:
        status = _invoke(list(argv) if argv is not None else sys.argv[1:])
        return status if isinstance(status, int) else 0
    except _NO_ARGS_IS_HELP as no_args:  # type: ignore[misc]
        click.echo(no_args.ctx.get_help() if no_args.ctx else no_args.format_message())
        return 0
    except click.UsageError as usage:
        hint = f" (see '{usage.ctx.command_path} --help')" if usage.ctx is not None else ""
        _error(usage.format_message() + hint)
        return EXIT_USAGE
    except click.ClickException as failure:
        _error(failure.format_message())
        return EXIT_USAGE
    except RaidlabError as refused:
        _error(str(refused))
        return EXIT_USAGE
    except click.Abort:
        _error("aborted")
        return EXIT_INTERNAL
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except SystemExit:
        raise
    except BaseException as bug:  # noqa: BLE001 - a Rust panic is a BaseException too
        _error(f"internal error ({type(bug).__name__}): {bug}")
        return EXIT_INTERNAL
