"""`raidlab replay --disksim CONFIG TRACE`: replay a DiskSim validation trace and report the
demerit figure (see :mod:`raidlab.disksim`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import click

from raidlab import disksim, outputs
from raidlab.cli_types import finite, whole
from raidlab.commands import write_output
from raidlab.commands.consent import writes_files
from raidlab.report.html import render_html
from raidlab.terminal import printable


def _plot_cdfs(result: Dict[str, Any], png: Union[str, Path], title: str = "") -> bool:
    """Writes both service-time CDFs to a PNG; False (nothing written) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for key, label in (("measured_ms", "measured"), ("simulated_ms", "raidlab")):
        values: List[float] = sorted(result[key])
        n = len(values)
        axes.step(values, [(i + 1) / n for i in range(n)], where="post", label=label)
    axes.set_xlabel("service time (ms)")
    axes.set_ylabel("fraction of requests")
    axes.set_title(title or f"demerit {result['demerit_ms']:.3f} ms ({result['demerit_pct']:.1f} % of mean)")
    axes.grid(True, alpha=0.3)
    axes.legend(loc="lower right")
    figure.tight_layout()
    try:
        data = outputs.figure_png(figure, dpi=100)
    finally:
        plt.close(figure)
    outputs.write_bytes(png, data, "--png")
    return True


@click.command("replay")
@click.option("--disksim", "config", required=True, metavar="CONFIG",
              help="DiskSim .parv (names its disk spec) or .diskspecs.")
@click.argument("trace", metavar="TRACE")
@click.option("--json", "as_json", is_flag=True,
              help="Print {requests, mean_measured_ms, mean_simulated_ms, demerit_ms, demerit_pct}.")
@click.option("--limit", type=whole(1), metavar="N", help="Replay only the first N requests.")
@click.option("--seed", type=whole(0), metavar="N",
              help="Start the platter at a random angle drawn from N (default: angle 0 at time 0, "
                   "as DiskSim's validation runs do).")
@click.option("--png", metavar="FILE.png", help="Plot both service-time CDFs (needs matplotlib).")
@click.option("--html", "html_path", metavar="FILE.html",
              help="Write a self-contained HTML report: demerit table, both CDFs, their distance.")
@click.option("--published-ms", type=finite(0, 1e9, low_open=True), metavar="MS",
              help="DiskSim's own demerit on this trace, shown beside raidlab's in the HTML report.")
@click.option("--warnings", "show_warnings", is_flag=True, help="List the DiskSim parameters raidlab does not model.")
@writes_files(png="file", html_path="file")
def replay_command(config: str, trace: str, as_json: bool, limit: Optional[int], seed: Optional[int],
                   png: Optional[str], html_path: Optional[str], published_ms: Optional[float],
                   show_warnings: bool) -> None:
    """Replay a DiskSim validation TRACE on the drive CONFIG describes; report the demerit
    (RMS horizontal distance between measured and simulated service-time CDFs)."""
    result = disksim.replay(config, trace, limit=limit, seed=seed)
    if png and not _plot_cdfs(result, png, title=f"{result['name']}: measured vs raidlab"):
        click.echo("raidlab: warning: matplotlib is not installed; no PNG written", err=True)
    if html_path:
        result["published_demerit_ms"] = published_ms
        page = render_html(f"DiskSim replay: {result['name']}", [], replays=[result])
        write_output(html_path, page)
    if as_json:
        click.echo(json.dumps(disksim.summary(result)))
    else:
        click.echo(f"drive:            {printable(result['name'])} ({len(result['warnings'])} unmodelled-parameter warnings;"
                   f" --warnings lists them)")
        click.echo(f"requests:         {result['requests']}")
        click.echo(f"mean measured:    {result['mean_measured_ms']:.3f} ms")
        click.echo(f"mean simulated:   {result['mean_simulated_ms']:.3f} ms")
        click.echo(f"demerit:          {result['demerit_ms']:.3f} ms ({result['demerit_pct']:.2f} % of the measured mean)")
    if show_warnings:
        for line in result["warnings"]:
            click.echo(f"warning: {printable(line)}", err=True)
