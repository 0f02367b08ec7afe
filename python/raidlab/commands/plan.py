"""`raidlab plan`: the md array for a capacity, a workload and its targets (fault tolerance
included), best on an objective, with the commands that build it."""

from __future__ import annotations

import json
import os
from typing import List, Optional

import click

from raidlab.cli_types import finite, setting_option, whole
from raidlab.commands import progress, write_output
from raidlab.commands.consent import writes_files
from raidlab.commands.progress import ProgressBar
from raidlab.commands.sweep import ray_option  # plan runs its simulations through the sweep's executor
from raidlab.planner import MAX_CAPACITY_TB, PlanResult, plan
from raidlab.report import setup_script
from raidlab.planner.candidates import (DEFAULT_CHUNKS_KIB, DEFAULT_LEVELS, DEFAULT_MAX_DRIVES,
                                        DEFAULT_RAID10_LAYOUTS)
from raidlab.planner.rank import Evaluated
from raidlab.report import steady, table
from raidlab.report.html import render_html
from raidlab.report.png import write_pareto_png
from raidlab.sim import FIO_FORMS, resolve_workload
from raidlab.units import format_probability, money
from raidlab.workload.units import is_decimal


def _int_list(text: str, option: str) -> List[int]:
    parts = [p.strip().lower().replace("raid", "") for p in text.split(",") if p.strip()]
    if not parts or not all(is_decimal(p) for p in parts):
        raise click.BadParameter(f"{text!r} is not a comma-separated list of numbers", param_hint=option)
    return [int(p) for p in parts]


