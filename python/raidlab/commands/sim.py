"""`raidlab sim` and `raidlab drives`: simulate an array under a workload; list drive models.

The option names are a contract: scripts outside the project use them.
"""

from __future__ import annotations

import json
from typing import Optional, Tuple

import click

from raidlab.commands import progress, write_output
from raidlab.commands.numbers import whole_text
from raidlab.commands.progress import ProgressBar
from raidlab.outputs import writes_files
from raidlab.errors import ConfigError
from raidlab.report import html as html_report
from raidlab.report import sysbench_text, table
from raidlab.report import timeline as timeline_report
from raidlab import notes as run_notes
from raidlab.controllers import click_type as controller_type
from raidlab.drives import DRIVE_FORMS
from raidlab.run import DEFAULTS, build_run, cli_type
from raidlab.sim import parse_events, run_spec
from raidlab.sim import FIO_FORMS
from raidlab.stacked import options as stacked_options


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
@click.option("--level", default=DEFAULTS["level"], show_default=True,
              help="RAID level: 0, 1, 4, 5, 6, 10, or stacked md arrays 1+0, 5+0, 6+0, 0+1 (see --inner-devices).")
@click.option("--devices", type=cli_type("devices"), default=DEFAULTS["devices"], show_default=True,
              help="Members in the array (a single drive is --level 0 --devices 1).")
@click.option("--layout", metavar="NAME", help="mdadm layout name [default: mdadm's].")
@click.option("--chunk-kib", type=cli_type("chunk_kib"), default=DEFAULTS["chunk_kib"],
              show_default=True, help="Chunk size in KiB (power of two).")
@click.option("--drive", default=DEFAULTS["drive"], show_default=True, metavar="PRESET|FILE.toml|FILE.parv",
              help=f"Drive model: {DRIVE_FORMS}.")
@click.option("--controller", type=controller_type(), default=DEFAULTS["controller"], show_default=True,
              metavar="NAME|FILE.toml",
              help="md, hw (generic hardware RAID), a preset from 'raidlab controllers', or a controller FILE.toml.")
@click.option("--controller-opt", "controller_opts", multiple=True, metavar="KEY=VALUE",
              help="Set one controller parameter (raidlab controllers --params); repeatable.")
@click.option("--drive-queue-depth", type=cli_type("drive_queue_depth"), default=DEFAULTS["drive_queue_depth"],
              show_default=True, help="Commands each drive accepts (TCQ/NCQ); 0: the drive's own.")
@click.option("--drive-write-cache", type=cli_type("drive_write_cache"), default=DEFAULTS["drive_write_cache"],
              show_default=True, help="The drives' write caches (default: off behind a controller).")
@click.option("--cache-mib", type=cli_type("cache_mib"), default=DEFAULTS["cache_mib"], show_default=True,
              help="Hardware controller cache in MiB.")
@click.option("--bbu/--no-bbu", default=DEFAULTS["bbu"], show_default=True,
              help="Battery-backed cache (write-back) or none (write-through).")
@click.option("--read-ahead/--no-read-ahead", default=DEFAULTS["read_ahead"], show_default=True,
              help="Hardware controller read-ahead.")
@click.option("--scheduler", type=cli_type("scheduler"), default=DEFAULTS["scheduler"],
              show_default=True, help="I/O scheduler on each member.")
@click.option("--stripe-cache-size", type=cli_type("stripe_cache_size"), default=DEFAULTS["stripe_cache_size"],
              show_default=True, help="md raid5/6 stripe_cache_size (4 KiB rows).")
@click.option("--rmw-level", type=cli_type("rmw_level"), default=DEFAULTS["rmw_level"], show_default=True,
              help="md rmw_level: 0 never read-modify-write, 1 when cheaper, 2 also on ties.")
@click.option("--group-thread-cnt", type=cli_type("group_thread_cnt"), default=DEFAULTS["group_thread_cnt"],
              show_default=True, help="md raid5/6 worker threads beside raid5d.")
@click.option("--skip-copy/--no-skip-copy", default=DEFAULTS["skip_copy"], show_default=True,
              help="md raid5/6 skip_copy: no copy of written pages into the stripe cache.")
@click.option("--preread-bypass-threshold", type=cli_type("preread_bypass_threshold"),
              default=DEFAULTS["preread_bypass_threshold"], show_default=True,
              help="md raid5/6 full-stripe writes that may pass a head waiting to pre-read.")
