"""DiskSim drive models and validation traces.

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
from typing import Any, Callable, Dict, Optional, Union

from raidlab import _core, inputs
from raidlab.errors import ConfigError, RaidlabError

#: Quantiles the demerit samples (as DiskSim's ``rms`` tool does).
QUANTILES = 10_000
#: Suffixes that name a DiskSim configuration rather than a TOML drive or a preset.
SUFFIXES = (".parv", ".diskspecs")


def is_disksim(path: Union[str, Path]) -> bool:
    return str(path).endswith(SUFFIXES)


class _Reader:
    """Reads the files a DiskSim configuration names, relative to its directory, through
    :mod:`raidlab.inputs`; keeps the first refusal, which the core only sees as "unreadable"."""

    def __init__(self, config: Path) -> None:
        self.base = config.parent
        self.refused: Optional[RaidlabError] = None

    def __call__(self, name: str) -> str:
        path = Path(name) if Path(name).is_absolute() else self.base / name
        try:
            return inputs.read_text(path, "DiskSim file")
        except RaidlabError as error:
            if path.exists():  # a missing file is the core's to report, with the line naming it
                self.refused = self.refused or error
            raise

    def run(self, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)``; a core error caused by a refused file is reported as that refusal."""
        try:
            return call(*args)
        except RaidlabError:
            if self.refused is not None:
                raise self.refused from None
            raise


def _check(config: Union[str, Path]) -> Path:
    path = Path(config)
    if not path.is_file():
        inputs.read_bytes(path, "DiskSim file")  # says why: missing, a directory, a FIFO, ...
        raise ConfigError(f"cannot read DiskSim configuration {inputs.show_path(config)}: not a regular file")
    return path


def import_drive(config: Union[str, Path]) -> Dict[str, Any]:
    """The imported drive: name, warnings (unmodelled parameters), files read and headline facts."""
    path = _check(config)
    reader = _Reader(path)
    return reader.run(_core.disksim_import, str(path.name), reader)


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
    text = inputs.read_text(trace_path, "DiskSim trace")
    reader = _Reader(path)
    result = reader.run(_core.disksim_replay, str(path.name), reader, trace_path.name, text, seed, limit,
                        QUANTILES)
    # The core refuses a trace with no requests and times past its caps (1 h a line); what is
    # left to refuse is a trace whose measured times are all 0, where the demerit has no scale.
    mean = result["mean_measured_ms"]
    if not mean > 0:
        raise ConfigError(f"DiskSim trace {inputs.show_path(trace)}: every measured service time is 0, "
                          "so the demerit (a share of their mean) is undefined")
    result["demerit_pct"] = 100.0 * result["demerit_ms"] / mean
    return result


def summary(result: Dict[str, Any]) -> Dict[str, Any]:
    """Exactly the ``--json`` document."""
    return {key: result[key] for key in
            ("requests", "mean_measured_ms", "mean_simulated_ms", "demerit_ms", "demerit_pct")}
