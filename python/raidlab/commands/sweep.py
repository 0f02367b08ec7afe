"""`raidlab sweep`: a grid of simulations into a resumable Parquet store (local cores or Ray)."""

from __future__ import annotations

from typing import Optional

import click

from raidlab.commands import progress as progress_mod
from raidlab.cli_types import whole
from raidlab.commands.progress import ProgressBar
from raidlab.commands.consent import writes_files
from raidlab.outputs import current
from raidlab.sweep import runner

#: --ray's help, shared by every command that can run on Ray.
RAY_HELP = ("Run the simulations as Ray tasks: 'auto' (the default value) joins the Ray runtime on "
            "this machine or starts one; or a cluster ADDRESS. Needs pip install 'raidlab[ray]'.")
JOBS_HELP = "Simulations run in parallel: local processes [default: the number of CPUs]. Does not change results."


def ray_option(function):
    return click.option("--ray", "ray", is_flag=False, flag_value="auto", default=None,
                        metavar="[ADDRESS|auto]", help=RAY_HELP)(function)


class _Progress:
    """The shared progress bar over points (only on a terminal), its label carrying the rate;
    opened at the first finished point and closed before the next line is printed."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Optional[ProgressBar] = None

    def step(self, done: int, total: int, seconds: float) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            self.bar = ProgressBar(True, "sweep")
        if self.bar.bar is not None and seconds > 0:
            self.bar.bar.label = f"sweep {done}/{total} points, {done / seconds:.2f}/s"
        self.bar(done / total if total else 1.0)

    def say(self, line: str) -> None:
        self.close()
        click.echo(line)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@click.command("sweep")
@click.argument("sweep_file", metavar="SWEEP.toml")
@click.option("--out", "out_dir", required=True, metavar="DIR",
              help="The store: a Parquet dataset (DIR/points) and each point's JSON (DIR/json).")
@click.option("--jobs", type=whole(1, 4096), default=None, help=JOBS_HELP)
@ray_option
@writes_files(out_dir="dir")
def sweep_command(sweep_file: str, out_dir: str, jobs: Optional[int], ray: Optional[str]) -> None:
    """Run every point of a grid of simulations into a store that resumes.

    SWEEP.toml has a [sweep] table of fixed options and a [grid] table of lists, keyed by
    'raidlab sim' option names (level, devices, chunk-kib, drive, preset, fio, failed, fail,
    seed, ...); every combination is a point. [[zip]] tables hold axes that move together,
    [[exclude]] tables drop matching combinations, [[include]] tables add points. Every point is
    checked before any runs. Rerunning skips stored points; a killed sweep loses only the
    points it was running; a second sweep into the same DIR waits for the first to finish.
    Load the store with raidlab.load_sweep(DIR) (pandas).
    """
    shown = _Progress(progress_mod.wanted(False))
    try:
        runner.run(sweep_file, out_dir, jobs=jobs, ray=ray, force=current().force, say=shown.say,
                   progress=shown.step)
    finally:
        shown.close()
