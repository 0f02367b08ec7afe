"""`raidlab reliability`: the probability an array loses data, from its layout.

The option names are a contract: scripts outside the project use them.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, Dict, Optional, Tuple

import click

from raidlab.commands import stacked_options, write_output
from raidlab.commands.consent import writes_files
from raidlab.cli_types import cli_type, finite, whole
from raidlab.numeric import real_text, whole_text
from raidlab.commands.progress import ProgressBar
from raidlab import reliability as rel
from raidlab.rebuild import DEFAULT_REBUILD_RATE_MB_S, hours_text
from raidlab.report import html as html_report
from raidlab.report import table
from raidlab.units import decimal_bytes, format_probability, with_ci, years_text


def _sim_options(pairs: Tuple[str, ...]) -> Dict[str, Any]:
    """KEY=VALUE pairs for the rebuild simulator; numbers become numbers."""
    options: Dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--sim-opt")
        # Numbers in ASCII decimal only, as on the command line (raidlab.numeric); any other
        # text stays text and build_run reads it by the setting's declaration ('١' is refused).
        text = value.strip()
        number = whole_text(text)
        options[key] = number if number is not None else real_text(text)
        if options[key] is None:
            options[key] = text
    return options


def _pct(p: Optional[float]) -> str:
    """Every probability the text shows, written one way (raidlab.units.format_probability)."""
    return format_probability(p)


def render_text(doc: Dict[str, Any]) -> str:
    """The default output: what was modelled, then exact and Monte Carlo results side by side."""
    inputs, layout, rebuild = doc["inputs"], doc["layout"], doc["rebuild"]
    repair = inputs["repair"]
    name = f"raid{layout['level']}" + (f" {layout['layout']}" if layout["layout"] else "")
    implied_afr = -math.expm1(-rel.HOURS_PER_YEAR / inputs["mttf_hours"]) * 100
    drives = (f"AFR {inputs['afr_pct']:g} %/y" if inputs["afr_pct"] is not None
              else f"AFR {implied_afr:.3g} %/y from the MTTF")
    mission = inputs["mission_years"]
    lines = [
        f"raidlab reliability: {name}, {layout['devices']} x {inputs['capacity_tb']:g} TB "
        f"({decimal_bytes(layout['capacity_bytes'])} usable), mission {mission:g} y",
        f"drives: {drives} (MTTF {inputs['mttf_hours']:,.0f} h), Weibull shape "
        f"{inputs['weibull_shape']:g}; {inputs['repair_policy']} repair policy",
        f"repair {hours_text(repair['total_hours'])} = {repair['rebuild_how']}; + detect "
        f"{repair['detect_hours']:g} h + replace {repair['replace_hours']:g} h",
        f"sector errors: UBER {inputs['uber']:g} per bit read; latent errors "
        + (f"{inputs['lse_per_disk_year']:g} per disk-year, scrub every "
           + (f"{inputs['scrub_days']:g} days" if inputs["scrub_days"] else "never")
           if inputs["lse_per_disk_year"] else "off"),
        "",
    ]
    mc = doc["monte_carlo"]
    mc_header = "Monte Carlo, 95 % CI" if mc else "Monte Carlo (off)"
    rows = [
        ["MTTDL", years_text(doc["mttdl_years"]), "-"],
        ["MTTDL, textbook approximation (drive failures only)", years_text(doc["mttdl_years_approx"]), "-"],
        [f"P(array loss in {mission:g} y)", _pct(doc["p_array_loss"]),
         with_ci(mc and mc["p_array_loss"], _pct)],
        [f"P(any sector lost in {mission:g} y)", _pct(doc["p_sector_loss"]),
         with_ci(mc and mc["p_sector_loss"], _pct)],
        ["expected bytes lost per year", decimal_bytes(doc["expected_bytes_lost_per_year"]),
         with_ci(mc and mc["expected_bytes_lost_per_year"], decimal_bytes)],
    ]
    lines.append(table.render(["", "exact chain (exponential)", mc_header], rows))
    lines.append("")
    survivors = layout["devices"] - 1
    fraction = layout["second_failure_loss_fraction"]
    lines.append(f"layout: data is lost after {layout['failures_to_lose_data']} failure(s) at the "
                 f"earliest; after one failure, {fraction * survivors:.3g} of {survivors} "
                 f"survivors' loss would lose data ({fraction * 100:.3g} %)")
    if layout["third_failure_loss_fraction"] is not None and layout["failures_to_lose_data"] >= 2:
        lines.append(f"        after two, {layout['third_failure_loss_fraction'] * 100:.3g} % "
                     "of the next failures would")
    if rebuild["read_bytes"]:
        lines.append(f"rebuild after one failure reads {decimal_bytes(rebuild['read_bytes'])}: "
                     f"P(at least one URE) {_pct(rebuild['p_ure'])}")
    if rebuild["critical_read_bytes"]:
        lines.append(f"reads with no redundancy left, one failure short of loss: "
                     f"{decimal_bytes(rebuild['critical_read_bytes'])}, P(sector lost) "
                     f"{_pct(rebuild['p_sector_fault_critical'])} "
                     + ("(--ure-fails-array: such an error loses the array)" if inputs.get("ure_fails_array")
                        else "(md records a bad block and carries on)"))
    drops = doc.get("timeout_drops")
    if drops:  # members dropped by the command timeout
        erc = f"ERC {drops['erc_s']:g} s" if drops["erc_s"] else "no ERC"
        lines.append(f"drops by timeout: {erc}, recovery {drops['recovery_s'][0]:g}-{drops['recovery_s'][1]:g} s "
                     f"vs a {drops['command_timeout_s']:g} s command timeout; "
                     f"{drops['read_tb_per_year']:g} TB read a year gives "
                     f"{drops['read_errors_per_drive_year']:.3g} read errors per drive-year, "
                     f"P(recovery > timeout) {drops['p_recovery_over_timeout']:.3g}: "
                     f"{drops['drops_per_drive_year']:.3g} drops per drive-year (added to failures)")
    model = doc["exact_model"]
    if model["depth_cap"] is not None:
        lines.append(f"note: the chain keeps up to {model['depth_cap']} failed members "
                     f"({model['states']} states); deeper failures count as loss (MTTDL bound "
                     f"{years_text(doc['mttdl_years_optimistic'])} if they never happened)")
    if mc:
        lines.append(f"Monte Carlo: {mc['trials']} trials, seed {mc['seed']}, {mc['model']}")
    lines.append(f"raidlab {doc['version']}")
    return "\n".join(lines)


@click.command("reliability")
@click.option("--level", required=True, metavar="LEVEL", help="RAID level: 0, 1, 4, 5, 6 or 10, or a stacked "
                                                               "1+0, 5+0, 6+0, 0+1.")
@click.option("--devices", required=True, type=cli_type("devices"), help="Members in the array.")
@click.option("--layout", metavar="NAME", help="mdadm layout name [default: mdadm's].")
@click.option("--chunk-kib", type=cli_type("chunk_kib"), default=rel.DEFAULT_CHUNK_KIB, show_default=True,
              help="Chunk size in KiB (power of two).")
@click.option("--capacity-tb", type=finite(0, 1e6, low_open=True), default=None,
              help=f"Size of each member in decimal TB. [default: the --drive's size, else "
                   f"{rel.DEFAULT_CAPACITY_TB:g}]")
@click.option("--afr-pct", type=finite(0, 100, low_open=True, high_open=True),
              help=f"Annualized failure rate of one drive, %. [default: {rel.DEFAULT_AFR_PCT:g}, "
                   "Backblaze fleet 2023-2025]")
@click.option("--mttf-hours", type=finite(0, 1e12, low_open=True),
              help="Mean time to failure of one drive (instead of --afr-pct).")
@click.option("--weibull-shape", type=finite(0, 100, low_open=True),
              default=rel.DEFAULT_WEIBULL_SHAPE, show_default=True,
              help="Weibull shape of drive lifetimes for the Monte Carlo (1 = exponential; "
                   "Elerath & Pecht 2009 fit 1.12). The scale keeps the AFR: a new drive fails "
                   "within its first year with that probability whatever the shape.")
@click.option("--mttr-hours", type=finite(0, 1e6, low_open=True),
              help="Rebuild time in hours. [default: the array's idle rebuild, as plan uses: simulated on "
                   f"--drive under md's speed limits, else the member size at "
                   f"{DEFAULT_REBUILD_RATE_MB_S:g} MB/s (a 7200 rpm nearline drive, Exos X16 data sheet)]")
@click.option("--rebuild-from-sim", is_flag=True,
              help="Take the rebuild time from the rebuild simulator under a foreground workload "
                   "(--sim-opt; idle without one), on --drive.")
@click.option("--drive", metavar="NAME", help="Drive model (preset, FILE.toml, DiskSim model): the members' size, "
                                              "their idle rebuild time and read error recovery.")
@click.option("--sim-opt", "sim_opts", multiple=True, metavar="KEY=VALUE",
              help="Foreground workload / md option for --rebuild-from-sim (repeatable).")
@click.option("--detect-hours", type=finite(0, 1e6), default=0.0, show_default=True,
              help="Hours until a failure is noticed, added to the rebuild time.")
@click.option("--replace-hours", type=finite(0, 1e6), default=0.0, show_default=True,
              help="Hours until a replacement starts rebuilding (0: hot spare).")
@click.option("--uber", type=finite(0, rel.MAX_UBER, high_open=True), default=rel.DEFAULT_UBER, show_default=True,
              help="Unrecoverable bit error rate per bit read (desktop drives: 1e-14).")
@click.option("--lse-per-disk-year", type=finite(0, rel.MAX_LSE_PER_DISK_YEAR), default=0.0, show_default=True,
              help="Latent sector errors per disk-year (Elerath & Pecht 2009 fit: 0.95; 0 = off).")
@click.option("--scrub-days", type=finite(0, 36500), default=rel.DEFAULT_SCRUB_DAYS, show_default=True,
              help="Days between scrubs, which clear latent errors (0 = never).")
@click.option("--mission-years", type=finite(0, 100, low_open=True),
              default=rel.DEFAULT_MISSION_YEARS, show_default=True,
              help="Mission time in years.")
@click.option("--repair-policy", type=click.Choice(rel.REPAIR_POLICIES), default="md",
              show_default=True,
              help="md: one recovery pass rebuilds all missing members and restarts on a new "
                   "failure; serial: one at a time; parallel: independently.")
@click.option("--repair-dist", "repair_distribution", type=click.Choice(rel.REPAIR_DISTRIBUTIONS),
              default="fixed", show_default=True,
              help="Repair time distribution in the Monte Carlo (the exact chain is exponential).")
@click.option("--ure-fails-array", is_flag=True,
              help="An unreadable sector during a rebuild loses the array (controllers that abort "
                   "the rebuild) instead of a few KiB (md).")
@click.option("--trials", type=whole(), default=rel.DEFAULT_TRIALS, show_default=True,
              help="Monte Carlo trials (0: exact chain only).")
@click.option("--seed", type=whole(), default=1, show_default=True, help="Monte Carlo seed.")
@click.option("--erc-s", type=finite(0, 6553.5), default=None, metavar="SECONDS",
              help="The drives' read error recovery limit (SCT ERC/TLER; 0: none) [default: the --drive's, "
                   "else 7 s].")
@click.option("--command-timeout-s", type=finite(0, 1e6), default=rel.DEFAULT_COMMAND_TIMEOUT_S,
              show_default=True, help="The host's command timeout: a drive recovering a sector longer is dropped.")
@click.option("--read-tb-per-year", type=finite(0, 1e6), default=rel.DEFAULT_READ_TB_PER_YEAR,
              show_default=True, help="TB each drive reads a year (its read errors may drop it).")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON document instead of text.")
@click.option("--html", "html_out", metavar="PATH",
              help="Also write a self-contained HTML report (tiles and the P(loss) curve).")
@stacked_options
@writes_files(html_out="file")
def reliability_command(level: str, devices: int, layout: Optional[str], chunk_kib: int,
                        capacity_tb: Optional[float], afr_pct: Optional[float], mttf_hours: Optional[float],
                        weibull_shape: float, mttr_hours: Optional[float], rebuild_from_sim: bool,
                        drive: Optional[str], sim_opts: Tuple[str, ...], detect_hours: float,
                        replace_hours: float, uber: float, lse_per_disk_year: float,
                        scrub_days: float, mission_years: float, repair_policy: str,
                        repair_distribution: str, ure_fails_array: bool, trials: int, seed: int,
                        erc_s: Optional[float], command_timeout_s: float, read_tb_per_year: float,
                        as_json: bool, html_out: Optional[str], inner_devices: int = 0,
                        outer_chunk_kib: int = rel.DEFAULT_CHUNK_KIB) -> None:
    """Probability of data loss: MTTDL, P(array loss), P(any sector lost), bytes lost per year.

    The exact Markov chain (exponential lifetimes) and the textbook approximation come from the
    layout: which failed sets lose data and which rebuild reads have no redundancy left. The Monte
    Carlo uses Weibull lifetimes and fixed repair times. Unreadable sectors (UBER per bit read,
    latent errors between scrubs) in a rebuild lose sectors, not the array: md records a bad block.
    """
    if afr_pct is not None and mttf_hours is not None:
        raise click.UsageError("--afr-pct and --mttf-hours cannot be used together")
    if mttr_hours is not None and rebuild_from_sim:
        raise click.UsageError("--mttr-hours and --rebuild-from-sim cannot be used together")
    if sim_opts and not rebuild_from_sim:
        raise click.UsageError("--sim-opt only applies with --rebuild-from-sim")
    bar = ProgressBar(not as_json and sys.stderr.isatty(), "Monte Carlo")
    progress = None if bar.callback is None else (lambda done, total: bar(done / total))
    try:
        result = rel.analyze(
            level=level, devices=devices, layout=layout, chunk_kib=chunk_kib, capacity_tb=capacity_tb,
            afr_pct=afr_pct, mttf_hours=mttf_hours, weibull_shape=weibull_shape,
            mttr_hours=mttr_hours, rebuild_from_sim=rebuild_from_sim, drive=drive,
            sim_options=_sim_options(sim_opts), detect_hours=detect_hours,
            replace_hours=replace_hours, uber=uber, lse_per_disk_year=lse_per_disk_year,
            scrub_days=scrub_days, mission_years=mission_years, repair_policy=repair_policy,
            repair_distribution=repair_distribution, ure_fails_array=ure_fails_array,
            trials=trials, seed=seed, progress=progress, inner_devices=inner_devices,
            outer_chunk_kib=outer_chunk_kib, erc_s=erc_s,
            command_timeout_s=command_timeout_s, read_tb_per_year=read_tb_per_year)
    finally:
        bar.close()
    document = result.to_dict()
    if html_out:
        layout_doc = document["layout"]
        title = (f"raidlab reliability: raid{layout_doc['level']}"
                 + (f" {layout_doc['layout']}" if layout_doc["layout"] else "")
                 + f", {layout_doc['devices']} x {document['inputs']['capacity_tb']:g} TB")
        write_output(html_out, html_report.render_html(title, [], reliability=document))
    if as_json:
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(render_text(document))
