"""`raidlab compare`: the main job — designs side by side, in good times and bad."""

from __future__ import annotations

import csv
import io
import json
import sys

from typing import Optional

import click

from raidlab import _core
from raidlab import notes as run_notes
from raidlab.cli_types import setting_option, whole
from raidlab.commands import write_output
from raidlab.commands.consent import writes_files
from raidlab.commands.sweep import JOBS_HELP, ray_option  # compare runs its designs through the sweep's executor
from raidlab.compare import STATES, Case, classic, compare, load_designs, verdicts
from raidlab.errors import ConfigError
from raidlab.outputs import COMPARE_CSV_COLUMNS
from raidlab.report import steady
from raidlab.report.html import render_html
from raidlab.report.png import write_pngs
from raidlab.report.table import render
from raidlab.sim import FIO_FORMS, resolve_workload
from raidlab.sweep.executor import cpu_count


#: Per-direction latency columns: (header, key of Row.totals()).
_LATENCY = (("read p50 ms", "read_p50_ms"), ("read p99 ms", "read_p99_ms"),
            ("write p50 ms", "write_p50_ms"), ("write p99 ms", "write_p99_ms"))


#: compare --csv's header: raidlab.outputs declares it, as it recognises a CSV raidlab wrote by it;
#: the latency columns follow _LATENCY.
CSV_COLUMNS = COMPARE_CSV_COLUMNS


