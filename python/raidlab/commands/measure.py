"""`raidlab measure` and `raidlab import`: real runs through fio, in the same schema as `sim`.

The option names are a contract: scripts outside the project use them.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, Optional

import click

from raidlab.cli_types import finite
from raidlab.commands import progress, write_output
from raidlab.commands.consent import writes_files
from raidlab.commands.progress import ProgressBar
from raidlab.measure import importer, measurement
from raidlab.measure.report import summary
from raidlab.notes import emit as emit_notes
from raidlab.report import html as html_report
from raidlab.report import table
from raidlab.sim import FIO_FORMS, resolve_workload
from raidlab.terminal import printable


def write_json(document: Any, json_out: str) -> None:
    """``--json`` (stdout) or ``--json OUT`` (a file), as ``raidlab sim`` does."""
    write_output(json_out, json.dumps(document, indent=2, sort_keys=False))


@click.command("measure")
@click.option("--target", required=True, metavar="PATH",
              help="File (new or existing) or block device to run fio on.")
@click.option("--fio", "fio_job", metavar="JOB.fio", help="A fio job. " + FIO_FORMS)
@click.option("--sysbench", metavar='"OPTIONS"',
              help="sysbench fileio options (run as the closest fio job; differences are noted).")
@click.option("--preset", metavar="NAME", help="A workload preset (see raidlab sim --help).")
@click.option("--size", metavar="SIZE",
              help="Region of every job, e.g. 1G (K/M/G/T = powers of 1024). Default: the job's own, "
                   "else the whole device or existing file, else 1 GiB for a new file.")
@click.option("--runtime-s", type=finite(0.001, 1e6), help="Override the workload's run time.")
@click.option("--destroy-data", is_flag=True,
              help="Allow a writing workload on a block device or an existing non-empty file.")
@click.option("--show-job", is_flag=True, help="Print the generated fio job file (stderr with --json).")
@click.option("--dry-run", is_flag=True, help="Check the target and print the job file; do not run fio.")
@click.option("--fio-binary", metavar="PATH", help="The fio to run [default: $RAIDLAB_FIO or fio on PATH].")
@click.option("--fio-output", metavar="FILE", help="Also keep fio's own JSON output in FILE.")
@click.option("--json", "json_out", is_flag=False, flag_value="-", default=None, metavar="[OUT]",
              help="Print fio-shaped JSON (to OUT if given) instead of a table.")
@click.option("--html", "html_out", metavar="PATH", help="Also write the HTML report of the run.")
@writes_files(fio_output="file", json_out="file", html_out="file")
def measure_command(target: str, fio_job: Optional[str], sysbench: Optional[str], preset: Optional[str],
                    size: Optional[str], runtime_s: Optional[float], destroy_data: bool, show_job: bool,
                    dry_run: bool, fio_binary: Optional[str], fio_output: Optional[str],
                    json_out: Optional[str], html_out: Optional[str]) -> None:
    """Run a workload with the real fio on a file or device and report it like `raidlab sim`.

    Give one workload: --fio JOB.fio, --sysbench "fileio options", or --preset NAME. A workload
    that writes refuses a block device, a mounted or busy device, and an existing non-empty
    file unless --destroy-data is given; read-only workloads always run.
    """
    workload = resolve_workload(fio=fio_job, sysbench=sysbench, preset=preset)
    prepared = measurement.prepare(target, workload, size=size, runtime_s=runtime_s,
                                   destroy_data=destroy_data)
    emit_notes(prepared.notes)
    if show_job or dry_run:
        click.echo(printable(prepared.job_text, keep="\n\t"), nl=False, err=json_out == "-" and not dry_run)
    if dry_run:
        return
    bar = ProgressBar(progress.wanted(json_out is not None), "measuring")
    try:
        result = measurement.run_prepared(prepared, fio_binary=fio_binary, progress=bar.callback,
                                          keep_json=fio_output, command=["raidlab", *sys.argv[1:]])
    finally:
        bar.close()
    if json_out is not None:
        # What the run showed (a failed job, no I/O, trims): the summary would list it.
        emit_notes([note for note in result.document["raidlab"]["notes"] if note not in prepared.notes])
    title = f"{target} ({prepared.target.describe()}) | {prepared.workload.describe()}"
    if html_out:
        write_html([result.document], f"raidlab measure: {title}", html_out)
    if json_out is not None:
        write_json(result.document, json_out)
        return
    click.echo(summary(result.document, title))


def write_html(documents, title: str, html_out: str) -> None:
    """The HTML report of ``raidlab sim --html``, with these runs side by side."""
    write_output(html_out, html_report.render_html(title, runs=list(documents)))


@click.command("import")
@click.argument("json_files", metavar="FILE.json...", nargs=-1, required=True)
@click.option("--json", "json_out", is_flag=False, flag_value="-", default=None, metavar="[OUT]",
              help="Print raidlab's JSON document (a list for several files; to OUT if given) "
                   "instead of tables.")
@click.option("--html", "html_out", metavar="PATH",
              help="Also write the HTML report with every file as a run, side by side.")
@writes_files(json_out="file", html_out="file")
def import_command(json_files, json_out: Optional[str], html_out: Optional[str]) -> None:
    """Load fio 3.x JSON output (from any machine; '-' reads stdin) into raidlab's schema.

    Text fio printed before the JSON (error lines, a shell prompt) is skipped. The table is the
    one `raidlab sim` and `raidlab measure` print; documents raidlab wrote (simulated or
    measured, and each run of `raidlab compare --json`) load too, so measured and simulated runs
    can share one HTML report.
    """
    documents, labels = [], []
    for json_file in json_files:
        block: Dict[str, Any] = {"source": "measured", "tool": "fio", "imported_from": json_file}
        for label, document in importer.load_all(json_file, block):
            if not importer.is_simulated(document):
                document["raidlab"].setdefault("tool_version", document["fio version"])
                if json_out is not None:  # the summary lists them otherwise
                    emit_notes(document["raidlab"]["notes"], label)
            documents.append(document)
            labels.append(label)
    if html_out:
        write_html(documents, f"raidlab import: {', '.join(json_files)}", html_out)
    if json_out is not None:
        write_json(documents[0] if len(documents) == 1 else documents, json_out)
        return
    texts = []
    for label, document in zip(labels, documents):
        if importer.is_simulated(document):
            texts.append(table.summary(document, f"imported {label}"))
        else:
            texts.append(summary(document, f"imported {label}"))
    click.echo("\n\n".join(texts))
