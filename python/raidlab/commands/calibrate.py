"""`raidlab calibrate`: sweep one device with fio, fit a drive model, save it as a drive TOML.

The option names are a contract: scripts outside the project use them.
"""

from __future__ import annotations

from typing import Optional

import click

from raidlab.cli_types import finite
from raidlab.commands import progress, write_output
from raidlab.commands.consent import writes_files
from raidlab.commands.measure import write_json
from raidlab.commands.progress import ProgressBar
from raidlab.errors import ConfigError
from raidlab.inputs import finite_number, parse_json, read_text, show_path
from raidlab.measure import calibrate as calibration
from raidlab.measure.fit import MODELS, Observation, Point
from raidlab.measure.safety import Target
from raidlab.terminal import printable

DEFAULT_OUT = "calibrated-drive.toml"


#: What a sweep row may hold, beyond "a finite number >= 0": far past any real device, so only
#: a damaged or hand-made document is refused (1e308 IOPS overflowed the fit, bs 0 divided by 0).
SWEEP_PATTERNS = ("randread", "randwrite", "read", "write")
_SWEEP_WHOLE = {"bs": (512, 1 << 30), "iodepth": (1, 65536), "fdatasync": (0, 1 << 20)}
#: A mean latency of 0 ns is no measurement (the fit divides by it).
_SWEEP_MIN = {"lat_mean_ns": 1.0}
_SWEEP_MAX = {"iops": 1e9, "bw_bytes": 1e13, "lat_mean_ns": 3.6e12, "lat_min_ns": 3.6e12,
              "sync_mean_ns": 3.6e12, "runtime_s": 86400.0, "percentile": 3.6e12}


def _observation(row, index: int, number) -> Observation:
    """One sweep row; ``number(value, field)`` checks each number."""
    at = f"sweep[{index}]"

    def get(key: str, default=None) -> float:
        value = number(row[key] if default is None else row.get(key, default), f"{at}.{key}")
        low, high = _SWEEP_WHOLE.get(key, (_SWEEP_MIN.get(key, 0), _SWEEP_MAX.get(key)))
        if value < low or value > high or (key in _SWEEP_WHOLE and value != int(value)):
            kind = "a whole number" if key in _SWEEP_WHOLE else "a number"
            raise ConfigError(f"calibration sweep: {at}.{key} must be {kind} from {low:g} to {high:g}, got {value:g}")
        return value

    if not isinstance(row, dict) or row.get("rw") not in SWEEP_PATTERNS or not isinstance(row.get("percentiles"), dict):
        raise ConfigError(f"calibration sweep: {at} needs rw (one of {', '.join(SWEEP_PATTERNS)}) and a "
                          "percentiles table")
    point = Point(row["rw"], int(get("bs")), int(get("iodepth")), int(get("fdatasync", 0)))
    percentiles = {str(k): number(v, f"{at}.percentiles.{k}") for k, v in row["percentiles"].items()}
    if any(v >= _SWEEP_MAX["percentile"] for v in percentiles.values()):
        raise ConfigError(f"calibration sweep: {at}.percentiles must be latencies below "
                          f"{_SWEEP_MAX['percentile']:g} ns (an hour)")
    return Observation(point, get("iops"), get("bw_bytes"), get("lat_mean_ns"), get("lat_min_ns"),
                       percentiles, get("sync_mean_ns"), get("runtime_s"))


def _load_sweep(path: str):
    """Observations from an earlier `raidlab calibrate --json` document (numbers finite, >= 0)."""
    where = show_path(path)
    document = parse_json(read_text(path, "calibration sweep"), f"calibration sweep {where}")

    def number(value, field: str) -> float:
        return finite_number(value, f"calibration sweep {where}: {field}", minimum=0)

    try:
        observations = [_observation(row, i, number) for i, row in enumerate(document["sweep"])]
        number(document["span_bytes"], "span_bytes")
        number(document.get("runtime_s_per_point", 0.0), "runtime_s_per_point")
        return document, observations
    except (KeyError, TypeError, AttributeError) as error:
        raise ConfigError(f"{where} is not a 'raidlab calibrate --json' document "
                          f"({type(error).__name__}: {error})") from None


def _sweep_capacity(document, path: str, capacity_tb: Optional[float]):
    """The drive's capacity for a refit: --capacity-tb, else what the sweep's document recorded
    (documents from before it was recorded held only the swept region: refused)."""
    span = int(document["span_bytes"])
    if capacity_tb is not None:
        return calibration.drive_capacity(Target(path, "file"), capacity_tb, span)
    recorded = document.get("capacity_bytes")
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded >= span:
        return recorded, str(document.get("capacity_source") or f"recorded in {path}")
    raise ConfigError(f"{path} records no drive capacity (only the {span}-byte swept region); "
                      "give the drive's capacity with --capacity-tb")