def _ms(value: Optional[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def _table(rows) -> str:
    body = []
    for row in rows:
        t = row.totals()
        hours = row.rebuild_hours()
        body.append([row.design, row.resolved.controller, row.resolved.chunk_kib, row.state, row.case,
                     f"{t['iops']:.0f}", f"{t['mib_s']:.1f}", *(_ms(t[key]) for _, key in _LATENCY),
                     f"{row.capacity_bytes / 1e9:.0f}", f"{hours:.1f}" if hours else "-", t["basis"]])
    return render(["design", "controller", "chunk KiB", "state", "workload", "IOPS", "MiB/s",
                   *(header for header, _ in _LATENCY), "usable GB", "rebuild h", "basis"], body)


def _csv(rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        t = row.totals()
        writer.writerow([row.design, row.resolved.controller, row.resolved.chunk_kib, row.state, row.case,
                         f"{t['iops']:.3f}", f"{t['mib_s']:.3f}",
                         *("" if t[key] is None else f"{t[key]:.3f}" for _, key in _LATENCY),
                         row.capacity_bytes, "" if row.rebuild_hours() is None else f"{row.rebuild_hours():.3f}",
                         t["basis"]])
    return out.getvalue()


def _emit_notes(rows) -> None:
    """Each run's notes on stderr, once per design and workload (states share them)."""
    seen = set()
    for row in rows:
        for note in row.notes:
            if (row.design, row.case, note) not in seen:
                seen.add((row.design, row.case, note))
                run_notes.emit([note], f"{row.design} · {row.case}")


@click.command("compare")
@click.option("--designs", "designs_file", metavar="FILE.toml",
              help="Designs (and optionally workloads) to compare; default: RAID5 vs RAID10 classic. "
                   "A TOML file: [defaults] (optional) settings every design starts from; [[design]] "
                   "name = \"...\" and any raidlab sim setting by its setting name (chunk_kib = 64, "
                   "level = \"5+0\", drive = \"nearline-7200\"); [[workload]] (optional) name and one "
                   "of preset, sysbench or fio. Example: examples/designs.toml.")
@click.option("--fio", "fio_job", metavar="JOB.fio", help="Compare on this fio job instead. " + FIO_FORMS)
@click.option("--sysbench", metavar='"OPTIONS"', help="Compare on these sysbench fileio options instead.")
@click.option("--preset", metavar="NAME", help="Compare on a workload preset instead.")
@click.option("--states", default=",".join(STATES), show_default=True,
              help="Array states to run: optimal, degraded (one member failed), rebuilding.")
@setting_option("runtime_s", low=0.01, high=1e5, help="Override each workload's run time.")
@setting_option("seed", help=None)
@click.option("--json", "json_out", metavar="OUT", help="Write every run's fio-shaped JSON (- for stdout).")
@click.option("--csv", "csv_out", metavar="OUT", help="Write the table as CSV (- for stdout).")
@click.option("--html", "html_out", metavar="OUT", help="Write a self-contained HTML report with charts.")
@click.option("--png", "png_dir", metavar="DIR", help="Write the same charts as PNG files into DIR (matplotlib).")
@click.option("--jobs", type=whole(1, 4096), default=None, help=JOBS_HELP)
@ray_option
@writes_files(json_out="file", csv_out="file", html_out="file", png_dir="dir")
def compare_command(designs_file, fio_job, sysbench, preset, states, runtime_s, seed, json_out, csv_out,
                    html_out, png_dir, jobs, ray) -> None:
    """Compare array designs on one workload in optimal, degraded and rebuilding states.

    With no arguments: six 10k RPM SCSI drives behind a RAID controller with a 256 MB
    battery-backed cache, mq-deadline, sysbench fileio on 32 GiB, 128 threads, 16 KiB O_DIRECT,
    modes rndrd, rndwr, rndrw — RAID5 vs RAID10, optimal, one drive failed, and rebuilding.
    """
    designs, cases = load_designs(designs_file) if designs_file else classic()
    if any(x is not None for x in (fio_job, sysbench, preset)):
        workload = resolve_workload(fio=fio_job, sysbench=sysbench, preset=preset)
        cases = [Case(workload.describe().split(",")[0], workload)]
    chosen = list(dict.fromkeys(s.strip() for s in states.split(",") if s.strip()))  # each state once
    bad = [s for s in chosen if s not in STATES]
    if bad or not chosen:
        raise ConfigError(f"--states: unknown state(s) {', '.join(bad) or '(none)'}; expected {', '.join(STATES)}")
    show_bar = sys.stderr.isatty() and json_out != "-" and csv_out != "-"
    total = len(designs) * len(chosen) * len(cases)
    if show_bar:
        with click.progressbar(length=total, label="comparing", file=sys.stderr) as bar:
            rows = compare(designs, cases, chosen, seed, runtime_s, lambda done, _: bar.update(1),
                           jobs=jobs or cpu_count(), ray=ray)
    else:
        rows = compare(designs, cases, chosen, seed, runtime_s, jobs=jobs or cpu_count(), ray=ray)
    _emit_notes(rows)

    if json_out:
        docs = [{"design": r.design, "controller": r.resolved.controller, "chunk_kib": r.resolved.chunk_kib,
                 "state": r.state, "workload": r.case, "capacity_bytes": r.capacity_bytes,
                 "document": r.document} for r in rows]
        write_output(json_out, json.dumps({"raidlab": {"version": _core.__version__, "seed": seed, "figures": steady.NOTE}, "runs": docs}, indent=2))
    if csv_out:
        write_output(csv_out, _csv(rows))
    if html_out:
        # The workload apart from the design: the report draws a latency CDF per workload.
        comparison = [{"design": r.design, "workload": r.case, "state": r.state, "document": r.document,
                       "capacity_bytes": r.capacity_bytes} for r in rows]
        write_output(html_out, render_html("raidlab compare", runs=[], comparison=comparison,
                                           verdicts=verdicts(rows)))
    if png_dir:
        several = len({r.case for r in rows}) > 1
        write_pngs(png_dir, [{"design": f"{r.design} · {r.case}" if several else r.design, "state": r.state,
                              "document": r.document} for r in rows])
    if json_out == "-" or csv_out == "-":
        return
    click.echo(_table(rows))
    click.echo("")
    for line in verdicts(rows):
        click.echo(line)
    click.echo(steady.NOTE + ".")