def _name_list(text: str) -> List[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _progress_factory(enabled: bool):
    """The shared progress bar over designs settled (only on a terminal, progress.wanted)."""
    bars: List[ProgressBar] = []
    if not enabled:
        return None, bars

    def factory(total: int):
        bar = ProgressBar(True, "planning")
        bars.append(bar)
        return bar.counter(total)

    return factory, bars


def _ms(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def _row(e: Evaluated, priced: bool, winner: Evaluated) -> List[str]:
    degraded = e.degraded_iops
    hours = e.rebuild_hours
    mark = "* " if e is winner else "  "
    risk = format_probability(e.loss_probability) if e.loss_probability is not None else str(e.tolerance)
    return [mark + e.design.name, money(e.cost, priced), f"{e.capacity_bytes / 1e12:.2f}",
            f"{e.iops:,.0f}", _ms(e.result['optimal']['p99_ms']),
            "-" if degraded is None else f"{degraded:,.0f}",
            "-" if hours is None else ("never" if hours == float("inf") else f"{hours:.1f}"),
            "-" if e.result.get("repair") is None else f"{e.result['repair']['hours']:.1f}", risk,
            e.result["optimal"].get("basis", "-")]


def render_text(result: PlanResult, top: int) -> str:
    doc = result.document
    request, found = doc["request"], doc["search"]
    priced = request["cost_unit"] == "price"
    labels = {"min_iops": "IOPS >= {:g}", "max_p99_ms": "p99 <= {:g} ms",
              "min_degraded_iops": "degraded IOPS >= {:g}", "max_rebuild_hours": "rebuild <= {:g} h",
              "max_loss_probability": "P(loss) <= {}", "min_survive": "survives {:g} failure(s)"}
    targets = ", ".join(labels[k].format(format_probability(v) if k == "max_loss_probability" else v)
                        for k, v in request["targets"].items() if (k, v) != ("min_survive", 0)) or "none"
    if request["survive"] is None and "min_survive" in request["targets"] and request["targets"]["min_survive"]:
        targets += " (2 where a rebuild under the workload lasts over a week)"
    lines = [f"raidlab plan: {request['capacity_tb']:g} TB usable | {request['workload']['describe']}",
             f"targets: {targets}"
             + (f"; budget {request['budget']:g}" if request["budget"] is not None else "")
             + f"; at most {request['max_drives']} drives; objective {request['objective']}; "
               f"seed {doc['raidlab']['seed']}",
             f"searched {found['considered']} candidates: {found['pruned']['capacity']} too small, "
             f"{found['pruned']['budget']} over budget"
             + (f", {found['pruned']['survive']} survive too few failures" if found["pruned"].get("survive") else "")
             + f"; simulated {found['simulated']} "
             f"(optimal, one member failed, rebuilding onto a spare); {found['feasible']} meet every target"]
    risk_header = "P(loss)" if result.winner.loss_probability is not None else "survives"
    # Two rebuild times: under the workload (the plan's estimate) and idle (P(loss)'s repair time).
    headers = ["design", "cost", "TB", "IOPS", "p99 ms", "degraded IOPS", "rebuild h", "idle h", risk_header, "basis"]
    front = result.front[:top]
    lines += ["", f"Pareto front (cost vs performance vs risk), {len(result.front)} design(s), best first"
              + (f", first {top} shown" if len(result.front) > top else "") + ":",
              table.render(headers, [_row(e, priced, result.winner) for e in front])]
    if result.winner not in front:
        lines.append(table.render(headers, [_row(result.winner, priced, result.winner)]))
    lines += ["", "Why:"] + [f"  {line}" for line in doc["explanation"]]
    lines += ["", f"Setup for {doc['winner']}:"] + [f"  {line}" for line in setup_script.render(doc["setup"])]

    lines.append(steady.NOTE + ".")  # the simulated figures are steady-state ones
    return "\n".join(lines)


@click.command("plan")
@click.option("--capacity-tb", type=finite(0, MAX_CAPACITY_TB, low_open=True),
              required=True, help="Usable capacity needed, in TB (10^12 bytes).")
@click.option("--fio", "fio_job", metavar="JOB.fio", help="The workload as a fio job. " + FIO_FORMS)
@click.option("--sysbench", metavar='"OPTIONS"', help="The workload as sysbench fileio options.")
@click.option("--preset", metavar="NAME", help="A workload preset (see raidlab sim --help).")
@click.option("--min-iops", type=finite(0, 1e12, low_open=True),
              help="Target: total IOPS the array must deliver.")
@click.option("--max-p99-ms", type=finite(0, 1e9, low_open=True),
              help="Target: worst p99 latency (reads and writes), ms.")
@click.option("--min-degraded-iops", type=finite(0, 1e12, low_open=True),
              help="Target: IOPS with one member failed.")
@click.option("--max-rebuild-hours", type=finite(0, 1e6, low_open=True),
              help="Target: hours to rebuild a full member onto a spare while serving --min-iops "
                   "(or the full workload if no IOPS target), under --speed-limit-min/max.")
@click.option("--max-drives", type=whole(2, 64), default=DEFAULT_MAX_DRIVES, show_default=True,
              help="Most drives, spares included.")
@click.option("--drive", "drives", multiple=True, metavar="NAME[:PRICE]",
              help="A candidate drive model (preset or .toml) and its price per drive; repeatable. "
                   "Default: every preset, unpriced (cost = number of drives).")
@click.option("--budget", type=finite(0, 1e15, low_open=True),
              help="Most money to spend on drives (needs prices).")
@click.option("--spares", type=whole(0, 8), default=0, show_default=True,
              help="Hot spares to buy with the array.")
@click.option("--levels", default=",".join(map(str, DEFAULT_LEVELS)), show_default=True,
              help="RAID levels to consider (raid1 is the 2-drive mirror; add 0 to allow raid0; stacked "
                   "md arrays 1+0, 5+0, 6+0 too).")
@click.option("--chunks-kib", default=",".join(map(str, DEFAULT_CHUNKS_KIB)), show_default=True,
              help="Chunk sizes to consider, KiB.")
@click.option("--raid10-layouts", default=",".join(DEFAULT_RAID10_LAYOUTS), show_default=True,
              help="md raid10 layouts to consider.")
@click.option("--survive", type=whole(0, 8), default=None, metavar="N",
              help="Target: every design survives any N drive failures (raid5 and raid10 n2 survive 1; raid6 and "
                   "raid10 n3 survive 2). [default: 1, and 2 for a design whose rebuild under the workload lasts "
                   "over a week; 0 when --levels includes 0]")
@click.option("--objective", type=click.Choice(["cost", "iops", "p99", "loss"]), default="cost", show_default=True,
              help="What ranks the designs that meet every target: cost (cheapest), iops (most IOPS), p99 (lowest "
                   "p99 latency) or loss (lowest P(loss) over --mission-years).")
@click.option("--durability", type=finite(0, 1, low_open=True, high_open=True), metavar="P",
              help="Target: most acceptable probability of data loss over --mission-years.")
@click.option("--mission-years", type=finite(0, 100, low_open=True), default=5.0, show_default=True,
              help="Mission time for --durability.")
@setting_option("speed_limit_min", help="md speed_limit_min, KiB/s per device: the simulated rebuilds run "
                "under it and the setup sets it (under load md rebuilds at about this rate).")
@setting_option("speed_limit_max", help="md speed_limit_max, KiB/s per device (an idle rebuild's ceiling).")
@click.option("--sim-seconds", type=finite(0.01, 600),
              help="Simulated seconds per scenario [default: 2 for disks, 0.25 SATA SSD, 0.1 NVMe; rebuilds run at least 30, 5 and 1].")
@click.option("--extra", type=whole(0, 16), default=1, show_default=True,
              help="Device counts simulated past each family's first design that meets the targets.")
@setting_option("seed", help="Seed of every simulation: same inputs and seed give the same plan.")
@click.option("--jobs", type=whole(1, 256), default=None,
              help="Simulations run in parallel [default: the number of CPUs]. Does not change the answer.")
@ray_option
@click.option("--top", type=whole(1, 1000), default=12, show_default=True,
              help="Pareto designs shown in the text table.")
@setting_option("host", help="Host/instance preset whose EBS limits cap cloud volume members (raidlab hosts).")
@click.option("--html", "html_out", metavar="OUT", help="Write a self-contained HTML report with the Pareto front.")
@click.option("--png", "png_dir", metavar="DIR", help="Write the Pareto front as a PNG into DIR (matplotlib).")
@click.option("--json", "json_out", is_flag=False, flag_value="-", default=None, metavar="[OUT]",
              help="Print the plan as JSON (to OUT if given).")
@writes_files(html_out="file", png_dir="dir", json_out="file")
def plan_command(capacity_tb, fio_job, sysbench, preset, min_iops, max_p99_ms, min_degraded_iops,
                 max_rebuild_hours, max_drives, drives, budget, spares, levels, chunks_kib,
                 raid10_layouts, durability, mission_years, speed_limit_min, speed_limit_max, sim_seconds,
                 extra, seed, jobs, ray, top, host, html_out, png_dir, json_out, survive=None,
                 objective="cost") -> None:
    """Plan an md array: the design that holds --capacity-tb, meets the targets and survives
    --survive failures, best on --objective (by default the cheapest).

    Enumerates levels, device counts, chunk sizes and drive models, drops what is too small or
    over budget, simulates the rest under the workload (optimal, one member failed, rebuilding),
    shows the Pareto front and why the winner wins, then prints the commands that build it
    and keep it running: mdadm/mkfs/mount, mdadm.conf and initramfs, fstab, md's resync speed
    limits, monitoring and scrubs. Drives appear as <disk1> ... <diskN>, to be replaced.
    """
    workload = resolve_workload(fio=fio_job, sysbench=sysbench, preset=preset)
    factory, bars = _progress_factory(progress.wanted(json_out is not None))
    try:
        result = plan(capacity_tb=capacity_tb, workload=workload, drives=list(drives),
                      min_iops=min_iops, max_p99_ms=max_p99_ms, min_degraded_iops=min_degraded_iops,
                      max_rebuild_hours=max_rebuild_hours, max_drives=max_drives, budget=budget,
                      spares=spares, levels=[part.strip() for part in levels.split(",") if part.strip()],
                      chunks_kib=_int_list(chunks_kib, "--chunks-kib"),
                      raid10_layouts=_name_list(raid10_layouts), durability=durability,
                      mission_years=mission_years, seed=seed, jobs=jobs or os.cpu_count() or 1,
                      sim_seconds=sim_seconds, extra=extra, progress=factory,
                      speed_limit_min=speed_limit_min, speed_limit_max=speed_limit_max,
                      ray=ray, host=host, survive=survive, objective=objective)
    finally:
        for bar in bars:
            bar.close()
    points = result.document["points"]
    if html_out:
        write_output(html_out, render_html("raidlab plan", runs=[], plan=result.document))
    if png_dir:
        write_pareto_png(png_dir, points)
    if json_out is None:
        click.echo(render_text(result, top))
        return
    write_output(json_out, json.dumps(result.document, indent=2, allow_nan=False))