@click.option("--nr-requests", type=cli_type("nr_requests"), default=DEFAULTS["nr_requests"],
              show_default=True, help="Block-layer queue size (queued and at the driver): per member "
                                      "under md, on the logical drive behind a controller.")
@click.option("--max-sectors-kb", type=cli_type("max_sectors_kb"), default=DEFAULTS["max_sectors_kb"],
              show_default=True, help="Largest merged request per member, KiB.")
@click.option("--ram-gib", type=cli_type("ram_gib"), default=DEFAULTS["ram_gib"], show_default=True,
              help="Host RAM for the page cache (buffered I/O), GiB.")
@click.option("--dirty-ratio", type=cli_type("dirty_ratio"), default=DEFAULTS["dirty_ratio"], show_default=True,
              help="vm.dirty_ratio, percent: writers wait above it.")
@click.option("--dirty-background-ratio", type=cli_type("dirty_background_ratio"),
              default=DEFAULTS["dirty_background_ratio"], show_default=True,
              help="vm.dirty_background_ratio, percent: background writeback above it.")
@click.option("--dirty-expire-centisecs", type=cli_type("dirty_expire_centisecs"),
              default=DEFAULTS["dirty_expire_centisecs"], show_default=True,
              help="vm.dirty_expire_centisecs: age at which dirty data is written back.")
@click.option("--dirty-writeback-centisecs", type=cli_type("dirty_writeback_centisecs"),
              default=DEFAULTS["dirty_writeback_centisecs"], show_default=True,
              help="vm.dirty_writeback_centisecs: the flusher's period.")
@click.option("--read-ahead-kb", type=cli_type("read_ahead_kb"), default=DEFAULTS["read_ahead_kb"], show_default=True,
              help="Array read_ahead_kb (0: the kernel's; md raid4/5/6/10: two full stripes).")
@click.option("--host", type=cli_type("host"), default=DEFAULTS["host"], metavar="NAME",
              help="Host/instance preset whose EBS limits cap all volume members (raidlab hosts).")
@click.option("--host-credits-pct", type=cli_type("host_credits_pct"), default=DEFAULTS["host_credits_pct"],
              show_default=True, help="The host's EBS burst credits at the start, % (0: already spent).")
@click.option("--bbu-learn", metavar="START+DURATION",
              help="A BBU learn cycle, seconds (e.g. 30+60): hardware controllers with a battery-backed cache.")
@click.option("--bbu-learn-policy", type=cli_type("bbu_learn_policy"), default=DEFAULTS["bbu_learn_policy"],
              show_default=True, help="Write policy during the learn cycle (default: the controller's, write-through).")
@click.option("--partition-gib", type=cli_type("partition_gib"), default=DEFAULTS["partition_gib"], show_default=True,
              help="Members are a partition of this size at the start of each drive, GiB (0: the whole drive).")
@click.option("--failed", metavar="K[,K...]", help="Start degraded: failed member indices (from 0).")
@click.option("--fio", "fio_job", metavar="JOB.fio", help="A fio job. " + FIO_FORMS)
@click.option("--sysbench", metavar='"OPTIONS"', help="sysbench fileio options, e.g. \"--file-test-mode=rndrw\".")
@click.option("--preset", metavar="NAME", help="A workload preset (oltp-innodb, oltp-postgres, wal, backup-scan, "
                                                "bonnie-seq, bonnie-seq-read, dd-write, dd-write-fdatasync, dd-read).")
@click.option("--runtime-s", type=cli_type("runtime_s"), help="Override the workload's run time.")
@click.option("--seed", type=cli_type("seed"), default=DEFAULTS["seed"], show_default=True,
              help="Seed of the run: same inputs and seed give identical output.")
@click.option("--max-time-s", type=cli_type("max_time_s"), default=DEFAULTS["max_time_s"],
              show_default=True, help="Bound on simulated time.")
@click.option("--fail", "fail_at", multiple=True, metavar="K@T",
              help="Fail member K at time T (e.g. 2@30s); repeatable.")
@click.option("--replace", "replace_at", multiple=True, metavar="K@T",
              help="Insert a replacement for member K at time T and rebuild it; repeatable.")
