"""`raidlab sim` and `raidlab drives`: simulate an array under a workload; list drive models.

The option names are a contract: scripts outside the project use them.
"""

from __future__ import annotations

import json
from typing import Optional, Tuple

import click

from raidlab.commands import progress, write_output
from raidlab.commands.progress import ProgressBar
from raidlab.commands.consent import writes_files
from raidlab.errors import ConfigError
from raidlab.report import html as html_report
from raidlab.report import sysbench_text, table
from raidlab.report import fio_logs
from raidlab.report.png import write_pngs
from raidlab import notes as run_notes
from raidlab.cli_types import setting_option, setting_options
from raidlab.numeric import whole_text
from raidlab.run import build_run
from raidlab.sim import FIO_FORMS, parse_events, run_spec


def _failed_members(text: Optional[str]) -> Tuple[int, ...]:
    if not text:
        return ()
    members = [whole_text(p) for p in text.split(",")]
    if any(m is None or m < 0 for m in members):
        raise click.BadParameter(f"{text!r} is not a comma-separated list of member indices",
                                 param_hint="--failed")
    return tuple(members)


def _progress(enabled: bool):
    """The shared progress bar (commands.progress) over simulated time, only on a terminal."""
    if not enabled:
        return None, None
    bar = ProgressBar(True, "simulating")

    def step(now_ns: int, stop_ns: int) -> None:
        bar(min(now_ns, stop_ns) / stop_ns if stop_ns else 1.0)

    return bar, step


@click.command("sim")
@setting_options("level", "devices", "layout", "chunk_kib", "drive", "controller", "controller_opts",
                 "drive_queue_depth", "drive_write_cache", "cache_mib", "bbu", "read_ahead", "scheduler",
                 "stripe_cache_size", "rmw_level", "group_thread_cnt", "skip_copy", "preread_bypass_threshold",
                 "nr_requests", "max_sectors_kb", "ram_gib", "dirty_ratio", "dirty_background_ratio",
                 "dirty_expire_centisecs", "dirty_writeback_centisecs", "read_ahead_kb", "host",
                 "host_credits_pct", "bbu_learn", "bbu_learn_policy", "partition_gib", "failed")
@click.option("--fio", "fio_job", metavar="JOB.fio", help="A fio job. " + FIO_FORMS)
@click.option("--sysbench", metavar='"OPTIONS"', help="sysbench fileio options, e.g. \"--file-test-mode=rndrw\".")
@click.option("--preset", metavar="NAME", help="A workload preset (oltp-innodb, oltp-postgres, wal, backup-scan, "
                                                "bonnie-seq, bonnie-seq-read, dd-write, dd-write-fdatasync, dd-read).")
@setting_options("runtime_s", "seed", "max_time_s")
@click.option("--fail", "fail_at", multiple=True, metavar="K@T",
              help="Fail member K at time T (e.g. 2@30s); repeatable.")
@click.option("--replace", "replace_at", multiple=True, metavar="K@T",
              help="Insert a replacement for member K at time T and rebuild it; repeatable.")
@setting_option("spare")
@click.option("--latent-error", "latent_at", multiple=True, metavar="K@T",
              help="A latent sector error on member K at time T, met by its next read (the drive's ERC "
                   "or deep recovery against --command-timeout-s decides); repeatable.")
@setting_options("command_timeout_s", "speed_limit_min", "speed_limit_max", "rebuild_priority")
@click.option("--log-prefix", metavar="PREFIX",
              help="Also write the 1 s time series as fio logs: PREFIX_iops.1.log, PREFIX_clat.1.log, ...")
@click.option("--png", "png_dir", metavar="DIR", help="Write the report's charts as PNG files into DIR (matplotlib).")
@click.option("--json", "json_out", is_flag=False, flag_value="-", default=None, metavar="[OUT]",
              help="Print fio-shaped JSON (to OUT if given) instead of a table.")
@click.option("--html", "html_out", metavar="PATH",
              help="Also write a self-contained HTML report with charts to PATH.")
@click.option("--output-format", "output_format", type=click.Choice(["normal", "json", "json+"]), default="normal",
              show_default=True, help="As fio's: json is --json; json+ adds fio's clat histogram bins.")
@click.option("--per-job", is_flag=True, help="One entry per fio job even where the job file asks for group_reporting.")
@setting_options("inner_devices", "outer_chunk_kib")
@writes_files(json_out="file", html_out="file", png_dir="dir", log_prefix="log-prefix")
def sim_command(failed, fio_job, sysbench, preset, fail_at, replace_at, latent_at, log_prefix, png_dir, json_out,
                html_out, output_format, per_job, **settings) -> None:
    """Simulate an array of drives under a workload: IOPS, bandwidth, latency, per-member load.

    Give one workload: --fio JOB.fio, --sysbench "fileio options", or --preset NAME. Bad days:
    start degraded with --failed, or script failures and replacements with --fail/--replace
    (and --spare); with no workload the array is idle and only the rebuild runs.
    """
    if output_format != "normal" and json_out is None:
        json_out = "-"  # fio's --output-format=json / json+: the document on stdout
    timeline = (parse_events(fail_at, "fail") + parse_events(replace_at, "replace")
                + parse_events(latent_at, "latent_error"))
    failed_members = _failed_members(failed)
    spec = build_run({**settings, "failed": failed_members, "timeline": timeline,
                      "fio": fio_job, "sysbench": sysbench, "preset": preset})
    workload = spec.workload
    bar, step = _progress(progress.wanted(json_out is not None))
    try:
        result = run_spec(spec, step)
    finally:
        if bar is not None:
            bar.close()
    run_notes.emit(result.notes)
    document = result.to_dict(plus=output_format == "json+", per_job=per_job)
    if png_dir:
        state = "rebuilding" if document.get("rebuild") else ("degraded" if failed_members else "optimal")
        write_pngs(png_dir, [{"design": f"raid{spec.design.level} x{spec.design.devices}", "state": state, "document": document}])
    if log_prefix:
        try:
            fio_logs.write_fio_logs(result.raw, log_prefix)
        except OSError as error:
            raise ConfigError(f"cannot write logs with prefix {log_prefix}: {error.strerror}") from None
    if html_out:
        write_output(html_out, html_report.render_html(f"raidlab sim: {html_report.run_label(document)}",
                                                       runs=[document]))
    if json_out is not None:
        write_output(json_out, json.dumps(document, indent=2, sort_keys=False))
        return
    title = spec.title()
    if workload is not None and workload.to_dict()["source"]["tool"] == "sysbench":
        for line in sysbench_text.interval_lines(result.raw, workload):
            click.echo(line)
        click.echo(sysbench_text.render(result.raw, document, workload))
        click.echo("")
    click.echo(table.summary(document, title))