@click.command("calibrate")
@click.option("--target", metavar="PATH", help="File (new or existing) or block device to sweep.")
@click.option("--size", metavar="SIZE",
              help="Region to sweep, e.g. 1G [default: the device or existing file, else 1 GiB].")
@click.option("--capacity-tb", type=finite(0, calibration.MAX_CAPACITY_TB, low_open=True), metavar="TB",
              help="The drive's capacity in decimal TB, written into the model [default: the block "
                   "device's size (a partition's disk); required for a file target, whose size is "
                   "only the test region].")
@click.option("--quick", is_flag=True, help="An 11-point sweep of 1 s points (CI), instead of 49 points of 3 s.")
@click.option("--runtime-s", type=finite(0.1, 3600), help="Seconds per sweep point.")
@click.option("--model", type=click.Choice(("auto",) + MODELS), default="auto", show_default=True,
              help="Model to fit; auto fits all and keeps ssd/hdd unless only the empirical one fits.")
@click.option("--out", default=DEFAULT_OUT, show_default=True, metavar="FILE.toml",
              help="Where to write the drive model.")
@click.option("--destroy-data", is_flag=True,
              help="Allow the sweep (it writes) on a block device or an existing non-empty file.")
@click.option("--fio-binary", metavar="PATH", help="The fio to run [default: $RAIDLAB_FIO or fio on PATH].")
@click.option("--sweep", "sweep_json", metavar="FILE.json",
              help="Refit the sweep of an earlier 'raidlab calibrate --json' run instead of running fio.")
@click.option("--json", "json_out", is_flag=False, flag_value="-", default=None, metavar="[OUT]",
              help="Print the sweep, every candidate fit and the chosen model as JSON (to OUT if given).")
@writes_files(out="file", json_out="file")
def calibrate_command(target: Optional[str], size: Optional[str], capacity_tb: Optional[float],
                      quick: bool, runtime_s: Optional[float],
                      model: str, out: str, destroy_data: bool, fio_binary: Optional[str],
                      sweep_json: Optional[str], json_out: Optional[str]) -> None:
    """Measure one device with a fio sweep and fit a drive model for `raidlab sim --drive`.

    The sweep: random 4 KiB to 1 MiB reads and writes at depths 1 to 64, sequential reads and
    writes, and a 4 KiB fdatasync point, all O_DIRECT. Each model (hdd, ssd, empirical) is
    fitted by simulating the sweep; the error at every point is reported and kept in the file.
    """
    quiet = json_out == "-"

    def say(text: str) -> None:
        if not quiet:
            click.echo(printable(text), err=True)

    if sweep_json:
        if target:
            raise click.UsageError("give --target (to run a sweep) or --sweep (to refit one), not both")
        document, observations = _load_sweep(sweep_json)
        capacity = _sweep_capacity(document, sweep_json, capacity_tb)
        if not progress.wanted(json_out is not None):
            # A refit takes seconds: its steps are told on a terminal only, so that a script
            # sees nothing on stderr but, if the sweep cannot be fitted, the one error line.
            say = lambda text: None  # noqa: E731
        say(f"refitting {len(observations)} sweep points from {sweep_json}")
        result = calibration.from_observations(
            observations, int(document["span_bytes"]), model=model, max_evals=40 if len(observations) < 20 else 80,
            target=str(document.get("target", "")), target_kind=str(document.get("target_kind", "")),
            runtime_s=float(document.get("runtime_s_per_point", 0.0)),
            tool_version=str(document.get("tool_version", "")), on_fit=lambda k: say(f"fitting {k} model"),
            capacity=capacity)
    else:
        if not target:
            raise click.UsageError("give --target PATH (or --sweep FILE.json)")
        bar = ProgressBar(progress.wanted(json_out is not None), "sweeping")

        def on_point(index: int, total: int, seen: Observation) -> None:
            if bar.bar is None:
                say(f"[{index + 1}/{total}] {seen.point.name}: {seen.iops:.0f} IOPS, "
                    f"{seen.bw_bytes / 2**20:.1f} MiB/s, {seen.lat_mean_ns / 1e6:.3f} ms")

        try:
            result = calibration.calibrate(target, size=size, quick=quick, runtime_s=runtime_s,
                                           destroy_data=destroy_data, fio_binary=fio_binary, model=model,
                                           progress=bar.callback, on_point=on_point, capacity_tb=capacity_tb,
                                           on_fit=lambda k: (bar.close(), say(f"fitting {k} model")))
        finally:
            bar.close()
    write_output(out, result.to_toml())
    if json_out is not None:
        document = result.to_dict()
        document["out"] = out
        write_json(document, json_out)
        return
    click.echo(printable(result.summary(), keep="\n"))
    click.echo(f"wrote {printable(out)}; predict arrays of this drive with: raidlab sim --drive {out} ...")