@click.option("--spare", is_flag=True, help="A hot spare: rebuild starts as soon as a member fails.")
@click.option("--latent-error", "latent_at", multiple=True, metavar="K@T",
              help="A latent sector error on member K at time T, met by its next read (the drive's ERC "
                   "or deep recovery against --command-timeout-s decides); repeatable.")
@click.option("--command-timeout-s", type=cli_type("command_timeout_s"), default=DEFAULTS["command_timeout_s"],
              show_default=True, help="The host's command timeout per member (Linux SCSI: 30 s; 0: none).")
@click.option("--speed-limit-min", type=cli_type("speed_limit_min"), default=DEFAULTS["speed_limit_min"], show_default=True,
              help="md speed_limit_min, KiB/s per device.")
@click.option("--speed-limit-max", type=cli_type("speed_limit_max"), default=DEFAULTS["speed_limit_max"], show_default=True,
              help="md speed_limit_max, KiB/s per device.")
@click.option("--rebuild-priority", type=cli_type("rebuild_priority"), default=DEFAULTS["rebuild_priority"], show_default=True,
              metavar="PCT", help="Hardware controller rebuild rate: percent of drive time under load.")
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
@stacked_options
@writes_files(json_out="file", html_out="file", png_dir="dir", log_prefix="log-prefix")
def sim_command(level, devices, layout, chunk_kib, drive, controller, controller_opts, drive_queue_depth,
                drive_write_cache, cache_mib, bbu, read_ahead,
                scheduler, stripe_cache_size, rmw_level, group_thread_cnt, skip_copy, preread_bypass_threshold, nr_requests, max_sectors_kb,
                ram_gib, dirty_ratio, dirty_background_ratio, dirty_expire_centisecs, dirty_writeback_centisecs, read_ahead_kb, partition_gib,
                host, host_credits_pct, bbu_learn, bbu_learn_policy, failed,
                fio_job, sysbench, preset, runtime_s, seed, max_time_s, fail_at, replace_at, spare,
                speed_limit_min, speed_limit_max, rebuild_priority, log_prefix, png_dir, json_out, html_out,
                output_format="normal", per_job=False, inner_devices=None, outer_chunk_kib=None,
                latent_at=(), command_timeout_s=30.0) -> None:
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
    spec = build_run({
        "level": level, "devices": devices, "layout": layout, "chunk_kib": chunk_kib, "drive": drive,
        "controller": controller, "cache_mib": cache_mib, "bbu": bbu, "read_ahead": read_ahead,
        "scheduler": scheduler, "stripe_cache_size": stripe_cache_size, "rmw_level": rmw_level,
        "group_thread_cnt": group_thread_cnt, "skip_copy": skip_copy,
        "preread_bypass_threshold": preread_bypass_threshold,
        "nr_requests": nr_requests, "max_sectors_kb": max_sectors_kb, "failed": failed_members,
        "fio": fio_job, "sysbench": sysbench, "preset": preset, "runtime_s": runtime_s, "seed": seed,
        "max_time_s": max_time_s, "timeline": timeline, "spare": spare,
        "speed_limit_min": speed_limit_min, "speed_limit_max": speed_limit_max,
        "rebuild_priority": rebuild_priority, "controller_opts": controller_opts,
        "drive_queue_depth": drive_queue_depth, "drive_write_cache": drive_write_cache,
        "ram_gib": ram_gib, "dirty_ratio": dirty_ratio, "dirty_background_ratio": dirty_background_ratio,
        "dirty_expire_centisecs": dirty_expire_centisecs, "dirty_writeback_centisecs": dirty_writeback_centisecs,
        "read_ahead_kb": read_ahead_kb, "host": host, "host_credits_pct": host_credits_pct, "bbu_learn": bbu_learn,
        "bbu_learn_policy": bbu_learn_policy,
        "inner_devices": inner_devices, "outer_chunk_kib": outer_chunk_kib,
        "partition_gib": partition_gib, "command_timeout_s": command_timeout_s})
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
        from raidlab.report.png import write_pngs

        state = "rebuilding" if document.get("rebuild") else ("degraded" if failed_members else "optimal")
        write_pngs(png_dir, [{"design": f"raid{spec.design.level} x{devices}", "state": state, "document": document}])
    if log_prefix:
        try:
            timeline_report.write_fio_logs(result.raw, log_prefix)
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
