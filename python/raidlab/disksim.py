"""DiskSim drive models and validation traces (issue 8).

The parsing, the mapping to raidlab's HDD model, the replay and the demerit all run in the
core (``raidlab_core::device::disksim``); this module only reads files and formats results.

- :func:`import_drive` imports a DiskSim ``.parv`` (the whole validation configuration, which
  ``source``s its ``.diskspecs``) or a ``.diskspecs`` directly, reading included ``.model`` and
  ``.seek`` files from the same directory as the file that names them.
- :func:`drive_choice` turns it into a drive for :mod:`raidlab.sim` (``--drive FILE.parv``).
- :func:`replay` replays a DiskSim "validate" trace one request at a time and reports the
  demerit figure (Ruemmler & Wilkes 1994: RMS horizontal distance between the measured and
  simulated service-time CDFs at evenly spaced quantiles, in ms and in % of the measured mean).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union

from raidlab import _core
from raidlab.errors import ConfigError

#: Quantiles the demerit samples (as DiskSim's ``rms`` tool does).
QUANTILES = 10_000
#: Suffixes that name a DiskSim configuration rather than a TOML drive or a preset.
SUFFIXES = (".parv", ".diskspecs")


def is_disksim(path: Union[str, Path]) -> bool:
    return str(path).endswith(SUFFIXES)


def _reader(config: Path) -> Callable[[str], str]:
    """Reads the files a DiskSim configuration names, relative to its directory."""
    base = config.parent

    def read(name: str) -> str:
        path = Path(name) if Path(name).is_absolute() else base / name
        return path.read_text()

    return read


def _check(config: Union[str, Path]) -> Path:
    path = Path(config)
    if not path.is_file():
        raise ConfigError(f"cannot read DiskSim configuration {config}: no such file")
    return path


def import_drive(config: Union[str, Path]) -> Dict[str, Any]:
    """The imported drive: name, warnings (unmodelled parameters), files read and headline facts."""
    path = _check(config)
    return _core.disksim_import(str(path.name), _reader(path))


def drive_choice(config: Union[str, Path]) -> Dict[str, Any]:
    """A drive dict for the simulator core (carries the file texts, so it is self-contained)."""
    imported = import_drive(config)
    return {"disksim": Path(config).name, "files": imported["files"], "name": imported["name"]}


def replay(config: Union[str, Path], trace: Union[str, Path], limit: Optional[int] = None,
           seed: Optional[int] = None) -> Dict[str, Any]:
    """Replays ``trace`` on the drive of ``config``; the result's headline keys are those of
    ``raidlab replay --json`` plus per-request ``measured_ms``/``simulated_ms`` and ``warnings``."""
    path = _check(config)
    trace_path = Path(trace)
    try:
        text = trace_path.read_text()
    except OSError as error:
        raise ConfigError(f"cannot read trace {trace}: {error.strerror}") from None
    result = _core.disksim_replay(str(path.name), _reader(path), trace_path.name, text, seed, limit, QUANTILES)
    mean = result["mean_measured_ms"]
    result["demerit_pct"] = 100.0 * result["demerit_ms"] / mean if mean > 0 else float("nan")
    return result


def summary(result: Dict[str, Any]) -> Dict[str, Any]:
    """Exactly the ``--json`` document."""
    return {key: result[key] for key in
            ("requests", "mean_measured_ms", "mean_simulated_ms", "demerit_ms", "demerit_pct")}


def plot_cdfs(result: Dict[str, Any], png: Union[str, Path], title: str = "") -> bool:
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
    from raidlab import outputs

    try:
        data = outputs.figure_png(figure, dpi=100)
    finally:
        plt.close(figure)
    outputs.write_bytes(png, data, "--png")
    return True
